/* The lifetime checker (FABMEM_CHECK=1): each helper is a small program with
 * one lifetime bug (or none), run with the checker on; the test reads what it
 * reported on stderr and in FABMEM_CHECK_FILE's JSON lines and asserts the
 * finding. Written against cuda.h only: the helpers are plain user programs
 * (against NVIDIA's driver they run, and simply report nothing). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cuda_test.h"

#ifdef FAB_CHECK_WITH_DAEMON
#include "../fabric/daemon_harness.h"
#define HAVE_DAEMON 1
#endif

/* As HELPER_CU, for a call that must fail with code want. */
#define HELPER_CU_IS(call, want, code)                                         \
    do {                                                                       \
        CUresult r_ = (call);                                                  \
        if (r_ != (want)) {                                                    \
            fprintf(stderr, "helper: %s -> %d\n", #call, (int)r_);             \
            return (code);                                                     \
        }                                                                      \
    } while (0)

/* Every helper's first step: its stderr into the file argv[1] names, then
 * cuInit and device 0's primary context. */
static int helper_start(int argc, char **argv)
{
    if (argc < 2)
        return 2;
    int fd = open(argv[1], O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0 || dup2(fd, STDERR_FILENO) < 0)
        return 3;
    close(fd);
    CUcontext ctx;
    HELPER_CU(cuInit(0), 10);
    HELPER_CU(cuDevicePrimaryCtxRetain(&ctx, 0), 11);
    HELPER_CU(cuCtxSetCurrent(ctx), 12);
    return 0;
}

#define HELPER_START(argc, argv)                                               \
    do {                                                                       \
        int start_rc_ = helper_start(argc, argv);                              \
        if (start_rc_ != 0)                                                    \
            return start_rc_;                                                  \
    } while (0)

static size_t granularity(void)
{
    return cut_granularity(0);
}

/* A mapping of a fresh POSIX_FD allocation with access flags, whose handle
 * is in *h. */
static int map_new(CUmemGenericAllocationHandle *h, CUdeviceptr *ptr, CUmemAccess_flags flags)
{
    size_t g = granularity();
    CUmemAllocationProp prop = cut_prop(CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0);
    HELPER_CU(cuMemCreate(h, g, &prop, 0), 20);
    HELPER_CU(cuMemAddressReserve(ptr, g, 0, 0, 0), 21);
    HELPER_CU(cuMemMap(*ptr, g, 0, *h, 0), 22);
    CUmemAccessDesc d = cut_access(0, flags);
    HELPER_CU(cuMemSetAccess(*ptr, g, &d, 1), 23);
    return 0;
}

#define MAP_NEW(h, ptr, flags)                                                 \
    do {                                                                       \
        int map_rc_ = map_new(h, ptr, flags);                                  \
        if (map_rc_ != 0)                                                      \
            return map_rc_;                                                    \
    } while (0)

/* helper "clean": every object made is ended, in the documented order,
 * including a handle released while still mapped (legal). */
static int helper_clean(int argc, char **argv, int sock)
{
    (void)sock;
    HELPER_START(argc, argv);
    size_t g = granularity();
    CUmemGenericAllocationHandle h;
    CUdeviceptr ptr;
    MAP_NEW(&h, &ptr, CU_MEM_ACCESS_FLAGS_PROT_READWRITE);
    HELPER_CU(cuMemsetD8(ptr, 7, g), 30);
    HELPER_CU(cuMemRelease(h), 31); /* while mapped: the memory lives on */
    unsigned char b = 0;
    HELPER_CU(cuMemcpyDtoH(&b, ptr, 1), 32);
    HELPER_CU(cuMemUnmap(ptr, g), 33);
    HELPER_CU(cuMemAddressFree(ptr, g), 34);
    CUdeviceptr m;
    HELPER_CU(cuMemAlloc(&m, 4096), 35);
    HELPER_CU(cuMemsetD8(m, 1, 4096), 36);
    HELPER_CU(cuMemFree(m), 37);
    void *host;
    HELPER_CU(cuMemAllocHost(&host, 4096), 38);
    HELPER_CU(cuMemFreeHost(host), 39);
    /* A handle retained by address and released again. */
    MAP_NEW(&h, &ptr, CU_MEM_ACCESS_FLAGS_PROT_READWRITE);
    CUmemGenericAllocationHandle again;
    HELPER_CU(cuMemRetainAllocationHandle(&again, (void *)(uintptr_t)ptr), 40);
    HELPER_CU(cuMemRelease(again), 41);
    HELPER_CU(cuMemUnmap(ptr, g), 42);
    HELPER_CU(cuMemRelease(h), 43);
    HELPER_CU(cuMemAddressFree(ptr, g), 44);
    return 0;
}

/* helper "leaks": one of each object, never ended. */
static int helper_leaks(int argc, char **argv, int sock)
{
    (void)sock;
    HELPER_START(argc, argv);
    CUmemGenericAllocationHandle h;
    CUdeviceptr ptr;
    MAP_NEW(&h, &ptr, CU_MEM_ACCESS_FLAGS_PROT_READWRITE);
    CUdeviceptr m;
    HELPER_CU(cuMemAlloc(&m, 1000), 30);
    int fd = -1;
    HELPER_CU(cuMemExportToShareableHandle(&fd, h, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0), 31);
    CUmemGenericAllocationHandle imported;
    HELPER_CU(cuMemImportFromShareableHandle(&imported, (void *)(uintptr_t)fd,
                                             CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR), 32);
    close(fd);
    return 0;
}

/* helper "release_mapped_then_leak_mapping": the handle is released while
 * mapped (legal), the mapping and the reservation never end. */
static int helper_mapping_leak(int argc, char **argv, int sock)
{
    (void)sock;
    HELPER_START(argc, argv);
    CUmemGenericAllocationHandle h;
    CUdeviceptr ptr;
    MAP_NEW(&h, &ptr, CU_MEM_ACCESS_FLAGS_PROT_READWRITE);
    HELPER_CU(cuMemRelease(h), 30);
    return 0;
}

/* helper "free_mapped": cuMemAddressFree before cuMemUnmap, then the
 * right order. */
static int helper_free_mapped(int argc, char **argv, int sock)
{
    (void)sock;
    HELPER_START(argc, argv);
    size_t g = granularity();
    CUmemGenericAllocationHandle h;
    CUdeviceptr ptr;
    MAP_NEW(&h, &ptr, CU_MEM_ACCESS_FLAGS_PROT_READWRITE);
    HELPER_CU_IS(cuMemAddressFree(ptr, g), CUDA_ERROR_INVALID_VALUE, 30);
    HELPER_CU(cuMemUnmap(ptr, g), 31);
    HELPER_CU(cuMemRelease(h), 32);
    HELPER_CU(cuMemAddressFree(ptr, g), 33);
    return 0;
}

/* helper "double_release": cuMemRelease of a handle twice, then cuMemMap
 * of it. */
static int helper_double_release(int argc, char **argv, int sock)
{
    (void)sock;
    HELPER_START(argc, argv);
    size_t g = granularity();
    CUmemAllocationProp prop = cut_prop(0, 0);
    CUmemGenericAllocationHandle h;
    HELPER_CU(cuMemCreate(&h, g, &prop, 0), 30);
    HELPER_CU(cuMemRelease(h), 31);
    HELPER_CU_IS(cuMemRelease(h), CUDA_ERROR_INVALID_VALUE, 32);
    return 0;
}

/* helper "double_free": cuMemFree twice, then a copy into the freed
 * memory. */
static int helper_double_free(int argc, char **argv, int sock)
{
    (void)sock;
    HELPER_START(argc, argv);
    CUdeviceptr m;
    HELPER_CU(cuMemAlloc(&m, 4096), 30);
    HELPER_CU(cuMemFree(m), 31);
    HELPER_CU_IS(cuMemFree(m), CUDA_ERROR_INVALID_VALUE, 32);
    return 0;
}

/* helper "copy_unmapped": a copy into a reserved range with nothing mapped. */
static int helper_copy_unmapped(int argc, char **argv, int sock)
{
    (void)sock;
    HELPER_START(argc, argv);
    size_t g = granularity();
    CUdeviceptr ptr;
    HELPER_CU(cuMemAddressReserve(&ptr, g, 0, 0, 0), 30);
    char buf[64] = {0};
    HELPER_CU_IS(cuMemcpyHtoD(ptr + 128, buf, sizeof(buf)), CUDA_ERROR_INVALID_VALUE, 31);
    HELPER_CU(cuMemAddressFree(ptr, g), 32);
    return 0;
}

/* helper "kernel_store_unmapped": a kernel, loaded from PTX text, stores a
 * word into the unmapped half of a reservation; the launch's error is the
 * driver's, and the finding says the kernel wrote, and how much. */
static const char store_word_ptx[] =
    ".version 8.0\n.target sm_80\n.address_size 64\n"
    ".visible .entry store_word(.param .u64 p)\n{\n"
    "    .reg .b64 %rd<2>;\n"
    "    ld.param.u64 %rd1, [p];\n"
    "    st.global.u32 [%rd1+128], 7;\n"
    "    ret;\n}\n";

/* helper "kernel_store_wide_unmapped": the same with a 16-byte store of a
 * .b128 register, which the finding names as 16 bytes. */
static const char store_wide_ptx[] =
    ".version 8.3\n.target sm_90\n.address_size 64\n"
    ".visible .entry store_wide(.param .u64 p)\n{\n"
    "    .reg .b64 %rd<2>;\n    .reg .b128 %v;\n"
    "    ld.param.u64 %rd1, [p];\n"
    "    mov.b128 %v, {%rd1, %rd1};\n"
    "    st.relaxed.sys.global.b128 [%rd1+128], %v;\n"
    "    ret;\n}\n";

static int kernel_store_unmapped(const char *ptx, const char *name)
{
    size_t g = granularity();
    CUmemGenericAllocationHandle h;
    CUdeviceptr ptr;
    CUmemAllocationProp prop = cut_prop(CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0);
    HELPER_CU(cuMemCreate(&h, g, &prop, 0), 50);
    HELPER_CU(cuMemAddressReserve(&ptr, 2 * g, 0, 0, 0), 51);
    HELPER_CU(cuMemMap(ptr, g, 0, h, 0), 52);
    CUmemAccessDesc d = cut_access(0, CU_MEM_ACCESS_FLAGS_PROT_READWRITE);
    HELPER_CU(cuMemSetAccess(ptr, g, &d, 1), 53);
    CUmodule mod;
    CUfunction f;
    HELPER_CU(cuModuleLoadData(&mod, ptx), 54);
    HELPER_CU(cuModuleGetFunction(&f, mod, name), 55);
    CUdeviceptr hole = ptr + g;
    void *params[] = {&hole};
    HELPER_CU(cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, NULL, params, NULL), 56);
    HELPER_CU_IS(cuCtxSynchronize(), CUDA_ERROR_ILLEGAL_ADDRESS, 57);
    HELPER_CU(cuMemUnmap(ptr, g), 58);
    HELPER_CU(cuMemRelease(h), 59);
    HELPER_CU(cuMemAddressFree(ptr, 2 * g), 60);
    return 0;
}

