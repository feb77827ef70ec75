/* Stream-ordered memory pools against cuda.h only: pool properties and
 * attributes, allocation and free in stream order, pool memory seen by
 * copies and pointer attributes, default and current pools, and sharing a
 * POSIX_FILE_DESCRIPTOR pool and its pointers with another process (the fd
 * travels over the socket pair with SCM_RIGHTS, the export data as 64 plain
 * bytes; the helper is this binary re-run).
 *
 * A stream is held back with cuStreamWaitValue32 on a word of page-locked
 * host memory, released by writing that word from the host; nothing here
 * sleeps or measures time. Counts are asserted as relations that hold for
 * any page granularity (used >= asked, reserved >= used), so that the tests
 * also hold against NVIDIA's driver. */
#include "cuda_test.h"

#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/mman.h>
#include <unistd.h>

#define TWO_GPUS "[node a]\ngpus = 2\n"
#define MIB ((size_t)1 << 20)

static CUmemPoolProps pool_props(unsigned types, int dev)
{
    CUmemPoolProps p;
    memset(&p, 0, sizeof(p));
    p.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
    p.handleTypes = (CUmemAllocationHandleType)types;
    p.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    p.location.id = dev;
    p.maxSize = 64 * MIB;
    return p;
}

static cuuint64_t pool_attr(CUmemoryPool pool, CUmemPool_attribute attr)
{
    cuuint64_t v = 0;
    CU_OK(cuMemPoolGetAttribute(pool, attr, &v));
    return v;
}

static void fill(unsigned char *p, size_t n, unsigned char seed)
{
    for (size_t i = 0; i < n; i++)
        p[i] = (unsigned char)(seed + i * 7);
}

/* A word of page-locked host memory that a stream waits on. */
static uint32_t *gate_new(void)
{
    uint32_t *word = NULL;
    CU_OK(cuMemAllocHost((void **)&word, sizeof(*word)));
    *word = 0;
    return word;
}

static void gate_hold(uint32_t *word, CUstream s)
{
    CUdeviceptr d = 0;
    CU_OK(cuMemHostGetDevicePointer(&d, word, 0));
    CU_OK(cuStreamWaitValue32(s, d, 1, CU_STREAM_WAIT_VALUE_GEQ));
}

static void gate_open(uint32_t *word)
{
    __atomic_store_n(word, 1, __ATOMIC_SEQ_CST);
}

/* ---- support and properties ------------------------------------------------------ */

static void devices_report_pool_support(void **state)
{
    (void)state;
    cut_init(0);
    int v = 0;
    CU_OK(cuDeviceGetAttribute(&v, CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED, 0));
    assert_int_equal(v, 1);
    CU_OK(cuDeviceGetAttribute(&v, CU_DEVICE_ATTRIBUTE_MEMPOOL_SUPPORTED_HANDLE_TYPES, 0));
    assert_true(v & CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR);
    /* No daemon: no fabric, so no FABRIC pools either. */
    assert_false(v & CU_MEM_HANDLE_TYPE_FABRIC);
}

static void bad_pool_props_are_refused(void **state)
{
    (void)state;
    cut_init(0);
    CUmemoryPool pool;
    CUmemPoolProps p = pool_props(0, 0);
    CU_IS(cuMemPoolCreate(NULL, &p), CUDA_ERROR_INVALID_VALUE);
    CU_IS(cuMemPoolCreate(&pool, NULL), CUDA_ERROR_INVALID_VALUE);
    p.allocType = CU_MEM_ALLOCATION_TYPE_INVALID;
    CU_IS(cuMemPoolCreate(&pool, &p), CUDA_ERROR_INVALID_VALUE);
    int count = 0;
    CU_OK(cuDeviceGetCount(&count));
    p = pool_props(0, count);
    CU_IS(cuMemPoolCreate(&pool, &p), CUDA_ERROR_INVALID_VALUE);
    p = pool_props(0, 0);
    p.reserved[3] = 1;
    CU_IS(cuMemPoolCreate(&pool, &p), CUDA_ERROR_INVALID_VALUE);
    size_t free_b, total;
    CU_OK(cuMemGetInfo(&free_b, &total));
    p = pool_props(0, 0);
    p.maxSize = total + 1;
    CU_IS(cuMemPoolCreate(&pool, &p), CUDA_ERROR_INVALID_VALUE);
    /* FABRIC needs the fabric: without a daemon it is not supported. */
    p = pool_props(CU_MEM_HANDLE_TYPE_FABRIC, 0);
    CU_IS(cuMemPoolCreate(&pool, &p), CUDA_ERROR_NOT_SUPPORTED);
    /* and the good props still work after all that */
    p = pool_props(0, 0);
    CU_OK(cuMemPoolCreate(&pool, &p));
    CU_OK(cuMemPoolDestroy(pool));
}

