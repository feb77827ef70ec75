/* The interpreter on kernels nvcc compiled (tests/ptx/kernels.cu, made into
 * PTX at build time; label nvcc): each result checked against the same
 * computation on the host. Skipped, saying so, where nvcc is absent or the
 * front end cannot parse yet. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "fabtest.h"
#include "src/ptx/ptx.h"

#ifndef FAB_TEST_KERNELS_PTX
#define FAB_TEST_KERNELS_PTX ""
#endif


/* Under valgrind (FABTEST_UNDER_VALGRIND, set by tests/ptx/CMakeLists.txt):
 * memcheck reports the bad access a fault test makes on purpose, and does
 * not honour fesetround. */
static int under_valgrind(void)
{
    const char *v = getenv("FABTEST_UNDER_VALGRIND");
    return v && *v == '1';
}

static fab__ptx_program_t *prog;
static void *var_mem[64];
static size_t nvar_mem;

static void load_kernels(void)
{
    FILE *f = fopen(FAB_TEST_KERNELS_PTX, "rb");
    if (!f) {
        fprintf(stderr, "SKIPPED: no kernels.ptx (nvcc was not found at build time)\n");
        fab_test_skip("no kernels.ptx");
    }
    static char text[1 << 21];
    size_t n = fread(text, 1, sizeof(text) - 1, f);
    fclose(f);
    fab__ptx_module_t *m = NULL;
    fab__ptx_diag_t d;
    fab__ptx_status_t st = fab__ptx_parse(text, n, &m, &d);
    if (st == FAB__PTX_OK && !m) {
        fprintf(stderr, "SKIPPED: the PTX front end is not there yet\n");
        fab_test_skip("no PTX front end");
    }
    if (st)
        print_error("parse: line %u: %s\n", d.line, d.msg);
    assert_int_equal(st, FAB__PTX_OK);
    st = fab__ptx_program_load(m, &prog, &d);
    if (st)
        print_error("load: line %u: %s\n", d.line, d.msg);
    assert_int_equal(st, FAB__PTX_OK);
    nvar_mem = fab__ptx_program_nvars(prog);
    assert_true(nvar_mem <= 64);
    for (size_t i = 0; i < nvar_mem; i++) {
        fab__ptx_var_info_t vi;
        fab__ptx_program_var(prog, i, &vi);
        var_mem[i] = aligned_alloc(256, (vi.size + 255) / 256 * 256 + 256);
        fab__ptx_program_place(prog, i, var_mem[i]);
    }
    for (size_t i = 0; i < nvar_mem; i++)
        fab__ptx_program_init_var(prog, i);
}

static int teardown(void **state)
{
    (void)state;
    fab__ptx_program_free(prog);
    prog = NULL;
    for (size_t i = 0; i < nvar_mem; i++)
        free(var_mem[i]);
    nvar_mem = 0;
    return 0;
}

typedef struct {
    char text[8192];
    size_t len;
} capture_t;

static void capture(void *ctx, const char *text, size_t len)
{
    capture_t *c = ctx;
    if (c->len + len < sizeof(c->text)) {
        memcpy(c->text + c->len, text, len);
        c->len += len;
        c->text[c->len] = 0;
    }
}

static fab__ptx_status_t launch(const char *name, uint32_t grid, uint32_t block, size_t dyn, const void *params,
                                const fab__ptx_host_t *host, fab__ptx_fault_t *f)
{
    fab__ptx_launch_t la = {.kernel = fab__ptx_program_kernel(prog, name), .grid = {grid, 1, 1},
                            .block = {block, 1, 1}, .dynamic_shared = dyn, .params = params, .host = host};
    assert_non_null(la.kernel);
    fab__ptx_status_t st = fab__ptx_run(&la, f);
    if (st)
        print_message("%s: %s\n", name, f->report);
    return st;
}

#define RUN(name, grid, block, ...)                                                           \
    do {                                                                                      \
        struct { void *p[8]; } prm_ = {{__VA_ARGS__}};                                        \
        fab__ptx_fault_t f_;                                                                  \
        assert_int_equal(launch(name, grid, block, 0, &prm_, NULL, &f_), FAB__PTX_OK);        \
    } while (0)

