/* What NCCL's set-up asks the driver about peers and limits, against cuda.h
 * only: cuDeviceGetP2PAttribute agreeing with cuDeviceCanAccessPeer, peer
 * access enabled and disabled once each, both found through
 * cuGetProcAddress, and cuCtxSetLimit / cuCtxGetLimit starting at an H100's
 * values and keeping what is set. Each test is its own process, on the
 * built-in topology (one node of 8 GPUs, no daemon). */
#include "cuda_test.h"

typedef CUresult (*p2p_attr_fn)(int *, CUdevice_P2PAttribute, CUdevice, CUdevice);
typedef CUresult (*disable_fn)(CUcontext);
typedef CUresult (*set_limit_fn)(CUlimit, size_t);
typedef CUresult (*get_limit_fn)(size_t *, CUlimit);

static void p2p_attributes_agree_with_can_access_peer(void **state)
{
    (void)state;
    CU_OK(cuInit(0));
    int n = 0;
    CU_OK(cuDeviceGetCount(&n));
    assert_true(n >= 2);
    for (int a = 0; a < n; a++) {
        for (int b = 0; b < n; b++) {
            int v = -1, can = -1;
            if (a == b) {
                CU_IS(cuDeviceGetP2PAttribute(&v, CU_DEVICE_P2P_ATTRIBUTE_ACCESS_SUPPORTED, a, b),
                      CUDA_ERROR_INVALID_DEVICE);
                continue;
            }
            CU_OK(cuDeviceCanAccessPeer(&can, a, b));
            CU_OK(cuDeviceGetP2PAttribute(&v, CU_DEVICE_P2P_ATTRIBUTE_ACCESS_SUPPORTED, a, b));
            assert_int_equal(v, can);
            CU_OK(cuDeviceGetP2PAttribute(&v, CU_DEVICE_P2P_ATTRIBUTE_NATIVE_ATOMIC_SUPPORTED, a, b));
            assert_int_equal(v, can);
            CU_OK(cuDeviceGetP2PAttribute(&v, CU_DEVICE_P2P_ATTRIBUTE_PERFORMANCE_RANK, a, b));
            assert_int_equal(v, 0);
            CU_OK(cuDeviceGetP2PAttribute(&v, CU_DEVICE_P2P_ATTRIBUTE_CUDA_ARRAY_ACCESS_SUPPORTED,
                                          a, b));
            assert_int_equal(v, 0); /* no CUDA arrays in the emulation */
        }
    }
    int v;
    CU_IS(cuDeviceGetP2PAttribute(NULL, CU_DEVICE_P2P_ATTRIBUTE_ACCESS_SUPPORTED, 0, 1),
          CUDA_ERROR_INVALID_VALUE);
    CU_IS(cuDeviceGetP2PAttribute(&v, (CUdevice_P2PAttribute)99, 0, 1), CUDA_ERROR_INVALID_VALUE);
    CU_IS(cuDeviceGetP2PAttribute(&v, CU_DEVICE_P2P_ATTRIBUTE_ACCESS_SUPPORTED, 0, n),
          CUDA_ERROR_INVALID_DEVICE);
}

static void peer_access_is_enabled_once_and_disabled_once(void **state)
{
    (void)state;
    CUcontext c0 = cut_init(0), c1;
    CU_OK(cuDevicePrimaryCtxRetain(&c1, 1));
    CU_IS(cuCtxDisablePeerAccess(c1), CUDA_ERROR_PEER_ACCESS_NOT_ENABLED);
    CU_OK(cuCtxEnablePeerAccess(c1, 0));
    CU_IS(cuCtxEnablePeerAccess(c1, 0), CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED);
    CU_OK(cuCtxDisablePeerAccess(c1));
    CU_IS(cuCtxDisablePeerAccess(c1), CUDA_ERROR_PEER_ACCESS_NOT_ENABLED);
    CU_OK(cuCtxEnablePeerAccess(c1, 0));
    /* access is the current context's: device 1's own has enabled nothing */
    CU_OK(cuCtxSetCurrent(c1));
    CU_IS(cuCtxDisablePeerAccess(c0), CUDA_ERROR_PEER_ACCESS_NOT_ENABLED);
    CU_IS(cuCtxDisablePeerAccess(c1), CUDA_ERROR_INVALID_DEVICE);
    CU_IS(cuCtxDisablePeerAccess(NULL), CUDA_ERROR_INVALID_CONTEXT);
    CU_OK(cuCtxSetCurrent(NULL));
    CU_IS(cuCtxDisablePeerAccess(c0), CUDA_ERROR_INVALID_CONTEXT);
    CU_OK(cuDevicePrimaryCtxRelease(1));
}