static int helper_kernel_store_unmapped(int argc, char **argv, int sock)
{
    (void)sock;
    HELPER_START(argc, argv);
    return kernel_store_unmapped(store_word_ptx, "store_word");
}

static int helper_kernel_store_wide_unmapped(int argc, char **argv, int sock)
{
    (void)sock;
    HELPER_START(argc, argv);
    return kernel_store_unmapped(store_wide_ptx, "store_wide");
}

/* helper "write_read_only": a store into a mapping granted read access
 * only; the process dies of it, as of an unhandled fault. */
static int helper_write_read_only(int argc, char **argv, int sock)
{
    (void)sock;
    HELPER_START(argc, argv);
    CUmemGenericAllocationHandle h;
    CUdeviceptr ptr;
    MAP_NEW(&h, &ptr, CU_MEM_ACCESS_FLAGS_PROT_READ);
    *(volatile unsigned char *)(uintptr_t)(ptr + 100) = 1;
    return 40; /* not reached */
}

/* helper "use_after_free": a store into cuMemAlloc memory after cuMemFree. */
static int helper_use_after_free(int argc, char **argv, int sock)
{
    (void)sock;
    HELPER_START(argc, argv);
    CUdeviceptr m;
    HELPER_CU(cuMemAlloc(&m, 8192), 30);
    HELPER_CU(cuMemFree(m), 31);
    *(volatile unsigned char *)(uintptr_t)(m + 4100) = 1;
    return 40; /* not reached */
}

