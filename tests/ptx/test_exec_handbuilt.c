/* The interpreter on modules built by hand (mbuild.h), independent of the
 * parser: a vector add, a shared-memory tree reduction with bar.sync,
 * atomics under contention across blocks, faults (PROT_NONE, read-only,
 * null) reported and not crashing, trap, and blocks that spin on the
 * grid's last block (every block live at once). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <setjmp.h>
#include <signal.h>
#include <sys/mman.h>

#include "fabtest.h"
#include "mkernels.h"



/* Under valgrind (FABTEST_UNDER_VALGRIND, set by tests/ptx/CMakeLists.txt):
 * memcheck reports the bad access a fault test makes on purpose, and does
 * not honour fesetround. */
static int under_valgrind(void)
{
    const char *v = getenv("FABTEST_UNDER_VALGRIND");
    return v && *v == '1';
}

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


/* load: r = *p; store: *p = 7; trap: trap */
static void build_faults(mb_t *b)
{
    mb_init(b);
    mb_func(b, "load", true);
    uint32_t pp = mb_param(b, "p", T(U64), 8);
    uint32_t rd = mb_reg(b, T(U64)), r = mb_reg(b, T(U32));
    mb_ins(b, O(LD), NOG, S(PARAM), 1, TY(T(U64)), NULL, 2, R_(rd), AS_(pp, 0));
    mb_ins(b, O(LD), NOG, S(GLOBAL), 1, TY(T(U32)), NULL, 2, R_(r), AR_(rd, 0));
    mb_ins(b, O(RET), NOG, 0, 1, NULL, NULL, 0);
    mb_func(b, "store", true);
    pp = mb_param(b, "p", T(U64), 8);
    rd = mb_reg(b, T(U64));
    mb_ins(b, O(LD), NOG, S(PARAM), 1, TY(T(U64)), NULL, 2, R_(rd), AS_(pp, 0));
    mb_ins(b, O(ST), NOG, S(GLOBAL), 1, TY(T(U32)), NULL, 2, AR_(rd, 0), I_(7));
    mb_ins(b, O(RET), NOG, 0, 1, NULL, NULL, 0);
    mb_func(b, "trapper", true);
    mb_ins(b, O(TRAP), NOG, 0, 1, NULL, NULL, 0);
    mb_ins(b, O(RET), NOG, 0, 1, NULL, NULL, 0);
}

static void *page(int prot)
{
    void *pg = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    assert_true(pg != MAP_FAILED);
    assert_int_equal(mprotect(pg, 4096, prot), 0);
    return pg;
}

static void a_load_from_a_prot_none_page_is_a_fault_report(void **state)
{
    (void)state;
    if (under_valgrind())
        fab_test_skip("memcheck reports the bad access made on purpose");
    mb_t *b = malloc(sizeof(*b));
    build_faults(b);
    fab__ptx_program_t *p = load(b);
    char *pg = page(PROT_NONE);
    void *prm = pg + 64;
    fab__ptx_fault_t f;
    assert_int_equal(run(p, "load", 2, 64, &prm, &f), FAB__PTX_E_FAULT);
    assert_int_equal(f.address, (uintptr_t)(pg + 64));
    assert_int_equal(f.line, 2);
    assert_non_null(strstr(f.report, "kernel load"));
    char hex[32];
    snprintf(hex, sizeof(hex), "0x%llx", (unsigned long long)(uintptr_t)(pg + 64));
    assert_non_null(strstr(f.report, hex));
    /* the process goes on: the same program runs again on good memory */
    uint32_t ok = 5;
    void *good = &ok;
    assert_int_equal(run(p, "load", 1, 32, &good, &f), FAB__PTX_OK);
    munmap(pg, 4096);
    fab__ptx_program_free(p);
    free(b);
}