/* ---- attributes and trim ----------------------------------------------------------- */

static void attributes_count_used_and_reserved_bytes_and_trim_releases(void **state)
{
    (void)state;
    cut_init(0);
    CUmemPoolProps p = pool_props(0, 0);
    CUmemoryPool pool;
    CU_OK(cuMemPoolCreate(&pool, &p));
    int reuse = 0;
    CU_OK(cuMemPoolGetAttribute(pool, CU_MEMPOOL_ATTR_REUSE_ALLOW_OPPORTUNISTIC, &reuse));
    assert_int_equal(reuse, 1);
    assert_int_equal(pool_attr(pool, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD), 0);
    assert_int_equal(pool_attr(pool, CU_MEMPOOL_ATTR_USED_MEM_CURRENT), 0);
    cuuint64_t keep_all = UINT64_MAX;
    CU_OK(cuMemPoolSetAttribute(pool, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, &keep_all));
    size_t free0, total;
    CU_OK(cuMemGetInfo(&free0, &total));

    CUstream s;
    CU_OK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
    CUdeviceptr a;
    CU_OK(cuMemAllocFromPoolAsync(&a, MIB, pool, s));
    CU_OK(cuMemsetD8Async(a, 7, MIB, s));
    CU_OK(cuStreamSynchronize(s));
    cuuint64_t used = pool_attr(pool, CU_MEMPOOL_ATTR_USED_MEM_CURRENT);
    cuuint64_t reserved = pool_attr(pool, CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT);
    assert_true(used >= MIB);
    assert_true(reserved >= used);
    assert_true(pool_attr(pool, CU_MEMPOOL_ATTR_USED_MEM_HIGH) >= used);
    size_t free1;
    CU_OK(cuMemGetInfo(&free1, &total));
    assert_true(free1 <= free0 - MIB); /* the device's memory pays for the pool */

    CU_OK(cuMemFreeAsync(a, s));
    CU_OK(cuStreamSynchronize(s));
    assert_int_equal(pool_attr(pool, CU_MEMPOOL_ATTR_USED_MEM_CURRENT), 0);
    /* The threshold keeps the freed bytes reserved ... */
    assert_int_equal(pool_attr(pool, CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT), reserved);
    /* ... until a trim gives them back, to the device's count too. */
    CU_OK(cuMemPoolTrimTo(pool, 0));
    assert_int_equal(pool_attr(pool, CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT), 0);
    CU_OK(cuMemGetInfo(&free1, &total));
    assert_int_equal(free1, free0);

    /* The high-water marks outlive the memory and reset to the current
     * value; only 0 may be written to them. */
    assert_true(pool_attr(pool, CU_MEMPOOL_ATTR_RESERVED_MEM_HIGH) >= reserved);
    cuuint64_t zero = 0, one = 1;
    CU_IS(cuMemPoolSetAttribute(pool, CU_MEMPOOL_ATTR_RESERVED_MEM_HIGH, &one),
          CUDA_ERROR_INVALID_VALUE);
    CU_OK(cuMemPoolSetAttribute(pool, CU_MEMPOOL_ATTR_RESERVED_MEM_HIGH, &zero));
    CU_OK(cuMemPoolSetAttribute(pool, CU_MEMPOOL_ATTR_USED_MEM_HIGH, &zero));
    assert_int_equal(pool_attr(pool, CU_MEMPOOL_ATTR_RESERVED_MEM_HIGH), 0);
    assert_int_equal(pool_attr(pool, CU_MEMPOOL_ATTR_USED_MEM_HIGH), 0);
    CU_IS(cuMemPoolSetAttribute(pool, CU_MEMPOOL_ATTR_USED_MEM_CURRENT, &zero),
          CUDA_ERROR_INVALID_VALUE);
    CU_OK(cuStreamDestroy(s));
    CU_OK(cuMemPoolDestroy(pool));
}

static void trim_keeps_at_least_what_it_is_asked_to(void **state)
{
    (void)state;
    cut_init(0);
    CUmemPoolProps p = pool_props(0, 0);
    CUmemoryPool pool;
    CU_OK(cuMemPoolCreate(&pool, &p));
    cuuint64_t keep_all = UINT64_MAX;
    CU_OK(cuMemPoolSetAttribute(pool, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, &keep_all));
    CUdeviceptr a, b, c;
    CU_OK(cuMemAllocFromPoolAsync(&a, MIB, pool, NULL));
    CU_OK(cuMemAllocFromPoolAsync(&b, MIB, pool, NULL));
    CU_OK(cuMemAllocFromPoolAsync(&c, MIB, pool, NULL)); /* stays: keeps b apart from a */
    CU_OK(cuMemFreeAsync(a, NULL));
    CU_OK(cuMemFreeAsync(b, NULL));
    CU_OK(cuStreamSynchronize(NULL));
    cuuint64_t reserved = pool_attr(pool, CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT);
    assert_true(reserved >= 3 * MIB);
    CU_OK(cuMemPoolTrimTo(pool, reserved - MIB));
    cuuint64_t after = pool_attr(pool, CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT);
    assert_true(after >= reserved - MIB);
    /* The live allocation's bytes are never released. */
    CU_OK(cuMemPoolTrimTo(pool, 0));
    assert_true(pool_attr(pool, CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT) >= MIB);
    CU_OK(cuMemFreeAsync(c, NULL));
    CU_OK(cuStreamSynchronize(NULL));
    CU_OK(cuMemPoolDestroy(pool));
}