/* helper "pool": a stream-ordered allocation freed twice, another never
 * freed. */
static int helper_pool(int argc, char **argv, int sock)
{
    (void)sock;
    HELPER_START(argc, argv);
    CUdeviceptr a, b;
    HELPER_CU(cuMemAllocAsync(&a, 4096, NULL), 30);
    HELPER_CU(cuMemAllocAsync(&b, 3000, NULL), 31);
    HELPER_CU(cuMemFreeAsync(a, NULL), 32);
    HELPER_CU_IS(cuMemFreeAsync(a, NULL), CUDA_ERROR_INVALID_VALUE, 33);
    HELPER_CU(cuStreamSynchronize(NULL), 34);
    return 0;
}

/* helper "sent_segv" HOW: a SIGSEGV that no fault raised, in a process
 * that holds memory the checker knows: HOW "raise" raises it, "kill" sends
 * it to itself with kill(), "wait" says "ready" and waits for the parent to
 * send it. Unchecked, each kills the process; the checker must not swallow
 * it. */
static int helper_sent_segv(int argc, char **argv, int sock)
{
    HELPER_START(argc, argv);
    CUdeviceptr m;
    HELPER_CU(cuMemAlloc(&m, 8192), 30);
    const char *how = argc > 2 ? argv[2] : "raise";
    if (strcmp(how, "raise") == 0) {
        raise(SIGSEGV);
    } else if (strcmp(how, "kill") == 0) {
        kill(getpid(), SIGSEGV);
    } else {
        if (fab_test_send_word(sock, "ready") != 0)
            return 31;
        char byte;
        while (read(sock, &byte, 1) > 0)
            ;
    }
    HELPER_CU(cuMemFree(m), 32);
    return 0; /* the signal was swallowed */
}

