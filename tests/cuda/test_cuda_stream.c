/* Streams and events against cuda.h only: order within a stream, waits
 * between streams, the legacy and per-thread default streams, events and
 * their times, stream memory operations (within a process and between two
 * sharing memory), host functions, handles after destroy, and a process
 * that exits with work still queued.
 *
 * A stream is held back with cuStreamWaitValue32 on a word of page-locked
 * host memory; the test releases it by writing that word from the host, the
 * very signal the stream waits for. Nothing here sleeps or measures time to
 * decide an outcome. */
#include "cuda_test.h"

#include <pthread.h>
#include <stdbool.h>
#include <unistd.h>

/* A word the host writes and streams wait on. */
typedef struct gate {
    uint32_t *word;
} gate_t;

static gate_t gate_new(void)
{
    gate_t g;
    void *p = NULL;
    CU_OK(cuMemHostAlloc(&p, 4096, 0));
    g.word = p;
    __atomic_store_n(g.word, 0, __ATOMIC_SEQ_CST);
    return g;
}

static CUdeviceptr gate_ptr(gate_t g)
{
    CUdeviceptr d = 0;
    CU_OK(cuMemHostGetDevicePointer(&d, g.word, 0));
    return d;
}

/* Hold stream s until the gate opens. */
static void gate_hold(gate_t g, CUstream s)
{
    CU_OK(cuStreamWaitValue32(s, gate_ptr(g), 1, CU_STREAM_WAIT_VALUE_GEQ));
}

static void gate_open(gate_t g)
{
    __atomic_store_n(g.word, 1, __ATOMIC_SEQ_CST);
}

static void gate_free(gate_t g)
{
    CU_OK(cuMemFreeHost(g.word));
}

/* A host function's log: each call appends its tag. */
typedef struct trace {
    int seen[16];
    int n;
} trace_t;

typedef struct mark {
    trace_t *trace;
    int tag;
} mark_t;

static void CUDA_CB mark_run(void *arg)
{
    mark_t *m = arg;
    int i = __atomic_fetch_add(&m->trace->n, 1, __ATOMIC_SEQ_CST);
    m->trace->seen[i] = m->tag;
}

static int trace_count(trace_t *t)
{
    return __atomic_load_n(&t->n, __ATOMIC_SEQ_CST);
}

static void async_work_on_one_stream_runs_in_order(void **state)
{
    (void)state;
    cut_init(0);
    CUstream s;
    CU_OK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
    gate_t g = gate_new();
    CUdeviceptr buf;
    CU_OK(cuMemAlloc(&buf, 4096));
    uint32_t *out = NULL;
    CU_OK(cuMemAllocHost((void **)&out, 4096));
    out[0] = 0;
    trace_t t = {{0}, 0};
    mark_t m[3] = {{&t, 1}, {&t, 2}, {&t, 3}};
    gate_hold(g, s); /* nothing below may run before the gate opens */
    CU_OK(cuLaunchHostFunc(s, mark_run, &m[0]));
    CU_OK(cuMemsetD32Async(buf, 7, 1024, s));
    CU_OK(cuLaunchHostFunc(s, mark_run, &m[1]));
    CU_OK(cuMemsetD32Async(buf, 9, 1024, s));
    CU_OK(cuMemcpyDtoHAsync(out, buf + 4, 4, s));
    CU_OK(cuLaunchHostFunc(s, mark_run, &m[2]));
    assert_int_equal(trace_count(&t), 0);
    gate_open(g);
    CU_OK(cuStreamSynchronize(s));
    assert_int_equal(t.n, 3);
    assert_int_equal(t.seen[0], 1);
    assert_int_equal(t.seen[1], 2);
    assert_int_equal(t.seen[2], 3);
    assert_int_equal(out[0], 9);
    CU_OK(cuMemFreeHost(out));
    CU_OK(cuMemFree(buf));
    CU_OK(cuStreamDestroy(s));
    gate_free(g);
}

/* Another thread gives the signal the stream waits for. */
static void *open_gate(void *arg)
{
    gate_open(*(gate_t *)arg);
    return NULL;
}