static void releasing_the_primary_context_forgets_its_peers_and_limits(void **state)
{
    (void)state;
    CUcontext c0 = cut_init(0), c1;
    CU_OK(cuDevicePrimaryCtxRetain(&c1, 1));
    CU_OK(cuCtxEnablePeerAccess(c1, 0));
    CU_OK(cuCtxSetLimit(CU_LIMIT_STACK_SIZE, 4096));
    CU_OK(cuDevicePrimaryCtxRelease(0));
    CU_OK(cuDevicePrimaryCtxRetain(&c0, 0));
    CU_OK(cuCtxSetCurrent(c0));
    size_t v = 0;
    CU_OK(cuCtxGetLimit(&v, CU_LIMIT_STACK_SIZE));
    assert_int_equal(v, 1024);
    CU_OK(cuCtxEnablePeerAccess(c1, 0));
    CU_OK(cuDevicePrimaryCtxRelease(0));
    CU_OK(cuDevicePrimaryCtxRelease(1));
}

static void peer_and_limit_calls_are_found_through_get_proc_address(void **state)
{
    (void)state;
    CUcontext c0 = cut_init(0), c1;
    (void)c0;
    CU_OK(cuDevicePrimaryCtxRetain(&c1, 1));
    const char *names[] = {"cuDeviceGetP2PAttribute", "cuCtxDisablePeerAccess", "cuCtxSetLimit",
                           "cuCtxGetLimit"};
    void *fn[4];
    for (int i = 0; i < 4; i++) {
        CUdriverProcAddressQueryResult q = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
        CU_OK(cuGetProcAddress(names[i], &fn[i], 13000, CU_GET_PROC_ADDRESS_DEFAULT, &q));
        assert_int_equal(q, CU_GET_PROC_ADDRESS_SUCCESS);
        assert_non_null(fn[i]);
    }
    /* older than the call: not found at that version */
    CUdriverProcAddressQueryResult q = CU_GET_PROC_ADDRESS_SUCCESS;
    void *old = NULL;
    CU_OK(cuGetProcAddress("cuDeviceGetP2PAttribute", &old, 7050, CU_GET_PROC_ADDRESS_DEFAULT, &q));
    assert_int_equal(q, CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT);
    p2p_attr_fn p2p;
    disable_fn disable;
    set_limit_fn set;
    get_limit_fn get;
    memcpy(&p2p, &fn[0], sizeof p2p);
    memcpy(&disable, &fn[1], sizeof disable);
    memcpy(&set, &fn[2], sizeof set);
    memcpy(&get, &fn[3], sizeof get);
    int v = -1;
    CU_OK(p2p(&v, CU_DEVICE_P2P_ATTRIBUTE_ACCESS_SUPPORTED, 0, 1));
    assert_int_equal(v, 1);
    CU_OK(cuCtxEnablePeerAccess(c1, 0));
    CU_OK(disable(c1));
    CU_OK(set(CU_LIMIT_MALLOC_HEAP_SIZE, 1 << 24));
    size_t heap = 0;
    CU_OK(get(&heap, CU_LIMIT_MALLOC_HEAP_SIZE));
    assert_int_equal(heap, 1 << 24);
    CU_OK(cuDevicePrimaryCtxRelease(1));
}