#ifdef HAVE_DAEMON
/* helper "import_released": a FABRIC allocation exported, released, then
 * its handle imported. */
static int helper_import_released(int argc, char **argv, int sock)
{
    (void)sock;
    HELPER_START(argc, argv);
    size_t g = granularity();
    CUmemAllocationProp prop = cut_prop(CU_MEM_HANDLE_TYPE_FABRIC, 0);
    CUmemGenericAllocationHandle h;
    HELPER_CU(cuMemCreate(&h, g, &prop, 0), 30);
    CUmemFabricHandle fh;
    HELPER_CU(cuMemExportToShareableHandle(&fh, h, CU_MEM_HANDLE_TYPE_FABRIC, 0), 31);
    HELPER_CU(cuMemRelease(h), 32);
    CUmemGenericAllocationHandle again;
    HELPER_CU_IS(cuMemImportFromShareableHandle(&again, &fh, CU_MEM_HANDLE_TYPE_FABRIC),
                 CUDA_ERROR_INVALID_HANDLE, 33);
    return 0;
}

/* helper "export_never_imported": a FABRIC allocation exported and
 * released, its handle sent to no one. */
static int helper_export_never_imported(int argc, char **argv, int sock)
{
    (void)sock;
    HELPER_START(argc, argv);
    size_t g = granularity();
    CUmemAllocationProp prop = cut_prop(CU_MEM_HANDLE_TYPE_FABRIC, 0);
    CUmemGenericAllocationHandle h;
    HELPER_CU(cuMemCreate(&h, g, &prop, 0), 30);
    CUmemFabricHandle fh;
    HELPER_CU(cuMemExportToShareableHandle(&fh, h, CU_MEM_HANDLE_TYPE_FABRIC, 0), 31);
    HELPER_CU(cuMemRelease(h), 32);
    return 0;
}
#endif