static void nvcc_vector_add(void **state)
{
    (void)state;
    load_kernels();
    enum { N = 5000 };
    float *a = malloc(N * 4), *b = malloc(N * 4), *c = calloc(N, 4);
    for (int i = 0; i < N; i++)
        a[i] = (float)i * 0.25f, b[i] = (float)(N - i);
    struct { float *a, *b, *c; int n; } prm = {a, b, c, N};
    fab__ptx_fault_t f;
    assert_int_equal(launch("vadd", (N + 255) / 256, 256, 0, &prm, NULL, &f), FAB__PTX_OK);
    for (int i = 0; i < N; i++)
        assert_true(c[i] == a[i] + b[i]);
    free(a), free(b), free(c);
}

static void nvcc_shared_reduction_and_atomic_total(void **state)
{
    (void)state;
    load_kernels();
    enum { NB = 50 };
    int *in = malloc(NB * 256 * 4), out[NB], total = 0, want = 0;
    for (int i = 0; i < NB * 256; i++)
        in[i] = (i * 37) % 1001 - 500, want += in[i];
    RUN("reduce", NB, 256, in, out, &total);
    for (int bi = 0; bi < NB; bi++) {
        int s = 0;
        for (int t = 0; t < 256; t++)
            s += in[bi * 256 + t];
        assert_int_equal(out[bi], s);
    }
    assert_int_equal(total, want);
    free(in);
}

static void nvcc_dynamic_shared_memory(void **state)
{
    (void)state;
    load_kernels();
    int in[4 * 128], out[4];
    for (int i = 0; i < 4 * 128; i++)
        in[i] = i;
    struct { int *in, *out; } prm = {in, out};
    fab__ptx_fault_t f;
    assert_int_equal(launch("dynreduce", 4, 128, 128 * 4, &prm, NULL, &f), FAB__PTX_OK);
    for (int b = 0; b < 4; b++)
        assert_int_equal(out[b], 128 * 127 / 2 + b * 128 * 128);
}

static void nvcc_warp_collectives(void **state)
{
    (void)state;
    load_kernels();
    int in[32], out[320];
    for (int i = 0; i < 32; i++)
        in[i] = (i * 11) % 17;
    RUN("warps", 1, 32, in, out);
    int sum = 0, mn = 1000;
    unsigned ball = 0;
    for (int i = 0; i < 32; i++)
        sum += in[i], mn = in[i] < mn ? in[i] : mn, ball |= (unsigned)(in[i] & 1) << i;
    for (int t = 0; t < 32; t++) {
        const int *o = out + t * 10;
        if (t == 0)
            assert_int_equal(o[0], sum);
        assert_int_equal(o[1], in[t ^ 5]);
        assert_int_equal(o[2], t >= 3 ? in[t - 3] : in[t]);
        assert_int_equal(o[3], in[(t & ~7) + 2]);
        assert_int_equal(o[4], 1);
        int any7 = 0;
        for (int i = 0; i < 32; i++)
            any7 |= in[i] == 7;
        assert_int_equal(o[5], any7);
        assert_int_equal((unsigned)o[6], ball);
        unsigned mm = 0;
        for (int i = 0; i < 32; i++)
            mm |= (unsigned)(in[i] % 3 == in[t] % 3) << i;
        assert_int_equal((unsigned)o[7], mm);
        assert_int_equal(o[8], mn + sum);
        assert_int_equal((unsigned)o[9], (t & 1) ? 0xaaaaaaaau : 0);
    }
}

static void nvcc_divergence_nested_ifs_and_loop_exits(void **state)
{
    (void)state;
    load_kernels();
    int out[64];
    RUN("diverge", 1, 64, out);
    int v[64];
    for (int t = 0; t < 64; t++) {
        int x = (t & 1) ? ((t & 2) ? 3 : 1) : 2;
        for (int i = 0; i < 100; i++) {
            x += i;
            if (i == t % 7)
                break;
            if (i > 2 && (t & 4))
                continue;
            x *= 2;
        }
        v[t] = x;
    }
    for (int t = 0; t < 64; t++) {
        int b = 0;
        for (int i = t & ~31; i < (t & ~31) + 32; i++)
            b += v[i] > 10;
        assert_int_equal(out[t], v[t] * 1000 + b);
    }
}

static void nvcc_recursion(void **state)
{
    (void)state;
    load_kernels();
    int out[32];
    RUN("recurse", 1, 32, out);
    int fib[12] = {0, 1, 1, 2, 3, 5, 8, 13, 21, 34, 55, 89};
    for (int t = 0; t < 32; t++)
        assert_int_equal(out[t], fib[t % 12]);
}