static void limits_start_at_an_h100s_and_keep_what_is_set(void **state)
{
    (void)state;
    cut_init(0);
    size_t v = 0;
    const struct {
        CUlimit limit;
        size_t value;
    } defaults[] = {
        {CU_LIMIT_STACK_SIZE, 1024},
        {CU_LIMIT_PRINTF_FIFO_SIZE, 1048576},
        {CU_LIMIT_MALLOC_HEAP_SIZE, 8388608},
        {CU_LIMIT_DEV_RUNTIME_PENDING_LAUNCH_COUNT, 2048},
        {CU_LIMIT_MAX_L2_FETCH_GRANULARITY, 32},
        {CU_LIMIT_PERSISTING_L2_CACHE_SIZE, 0},
    };
    for (size_t i = 0; i < sizeof defaults / sizeof defaults[0]; i++) {
        CU_OK(cuCtxGetLimit(&v, defaults[i].limit));
        assert_int_equal(v, defaults[i].value);
    }
    CU_OK(cuCtxSetLimit(CU_LIMIT_STACK_SIZE, 1000));
    CU_OK(cuCtxGetLimit(&v, CU_LIMIT_STACK_SIZE));
    assert_int_equal(v, 1008); /* rounded up to 16 bytes */
    CU_OK(cuCtxSetLimit(CU_LIMIT_MAX_L2_FETCH_GRANULARITY, 4096));
    CU_OK(cuCtxGetLimit(&v, CU_LIMIT_MAX_L2_FETCH_GRANULARITY));
    assert_int_equal(v, 128); /* a hint, clamped */
    int max_persisting = -1;
    CU_OK(cuDeviceGetAttribute(&max_persisting, CU_DEVICE_ATTRIBUTE_MAX_PERSISTING_L2_CACHE_SIZE, 0));
    CU_OK(cuCtxSetLimit(CU_LIMIT_PERSISTING_L2_CACHE_SIZE, (size_t)1 << 40));
    CU_OK(cuCtxGetLimit(&v, CU_LIMIT_PERSISTING_L2_CACHE_SIZE));
    assert_int_equal(v, (size_t)max_persisting);
    /* compute capability 9.0 and later have no device-side synchronize depth */
    int major = 0;
    CU_OK(cuDeviceGetAttribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, 0));
    if (major >= 9)
        CU_IS(cuCtxSetLimit(CU_LIMIT_DEV_RUNTIME_SYNC_DEPTH, 4), CUDA_ERROR_UNSUPPORTED_LIMIT);
    CU_IS(cuCtxSetLimit(CU_LIMIT_CIG_ENABLED, 1), CUDA_ERROR_UNSUPPORTED_LIMIT);
    CU_IS(cuCtxGetLimit(&v, CU_LIMIT_MAX), CUDA_ERROR_UNSUPPORTED_LIMIT);
    CU_IS(cuCtxGetLimit(NULL, CU_LIMIT_STACK_SIZE), CUDA_ERROR_INVALID_VALUE);
    /* another context starts afresh */
    CUcontext other;
    CU_OK(cuCtxCreate(&other, NULL, 0, 0));
    CU_OK(cuCtxGetLimit(&v, CU_LIMIT_STACK_SIZE));
    assert_int_equal(v, 1024);
    CU_OK(cuCtxDestroy(other));
    CU_OK(cuCtxSetCurrent(NULL));
    CU_IS(cuCtxGetLimit(&v, CU_LIMIT_STACK_SIZE), CUDA_ERROR_INVALID_CONTEXT);
    CU_IS(cuCtxSetLimit(CU_LIMIT_STACK_SIZE, 2048), CUDA_ERROR_INVALID_CONTEXT);
}

/* Each attribute says what the emulation does: a sample that reads
 * "Concurrent copy and kernel execution: No with 3 copy engine(s)" is told
 * a contradiction. */
static void attributes_answer_what_the_emulation_does(void **state)
{
    (void)state;
    cut_init(0);
    int v = -1;
#define ATTR(name) (CU_OK(cuDeviceGetAttribute(&v, CU_DEVICE_ATTRIBUTE_##name, 0)), v)
    assert_true(ATTR(ASYNC_ENGINE_COUNT) > 0);
    assert_int_equal(ATTR(GPU_OVERLAP), 1);
    assert_int_equal(ATTR(COMPUTE_PREEMPTION_SUPPORTED), 1);
    assert_int_equal(ATTR(TEXTURE_ALIGNMENT), 512);
    assert_int_equal(ATTR(TEXTURE_PITCH_ALIGNMENT), 32);
    assert_int_equal(ATTR(KERNEL_EXEC_TIMEOUT), 0);
    /* a pitched allocation's pitch is within MAX_PITCH */
    int max_pitch = ATTR(MAX_PITCH);
    assert_int_equal(max_pitch, 2147483647);
    CUdeviceptr p;
    size_t pitch = 0;
    CU_OK(cuMemAllocPitch(&p, &pitch, 1000, 4, 16));
    assert_true(pitch >= 1000 && pitch <= (size_t)max_pitch);
    CU_OK(cuMemFree(p));
    /* host registration, read-only too, works as the attributes say */
    assert_int_equal(ATTR(HOST_REGISTER_SUPPORTED), 1);
    assert_int_equal(ATTR(READ_ONLY_HOST_REGISTER_SUPPORTED), 1);
    static char page[8192] __attribute__((aligned(4096)));
    CU_OK(cuMemHostRegister(page, sizeof page, CU_MEMHOSTREGISTER_READ_ONLY));
    CU_OK(cuMemHostUnregister(page));
    /* managed memory: the runtime makes it of host memory the device
     * reaches, which the host reads directly; concurrent access is not
     * claimed (no prefetch or advice calls) */
    assert_int_equal(ATTR(MANAGED_MEMORY), 1);
    assert_int_equal(ATTR(DIRECT_MANAGED_MEM_ACCESS_FROM_HOST), 1);
    assert_int_equal(ATTR(CONCURRENT_MANAGED_ACCESS), 0);
    /* features the emulation lacks say so */
    assert_int_equal(ATTR(MAXIMUM_TEXTURE1D_WIDTH), 0);
    assert_int_equal(ATTR(SPARSE_CUDA_ARRAY_SUPPORTED), 0);
    assert_int_equal(ATTR(TIMELINE_SEMAPHORE_INTEROP_SUPPORTED), 0);
#undef ATTR
}