static void release_threshold_zero_gives_memory_back_by_the_synchronize(void **state)
{
    (void)state;
    cut_init(0);
    CUmemPoolProps p = pool_props(0, 0);
    CUmemoryPool pool;
    CU_OK(cuMemPoolCreate(&pool, &p));
    CUdeviceptr a;
    CU_OK(cuMemAllocFromPoolAsync(&a, 3 * MIB, pool, NULL));
    assert_true(pool_attr(pool, CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT) >= 3 * MIB);
    CU_OK(cuMemFreeAsync(a, NULL));
    CU_OK(cuStreamSynchronize(NULL));
    assert_int_equal(pool_attr(pool, CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT), 0);
    CU_OK(cuMemPoolDestroy(pool));
}

/* ---- stream order ------------------------------------------------------------------ */

static void a_free_behind_a_held_stream_returns_nothing_until_reached(void **state)
{
    (void)state;
    cut_init(0);
    CUmemPoolProps p = pool_props(0, 0);
    CUmemoryPool pool;
    CU_OK(cuMemPoolCreate(&pool, &p));
    uint32_t *gate = gate_new();
    CUstream held, other;
    CU_OK(cuStreamCreate(&held, CU_STREAM_NON_BLOCKING));
    CU_OK(cuStreamCreate(&other, CU_STREAM_NON_BLOCKING));
    CUdeviceptr a;
    CU_OK(cuMemAllocFromPoolAsync(&a, MIB, pool, held));
    gate_hold(gate, held);
    CU_OK(cuMemFreeAsync(a, held));
    /* The free is queued behind the gate: the bytes are still in use, and an
     * allocation on another stream gets other bytes. */
    assert_int_equal(cuStreamQuery(held), CUDA_ERROR_NOT_READY);
    assert_true(pool_attr(pool, CU_MEMPOOL_ATTR_USED_MEM_CURRENT) >= MIB);
    CUdeviceptr b;
    CU_OK(cuMemAllocFromPoolAsync(&b, MIB, pool, other));
    assert_true(b + MIB <= a || a + MIB <= b);
    CU_OK(cuMemFreeAsync(b, other));
    CU_OK(cuStreamSynchronize(other));
    assert_true(pool_attr(pool, CU_MEMPOOL_ATTR_USED_MEM_CURRENT) >= MIB);
    gate_open(gate);
    CU_OK(cuStreamSynchronize(held));
    assert_int_equal(pool_attr(pool, CU_MEMPOOL_ATTR_USED_MEM_CURRENT), 0);
    CU_OK(cuStreamDestroy(held));
    CU_OK(cuStreamDestroy(other));
    CU_OK(cuMemFreeHost(gate));
    CU_OK(cuMemPoolDestroy(pool));
}

static void a_second_free_of_one_allocation_is_refused(void **state)
{
    (void)state;
    cut_init(0);
    CUdeviceptr a;
    CU_OK(cuMemAllocAsync(&a, 4096, NULL));
    CU_OK(cuMemFreeAsync(a, NULL));
    CU_IS(cuMemFreeAsync(a, NULL), CUDA_ERROR_INVALID_VALUE);
    CU_OK(cuStreamSynchronize(NULL));
    CU_IS(cuMemFreeAsync(a, NULL), CUDA_ERROR_INVALID_VALUE);
    CU_IS(cuMemAllocAsync(NULL, 4096, NULL), CUDA_ERROR_INVALID_VALUE);
    CU_IS(cuMemAllocAsync(&a, 0, NULL), CUDA_ERROR_INVALID_VALUE);
}

/* ---- pool memory to copies and attributes ------------------------------------------ */

static void copies_reach_pool_memory(void **state)
{
    (void)state;
    cut_init(0);
    CUstream s;
    CU_OK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
    CUdeviceptr a, b;
    CU_OK(cuMemAllocAsync(&a, 8192, s));
    CU_OK(cuMemAllocAsync(&b, 8192, s));
    unsigned char in[8192], out[8192];
    fill(in, sizeof(in), 5);
    CU_OK(cuMemcpyHtoDAsync(a, in, sizeof(in), s));
    CU_OK(cuMemcpyDtoDAsync(b, a, sizeof(in), s));
    CU_OK(cuMemcpyDtoHAsync(out, b, sizeof(out), s));
    CU_OK(cuStreamSynchronize(s));
    assert_memory_equal(in, out, sizeof(in));
    /* One byte past the allocation is not the allocation's. */
    static unsigned char big[8192 + 1];
    CU_IS(cuMemcpyDtoH(big, a, sizeof(big)), CUDA_ERROR_INVALID_VALUE);
    CU_OK(cuMemFreeAsync(a, s));
    CU_OK(cuMemFreeAsync(b, s));
    CU_OK(cuStreamSynchronize(s));
    CU_OK(cuStreamDestroy(s));
}