static void stream_query_is_not_ready_while_a_wait_value_blocks(void **state)
{
    (void)state;
    cut_init(0);
    CUstream s;
    CU_OK(cuStreamCreate(&s, 0));
    gate_t g = gate_new();
    CU_OK(cuStreamQuery(s));
    gate_hold(g, s);
    CU_IS(cuStreamQuery(s), CUDA_ERROR_NOT_READY);
    CU_IS(cuStreamQuery(s), CUDA_ERROR_NOT_READY);
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, open_gate, &g), 0);
    pthread_join(th, NULL);
    CU_OK(cuStreamSynchronize(s));
    CU_OK(cuStreamQuery(s));
    CU_OK(cuStreamDestroy(s));
    gate_free(g);
}

static void a_stream_waiting_on_an_event_of_another_waits(void **state)
{
    (void)state;
    cut_init(0);
    CUstream a, b;
    CU_OK(cuStreamCreate(&a, CU_STREAM_NON_BLOCKING));
    CU_OK(cuStreamCreate(&b, CU_STREAM_NON_BLOCKING));
    CUevent ev;
    CU_OK(cuEventCreate(&ev, CU_EVENT_DISABLE_TIMING));
    gate_t g = gate_new();
    trace_t t = {{0}, 0};
    mark_t m = {&t, 1};
    gate_hold(g, a);
    CU_OK(cuEventRecord(ev, a));
    CU_OK(cuStreamWaitEvent(b, ev, 0));
    CU_OK(cuLaunchHostFunc(b, mark_run, &m));
    CU_IS(cuEventQuery(ev), CUDA_ERROR_NOT_READY);
    CU_IS(cuStreamQuery(b), CUDA_ERROR_NOT_READY);
    assert_int_equal(trace_count(&t), 0);
    gate_open(g);
    CU_OK(cuStreamSynchronize(b));
    assert_int_equal(trace_count(&t), 1);
    CU_OK(cuEventQuery(ev));
    CU_OK(cuEventDestroy(ev));
    CU_OK(cuStreamDestroy(a));
    CU_OK(cuStreamDestroy(b));
    gate_free(g);
}

static void legacy_stream_waits_for_blocking_streams(void **state)
{
    (void)state;
    cut_init(0);
    CUstream s;
    CU_OK(cuStreamCreate(&s, CU_STREAM_DEFAULT));
    gate_t g = gate_new();
    trace_t t = {{0}, 0};
    mark_t m = {&t, 1};
    gate_hold(g, s);
    CU_OK(cuLaunchHostFunc(NULL, mark_run, &m));
    CU_IS(cuStreamQuery(NULL), CUDA_ERROR_NOT_READY);
    CU_IS(cuStreamQuery(CU_STREAM_LEGACY), CUDA_ERROR_NOT_READY);
    assert_int_equal(trace_count(&t), 0);
    gate_open(g);
    CU_OK(cuStreamSynchronize(NULL));
    assert_int_equal(trace_count(&t), 1);
    CU_OK(cuStreamDestroy(s));
    gate_free(g);
}

static void blocking_streams_wait_for_the_legacy_stream(void **state)
{
    (void)state;
    cut_init(0);
    CUstream s;
    CU_OK(cuStreamCreate(&s, CU_STREAM_DEFAULT));
    gate_t g = gate_new();
    trace_t t = {{0}, 0};
    mark_t m = {&t, 1};
    gate_hold(g, CU_STREAM_LEGACY);
    CU_OK(cuLaunchHostFunc(s, mark_run, &m));
    CU_IS(cuStreamQuery(s), CUDA_ERROR_NOT_READY);
    assert_int_equal(trace_count(&t), 0);
    gate_open(g);
    CU_OK(cuStreamSynchronize(s));
    assert_int_equal(trace_count(&t), 1);
    CU_OK(cuStreamDestroy(s));
    gate_free(g);
}

