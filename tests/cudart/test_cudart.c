/* fabmem's CUDA runtime (libcudart.so.13) from a C program: device and
 * memory basics, stream and event ordering, host work, error semantics.
 * Written against cuda_runtime_api.h only (NVIDIA's where installed, else
 * the project's), as a user's program would be, plus cuda.h for the one
 * test that needs a driver call, so the same source runs against NVIDIA's
 * runtime and driver. */
#include <cuda.h>
#include <cuda_runtime_api.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fabtest.h"

#define RT_OK(call) assert_int_equal((call), cudaSuccess)
#define RT_IS(call, code) assert_int_equal((call), (code))

static void runtime_counts_devices_and_sets_one(void **state)
{
    (void)state;
    int n = 0, dev = -1;
    RT_OK(cudaGetDeviceCount(&n));
    assert_true(n >= 1);
    RT_OK(cudaSetDevice(n - 1));
    RT_OK(cudaGetDevice(&dev));
    assert_int_equal(dev, n - 1);
    RT_IS(cudaSetDevice(n), cudaErrorInvalidDevice);
    RT_OK(cudaGetDevice(&dev));
    assert_int_equal(dev, n - 1);
}

static void device_properties_match_the_driver(void **state)
{
    (void)state;
    struct cudaDeviceProp prop;
    RT_OK(cudaGetDeviceProperties(&prop, 0));
    char name[256];
    size_t total = 0;
    int major = 0;
    RT_OK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, 0));
    assert_int_equal(cuDeviceGetName(name, sizeof name, 0), CUDA_SUCCESS);
    assert_int_equal(cuDeviceTotalMem(&total, 0), CUDA_SUCCESS);
    assert_string_equal(prop.name, name);
    assert_int_equal(prop.totalGlobalMem, total);
    assert_int_equal(prop.major, major);
    assert_true(prop.warpSize > 0 && prop.multiProcessorCount > 0);
    RT_IS(cudaGetDeviceProperties(&prop, 1000), cudaErrorInvalidDevice);

}

static void versions_are_reported(void **state)
{
    (void)state;
    int driver = 0, runtime = 0;
    RT_OK(cudaDriverGetVersion(&driver));
    RT_OK(cudaRuntimeGetVersion(&runtime));
    assert_true(driver >= 13000);
    assert_int_equal(runtime, 13000);
}

static void pci_bus_id_round_trips(void **state)
{
    (void)state;
    char bus[32];
    int dev = -1;
    RT_OK(cudaDeviceGetPCIBusId(bus, sizeof bus, 0));
    RT_OK(cudaDeviceGetByPCIBusId(&dev, bus));
    assert_int_equal(dev, 0);
}

static void memory_round_trips_through_device_memory(void **state)
{
    (void)state;
    enum { N = 4096 };
    unsigned char *src = malloc(N), *dst = calloc(1, N);
    for (int i = 0; i < N; i++)
        src[i] = (unsigned char)i;
    void *d = NULL;
    RT_OK(cudaMalloc(&d, N));
    RT_OK(cudaMemcpy(d, src, N, cudaMemcpyHostToDevice));
    RT_OK(cudaMemset((char *)d + 16, 0xab, 16));
    RT_OK(cudaMemcpy(dst, d, N, cudaMemcpyDeviceToHost));
    for (int i = 0; i < N; i++)
        assert_int_equal(dst[i], i >= 16 && i < 32 ? 0xab : (unsigned char)i);
    struct cudaPointerAttributes a;
    RT_OK(cudaPointerGetAttributes(&a, d));
    assert_int_equal(a.type, cudaMemoryTypeDevice);
    assert_int_equal(a.device, 0);
    assert_ptr_equal(a.devicePointer, d);
    RT_OK(cudaFree(d));
    RT_OK(cudaFree(NULL));
    free(src);
    free(dst);
}

static void memcpy_refuses_a_bad_direction(void **state)
{
    (void)state;
    char a[8] = {0}, b[8] = {0};
    RT_IS(cudaMemcpy(a, b, sizeof a, (enum cudaMemcpyKind)7), cudaErrorInvalidMemcpyDirection);
    RT_IS(cudaGetLastError(), cudaErrorInvalidMemcpyDirection);
}

