/* The runtime calls NCCL's set-up makes beyond the basics (issue 26): the
 * function of a registered kernel (cudaGetFuncBySymbol, before every
 * launch), device limits, peer attributes and peer access, stream ids,
 * batched copies, capture-dependency updates and graph edits on streams
 * that never capture, and user objects. Written against the runtime's C
 * API; the kernel is registered as nvcc's generated code registers one,
 * with a fatbin wrapper around PTX text, so that no nvcc is needed. */
#include <cuda.h>
#include <cuda_runtime_api.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fabtest.h"

#define RT_OK(call) assert_int_equal((call), cudaSuccess)
#define RT_IS(call, code) assert_int_equal((call), (code))

/* What nvcc's generated code calls (crt/host_runtime.h). */
void **__cudaRegisterFatBinary(void *fatCubin);
void __cudaRegisterFatBinaryEnd(void **fatCubinHandle);
void __cudaUnregisterFatBinary(void **fatCubinHandle);
void __cudaRegisterFunction(void **fatCubinHandle, const char *hostFun, char *deviceFun,
                            const char *deviceName, int thread_limit, void *tid, void *bid,
                            void *bDim, void *gDim, int *wSize);

static const char ptx[] = ".version 8.0\n.target sm_90\n.address_size 64\n"
                          ".visible .entry host_test_kernel()\n{\n\tret;\n}\n";
static struct {
    int magic, version;
    const void *data;
    void *filename_or_fatbins;
} wrapper = {0x466243B1, 1, ptx, NULL};
static char stub; /* the kernel's host-side address, as nvcc's stub would be */
static char unregistered;

static void **register_kernel(void)
{
    void **h = __cudaRegisterFatBinary(&wrapper);
    assert_non_null(h);
    __cudaRegisterFunction(h, &stub, (char *)"host_test_kernel", "host_test_kernel", -1, NULL,
                           NULL, NULL, NULL, NULL);
    __cudaRegisterFatBinaryEnd(h);
    return h;
}

static void get_func_by_symbol_gives_the_kernels_function_here(void **state)
{
    (void)state;
    void **h = register_kernel();
    RT_OK(cudaSetDevice(0));
    cudaFunction_t f = NULL;
    RT_OK(cudaGetFuncBySymbol(&f, &stub));
    assert_non_null(f);
    cudaKernel_t k = NULL;
    RT_OK(cudaGetKernel(&k, &stub));
    CUfunction want = NULL;
    assert_int_equal(cuKernelGetFunction(&want, (CUkernel)k), CUDA_SUCCESS);
    assert_ptr_equal(f, want);
    /* another device's context gets the kernel's function too (the
     * emulation's is one object for every context, docs/cuda.md), and the
     * driver takes it */
    RT_OK(cudaSetDevice(1));
    cudaFunction_t f1 = NULL;
    RT_OK(cudaGetFuncBySymbol(&f1, &stub));
    int threads = 0;
    assert_int_equal(cuFuncGetAttribute(&threads, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK,
                                        (CUfunction)f1),
                     CUDA_SUCCESS);
    assert_true(threads > 0);
    RT_IS(cudaGetFuncBySymbol(&f, &unregistered), cudaErrorInvalidDeviceFunction);
    RT_IS(cudaGetLastError(), cudaErrorInvalidDeviceFunction);
    RT_IS(cudaGetFuncBySymbol(NULL, &stub), cudaErrorInvalidValue);
    __cudaUnregisterFatBinary(h);
    RT_IS(cudaGetFuncBySymbol(&f, &stub), cudaErrorInvalidDeviceFunction);
}

