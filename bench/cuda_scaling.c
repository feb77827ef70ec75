/* How the driver's per-call cost grows with the number of live mappings in
 * one reservation: cuMemMap + cuMemUnmap into a hole in the middle of it,
 * cuMemRetainAllocationHandle on a mapped address, and a handle lookup
 * (cuMemGetAllocationPropertiesFromHandle on a live handle), at 100, 1k, 10k
 * and 100k pieces. Next to map+unmap it times the two mmap calls that carry
 * it on the same hole, so that the kernel's own growth (its VMA tree) is told
 * apart from the emulation's.
 *
 * Retain and lookup run twice. "warm" asks again and again about the same 64
 * random pieces or handles, as a program does about the memory it is using:
 * what it measures is the table's own growth (a deeper tree, a longer chain).
 * "cold" asks about any of them at random, so that at 10k and more most
 * calls also miss the CPU caches, which no table escapes: every size's
 * records no longer fit in them, and a cold call pays a few memory reads.
 *
 * Written against cuda.h only. The bench writes its own config, one node with
 * a 4 KiB granularity, and uses POSIX_FD allocations: no daemon is needed.
 *
 * The kernel bounds what can be live (docs/cuda.md, "Limits"):
 *   - every mapping is a VMA of its own: adjacent MAP_SHARED mappings of
 *     different memfds never merge, nor do two mappings of one memfd (each
 *     starts at offset 0), so vm.max_map_count (65530 by default) caps the
 *     mappings of a process;
 *   - every allocation is a memfd, so RLIMIT_NOFILE caps the allocations.
 * Where a size needs more, the bench keeps every piece but makes fewer,
 * larger mappings and splits each into one-granule pieces with cuMemSetAccess
 * (the same access over a sub-range splits the driver's record, not the
 * kernel's VMA), and maps fewer allocations, each several times. Each size's
 * line says how many mappings and allocations stand behind its pieces.
 *
 * Each round builds every size afresh, in an order that rotates from round
 * to round, so that drift in the machine reaches all sizes alike; each line
 * gives the min/median/max of the rounds' ns per call and the median as a
 * ratio to the 100-piece median.
 *
 * Usage: cuda_scaling [calls per round, default 1000] [rounds, default 7]
 *                     [largest size, default 100000] */
#include <cuda.h>
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "bench_cuda.h"

#define MAX_ROUNDS 99
#define NSIZES 4
#define NOPS 6
#define WARM 64 /* distinct targets of the warm runs */

static const size_t sizes[NSIZES] = {100, 1000, 10000, 100000};
static const char *const op_names[NOPS] = {
    "cuMemMap+cuMemUnmap",
    "  mmap+mmap (the kernel's part)",
    "cuMemRetainAllocationHandle, warm",
    "cuMemRetainAllocationHandle, cold",
    "handle lookup, warm",
    "handle lookup, cold",
};

static size_t gran;
static CUmemAllocationProp prop;
static CUmemAccessDesc access_rw;

static uint64_t rng_state = 0x9E3779B97F4A7C15ull;

static size_t rnd(size_t n)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return (size_t)(rng_state % n);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* How many mappings and descriptors this process may still add. */
static size_t count_lines(const char *path)
{
    FILE *f = fopen(path, "r");
    size_t n = 0;
    int c;
    if (!f)
        return 0;
    while ((c = fgetc(f)) != EOF)
        n += c == '\n';
    fclose(f);
    return n;
}

static size_t map_budget(void)
{
    FILE *f = fopen("/proc/sys/vm/max_map_count", "r");
    unsigned long max = 65530;
    if (f) {
        if (fscanf(f, "%lu", &max) != 1)
            max = 65530;
        fclose(f);
    }
    size_t used = count_lines("/proc/self/maps");
    /* Room for the hole's mapping, malloc's arenas and a sanitizer's shadow. */
    return max > used + 2000 ? max - used - 2000 : 0;
}

static size_t fd_budget(void)
{
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) != 0)
        return 1000;
    if (rl.rlim_cur < rl.rlim_max) {
        rl.rlim_cur = rl.rlim_max;
        setrlimit(RLIMIT_NOFILE, &rl);
        getrlimit(RLIMIT_NOFILE, &rl);
    }
    size_t open_now = 0;
    DIR *d = opendir("/proc/self/fd");
    if (d) {
        while (readdir(d))
            open_now++;
        closedir(d);
    }
    return rl.rlim_cur > open_now + 200 ? (size_t)rl.rlim_cur - open_now - 200 : 1;
}

/* One size built: npieces one-granule pieces in one reservation, made of
 * nmaps mappings of per_map granules, of nallocs allocations, with a
 * one-granule hole after the first half of the mappings. */
typedef struct layout {
    size_t npieces, nmaps, per_map, nallocs;
    CUdeviceptr base;
    size_t reserved;
    uintptr_t hole;
    CUmemGenericAllocationHandle *allocs;
    CUmemGenericAllocationHandle spare; /* mapped into the hole and out again */
    int spare_fd;
} layout_t;