static void host_memory_is_reachable_from_the_device(void **state)
{
    (void)state;
    int *h = NULL;
    void *dptr = NULL;
    RT_OK(cudaHostAlloc((void **)&h, 4096, cudaHostAllocMapped));
    RT_OK(cudaHostGetDevicePointer(&dptr, h, 0));
    RT_OK(cudaMemset(dptr, 0, 4096));
    h[3] = 42;
    int v = 0;
    RT_OK(cudaMemcpy(&v, (int *)dptr + 3, sizeof v, cudaMemcpyDefault));
    assert_int_equal(v, 42);
    struct cudaPointerAttributes a;
    RT_OK(cudaPointerGetAttributes(&a, h));
    assert_int_equal(a.type, cudaMemoryTypeHost);
    RT_OK(cudaFreeHost(h));

    void *pinned = NULL;
    RT_OK(cudaMallocHost(&pinned, 64));
    RT_OK(cudaFreeHost(pinned));
}

static void registered_host_memory_gets_a_device_pointer(void **state)
{
    (void)state;
    size_t len = 1 << 16;
    char *buf = aligned_alloc(4096, len);
    RT_OK(cudaHostRegister(buf, len, cudaHostRegisterMapped));
    RT_IS(cudaHostRegister(buf, len, cudaHostRegisterMapped), cudaErrorHostMemoryAlreadyRegistered);
    void *d = NULL;
    RT_OK(cudaHostGetDevicePointer(&d, buf, 0));
    RT_OK(cudaMemset(d, 7, len));
    assert_int_equal(buf[len - 1], 7);
    RT_OK(cudaHostUnregister(buf));
    RT_IS(cudaHostUnregister(buf), cudaErrorHostMemoryNotRegistered);
    (void)cudaGetLastError();
    free(buf);
}

static void unknown_memory_is_unregistered(void **state)
{
    (void)state;
    int local = 0;
    struct cudaPointerAttributes a;
    RT_OK(cudaPointerGetAttributes(&a, &local));
    assert_int_equal(a.type, cudaMemoryTypeUnregistered);
    assert_null(a.devicePointer);
}

static void managed_memory_is_one_pointer_for_both_sides(void **state)
{
    (void)state;
    int *m = NULL;
    RT_OK(cudaMallocManaged((void **)&m, 256, cudaMemAttachGlobal));
    m[0] = 5;
    RT_OK(cudaMemset(m + 1, 0, sizeof(int)));
    int v = -1;
    RT_OK(cudaMemcpy(&v, m, sizeof v, cudaMemcpyDefault));
    assert_int_equal(v, 5);
    assert_int_equal(m[1], 0);
    RT_OK(cudaFree(m));
}

static void pitched_copy_and_memset_touch_only_their_rectangle(void **state)
{
    (void)state;
    void *d = NULL;
    size_t pitch = 0;
    RT_OK(cudaMallocPitch(&d, &pitch, 10, 4));
    assert_true(pitch >= 10);
    RT_OK(cudaMemset2D(d, pitch, 0, pitch, 4));
    RT_OK(cudaMemset2D(d, pitch, 1, 10, 4));
    char host[4][12];
    memset(host, 9, sizeof host);
    RT_OK(cudaMemcpy2D(host, 12, d, pitch, 11, 4, cudaMemcpyDeviceToHost));
    for (int r = 0; r < 4; r++) {
        for (int c = 0; c < 10; c++)
            assert_int_equal(host[r][c], 1);
        assert_int_equal(host[r][10], pitch > 10 ? 0 : 1);
        assert_int_equal(host[r][11], 9);
    }
    RT_IS(cudaMemcpy2D(host, 4, d, pitch, 10, 4, cudaMemcpyDeviceToHost), cudaErrorInvalidPitchValue);
    (void)cudaGetLastError();
    RT_OK(cudaFree(d));
}

static void mem_get_info_reports_free_below_total(void **state)
{
    (void)state;
    size_t free_b = 0, total = 0;
    RT_OK(cudaMemGetInfo(&free_b, &total));
    assert_true(total > 0 && free_b <= total);
}

