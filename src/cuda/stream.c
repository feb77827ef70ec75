/* Streams' execution: each stream's queue and worker thread, the default
 * streams' rules, fab__cu_stream_submit, through which every other module
 * puts work on a stream (stream.h), and the calls that wait for streams:
 * cuStreamSynchronize, cuStreamQuery, cuCtxSynchronize. The other stream
 * entry points are streamapi.c's, events event.c's; the types the three
 * share are stream_impl.h's.
 *
 * Execution model. Each stream is a FIFO of operations (a function and its
 * argument) with a sequence number each: submitted counts those queued,
 * completed those finished, so "stream s has reached point n" is
 * s->completed >= n. An operation may also wait for points of other streams
 * (its deps): that is how cuStreamWaitEvent and the legacy default stream's
 * rules are kept. Each stream has one worker thread, started by its first
 * asynchronous operation, that runs the head operation once its deps are
 * reached, one at a time, in order. A synchronous call (FAB__CU_SUBMIT_WAIT)
 * whose stream is idle and whose deps are reached runs its operation on the
 * caller's own thread (marked claimed at the head of the queue, so that
 * later work queues behind it); otherwise it waits for the worker.
 *
 * The default streams. Each context has one legacy default stream (NULL,
 * CU_STREAM_LEGACY). An operation on it waits for all work submitted before
 * it to the context's blocking streams (created without
 * CU_STREAM_NON_BLOCKING, and the per-thread default streams); an operation
 * on a blocking stream waits for the work submitted before it to the legacy
 * stream. Non-blocking streams do neither. Each thread has, per context, a
 * per-thread default stream (CU_STREAM_PER_THREAD, or NULL through the
 * _ptds/_ptsz entry points): a blocking stream that no other thread uses; it
 * is destroyed (its queued work still runs) when the thread exits.
 *
 * Lifecycle of a stream: create (refs 1, the handle; in the handle table and
 * its context's list) ─▶ work submitted (the first starts the worker, which
 * holds a ref) ─▶ cuStreamDestroy (out of the handle table: later calls with
 * the handle get CUDA_ERROR_INVALID_HANDLE; its ref dropped) ─▶ the worker
 * drains the queue and exits, dropping its ref ─▶ the last ref frees it. Refs
 * are also held by each operation that waits for the stream and by each event
 * last recorded in it. Legacy streams live as long as the process.
 *
 * Locking. All the state of streams and events is guarded by one mutex,
 * fab__cu_sq.mu, with one condition variable broadcast whenever a stream
 * reaches a new point or gets work. Order: fab__cu.lock, then fab__cu_sq.mu;
 * never the reverse: nothing here takes fab__cu.lock while holding mu, and no
 * operation runs with mu held. Operations run with no lock held and take
 * fab__cu.lock for reading themselves (copy.c), so an operation never runs
 * under fab__cu.lock held for writing, and no thread waits for a stream while
 * holding fab__cu.lock (waits happen in entry points, before they lock).
 *
 *
 * Process exit: workers are detached and never joined; exit() ends them
 * wherever they are (waiting, or polling in cuStreamWaitValue32), so work
 * still queued at exit neither hangs nor crashes the process; it is not run. */
#include "src/cuda/state.h"
#include "src/cuda/device.h"
#include "src/cuda/stream.h"
#include "src/cuda/stream_impl.h"
#include "src/cuda/entry.h"
#include "src/cuda/idtable.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

/* The state of streams and events (stream_impl.h). */
struct fab__cu_sq fab__cu_sq = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, {0}, {0}, NULL, 1, 0, 0};

static pthread_once_t fab__cu_sq_once = PTHREAD_ONCE_INIT;
static _Thread_local fab__cu_ptds_t *fab__cu_tls_ptds;

/* ---- references -------------------------------------------------------- */

void fab__cu_stream_get(struct CUstream_st *s)
{
    s->refs++;
}

void fab__cu_stream_put(struct CUstream_st *s)
{
    if (--s->refs > 0)
        return;
    if (s->cq_prev) {
        *s->cq_prev = s->cq_next;
        if (s->cq_next)
            s->cq_next->cq_prev = s->cq_prev;
    }
    free(s);
}

/* ---- streams of a context ---------------------------------------------- */

