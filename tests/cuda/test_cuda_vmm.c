/* The driver API in one process, written against cuda.h only: devices and
 * their attributes, contexts, streams, the VMM round trip (create, reserve,
 * map, set access, copy, unmap, release, free), copies and memsets, retained
 * handles, pointer attributes, error names, cuGetProcAddress, and many threads
 * at once. */
#include "cuda_test.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdlib.h>

static void init_reports_devices_and_version(void **state)
{
    (void)state;
    int version = 0;
    CU_OK(cuDriverGetVersion(&version));
    assert_true(version >= 12000);
    CU_OK(cuInit(0));
    int count = 0;
    CU_OK(cuDeviceGetCount(&count));
    assert_true(count >= 1);
    CUdevice dev;
    CU_OK(cuDeviceGet(&dev, 0));
    CU_IS(cuDeviceGet(&dev, count), CUDA_ERROR_INVALID_DEVICE);
    char name[256];
    CU_OK(cuDeviceGetName(name, sizeof(name), dev));
    assert_true(strlen(name) > 0);
    size_t total = 0;
    CU_OK(cuDeviceTotalMem(&total, dev));
    assert_true(total >= (1ull << 30));
    CUuuid a, b;
    CU_OK(cuDeviceGetUuid(&a, 0));
    if (count > 1) {
        CU_OK(cuDeviceGetUuid(&b, 1));
        assert_memory_not_equal(a.bytes, b.bytes, 16);
    }
}

/* The version is the config's ([driver] version), and cuGetProcAddress refuses
 * versions above it, as CUDA documents. */
static void driver_version_comes_from_the_config(void **state)
{
    (void)state;
    char *dir = use_config("[driver]\nversion = 12080\n");
    CU_OK(cuInit(0));
    int version = 0;
    CU_OK(cuDriverGetVersion(&version));
    assert_int_equal(version, 12080);
    void *fn = NULL;
    CUdriverProcAddressQueryResult status;
    CU_IS(cuGetProcAddress("cuMemCreate", &fn, 13000, 0, &status), CUDA_ERROR_INVALID_VALUE);
    CU_OK(cuGetProcAddress("cuMemCreate", &fn, 12080, 0, &status));
    assert_non_null(fn);
    fab_test_rmtree(dir);
    free(dir);
}

/* With a granularity above 2 MiB, the base cuMemAddressReserve picks by
 * default must still be one cuMemMap accepts; an explicit alignment, larger
 * or smaller than the granularity, is honoured and still mappable. */
static void reserve_aligns_to_the_configured_granularity(void **state)
{
    (void)state;
    char *dir = use_config("[node big]\ngpus = 2\ngranularity = 64M\n");
    cut_init(0);
    size_t g = cut_granularity(0);
    assert_int_equal(g, 64u << 20);
    CUmemAllocationProp prop = cut_prop(CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0);
    CUmemGenericAllocationHandle h;
    CU_OK(cuMemCreate(&h, g, &prop, 0));

    /* Three at once: a base 64 MiB-aligned by luck (1 in 32) cannot make
     * all three so. */
    CUdeviceptr ptrs[3];
    CUmemAccessDesc d = cut_access(0, CU_MEM_ACCESS_FLAGS_PROT_READWRITE);
    for (int i = 0; i < 3; i++) {
        CU_OK(cuMemAddressReserve(&ptrs[i], g, 0, 0, 0));
        assert_int_equal(ptrs[i] % g, 0);
        CU_OK(cuMemMap(ptrs[i], g, 0, h, 0));
        CU_OK(cuMemSetAccess(ptrs[i], g, &d, 1));
    }
    CU_OK(cuMemsetD8(ptrs[0], 0x5c, g));
    unsigned char head[4096], tail[4096], want[4096];
    memset(want, 0x5c, sizeof(want));
    CU_OK(cuMemcpyDtoH(head, ptrs[2], sizeof(head)));
    CU_OK(cuMemcpyDtoH(tail, ptrs[2] + g - sizeof(tail), sizeof(tail)));
    assert_memory_equal(head, want, sizeof(want));
    assert_memory_equal(tail, want, sizeof(want));
    for (int i = 0; i < 3; i++)
        cut_unmap_free(ptrs[i], g);

    CUdeviceptr ptr = 0;
    const size_t big = 4 * g;
    CU_OK(cuMemAddressReserve(&ptr, g, big, 0, 0));
    assert_int_equal(ptr % big, 0);
    CU_OK(cuMemAddressFree(ptr, g));

    /* Smaller than the granularity: a multiple of it, and mappable. */
    CU_OK(cuMemAddressReserve(&ptr, g, 2u << 20, 0, 0));
    assert_int_equal(ptr % (2u << 20), 0);
    CU_OK(cuMemMap(ptr, g, 0, h, 0));
    cut_unmap_free(ptr, g);
    CU_OK(cuMemRelease(h));
    fab_test_rmtree(dir);
    free(dir);
}

