/* bench_ptx: the PTX engine's interpreter next to the same kernels written
 * as native C (as a FABMEM_KERNELS plugin would run them: a function per
 * thread, called for every thread of every block), in the same run, on one
 * worker thread. Each kernel's rounds alternate interpreted and native;
 * each line is min / median / max over the rounds, the ratio is taken per
 * round, and lane-instructions/s counts the instructions each thread
 * executes (worked out from the kernel's shape, see mkernels.h). Times are
 * the process's CPU time (the one worker's, the launching thread only
 * waits), so that a machine shared with other work does not count its
 * waits for a core.
 *
 *   vadd    c[i] = a[i] + b[i], 1M floats, 256-thread blocks
 *   reduce  a 256-thread shared-memory tree sum per block (bar.sync
 *           between levels), then red.add of the block sums, 1024 blocks
 *   arith   straight-line integer and f32 arithmetic in a counted loop,
 *           1024 threads x 2000 rounds of 19 instructions
 *   wide    the register file of NCCL's device code: one kernel of 9,800
 *           registers (a chain of short-lived ones), 64 blocks of 128
 *           threads that all start before any ends (each waits for every
 *           block to arrive, as NCCL's blocks wait on each other); the
 *           register slots its window takes, CPU time and page faults a
 *           run, interpreted only
 *
 * Usage: bench_ptx [rounds, default 7] | bench_ptx --smoke */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "mkernels.h"

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static void row(const char *what, double *v, int n, const char *unit, double scale)
{
    qsort(v, (size_t)n, sizeof(double), cmp_double);
    printf("  %-34s %10.3f %10.3f %10.3f %s\n", what, v[0] * scale, v[n / 2] * scale, v[n - 1] * scale, unit);
}

static fab__ptx_program_t *load(mb_t *b)
{
    fab__ptx_program_t *p = NULL;
    fab__ptx_diag_t d;
    if (fab__ptx_program_load(&b->m, &p, &d) != FAB__PTX_OK) {
        fprintf(stderr, "bench_ptx: load: line %u: %s\n", d.line, d.msg);
        exit(1);
    }
    return p;
}

static double run(const fab__ptx_program_t *p, const char *k, uint32_t grid, uint32_t block, const void *prm)
{
    fab__ptx_launch_t la = {.kernel = fab__ptx_program_kernel(p, k), .grid = {grid, 1, 1},
                            .block = {block, 1, 1}, .params = prm, .workers = 1};
    fab__ptx_fault_t f;
    double t0 = now_s();
    if (fab__ptx_run(&la, &f) != FAB__PTX_OK) {
        fprintf(stderr, "bench_ptx: %s: %s\n", k, f.report);
        exit(1);
    }
    return now_s() - t0;
}

/* ---- the native versions ---------------------------------------------------------------- */

typedef struct { uint32_t x; } dim_t;

__attribute__((noinline)) static void vadd_thread(const float *a, const float *b, float *c, uint32_t n, dim_t bid,
                                                  dim_t bdim, dim_t tid)
{
    uint32_t i = bid.x * bdim.x + tid.x;
    if (i < n)
        c[i] = a[i] + b[i];
}

static void vadd_native(const float *a, const float *b, float *c, uint32_t n, uint32_t grid, uint32_t block)
{
    for (uint32_t bi = 0; bi < grid; bi++)
        for (uint32_t t = 0; t < block; t++)
            vadd_thread(a, b, c, n, (dim_t){bi}, (dim_t){block}, (dim_t){t});
}

static void reduce_native(const uint32_t *in, uint32_t *out, uint32_t *tot, uint32_t grid)
{
    uint32_t s[256];
    for (uint32_t bi = 0; bi < grid; bi++) {
        for (uint32_t t = 0; t < 256; t++) /* each phase between barriers, thread by thread */
            s[t] = in[bi * 256 + t];
        for (uint32_t k = 128; k > 0; k >>= 1)
            for (uint32_t t = 0; t < 256; t++)
                if (t < k)
                    s[t] += s[t + k];
        out[bi] = s[0];
        __atomic_fetch_add(tot, s[0], __ATOMIC_SEQ_CST);
    }
}

