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
 *
 * Usage: bench_ptx [rounds, default 7] | bench_ptx --smoke */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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
    free(b);
    free(a), free(bb), free(c), free(c2), free(in), free(out), free(out2), free(ao), free(ao2);
    return 0;
}