static void calls_before_init_are_refused(void **state)
{
    (void)state;
    int count;
    CU_IS(cuDeviceGetCount(&count), CUDA_ERROR_NOT_INITIALIZED);
    CUmemGenericAllocationHandle h;
    CUmemAllocationProp prop = cut_prop(0, 0);
    CU_IS(cuMemCreate(&h, 2u << 20, &prop, 0), CUDA_ERROR_NOT_INITIALIZED);
    CU_IS(cuInit(1), CUDA_ERROR_INVALID_VALUE);
}

static void attributes_nccl_queries_answer(void **state)
{
    (void)state;
    CU_OK(cuInit(0));
    int v = -1;
    CU_OK(cuDeviceGetAttribute(&v, CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED, 0));
    assert_int_equal(v, 1);
    CU_OK(cuDeviceGetAttribute(&v, CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR_SUPPORTED, 0));
    assert_int_equal(v, 1);
    /* HANDLE_TYPE_FABRIC_SUPPORTED needs the daemon: test_cuda_fabric.c. */
    int major = 0, minor = -1, sms = 0;
    CU_OK(cuDeviceGetAttribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, 0));
    CU_OK(cuDeviceGetAttribute(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, 0));
    CU_OK(cuDeviceGetAttribute(&sms, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, 0));
    assert_true(major >= 7 && minor >= 0 && sms > 0);
    CU_OK(cuDeviceGetAttribute(&v, CU_DEVICE_ATTRIBUTE_WARP_SIZE, 0));
    assert_int_equal(v, 32);
    CU_OK(cuDeviceGetAttribute(&v, CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING, 0));
    assert_int_equal(v, 1);
    /* NIXL and NCCL 2.18-2.23 give up on VMM memory where this is 0. */
    CU_OK(cuDeviceGetAttribute(&v, CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_WITH_CUDA_VMM_SUPPORTED, 0));
    assert_int_equal(v, 1);
    CU_IS(cuDeviceGetAttribute(&v, (CUdevice_attribute)100000, 0), CUDA_ERROR_INVALID_VALUE);
    CU_IS(cuDeviceGetAttribute(&v, CU_DEVICE_ATTRIBUTE_WARP_SIZE, 99), CUDA_ERROR_INVALID_DEVICE);
    int peer = -1;
    CU_OK(cuDeviceCanAccessPeer(&peer, 0, 1));
    assert_int_equal(peer, 1);
}

static void contexts_create_destroy_and_current(void **state)
{
    (void)state;
    CU_OK(cuInit(0));
    CUcontext ctx = NULL, cur = NULL;
    CU_OK(cuCtxCreate(&ctx, NULL, 0, 1));
    CU_OK(cuCtxGetCurrent(&cur));
    assert_ptr_equal(cur, ctx);
    CUdevice dev = -1;
    CU_OK(cuCtxGetDevice(&dev));
    assert_int_equal(dev, 1);
    CU_OK(cuCtxSynchronize());
    CU_OK(cuCtxDestroy(ctx));
    CU_IS(cuCtxDestroy(ctx), CUDA_ERROR_INVALID_CONTEXT);
    CU_IS(cuCtxSetCurrent(ctx), CUDA_ERROR_INVALID_CONTEXT);
    CU_IS(cuCtxGetDevice(&dev), CUDA_ERROR_INVALID_CONTEXT);

    CUcontext p1, p2;
    CU_OK(cuDevicePrimaryCtxRetain(&p1, 0));
    CU_OK(cuDevicePrimaryCtxRetain(&p2, 0));
    assert_ptr_equal(p1, p2);
    unsigned flags;
    int active;
    CU_OK(cuDevicePrimaryCtxGetState(0, &flags, &active));
    assert_int_equal(active, 1);
    CU_OK(cuDevicePrimaryCtxRelease(0));
    CU_OK(cuDevicePrimaryCtxRelease(0));
    CU_IS(cuDevicePrimaryCtxRelease(0), CUDA_ERROR_INVALID_CONTEXT);
}