static void a_store_to_a_read_only_page_is_a_fault_report(void **state)
{
    (void)state;
    if (under_valgrind())
        fab_test_skip("memcheck reports the bad access made on purpose");
    mb_t *b = malloc(sizeof(*b));
    build_faults(b);
    fab__ptx_program_t *p = load(b);
    char *pg = page(PROT_READ);
    void *prm = pg + 128;
    fab__ptx_fault_t f;
    assert_int_equal(run(p, "store", 3, 96, &prm, &f), FAB__PTX_E_FAULT);
    assert_int_equal(f.address, (uintptr_t)(pg + 128));
    assert_int_equal(f.line, 2);
    assert_int_equal(pg[128], 0);
    munmap(pg, 4096);
    fab__ptx_program_free(p);
    free(b);
}

static void a_null_pointer_load_is_a_fault_not_a_signal(void **state)
{
    (void)state;
    mb_t *b = malloc(sizeof(*b));
    build_faults(b);
    fab__ptx_program_t *p = load(b);
    void *prm = (void *)(uintptr_t)8;
    fab__ptx_fault_t f;
    assert_int_equal(run(p, "load", 1, 32, &prm, &f), FAB__PTX_E_FAULT);
    assert_int_equal(f.address, 8);
    fab__ptx_program_free(p);
    free(b);
}

static void a_fault_report_says_whether_the_access_stored_and_how_wide(void **state)
{
    (void)state;
    mb_t *b = malloc(sizeof(*b));
    build_faults(b);
    fab__ptx_program_t *p = load(b);
    void *prm = (void *)(uintptr_t)16;
    fab__ptx_fault_t f;
    assert_int_equal(run(p, "load", 1, 32, &prm, &f), FAB__PTX_E_FAULT);
    assert_false(f.write);
    assert_int_equal(f.size, 4);
    assert_int_equal(run(p, "store", 1, 32, &prm, &f), FAB__PTX_E_FAULT);
    assert_true(f.write);
    assert_int_equal(f.size, 4);
    assert_int_equal(run(p, "trapper", 1, 32, NULL, &f), FAB__PTX_E_TRAP);
    assert_int_equal(f.size, 0);
    fab__ptx_program_free(p);
    free(b);
}

static void trap_stops_the_kernel_with_a_report(void **state)
{
    (void)state;
    mb_t *b = malloc(sizeof(*b));
    build_faults(b);
    fab__ptx_program_t *p = load(b);
    fab__ptx_fault_t f;
    assert_int_equal(run(p, "trapper", 4, 32, NULL, &f), FAB__PTX_E_TRAP);
    assert_non_null(strstr(f.report, "trap"));
    fab__ptx_program_free(p);
    free(b);
}

/* The last block sets *flag; every other spins on it with ld.volatile,
 * then adds 1 to *count: done only if every block is live at once. */