/* What NVSHMEM's host side asks besides: the context's flags set
 * (CU_CTX_SYNC_MEMOPS), and a flush of GPUDirect RDMA writes, which the
 * attribute says is there. */
static void context_flags_are_set_and_rdma_writes_flushed(void **state)
{
    (void)state;
    cut_init(0);
    unsigned flags = 0;
    CU_OK(cuCtxSetFlags(CU_CTX_SYNC_MEMOPS));
    CU_OK(cuCtxGetFlags(&flags));
    assert_int_equal(flags, CU_CTX_SYNC_MEMOPS);
    CU_IS(cuCtxSetFlags(0x10000), CUDA_ERROR_INVALID_VALUE);
    CU_OK(cuCtxGetFlags(&flags));
    assert_int_equal(flags, CU_CTX_SYNC_MEMOPS);
    int options = 0;
    CU_OK(cuDeviceGetAttribute(&options, CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_FLUSH_WRITES_OPTIONS, 0));
    assert_true(options & CU_FLUSH_GPU_DIRECT_RDMA_WRITES_OPTION_HOST);
    CU_OK(cuFlushGPUDirectRDMAWrites(CU_FLUSH_GPU_DIRECT_RDMA_WRITES_TARGET_CURRENT_CTX,
                                     CU_FLUSH_GPU_DIRECT_RDMA_WRITES_TO_OWNER));
    CU_OK(cuFlushGPUDirectRDMAWrites(CU_FLUSH_GPU_DIRECT_RDMA_WRITES_TARGET_CURRENT_CTX,
                                     CU_FLUSH_GPU_DIRECT_RDMA_WRITES_TO_ALL_DEVICES));
    CU_IS(cuFlushGPUDirectRDMAWrites(CU_FLUSH_GPU_DIRECT_RDMA_WRITES_TARGET_CURRENT_CTX,
                                     (CUflushGPUDirectRDMAWritesScope)1),
          CUDA_ERROR_INVALID_VALUE);
    CU_OK(cuCtxSetCurrent(NULL));
    CU_IS(cuCtxSetFlags(0), CUDA_ERROR_INVALID_CONTEXT);
    CU_IS(cuFlushGPUDirectRDMAWrites(CU_FLUSH_GPU_DIRECT_RDMA_WRITES_TARGET_CURRENT_CTX,
                                     CU_FLUSH_GPU_DIRECT_RDMA_WRITES_TO_OWNER),
          CUDA_ERROR_INVALID_CONTEXT);
}

static const struct CMUnitTest tests[] = {
    cmocka_unit_test(p2p_attributes_agree_with_can_access_peer),
    cmocka_unit_test(peer_access_is_enabled_once_and_disabled_once),
    cmocka_unit_test(releasing_the_primary_context_forgets_its_peers_and_limits),
    cmocka_unit_test(peer_and_limit_calls_are_found_through_get_proc_address),
    cmocka_unit_test(limits_start_at_an_h100s_and_keep_what_is_set),
    cmocka_unit_test(attributes_answer_what_the_emulation_does),
    cmocka_unit_test(context_flags_are_set_and_rdma_writes_flushed),
};

FAB_TEST_MAIN_NO_HELPERS("cuda", tests)