static void non_blocking_streams_do_not_synchronise_with_the_legacy_stream(void **state)
{
    (void)state;
    cut_init(0);
    CUstream s;
    CU_OK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
    gate_t g = gate_new();
    trace_t t = {{0}, 0};
    mark_t m[2] = {{&t, 1}, {&t, 2}};
    /* The non-blocking stream held: the legacy stream runs regardless. */
    gate_hold(g, s);
    CU_OK(cuLaunchHostFunc(NULL, mark_run, &m[0]));
    CU_OK(cuStreamSynchronize(NULL));
    assert_int_equal(trace_count(&t), 1);
    CU_IS(cuStreamQuery(s), CUDA_ERROR_NOT_READY);
    gate_open(g);
    CU_OK(cuStreamSynchronize(s));
    /* The legacy stream held: the non-blocking stream runs regardless. */
    gate_t g2 = gate_new();
    gate_hold(g2, NULL);
    CU_OK(cuLaunchHostFunc(s, mark_run, &m[1]));
    CU_OK(cuStreamSynchronize(s));
    assert_int_equal(trace_count(&t), 2);
    gate_open(g2);
    CU_OK(cuStreamSynchronize(NULL));
    CU_OK(cuStreamDestroy(s));
    gate_free(g);
    gate_free(g2);
}

typedef struct ptds_arg {
    CUcontext ctx;
    gate_t gate;
    gate_t queued; /* word set once the held work is queued */
    CUresult result;
} ptds_arg_t;

static void *ptds_thread(void *p)
{
    ptds_arg_t *a = p;
    a->result = cuCtxSetCurrent(a->ctx);
    if (a->result == CUDA_SUCCESS)
        a->result = cuStreamWaitValue32(CU_STREAM_PER_THREAD, gate_ptr(a->gate), 1, 0);
    __atomic_store_n(a->queued.word, 1, __ATOMIC_SEQ_CST);
    if (a->result == CUDA_SUCCESS)
        a->result = cuStreamSynchronize(CU_STREAM_PER_THREAD);
    return NULL;
}

static void per_thread_default_streams_are_independent(void **state)
{
    (void)state;
    CUcontext ctx = cut_init(0);
    ptds_arg_t a = {ctx, gate_new(), gate_new(), CUDA_ERROR_UNKNOWN};
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, ptds_thread, &a), 0);
    while (__atomic_load_n(a.queued.word, __ATOMIC_SEQ_CST) == 0)
        ;
    /* The other thread's per-thread stream is held; this thread's is not. */
    trace_t t = {{0}, 0};
    mark_t m = {&t, 1};
    CU_OK(cuLaunchHostFunc(CU_STREAM_PER_THREAD, mark_run, &m));
    CU_OK(cuStreamSynchronize(CU_STREAM_PER_THREAD));
    assert_int_equal(trace_count(&t), 1);
    gate_open(a.gate);
    pthread_join(th, NULL);
    CU_OK(a.result);
    gate_free(a.gate);
    gate_free(a.queued);
}

typedef struct timed_fn {
    gate_t gate;
    uint32_t *started;
} timed_fn_t;

static void CUDA_CB wait_for_signal(void *p)
{
    timed_fn_t *f = p;
    __atomic_store_n(f->started, 1, __ATOMIC_SEQ_CST);
    while (__atomic_load_n(f->gate.word, __ATOMIC_SEQ_CST) == 0)
        ;
}

static void elapsed_time_around_a_waiting_host_function_is_positive(void **state)
{
    (void)state;
    cut_init(0);
    CUstream s;
    CU_OK(cuStreamCreate(&s, 0));
    CUevent a, b;
    CU_OK(cuEventCreate(&a, CU_EVENT_DEFAULT));
    CU_OK(cuEventCreate(&b, CU_EVENT_DEFAULT));
    gate_t started = gate_new();
    timed_fn_t f = {gate_new(), started.word};
    CU_OK(cuEventRecord(a, s));
    CU_OK(cuLaunchHostFunc(s, wait_for_signal, &f));
    CU_OK(cuEventRecord(b, s));
    float ms = -1;
    /* b not reached yet: NOT_READY (once a is, it is known to be). */
    while (__atomic_load_n(started.word, __ATOMIC_SEQ_CST) == 0)
        ;
    CU_OK(cuEventQuery(a));
    CU_IS(cuEventQuery(b), CUDA_ERROR_NOT_READY);
    CU_IS(cuEventElapsedTime(&ms, a, b), CUDA_ERROR_NOT_READY);
    gate_open(f.gate);
    CU_OK(cuEventSynchronize(b));
    CU_OK(cuEventElapsedTime(&ms, a, b));
    assert_true(ms > 0.0f);
    CU_OK(cuEventDestroy(a));
    CU_OK(cuEventDestroy(b));
    CU_OK(cuStreamDestroy(s));
    gate_free(f.gate);
    gate_free(started);
}

