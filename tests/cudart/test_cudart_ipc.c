/* The runtime's legacy IPC (cudaIpc*) and pool sharing between real processes, against
 * cuda_runtime_api.h only: a cudaMalloc allocation and an interprocess
 * event are shared through their 64-byte handles, sent over a socket pair
 * to this binary re-run as a helper. The driver does the sharing through
 * the fabric daemon, which each test starts for itself
 * (tests/fabric/daemon_harness.c) and stops by pid. */
#include <cuda_runtime_api.h>
#include <stdio.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include "fabtest.h"
#include "../fabric/daemon_harness.h"

#define RT_OK(call) assert_int_equal((call), cudaSuccess)
#define RT_IS(call, code) assert_int_equal((call), (code))
#define HELPER_RT(call, code)              \
    do {                                   \
        if ((call) != cudaSuccess)         \
            return (code);                 \
    } while (0)

#define SIZE (1u << 20)

/* helper "opener": receive a memory handle, open it, check byte 0 is 42,
 * write 43 at byte 1, close it, say "done". */
static int helper_opener(int argc, char **argv, int sock)
{
    (void)argc;
    (void)argv;
    HELPER_RT(cudaSetDevice(0), 10);
    if (fab_test_send_word(sock, "ready") != 0)
        return 11;
    cudaIpcMemHandle_t h;
    if (fab_test_recv(sock, h.reserved, sizeof(h.reserved)) != 0)
        return 12;
    void *p = NULL;
    HELPER_RT(cudaIpcOpenMemHandle(&p, h, cudaIpcMemLazyEnablePeerAccess), 13);
    unsigned char b = 0;
    HELPER_RT(cudaMemcpy(&b, p, 1, cudaMemcpyDeviceToHost), 14);
    if (b != 42)
        return 15;
    HELPER_RT(cudaMemset((char *)p + 1, 43, 1), 16);
    HELPER_RT(cudaDeviceSynchronize(), 17);
    HELPER_RT(cudaIpcCloseMemHandle(p), 18);
    return fab_test_send_word(sock, "done") == 0 ? 0 : 19;
}

/* helper "waiter": receive an event handle, open it, wait for it with
 * cudaStreamWaitEvent and cudaEventSynchronize, say its query's name. */
static int helper_waiter(int argc, char **argv, int sock)
{
    (void)argc;
    (void)argv;
    HELPER_RT(cudaSetDevice(0), 10);
    if (fab_test_send_word(sock, "ready") != 0)
        return 11;
    cudaIpcEventHandle_t h;
    if (fab_test_recv(sock, h.reserved, sizeof(h.reserved)) != 0)
        return 12;
    cudaEvent_t e;
    HELPER_RT(cudaIpcOpenEventHandle(&e, h), 13);
    cudaStream_t s;
    HELPER_RT(cudaStreamCreate(&s), 14);
    HELPER_RT(cudaStreamWaitEvent(s, e, 0), 15);
    HELPER_RT(cudaStreamSynchronize(s), 16);
    HELPER_RT(cudaEventSynchronize(e), 17);
    const char *name = cudaGetErrorName(cudaEventQuery(e));
    HELPER_RT(cudaStreamDestroy(s), 18);
    return fab_test_send_word(sock, name) == 0 ? 0 : 19;
}

/* helper "pool_importer": receive a pool's fd and one pointer's export
 * data, import both, check the first byte is 42, write 43 at byte 1, free
 * the imported pointer, say "done". */
static int helper_pool_importer(int argc, char **argv, int sock)
{
    (void)argc;
    (void)argv;
    HELPER_RT(cudaSetDevice(0), 10);
    if (fab_test_send_word(sock, "ready") != 0)
        return 11;
    int fd = fab_test_recv_fd(sock);
    struct cudaMemPoolPtrExportData data;
    if (fd < 0 || fab_test_recv(sock, data.reserved, sizeof(data.reserved)) != 0)
        return 12;
    cudaMemPool_t pool;
    HELPER_RT(cudaMemPoolImportFromShareableHandle(&pool, (void *)(uintptr_t)fd,
                                                   cudaMemHandleTypePosixFileDescriptor, 0),
              13);
    void *p = NULL;
    HELPER_RT(cudaMemPoolImportPointer(&p, pool, &data), 14);
    unsigned char b = 0;
    HELPER_RT(cudaMemcpy(&b, p, 1, cudaMemcpyDeviceToHost), 15);
    if (b != 42)
        return 16;
    HELPER_RT(cudaMemset((char *)p + 1, 43, 1), 17);
    HELPER_RT(cudaDeviceSynchronize(), 18);
    HELPER_RT(cudaFree(p), 19);
    return fab_test_send_word(sock, "done") == 0 ? 0 : 20;
}

static void run_peer(const char *name, const void *handle, size_t len, const char *want)
{
    fab_test_child_t child;
    assert_int_equal(fab_test_spawn(name, NULL, NULL, &child), 0);
    assert_int_equal(fab_test_expect_word(child.sock, "ready"), 0);
    assert_int_equal(fab_test_send(child.sock, handle, len), 0);
    assert_int_equal(fab_test_expect_word(child.sock, want), 0);
    assert_int_equal(fab_test_reap(&child), 0);
}

