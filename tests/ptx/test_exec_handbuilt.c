/* The interpreter on modules built by hand (mbuild.h), independent of the
 * parser: a vector add, a shared-memory tree reduction with bar.sync, and
 * atomics under contention across blocks. */
#include <stdlib.h>
#include <string.h>

#include "fabtest.h"
#include "mkernels.h"


static fab__ptx_program_t *load(mb_t *b)
{
    fab__ptx_program_t *p = NULL;
    fab__ptx_diag_t d;
    fab__ptx_status_t st = fab__ptx_program_load(&b->m, &p, &d);
    if (st)
        print_error("load: %d line %u: %s\n", st, d.line, d.msg);
    assert_int_equal(st, FAB__PTX_OK);
    return p;
}

static fab__ptx_status_t run(const fab__ptx_program_t *p, const char *k, uint32_t grid, uint32_t block,
                             const void *params, fab__ptx_fault_t *f)
{
    fab__ptx_launch_t la = {.kernel = fab__ptx_program_kernel(p, k), .grid = {grid, 1, 1},
                            .block = {block, 1, 1}, .params = params};
    assert_non_null(la.kernel);
    return fab__ptx_run(&la, f);
}

static void vector_add_runs_every_thread_once(void **state)
{
    (void)state;
    mb_t *b = malloc(sizeof(*b));
    build_vadd(b);
    fab__ptx_program_t *p = load(b);
    enum { N = 1000 };
    float *a = malloc(N * 4), *bb = malloc(N * 4), *c = calloc(N + 64, 4);
    for (int i = 0; i < N; i++)
        a[i] = (float)i, bb[i] = 0.5f * (float)i;
    c[N] = 12345.0f;
    struct { float *a, *b, *c; uint32_t n; } prm = {a, bb, c, N};
    fab__ptx_fault_t f;
    fab__ptx_status_t st = run(p, "vadd", (N + 127) / 128, 128, &prm, &f);
    if (st)
        print_error("%s\n", f.report);
    assert_int_equal(st, FAB__PTX_OK);
    for (int i = 0; i < N; i++)
        assert_true(c[i] == 1.5f * (float)i);
    assert_true(c[N] == 12345.0f); /* the lanes past n stored nothing */
    fab__ptx_program_free(p);
    free(b);
    free(a), free(bb), free(c);
}

static void shared_reduction_sums_each_block(void **state)
{
    (void)state;
    mb_t *b = malloc(sizeof(*b));
    build_reduce(b);
    fab__ptx_program_t *p = load(b);
    enum { NB = 64 };
    uint32_t *in = malloc(NB * 256 * 4), out[NB] = {0}, tot = 0;
    uint32_t want_tot = 0;
    for (int i = 0; i < NB * 256; i++)
        in[i] = (uint32_t)(i * 7 + 1), want_tot += in[i];
    struct { uint32_t *in, *out, *tot; } prm = {in, out, &tot};
    fab__ptx_fault_t f;
    fab__ptx_status_t st = run(p, "reduce", NB, 256, &prm, &f);
    if (st)
        print_error("%s\n", f.report);
    assert_int_equal(st, FAB__PTX_OK);
    for (int bi = 0; bi < NB; bi++) {
        uint32_t s = 0;
        for (int t = 0; t < 256; t++)
            s += in[bi * 256 + t];
        assert_int_equal(out[bi], s);
    }
    assert_int_equal(tot, want_tot);
    fab__ptx_program_free(p);
    free(b);
    free(in);
}

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(vector_add_runs_every_thread_once),
        cmocka_unit_test(shared_reduction_sums_each_block),
    };
    return fab_test_main(argc, argv, "ptx", tests, sizeof(tests) / sizeof(tests[0]), NULL, 0);
}