static void nvcc_indirect_calls_through_a_table(void **state)
{
    (void)state;
    load_kernels();
    int out[32];
    RUN("indirect", 1, 32, out);
    for (int t = 0; t < 32; t++)
        assert_int_equal(out[t], (t & 1) ? t * 3 : t + 3);
}

static void nvcc_printf_lines_reach_the_host(void **state)
{
    (void)state;
    load_kernels();
    capture_t c = {.len = 0};
    fab__ptx_host_t host = {.ctx = &c, .print = capture};
    int x = 42;
    fab__ptx_fault_t f;
    assert_int_equal(launch("hello", 1, 3, 0, &x, &host, &f), FAB__PTX_OK);
    assert_non_null(strstr(c.text, "hello 42 from 0: 1.50 str -5\n"));
    assert_non_null(strstr(c.text, "hello 42 from 2: 1.50 str -5\n"));
}

static void nvcc_assert_stops_the_kernel_with_its_message(void **state)
{
    (void)state;
    load_kernels();
    capture_t c = {.len = 0};
    fab__ptx_host_t host = {.ctx = &c, .print = capture};
    int x = 1;
    fab__ptx_fault_t f;
    assert_int_equal(launch("asserts", 1, 4, 0, &x, &host, &f), FAB__PTX_E_ASSERT);
    assert_non_null(strstr(f.report, "x == threadIdx.x"));
    assert_non_null(strstr(c.text, "Assertion `x == threadIdx.x` failed."));
}

static void nvcc_float_math_within_the_isa_error(void **state)
{
    (void)state;
    load_kernels();
    float in[32], out[32 * 6];
    double dout[32];
    for (int i = 0; i < 32; i++)
        in[i] = 0.37f + (float)i * 1.3f;
    RUN("fmath", 1, 32, in, out, dout);
    for (int t = 0; t < 32; t++) {
        float a = in[t];
        const float *o = out + t * 6;
        assert_true(o[0] == sqrtf(a));
        assert_true(fabsf(o[1] - a / 3.0f) <= 2e-6f * fabsf(a));
        assert_true(fabsf(o[2] - (sinf(a) + expf(a / 10))) < 1e-4f * (1 + fabsf(o[2])));
        assert_true(fabsf(o[3] - a * 0.5f) <= 1e-3f * a);
        assert_true(o[4] == (float)(int)rintf(a * 7.3f) + fminf(a, 2.0f));
        assert_true(o[5] == a / 7.0f);
        assert_true(dout[t] == sqrt((double)a) + (double)t / 3.0);
    }
}

static void nvcc_integer_operations(void **state)
{
    (void)state;
    load_kernels();
    int in[64], out[32 * 16];
    for (int i = 0; i < 64; i++)
        in[i] = (int)((unsigned)i * 2654435761u) ^ (i << 3);
    RUN("intops", 1, 32, in, out);
    for (int t = 0; t < 32; t++) {
        int a = in[t], b = in[t + 32] | 1;
        unsigned ua = (unsigned)a, ub = (unsigned)b;
        const int *o = out + t * 16;
        assert_int_equal(o[0], (int)(((int64_t)a * b) >> 32));
        assert_int_equal((unsigned)o[1], (unsigned)(((uint64_t)ua * ub) >> 32));
        assert_int_equal(o[2], a / b);
        assert_int_equal(o[3], a % b);
        assert_int_equal((unsigned)o[4], ua / ub);
        assert_int_equal(o[5], a >> (t & 31));
        assert_int_equal((unsigned)o[6], ua >> (t & 31));
        unsigned r = 0;
        for (int i = 0; i < 32; i++)
            r |= ((ua >> i) & 1u) << (31 - i);
        assert_int_equal((unsigned)o[7], r);
        int clz = a ? __builtin_clz(ua) : 32, ffs = __builtin_ffs(a), popc = __builtin_popcount(ua);
        assert_int_equal(o[8], clz + ffs * 64 + popc * 4096);
        uint64_t v = ((uint64_t)ub << 32) | ua;
        unsigned pm = 0, sel = 0x5173;
        for (int i = 0; i < 4; i++)
            pm |= (unsigned)((v >> (8 * ((sel >> (4 * i)) & 7))) & 0xff) << (8 * i);
        assert_int_equal((unsigned)o[9], pm);
        unsigned sh = (unsigned)t & 31;
        assert_int_equal((unsigned)o[10], (unsigned)((v << sh) >> 32));
        assert_int_equal((unsigned)o[11], (unsigned)(v >> sh));
        int mx = a > b ? a : b, mn = a < b ? a : b;
        assert_int_equal(o[12], (int)((unsigned)mx - (unsigned)mn + (unsigned)(a < 0 ? -(int64_t)a : a)));
        assert_int_equal((unsigned)o[13], (unsigned)(a > b ? (int64_t)a - b : (int64_t)b - a) + 7u);
        int32_t a24 = (int32_t)(ua << 8) >> 8, b24 = (int32_t)(ub << 8) >> 8;
        assert_int_equal(o[14], (int)(uint32_t)((int64_t)a24 * b24));
        int dp = t;
        for (int i = 0; i < 4; i++)
            dp += (int8_t)(ua >> (8 * i)) * (int8_t)(ub >> (8 * i));
        assert_int_equal(o[15], dp);
    }
}