static void device_limits_are_the_current_devices(void **state)
{
    (void)state;
    size_t v = 0;
    RT_OK(cudaSetDevice(0));
    RT_OK(cudaDeviceGetLimit(&v, cudaLimitStackSize));
    assert_int_equal(v, 1024);
    RT_OK(cudaDeviceSetLimit(cudaLimitStackSize, 4096));
    RT_OK(cudaDeviceGetLimit(&v, cudaLimitStackSize));
    assert_int_equal(v, 4096);
    RT_OK(cudaDeviceGetLimit(&v, cudaLimitMallocHeapSize));
    assert_int_equal(v, 8388608);
    RT_IS(cudaDeviceSetLimit(cudaLimitDevRuntimeSyncDepth, 4), cudaErrorUnsupportedLimit);
    RT_IS(cudaDeviceGetLimit(NULL, cudaLimitStackSize), cudaErrorInvalidValue);
    RT_OK(cudaSetDevice(1));
    RT_OK(cudaDeviceGetLimit(&v, cudaLimitStackSize));
    assert_int_equal(v, 1024);
    RT_OK(cudaSetDevice(0));
    RT_OK(cudaDeviceGetLimit(&v, cudaLimitStackSize));
    assert_int_equal(v, 4096);
}

static void p2p_attributes_agree_with_can_access_peer(void **state)
{
    (void)state;
    int can = -1, v = -1;
    RT_OK(cudaDeviceCanAccessPeer(&can, 0, 1));
    assert_int_equal(can, 1);
    RT_OK(cudaDeviceGetP2PAttribute(&v, cudaDevP2PAttrAccessSupported, 0, 1));
    assert_int_equal(v, can);
    RT_OK(cudaDeviceGetP2PAttribute(&v, cudaDevP2PAttrNativeAtomicSupported, 1, 0));
    assert_int_equal(v, can);
    RT_OK(cudaDeviceGetP2PAttribute(&v, cudaDevP2PAttrPerformanceRank, 0, 1));
    assert_int_equal(v, 0);
    RT_IS(cudaDeviceGetP2PAttribute(&v, cudaDevP2PAttrAccessSupported, 0, 0),
          cudaErrorInvalidDevice);
    RT_IS(cudaDeviceGetP2PAttribute(&v, cudaDevP2PAttrAccessSupported, 0, 4096),
          cudaErrorInvalidDevice);
    RT_IS(cudaDeviceGetP2PAttribute(NULL, cudaDevP2PAttrAccessSupported, 0, 1),
          cudaErrorInvalidValue);
}

static void peer_access_is_enabled_once_and_disabled_once(void **state)
{
    (void)state;
    RT_OK(cudaSetDevice(0));
    RT_IS(cudaDeviceDisablePeerAccess(1), cudaErrorPeerAccessNotEnabled);
    RT_OK(cudaDeviceEnablePeerAccess(1, 0));
    /* NCCL reads this code and clears it with cudaGetLastError */
    RT_IS(cudaDeviceEnablePeerAccess(1, 0), cudaErrorPeerAccessAlreadyEnabled);
    RT_IS(cudaGetLastError(), cudaErrorPeerAccessAlreadyEnabled);
    RT_OK(cudaDeviceDisablePeerAccess(1));
    RT_IS(cudaDeviceDisablePeerAccess(1), cudaErrorPeerAccessNotEnabled);
    RT_IS(cudaDeviceEnablePeerAccess(0, 0), cudaErrorInvalidDevice);
    RT_IS(cudaDeviceDisablePeerAccess(4096), cudaErrorInvalidDevice);
}

static void stream_ids_are_unique_and_stay(void **state)
{
    (void)state;
    cudaStream_t a, b;
    RT_OK(cudaStreamCreate(&a));
    RT_OK(cudaStreamCreate(&b));
    unsigned long long ia = 0, ib = 0, again = 0, legacy = 0, pt = 0;
    RT_OK(cudaStreamGetId(a, &ia));
    RT_OK(cudaStreamGetId(b, &ib));
    RT_OK(cudaStreamGetId(a, &again));
    assert_true(ia != ib);
    assert_int_equal(ia, again);
    RT_OK(cudaStreamGetId(cudaStreamLegacy, &legacy));
    RT_OK(cudaStreamGetId(cudaStreamPerThread, &pt));
    assert_true(legacy != pt && legacy != ia && pt != ia && pt != ib);
    RT_IS(cudaStreamGetId(a, NULL), cudaErrorInvalidValue);
    RT_OK(cudaStreamDestroy(a));
    RT_OK(cudaStreamDestroy(b));
}