static void events_without_timing_or_record_follow_the_documented_rules(void **state)
{
    (void)state;
    cut_init(0);
    CUevent plain, untimed;
    CU_OK(cuEventCreate(&plain, 0));
    CU_OK(cuEventCreate(&untimed, CU_EVENT_DISABLE_TIMING));
    float ms;
    /* Never recorded: complete, but has no time. */
    CU_OK(cuEventQuery(plain));
    CU_OK(cuEventSynchronize(plain));
    CU_IS(cuEventElapsedTime(&ms, plain, plain), CUDA_ERROR_INVALID_HANDLE);
    CU_OK(cuEventRecord(plain, NULL));
    CU_OK(cuEventRecord(untimed, NULL));
    CU_OK(cuEventSynchronize(untimed));
    CU_OK(cuEventSynchronize(plain));
    CU_IS(cuEventElapsedTime(&ms, plain, untimed), CUDA_ERROR_INVALID_HANDLE);
    CU_OK(cuEventElapsedTime(&ms, plain, plain));
    assert_true(ms == 0.0f);
    CU_IS(cuEventCreate(&plain, 0x80), CUDA_ERROR_INVALID_VALUE);
    CU_IS(cuEventCreate(&plain, CU_EVENT_INTERPROCESS), CUDA_ERROR_INVALID_VALUE);
    CU_OK(cuEventDestroy(untimed));
    CU_OK(cuEventDestroy(plain));
}

static void streams_and_events_after_destroy_are_invalid_handles(void **state)
{
    (void)state;
    cut_init(0);
    CUstream s;
    CUevent e;
    CU_OK(cuStreamCreate(&s, 0));
    CU_OK(cuEventCreate(&e, 0));
    CU_OK(cuStreamDestroy(s));
    CU_OK(cuEventDestroy(e));
    CU_IS(cuStreamQuery(s), CUDA_ERROR_INVALID_HANDLE);
    CU_IS(cuStreamSynchronize(s), CUDA_ERROR_INVALID_HANDLE);
    CU_IS(cuStreamDestroy(s), CUDA_ERROR_INVALID_HANDLE);
    CU_IS(cuEventRecord(e, NULL), CUDA_ERROR_INVALID_HANDLE);
    CU_IS(cuEventQuery(e), CUDA_ERROR_INVALID_HANDLE);
    CU_IS(cuEventSynchronize(e), CUDA_ERROR_INVALID_HANDLE);
    CU_IS(cuEventDestroy(e), CUDA_ERROR_INVALID_HANDLE);
    CUstream other;
    CU_OK(cuStreamCreate(&other, 0));
    CU_IS(cuStreamWaitEvent(other, e, 0), CUDA_ERROR_INVALID_HANDLE);
    CU_IS(cuMemsetD8Async(0, 0, 0, s), CUDA_ERROR_INVALID_HANDLE);
    CU_IS(cuStreamDestroy(NULL), CUDA_ERROR_INVALID_HANDLE);
    CU_OK(cuStreamDestroy(other));
}

static void a_destroyed_stream_still_runs_its_queued_work(void **state)
{
    (void)state;
    cut_init(0);
    CUstream s;
    CU_OK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
    gate_t g = gate_new();
    trace_t t = {{0}, 0};
    mark_t m = {&t, 1};
    gate_hold(g, s);
    CU_OK(cuLaunchHostFunc(s, mark_run, &m));
    CU_OK(cuStreamDestroy(s));
    assert_int_equal(trace_count(&t), 0);
    gate_open(g);
    CU_OK(cuCtxSynchronize()); /* waits for every stream of the context */
    assert_int_equal(trace_count(&t), 1);
    gate_free(g);
}

static void ctx_synchronize_waits_for_every_stream(void **state)
{
    (void)state;
    cut_init(0);
    CUstream s[3];
    gate_t g = gate_new();
    trace_t t = {{0}, 0};
    mark_t m[3] = {{&t, 1}, {&t, 2}, {&t, 3}};
    for (int i = 0; i < 3; i++) {
        CU_OK(cuStreamCreate(&s[i], CU_STREAM_NON_BLOCKING));
        gate_hold(g, s[i]);
        CU_OK(cuLaunchHostFunc(s[i], mark_run, &m[i]));
    }
    assert_int_equal(trace_count(&t), 0);
    gate_open(g);
    CU_OK(cuCtxSynchronize());
    assert_int_equal(trace_count(&t), 3);
    for (int i = 0; i < 3; i++)
        CU_OK(cuStreamDestroy(s[i]));
    gate_free(g);
}