static size_t map_size(const layout_t *l, size_t j)
{
    size_t left = l->npieces - j * l->per_map;
    return (left < l->per_map ? left : l->per_map) * gran;
}

static uintptr_t map_addr(const layout_t *l, size_t j)
{
    return (uintptr_t)l->base + j * l->per_map * gran + (j >= l->nmaps / 2 ? gran : 0);
}

static uintptr_t piece_addr(const layout_t *l, size_t p)
{
    size_t j = p / l->per_map;
    return map_addr(l, j) + (p - j * l->per_map) * gran;
}

static void build(layout_t *l, size_t npieces, size_t max_maps, size_t max_allocs)
{
    memset(l, 0, sizeof(*l));
    l->npieces = npieces;
    l->per_map = (npieces + max_maps - 1) / max_maps;
    l->nmaps = (npieces + l->per_map - 1) / l->per_map;
    l->nallocs = l->nmaps < max_allocs ? l->nmaps : max_allocs;
    l->allocs = calloc(l->nallocs, sizeof(*l->allocs));
    if (!l->allocs)
        exit(1);
    for (size_t i = 0; i < l->nallocs; i++)
        CHECK(cuMemCreate(&l->allocs[i], l->per_map * gran, &prop, 0));
    CHECK(cuMemCreate(&l->spare, gran, &prop, 0));
    CHECK(cuMemExportToShareableHandle(&l->spare_fd, l->spare,
                                       CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0));
    l->reserved = (npieces + 1) * gran;
    CHECK(cuMemAddressReserve(&l->base, l->reserved, 0, 0, 0));
    l->hole = map_addr(l, l->nmaps / 2) - gran;
    /* In address order, each mapping split as soon as it is made: every
     * change lands at the end of what is there, which is what any table
     * does best, so that building costs the same whatever the table. */
    for (size_t j = 0; j < l->nmaps; j++) {
        uintptr_t a = map_addr(l, j);
        size_t s = map_size(l, j);
        CHECK(cuMemMap(a, s, 0, l->allocs[j % l->nallocs], 0));
        if (s == gran)
            continue;
        CHECK(cuMemSetAccess(a, s, &access_rw, 1));
        for (size_t off = 0; off + gran < s; off += gran)
            CHECK(cuMemSetAccess(a + off, gran, &access_rw, 1));
    }
}

static void teardown(layout_t *l)
{
    for (size_t j = l->nmaps; j-- > 0;)
        CHECK(cuMemUnmap(map_addr(l, j), map_size(l, j)));
    CHECK(cuMemAddressFree(l->base, l->reserved));
    for (size_t i = 0; i < l->nallocs; i++)
        CHECK(cuMemRelease(l->allocs[i]));
    CHECK(cuMemRelease(l->spare));
    close(l->spare_fd);
    free(l->allocs);
}

/* calls indices below n: any at random, or (warm) WARM random ones in turn. */
static void pick(size_t *idx, int calls, size_t n, int warm)
{
    size_t few[WARM];
    for (int i = 0; i < WARM; i++)
        few[i] = rnd(n);
    for (int i = 0; i < calls; i++)
        idx[i] = warm ? few[i % WARM] : rnd(n);
}

/* ns per call of each op over `calls` calls. */
static void measure(layout_t *l, int calls, size_t *idx, CUmemGenericAllocationHandle *got,
                    double out[NOPS])
{
    double t0 = now_ns();
    for (int i = 0; i < calls; i++) {
        CHECK(cuMemMap(l->hole, gran, 0, l->spare, 0));
        CHECK(cuMemUnmap(l->hole, gran));
    }
    out[0] = (now_ns() - t0) / calls;

    t0 = now_ns();
    for (int i = 0; i < calls; i++) {
        if (mmap((void *)l->hole, gran, PROT_NONE, MAP_SHARED | MAP_FIXED, l->spare_fd, 0) ==
                MAP_FAILED ||
            mmap((void *)l->hole, gran, PROT_NONE,
                 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED, -1, 0) == MAP_FAILED)
            exit(1);
    }
    out[1] = (now_ns() - t0) / calls;

    for (int warm = 1; warm >= 0; warm--) {
        pick(idx, calls, l->npieces, warm);
        t0 = now_ns();
        for (int i = 0; i < calls; i++)
            CHECK(cuMemRetainAllocationHandle(&got[i], (void *)piece_addr(l, idx[i])));
        out[3 - warm] = (now_ns() - t0) / calls;
        for (int i = 0; i < calls; i++)
            CHECK(cuMemRelease(got[i]));
    }

    CUmemAllocationProp p;
    for (int warm = 1; warm >= 0; warm--) {
        pick(idx, calls, l->nallocs, warm);
        t0 = now_ns();
        for (int i = 0; i < calls; i++)
            CHECK(cuMemGetAllocationPropertiesFromHandle(&p, l->allocs[idx[i]]));
        out[5 - warm] = (now_ns() - t0) / calls;
    }
}