static void build_spin(mb_t *b)
{
    mb_init(b);
    mb_func(b, "spin", true);
    uint32_t pf = mb_param(b, "flag", T(U64), 8), pc = mb_param(b, "count", T(U64), 8);
    uint32_t rf = mb_reg(b, T(U64)), rc = mb_reg(b, T(U64)), cta = mb_reg(b, T(U32)), ncta = mb_reg(b, T(U32));
    uint32_t p = mb_reg(b, T(PRED)), v = mb_reg(b, T(U32));
    mb_ins(b, O(LD), NOG, S(PARAM), 1, TY(T(U64)), NULL, 2, R_(rf), AS_(pf, 0));
    mb_ins(b, O(LD), NOG, S(PARAM), 1, TY(T(U64)), NULL, 2, R_(rc), AS_(pc, 0));
    mb_ins(b, O(MOV), NOG, 0, 1, TY(T(U32)), NULL, 2, R_(cta), SR_(SR(CTAID), 0));
    mb_ins(b, O(MOV), NOG, 0, 1, TY(T(U32)), NULL, 2, R_(ncta), SR_(SR(NCTAID), 0));
    mb_ins(b, O(SUB), NOG, 0, 1, TY(T(U32)), NULL, 3, R_(ncta), R_(ncta), I_(1));
    mb_ins(b, O(SETP), NOG, 0, 1, TY(T(U32)), WD(W(EQ)), 3, R_(p), R_(cta), R_(ncta));
    mb_ins(b, O(BRA), p, true, 0, 1, NULL, NULL, 1, L_(0));
    mb_ins(b, O(ST), NOG, S(GLOBAL), 1, TY(T(U32)), WD(W(RELEASE), W(GPU)), 2, AR_(rf, 0), I_(1));
    mb_ins(b, O(RET), NOG, 0, 1, NULL, NULL, 0);
    mb_label(b, 0);
    mb_ins(b, O(LD), NOG, S(GLOBAL), 1, TY(T(U32)), WD(W(VOLATILE)), 2, R_(v), AR_(rf, 0));
    mb_ins(b, O(SETP), NOG, 0, 1, TY(T(U32)), WD(W(EQ)), 3, R_(p), R_(v), I_(0));
    mb_ins(b, O(BRA), p, false, 0, 1, NULL, NULL, 1, L_(0));
    mb_ins(b, O(RED), NOG, S(GLOBAL), 1, TY(T(U32)), WD(W(ADD)), 2, AR_(rc, 0), I_(1));
    mb_ins(b, O(RET), NOG, 0, 1, NULL, NULL, 0);
}

static void spin(unsigned workers, uint32_t grid)
{
    mb_t *b = malloc(sizeof(*b));
    build_spin(b);
    fab__ptx_program_t *p = load(b);
    uint32_t flag = 0, count = 0;
    struct { uint32_t *f, *c; } prm = {&flag, &count};
    fab__ptx_launch_t la = {.kernel = fab__ptx_program_kernel(p, "spin"), .grid = {grid, 1, 1},
                            .block = {64, 1, 1}, .params = &prm, .workers = workers};
    fab__ptx_fault_t f;
    assert_int_equal(fab__ptx_run(&la, &f), FAB__PTX_OK);
    assert_int_equal(flag, 1);
    assert_int_equal(count, (grid - 1) * 64);
    fab__ptx_program_free(p);
    free(b);
}

static void blocks_spinning_on_the_last_block_finish_on_one_worker(void **state)
{
    (void)state;
    spin(1, 40);
}

static void blocks_spinning_on_the_last_block_finish_on_many_workers(void **state)
{
    (void)state;
    spin(4, 200);
}

/* wait: spins until *flag != 0 */
static void build_wait(mb_t *b)
{
    mb_init(b);
    mb_func(b, "wait", true);
    uint32_t pf = mb_param(b, "flag", T(U64), 8);
    uint32_t rf = mb_reg(b, T(U64)), p = mb_reg(b, T(PRED)), v = mb_reg(b, T(U32));
    mb_ins(b, O(LD), NOG, S(PARAM), 1, TY(T(U64)), NULL, 2, R_(rf), AS_(pf, 0));
    mb_label(b, 0);
    mb_ins(b, O(LD), NOG, S(GLOBAL), 1, TY(T(U32)), WD(W(ACQUIRE), W(SYS)), 2, R_(v), AR_(rf, 0));
    mb_ins(b, O(SETP), NOG, 0, 1, TY(T(U32)), WD(W(EQ)), 3, R_(p), R_(v), I_(0));
    mb_ins(b, O(BRA), p, false, 0, 1, NULL, NULL, 1, L_(0));
    mb_ins(b, O(RET), NOG, 0, 1, NULL, NULL, 0);
}

typedef struct {
    char lines[8][512];
    int n;
    uint32_t *flag;
} watch_log_t;