static volatile int gate;
static void wait_gate(void *arg)
{
    (void)arg;
    while (!__atomic_load_n(&gate, __ATOMIC_ACQUIRE))
        ;
}

/* Three copies behind a gate on their stream: the sources (page-locked, so
 * that a stream-ordered copy reads them when it runs, not at the call) are
 * changed after the call. A copy whose source is read in stream order sees
 * the change; one read during the call has its bytes as they were then. */
static void memcpy_batch_reads_each_source_when_its_attribute_says(void **state)
{
    (void)state;
    RT_OK(cudaSetDevice(0));
    cudaStream_t s;
    RT_OK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    uint32_t *src = NULL, *dev = NULL, back[3] = {0};
    RT_OK(cudaMallocHost((void **)&src, sizeof back));
    src[0] = 1;
    src[1] = 2;
    src[2] = 3;
    RT_OK(cudaMalloc((void **)&dev, sizeof back));
    void *dsts[3] = {&dev[0], &dev[1], &dev[2]};
    const void *srcs[3] = {&src[0], &src[1], &src[2]};
    size_t sizes[3] = {4, 4, 4};
    struct cudaMemcpyAttributes attrs[2];
    memset(attrs, 0, sizeof attrs);
    attrs[0].srcAccessOrder = cudaMemcpySrcAccessOrderStream;
    attrs[1].srcAccessOrder = cudaMemcpySrcAccessOrderDuringApiCall;
    size_t idx[2] = {0, 1}; /* copy 0 in stream order, copies 1 and 2 during the call */
    __atomic_store_n(&gate, 0, __ATOMIC_RELEASE);
    RT_OK(cudaLaunchHostFunc(s, wait_gate, NULL));
    RT_OK(cudaMemcpyBatchAsync(dsts, srcs, sizes, 3, attrs, idx, 2, s));
    src[0] = 10;
    src[1] = 20;
    src[2] = 30;
    __atomic_store_n(&gate, 1, __ATOMIC_RELEASE);
    RT_OK(cudaStreamSynchronize(s));
    RT_OK(cudaMemcpy(back, dev, sizeof back, cudaMemcpyDeviceToHost));
    assert_int_equal(back[0], 10);
    assert_int_equal(back[1], 2);
    assert_int_equal(back[2], 3);

    /* what CUDA refuses, before anything is queued */
    /* on a blocking stream held by the gate too: the sources read during the
     * call are read without waiting for it */
    cudaStream_t blocking;
    RT_OK(cudaStreamCreate(&blocking));
    __atomic_store_n(&gate, 0, __ATOMIC_RELEASE);
    RT_OK(cudaLaunchHostFunc(blocking, wait_gate, NULL));
    size_t during_only[1] = {0};
    RT_OK(cudaMemcpyBatchAsync(dsts, srcs, sizes, 3, &attrs[1], during_only, 1, blocking));
    src[0] = 100;
    __atomic_store_n(&gate, 1, __ATOMIC_RELEASE);
    RT_OK(cudaStreamSynchronize(blocking));
    RT_OK(cudaMemcpy(back, dev, sizeof back, cudaMemcpyDeviceToHost));
    assert_int_equal(back[0], 10);
    assert_int_equal(back[2], 30);
    RT_OK(cudaStreamDestroy(blocking));

    RT_IS(cudaMemcpyBatchAsync(dsts, srcs, sizes, 3, attrs, idx, 2, cudaStreamLegacy),
          cudaErrorInvalidValue);
    RT_IS(cudaMemcpyBatchAsync(dsts, srcs, sizes, 3, attrs, idx, 2, 0), cudaErrorInvalidValue);
    size_t bad_first[2] = {1, 2};
    RT_IS(cudaMemcpyBatchAsync(dsts, srcs, sizes, 3, attrs, bad_first, 2, s),
          cudaErrorInvalidValue);
    size_t not_rising[2] = {0, 0};
    RT_IS(cudaMemcpyBatchAsync(dsts, srcs, sizes, 3, attrs, not_rising, 2, s),
          cudaErrorInvalidValue);
    size_t past_end[2] = {0, 3};
    RT_IS(cudaMemcpyBatchAsync(dsts, srcs, sizes, 3, attrs, past_end, 2, s),
          cudaErrorInvalidValue);
    RT_IS(cudaMemcpyBatchAsync(dsts, srcs, sizes, 1, attrs, idx, 2, s), cudaErrorInvalidValue);
    attrs[1].srcAccessOrder = cudaMemcpySrcAccessOrderInvalid;
    RT_IS(cudaMemcpyBatchAsync(dsts, srcs, sizes, 3, attrs, idx, 2, s), cudaErrorInvalidValue);
    RT_OK(cudaStreamSynchronize(s));
    RT_OK(cudaMemcpy(back, dev, sizeof back, cudaMemcpyDeviceToHost));
    assert_int_equal(back[1], 20); /* none of the refused batches ran */
    RT_OK(cudaFree(dev));
    RT_OK(cudaFreeHost(src));
    RT_OK(cudaStreamDestroy(s));
}