static int write_config(char *dir, size_t dirlen)
{
    const char *tmp = getenv("TMPDIR");
    snprintf(dir, dirlen, "%s/fabmem-scaling-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(dir))
        return -1;
    char path[600];
    snprintf(path, sizeof(path), "%s/fabmem.ini", dir);
    FILE *f = fopen(path, "w");
    if (!f)
        return -1;
    fputs("[node n]\ngpus = 1\ngranularity = 4K\ngpu_memory = 1T\n", f);
    fclose(f);
    setenv("FABMEM_CONFIG", path, 1);
    setenv("FABMEM_NODE", "n", 1);
    /* This config, not a daemon's: with none answering on a socket of our
     * own and none started, cuInit takes the local config (POSIX_FD is all
     * the bench uses). */
    snprintf(path, sizeof(path), "%s/no-daemon/fabmemd.sock", dir);
    setenv("FABMEM_SOCKET", path, 1);
    setenv("FABMEM_NO_AUTOSTART", "1", 1);
    return 0;
}

int main(int argc, char **argv)
{
    int calls = argc > 1 ? atoi(argv[1]) : 1000;
    int rounds = argc > 2 ? atoi(argv[2]) : 7;
    long largest = argc > 3 ? atol(argv[3]) : 100000;
    if (calls <= 0 || rounds <= 0 || rounds > MAX_ROUNDS || largest < 100)
        return 2;
    int nsizes = 0;
    while (nsizes < NSIZES && sizes[nsizes] <= (size_t)largest)
        nsizes++;

    char dir[512];
    if (write_config(dir, sizeof(dir)) != 0) {
        perror("config");
        return 1;
    }
    CUcontext ctx;
    CHECK(cuInit(0));
    char path[600];
    snprintf(path, sizeof(path), "%s/fabmem.ini", dir);
    unlink(path); /* cuInit has read it */
    rmdir(dir);
    CHECK(cuDevicePrimaryCtxRetain(&ctx, 0));
    CHECK(cuCtxSetCurrent(ctx));
    prop = device_prop(0, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR);
    CHECK(cuMemGetAllocationGranularity(&gran, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM));
    memset(&access_rw, 0, sizeof(access_rw));
    access_rw.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    access_rw.location.id = 0;
    access_rw.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;

    size_t max_maps = map_budget(), max_allocs = fd_budget();
    if (max_maps < 100 || max_allocs < 100) {
        fprintf(stderr, "too few mappings (%zu) or descriptors (%zu) left\n", max_maps, max_allocs);
        return 1;
    }
    size_t *idx = calloc((size_t)calls, sizeof(*idx));
    CUmemGenericAllocationHandle *got = calloc((size_t)calls, sizeof(*got));
    static double t[NSIZES][NOPS][MAX_ROUNDS];
    size_t shape[NSIZES][2];
    if (!idx || !got)
        return 1;

    layout_t l;
    build(&l, 100, max_maps, max_allocs); /* warm up */
    measure(&l, calls / 10 + 1, idx, got, t[0][0]);
    teardown(&l);
    for (int r = 0; r < rounds; r++) {
        for (int k = 0; k < nsizes; k++) {
            int s = (k + r) % nsizes;
            double out[NOPS];
            build(&l, sizes[s], max_maps, max_allocs);
            shape[s][0] = l.nmaps;
            shape[s][1] = l.nallocs;
            measure(&l, calls, idx, got, out);
            teardown(&l);
            for (int o = 0; o < NOPS; o++)
                t[s][o][r] = out[o];
        }
    }

    printf("Scaling with live pieces in one reservation: %zu-byte granularity, %d calls x %d "
           "rounds (ns per call: min / median / max; median vs 100 pieces)\n",
           gran, calls, rounds);
    printf("kernel limits: %zu more mappings (vm.max_map_count), %zu more descriptors "
           "(RLIMIT_NOFILE)\n", max_maps, max_allocs);
    for (int s = 0; s < nsizes; s++) {
        printf("%zu pieces: %zu mappings of %zu allocations%s\n", sizes[s], shape[s][0],
               shape[s][1],
               shape[s][0] < sizes[s] ? " (kernel limit: mappings split into pieces)" : "");
    }
    double base[NOPS];
    for (int o = 0; o < NOPS; o++) {
        printf("%s\n", op_names[o]);
        for (int s = 0; s < nsizes; s++) {
            double *v = t[s][o];
            qsort(v, (size_t)rounds, sizeof(double), cmp_double);
            double med = v[rounds / 2];
            if (s == 0)
                base[o] = med;
            printf("  %7zu: %9.0f / %9.0f / %9.0f   %5.2fx\n", sizes[s], v[0], med,
                   v[rounds - 1], med / base[o]);
        }
    }
    free(idx);
    free(got);
    return 0;
}
