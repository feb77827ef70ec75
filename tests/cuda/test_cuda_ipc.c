/* Legacy CUDA IPC through the daemon, against cuda.h only: a cuMemAlloc
 * allocation's IPC handle travels over a socket and another process of the
 * same node maps the same pages; the driver's rules (no self-open, same node
 * only, cuMemAlloc memory only, forged or withdrawn handles refused, the
 * exporter's cuMemFree or death withdrawing its handles while mappings stay)
 * and interprocess events. Each test starts its own fabmemd
 * (tests/fabric/daemon_harness.c) and stops it by pid; the peer is this
 * binary re-run as a helper. */
#include "cuda_test.h"

#include <fcntl.h>
#include <grp.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "../fabric/daemon_harness.h"

#define SIZE (1u << 20)

static void helper_init(void)
{
    CUcontext ctx;
    if (cuInit(0) != CUDA_SUCCESS || cuDevicePrimaryCtxRetain(&ctx, 0) != CUDA_SUCCESS ||
        cuCtxSetCurrent(ctx) != CUDA_SUCCESS)
        exit(10);
}

static const char *name_of(CUresult r)
{
    const char *name = "?";
    cuGetErrorName(r, &name);
    return name;
}

/* helper "opener" [twice]: receive a handle, open it, check byte 0 is 42,
 * write 43 at byte 1; with twice, check that a second open is refused while
 * the first is open and that cuMemFree refuses the mapping, then close and
 * open it again; close; say the open's status by name. */
static int helper_opener(int argc, char **argv, int sock)
{
    helper_init();
    bool twice = argc > 1 && strcmp(argv[1], "twice") == 0;
    if (fab_test_send_word(sock, "ready") != 0)
        return 13;
    CUipcMemHandle h;
    if (fab_test_recv(sock, h.reserved, sizeof(h.reserved)) != 0)
        return 14;
    CUdeviceptr p = 0;
    CUresult r = cuIpcOpenMemHandle(&p, h, CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS);
    if (r == CUDA_SUCCESS) {
        unsigned char b = 0;
        HELPER_CU(cuMemcpyDtoH(&b, p, 1), 15);
        if (b != 42)
            return 16;
        HELPER_CU(cuMemsetD8(p + 1, 43, 1), 17);
        if (twice) {
            CUdeviceptr q = 0;
            if (cuIpcOpenMemHandle(&q, h, 0) != CUDA_ERROR_ALREADY_MAPPED)
                return 18;
            if (cuMemFree(p) != CUDA_ERROR_INVALID_VALUE)
                return 19;
            HELPER_CU(cuIpcCloseMemHandle(p), 20);
            if (cuIpcCloseMemHandle(p) != CUDA_ERROR_INVALID_VALUE)
                return 21;
            HELPER_CU(cuIpcOpenMemHandle(&p, h, 0), 22);
        }
        HELPER_CU(cuIpcCloseMemHandle(p), 23);
    }
    return fab_test_send_word(sock, name_of(r)) == 0 ? 0 : 24;
}

/* helper "forger": receive a handle, try it with one byte altered, then
 * bytes the daemon never minted; say both statuses. */
static int helper_forger(int argc, char **argv, int sock)
{
    (void)argc;
    (void)argv;
    helper_init();
    if (fab_test_send_word(sock, "ready") != 0)
        return 13;
    CUipcMemHandle h;
    if (fab_test_recv(sock, h.reserved, sizeof(h.reserved)) != 0)
        return 14;
    CUdeviceptr p;
    h.reserved[24] ^= 1; /* the size, say */
    CUresult altered = cuIpcOpenMemHandle(&p, h, 0);
    memset(h.reserved, 0x5a, sizeof(h.reserved));
    CUresult forged = cuIpcOpenMemHandle(&p, h, 0);
    if (fab_test_send_word(sock, name_of(altered)) != 0)
        return 15;
    return fab_test_send_word(sock, name_of(forged)) == 0 ? 0 : 16;
}

/* helper "keeper": receive a handle, open it, say "opened"; wait for
 * "freed" (the exporter freed it), check byte 0 is still 42 through the
 * mapping, close it, open it again and say that status. */