/* fill(unsigned *out, unsigned base) writes base + i at out[i], i the
 * thread's index in the grid; run as written by the PTX engine. */
static const char fill_ptx[] = ".version 8.0\n.target sm_80\n.address_size 64\n"
                               ".visible .entry fill(.param .u64 out, .param .u32 base)\n{\n"
                               "    .reg .b32 %r<6>;\n    .reg .b64 %rd<4>;\n"
                               "    ld.param.u64 %rd1, [out];\n"
                               "    ld.param.u32 %r1, [base];\n"
                               "    mov.u32 %r2, %ctaid.x;\n    mov.u32 %r3, %ntid.x;\n"
                               "    mov.u32 %r4, %tid.x;\n"
                               "    mad.lo.u32 %r5, %r2, %r3, %r4;\n"
                               "    mul.wide.u32 %rd2, %r5, 4;\n"
                               "    add.s64 %rd3, %rd1, %rd2;\n"
                               "    add.u32 %r5, %r5, %r1;\n"
                               "    st.global.u32 [%rd3], %r5;\n"
                               "    ret;\n}\n";

static void kernels_write_pool_memory_in_stream_order(void **state)
{
    (void)state;
    cut_init(0);
    CUmodule mod;
    CUfunction fill_fn;
    CU_OK(cuModuleLoadData(&mod, fill_ptx));
    CU_OK(cuModuleGetFunction(&fill_fn, mod, "fill"));
    CUstream s;
    CU_OK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
    CUdeviceptr out;
    CU_OK(cuMemAllocAsync(&out, 64 * sizeof(unsigned), s));
    unsigned base = 1000;
    void *params[] = {&out, &base};
    CU_OK(cuLaunchKernel(fill_fn, 1, 1, 1, 64, 1, 1, 0, s, params, NULL));
    unsigned got[64];
    CU_OK(cuMemcpyDtoHAsync(got, out, sizeof(got), s));
    CU_OK(cuMemFreeAsync(out, s));
    CU_OK(cuStreamSynchronize(s));
    for (unsigned i = 0; i < 64; i++)
        assert_int_equal(got[i], base + i);
    CU_OK(cuStreamDestroy(s));
    CU_OK(cuModuleUnload(mod));
}

static void pointer_attributes_name_the_pool(void **state)
{
    (void)state;
    cut_init(0);
    CUmemPoolProps p = pool_props(CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0);
    CUmemoryPool pool, got = NULL, def;
    CU_OK(cuMemPoolCreate(&pool, &p));
    CUdeviceptr a;
    CU_OK(cuMemAllocFromPoolAsync(&a, 10000, pool, NULL));
    CU_OK(cuPointerGetAttribute(&got, CU_POINTER_ATTRIBUTE_MEMPOOL_HANDLE, a + 100));
    assert_ptr_equal(got, pool);
    unsigned int type = 0;
    CU_OK(cuPointerGetAttribute(&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, a));
    assert_int_equal(type, CU_MEMORYTYPE_DEVICE);
    int ordinal = -1;
    CU_OK(cuPointerGetAttribute(&ordinal, CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL, a));
    assert_int_equal(ordinal, 0);
    unsigned long long types = 0;
    CU_OK(cuPointerGetAttribute(&types, CU_POINTER_ATTRIBUTE_ALLOWED_HANDLE_TYPES, a));
    assert_int_equal(types, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR);
    CUdeviceptr base = 0;
    size_t size = 0;
    CU_OK(cuMemGetAddressRange(&base, &size, a + 9999));
    assert_int_equal(base, a);
    assert_int_equal(size, 10000);
    /* The default pool's memory names the default pool. */
    CUdeviceptr d;
    CU_OK(cuMemAllocAsync(&d, 100, NULL));
    CU_OK(cuDeviceGetDefaultMemPool(&def, 0));
    CU_OK(cuPointerGetAttribute(&got, CU_POINTER_ATTRIBUTE_MEMPOOL_HANDLE, d));
    assert_ptr_equal(got, def);
    /* cuMemFree takes pool memory back at once. */
    CU_OK(cuMemFree(d));
    CU_OK(cuMemFree(a));
    CU_IS(cuPointerGetAttribute(&got, CU_POINTER_ATTRIBUTE_MEMPOOL_HANDLE, a),
          CUDA_ERROR_INVALID_VALUE);
    CU_OK(cuMemPoolDestroy(pool));
}