struct CUstream_st *fab__cu_stream_new(CUcontext ctx, fab__cu_ctxq_t *cq,
                                       fab__cu_skind_t kind, unsigned flags, int priority)
{
    struct CUstream_st *s = calloc(1, sizeof(*s));
    if (!s)
        return NULL;
    s->ctx = ctx;
    s->cq = cq;
    s->kind = kind;
    s->flags = flags;
    s->priority = priority;
    s->id = fab__cu_sq.next_id++;
    s->refs = 1;
    if (kind != FAB__CU_STREAM_LEGACY) {
        s->cq_next = cq->streams;
        if (cq->streams)
            cq->streams->cq_prev = &s->cq_next;
        s->cq_prev = &cq->streams;
        cq->streams = s;
    }
    return s;
}

fab__cu_ctxq_t *fab__cu_ctxq(CUcontext ctx)
{
    for (fab__cu_ctxq_t *q = fab__cu_sq.ctxqs; q; q = q->next) {
        if (q->ctx == ctx)
            return q;
    }
    fab__cu_ctxq_t *q = calloc(1, sizeof(*q));
    if (!q)
        return NULL;
    q->ctx = ctx;
    q->legacy = fab__cu_stream_new(ctx, q, FAB__CU_STREAM_LEGACY, 0, 0);
    if (!q->legacy) {
        free(q);
        return NULL;
    }
    q->next = fab__cu_sq.ctxqs;
    fab__cu_sq.ctxqs = q;
    return q;
}

/* pthread key destructor: the thread's per-thread streams end with it. */
static void fab__cu_ptds_exit(void *list)
{
    fab__cu_tls_ptds = NULL;
    pthread_mutex_lock(&fab__cu_sq.mu);
    for (fab__cu_ptds_t *p = list, *next; p; p = next) {
        next = p->next;
        p->stream->destroyed = true;
        fab__cu_stream_put(p->stream);
        free(p);
    }
    pthread_cond_broadcast(&fab__cu_sq.cv);
    pthread_mutex_unlock(&fab__cu_sq.mu);
}

static void fab__cu_sq_init(void)
{
    (void)pthread_key_create(&fab__cu_sq.ptds_key, fab__cu_ptds_exit);
}

static struct CUstream_st *fab__cu_ptds_of(CUcontext ctx, fab__cu_ctxq_t *cq)
{
    for (fab__cu_ptds_t *p = fab__cu_tls_ptds; p; p = p->next) {
        if (p->stream->ctx == ctx)
            return p->stream;
    }
    fab__cu_ptds_t *p = calloc(1, sizeof(*p));
    if (!p)
        return NULL;
    p->stream = fab__cu_stream_new(ctx, cq, FAB__CU_STREAM_PTDS, 0, 0);
    if (!p->stream) {
        free(p);
        return NULL;
    }
    p->next = fab__cu_tls_ptds;
    fab__cu_tls_ptds = p;
    (void)pthread_setspecific(fab__cu_sq.ptds_key, p);
    return p->stream;
}

/* The stream a handle names for the calling thread. Caller holds mu. */
CUresult fab__cu_stream_from_handle(CUstream h, bool per_thread, struct CUstream_st **out)
{
    uintptr_t v = (uintptr_t)h;
    if (v != 0 && v != FAB_CU_STREAM_LEGACY && v != FAB_CU_STREAM_PER_THREAD) {
        struct CUstream_st *s = fab__cu_idtable_find(&fab__cu_sq.streams, v);
        if (!s)
            return CUDA_ERROR_INVALID_HANDLE;
        *out = s;
        return CUDA_SUCCESS;
    }
    CUcontext ctx;
    FAB__CU_TRY(fab__cu_current_ctx(&ctx));
    fab__cu_ctxq_t *cq = fab__cu_ctxq(ctx);
    if (!cq)
        return CUDA_ERROR_OUT_OF_MEMORY;
    if (v == FAB_CU_STREAM_PER_THREAD || (v == 0 && per_thread)) {
        pthread_once(&fab__cu_sq_once, fab__cu_sq_init);
        *out = fab__cu_ptds_of(ctx, cq);
        return *out ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
    }
    *out = cq->legacy;
    return CUDA_SUCCESS;
}

static bool fab__cu_pending(const struct CUstream_st *s)
{
    return s->completed < s->submitted;
}

static bool fab__cu_blocking(const struct CUstream_st *s)
{
    return s->kind != FAB__CU_STREAM_LEGACY && !(s->flags & CU_STREAM_NON_BLOCKING);
}

/* ---- operations ---------------------------------------------------------- */

static CUresult fab__cu_op_add_dep(fab__cu_op_t *op, struct CUstream_st *s, uint64_t point)
{
    if (s->completed >= point)
        return CUDA_SUCCESS; /* reached already */
    fab__cu_dep_t *d;
    if (op->ndeps < sizeof(op->deps) / sizeof(op->deps[0])) {
        d = &op->deps[op->ndeps++];
    } else {
        fab__cu_dep_t *m = realloc(op->more, (op->nmore + 1) * sizeof(*m));
        if (!m)
            return CUDA_ERROR_OUT_OF_MEMORY;
        op->more = m;
        d = &m[op->nmore++];
    }
    d->stream = s;
    d->point = point;
    fab__cu_stream_get(s);
    return CUDA_SUCCESS;
}