static int helper_keeper(int argc, char **argv, int sock)
{
    (void)argc;
    (void)argv;
    helper_init();
    if (fab_test_send_word(sock, "ready") != 0)
        return 13;
    CUipcMemHandle h;
    if (fab_test_recv(sock, h.reserved, sizeof(h.reserved)) != 0)
        return 14;
    CUdeviceptr p;
    HELPER_CU(cuIpcOpenMemHandle(&p, h, 0), 15);
    if (fab_test_send_word(sock, "opened") != 0 || fab_test_expect_word(sock, "freed") != 0)
        return 16;
    unsigned char b = 0;
    HELPER_CU(cuMemcpyDtoH(&b, p, 1), 17);
    if (b != 42)
        return 18;
    HELPER_CU(cuIpcCloseMemHandle(p), 19);
    return fab_test_send_word(sock, name_of(cuIpcOpenMemHandle(&p, h, 0))) == 0 ? 0 : 20;
}

/* helper "exporter": allocate, write 42, send the handle, exit without
 * freeing (as a process that dies does). */
static int helper_exporter(int argc, char **argv, int sock)
{
    (void)argc;
    (void)argv;
    helper_init();
    CUdeviceptr p;
    HELPER_CU(cuMemAlloc(&p, SIZE), 11);
    HELPER_CU(cuMemsetD8(p, 42, 1), 12);
    CUipcMemHandle h;
    HELPER_CU(cuIpcGetMemHandle(&h, p), 13);
    return fab_test_send(sock, h.reserved, sizeof(h.reserved)) == 0 ? 0 : 14;
}

/* helper "event_waiter": receive an event handle; check that
 * cuIpcOpenMemHandle refuses it; open it; say the query's status (the
 * parent recorded it behind a gate); wait for it on a stream of ours and
 * with cuEventSynchronize (the parent opens the gate after "waiting"); say
 * the query's status again. */
static int helper_event_waiter(int argc, char **argv, int sock)
{
    (void)argc;
    (void)argv;
    helper_init();
    if (fab_test_send_word(sock, "ready") != 0)
        return 13;
    CUipcEventHandle h;
    if (fab_test_recv(sock, h.reserved, sizeof(h.reserved)) != 0)
        return 14;
    CUipcMemHandle as_mem;
    memcpy(as_mem.reserved, h.reserved, sizeof(h.reserved));
    CUdeviceptr p;
    if (cuIpcOpenMemHandle(&p, as_mem, 0) != CUDA_ERROR_INVALID_VALUE)
        return 15;
    CUevent e;
    HELPER_CU(cuIpcOpenEventHandle(&e, h), 16);
    if (fab_test_send_word(sock, name_of(cuEventQuery(e))) != 0)
        return 17;
    CUstream s;
    HELPER_CU(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING), 18);
    HELPER_CU(cuStreamWaitEvent(s, e, 0), 19);
    if (fab_test_send_word(sock, "waiting") != 0)
        return 20;
    HELPER_CU(cuStreamSynchronize(s), 21);
    HELPER_CU(cuEventSynchronize(e), 22);
    if (fab_test_send_word(sock, name_of(cuEventQuery(e))) != 0)
        return 23;
    HELPER_CU(cuStreamDestroy(s), 24);
    HELPER_CU(cuEventDestroy(e), 25);
    return 0;
}

/* An allocation holding 42 at byte 0, and its handle. */
static CUdeviceptr export_42(CUipcMemHandle *h)
{
    cut_init(0);
    CUdeviceptr p;
    CU_OK(cuMemAlloc(&p, SIZE));
    CU_OK(cuMemsetD8(p, 0, SIZE));
    CU_OK(cuMemsetD8(p, 42, 1));
    CU_OK(cuIpcGetMemHandle(h, p));
    return p;
}