static void write_value_releases_a_wait_value_on_another_stream(void **state)
{
    (void)state;
    cut_init(0);
    CUstream waiter, writer;
    CU_OK(cuStreamCreate(&waiter, CU_STREAM_NON_BLOCKING));
    CU_OK(cuStreamCreate(&writer, CU_STREAM_NON_BLOCKING));
    CUdeviceptr flag;
    CU_OK(cuMemAlloc(&flag, 64));
    CU_OK(cuMemsetD8(flag, 0, 64));
    CU_OK(cuStreamWaitValue32(waiter, flag, 5, CU_STREAM_WAIT_VALUE_EQ));
    CU_OK(cuStreamWaitValue64(waiter, flag + 8, 0x100000000ull, CU_STREAM_WAIT_VALUE_GEQ));
    CU_IS(cuStreamQuery(waiter), CUDA_ERROR_NOT_READY);
    CU_OK(cuStreamWriteValue32(writer, flag, 5, 0));
    CU_OK(cuStreamWriteValue64(writer, flag + 8, 0x100000001ull, 0));
    CU_OK(cuStreamSynchronize(waiter));
    /* AND and NOR, on values that hold already. */
    CU_OK(cuStreamWaitValue32(waiter, flag, 4, CU_STREAM_WAIT_VALUE_AND));
    CU_OK(cuStreamWaitValue32(waiter, flag, 0x2, CU_STREAM_WAIT_VALUE_NOR));
    CU_OK(cuStreamSynchronize(waiter));
    /* A batch: write, then wait for what it wrote. */
    CUstreamBatchMemOpParams ops[2];
    memset(ops, 0, sizeof(ops));
    ops[0].writeValue.operation = CU_STREAM_MEM_OP_WRITE_VALUE_32;
    ops[0].writeValue.address = flag + 16;
    ops[0].writeValue.value = 42;
    ops[1].waitValue.operation = CU_STREAM_MEM_OP_WAIT_VALUE_32;
    ops[1].waitValue.address = flag + 16;
    ops[1].waitValue.value = 42;
    ops[1].waitValue.flags = CU_STREAM_WAIT_VALUE_EQ;
    CU_OK(cuStreamBatchMemOp(writer, 2, ops, 0));
    CU_OK(cuStreamSynchronize(writer));
    uint32_t v = 0;
    CU_OK(cuMemcpyDtoH(&v, flag + 16, 4));
    assert_int_equal(v, 42);
    /* Misaligned, unknown memory, unknown flags: refused at the call. */
    CU_IS(cuStreamWriteValue32(writer, flag + 2, 1, 0), CUDA_ERROR_INVALID_VALUE);
    uint32_t pageable = 0;
    CU_IS(cuStreamWriteValue32(writer, (CUdeviceptr)(uintptr_t)&pageable, 1, 0),
          CUDA_ERROR_INVALID_VALUE);
    CU_IS(cuStreamWaitValue32(writer, flag, 1, 0x10), CUDA_ERROR_INVALID_VALUE);
    CU_OK(cuMemFree(flag));
    CU_OK(cuStreamDestroy(waiter));
    CU_OK(cuStreamDestroy(writer));
}

static void CUDA_CB callback_run(CUstream s, CUresult status, void *p)
{
    CUstream *seen = p;
    if (status == CUDA_SUCCESS)
        *seen = s;
}