static void peer_copy_moves_bytes(void **state)
{
    (void)state;
    int a = 0, b = 0;
    void *d0 = NULL;
    RT_OK(cudaMalloc(&d0, 64));
    RT_OK(cudaMemset(d0, 3, 64));
    char out[64];
    RT_OK(cudaMemcpyPeer(out, 0, d0, 0, sizeof out));
    assert_int_equal(out[63], 3);
    RT_OK(cudaDeviceCanAccessPeer(&a, 0, 0));
    (void)b;
    RT_IS(cudaMemcpyPeer(out, 0, d0, 1000, sizeof out), cudaErrorInvalidDevice);
    (void)cudaGetLastError();
    RT_OK(cudaFree(d0));
}

/* ---- streams, events, host work ---- */

static void mark(void *arg)
{
    int *order = arg;
    order[order[0] + 1] = order[0];
    order[0]++;
}

/* cudaMallocAsync from the device's current pool: the pool's counts follow
 * the allocation, and the free returns the bytes when the stream reaches
 * it. */
static void malloc_async_uses_the_device_pool_in_stream_order(void **state)
{
    (void)state;
    RT_OK(cudaSetDevice(0));
    cudaMemPool_t pool, current;
    RT_OK(cudaDeviceGetDefaultMemPool(&pool, 0));
    RT_OK(cudaDeviceGetMemPool(&current, 0));
    assert_ptr_equal(pool, current);
    cudaStream_t s;
    RT_OK(cudaStreamCreate(&s));
    void *p = NULL;
    RT_OK(cudaMallocAsync(&p, 1 << 20, s));
    assert_non_null(p);
    unsigned long long used = 0;
    RT_OK(cudaMemPoolGetAttribute(pool, cudaMemPoolAttrUsedMemCurrent, &used));
    assert_true(used >= (1u << 20));
    RT_OK(cudaMemsetAsync(p, 7, 1 << 20, s));
    unsigned char last = 0;
    RT_OK(cudaMemcpyAsync(&last, (char *)p + (1 << 20) - 1, 1, cudaMemcpyDeviceToHost, s));
    RT_OK(cudaFreeAsync(p, s));
    RT_OK(cudaStreamSynchronize(s));
    assert_int_equal(last, 7);
    RT_OK(cudaMemPoolGetAttribute(pool, cudaMemPoolAttrUsedMemCurrent, &used));
    assert_int_equal(used, 0);
    RT_IS(cudaMallocAsync(NULL, 1, s), cudaErrorInvalidValue);
    RT_IS(cudaMemPoolExportToShareableHandle(&used, pool, cudaMemHandleTypePosixFileDescriptor, 0),
          cudaErrorInvalidValue); /* the default pool is not for sharing */
    RT_OK(cudaStreamDestroy(s));
}

static void stream_runs_work_in_order(void **state)
{
    (void)state;
    cudaStream_t s;
    RT_OK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    enum { N = 1 << 20 };
    char *h = NULL, *back = NULL;
    void *d = NULL;
    RT_OK(cudaMallocHost((void **)&h, N));
    RT_OK(cudaMallocHost((void **)&back, N));
    RT_OK(cudaMalloc(&d, N));
    memset(h, 5, N);
    int order[8] = {0};
    RT_OK(cudaMemcpyAsync(d, h, N, cudaMemcpyHostToDevice, s));
    RT_OK(cudaLaunchHostFunc(s, mark, order));
    RT_OK(cudaMemsetAsync(d, 6, N / 2, s));
    RT_OK(cudaMemcpyAsync(back, d, N, cudaMemcpyDeviceToHost, s));
    RT_OK(cudaLaunchHostFunc(s, mark, order));
    RT_OK(cudaStreamSynchronize(s));
    RT_OK(cudaStreamQuery(s));
    assert_int_equal(order[0], 2);
    assert_int_equal(back[0], 6);
    assert_int_equal(back[N - 1], 5);
    unsigned flags = 0;
    RT_OK(cudaStreamGetFlags(s, &flags));
    assert_int_equal(flags, cudaStreamNonBlocking);
    RT_OK(cudaStreamDestroy(s));
    RT_OK(cudaFree(d));
    RT_OK(cudaFreeHost(h));
    RT_OK(cudaFreeHost(back));
}

/* A host function blocks its stream until the test lets it go; the event
 * recorded after it is not ready until then, and a second stream waiting
 * on the event runs only after it. */
static volatile int gate;
static void wait_gate(void *arg)
{
    (void)arg;
    while (!__atomic_load_n(&gate, __ATOMIC_ACQUIRE))
        ;
}