/* Spawn helper name (args, env), send it h, expect the word want. */
static void run_peer(const char *name, const char *const *args, const char *const *env,
                     const CUipcMemHandle *h, const char *want)
{
    fab_test_child_t child;
    assert_int_equal(fab_test_spawn(name, args, env, &child), 0);
    assert_int_equal(fab_test_expect_word(child.sock, "ready"), 0);
    assert_int_equal(fab_test_send(child.sock, h->reserved, sizeof(h->reserved)), 0);
    assert_int_equal(fab_test_expect_word(child.sock, want), 0);
    assert_int_equal(fab_test_reap(&child), 0);
}

static void ipc_memory_is_shared_both_ways(void **state)
{
    (void)state;
    assert_non_null(fab_test_daemon_start(NULL, NULL));
    CUipcMemHandle h, again;
    CUdeviceptr p = export_42(&h);
    CU_OK(cuIpcGetMemHandle(&again, p));
    assert_memory_equal(h.reserved, again.reserved, sizeof(h.reserved)); /* cached */
    const char *const args[] = {"twice", NULL};
    run_peer("opener", args, NULL, &h, "CUDA_SUCCESS");
    unsigned char b = 0;
    CU_OK(cuMemcpyDtoH(&b, p + 1, 1));
    assert_int_equal(b, 43); /* the peer's write, in the very same pages */
    CU_OK(cuMemFree(p));
}

/* The driver answers an address inside a cuMemAlloc allocation with the
 * allocation's handle, the base's bytes, and the open maps the base (CuPy's
 * pool, UCX and PyTorch send the offset apart): asked first inside, then at
 * the base, the bytes are the same, and the peer's open sees the base. */
static void an_address_inside_an_allocation_names_the_whole_allocation(void **state)
{
    (void)state;
    assert_non_null(fab_test_daemon_start(NULL, NULL));
    cut_init(0);
    CUdeviceptr p;
    CU_OK(cuMemAlloc(&p, SIZE));
    CU_OK(cuMemsetD8(p, 42, 1));
    CUipcMemHandle inside, base, last;
    CU_OK(cuIpcGetMemHandle(&inside, p + 4096));
    CU_OK(cuIpcGetMemHandle(&base, p));
    CU_OK(cuIpcGetMemHandle(&last, p + SIZE - 1));
    assert_memory_equal(inside.reserved, base.reserved, sizeof(base.reserved));
    assert_memory_equal(last.reserved, base.reserved, sizeof(base.reserved));
    CUipcMemHandle past;
    CUdeviceptr q;
    CU_OK(cuMemAlloc(&q, SIZE));
    CU_OK(cuIpcGetMemHandle(&past, q));
    /* another allocation, even the next one, has bytes of its own */
    assert_memory_not_equal(past.reserved, base.reserved, sizeof(base.reserved));
    run_peer("opener", NULL, NULL, &inside, "CUDA_SUCCESS"); /* byte 0 is 42 */
    unsigned char b = 0;
    CU_OK(cuMemcpyDtoH(&b, p + 1, 1));
    assert_int_equal(b, 43);
    CU_OK(cuMemFree(q));
    CU_OK(cuMemFree(p));
}

static void opening_ones_own_handle_is_an_invalid_context(void **state)
{
    (void)state;
    assert_non_null(fab_test_daemon_start(NULL, NULL));
    CUipcMemHandle h;
    CUdeviceptr p = export_42(&h), q;
    CU_IS(cuIpcOpenMemHandle(&q, h, 0), CUDA_ERROR_INVALID_CONTEXT);
    CU_OK(cuMemFree(p));
}

static const char two_nodes[] = "[channel 0]\nuids = 0\n"
                                "[node a]\ngpus = 1\n"
                                "[node b]\ngpus = 1\n";

static void a_handle_from_another_node_is_refused(void **state)
{
    (void)state;
    assert_non_null(fab_test_daemon_start(two_nodes, NULL));
    setenv("FABMEM_NODE", "a", 1);
    CUipcMemHandle h;
    CUdeviceptr p = export_42(&h);
    const char *const b[] = {"FABMEM_NODE=b", NULL};
    run_peer("opener", NULL, b, &h, "CUDA_ERROR_INVALID_VALUE");
    run_peer("opener", NULL, NULL, &h, "CUDA_SUCCESS"); /* node a, as ours */
    CU_OK(cuMemFree(p));
}