static void capture_dependencies_of_a_stream_not_capturing_are_refused(void **state)
{
    (void)state;
    cudaStream_t s;
    RT_OK(cudaStreamCreate(&s));
    cudaGraphNode_t node = NULL;
    RT_IS(cudaStreamUpdateCaptureDependencies(s, &node, NULL, 1, cudaStreamSetCaptureDependencies),
          cudaErrorIllegalState);
    RT_IS(cudaStreamUpdateCaptureDependencies(s, &node, NULL, 1, 7), cudaErrorInvalidValue);
    RT_IS(cudaStreamUpdateCaptureDependencies(s, NULL, NULL, 1, 0), cudaErrorInvalidValue);
    RT_OK(cudaStreamDestroy(s));
}

static void graph_edits_are_refused(void **state)
{
    (void)state;
    cudaGraphNode_t a = NULL, b = NULL, n = NULL;
    cudaEvent_t ev;
    RT_OK(cudaEventCreate(&ev));
    RT_IS(cudaGraphAddDependencies(NULL, &a, &b, NULL, 1), cudaErrorInvalidValue);
    RT_IS(cudaGraphAddEventRecordNode(&n, NULL, NULL, 0, ev), cudaErrorInvalidValue);
    cudaGraph_t g = NULL;
    RT_IS(cudaGraphCreate(&g, 0), cudaErrorNotSupported);
    cudaGraph_t forged = (cudaGraph_t)(uintptr_t)0x1000;
    RT_IS(cudaGraphAddDependencies(forged, &a, &b, NULL, 1), cudaErrorNotSupported);
    RT_IS(cudaGraphAddEventRecordNode(&n, forged, NULL, 0, ev), cudaErrorNotSupported);
    RT_IS(cudaGraphRetainUserObject(forged, NULL, 1, 0), cudaErrorNotSupported);
    RT_OK(cudaEventDestroy(ev));
}

static int destroyed;
static void on_destroy(void *p)
{
    assert_ptr_equal(p, &destroyed);
    destroyed++;
}