__attribute__((noinline)) static void arith_thread(uint32_t *out, uint32_t iters, uint32_t tid)
{
    uint32_t a = tid, b = 1, c, d, e = 0, k1b = 0x3f7ff972u, k2b = 0x3a83126fu;
    float x = (float)a, y = 0, k1, k2;
    memcpy(&k1, &k1b, 4);
    memcpy(&k2, &k2b, 4);
    for (uint32_t n = iters; n; n--)
        for (int r = 0; r < 2; r++) {
            a += b;
            b ^= a;
            c = a * 3;
            b += c;
            d = a << 1;
            e = d & b;
            x = __builtin_fmaf(x, k1, k2);
            y += x;
        }
    (void)e;
    out[2 * tid] = a + b;
    memcpy(&out[2 * tid + 1], &y, 4);
}

static void arith_native(uint32_t *out, uint32_t iters, uint32_t threads)
{
    for (uint32_t t = 0; t < threads; t++)
        arith_thread(out, iters, t);
}

/* ---- wide: many registers, every block live ------------------------------------------------ */

#define WIDE_REGS 9800u

static char *wide_ptx(void)
{
    size_t cap = 40 * (size_t)WIDE_REGS + 2048, n = 0;
    char *t = malloc(cap);
    if (!t)
        exit(1);
    n += (size_t)snprintf(t + n, cap - n,
                          ".version 8.0\n.target sm_90\n.address_size 64\n"
                          ".visible .entry wide(.param .u64 out, .param .u64 ctr, .param .u32 nb)\n{\n"
                          ".reg .pred %%p;\n.reg .u64 %%o, %%c, %%a;\n.reg .b32 %%r<%u>, %%t, %%v, %%n;\n"
                          "ld.param.u64 %%o, [out];\nld.param.u64 %%c, [ctr];\nld.param.u32 %%n, [nb];\n"
                          "mov.u32 %%t, %%tid.x;\nsetp.ne.u32 %%p, %%t, 0;\n@%%p bra WAIT;\n"
                          "atom.global.add.u32 %%v, [%%c], 1;\n"
                          "WAIT:\nld.volatile.global.u32 %%v, [%%c];\nsetp.lt.u32 %%p, %%v, %%n;\n@%%p bra WAIT;\n"
                          "mov.u32 %%r0, %%t;\n", WIDE_REGS);
    for (unsigned i = 1; i < WIDE_REGS; i++)
        n += (size_t)snprintf(t + n, cap - n, "add.u32 %%r%u, %%r%u, %u;\n", i, i - 1, i % 7);
    snprintf(t + n, cap - n, "mul.wide.u32 %%a, %%t, 4;\nadd.u64 %%a, %%o, %%a;\n"
             "st.global.u32 [%%a], %%r%u;\nret;\n}\n", WIDE_REGS - 1);
    return t;
}

static void wide(int rounds, uint32_t grid)
{
    char *text = wide_ptx();
    fab__ptx_module_t *m = NULL;
    fab__ptx_program_t *p = NULL;
    fab__ptx_diag_t d;
    if (fab__ptx_parse(text, strlen(text), &m, &d) != FAB__PTX_OK || fab__ptx_program_load(m, &p, &d) != FAB__PTX_OK) {
        fprintf(stderr, "bench_ptx: wide: line %u: %s\n", d.line, d.msg);
        exit(1);
    }
    free(text);
    uint32_t regs = 0, slots = 0, out[128], ctr = 0, sum = 0;
    fab__ptx_program_func_slots(p, "wide", &regs, &slots);
    for (unsigned i = 1; i < WIDE_REGS; i++)
        sum += i % 7;
    struct { uint32_t *out, *ctr; uint32_t nb; } wp = {out, &ctr, grid};
    double ti[64], pf[64];
    for (int r = 0; r < rounds; r++) {
        struct rusage r0, r1;
        ctr = 0;
        getrusage(RUSAGE_SELF, &r0);
        ti[r] = run(p, "wide", grid, 128, &wp);
        getrusage(RUSAGE_SELF, &r1);
        pf[r] = (double)(r1.ru_minflt - r0.ru_minflt);
        for (uint32_t t = 0; t < 128; t++)
            if (out[t] != t + sum) {
                fprintf(stderr, "bench_ptx: wide: thread %u computed %u, not %u\n", t, out[t], t + sum);
                exit(1);
            }
    }
    printf("wide (%u PTX registers on %u slots, %u blocks of 128 threads live at once)\n", regs, slots, grid);
    row("interpreted", ti, rounds, "ms", 1e3);
    row("minor page faults a run", pf, rounds, "", 1);
    fab__ptx_program_free(p);
}