/* ---- the parent's side ---------------------------------------------------------- */

typedef struct run {
    int status;
    char err[65536];   /* the helper's stderr */
    char json[131072]; /* its JSON lines */
} run_t;

static void read_file(const char *path, char *buf, size_t cap)
{
    buf[0] = '\0';
    FILE *f = fopen(path, "r");
    if (!f)
        return;
    size_t n = fread(buf, 1, cap - 1, f);
    buf[n] = '\0';
    fclose(f);
}

static run_t *run_helper(const char *name, const char *arg, bool send_segv, bool checked);

/* Run helper name (with arg, NULL: none) with the checker on; with
 * send_segv, send it SIGSEGV once it says "ready". */
static run_t *run_checked_with(const char *name, const char *arg, bool send_segv)
{
    return run_helper(name, arg, send_segv, true);
}

/* The same, checked or not. */
static run_t *run_helper(const char *name, const char *arg, bool send_segv, bool checked)
{
    char *dir = fab_test_tempdir();
    assert_non_null(dir);
    char err_path[512], json_path[512], json_env[600];
    snprintf(err_path, sizeof(err_path), "%s/stderr", dir);
    snprintf(json_path, sizeof(json_path), "%s/check.jsonl", dir);
    snprintf(json_env, sizeof(json_env), "FABMEM_CHECK_FILE=%s", json_path);
    const char *args[] = {err_path, arg, NULL};
    const char *env[] = {checked ? "FABMEM_CHECK=1" : "FABMEM_CHECK=0", json_env, NULL};
    fab_test_child_t child;
    assert_int_equal(fab_test_spawn(name, args, env, &child), 0);
    if (send_segv) {
        assert_int_equal(fab_test_expect_word(child.sock, "ready"), 0);
        assert_int_equal(kill(child.pid, SIGSEGV), 0);
    }
    run_t *r = calloc(1, sizeof(*r));
    assert_non_null(r);
    r->status = fab_test_reap(&child);
    read_file(err_path, r->err, sizeof(r->err));
    read_file(json_path, r->json, sizeof(r->json));
    fab_test_rmtree(dir);
    free(dir);
    return r;
}

static run_t *run_checked(const char *name)
{
    return run_checked_with(name, NULL, false);
}

static int count_of(const char *text, const char *needle)
{
    int n = 0;
    for (const char *p = strstr(text, needle); p; p = strstr(p + 1, needle))
        n++;
    return n;
}

#define HAS(text, needle)                                                             \
    do {                                                                              \
        if (!strstr((text), (needle)))                                                \
            fail_msg("missing \"%s\" in:\n%s", (needle), (text));                     \
    } while (0)

static void clean_program_reports_nothing(void **state)
{
    (void)state;
    run_t *r = run_checked("clean");
    assert_int_equal(r->status, 0);
    HAS(r->err, "fabmem-check: pid ");
    HAS(r->err, ": no findings");
    assert_int_equal(count_of(r->json, "\"finding\""), 0);
    HAS(r->json, "\"process\":true,\"findings\":0}");
    free(r);
}