static void idle_streams_synchronise_at_once(void **state)
{
    (void)state;
    cut_init(0);
    CUstream s;
    CU_OK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
    CU_OK(cuStreamSynchronize(s));
    CU_OK(cuStreamSynchronize(NULL));
    CU_OK(cuStreamSynchronize(CU_STREAM_LEGACY));
    CU_OK(cuStreamDestroy(s));
    CU_IS(cuStreamDestroy(s), CUDA_ERROR_INVALID_HANDLE);
}

static void vmm_round_trip(void **state)
{
    (void)state;
    cut_init(0);
    size_t g = cut_granularity(0);
    assert_int_equal(g, 2u << 20);
    size_t size = 2 * g;
    CUmemAllocationProp prop = cut_prop(CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0);
    CUmemGenericAllocationHandle h;
    CU_OK(cuMemCreate(&h, size, &prop, 0));
    CUdeviceptr ptr;
    CU_OK(cuMemAddressReserve(&ptr, size, 0, 0, 0));
    assert_int_equal(ptr % g, 0);
    CU_OK(cuMemMap(ptr, size, 0, h, 0));
    CUmemAccessDesc d = cut_access(0, CU_MEM_ACCESS_FLAGS_PROT_READWRITE);
    CU_OK(cuMemSetAccess(ptr, size, &d, 1));
    unsigned long long flags = 0;
    CU_OK(cuMemGetAccess(&flags, &d.location, ptr + g));
    assert_int_equal(flags, CU_MEM_ACCESS_FLAGS_PROT_READWRITE);

    unsigned char *host = malloc(size), *back = malloc(size);
    for (size_t i = 0; i < size; i++)
        host[i] = (unsigned char)(i * 13 + 1);
    CU_OK(cuMemcpyHtoD(ptr, host, size));
    memset(back, 0, size);
    CU_OK(cuMemcpyDtoH(back, ptr, size));
    assert_memory_equal(host, back, size);
    /* Device memory is host memory: the address is usable directly. */
    assert_int_equal(((unsigned char *)(uintptr_t)ptr)[5], host[5]);

    CU_OK(cuMemsetD8(ptr, 0xab, 100));
    CU_OK(cuMemsetD32(ptr + 128, 0x01020304u, 4));
    CU_OK(cuMemcpyDtoD(ptr + g, ptr, 256));
    CU_OK(cuMemcpyDtoH(back, ptr + g, 256));
    assert_int_equal(back[99], 0xab);
    assert_int_equal(back[100], host[100]);
    uint32_t word;
    memcpy(&word, back + 132, 4);
    assert_int_equal(word, 0x01020304u);

    CUstream s;
    CU_OK(cuStreamCreate(&s, 0));
    CU_OK(cuMemcpyHtoDAsync(ptr, host, 64, s));
    CU_OK(cuMemcpyDtoHAsync(back, ptr, 64, s));
    CU_OK(cuMemcpyDtoDAsync(ptr + 64, ptr, 64, s));
    CU_OK(cuMemsetD8Async(ptr + 4096, 7, 16, s));
    CU_OK(cuMemsetD32Async(ptr + 8192, 9, 16, s));
    CU_OK(cuMemcpyAsync(ptr + 200, (CUdeviceptr)(uintptr_t)host, 8, s));
    CU_OK(cuMemcpy((CUdeviceptr)(uintptr_t)back, ptr, 64));
    CU_OK(cuStreamSynchronize(s));
    assert_memory_equal(back, host, 64);
    CU_OK(cuStreamDestroy(s));

    /* NCCL's free path: the mapping's extent from any address in it. */
    CUdeviceptr base = 0;
    size_t extent = 0;
    CU_OK(cuMemGetAddressRange(&base, &extent, ptr + 12345));
    assert_true(base == ptr);
    assert_int_equal(extent, size);
    size_t free_bytes = 0, total_bytes = 0;
    CU_OK(cuMemGetInfo(&free_bytes, &total_bytes));
    assert_true(free_bytes + size <= total_bytes);

    CU_OK(cuMemUnmap(ptr, size));
    CU_IS(cuMemGetAddressRange(&base, &extent, ptr), CUDA_ERROR_NOT_FOUND);
    CU_OK(cuMemRelease(h));
    CU_OK(cuMemAddressFree(ptr, size));
    free(host);
    free(back);
}