static void stream_properties_and_callbacks(void **state)
{
    (void)state;
    CUcontext ctx = cut_init(0);
    int least = 1, greatest = 1;
    CU_OK(cuCtxGetStreamPriorityRange(&least, &greatest));
    assert_true(greatest <= least);
    CUstream s, t;
    CU_OK(cuStreamCreateWithPriority(&s, CU_STREAM_NON_BLOCKING, greatest - 10));
    CU_OK(cuStreamCreate(&t, 0));
    int prio = 1;
    unsigned flags = 9;
    CUcontext sctx = NULL;
    unsigned long long id_s = 0, id_t = 0;
    CU_OK(cuStreamGetPriority(s, &prio));
    assert_int_equal(prio, greatest); /* clamped */
    CU_OK(cuStreamGetFlags(s, &flags));
    assert_int_equal(flags, CU_STREAM_NON_BLOCKING);
    CU_OK(cuStreamGetCtx(s, &sctx));
    assert_ptr_equal(sctx, ctx);
    CUdevice sdev = -1;
    CU_OK(cuStreamGetDevice(s, &sdev));
    assert_int_equal(sdev, 0);
    CU_OK(cuStreamGetId(s, &id_s));
    CU_OK(cuStreamGetId(t, &id_t));
    assert_true(id_s != id_t);
    CUstreamCaptureStatus st = CU_STREAM_CAPTURE_STATUS_ACTIVE;
    CU_OK(cuStreamIsCapturing(s, &st));
    assert_int_equal(st, CU_STREAM_CAPTURE_STATUS_NONE);
    st = CU_STREAM_CAPTURE_STATUS_ACTIVE;
    CU_OK(cuStreamGetCaptureInfo(s, &st, NULL, NULL, NULL, NULL, NULL));
    assert_int_equal(st, CU_STREAM_CAPTURE_STATUS_NONE);
    CUstreamCaptureMode mode = CU_STREAM_CAPTURE_MODE_RELAXED;
    CU_OK(cuThreadExchangeStreamCaptureMode(&mode));
    assert_int_equal(mode, CU_STREAM_CAPTURE_MODE_GLOBAL);
    CU_OK(cuThreadExchangeStreamCaptureMode(&mode));
    assert_int_equal(mode, CU_STREAM_CAPTURE_MODE_RELAXED);
    CUstream seen = NULL;
    CU_OK(cuStreamAddCallback(s, callback_run, &seen, 0));
    CU_OK(cuStreamSynchronize(s));
    assert_ptr_equal(seen, s);
    CU_IS(cuStreamAddCallback(s, callback_run, &seen, 1), CUDA_ERROR_INVALID_VALUE);
    CU_IS(cuStreamCreate(&s, 0x8), CUDA_ERROR_INVALID_VALUE);
    CU_OK(cuStreamDestroy(s));
    CU_OK(cuStreamDestroy(t));
}

/* helper "exit_queued": queue work that can never finish, then exit. */
static int helper_exit_queued(int argc, char **argv, int sock)
{
    (void)argc;
    (void)argv;
    HELPER_CU(cuInit(0), 10);
    CUcontext ctx;
    HELPER_CU(cuDevicePrimaryCtxRetain(&ctx, 0), 11);
    HELPER_CU(cuCtxSetCurrent(ctx), 12);
    void *word = NULL;
    HELPER_CU(cuMemHostAlloc(&word, 4096, 0), 13);
    CUstream s;
    HELPER_CU(cuStreamCreate(&s, 0), 14);
    HELPER_CU(cuStreamWaitValue32(s, (CUdeviceptr)(uintptr_t)word, 1, 0), 15);
    HELPER_CU(cuMemsetD8Async((CUdeviceptr)(uintptr_t)word, 1, 8, s), 16);
    HELPER_CU(cuStreamWaitValue32(NULL, (CUdeviceptr)(uintptr_t)word, 1, 0), 17);
    if (cuStreamQuery(s) != CUDA_ERROR_NOT_READY)
        return 18;
    if (fab_test_send_word(sock, "queued") != 0)
        return 19;
    return 0; /* exit with the work still queued */
}

static void a_process_exits_with_work_still_queued(void **state)
{
    (void)state;
    fab_test_child_t child;
    assert_int_equal(fab_test_spawn("exit_queued", NULL, NULL, &child), 0);
    assert_int_equal(fab_test_expect_word(child.sock, "queued"), 0);
    assert_int_equal(fab_test_reap(&child), 0);
}

/* helper "waiter": import the fd it is sent, hold a stream on the word at
 * offset 0 until it reads 7, say "waiting", and "done" once the stream ran. */