static void leaks_are_reported_at_exit_with_their_stacks(void **state)
{
    (void)state;
    run_t *r = run_checked("leaks");
    assert_int_equal(r->status, 0);
    HAS(r->err, "never released: no cuMemRelease");
    HAS(r->err, "never unmapped: no cuMemUnmap");
    HAS(r->err, "never freed: no cuMemAddressFree");
    HAS(r->err, "never freed: no cuMemFree");
    HAS(r->err, "made by cuMemCreate at:");
    HAS(r->err, "handle types POSIX_FILE_DESCRIPTOR");
    HAS(r->err, "(1000 bytes)");
    HAS(r->err, ": 5 findings");
    HAS(r->json, "\"finding\":\"leaked-allocation\"");
    HAS(r->json, "\"finding\":\"leaked-import\"");
    HAS(r->json, "\"finding\":\"leaked-mapping\"");
    HAS(r->json, "\"finding\":\"leaked-reservation\"");
    HAS(r->json, "\"finding\":\"leaked-memory\"");
    HAS(r->json, "\"made_by\":\"cuMemImportFromShareableHandle\"");
    HAS(r->json, "\"size\":1000,\"device\":0");
    HAS(r->json, "cuMemAlloc_v2"); /* the stack names the entry point */
    HAS(r->json, "\"process\":true,\"findings\":5}");
    free(r);
}

static void handle_released_while_mapped_is_legal_mapping_leak_is_not(void **state)
{
    (void)state;
    run_t *r = run_checked("mapping_leak");
    assert_int_equal(r->status, 0);
    assert_int_equal(count_of(r->json, "\"finding\":\"leaked-allocation\""), 0);
    HAS(r->json, "\"finding\":\"leaked-mapping\"");
    HAS(r->json, "\"finding\":\"leaked-reservation\"");
    HAS(r->err, ": 2 findings");
    free(r);
}

static void address_free_while_mapped_is_reported_at_once(void **state)
{
    (void)state;
    run_t *r = run_checked("free_mapped");
    assert_int_equal(r->status, 0);
    HAS(r->err, "cuMemAddressFree of the reservation at 0x");
    HAS(r->err, "while mappings remain in it");
    HAS(r->json, "\"finding\":\"free-while-mapped\",");
    HAS(r->json, "\"call\":\"cuMemAddressFree\"");
    HAS(r->err, ": 1 finding\n");
    free(r);
}

static void release_after_last_release_names_who_released(void **state)
{
    (void)state;
    run_t *r = run_checked("double_release");
    assert_int_equal(r->status, 0);
    HAS(r->err, "after its last release");
    HAS(r->err, "released by cuMemRelease at:");
    HAS(r->json, "\"finding\":\"use-after-release\"");
    HAS(r->json, "\"released_by\":\"cuMemRelease\"");
    HAS(r->err, ": 1 finding\n");
    free(r);
}

static void double_free_is_reported(void **state)
{
    (void)state;
    run_t *r = run_checked("double_free");
    assert_int_equal(r->status, 0);
    HAS(r->err, ", freed already");
    HAS(r->json, "\"finding\":\"double-free\"");
    HAS(r->json, "\"released_by\":\"cuMemFree\"");
    HAS(r->err, ": 1 finding\n");
    free(r);
}

static void copy_into_unmapped_range_is_reported(void **state)
{
    (void)state;
    run_t *r = run_checked("copy_unmapped");
    assert_int_equal(r->status, 0);
    HAS(r->err, "a copy writes 64 bytes at 0x");
    HAS(r->err, "in an unmapped part of a reservation");
    HAS(r->json, "\"finding\":\"bad-range\"");
    HAS(r->json, "\"offset\":128");
    HAS(r->err, ": 1 finding\n");
    free(r);
}

static void a_kernel_store_into_an_unmapped_range_is_reported_as_a_write(void **state)
{
    (void)state;
    const char *vg = getenv("FABTEST_UNDER_VALGRIND");
    if (vg && *vg == '1')
        fab_test_skip("memcheck reports the store to unmapped memory this test makes on purpose");
    run_t *r = run_checked("kernel_store_unmapped");
    assert_int_equal(r->status, 0);
    HAS(r->err, "store_word writes 4 bytes at 0x");
    HAS(r->err, "in an unmapped part of a reservation");
    HAS(r->err, "CUDA_ERROR_ILLEGAL_ADDRESS");
    HAS(r->json, "\"finding\":\"bad-range\"");
    HAS(r->err, ": 1 finding\n");
    free(r);
}