static void release_while_mapped_keeps_memory(void **state)
{
    (void)state;
    cut_init(0);
    size_t g = cut_granularity(0);
    CUmemAllocationProp prop = cut_prop(0, 0);
    CUmemGenericAllocationHandle h;
    CU_OK(cuMemCreate(&h, g, &prop, 0));
    CUdeviceptr ptr = cut_map_rw(h, g);
    CU_OK(cuMemRelease(h));
    /* A released handle names nothing ... */
    CU_IS(cuMemRelease(h), CUDA_ERROR_INVALID_VALUE);
    /* ... but the mapping lives on, and retaining by address revives it. */
    CU_OK(cuMemsetD8(ptr, 0x5a, g));
    CUmemGenericAllocationHandle again;
    CU_OK(cuMemRetainAllocationHandle(&again, (void *)(uintptr_t)(ptr + 100)));
    assert_true(again == h);
    CUmemAllocationProp got;
    CU_OK(cuMemGetAllocationPropertiesFromHandle(&got, again));
    assert_int_equal(got.location.id, 0);
    assert_int_equal(got.type, CU_MEM_ALLOCATION_TYPE_PINNED);
    CU_OK(cuMemRelease(again));
    cut_unmap_free(ptr, g);
}

static void one_allocation_mapped_twice(void **state)
{
    (void)state;
    cut_init(0);
    size_t g = cut_granularity(0);
    CUmemAllocationProp prop = cut_prop(0, 0);
    CUmemGenericAllocationHandle h;
    CU_OK(cuMemCreate(&h, g, &prop, 0));
    CUdeviceptr a = cut_map_rw(h, g), b = cut_map_rw(h, g);
    assert_true(a != b);
    CU_OK(cuMemsetD32(a, 0xdeadbeefu, 1));
    uint32_t v = 0;
    CU_OK(cuMemcpyDtoH(&v, b, 4));
    assert_int_equal(v, 0xdeadbeefu);
    CU_OK(cuMemRelease(h));
    cut_unmap_free(a, g);
    CU_OK(cuMemsetD32(b, 1, 1)); /* still mapped once */
    cut_unmap_free(b, g);
}

static void several_mappings_in_one_reservation(void **state)
{
    (void)state;
    cut_init(0);
    size_t g = cut_granularity(0);
    CUmemAllocationProp prop = cut_prop(0, 0);
    CUmemGenericAllocationHandle h1, h2;
    CU_OK(cuMemCreate(&h1, g, &prop, 0));
    CU_OK(cuMemCreate(&h2, g, &prop, 0));
    CUdeviceptr ptr;
    CU_OK(cuMemAddressReserve(&ptr, 4 * g, 0, 0, 0));
    CU_OK(cuMemMap(ptr, g, 0, h1, 0));
    CU_OK(cuMemMap(ptr + g, g, 0, h2, 0));
    /* NCCL's pattern: one cuMemSetAccess over all the mapped chunks. */
    CUmemAccessDesc d = cut_access(0, CU_MEM_ACCESS_FLAGS_PROT_READWRITE);
    CU_OK(cuMemSetAccess(ptr, 2 * g, &d, 1));
    CU_OK(cuMemsetD8(ptr + g - 8, 3, 16)); /* a copy across two allocations */
    /* Read-only on the second half of the first mapping: a split. */
    CUmemAccessDesc ro = cut_access(0, CU_MEM_ACCESS_FLAGS_PROT_READ);
    CU_OK(cuMemSetAccess(ptr, g, &ro, 1));
    CU_IS(cuMemsetD8(ptr, 1, 1), CUDA_ERROR_ILLEGAL_ADDRESS);
    unsigned char byte = 0;
    CU_OK(cuMemcpyDtoH(&byte, ptr + g - 1, 1));
    assert_int_equal(byte, 3);
    size_t msize = 0;
    CU_OK(cuPointerGetAttribute(&msize, CU_POINTER_ATTRIBUTE_MAPPING_SIZE, ptr + g + 5));
    assert_int_equal(msize, g);
    CU_OK(cuMemUnmap(ptr, 2 * g)); /* two whole mappings at once */
    CU_OK(cuMemRelease(h1));
    CU_OK(cuMemRelease(h2));
    CU_OK(cuMemAddressFree(ptr, 4 * g));
}