/* ---- default and current pools ----------------------------------------------------- */

static void the_default_pool_cannot_be_exported_or_destroyed(void **state)
{
    (void)state;
    cut_init(0);
    CUmemoryPool def, cur;
    CU_OK(cuDeviceGetDefaultMemPool(&def, 0));
    CU_OK(cuDeviceGetMemPool(&cur, 0));
    assert_ptr_equal(cur, def);
    int fd = -1;
    CU_IS(cuMemPoolExportToShareableHandle(&fd, def, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0),
          CUDA_ERROR_INVALID_VALUE);
    CU_IS(cuMemPoolDestroy(def), CUDA_ERROR_INVALID_VALUE);
    CUdeviceptr a;
    CU_OK(cuMemAllocAsync(&a, 4096, NULL));
    CUmemPoolPtrExportData data;
    CU_IS(cuMemPoolExportPointer(&data, a), CUDA_ERROR_INVALID_VALUE);
    CU_OK(cuMemFreeAsync(a, NULL));
    CU_OK(cuStreamSynchronize(NULL));
}

static void a_current_pool_serves_cuMemAllocAsync_until_destroyed(void **state)
{
    (void)state;
    cut_init(0);
    CUmemPoolProps p = pool_props(0, 0);
    CUmemoryPool pool, cur, def, got;
    CU_OK(cuMemPoolCreate(&pool, &p));
    CU_OK(cuDeviceSetMemPool(0, pool));
    CU_OK(cuDeviceGetMemPool(&cur, 0));
    assert_ptr_equal(cur, pool);
    CUdeviceptr a;
    CU_OK(cuMemAllocAsync(&a, 4096, NULL));
    CU_OK(cuPointerGetAttribute(&got, CU_POINTER_ATTRIBUTE_MEMPOOL_HANDLE, a));
    assert_ptr_equal(got, pool);
    /* Destroyed with an allocation live: the memory stays usable until
     * freed, and the device's current pool is its default again. */
    CU_OK(cuMemPoolDestroy(pool));
    CU_OK(cuDeviceGetMemPool(&cur, 0));
    CU_OK(cuDeviceGetDefaultMemPool(&def, 0));
    assert_ptr_equal(cur, def);
    unsigned char in[64], out[64];
    fill(in, sizeof(in), 9);
    CU_OK(cuMemcpyHtoD(a, in, sizeof(in)));
    CU_OK(cuMemcpyDtoH(out, a, sizeof(out)));
    assert_memory_equal(in, out, sizeof(in));
    CU_OK(cuMemFreeAsync(a, NULL));
    CU_OK(cuStreamSynchronize(NULL));
}

static void a_pool_of_another_device_cannot_be_current(void **state)
{
    (void)state;
    char *dir = use_config(TWO_GPUS);
    cut_init(0);
    CUmemPoolProps p = pool_props(0, 1);
    CUmemoryPool pool;
    CU_OK(cuMemPoolCreate(&pool, &p));
    CU_IS(cuDeviceSetMemPool(0, pool), CUDA_ERROR_INVALID_VALUE);
    CU_OK(cuDeviceSetMemPool(1, pool));
    CU_OK(cuMemPoolDestroy(pool));
    fab_test_rmtree(dir);
    free(dir);
}

static void cuMemAllocAsync_allocates_on_the_streams_device(void **state)
{
    (void)state;
    char *dir = use_config(TWO_GPUS);
    CUcontext ctx0 = cut_init(0), ctx1;
    CU_OK(cuDevicePrimaryCtxRetain(&ctx1, 1));
    CU_OK(cuCtxSetCurrent(ctx1));
    CUstream s1;
    CU_OK(cuStreamCreate(&s1, CU_STREAM_NON_BLOCKING));
    CU_OK(cuCtxSetCurrent(ctx0));
    CUdeviceptr a;
    CU_OK(cuMemAllocAsync(&a, 4096, s1));
    int ordinal = -1;
    CU_OK(cuPointerGetAttribute(&ordinal, CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL, a));
    assert_int_equal(ordinal, 1);
    CUmemoryPool got, def1;
    CU_OK(cuPointerGetAttribute(&got, CU_POINTER_ATTRIBUTE_MEMPOOL_HANDLE, a));
    CU_OK(cuDeviceGetDefaultMemPool(&def1, 1));
    assert_ptr_equal(got, def1);
    CU_OK(cuMemFreeAsync(a, s1));
    CU_OK(cuStreamSynchronize(s1));
    CU_OK(cuStreamDestroy(s1));
    CU_OK(cuDevicePrimaryCtxRelease(1));
    fab_test_rmtree(dir);
    free(dir);
}

/* ---- procaddress ------------------------------------------------------------------- */