static void forged_and_altered_handles_are_refused(void **state)
{
    (void)state;
    assert_non_null(fab_test_daemon_start(NULL, NULL));
    CUipcMemHandle h;
    CUdeviceptr p = export_42(&h);
    fab_test_child_t child;
    assert_int_equal(fab_test_spawn("forger", NULL, NULL, &child), 0);
    assert_int_equal(fab_test_expect_word(child.sock, "ready"), 0);
    assert_int_equal(fab_test_send(child.sock, h.reserved, sizeof(h.reserved)), 0);
    assert_int_equal(fab_test_expect_word(child.sock, "CUDA_ERROR_INVALID_VALUE"), 0);
    assert_int_equal(fab_test_expect_word(child.sock, "CUDA_ERROR_INVALID_VALUE"), 0);
    assert_int_equal(fab_test_reap(&child), 0);
    CU_OK(cuMemFree(p));
}

static void free_withdraws_the_handle_but_mappings_stay(void **state)
{
    (void)state;
    assert_non_null(fab_test_daemon_start(NULL, NULL));
    CUipcMemHandle h;
    CUdeviceptr p = export_42(&h);
    fab_test_child_t child;
    assert_int_equal(fab_test_spawn("keeper", NULL, NULL, &child), 0);
    assert_int_equal(fab_test_expect_word(child.sock, "ready"), 0);
    assert_int_equal(fab_test_send(child.sock, h.reserved, sizeof(h.reserved)), 0);
    assert_int_equal(fab_test_expect_word(child.sock, "opened"), 0);
    CU_OK(cuMemFree(p));
    assert_int_equal(fab_test_send_word(child.sock, "freed"), 0);
    assert_int_equal(fab_test_expect_word(child.sock, "CUDA_ERROR_INVALID_VALUE"), 0);
    assert_int_equal(fab_test_reap(&child), 0);
}

static void only_cumemalloc_memory_has_a_handle(void **state)
{
    (void)state;
    assert_non_null(fab_test_daemon_start(NULL, NULL));
    cut_init(0);
    CUipcMemHandle h;
    void *host;
    CU_OK(cuMemAllocHost(&host, SIZE));
    CU_IS(cuIpcGetMemHandle(&h, (CUdeviceptr)(uintptr_t)host), CUDA_ERROR_INVALID_VALUE);
    CU_OK(cuMemFreeHost(host));
    CUmemAllocationProp prop = cut_prop(CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0);
    size_t gran = cut_granularity(0);
    CUmemGenericAllocationHandle vh;
    CU_OK(cuMemCreate(&vh, gran, &prop, 0));
    CUdeviceptr v = cut_map_rw(vh, gran);
    CU_IS(cuIpcGetMemHandle(&h, v), CUDA_ERROR_INVALID_VALUE);
    CU_OK(cuMemRelease(vh));
    cut_unmap_free(v, gran);
    CUdeviceptr p;
    CU_OK(cuMemAlloc(&p, SIZE));
    CU_IS(cuIpcGetMemHandle(NULL, p), CUDA_ERROR_INVALID_VALUE);
    CU_OK(cuMemFree(p));
}

static void an_exporter_that_dies_takes_its_handles_with_it(void **state)
{
    (void)state;
    fab_test_daemon_t *d = fab_test_daemon_start(NULL, NULL);
    assert_non_null(d);
    cut_init(0);
    fab_test_child_t child;
    assert_int_equal(fab_test_spawn("exporter", NULL, NULL, &child), 0);
    CUipcMemHandle h;
    assert_int_equal(fab_test_recv(child.sock, h.reserved, sizeof(h.reserved)), 0);
    assert_int_equal(fab_test_reap(&child), 0);
    /* The daemon learns of the death when it reads the hang-up, maybe after
     * our first opens: each open is a round trip, which gives it the turn. */
    CUresult r = CUDA_SUCCESS;
    for (int i = 0; i < 1000 && r == CUDA_SUCCESS; i++) {
        CUdeviceptr p;
        r = cuIpcOpenMemHandle(&p, h, 0);
        if (r == CUDA_SUCCESS)
            CU_OK(cuIpcCloseMemHandle(p));
    }
    CU_IS(r, CUDA_ERROR_INVALID_VALUE);
    assert_true(fab_test_daemon_log_contains(d, "left with 1 IPC handles: withdrawn"));
}