static void fab__cu_op_free(fab__cu_op_t *op)
{
    for (size_t i = 0; i < op->ndeps; i++)
        fab__cu_stream_put(op->deps[i].stream);
    for (size_t i = 0; i < op->nmore; i++)
        fab__cu_stream_put(op->more[i].stream);
    free(op->more);
    free(op);
}

static bool fab__cu_op_ready(const fab__cu_op_t *op)
{
    for (size_t i = 0; i < op->ndeps; i++) {
        if (op->deps[i].stream->completed < op->deps[i].point)
            return false;
    }
    for (size_t i = 0; i < op->nmore; i++) {
        if (op->more[i].stream->completed < op->more[i].point)
            return false;
    }
    return true;
}

/* The default-stream rules: what an operation on s must wait for. */
static CUresult fab__cu_op_default_deps(fab__cu_op_t *op, struct CUstream_st *s)
{
    if (s->kind == FAB__CU_STREAM_LEGACY) {
        for (struct CUstream_st *t = s->cq->streams; t; t = t->cq_next) {
            if (fab__cu_blocking(t) && fab__cu_pending(t))
                FAB__CU_TRY(fab__cu_op_add_dep(op, t, t->submitted));
        }
    } else if (fab__cu_blocking(s) && fab__cu_pending(s->cq->legacy)) {
        FAB__CU_TRY(fab__cu_op_add_dep(op, s->cq->legacy, s->cq->legacy->submitted));
    }
    return CUDA_SUCCESS;
}

static void *fab__cu_worker(void *arg);

/* Queue op on s (mu held): it gets the next point of s. */
static CUresult fab__cu_op_queue(struct CUstream_st *s, fab__cu_op_t *op)
{
    if (!s->worker && !op->claimed) {
        pthread_attr_t attr;
        pthread_t t;
        pthread_attr_init(&attr);
        pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
        fab__cu_stream_get(s); /* the worker's */
        int err = pthread_create(&t, &attr, fab__cu_worker, s);
        pthread_attr_destroy(&attr);
        if (err != 0) {
            fab__cu_stream_put(s);
            return CUDA_ERROR_OUT_OF_MEMORY;
        }
        s->worker = true;
    }
    op->seq = ++s->submitted;
    atomic_fetch_add_explicit(&fab__cu_sq.queued, 1, memory_order_relaxed);
    if (s->tail)
        s->tail->next = op;
    else
        s->head = op;
    s->tail = op;
    pthread_cond_broadcast(&fab__cu_sq.cv);
    return CUDA_SUCCESS;
}

/* The head op of s finished running (mu held). */
static void fab__cu_op_finish(struct CUstream_st *s, fab__cu_op_t *op)
{
    s->head = op->next;
    if (!s->head)
        s->tail = NULL;
    s->completed = op->seq;
    fab__cu_op_free(op);
    /* Release: what the op wrote is seen by a thread that reads 0 here. */
    atomic_fetch_sub_explicit(&fab__cu_sq.queued, 1, memory_order_release);
    pthread_cond_broadcast(&fab__cu_sq.cv);
}

static void fab__cu_op_run(fab__cu_op_t *op)
{
    if (op->run)
        op->run(op->arg);
    if (op->done)
        op->done(op->arg);
}

static void *fab__cu_worker(void *arg)
{
    struct CUstream_st *s = arg;
    pthread_mutex_lock(&fab__cu_sq.mu);
    for (;;) {
        fab__cu_op_t *op = s->head;
        if (!op && s->destroyed)
            break;
        if (!op || op->claimed || !fab__cu_op_ready(op)) {
            pthread_cond_wait(&fab__cu_sq.cv, &fab__cu_sq.mu);
            continue;
        }
        op->claimed = true;
        pthread_mutex_unlock(&fab__cu_sq.mu);
        fab__cu_op_run(op);
        pthread_mutex_lock(&fab__cu_sq.mu);
        fab__cu_op_finish(s, op);
    }
    s->worker = false;
    fab__cu_stream_put(s);
    pthread_mutex_unlock(&fab__cu_sq.mu);
    return NULL;
}

/* Wait (mu held) until s reaches point. */
void fab__cu_wait_point(struct CUstream_st *s, uint64_t point)
{
    while (s->completed < point)
        pthread_cond_wait(&fab__cu_sq.cv, &fab__cu_sq.mu);
}