static void pool_calls_resolve_at_11020(void **state)
{
    (void)state;
    cut_init(0);
    void *fn = NULL, *pt = NULL;
    CUdriverProcAddressQueryResult st;
    CU_OK(cuGetProcAddress("cuMemAllocAsync", &fn, 11010, 0, &st));
    assert_int_equal(st, CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT);
    assert_null(fn);
    static const char *const names[] = {
        "cuMemPoolCreate", "cuMemPoolDestroy", "cuMemPoolSetAttribute", "cuMemPoolGetAttribute",
        "cuMemPoolTrimTo", "cuMemPoolSetAccess", "cuMemPoolGetAccess",
        "cuDeviceGetDefaultMemPool", "cuDeviceGetMemPool", "cuDeviceSetMemPool",
        "cuMemAllocAsync", "cuMemAllocFromPoolAsync", "cuMemFreeAsync",
        "cuMemPoolExportToShareableHandle", "cuMemPoolImportFromShareableHandle",
        "cuMemPoolExportPointer", "cuMemPoolImportPointer"};
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
        fn = NULL;
        CU_OK(cuGetProcAddress(names[i], &fn, 11020, 0, &st));
        assert_int_equal(st, CU_GET_PROC_ADDRESS_SUCCESS);
        assert_non_null(fn);
    }
    /* The per-thread flag gives the _ptsz free, which frees on the calling
     * thread's default stream. */
    CU_OK(cuGetProcAddress("cuMemFreeAsync", &pt, 11020,
                           CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM, &st));
    assert_non_null(pt);
    CUresult (*free_pt)(CUdeviceptr, CUstream);
    memcpy(&free_pt, &pt, sizeof(pt));
    CUdeviceptr a;
    CU_OK(cuMemAllocAsync(&a, 4096, CU_STREAM_PER_THREAD));
    CU_OK(free_pt(a, NULL));
    CU_OK(cuStreamSynchronize(CU_STREAM_PER_THREAD));
}

/* ---- sharing between processes --------------------------------------------------------- */

#define SHARED_BYTES 65536

/* helper "importer": receive a pool's fd and a pointer's export data,
 * import both, check the access rule of an imported pool (resident device
 * only until cuMemPoolSetAccess), check the pattern, write a reply at 4096,
 * free the pointer and destroy the pool, say "done". */
static int helper_importer(int argc, char **argv, int sock)
{
    (void)argc;
    (void)argv;
    HELPER_CU(cuInit(0), 10);
    CUcontext ctx0, ctx1;
    HELPER_CU(cuDevicePrimaryCtxRetain(&ctx0, 0), 11);
    HELPER_CU(cuDevicePrimaryCtxRetain(&ctx1, 1), 11);
    HELPER_CU(cuCtxSetCurrent(ctx0), 12);
    if (fab_test_send_word(sock, "ready") != 0)
        return 13;
    int fd = fab_test_recv_fd(sock);
    CUmemPoolPtrExportData data;
    if (fd < 0 || fab_test_recv(sock, &data, sizeof(data)) != 0)
        return 14;
    CUmemoryPool pool;
    HELPER_CU(cuMemPoolImportFromShareableHandle(&pool, (void *)(uintptr_t)fd,
                                                 CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0),
              15);
    close(fd); /* the driver keeps its own */
    CUdeviceptr ptr;
    HELPER_CU(cuMemPoolImportPointer(&ptr, pool, &data), 16);
    CUmemAccess_flags flags = CU_MEM_ACCESS_FLAGS_PROT_NONE;
    CUmemLocation loc = {.type = CU_MEM_LOCATION_TYPE_DEVICE, .id = 0};
    HELPER_CU(cuMemPoolGetAccess(&flags, pool, &loc), 17);
    if (flags != CU_MEM_ACCESS_FLAGS_PROT_READWRITE)
        return 18;
    loc.id = 1;
    HELPER_CU(cuMemPoolGetAccess(&flags, pool, &loc), 19);
    if (flags != CU_MEM_ACCESS_FLAGS_PROT_NONE)
        return 20;
    unsigned char buf[SHARED_BYTES];
    HELPER_CU(cuCtxSetCurrent(ctx1), 21);
    if (cuMemcpyDtoH(buf, ptr, sizeof(buf)) == CUDA_SUCCESS)
        return 22; /* device 1 was given no access */
    CUmemAccessDesc d = cut_access(1, CU_MEM_ACCESS_FLAGS_PROT_READWRITE);
    HELPER_CU(cuMemPoolSetAccess(pool, &d, 1), 23);
    HELPER_CU(cuMemcpyDtoH(buf, ptr, sizeof(buf)), 24);
    HELPER_CU(cuCtxSetCurrent(ctx0), 25);
    for (size_t i = 0; i < sizeof(buf); i++) {
        if (buf[i] != (unsigned char)(3 + i * 7))
            return 26;
    }
    static const char reply[] = "reply from the importer";
    HELPER_CU(cuMemcpyHtoD(ptr + 4096, reply, sizeof(reply)), 27);
    HELPER_CU(cuMemFree(ptr), 28);
    HELPER_CU(cuMemPoolDestroy(pool), 29);
    return fab_test_send_word(sock, "done") == 0 ? 0 : 30;
}