static void closing_what_was_not_opened_is_refused(void **state)
{
    (void)state;
    assert_non_null(fab_test_daemon_start(NULL, NULL));
    cut_init(0);
    CUdeviceptr p;
    CU_OK(cuMemAlloc(&p, SIZE));
    CU_IS(cuIpcCloseMemHandle(p), CUDA_ERROR_INVALID_VALUE);
    CU_IS(cuIpcCloseMemHandle((CUdeviceptr)0x1000), CUDA_ERROR_INVALID_VALUE);
    CU_OK(cuMemFree(p)); /* still ours */
}

static void without_a_daemon_ipc_is_not_supported(void **state)
{
    (void)state;
    cut_init(0); /* the test environment's socket has no daemon */
    CUdeviceptr p;
    CU_OK(cuMemAlloc(&p, SIZE));
    CUipcMemHandle h;
    CU_IS(cuIpcGetMemHandle(&h, p), CUDA_ERROR_NOT_SUPPORTED);
    memset(&h, 0, sizeof(h));
    CUdeviceptr q;
    CU_IS(cuIpcOpenMemHandle(&q, h, 0), CUDA_ERROR_NOT_SUPPORTED);
    CU_OK(cuMemFree(p));
}

static void ipc_calls_are_found_at_their_versions(void **state)
{
    (void)state;
    cut_init(0);
    void *fn = NULL, *v2;
    CUdriverProcAddressQueryResult found;
    CUresult (*direct)(CUdeviceptr *, CUipcMemHandle, unsigned int) = cuIpcOpenMemHandle;
    memcpy(&v2, &direct, sizeof(v2)); /* ISO C has no cast between the two */
    CU_OK(cuGetProcAddress("cuIpcOpenMemHandle", &fn, 11000, 0, &found));
    assert_int_equal(found, CU_GET_PROC_ADDRESS_SUCCESS);
    assert_ptr_equal(fn, v2); /* cuda.h's _v2 */
    CU_OK(cuGetProcAddress("cuIpcOpenMemHandle", &fn, 4010, 0, &found));
    assert_non_null(fn);
    assert_ptr_not_equal(fn, v2); /* the 4.1 ABI */
    const char *names[] = {"cuIpcGetMemHandle", "cuIpcCloseMemHandle", "cuIpcGetEventHandle",
                           "cuIpcOpenEventHandle"};
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
        CU_OK(cuGetProcAddress(names[i], &fn, 4010, 0, &found));
        assert_int_equal(found, CU_GET_PROC_ADDRESS_SUCCESS);
        CU_OK(cuGetProcAddress(names[i], &fn, 4000, 0, &found));
        assert_int_equal(found, CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT);
    }
}