/* ---- rounds ------------------------------------------------------------------------------ */

static void report(const char *name, double *ti, double *tn, int rounds, double lane_insns)
{
    double ratio[64], rate[64];
    for (int r = 0; r < rounds; r++) {
        ratio[r] = ti[r] / tn[r];
        rate[r] = lane_insns / ti[r];
    }
    printf("%s (%.0f lane-instructions a run)\n", name, lane_insns);
    row("interpreted", ti, rounds, "ms", 1e3);
    row("native C", tn, rounds, "ms", 1e3);
    row("ratio interpreted / native", ratio, rounds, "x", 1);
    row("interpreted lane-instructions/s", rate, rounds, "G/s", 1e-9);
}

int main(int argc, char **argv)
{
    bool smoke = argc > 1 && strcmp(argv[1], "--smoke") == 0;
    int rounds = smoke ? 1 : argc > 1 ? atoi(argv[1]) : 7;
    if (rounds < 1 || rounds > 64)
        rounds = 7;
    uint32_t n = smoke ? 1u << 12 : 1u << 20, rgrid = smoke ? 8 : 1024, iters = smoke ? 20 : 2000;
    mb_t *b = malloc(sizeof(*b));
    double ti[64], tn[64];
    printf("bench_ptx: one worker thread; min / median / max over %d rounds\n", rounds);

    build_vadd(b);
    fab__ptx_program_t *p = load(b);
    float *a = malloc(n * 4), *bb = malloc(n * 4), *c = malloc(n * 4), *c2 = malloc(n * 4);
    for (uint32_t i = 0; i < n; i++)
        a[i] = (float)i, bb[i] = 2.0f;
    struct { const float *a, *b; float *c; uint32_t n; } vp = {a, bb, c, n};
    for (int r = 0; r < rounds; r++) {
        ti[r] = run(p, "vadd", n / 256, 256, &vp);
        double t0 = now_s();
        vadd_native(a, bb, c2, n, n / 256, 256);
        tn[r] = now_s() - t0;
    }
    if (memcmp(c, c2, n * 4) != 0) {
        fprintf(stderr, "bench_ptx: vadd: interpreted and native differ\n");
        return 1;
    }
    report("vadd", ti, tn, rounds, 19.0 * n);
    fab__ptx_program_free(p);

    build_reduce(b);
    p = load(b);
    uint32_t *in = malloc(rgrid * 256 * 4), *out = malloc(rgrid * 4), *out2 = malloc(rgrid * 4), tot = 0, tot2 = 0;
    for (uint32_t i = 0; i < rgrid * 256; i++)
        in[i] = i * 2654435761u;
    struct { const uint32_t *in; uint32_t *out, *tot; } rp = {in, out, &tot};
    for (int r = 0; r < rounds; r++) {
        ti[r] = run(p, "reduce", rgrid, 256, &rp);
        double t0 = now_s();
        reduce_native(in, out2, &tot2, rgrid);
        tn[r] = now_s() - t0;
    }
    if (memcmp(out, out2, rgrid * 4) != 0 || tot != tot2) {
        fprintf(stderr, "bench_ptx: reduce: interpreted and native differ\n");
        return 1;
    }
    /* a block: 256 x (16 before the loop + 8 levels x 7 + 3 after) + 5 x 255 sums + 5 by thread 0 */
    report("reduce", ti, tn, rounds, (256.0 * 75 + 5 * 255 + 5) * rgrid);
    fab__ptx_program_free(p);

    build_arith(b);
    p = load(b);
    uint32_t *ao = malloc(1024 * 8), *ao2 = malloc(1024 * 8);
    struct { uint32_t *out; uint32_t iters; } ap = {ao, iters};
    for (int r = 0; r < rounds; r++) {
        ti[r] = run(p, "arith", 1, 1024, &ap);
        double t0 = now_s();
        arith_native(ao2, iters, 1024);
        tn[r] = now_s() - t0;
    }
    if (memcmp(ao, ao2, 1024 * 8) != 0) {
        fprintf(stderr, "bench_ptx: arith: interpreted and native differ\n");
        return 1;
    }
    report("arith", ti, tn, rounds, 1024.0 * (7 + 19.0 * iters + 9));
    fab__ptx_program_free(p);

    wide(rounds, smoke ? 2 : 64);
    free(b);
    free(a), free(bb), free(c), free(c2), free(in), free(out), free(out2), free(ao), free(ao2);
    return 0;
}