static void pointer_attributes_describe_mapping(void **state)
{
    (void)state;
    cut_init(0);
    size_t g = cut_granularity(0);
    unsigned types = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
    CUmemAllocationProp prop = cut_prop(types, 0);
    CUmemGenericAllocationHandle h;
    CU_OK(cuMemCreate(&h, g, &prop, 0));
    CUdeviceptr ptr = cut_map_rw(h, g);
    unsigned long long allowed = 0;
    CU_OK(cuPointerGetAttribute(&allowed, CU_POINTER_ATTRIBUTE_ALLOWED_HANDLE_TYPES, ptr + 64));
    assert_int_equal(allowed, types);
    int ordinal = -1;
    CU_OK(cuPointerGetAttribute(&ordinal, CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL, ptr));
    assert_int_equal(ordinal, 0);
    unsigned int mtype = 0;
    CU_OK(cuPointerGetAttribute(&mtype, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, ptr));
    assert_int_equal(mtype, CU_MEMORYTYPE_DEVICE);
    CUdeviceptr start = 0;
    CU_OK(cuPointerGetAttribute(&start, CU_POINTER_ATTRIBUTE_RANGE_START_ADDR, ptr + 10));
    assert_true(start == ptr);
    int local = 0;
    CU_IS(cuPointerGetAttribute(&allowed, CU_POINTER_ATTRIBUTE_ALLOWED_HANDLE_TYPES,
                                (CUdeviceptr)(uintptr_t)&local),
          CUDA_ERROR_INVALID_VALUE);
    CU_OK(cuMemRelease(h));
    cut_unmap_free(ptr, g);
}

static void error_names_and_strings(void **state)
{
    (void)state;
    const char *s = NULL;
    CU_OK(cuGetErrorName(CUDA_ERROR_INVALID_HANDLE, &s));
    assert_string_equal(s, "CUDA_ERROR_INVALID_HANDLE");
    CU_OK(cuGetErrorString(CUDA_ERROR_INVALID_VALUE, &s));
    assert_string_equal(s, "invalid argument");
    CU_OK(cuGetErrorString(CUDA_ERROR_INVALID_HANDLE, &s));
    assert_string_equal(s, "invalid resource handle");
    CU_OK(cuGetErrorString(CUDA_ERROR_ILLEGAL_STATE, &s));
    assert_string_equal(s, "the operation cannot be performed in the present state");
    CU_OK(cuGetErrorString(CUDA_ERROR_NOT_PERMITTED, &s));
    assert_string_equal(s, "operation not permitted");
    CU_OK(cuGetErrorString(CUDA_ERROR_NOT_SUPPORTED, &s));
    assert_string_equal(s, "operation not supported");
    CU_IS(cuGetErrorString((CUresult)123456, &s), CUDA_ERROR_INVALID_VALUE);
    assert_null(s);
}

typedef CUresult (*memcreate_fn)(CUmemGenericAllocationHandle *, size_t, const CUmemAllocationProp *,
                                 unsigned long long);
typedef CUresult (*htod_fn)(CUdeviceptr, const void *, size_t);