/* helper "wrong_pool": receive two pools' fds and a pointer of the first;
 * send the results of importing it into the second, then into the first,
 * then into the first again. */
static int helper_wrong_pool(int argc, char **argv, int sock)
{
    (void)argc;
    (void)argv;
    CUT_HELPER_READY(sock);
    int fd_a = fab_test_recv_fd(sock);
    int fd_b = fab_test_recv_fd(sock);
    CUmemPoolPtrExportData data;
    if (fd_a < 0 || fd_b < 0 || fab_test_recv(sock, &data, sizeof(data)) != 0)
        return 14;
    CUmemoryPool a, b;
    HELPER_CU(cuMemPoolImportFromShareableHandle(&a, (void *)(uintptr_t)fd_a,
                                                 CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0),
              15);
    HELPER_CU(cuMemPoolImportFromShareableHandle(&b, (void *)(uintptr_t)fd_b,
                                                 CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0),
              16);
    close(fd_a);
    close(fd_b);
    CUdeviceptr ptr = 0;
    const char *in_b = "?", *in_a = "?";
    cuGetErrorName(cuMemPoolImportPointer(&ptr, b, &data), &in_b);
    CUresult r = cuMemPoolImportPointer(&ptr, a, &data);
    cuGetErrorName(r, &in_a);
    CUdeviceptr twice = 0;
    const char *again = "?";
    cuGetErrorName(cuMemPoolImportPointer(&twice, a, &data), &again);
    if (r == CUDA_SUCCESS)
        HELPER_CU(cuMemFree(ptr), 17);
    HELPER_CU(cuMemPoolDestroy(a), 18);
    HELPER_CU(cuMemPoolDestroy(b), 19);
    char word[128];
    snprintf(word, sizeof(word), "b=%s a=%s again=%s", in_b, in_a, again);
    return fab_test_send_word(sock, word) == 0 ? 0 : 20;
}

static void a_posix_fd_pool_and_its_pointer_are_shared_with_a_process(void **state)
{
    (void)state;
    char *dir = use_config(TWO_GPUS);
    cut_init(0);
    CUmemPoolProps p = pool_props(CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0);
    CUmemoryPool pool;
    CU_OK(cuMemPoolCreate(&pool, &p));
    CUdeviceptr ptr;
    CU_OK(cuMemAllocFromPoolAsync(&ptr, SHARED_BYTES, pool, NULL));
    unsigned char buf[SHARED_BYTES];
    fill(buf, sizeof(buf), 3);
    CU_OK(cuMemcpyHtoD(ptr, buf, sizeof(buf)));
    int fd = -1;
    CU_OK(cuMemPoolExportToShareableHandle(&fd, pool, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0));
    CUmemPoolPtrExportData data;
    CU_OK(cuMemPoolExportPointer(&data, ptr));
    fab_test_child_t child;
    assert_int_equal(fab_test_spawn("importer", NULL, NULL, &child), 0);
    assert_int_equal(fab_test_expect_word(child.sock, "ready"), 0);
    assert_int_equal(fab_test_send_fd(child.sock, fd), 0);
    close(fd);
    assert_int_equal(fab_test_send(child.sock, &data, sizeof(data)), 0);
    assert_int_equal(fab_test_expect_word(child.sock, "done"), 0);
    assert_int_equal(fab_test_reap(&child), 0);
    char reply[32] = {0};
    CU_OK(cuMemcpyDtoH(reply, ptr + 4096, 24));
    assert_string_equal(reply, "reply from the importer");
    CU_OK(cuMemFreeAsync(ptr, NULL));
    CU_OK(cuStreamSynchronize(NULL));
    CU_OK(cuMemPoolDestroy(pool));
    fab_test_rmtree(dir);
    free(dir);
}