static void nvcc_local_memory_arrays(void **state)
{
    (void)state;
    load_kernels();
    int in[64], out[32];
    for (int i = 0; i < 64; i++)
        in[i] = (i * 5 + 3) % 64;
    RUN("localmem", 1, 32, in, out);
    for (int t = 0; t < 32; t++) {
        int buf[40], s = 0;
        for (int i = 0; i < 40; i++)
            buf[i] = in[(i * 7 + t) % 64];
        for (int i = 0; i < 40; i++)
            s += buf[(in[i] + t) % 40] * (i + 1);
        assert_int_equal(out[t], s);
    }
}

static void nvcc_blocks_spin_on_a_flag_the_last_block_sets(void **state)
{
    (void)state;
    load_kernels();
    int flag = 0, count = 0;
    RUN("spinflag", 100, 64, &flag, &count);
    assert_int_equal(flag, 1);
    assert_int_equal(count, 99 * 64);
}

static void nvcc_atomics_under_contention(void **state)
{
    (void)state;
    load_kernels();
    unsigned u[8] = {0, 0, 0, 5, 0, 1000000, 0, 0};
    float f = 0;
    int mx[2] = {-1000, 1000};
    unsigned long long ull = 0;
    RUN("atoms", 64, 256, u, &f, mx, &ull);
    unsigned n = 64 * 256;
    assert_int_equal(u[0], n);
    assert_int_equal(u[1], n % 10);
    assert_int_equal(u[3], 5);
    assert_true(f == 0.5f * (float)n);
    assert_int_equal(mx[0], 255 - 50);
    assert_int_equal(mx[1], -255);
    assert_int_equal(u[4], 0xffffffffu);
    assert_int_equal(u[5], 1000000 - 2 * n);
    assert_int_equal(u[6], (5 - n % 5) % 5);
    assert_int_equal(ull, 3ull * n);
    assert_int_equal(u[7], 2 * n);
}

static void nvcc_named_barriers_and_barrier_reductions(void **state)
{
    (void)state;
    load_kernels();
    int out[65];
    RUN("named", 1, 128, out);
    for (int i = 0; i < 64; i++)
        assert_int_equal(out[i], i * i + (63 - i) * (63 - i));
    int c = 0;
    for (int t = 0; t < 128; t++)
        c += t % 3 == 0;
    assert_int_equal(out[64], c * 100 + 10 + 1);
}