static void event_orders_two_streams(void **state)
{
    (void)state;
    cudaStream_t a, b;
    cudaEvent_t ev;
    RT_OK(cudaStreamCreate(&a));
    RT_OK(cudaStreamCreateWithPriority(&b, cudaStreamNonBlocking, 0));
    RT_OK(cudaEventCreateWithFlags(&ev, cudaEventDisableTiming));
    int order[8] = {0};
    __atomic_store_n(&gate, 0, __ATOMIC_RELEASE);
    RT_OK(cudaLaunchHostFunc(a, wait_gate, NULL));
    RT_OK(cudaLaunchHostFunc(a, mark, order));
    RT_OK(cudaEventRecord(ev, a));
    RT_OK(cudaStreamWaitEvent(b, ev, 0));
    RT_OK(cudaLaunchHostFunc(b, mark, order));
    RT_IS(cudaEventQuery(ev), cudaErrorNotReady);
    RT_IS(cudaStreamQuery(b), cudaErrorNotReady);
    /* Not ready is an answer, not an error the thread keeps. */
    RT_OK(cudaGetLastError());
    __atomic_store_n(&gate, 1, __ATOMIC_RELEASE);
    RT_OK(cudaStreamSynchronize(b));
    assert_int_equal(order[0], 2);
    assert_int_equal(order[1], 0); /* stream a's mark ran first */
    assert_int_equal(order[2], 1);
    RT_OK(cudaEventSynchronize(ev));
    RT_OK(cudaEventQuery(ev));
    RT_OK(cudaEventDestroy(ev));
    RT_OK(cudaStreamDestroy(a));
    RT_OK(cudaStreamDestroy(b));
}

static void timed_events_measure_elapsed_time(void **state)
{
    (void)state;
    cudaEvent_t start, stop;
    RT_OK(cudaEventCreate(&start));
    RT_OK(cudaEventCreate(&stop));
    RT_OK(cudaEventRecord(start, 0));
    RT_OK(cudaEventRecord(stop, 0));
    RT_OK(cudaEventSynchronize(stop));
    float ms = -1;
    RT_OK(cudaEventElapsedTime(&ms, start, stop));
    assert_true(ms >= 0);
    RT_OK(cudaEventDestroy(start));
    RT_OK(cudaEventDestroy(stop));
}

static int callback_status = -1;
static void on_callback(cudaStream_t s, cudaError_t status, void *arg)
{
    (void)s;
    callback_status = status;
    *(int *)arg = 1;
}

static void stream_callback_runs_with_success(void **state)
{
    (void)state;
    int ran = 0;
    RT_OK(cudaStreamAddCallback(0, on_callback, &ran, 0));
    RT_OK(cudaDeviceSynchronize());
    assert_int_equal(ran, 1);
    assert_int_equal(callback_status, cudaSuccess);
    RT_IS(cudaStreamAddCallback(0, on_callback, &ran, 1), cudaErrorInvalidValue);
    (void)cudaGetLastError();
}

static void streams_never_capture_and_graphs_are_refused(void **state)
{
    (void)state;
    cudaStream_t s;
    RT_OK(cudaStreamCreate(&s));
    enum cudaStreamCaptureStatus st = cudaStreamCaptureStatusActive;
    RT_OK(cudaStreamIsCapturing(s, &st));
    assert_int_equal(st, cudaStreamCaptureStatusNone);
    unsigned long long id = 99;
    st = cudaStreamCaptureStatusActive;
    RT_OK(cudaStreamGetCaptureInfo(s, &st, &id, NULL, NULL, NULL, NULL));
    assert_int_equal(st, cudaStreamCaptureStatusNone);
    enum cudaStreamCaptureMode mode = cudaStreamCaptureModeRelaxed;
    RT_OK(cudaThreadExchangeStreamCaptureMode(&mode));
    RT_OK(cudaThreadExchangeStreamCaptureMode(&mode));
    assert_int_equal(mode, cudaStreamCaptureModeRelaxed);
    RT_IS(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal), cudaErrorNotSupported);
    cudaGraph_t g = NULL;
    RT_IS(cudaGraphCreate(&g, 0), cudaErrorNotSupported);
    (void)cudaGetLastError();
    RT_OK(cudaStreamDestroy(s));
}

/* ---- errors ---- */