static void ipc_memory_is_shared_with_another_process(void **state)
{
    (void)state;
    assert_non_null(fab_test_daemon_start(NULL, NULL));
    void *p = NULL;
    RT_OK(cudaMalloc(&p, SIZE));
    RT_OK(cudaMemset(p, 42, 1));
    RT_OK(cudaDeviceSynchronize());
    cudaIpcMemHandle_t h;
    RT_OK(cudaIpcGetMemHandle(&h, p));
    run_peer("opener", h.reserved, sizeof(h.reserved), "done");
    unsigned char b = 0;
    RT_OK(cudaMemcpy(&b, (char *)p + 1, 1, cudaMemcpyDeviceToHost));
    assert_int_equal(b, 43); /* the peer's write, in the same pages */
    RT_OK(cudaFree(p));
}

/* The driver's INVALID_CONTEXT is the runtime's "invalid device context",
 * what UCX reports for a process opening its own handle. */
static void opening_ones_own_handle_is_an_invalid_device_context(void **state)
{
    (void)state;
    assert_non_null(fab_test_daemon_start(NULL, NULL));
    void *p = NULL, *q = NULL;
    RT_OK(cudaMalloc(&p, SIZE));
    cudaIpcMemHandle_t h;
    RT_OK(cudaIpcGetMemHandle(&h, p));
    RT_IS(cudaIpcOpenMemHandle(&q, h, cudaIpcMemLazyEnablePeerAccess),
          cudaErrorDeviceUninitialized);
    assert_int_equal(cudaGetLastError(), cudaErrorDeviceUninitialized);
    RT_IS(cudaIpcGetMemHandle(NULL, p), cudaErrorInvalidValue);
    RT_OK(cudaFree(p));
}

static void ipc_event_recorded_here_is_waited_on_there(void **state)
{
    (void)state;
    assert_non_null(fab_test_daemon_start(NULL, NULL));
    cudaEvent_t plain, e;
    RT_OK(cudaEventCreate(&plain));
    cudaIpcEventHandle_t h;
    RT_IS(cudaIpcGetEventHandle(&h, plain), cudaErrorInvalidValue); /* not interprocess */
    RT_OK(cudaEventCreateWithFlags(&e, cudaEventInterprocess | cudaEventDisableTiming));
    RT_OK(cudaEventRecord(e, 0));
    RT_OK(cudaIpcGetEventHandle(&h, e));
    run_peer("waiter", h.reserved, sizeof(h.reserved), "cudaSuccess");
    RT_OK(cudaEventDestroy(e));
    RT_OK(cudaEventDestroy(plain));
}

/* cudaMallocAsync memory from a pool made for sharing: the pool travels as
 * a file descriptor, the pointer as 64 bytes of export data (what UCX and
 * PyTorch do), and the importer sees and writes the same bytes. */
static void pool_and_pointer_are_shared_with_another_process(void **state)
{
    (void)state;
    RT_OK(cudaSetDevice(0));
    struct cudaMemPoolProps props;
    memset(&props, 0, sizeof(props));
    props.allocType = cudaMemAllocationTypePinned;
    props.handleTypes = cudaMemHandleTypePosixFileDescriptor;
    props.location.type = cudaMemLocationTypeDevice;
    props.location.id = 0;
    cudaMemPool_t pool;
    RT_OK(cudaMemPoolCreate(&pool, &props));
    cudaStream_t s;
    RT_OK(cudaStreamCreate(&s));
    void *p = NULL;
    RT_OK(cudaMallocFromPoolAsync(&p, SIZE, pool, s));
    RT_OK(cudaMemsetAsync(p, 42, 1, s));
    RT_OK(cudaStreamSynchronize(s));
    int fd = -1;
    RT_OK(cudaMemPoolExportToShareableHandle(&fd, pool, cudaMemHandleTypePosixFileDescriptor, 0));
    struct cudaMemPoolPtrExportData data;
    RT_OK(cudaMemPoolExportPointer(&data, p));

    fab_test_child_t child;
    assert_int_equal(fab_test_spawn("pool_importer", NULL, NULL, &child), 0);
    assert_int_equal(fab_test_expect_word(child.sock, "ready"), 0);
    assert_int_equal(fab_test_send_fd(child.sock, fd), 0);
    assert_int_equal(fab_test_send(child.sock, data.reserved, sizeof(data.reserved)), 0);
    assert_int_equal(fab_test_expect_word(child.sock, "done"), 0);
    assert_int_equal(fab_test_reap(&child), 0);
    close(fd);

    unsigned char b = 0;
    RT_OK(cudaMemcpy(&b, (char *)p + 1, 1, cudaMemcpyDeviceToHost));
    assert_int_equal(b, 43);
    RT_OK(cudaFreeAsync(p, s));
    RT_OK(cudaStreamSynchronize(s));
    RT_OK(cudaStreamDestroy(s));
    RT_OK(cudaMemPoolDestroy(pool));
}

static const struct CMUnitTest tests[] = {
    cmocka_unit_test_teardown(ipc_memory_is_shared_with_another_process, fab_test_teardown),
    cmocka_unit_test_teardown(opening_ones_own_handle_is_an_invalid_device_context,
                              fab_test_teardown),
    cmocka_unit_test_teardown(ipc_event_recorded_here_is_waited_on_there, fab_test_teardown),
    cmocka_unit_test(pool_and_pointer_are_shared_with_another_process),
};

static const fab_test_helper_t helpers[] = {
    {"opener", helper_opener},
    {"waiter", helper_waiter},
    {"pool_importer", helper_pool_importer},
};

FAB_TEST_MAIN("cudart", tests, helpers)