static void nvcc_store_to_a_prot_none_page_is_reported(void **state)
{
    (void)state;
    if (under_valgrind())
        fab_test_skip("memcheck reports the bad access made on purpose");
    load_kernels();
    char *pg = mmap(NULL, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    assert_true(pg != MAP_FAILED);
    void *p = pg + 256;
    fab__ptx_fault_t f;
    assert_int_equal(launch("badaddr", 2, 32, 0, &p, NULL, &f), FAB__PTX_E_FAULT);
    assert_true(f.address >= (uintptr_t)pg + 256 && f.address < (uintptr_t)pg + 256 + 128);
    assert_non_null(strstr(f.report, "kernel badaddr"));
    assert_true(f.line > 0);
    munmap(pg, 4096);
}

static void nvcc_device_malloc_and_free(void **state)
{
    (void)state;
    load_kernels();
    int out[64];
    RUN("heap", 1, 64, out);
    for (int t = 0; t < 64; t++)
        assert_int_equal(out[t], t * 120);
}

static void nvcc_grid_sync_of_a_cooperative_launch(void **state)
{
    (void)state;
    load_kernels();
    enum { NB = 24, NT = 64 };
    int *buf = calloc(NB * NT, 4), *out = calloc(NB * NT, 4);
    struct { int *b, *o; } prm = {buf, out};
    fab__ptx_launch_t la = {.kernel = fab__ptx_program_kernel(prog, "gridsync"), .grid = {NB, 1, 1},
                            .block = {NT, 1, 1}, .params = &prm, .cooperative = true, .workers = 2};
    fab__ptx_fault_t f;
    assert_int_equal(fab__ptx_run(&la, &f), FAB__PTX_OK);
    for (int i = 0; i < NB * NT; i++) {
        assert_int_equal(out[i], ((i + NT) % (NB * NT)) * 3);
        assert_int_equal(buf[i], -1);
    }
    /* not cooperative: grid.sync() traps, as the device's does */
    la.cooperative = false;
    assert_int_equal(fab__ptx_run(&la, &f), FAB__PTX_E_TRAP);
    free(buf), free(out);
}

/* The loader packs registers onto slots (docs/ptx.md, "Register slots"):
 * nvcc's kernels, optimised or -G, take at most a quarter of a slot a
 * register (about a ninth and a sixth here): the kernels the cases above run. */
static void nvcc_kernels_take_a_quarter_of_a_slot_a_register_or_less(void **state)
{
    (void)state;
    load_kernels();
    uint64_t regs = 0, slots = 0;
    for (size_t i = 0; i < fab__ptx_program_nkernels(prog); i++) {
        fab__ptx_kernel_info_t ki;
        fab__ptx_kernel_info(fab__ptx_program_kernel_at(prog, i), &ki);
        uint32_t r = 0, s = 0;
        assert_true(fab__ptx_program_func_slots(prog, ki.name, &r, &s));
        assert_true(s <= r);
        assert_int_equal(ki.nregs, s);
        regs += r, slots += s;
    }
    print_message("kernels: %llu PTX registers on %llu slots\n", (unsigned long long)regs,
                  (unsigned long long)slots);
    assert_true(regs > 0 && slots * 4 <= regs);
}

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(nvcc_vector_add, teardown),
        cmocka_unit_test_teardown(nvcc_shared_reduction_and_atomic_total, teardown),
        cmocka_unit_test_teardown(nvcc_dynamic_shared_memory, teardown),
        cmocka_unit_test_teardown(nvcc_warp_collectives, teardown),
        cmocka_unit_test_teardown(nvcc_divergence_nested_ifs_and_loop_exits, teardown),
        cmocka_unit_test_teardown(nvcc_recursion, teardown),
        cmocka_unit_test_teardown(nvcc_indirect_calls_through_a_table, teardown),
        cmocka_unit_test_teardown(nvcc_printf_lines_reach_the_host, teardown),
        cmocka_unit_test_teardown(nvcc_assert_stops_the_kernel_with_its_message, teardown),
        cmocka_unit_test_teardown(nvcc_float_math_within_the_isa_error, teardown),
        cmocka_unit_test_teardown(nvcc_integer_operations, teardown),
        cmocka_unit_test_teardown(nvcc_local_memory_arrays, teardown),
        cmocka_unit_test_teardown(nvcc_blocks_spin_on_a_flag_the_last_block_sets, teardown),
        cmocka_unit_test_teardown(nvcc_atomics_under_contention, teardown),
        cmocka_unit_test_teardown(nvcc_named_barriers_and_barrier_reductions, teardown),
        cmocka_unit_test_teardown(nvcc_store_to_a_prot_none_page_is_reported, teardown),
        cmocka_unit_test_teardown(nvcc_device_malloc_and_free, teardown),
        cmocka_unit_test_teardown(nvcc_grid_sync_of_a_cooperative_launch, teardown),
        cmocka_unit_test_teardown(nvcc_kernels_take_a_quarter_of_a_slot_a_register_or_less, teardown),
    };
    return fab_test_main(argc, argv, "ptx", tests, sizeof(tests) / sizeof(tests[0]), NULL, 0);
}