static void watch_log(void *ctx, const char *line)
{
    watch_log_t *wl = ctx;
    if (wl->n < 8)
        snprintf(wl->lines[wl->n++], sizeof(wl->lines[0]), "%s", line);
    __atomic_store_n(wl->flag, 1, __ATOMIC_RELEASE); /* and now let the kernel end */
}

static void a_kernel_still_running_after_watch_ms_is_logged_once(void **state)
{
    (void)state;
    mb_t *b = malloc(sizeof(*b));
    build_wait(b);
    fab__ptx_program_t *p = load(b);
    uint32_t flag = 0;
    void *prm = &flag;
    watch_log_t wl = {.flag = &flag};
    fab__ptx_host_t host = {.ctx = &wl, .log = watch_log};
    fab__ptx_launch_t la = {.kernel = fab__ptx_program_kernel(p, "wait"), .grid = {3, 1, 1},
                            .block = {32, 1, 1}, .params = &prm, .host = &host, .watch_ms = 50, .workers = 2};
    fab__ptx_fault_t f;
    assert_int_equal(fab__ptx_run(&la, &f), FAB__PTX_OK);
    assert_true(wl.n >= 2); /* the kernel's line, then one per live warp */
    assert_non_null(strstr(wl.lines[0], "kernel wait still running"));
    assert_non_null(strstr(wl.lines[1], "PTX line"));
    fab__ptx_program_free(p);
    free(b);
}

static sigjmp_buf chain_jb;
static volatile sig_atomic_t chain_seen;

static void chain_handler(int sig, siginfo_t *info, void *uc)
{
    (void)sig, (void)info, (void)uc;
    chain_seen = 1;
    siglongjmp(chain_jb, 1);
}

static void a_fault_outside_the_interpreter_reaches_the_handler_before_it(void **state)
{
    (void)state;
    if (under_valgrind())
        fab_test_skip("memcheck reports the bad access made on purpose");
    struct sigaction sa, old;
    memset(&sa, 0, sizeof(sa));
    sa.sa_sigaction = chain_handler;
    sa.sa_flags = SA_SIGINFO | SA_NODEFER;
    sigaction(SIGSEGV, &sa, &old);
    /* a run installs the engine's handler over this one */
    mb_t *b = malloc(sizeof(*b));
    build_faults(b);
    fab__ptx_program_t *p = load(b);
    char *pg = page(PROT_NONE);
    void *prm = pg;
    fab__ptx_fault_t f;
    assert_int_equal(run(p, "load", 1, 32, &prm, &f), FAB__PTX_E_FAULT);
    assert_int_equal(chain_seen, 0); /* the interpreter's own fault stayed its own */
    if (sigsetjmp(chain_jb, 1) == 0)
        (void)*(volatile char *)pg;
    assert_int_equal(chain_seen, 1);
    munmap(pg, 4096);
    fab__ptx_program_free(p);
    free(b);
    sigaction(SIGSEGV, &old, NULL);
}

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(vector_add_runs_every_thread_once),
        cmocka_unit_test(shared_reduction_sums_each_block),
        cmocka_unit_test(a_load_from_a_prot_none_page_is_a_fault_report),
        cmocka_unit_test(a_store_to_a_read_only_page_is_a_fault_report),
        cmocka_unit_test(a_null_pointer_load_is_a_fault_not_a_signal),
        cmocka_unit_test(a_fault_report_says_whether_the_access_stored_and_how_wide),
        cmocka_unit_test(trap_stops_the_kernel_with_a_report),
        cmocka_unit_test(blocks_spinning_on_the_last_block_finish_on_one_worker),
        cmocka_unit_test(blocks_spinning_on_the_last_block_finish_on_many_workers),
        cmocka_unit_test(a_kernel_still_running_after_watch_ms_is_logged_once),
        cmocka_unit_test(a_fault_outside_the_interpreter_reaches_the_handler_before_it),
    };
    return fab_test_main(argc, argv, "ptx", tests, sizeof(tests) / sizeof(tests[0]), NULL, 0);
}
