/* Helpers the hand-written PTX kernel suites share: parse and load one
 * program (it must load), free it after each test, and run a kernel of it
 * on a one-dimensional grid whose only parameter is an output pointer. */
#ifndef FAB_TEST_PTX_EXEC_H
#define FAB_TEST_PTX_EXEC_H

#include <stdint.h>

#include "ptx_test.h"
#include "src/ptx/ptx.h"

static fab__ptx_program_t *prog;

static inline void load(const char *text)
{
    prog = ptx_load(text);
}

static inline int teardown(void **state)
{
    (void)state;
    fab__ptx_program_free(prog);
    prog = NULL;
    return 0;
}

/* Run kernel name of prog on grid blocks of block threads, with
 * dynamic_shared bytes of dynamic .shared, its parameter out; it must end
 * without a fault. */
static inline void run_shared(const char *name, uint32_t grid, uint32_t block,
                              uint32_t dynamic_shared, void *out)
{
    fab__ptx_launch_t la = {.kernel = fab__ptx_program_kernel(prog, name), .grid = {grid, 1, 1},
                            .block = {block, 1, 1}, .dynamic_shared = dynamic_shared,
                            .params = &out, .workers = 1};
    assert_non_null(la.kernel);
    fab__ptx_fault_t f;
    fab__ptx_status_t st = fab__ptx_run(&la, &f);
    if (st)
        print_error("%s: %s\n", name, f.report);
    assert_int_equal(st, FAB__PTX_OK);
}

#endif /* FAB_TEST_PTX_EXEC_H */