static void an_event_recorded_here_is_waited_for_in_another_process(void **state)
{
    (void)state;
    assert_non_null(fab_test_daemon_start(NULL, NULL));
    cut_init(0);
    CUevent plain, e;
    CUipcEventHandle h;
    CU_OK(cuEventCreate(&plain, CU_EVENT_DISABLE_TIMING));
    CU_IS(cuIpcGetEventHandle(&h, plain), CUDA_ERROR_INVALID_VALUE); /* not interprocess */
    CU_OK(cuEventDestroy(plain));
    CU_OK(cuEventCreate(&e, CU_EVENT_INTERPROCESS | CU_EVENT_DISABLE_TIMING));
    /* The record waits behind a gate: a word the stream waits to see 1. */
    CUdeviceptr gate;
    CU_OK(cuMemAlloc(&gate, 4));
    CU_OK(cuMemsetD32(gate, 0, 1));
    CUstream s;
    CU_OK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
    CU_OK(cuStreamWaitValue32(s, gate, 1, CU_STREAM_WAIT_VALUE_GEQ));
    CU_OK(cuEventRecord(e, s));
    CU_OK(cuIpcGetEventHandle(&h, e));
    fab_test_child_t child;
    assert_int_equal(fab_test_spawn("event_waiter", NULL, NULL, &child), 0);
    assert_int_equal(fab_test_expect_word(child.sock, "ready"), 0);
    assert_int_equal(fab_test_send(child.sock, h.reserved, sizeof(h.reserved)), 0);
    assert_int_equal(fab_test_expect_word(child.sock, "CUDA_ERROR_NOT_READY"), 0);
    assert_int_equal(fab_test_expect_word(child.sock, "waiting"), 0);
    /* Unified addressing: the device word is this host address. */
    __atomic_store_n((uint32_t *)(uintptr_t)gate, 1u, __ATOMIC_RELEASE);
    assert_int_equal(fab_test_expect_word(child.sock, "CUDA_SUCCESS"), 0);
    assert_int_equal(fab_test_reap(&child), 0);
    CU_OK(cuEventQuery(e));
    CU_OK(cuStreamDestroy(s));
    CU_OK(cuEventDestroy(e));
    CU_OK(cuMemFree(gate));
}

/* helper "event_opener": receive an event handle, say cuIpcOpenEventHandle's
 * status. */
static int helper_event_opener(int argc, char **argv, int sock)
{
    (void)argc;
    (void)argv;
    helper_init();
    if (fab_test_send_word(sock, "ready") != 0)
        return 13;
    CUipcEventHandle h;
    if (fab_test_recv(sock, h.reserved, sizeof(h.reserved)) != 0)
        return 14;
    CUevent e;
    CUresult r = cuIpcOpenEventHandle(&e, h);
    if (r == CUDA_SUCCESS)
        HELPER_CU(cuEventDestroy(e), 15);
    return fab_test_send_word(sock, name_of(r)) == 0 ? 0 : 16;
}

static void a_destroyed_events_handle_no_longer_opens(void **state)
{
    (void)state;
    assert_non_null(fab_test_daemon_start(NULL, NULL));
    cut_init(0);
    CUevent e;
    CU_OK(cuEventCreate(&e, CU_EVENT_INTERPROCESS | CU_EVENT_DISABLE_TIMING));
    CUipcEventHandle h, again;
    CU_OK(cuIpcGetEventHandle(&h, e));
    CU_OK(cuIpcGetEventHandle(&again, e));
    assert_memory_equal(h.reserved, again.reserved, sizeof(h.reserved)); /* cached */
    CUipcMemHandle mh;
    memcpy(mh.reserved, h.reserved, sizeof(h.reserved));
    run_peer("event_opener", NULL, NULL, &mh, "CUDA_SUCCESS");
    CU_OK(cuEventDestroy(e));
    run_peer("event_opener", NULL, NULL, &mh, "CUDA_ERROR_INVALID_VALUE");
    CU_IS(cuIpcGetEventHandle(&h, e), CUDA_ERROR_INVALID_HANDLE);
}

/* ---- a holder of an event's bytes that forges its count ---------------------- */

#define NOBODY 65534

/* helper "event_forger" [locked]: as uid 65534, open the event handle it
 * is sent through the daemon (raw IPC_OPEN: no libcuda), map the page and
 * set its recorded count to 2^62, a record nobody will ever complete; with
 * locked, also hold the page's lock, as a process with the event open
 * does. Says "forged", then holds the page until the parent goes. */