static void proc_address_resolves_every_function(void **state)
{
    (void)state;
    CU_OK(cuInit(0));
    static const char *const names[] = {
        "cuInit", "cuDriverGetVersion", "cuDeviceGet", "cuDeviceGetCount", "cuDeviceGetName",
        "cuDeviceGetUuid", "cuDeviceTotalMem", "cuDeviceGetAttribute", "cuDeviceCanAccessPeer",
        "cuDevicePrimaryCtxRetain", "cuDevicePrimaryCtxRelease", "cuCtxCreate", "cuCtxDestroy",
        "cuCtxSetCurrent", "cuCtxGetCurrent", "cuCtxGetDevice", "cuCtxSynchronize",
        "cuCtxEnablePeerAccess", "cuGetErrorName", "cuGetErrorString", "cuGetProcAddress",
        "cuMemGetAllocationGranularity", "cuMemCreate", "cuMemRelease",
        "cuMemExportToShareableHandle", "cuMemImportFromShareableHandle", "cuMemAddressReserve",
        "cuMemAddressFree", "cuMemMap", "cuMemUnmap", "cuMemSetAccess", "cuMemGetAccess",
        "cuMemRetainAllocationHandle", "cuMemGetAllocationPropertiesFromHandle",
        "cuPointerGetAttribute", "cuMemcpy", "cuMemcpyAsync", "cuMemcpyHtoD", "cuMemcpyDtoH",
        "cuMemcpyDtoD", "cuMemcpyHtoDAsync", "cuMemcpyDtoHAsync", "cuMemcpyDtoDAsync",
        "cuMemsetD8", "cuMemsetD32", "cuMemsetD8Async", "cuMemsetD32Async",
        "cuMemGetAddressRange", "cuMemGetInfo", "cuStreamQuery", "cuStreamCreate", "cuStreamDestroy", "cuStreamSynchronize",
    };
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
        void *fn = NULL;
        CUdriverProcAddressQueryResult status = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
        CU_OK(cuGetProcAddress(names[i], &fn, 12000, CU_GET_PROC_ADDRESS_DEFAULT, &status));
        if (!fn || status != CU_GET_PROC_ADDRESS_SUCCESS)
            fail_msg("cuGetProcAddress(%s) found nothing", names[i]);
    }
    /* The versioned ABI: what cuda.h's macros name. */
    void *fn = NULL;
    CUdriverProcAddressQueryResult status;
    CU_OK(cuGetProcAddress("cuMemCreate", &fn, 12000, 0, &status));
    memcreate_fn create;
    memcpy(&create, &fn, sizeof(create));
    assert_true(create == cuMemCreate);
    CU_OK(cuGetProcAddress("cuMemcpyHtoD", &fn, 12000, CU_GET_PROC_ADDRESS_LEGACY_STREAM, &status));
    htod_fn htod;
    memcpy(&htod, &fn, sizeof(htod));
#if !defined(CUDA_API_PER_THREAD_DEFAULT_STREAM) /* else cuda.h names the _ptds one */
    assert_true(htod == cuMemcpyHtoD);
#endif
    assert_non_null(htod);
    /* Unknown: success, NULL, SYMBOL_NOT_FOUND (CUDA's documentation). */
    fn = (void *)&status;
    CU_OK(cuGetProcAddress("cuNoSuchFunction", &fn, 12000, 0, &status));
    assert_null(fn);
    assert_int_equal(status, CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND);
    /* Known, but not in the version asked for. */
    CU_OK(cuGetProcAddress("cuMemCreate", &fn, 10000, 0, &status));
    assert_null(fn);
    assert_int_equal(status, CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT);
    /* A version newer than the driver's, or bad flags. */
    CU_IS(cuGetProcAddress("cuMemCreate", &fn, 99000, 0, &status), CUDA_ERROR_INVALID_VALUE);
    CU_IS(cuGetProcAddress("cuMemCreate", &fn, 12000, 0x100, &status), CUDA_ERROR_INVALID_VALUE);
    CU_IS(cuGetProcAddress(NULL, &fn, 12000, 0, &status), CUDA_ERROR_INVALID_VALUE);
}

typedef CUresult (*getproc_fn)(const char *, void **, int, cuuint64_t,
                               CUdriverProcAddressQueryResult *);