static void last_error_is_kept_until_read(void **state)
{
    (void)state;
    RT_OK(cudaGetLastError());
    RT_IS(cudaMalloc(NULL, 16), cudaErrorInvalidValue);
    /* A later successful call does not clear it; peeking does not either. */
    int n;
    RT_OK(cudaGetDeviceCount(&n));
    RT_IS(cudaPeekAtLastError(), cudaErrorInvalidValue);
    RT_IS(cudaPeekAtLastError(), cudaErrorInvalidValue);
    RT_IS(cudaGetLastError(), cudaErrorInvalidValue);
    RT_OK(cudaGetLastError());
    RT_OK(cudaPeekAtLastError());
}

static void *other_thread_last_error(void *arg)
{
    (void)arg;
    return (void *)(intptr_t)cudaPeekAtLastError();
}

static void last_error_belongs_to_its_thread(void **state)
{
    (void)state;
    RT_IS(cudaSetDevice(-1), cudaErrorInvalidDevice);
    pthread_t t;
    void *other = NULL;
    assert_int_equal(pthread_create(&t, NULL, other_thread_last_error, NULL), 0);
    assert_int_equal(pthread_join(t, &other), 0);
    assert_int_equal((intptr_t)other, cudaSuccess);
    RT_IS(cudaGetLastError(), cudaErrorInvalidDevice);
}

static void every_error_has_a_name_and_a_string(void **state)
{
    (void)state;
    assert_string_equal(cudaGetErrorName(cudaSuccess), "cudaSuccess");
    assert_string_equal(cudaGetErrorName(cudaErrorInvalidValue), "cudaErrorInvalidValue");
    assert_string_equal(cudaGetErrorName(cudaErrorNotSupported), "cudaErrorNotSupported");
    assert_string_equal(cudaGetErrorName(cudaErrorUnknown), "cudaErrorUnknown");
    for (int e = 0; e < 1000; e++) {
        const char *name = cudaGetErrorName((cudaError_t)e);
        const char *text = cudaGetErrorString((cudaError_t)e);
        assert_non_null(name);
        assert_non_null(text);
        assert_true(text[0] != '\0');
    }
    assert_string_equal(cudaGetErrorName((cudaError_t)12345), "unrecognized error code");
}

/* A copy into memory mapped without access faults: on a GPU that is an
 * illegal address, which leaves the context unusable, so every later call
 * reports it, and cudaGetLastError cannot clear it; cudaDeviceReset does. */
static void illegal_address_is_sticky_until_reset(void **state)
{
    (void)state;
    RT_OK(cudaSetDevice(0));
    CUmemAllocationProp prop;
    memset(&prop, 0, sizeof prop);
    prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
    prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    prop.location.id = 0;
    size_t g = 0;
    assert_int_equal(cuMemGetAllocationGranularity(&g, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM),
                     CUDA_SUCCESS);
    CUmemGenericAllocationHandle h;
    CUdeviceptr va;
    assert_int_equal(cuMemCreate(&h, g, &prop, 0), CUDA_SUCCESS);
    assert_int_equal(cuMemAddressReserve(&va, g, 0, 0, 0), CUDA_SUCCESS);
    assert_int_equal(cuMemMap(va, g, 0, h, 0), CUDA_SUCCESS);
    char buf[64] = {0};
    RT_IS(cudaMemcpy((void *)(uintptr_t)va, buf, sizeof buf, cudaMemcpyHostToDevice),
          cudaErrorIllegalAddress);
    void *d = NULL;
    RT_IS(cudaMalloc(&d, 16), cudaErrorIllegalAddress);
    RT_IS(cudaGetLastError(), cudaErrorIllegalAddress);
    RT_IS(cudaGetLastError(), cudaErrorIllegalAddress);
    RT_OK(cudaDeviceReset());
    RT_OK(cudaGetLastError());
    RT_OK(cudaMalloc(&d, 16));
    RT_OK(cudaFree(d));
    assert_int_equal(cuMemUnmap(va, g), CUDA_SUCCESS);
    assert_int_equal(cuMemAddressFree(va, g), CUDA_SUCCESS);
    assert_int_equal(cuMemRelease(h), CUDA_SUCCESS);
}