static int helper_event_forger(int argc, char **argv, int sock)
{
    bool locked = argc > 1 && strcmp(argv[1], "locked") == 0;
    const char *path = getenv("FABMEM_SOCKET");
    if (path == NULL || setgroups(0, NULL) != 0 || setgid(NOBODY) != 0 || setuid(NOBODY) != 0)
        return 10;
    int daemon = fab_test_raw_hello(path);
    if (fab_test_send_word(sock, "ready") != 0)
        return 11;
    fab__request_t open_req = {.type = FAB__MSG_IPC_OPEN, .seq = 2};
    if (fab_test_recv(sock, open_req.u.ipc.bytes, sizeof(open_req.u.ipc.bytes)) != 0)
        return 12;
    int fd = -1;
    if (fab_test_raw_call(daemon, &open_req, -1, NULL, &fd) != FAB_SUCCESS || fd < 0)
        return 13;
    uint64_t *page = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (page == MAP_FAILED)
        return 14;
    struct flock fl = {.l_type = F_RDLCK, .l_whence = SEEK_SET, .l_start = 0, .l_len = 1};
    if (locked && fcntl(fd, F_SETLK, &fl) != 0)
        return 15;
    __atomic_store_n(&page[0], (uint64_t)1 << 62, __ATOMIC_RELEASE);
    if (fab_test_send_word(sock, "forged") != 0)
        return 16;
    char byte;
    while (read(sock, &byte, 1) > 0)
        ;
    return 0;
}

typedef struct {
    CUevent event;
    CUcontext ctx;
    CUresult result;
} sync_call_t;

static void *sync_thread(void *arg)
{
    sync_call_t *call = arg;
    cuCtxSetCurrent(call->ctx);
    call->result = cuEventSynchronize(call->event);
    return NULL;
}

/* cuEventSynchronize(e) in a thread, given up after seconds: its result,
 * or -1 when it still waits (the thread is left behind). */
static int synchronize_within(CUevent e, CUcontext ctx, int seconds, pthread_t *thread_out,
                              sync_call_t *call)
{
    call->event = e;
    call->ctx = ctx;
    call->result = (CUresult)-1;
    assert_int_equal(pthread_create(thread_out, NULL, sync_thread, call), 0);
    struct timespec deadline;
    clock_gettime(CLOCK_REALTIME, &deadline);
    deadline.tv_sec += seconds;
    if (pthread_timedjoin_np(*thread_out, NULL, &deadline) != 0)
        return -1;
    return (int)call->result;
}

/* The publisher's interprocess event, its handle sent to a forger of
 * another uid (locked or not), which has forged the count. */
static CUevent forged_event(CUcontext *ctx_out, const char *how, fab_test_child_t *child)
{
    fab_test_daemon_t *d = fab_test_daemon_start("[daemon]\nsocket_mode = 0666\n", NULL);
    assert_non_null(d);
    *ctx_out = cut_init(0);
    CUevent e;
    CU_OK(cuEventCreate(&e, CU_EVENT_INTERPROCESS | CU_EVENT_DISABLE_TIMING));
    CU_OK(cuEventRecord(e, 0));
    CU_OK(cuEventSynchronize(e));
    CUipcEventHandle h;
    CU_OK(cuIpcGetEventHandle(&h, e));
    const char *args[] = {how, NULL};
    assert_int_equal(fab_test_spawn("event_forger", args, NULL, child), 0);
    assert_int_equal(fab_test_expect_word(child->sock, "ready"), 0);
    assert_int_equal(fab_test_send(child->sock, h.reserved, sizeof(h.reserved)), 0);
    assert_int_equal(fab_test_expect_word(child->sock, "forged"), 0);
    return e;
}

/* A holder of another uid sets the event's count to 2^62 and keeps the
 * page, without the event open (no lock): the publisher's query and
 * synchronize see that nobody can complete such a record, and end. */
static void a_forged_event_count_does_not_wedge_the_publisher(void **state)
{
    (void)state;
    if (getuid() != 0)
        fab_test_skip("needs root, to run the forger as a second uid");
    CUcontext ctx;
    fab_test_child_t child;
    CUevent e = forged_event(&ctx, "plain", &child);
    pthread_t thread;
    sync_call_t call;
    /* Unfixed, the wait never ends: the thread is left, the test fails. */
    assert_int_equal(synchronize_within(e, ctx, 20, &thread, &call), CUDA_SUCCESS);
    CU_OK(cuEventQuery(e));
    /* And the publisher's own records are still waited for. */
    CUdeviceptr gate;
    CU_OK(cuMemAlloc(&gate, 4));
    CU_OK(cuMemsetD32(gate, 0, 1));
    CUstream s;
    CU_OK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
    CU_OK(cuStreamWaitValue32(s, gate, 1, CU_STREAM_WAIT_VALUE_GEQ));
    CU_OK(cuEventRecord(e, s));
    CU_IS(cuEventQuery(e), CUDA_ERROR_NOT_READY);
    __atomic_store_n((uint32_t *)(uintptr_t)gate, 1u, __ATOMIC_RELEASE);
    CU_OK(cuEventSynchronize(e));
    CU_OK(cuStreamDestroy(s));
    CU_OK(cuMemFree(gate));
    close(child.sock);
    assert_int_equal(fab_test_reap(&child), 0);
    CU_OK(cuEventDestroy(e));
}