static void a_pointer_imported_into_the_wrong_pool_is_refused(void **state)
{
    (void)state;
    cut_init(0);
    CUmemPoolProps p = pool_props(CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0);
    CUmemoryPool a, b;
    CU_OK(cuMemPoolCreate(&a, &p));
    CU_OK(cuMemPoolCreate(&b, &p));
    CUdeviceptr ptr, other;
    CU_OK(cuMemAllocFromPoolAsync(&ptr, 4096, a, NULL));
    CU_OK(cuMemAllocFromPoolAsync(&other, 4096, b, NULL)); /* same offset in b */
    int fd_a = -1, fd_b = -1;
    CU_OK(cuMemPoolExportToShareableHandle(&fd_a, a, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0));
    CU_OK(cuMemPoolExportToShareableHandle(&fd_b, b, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0));
    CUmemPoolPtrExportData data;
    CU_OK(cuMemPoolExportPointer(&data, ptr));
    fab_test_child_t child;
    assert_int_equal(fab_test_spawn("wrong_pool", NULL, NULL, &child), 0);
    assert_int_equal(fab_test_expect_word(child.sock, "ready"), 0);
    assert_int_equal(fab_test_send_fd(child.sock, fd_a), 0);
    assert_int_equal(fab_test_send_fd(child.sock, fd_b), 0);
    close(fd_a);
    close(fd_b);
    assert_int_equal(fab_test_send(child.sock, &data, sizeof(data)), 0);
    /* Into the wrong pool: refused; into its own: imported; once more while
     * imported: refused. */
    assert_int_equal(fab_test_expect_word(child.sock, "b=CUDA_ERROR_INVALID_VALUE a=CUDA_SUCCESS "
                                                      "again=CUDA_ERROR_INVALID_VALUE"),
                     0);
    assert_int_equal(fab_test_reap(&child), 0);
    CU_OK(cuMemFree(ptr));
    CU_OK(cuMemFree(other));
    CU_OK(cuMemPoolDestroy(a));
    CU_OK(cuMemPoolDestroy(b));
}

static void an_exported_pool_fd_is_size_sealed(void **state)
{
    (void)state;
    cut_init(0);
    CUmemPoolProps p = pool_props(CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0);
    CUmemoryPool pool;
    CU_OK(cuMemPoolCreate(&pool, &p));
    int fd = -1;
    CU_OK(cuMemPoolExportToShareableHandle(&fd, pool, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0));
    int seals = fcntl(fd, F_GET_SEALS);
    assert_true(seals >= 0);
    assert_int_equal(seals & (F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL),
                     F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL);
    assert_int_not_equal(ftruncate(fd, 4096), 0);
    close(fd);
    /* Bad handles and flags are refused, and no pool comes of them. */
    CUmemoryPool imported;
    CU_IS(cuMemPoolExportToShareableHandle(&fd, pool, CU_MEM_HANDLE_TYPE_FABRIC, 0),
          CUDA_ERROR_INVALID_VALUE);
    CU_IS(cuMemPoolExportToShareableHandle(&fd, pool, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 1),
          CUDA_ERROR_INVALID_VALUE);
    CU_IS(cuMemPoolImportFromShareableHandle(&imported, (void *)(uintptr_t)-1,
                                             CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0),
          CUDA_ERROR_INVALID_VALUE);
    /* Memory anyone could resize under the mapping is no pool's arena. */
    int loose = memfd_create("not-a-pool", MFD_CLOEXEC);
    assert_true(loose >= 0);
    assert_int_equal(ftruncate(loose, 1 << 20), 0);
    CU_IS(cuMemPoolImportFromShareableHandle(&imported, (void *)(uintptr_t)loose,
                                             CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0),
          CUDA_ERROR_INVALID_VALUE);
    close(loose);
    CU_OK(cuMemPoolDestroy(pool));
}

static const struct CMUnitTest tests[] = {
    cmocka_unit_test(devices_report_pool_support),
    cmocka_unit_test(bad_pool_props_are_refused),
    cmocka_unit_test(attributes_count_used_and_reserved_bytes_and_trim_releases),
    cmocka_unit_test(trim_keeps_at_least_what_it_is_asked_to),
    cmocka_unit_test(release_threshold_zero_gives_memory_back_by_the_synchronize),
    cmocka_unit_test(a_free_behind_a_held_stream_returns_nothing_until_reached),
    cmocka_unit_test(a_second_free_of_one_allocation_is_refused),
    cmocka_unit_test(copies_reach_pool_memory),
    cmocka_unit_test(kernels_write_pool_memory_in_stream_order),
    cmocka_unit_test(pointer_attributes_name_the_pool),
    cmocka_unit_test(the_default_pool_cannot_be_exported_or_destroyed),
    cmocka_unit_test(a_current_pool_serves_cuMemAllocAsync_until_destroyed),
    cmocka_unit_test(a_pool_of_another_device_cannot_be_current),
    cmocka_unit_test(cuMemAllocAsync_allocates_on_the_streams_device),
    cmocka_unit_test(pool_calls_resolve_at_11020),
    cmocka_unit_test(a_posix_fd_pool_and_its_pointer_are_shared_with_a_process),
    cmocka_unit_test(a_pointer_imported_into_the_wrong_pool_is_refused),
    cmocka_unit_test(an_exported_pool_fd_is_size_sealed),
};

static const fab_test_helper_t helpers[] = {
    {"importer", helper_importer},
    {"wrong_pool", helper_wrong_pool},
};

FAB_TEST_MAIN("cuda", tests, helpers)