static void user_object_destructor_runs_at_the_last_release(void **state)
{
    (void)state;
    cudaUserObject_t o = NULL;
    destroyed = 0;
    RT_OK(cudaUserObjectCreate(&o, &destroyed, on_destroy, 2, cudaUserObjectNoDestructorSync));
    RT_OK(cudaUserObjectRetain(o, 3));
    RT_OK(cudaUserObjectRelease(o, 4));
    assert_int_equal(destroyed, 0);
    RT_IS(cudaUserObjectRelease(o, 2), cudaErrorInvalidValue); /* more than it holds */
    assert_int_equal(destroyed, 0);
    RT_OK(cudaUserObjectRelease(o, 1));
    assert_int_equal(destroyed, 1);
    RT_IS(cudaUserObjectRelease(o, 1), cudaErrorInvalidValue); /* gone */
    RT_IS(cudaUserObjectRetain(o, 1), cudaErrorInvalidValue);
    assert_int_equal(destroyed, 1);
    RT_IS(cudaUserObjectCreate(&o, NULL, on_destroy, 1, 0), cudaErrorInvalidValue);
    RT_IS(cudaUserObjectCreate(&o, NULL, on_destroy, 0, cudaUserObjectNoDestructorSync),
          cudaErrorInvalidValue);
    RT_IS(cudaUserObjectCreate(&o, NULL, NULL, 1, cudaUserObjectNoDestructorSync),
          cudaErrorInvalidValue);
}

/* cudaGetDeviceProperties says what cudaDeviceGetAttribute says, and both
 * what works: managed memory, the copy engines overlapping kernels. */
static void device_properties_agree_with_what_works(void **state)
{
    (void)state;
    struct cudaDeviceProp prop;
    RT_OK(cudaGetDeviceProperties(&prop, 0));
    int overlap = -1, managed = -1, preempt = -1;
    RT_OK(cudaDeviceGetAttribute(&overlap, cudaDevAttrGpuOverlap, 0));
    RT_OK(cudaDeviceGetAttribute(&managed, cudaDevAttrManagedMemory, 0));
    RT_OK(cudaDeviceGetAttribute(&preempt, cudaDevAttrComputePreemptionSupported, 0));
    assert_true(prop.asyncEngineCount > 0);
    assert_int_equal(overlap, 1);
    assert_int_equal(managed, 1);
    assert_int_equal(prop.managedMemory, 1);
    assert_int_equal(preempt, 1);
    assert_int_equal(prop.computePreemptionSupported, 1);
    assert_true(prop.memPitch > 0);
    assert_int_equal(prop.textureAlignment, 512);
    assert_int_equal(prop.hostRegisterSupported, 1);
    void *m = NULL;
    RT_OK(cudaMallocManaged(&m, 64, cudaMemAttachGlobal));
    memset(m, 7, 64);
    RT_OK(cudaMemset(m, 9, 32));
    RT_OK(cudaDeviceSynchronize());
    assert_int_equal(((unsigned char *)m)[0], 9);
    assert_int_equal(((unsigned char *)m)[63], 7);
    RT_OK(cudaFree(m));
    void *pitched = NULL;
    size_t pitch = 0;
    RT_OK(cudaMallocPitch(&pitched, &pitch, 1000, 3));
    assert_true(pitch >= 1000 && pitch <= prop.memPitch);
    RT_OK(cudaFree(pitched));
}

static const struct CMUnitTest tests[] = {
    cmocka_unit_test(get_func_by_symbol_gives_the_kernels_function_here),
    cmocka_unit_test(device_limits_are_the_current_devices),
    cmocka_unit_test(p2p_attributes_agree_with_can_access_peer),
    cmocka_unit_test(peer_access_is_enabled_once_and_disabled_once),
    cmocka_unit_test(stream_ids_are_unique_and_stay),
    cmocka_unit_test(memcpy_batch_reads_each_source_when_its_attribute_says),
    cmocka_unit_test(capture_dependencies_of_a_stream_not_capturing_are_refused),
    cmocka_unit_test(graph_edits_are_refused),
    cmocka_unit_test(user_object_destructor_runs_at_the_last_release),
    cmocka_unit_test(device_properties_agree_with_what_works),
};

FAB_TEST_MAIN_NO_HELPERS("cudart", tests)