static void runtime_uses_a_context_the_driver_made_current(void **state)
{
    (void)state;
    int n = 0;
    RT_OK(cudaGetDeviceCount(&n));
    CUcontext primary = NULL, cur = NULL;
    assert_int_equal(cuDevicePrimaryCtxRetain(&primary, n - 1), CUDA_SUCCESS);
    assert_int_equal(cuCtxSetCurrent(primary), CUDA_SUCCESS);
    int dev = -1;
    RT_OK(cudaGetDevice(&dev));
    assert_int_equal(dev, n - 1);
    void *d = NULL;
    RT_OK(cudaMalloc(&d, 16));
    struct cudaPointerAttributes a;
    RT_OK(cudaPointerGetAttributes(&a, d));
    assert_int_equal(a.device, n - 1);
    RT_OK(cudaFree(d));
    assert_int_equal(cuCtxGetCurrent(&cur), CUDA_SUCCESS);
    assert_ptr_equal(cur, primary);
    assert_int_equal(cuDevicePrimaryCtxRelease(n - 1), CUDA_SUCCESS);
}

/* ---- driver entry points ---- */

typedef CUresult (*get_count_fn)(int *);

static void driver_entry_point_reaches_the_driver(void **state)
{
    (void)state;
    void *fn = NULL;
    enum cudaDriverEntryPointQueryResult q = cudaDriverEntryPointSymbolNotFound;
    /* Deprecated in CUDA 13 in favour of ByVersion, and still what older
     * NCCL and PyTorch call. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
    RT_OK(cudaGetDriverEntryPoint("cuDeviceGetCount", &fn, cudaEnableDefault, &q));
#pragma GCC diagnostic pop
    assert_int_equal(q, cudaDriverEntryPointSuccess);
    assert_non_null(fn);
    int n = 0, m = 0;
    get_count_fn get_count;
    memcpy(&get_count, &fn, sizeof get_count);
    assert_int_equal(get_count(&n), CUDA_SUCCESS);
    RT_OK(cudaGetDeviceCount(&m));
    assert_int_equal(n, m);
    fn = NULL;
    RT_OK(cudaGetDriverEntryPointByVersion("cuMemCreate", &fn, 13000, cudaEnableDefault, &q));
    assert_int_equal(q, cudaDriverEntryPointSuccess);
    assert_non_null(fn);
    RT_OK(cudaGetDriverEntryPointByVersion("cuNoSuchCall", &fn, 13000, cudaEnableDefault, &q));
    assert_int_equal(q, cudaDriverEntryPointSymbolNotFound);
    assert_null(fn);
}

static const struct CMUnitTest tests[] = {
    cmocka_unit_test(runtime_counts_devices_and_sets_one),
    cmocka_unit_test(device_properties_match_the_driver),
    cmocka_unit_test(versions_are_reported),
    cmocka_unit_test(pci_bus_id_round_trips),
    cmocka_unit_test(memory_round_trips_through_device_memory),
    cmocka_unit_test(memcpy_refuses_a_bad_direction),
    cmocka_unit_test(host_memory_is_reachable_from_the_device),
    cmocka_unit_test(registered_host_memory_gets_a_device_pointer),
    cmocka_unit_test(unknown_memory_is_unregistered),
    cmocka_unit_test(managed_memory_is_one_pointer_for_both_sides),
    cmocka_unit_test(pitched_copy_and_memset_touch_only_their_rectangle),
    cmocka_unit_test(mem_get_info_reports_free_below_total),
    cmocka_unit_test(peer_copy_moves_bytes),
    cmocka_unit_test(malloc_async_uses_the_device_pool_in_stream_order),
    cmocka_unit_test(stream_runs_work_in_order),
    cmocka_unit_test(event_orders_two_streams),
    cmocka_unit_test(timed_events_measure_elapsed_time),
    cmocka_unit_test(stream_callback_runs_with_success),
    cmocka_unit_test(streams_never_capture_and_graphs_are_refused),
    cmocka_unit_test(last_error_is_kept_until_read),
    cmocka_unit_test(last_error_belongs_to_its_thread),
    cmocka_unit_test(every_error_has_a_name_and_a_string),
    cmocka_unit_test(illegal_address_is_sticky_until_reset),
    cmocka_unit_test(runtime_uses_a_context_the_driver_made_current),
    cmocka_unit_test(driver_entry_point_reaches_the_driver),
};

FAB_TEST_MAIN_NO_HELPERS("cudart", tests)