static void a_kernel_b128_store_into_an_unmapped_range_is_reported_as_16_bytes(void **state)
{
    (void)state;
    const char *vg = getenv("FABTEST_UNDER_VALGRIND");
    if (vg && *vg == '1')
        fab_test_skip("memcheck reports the store to unmapped memory this test makes on purpose");
    run_t *r = run_checked("kernel_store_wide_unmapped");
    assert_int_equal(r->status, 0);
    HAS(r->err, "store_wide writes 16 bytes at 0x");
    HAS(r->err, "in an unmapped part of a reservation");
    HAS(r->err, ": 1 finding\n");
    free(r);
}

static void write_to_read_only_mapping_is_reported_and_fatal(void **state)
{
    (void)state;
    run_t *r = run_checked("write_read_only");
    assert_int_equal(r->status, 128 + SIGSEGV);
    HAS(r->err, "write to a read-only mapping at 0x");
    HAS(r->err, "offset 100 in the mapping");
    HAS(r->err, "access of the mapping: read-only");
    HAS(r->err, "CUDA_ERROR_ILLEGAL_ADDRESS");
    HAS(r->json, "\"finding\":\"write-read-only\"");
    HAS(r->json, "\"access\":\"read-only\"");
    HAS(r->json, "\"made_by\":\"cuMemMap\"");
    HAS(r->json, "\"process\":true,\"findings\":1}");
    free(r);
}

static void store_after_free_is_reported_and_fatal(void **state)
{
    (void)state;
    run_t *r = run_checked("use_after_free");
    assert_int_equal(r->status, 128 + SIGSEGV);
    HAS(r->err, "after the release of its cuMemAlloc memory");
    HAS(r->err, "offset 4100 in the cuMemAlloc memory");
    HAS(r->json, "\"finding\":\"use-after-release\"");
    HAS(r->json, "\"released_by\":\"cuMemFree\"");
    free(r);
}

/* A SIGSEGV that no fault raised ends the checked process as it ends the
 * same program unchecked (killed by the signal, 139; under a sanitizer,
 * whatever its handler does, which the checker hands it to), and is no
 * finding. */
static void expect_killed_by_a_sent_segv(const char *how, bool from_parent)
{
    run_t *plain = run_helper("sent_segv", how, from_parent, false);
    int want = plain->status;
    free(plain);
    assert_int_not_equal(want, 0);
    run_t *r = run_checked_with("sent_segv", how, from_parent);
    int got = r->status, findings = count_of(r->json, "\"finding\"");
    if (got != want) {
        static char err[sizeof(r->err)];
        memcpy(err, r->err, sizeof(err));
        free(r);
        fail_msg("a SIGSEGV sent with %s: exit status %d checked, %d unchecked:\n%s", how, got,
                 want, err);
    }
    free(r);
    assert_int_equal(findings, 0);
}

static void a_segv_sent_by_raise_kills_the_checked_process(void **state)
{
    (void)state;
    expect_killed_by_a_sent_segv("raise", false);
}

static void a_segv_sent_by_kill_kills_the_checked_process(void **state)
{
    (void)state;
    expect_killed_by_a_sent_segv("kill", false);
}

static void a_segv_sent_by_another_process_kills_the_checked_process(void **state)
{
    (void)state;
    expect_killed_by_a_sent_segv("wait", true);
}

static void pool_allocations_are_checked_too(void **state)
{
    (void)state;
    run_t *r = run_checked("pool");
    assert_int_equal(r->status, 0);
    HAS(r->err, "cuMemFreeAsync of 0x");
    HAS(r->err, ", freed already");
    HAS(r->err, "pool allocation at 0x");
    HAS(r->err, "(3000 bytes) never freed: no cuMemFreeAsync or cuMemFree");
    HAS(r->json, "\"finding\":\"double-free\"");
    HAS(r->json, "\"finding\":\"leaked-pool-allocation\"");
    HAS(r->json, "\"made_by\":\"cuMemAllocAsync\"");
    HAS(r->err, ": 2 findings\n");
    free(r);
}