static int helper_waiter(int argc, char **argv, int sock)
{
    (void)argc;
    (void)argv;
    HELPER_CU(cuInit(0), 10);
    CUcontext ctx;
    HELPER_CU(cuDevicePrimaryCtxRetain(&ctx, 0), 11);
    HELPER_CU(cuCtxSetCurrent(ctx), 12);
    int fd = fab_test_recv_fd(sock);
    if (fd < 0)
        return 13;
    CUmemGenericAllocationHandle h;
    HELPER_CU(cuMemImportFromShareableHandle(&h, (void *)(uintptr_t)fd,
                                             CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR), 14);
    close(fd);
    size_t size = 2u << 20;
    CUdeviceptr ptr = cut_map_rw(h, size);
    CUstream s;
    HELPER_CU(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING), 15);
    HELPER_CU(cuStreamWaitValue32(s, ptr, 7, CU_STREAM_WAIT_VALUE_EQ), 16);
    HELPER_CU(cuStreamWriteValue32(s, ptr + 4, 8, 0), 17); /* the answer, after the wait */
    if (cuStreamQuery(s) != CUDA_ERROR_NOT_READY)
        return 18;
    if (fab_test_send_word(sock, "waiting") != 0)
        return 19;
    HELPER_CU(cuStreamSynchronize(s), 20);
    HELPER_CU(cuStreamDestroy(s), 21);
    cut_unmap_free(ptr, size);
    HELPER_CU(cuMemRelease(h), 22);
    return fab_test_send_word(sock, "done") == 0 ? 0 : 23;
}

static void stream_memory_operations_signal_between_processes(void **state)
{
    (void)state;
    cut_init(0);
    size_t size = 2u << 20;
    CUmemAllocationProp prop = cut_prop(CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0);
    CUmemGenericAllocationHandle h;
    CU_OK(cuMemCreate(&h, size, &prop, 0));
    CUdeviceptr ptr = cut_map_rw(h, size);
    CU_OK(cuMemsetD32(ptr, 0, 2));
    int fd = -1;
    CU_OK(cuMemExportToShareableHandle(&fd, h, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0));
    fab_test_child_t child;
    assert_int_equal(fab_test_spawn("waiter", NULL, NULL, &child), 0);
    assert_int_equal(fab_test_send_fd(child.sock, fd), 0);
    close(fd);
    assert_int_equal(fab_test_expect_word(child.sock, "waiting"), 0);
    CUstream s;
    CU_OK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
    CU_OK(cuStreamWriteValue32(s, ptr, 7, 0));
    CU_OK(cuStreamWaitValue32(s, ptr + 4, 8, CU_STREAM_WAIT_VALUE_EQ)); /* the helper's answer */
    CU_OK(cuStreamSynchronize(s));
    assert_int_equal(fab_test_expect_word(child.sock, "done"), 0);
    assert_int_equal(fab_test_reap(&child), 0);
    CU_OK(cuStreamDestroy(s));
    cut_unmap_free(ptr, size);
    CU_OK(cuMemRelease(h));
}

static const struct CMUnitTest tests[] = {
    cmocka_unit_test(async_work_on_one_stream_runs_in_order),
    cmocka_unit_test(stream_query_is_not_ready_while_a_wait_value_blocks),
    cmocka_unit_test(a_stream_waiting_on_an_event_of_another_waits),
    cmocka_unit_test(legacy_stream_waits_for_blocking_streams),
    cmocka_unit_test(blocking_streams_wait_for_the_legacy_stream),
    cmocka_unit_test(non_blocking_streams_do_not_synchronise_with_the_legacy_stream),
    cmocka_unit_test(per_thread_default_streams_are_independent),
    cmocka_unit_test(elapsed_time_around_a_waiting_host_function_is_positive),
    cmocka_unit_test(events_without_timing_or_record_follow_the_documented_rules),
    cmocka_unit_test(streams_and_events_after_destroy_are_invalid_handles),
    cmocka_unit_test(a_destroyed_stream_still_runs_its_queued_work),
    cmocka_unit_test(ctx_synchronize_waits_for_every_stream),
    cmocka_unit_test(write_value_releases_a_wait_value_on_another_stream),
    cmocka_unit_test(stream_properties_and_callbacks),
    cmocka_unit_test(a_process_exits_with_work_still_queued),
    cmocka_unit_test(stream_memory_operations_signal_between_processes),
};

static const fab_test_helper_t helpers[] = {
    {"exit_queued", helper_exit_queued},
    {"waiter", helper_waiter},
};

FAB_TEST_MAIN("cuda", tests, helpers)