/* How NCCL and cuda-python find the driver: dlopen by SONAME, then one symbol. */
static void dlopen_by_soname_then_get_proc_address(void **state)
{
    (void)state;
    void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
    if (!lib)
        lib = dlopen("libcuda.so.1", RTLD_NOW);
    assert_non_null(lib);
    void *sym = dlsym(lib, "cuGetProcAddress_v2");
    assert_non_null(sym);
    getproc_fn getproc;
    memcpy(&getproc, &sym, sizeof(getproc));
    void *init = NULL;
    CUdriverProcAddressQueryResult status;
    CU_OK(getproc("cuInit", &init, 12000, CU_GET_PROC_ADDRESS_DEFAULT, &status));
    assert_non_null(init);
    CU_OK(getproc("cuInit", &init, 12000, CU_GET_PROC_ADDRESS_DEFAULT, NULL));
    assert_non_null(dlsym(lib, "cuMemcpyHtoD_v2"));
    assert_non_null(dlsym(lib, "cuCtxCreate_v4"));
    dlclose(lib);
}

/* Many threads create, map, copy and tear down at once. */
static void *thread_cycle(void *arg)
{
    CUcontext ctx = arg;
    if (cuCtxSetCurrent(ctx) != CUDA_SUCCESS)
        return "setcurrent";
    size_t g = 2u << 20;
    CUmemAllocationProp prop = cut_prop(0, 0);
    CUmemAccessDesc d = cut_access(0, CU_MEM_ACCESS_FLAGS_PROT_READWRITE);
    for (int i = 0; i < 50; i++) {
        CUmemGenericAllocationHandle h;
        CUdeviceptr ptr;
        uint32_t v = 0;
        if (cuMemCreate(&h, g, &prop, 0) != CUDA_SUCCESS ||
            cuMemAddressReserve(&ptr, g, 0, 0, 0) != CUDA_SUCCESS ||
            cuMemMap(ptr, g, 0, h, 0) != CUDA_SUCCESS || cuMemSetAccess(ptr, g, &d, 1) != CUDA_SUCCESS ||
            cuMemsetD32(ptr, (unsigned)i, 1) != CUDA_SUCCESS ||
            cuMemcpyDtoH(&v, ptr, 4) != CUDA_SUCCESS || v != (uint32_t)i ||
            cuMemUnmap(ptr, g) != CUDA_SUCCESS || cuMemRelease(h) != CUDA_SUCCESS ||
            cuMemAddressFree(ptr, g) != CUDA_SUCCESS)
            return "cycle";
    }
    return NULL;
}

static void threads_share_the_driver(void **state)
{
    (void)state;
    CUcontext ctx = cut_init(0);
    pthread_t t[8];
    for (int i = 0; i < 8; i++)
        assert_int_equal(pthread_create(&t[i], NULL, thread_cycle, ctx), 0);
    for (int i = 0; i < 8; i++) {
        void *res;
        pthread_join(t[i], &res);
        if (res)
            fail_msg("thread %d failed at %s", i, (const char *)res);
    }
}

static const struct CMUnitTest tests[] = {
    cmocka_unit_test(init_reports_devices_and_version),
    cmocka_unit_test(driver_version_comes_from_the_config),
    cmocka_unit_test(reserve_aligns_to_the_configured_granularity),
    cmocka_unit_test(calls_before_init_are_refused),
    cmocka_unit_test(attributes_nccl_queries_answer),
    cmocka_unit_test(contexts_create_destroy_and_current),
    cmocka_unit_test(idle_streams_synchronise_at_once),
    cmocka_unit_test(vmm_round_trip),
    cmocka_unit_test(release_while_mapped_keeps_memory),
    cmocka_unit_test(one_allocation_mapped_twice),
    cmocka_unit_test(several_mappings_in_one_reservation),
    cmocka_unit_test(pointer_attributes_describe_mapping),
    cmocka_unit_test(error_names_and_strings),
    cmocka_unit_test(proc_address_resolves_every_function),
    cmocka_unit_test(dlopen_by_soname_then_get_proc_address),
    cmocka_unit_test(threads_share_the_driver),
};

FAB_TEST_MAIN_NO_HELPERS("cuda", tests)