/* Submit with mu held; extra, when set, is one more dep (cuStreamWaitEvent).
 * For FAB__CU_SUBMIT_WAIT, returns with the op done. */
CUresult fab__cu_submit_locked(struct CUstream_st *s, unsigned flags,
                               void (*run)(void *), void *arg, void (*done)(void *),
                               const fab__cu_dep_t *extra, uint64_t *seq_out)
{
    fab__cu_op_t *op = calloc(1, sizeof(*op));
    if (!op)
        return CUDA_ERROR_OUT_OF_MEMORY;
    op->run = run;
    op->done = done;
    op->arg = arg;
    CUresult r = fab__cu_op_default_deps(op, s);
    if (r == CUDA_SUCCESS && extra && extra->stream != s)
        r = fab__cu_op_add_dep(op, extra->stream, extra->point);
    if (r != CUDA_SUCCESS) {
        fab__cu_op_free(op);
        return r;
    }
    bool inline_run = (flags & FAB__CU_SUBMIT_WAIT) && !s->head && fab__cu_op_ready(op);
    op->claimed = inline_run;
    r = fab__cu_op_queue(s, op);
    if (r != CUDA_SUCCESS) {
        fab__cu_op_free(op);
        return r;
    }
    uint64_t seq = op->seq;
    if (seq_out)
        *seq_out = seq;
    if (inline_run) {
        fab__cu_stream_get(s);
        pthread_mutex_unlock(&fab__cu_sq.mu);
        fab__cu_op_run(op);
        pthread_mutex_lock(&fab__cu_sq.mu);
        fab__cu_op_finish(s, op);
        fab__cu_stream_put(s);
    } else if (flags & FAB__CU_SUBMIT_WAIT) {
        fab__cu_stream_get(s);
        fab__cu_wait_point(s, seq);
        fab__cu_stream_put(s);
    }
    return CUDA_SUCCESS;
}

CUresult fab__cu_stream_submit(CUstream h, unsigned flags, void (*run)(void *arg), void *arg,
                               void (*done)(void *arg))
{
    pthread_mutex_lock(&fab__cu_sq.mu);
    struct CUstream_st *s;
    CUresult r = fab__cu_stream_from_handle(h, flags & FAB__CU_SUBMIT_PER_THREAD, &s);
    if (r == CUDA_SUCCESS)
        r = fab__cu_submit_locked(s, flags, run, arg, done, NULL, NULL);
    pthread_mutex_unlock(&fab__cu_sq.mu);
    return r;
}

CUresult fab__cu_stream_enqueue(CUstream s, void (*run)(void *arg), void *arg,
                                void (*done)(void *arg))
{
    return fab__cu_stream_submit(s, 0, run, arg, done);
}

CUresult fab__cu_stream_check(CUstream h)
{
    pthread_mutex_lock(&fab__cu_sq.mu);
    CUresult r = CUDA_SUCCESS;
    uintptr_t v = (uintptr_t)h;
    if (v == 0 || v == FAB_CU_STREAM_LEGACY || v == FAB_CU_STREAM_PER_THREAD) {
        CUcontext ctx;
        r = fab__cu_current_ctx(&ctx);
    } else if (!fab__cu_idtable_find(&fab__cu_sq.streams, v)) {
        r = CUDA_ERROR_INVALID_HANDLE;
    }
    pthread_mutex_unlock(&fab__cu_sq.mu);
    return r;
}

/* Wait for stream h's work; *ctx_out: the stream's context, whose sticky
 * error the synchronisation answers (not the current context's). */
static CUresult fab__cu_stream_sync(CUstream h, bool per_thread, CUcontext *ctx_out)
{
    FAB__CU_ENTER();
    pthread_mutex_lock(&fab__cu_sq.mu);
    struct CUstream_st *s;
    CUresult r = fab__cu_stream_from_handle(h, per_thread, &s);
    if (r == CUDA_SUCCESS) {
        *ctx_out = s->ctx;
        if (s->kind == FAB__CU_STREAM_LEGACY) {
            /* As an operation on the legacy stream would: its own work and
             * that of the blocking streams before it. */
            r = fab__cu_submit_locked(s, FAB__CU_SUBMIT_WAIT, NULL, NULL, NULL, NULL, NULL);
        } else {
            fab__cu_stream_get(s);
            fab__cu_wait_point(s, s->submitted);
            fab__cu_stream_put(s);
        }
    }
    pthread_mutex_unlock(&fab__cu_sq.mu);
    return r;
}