#ifdef HAVE_DAEMON
static void import_of_released_memory_is_reported(void **state)
{
    (void)state;
    assert_non_null(fab_test_daemon_start(NULL, NULL));
    run_t *r = run_checked("import_released");
    assert_int_equal(r->status, 0);
    HAS(r->err, "of a FABRIC handle whose memory");
    HAS(r->err, "is already released");
    HAS(r->json, "\"finding\":\"import-released\"");
    HAS(r->json, "\"call\":\"cuMemImportFromShareableHandle\"");
    /* and the export that no import took */
    HAS(r->json, "\"finding\":\"export-never-imported\"");
    HAS(r->err, ": 2 findings\n");
    free(r);
}

static void export_never_imported_is_reported_with_its_allocation(void **state)
{
    (void)state;
    assert_non_null(fab_test_daemon_start(NULL, NULL));
    run_t *r = run_checked("export_never_imported");
    assert_int_equal(r->status, 0);
    HAS(r->err, "released with 1 exported FABRIC handle that no process imported");
    HAS(r->err, "exported 1 time as a FABRIC handle");
    HAS(r->err, "made by cuMemCreate at:");
    HAS(r->json, "\"finding\":\"export-never-imported\"");
    HAS(r->json, "\"fabric_exports\":1");
    HAS(r->json, "\"released_by\":\"cuMemRelease\"");
    HAS(r->err, ": 1 finding\n");
    free(r);
}
#endif

static const struct CMUnitTest tests[] = {
    cmocka_unit_test(clean_program_reports_nothing),
    cmocka_unit_test(leaks_are_reported_at_exit_with_their_stacks),
    cmocka_unit_test(handle_released_while_mapped_is_legal_mapping_leak_is_not),
    cmocka_unit_test(address_free_while_mapped_is_reported_at_once),
    cmocka_unit_test(release_after_last_release_names_who_released),
    cmocka_unit_test(double_free_is_reported),
    cmocka_unit_test(copy_into_unmapped_range_is_reported),
    cmocka_unit_test(a_kernel_store_into_an_unmapped_range_is_reported_as_a_write),
    cmocka_unit_test(a_kernel_b128_store_into_an_unmapped_range_is_reported_as_16_bytes),
    cmocka_unit_test(write_to_read_only_mapping_is_reported_and_fatal),
    cmocka_unit_test(store_after_free_is_reported_and_fatal),
    cmocka_unit_test(pool_allocations_are_checked_too),
    cmocka_unit_test(a_segv_sent_by_raise_kills_the_checked_process),
    cmocka_unit_test(a_segv_sent_by_kill_kills_the_checked_process),
    cmocka_unit_test(a_segv_sent_by_another_process_kills_the_checked_process),
#ifdef HAVE_DAEMON
    cmocka_unit_test_teardown(import_of_released_memory_is_reported, fab_test_teardown),
    cmocka_unit_test_teardown(export_never_imported_is_reported_with_its_allocation,
                              fab_test_teardown),
#endif
};

static const fab_test_helper_t helpers[] = {
    {"clean", helper_clean},
    {"leaks", helper_leaks},
    {"mapping_leak", helper_mapping_leak},
    {"free_mapped", helper_free_mapped},
    {"double_release", helper_double_release},
    {"double_free", helper_double_free},
    {"copy_unmapped", helper_copy_unmapped},
    {"kernel_store_unmapped", helper_kernel_store_unmapped},
    {"kernel_store_wide_unmapped", helper_kernel_store_wide_unmapped},
    {"write_read_only", helper_write_read_only},
    {"use_after_free", helper_use_after_free},
    {"pool", helper_pool},
    {"sent_segv", helper_sent_segv},
#ifdef HAVE_DAEMON
    {"import_released", helper_import_released},
    {"export_never_imported", helper_export_never_imported},
#endif
};

FAB_TEST_MAIN("cuda_check", tests, helpers)