/* The same forger holding the page's lock, as a process with the event
 * open does: it may hold the publisher's wait (as a record of its own on a
 * stream that never gets there would), but only while it lives. */
static void a_forged_event_count_holds_the_publisher_no_longer_than_its_holder_lives(void **state)
{
    (void)state;
    if (getuid() != 0)
        fab_test_skip("needs root, to run the forger as a second uid");
    CUcontext ctx;
    fab_test_child_t child;
    CUevent e = forged_event(&ctx, "locked", &child);
    CU_IS(cuEventQuery(e), CUDA_ERROR_NOT_READY);
    pthread_t thread;
    sync_call_t call;
    assert_int_equal(synchronize_within(e, ctx, 1, &thread, &call), -1); /* still held */
    assert_int_equal(kill(child.pid, SIGKILL), 0);
    (void)fab_test_reap(&child);
    struct timespec deadline;
    clock_gettime(CLOCK_REALTIME, &deadline);
    deadline.tv_sec += 20;
    assert_int_equal(pthread_timedjoin_np(thread, NULL, &deadline), 0);
    assert_int_equal(call.result, CUDA_SUCCESS);
    CU_OK(cuEventQuery(e));
    close(child.sock);
    CU_OK(cuEventDestroy(e));
}

static const struct CMUnitTest tests[] = {
    cmocka_unit_test_teardown(a_forged_event_count_does_not_wedge_the_publisher, fab_test_teardown),
    cmocka_unit_test_teardown(a_forged_event_count_holds_the_publisher_no_longer_than_its_holder_lives,
                              fab_test_teardown),
    cmocka_unit_test_teardown(a_destroyed_events_handle_no_longer_opens, fab_test_teardown),
    cmocka_unit_test_teardown(an_event_recorded_here_is_waited_for_in_another_process,
                              fab_test_teardown),
    cmocka_unit_test_teardown(ipc_memory_is_shared_both_ways, fab_test_teardown),
    cmocka_unit_test_teardown(opening_ones_own_handle_is_an_invalid_context, fab_test_teardown),
    cmocka_unit_test_teardown(an_address_inside_an_allocation_names_the_whole_allocation,
                              fab_test_teardown),
    cmocka_unit_test_teardown(a_handle_from_another_node_is_refused, fab_test_teardown),
    cmocka_unit_test_teardown(forged_and_altered_handles_are_refused, fab_test_teardown),
    cmocka_unit_test_teardown(free_withdraws_the_handle_but_mappings_stay, fab_test_teardown),
    cmocka_unit_test_teardown(only_cumemalloc_memory_has_a_handle, fab_test_teardown),
    cmocka_unit_test_teardown(an_exporter_that_dies_takes_its_handles_with_it, fab_test_teardown),
    cmocka_unit_test_teardown(closing_what_was_not_opened_is_refused, fab_test_teardown),
    cmocka_unit_test(without_a_daemon_ipc_is_not_supported),
    cmocka_unit_test(ipc_calls_are_found_at_their_versions),
};

static const fab_test_helper_t helpers[] = {
    {"event_forger", helper_event_forger},
    {"opener", helper_opener},
    {"forger", helper_forger},
    {"keeper", helper_keeper},
    {"exporter", helper_exporter},
    {"event_waiter", helper_event_waiter},
    {"event_opener", helper_event_opener},
};

FAB_TEST_MAIN("cuda", tests, helpers)