static CUresult fab__cu_stream_query(CUstream h, bool per_thread)
{
    FAB__CU_ENTER();
    pthread_mutex_lock(&fab__cu_sq.mu);
    struct CUstream_st *s;
    CUresult r = fab__cu_stream_from_handle(h, per_thread, &s);
    if (r == CUDA_SUCCESS) {
        bool busy = fab__cu_pending(s);
        if (s->kind == FAB__CU_STREAM_LEGACY) {
            for (struct CUstream_st *t = s->cq->streams; t && !busy; t = t->cq_next)
                busy = fab__cu_blocking(t) && fab__cu_pending(t);
        }
        r = busy ? CUDA_ERROR_NOT_READY : CUDA_SUCCESS;
    }
    pthread_mutex_unlock(&fab__cu_sq.mu);
    return r;
}

void (*fab__cu_stream_sync_hook)(void);

bool fab__cu_streams_idle(void)
{
    return atomic_load_explicit(&fab__cu_sq.queued, memory_order_acquire) == 0;
}

/* A synchronisation of ctx returns: multicast stores go out (stream.h), and
 * a kernel's sticky error in ctx is what it answers (device.h). */
CUresult fab__cu_synced_ctx(CUresult r, CUcontext ctx)
{
    if (r == CUDA_SUCCESS && fab__cu_stream_sync_hook)
        fab__cu_stream_sync_hook();
    if (r == CUDA_SUCCESS)
        r = fab__cu_sticky(ctx);
    return r;
}

CUresult fab__cu_synced(CUresult r)
{
    CUcontext ctx = NULL;
    (void)fab__cu_current_ctx(&ctx);
    return fab__cu_synced_ctx(r, ctx);
}

CUresult cuStreamSynchronize(CUstream hStream)
{
    FAB__CU_FAULT();
    CUcontext ctx = NULL;
    CUresult r = fab__cu_stream_sync(hStream, false, &ctx);
    return fab__cu_synced_ctx(r, ctx);
}

CUresult cuStreamSynchronize_ptsz(CUstream hStream)
{
    FAB__CU_FAULT();
    CUcontext ctx = NULL;
    CUresult r = fab__cu_stream_sync(hStream, true, &ctx);
    return fab__cu_synced_ctx(r, ctx);
}

CUresult cuStreamQuery(CUstream hStream)
{
    FAB__CU_FAULT();
    return fab__cu_stream_query(hStream, false);
}

CUresult cuStreamQuery_ptsz(CUstream hStream)
{
    FAB__CU_FAULT();
    return fab__cu_stream_query(hStream, true);
}

/* Resolve a stream for a query of its properties (mu taken and dropped). */
/* ---- contexts ------------------------------------------------------------- */

CUresult cuCtxSynchronize_v2(CUcontext ctx)
{
    FAB__CU_ENTER();
    if (!ctx)
        FAB__CU_TRY(fab__cu_current_ctx(&ctx));
    else
        FAB__CU_TRY(fab__cu_ctx_check(ctx));
    pthread_mutex_lock(&fab__cu_sq.mu);
    fab__cu_ctxq_t *cq = NULL;
    for (fab__cu_ctxq_t *q = fab__cu_sq.ctxqs; q; q = q->next) {
        if (q->ctx == ctx)
            cq = q;
    }
    if (cq) {
        /* Every stream's work submitted before now; new streams and work
         * that come while waiting are not waited for. */
        size_t n = 1;
        for (struct CUstream_st *t = cq->streams; t; t = t->cq_next)
            n++;
        fab__cu_dep_t *targets = calloc(n, sizeof(*targets));
        if (!targets) {
            pthread_mutex_unlock(&fab__cu_sq.mu);
            return CUDA_ERROR_OUT_OF_MEMORY;
        }
        size_t k = 0;
        targets[k++] = (fab__cu_dep_t){cq->legacy, cq->legacy->submitted};
        for (struct CUstream_st *t = cq->streams; t; t = t->cq_next)
            targets[k++] = (fab__cu_dep_t){t, t->submitted};
        for (size_t i = 0; i < k; i++)
            fab__cu_stream_get(targets[i].stream);
        for (size_t i = 0; i < k; i++)
            fab__cu_wait_point(targets[i].stream, targets[i].point);
        for (size_t i = 0; i < k; i++)
            fab__cu_stream_put(targets[i].stream);
        free(targets);
    }
    pthread_mutex_unlock(&fab__cu_sq.mu);
    return fab__cu_synced_ctx(CUDA_SUCCESS, ctx);
}

CUresult cuCtxSynchronize(void)
{
    return cuCtxSynchronize_v2(NULL);
}

