/* Streams and events: cuStreamCreate(WithPriority), cuStreamDestroy,
 * cuStreamSynchronize, cuStreamQuery, cuStreamWaitEvent, cuStreamGet*,
 * capture queries (never capturing), cuLaunchHostFunc, cuStreamAddCallback,
 * cuEvent*, cuCtxSynchronize, and fab__cu_stream_submit, through which every
 * other module puts work on a stream (stream.h).
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
 * Lifecycle of an event: create (refs 1, the handle) ─▶ record* (each pending
 * record operation holds a ref; the event names the stream and the point of
 * its last record) ─▶ destroy (out of the handle table; freed by the last
 * ref, so a record still queued completes harmlessly).
 *
 * Locking. All of this module's state is guarded by one mutex,
 * fab__cu_sq.mu, with one condition variable broadcast whenever a stream
 * reaches a new point or gets work. Order: fab__cu.lock, then fab__cu_sq.mu;
 * never the reverse: nothing here takes fab__cu.lock while holding mu, and no
 * operation runs with mu held. Operations run with no lock held and take
 * fab__cu.lock for reading themselves (copy.c), so an operation never runs
 * under fab__cu.lock held for writing, and no thread waits for a stream while
 * holding fab__cu.lock (waits happen in entry points, before they lock).
 *
 * Interprocess events (CU_EVENT_INTERPROCESS) keep, besides the above, two
 * counters in a page of shared memory (a sealed memfd, published by
 * cuIpcGetEventHandle, ipc.c): recorded, bumped by each record, and
 * completed, raised to a record's number when its stream reaches it. Every
 * process that has the event (its creator, and those that opened its
 * handle) records, queries and waits through that page, so a record in one
 * process is seen by a query, a synchronize or a cuStreamWaitEvent in
 * another: complete means completed >= recorded as it was read when asked.
 * Waiting for another process polls the page, backing off to a millisecond
 * (no lock is held meanwhile); a record completing in this process also
 * wakes local waiters through the condition variable as before.
 *
 * Who may still complete a record. Any holder of the page can write it: one
 * that sets recorded to 2^62 would have every wait last forever. So each
 * process that has the event holds a POSIX read lock on the page's first
 * byte (fcntl F_SETLK: the kernel drops it when that process exits or
 * closes the page), and counts its own records still queued. A wait, and a
 * query, whose count is not reached ends as complete once this process has
 * no record queued and no other process holds the lock (F_GETLK): nobody is
 * left who could raise completed, so what remains was never a record. A
 * holder can thus hold a wait as long as it lives and keeps the page, as it
 * could under the driver by recording on a stream that never gets there,
 * and no longer.
 *
 * Process exit: workers are detached and never joined; exit() ends them
 * wherever they are (waiting, or polling in cuStreamWaitValue32), so work
 * still queued at exit neither hangs nor crashes the process; it is not run. */
#include "src/cuda/state.h"
#include "src/cuda/device.h"
#include "src/cuda/stream.h"
#include "src/cuda/entry.h"
#include "src/cuda/idtable.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "src/common/log.h"
#include "src/common/memfd.h"
#include "src/fabric/client_ipc.h"

#define FAB__CU_PRIORITY_LEAST 0
#define FAB__CU_PRIORITY_GREATEST (-5)

typedef enum { FAB__CU_STREAM_CREATED, FAB__CU_STREAM_LEGACY, FAB__CU_STREAM_PTDS } fab__cu_skind_t;

typedef struct fab__cu_dep {
    struct CUstream_st *stream; /* holds a ref */
    uint64_t point;
} fab__cu_dep_t;

typedef struct fab__cu_op {
    void (*run)(void *arg);
    void (*done)(void *arg);
    void *arg;
    uint64_t seq;
    bool claimed; /* being run, by the worker or a synchronous caller */
    size_t ndeps;
    fab__cu_dep_t deps[3]; /* the default-stream rule may need many: see more */
    fab__cu_dep_t *more;
    size_t nmore;
    struct fab__cu_op *next;
} fab__cu_op_t;

typedef struct fab__cu_ctxq fab__cu_ctxq_t;

struct CUstream_st {
    CUcontext ctx;
    fab__cu_ctxq_t *cq;
    fab__cu_skind_t kind;
    unsigned flags;
    int priority;
    unsigned long long id;
    uint64_t submitted, completed;
    fab__cu_op_t *head, *tail;
    bool worker;    /* a worker thread runs for it */
    bool destroyed; /* its handle is gone; the worker exits once drained */
    unsigned refs;
    struct CUstream_st *cq_next, **cq_prev; /* the context's list */
};

/* A context's streams: its legacy stream, and every other stream of it
 * still allocated (the legacy stream's rule and cuCtxSynchronize walk it). */
struct fab__cu_ctxq {
    CUcontext ctx;
    struct CUstream_st *legacy;
    struct CUstream_st *streams;
    fab__cu_ctxq_t *next;
};

struct CUevent_st {
    unsigned flags;
    unsigned refs;
    struct CUstream_st *stream; /* of the last record (holds a ref), or NULL */
    uint64_t point;             /* the stream's point that completes it */
    bool timed;                 /* time holds when that point was reached */
    struct timespec time;
    uint64_t *shared; /* interprocess: {recorded, completed}, shared; else NULL */
    int shared_fd;    /* its memfd (-1: none), its first byte read-locked by us */
    unsigned queued;  /* interprocess: our records not run yet (atomic) */
    bool published;   /* handle holds its IPC handle (ipc.c) */
    unsigned char handle[64];
};

/* A thread's per-thread default streams, one per context it used. */
typedef struct fab__cu_ptds {
    struct CUstream_st *stream;
    struct fab__cu_ptds *next;
} fab__cu_ptds_t;

static struct {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    fab__cu_idtable_t streams; /* live created streams, by address */
    fab__cu_idtable_t events;  /* live events, by address */
    fab__cu_ctxq_t *ctxqs;
    unsigned long long next_id;
    pthread_key_t ptds_key;
} fab__cu_sq = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, {0}, {0}, NULL, 1, 0};

static pthread_once_t fab__cu_sq_once = PTHREAD_ONCE_INIT;
static _Thread_local fab__cu_ptds_t *fab__cu_tls_ptds;

/* ---- references -------------------------------------------------------- */

static void fab__cu_stream_get(struct CUstream_st *s)
{
    s->refs++;
}

static void fab__cu_stream_put(struct CUstream_st *s)
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

static void fab__cu_event_put(struct CUevent_st *e)
{
    if (--e->refs > 0)
        return;
    if (e->stream)
        fab__cu_stream_put(e->stream);
    if (e->shared)
        munmap(e->shared, (size_t)sysconf(_SC_PAGESIZE));
    if (e->shared_fd >= 0)
        close(e->shared_fd);
    free(e);
}

/* ---- streams of a context ---------------------------------------------- */

static struct CUstream_st *fab__cu_stream_new(CUcontext ctx, fab__cu_ctxq_t *cq,
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

static fab__cu_ctxq_t *fab__cu_ctxq(CUcontext ctx)
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
static CUresult fab__cu_resolve(CUstream h, bool per_thread, struct CUstream_st **out)
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
static void fab__cu_wait_point(struct CUstream_st *s, uint64_t point)
{
    while (s->completed < point)
        pthread_cond_wait(&fab__cu_sq.cv, &fab__cu_sq.mu);
}

/* Submit with mu held; extra, when set, is one more dep (cuStreamWaitEvent).
 * For FAB__CU_SUBMIT_WAIT, returns with the op done. */
static CUresult fab__cu_submit_locked(struct CUstream_st *s, unsigned flags,
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
    CUresult r = fab__cu_resolve(h, flags & FAB__CU_SUBMIT_PER_THREAD, &s);
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

/* ---- stream entry points ---------------------------------------------- */

CUresult cuStreamCreateWithPriority(CUstream *phStream, unsigned int flags, int priority)
{
    FAB__CU_ENTER();
    if (!phStream || (flags & ~(unsigned)CU_STREAM_NON_BLOCKING))
        return CUDA_ERROR_INVALID_VALUE;
    CUcontext ctx;
    FAB__CU_TRY(fab__cu_current_ctx(&ctx));
    /* Priorities outside the range are clamped to it, as documented. */
    if (priority > FAB__CU_PRIORITY_LEAST)
        priority = FAB__CU_PRIORITY_LEAST;
    if (priority < FAB__CU_PRIORITY_GREATEST)
        priority = FAB__CU_PRIORITY_GREATEST;
    pthread_mutex_lock(&fab__cu_sq.mu);
    CUresult r = CUDA_ERROR_OUT_OF_MEMORY;
    fab__cu_ctxq_t *cq = fab__cu_ctxq(ctx);
    struct CUstream_st *s = cq ? fab__cu_stream_new(ctx, cq, FAB__CU_STREAM_CREATED, flags,
                                                    priority)
                               : NULL;
    if (s) {
        if (fab__cu_idtable_insert(&fab__cu_sq.streams, (uintptr_t)s, s) == 0) {
            *phStream = s;
            r = CUDA_SUCCESS;
        } else {
            fab__cu_stream_put(s);
        }
    }
    pthread_mutex_unlock(&fab__cu_sq.mu);
    return r;
}

CUresult cuStreamCreate(CUstream *phStream, unsigned int Flags)
{
    FAB__CU_FAULT();
    return FAB__CU_INNER(cuStreamCreateWithPriority(phStream, Flags, 0));
}

CUresult cuStreamDestroy_v2(CUstream hStream)
{
    FAB__CU_ENTER();
    uintptr_t v = (uintptr_t)hStream;
    if (v == 0 || v == FAB_CU_STREAM_LEGACY || v == FAB_CU_STREAM_PER_THREAD)
        return CUDA_ERROR_INVALID_HANDLE;
    pthread_mutex_lock(&fab__cu_sq.mu);
    struct CUstream_st *s = fab__cu_idtable_remove(&fab__cu_sq.streams, v);
    if (s) {
        /* Work already queued still runs: the worker holds its own ref and
         * exits once the queue is empty. */
        s->destroyed = true;
        pthread_cond_broadcast(&fab__cu_sq.cv);
        fab__cu_stream_put(s);
    }
    pthread_mutex_unlock(&fab__cu_sq.mu);
    return s ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}

CUresult cuStreamDestroy(CUstream hStream)
{
    return cuStreamDestroy_v2(hStream);
}

static CUresult fab__cu_stream_sync(CUstream h, bool per_thread)
{
    FAB__CU_ENTER();
    pthread_mutex_lock(&fab__cu_sq.mu);
    struct CUstream_st *s;
    CUresult r = fab__cu_resolve(h, per_thread, &s);
    if (r == CUDA_SUCCESS) {
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
    CUresult r = fab__cu_resolve(h, per_thread, &s);
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

/* A synchronisation returns: multicast stores go out (stream.h), and a
 * kernel's sticky error on the current device is what it answers
 * (device.h). */
static CUresult fab__cu_synced(CUresult r)
{
    if (r == CUDA_SUCCESS && fab__cu_stream_sync_hook)
        fab__cu_stream_sync_hook();
    int dev;
    if (r == CUDA_SUCCESS && fab__cu_current_device(&dev) == CUDA_SUCCESS)
        r = fab__cu_sticky(dev);
    return r;
}

CUresult cuStreamSynchronize(CUstream hStream)
{
    FAB__CU_FAULT();
    return fab__cu_synced(fab__cu_stream_sync(hStream, false));
}

CUresult cuStreamSynchronize_ptsz(CUstream hStream)
{
    FAB__CU_FAULT();
    return fab__cu_synced(fab__cu_stream_sync(hStream, true));
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
static CUresult fab__cu_stream_props(CUstream h, bool per_thread, CUcontext *ctx, unsigned *flags,
                                     int *priority, unsigned long long *id)
{
    FAB__CU_ENTER();
    pthread_mutex_lock(&fab__cu_sq.mu);
    struct CUstream_st *s;
    CUresult r = fab__cu_resolve(h, per_thread, &s);
    if (r == CUDA_SUCCESS) {
        *ctx = s->ctx;
        *flags = s->flags;
        *priority = s->priority;
        *id = s->id;
    }
    pthread_mutex_unlock(&fab__cu_sq.mu);
    return r;
}

#define FAB__CU_STREAM_GETTER(name, per_thread, type, out, field)                     \
    CUresult name(CUstream hStream, type *out)                                       \
    {                                                                                 \
        FAB__CU_FAULT();                                                              \
        if (!out)                                                                     \
            return CUDA_ERROR_INVALID_VALUE;                                          \
        CUcontext ctx;                                                                \
        unsigned flags;                                                               \
        int priority;                                                                 \
        unsigned long long id;                                                        \
        CUresult r = fab__cu_stream_props(hStream, per_thread, &ctx, &flags, &priority, &id); \
        if (r == CUDA_SUCCESS)                                                        \
            *out = (type)(field);                                                     \
        return r;                                                                     \
    }

FAB__CU_STREAM_GETTER(cuStreamGetFlags, false, unsigned int, flags_out, flags)
FAB__CU_STREAM_GETTER(cuStreamGetFlags_ptsz, true, unsigned int, flags_out, flags)
FAB__CU_STREAM_GETTER(cuStreamGetPriority, false, int, priority_out, priority)
FAB__CU_STREAM_GETTER(cuStreamGetPriority_ptsz, true, int, priority_out, priority)
FAB__CU_STREAM_GETTER(cuStreamGetId, false, unsigned long long, id_out, id)
FAB__CU_STREAM_GETTER(cuStreamGetId_ptsz, true, unsigned long long, id_out, id)
FAB__CU_STREAM_GETTER(cuStreamGetCtx, false, CUcontext, ctx_out, ctx)
FAB__CU_STREAM_GETTER(cuStreamGetCtx_ptsz, true, CUcontext, ctx_out, ctx)

/* CUDA 12.5's ABI also names a stream's green context; the emulation makes
 * none, so that is always NULL. */
static CUresult fab__cu_stream_get_ctx2(CUstream h, bool per_thread, CUcontext *pCtx,
                                        CUgreenCtx *pGreenCtx)
{
    if (!pCtx || !pGreenCtx)
        return CUDA_ERROR_INVALID_VALUE;
    CUcontext ctx;
    unsigned flags;
    int priority;
    unsigned long long id;
    CUresult r = fab__cu_stream_props(h, per_thread, &ctx, &flags, &priority, &id);
    if (r == CUDA_SUCCESS) {
        *pCtx = ctx;
        *pGreenCtx = NULL;
    }
    return r;
}

CUresult cuStreamGetCtx_v2(CUstream hStream, CUcontext *pCtx, CUgreenCtx *pGreenCtx)
{
    FAB__CU_FAULT();
    return fab__cu_stream_get_ctx2(hStream, false, pCtx, pGreenCtx);
}

CUresult cuStreamGetCtx_v2_ptsz(CUstream hStream, CUcontext *pCtx, CUgreenCtx *pGreenCtx)
{
    FAB__CU_FAULT();
    return fab__cu_stream_get_ctx2(hStream, true, pCtx, pGreenCtx);
}

static CUresult fab__cu_stream_device(CUstream h, bool per_thread, CUdevice *device)
{
    if (!device)
        return CUDA_ERROR_INVALID_VALUE;
    CUcontext ctx;
    unsigned flags;
    int priority;
    unsigned long long id;
    FAB__CU_TRY(fab__cu_stream_props(h, per_thread, &ctx, &flags, &priority, &id));
    return FAB__CU_INNER(cuCtxGetDevice_v2(device, ctx));
}

CUresult cuStreamGetDevice(CUstream hStream, CUdevice *device)
{
    FAB__CU_FAULT();
    return fab__cu_stream_device(hStream, false, device);
}

CUresult cuStreamGetDevice_ptsz(CUstream hStream, CUdevice *device)
{
    FAB__CU_FAULT();
    return fab__cu_stream_device(hStream, true, device);
}

CUresult cuCtxGetStreamPriorityRange(int *leastPriority, int *greatestPriority)
{
    FAB__CU_ENTER();
    CUcontext ctx;
    FAB__CU_TRY(fab__cu_current_ctx(&ctx));
    if (leastPriority)
        *leastPriority = FAB__CU_PRIORITY_LEAST;
    if (greatestPriority)
        *greatestPriority = FAB__CU_PRIORITY_GREATEST;
    return CUDA_SUCCESS;
}

/* ---- capture: never capturing --------------------------------------------- */

static CUresult fab__cu_capture_info(CUstream h, bool per_thread, CUstreamCaptureStatus *status,
                                     cuuint64_t *id, CUgraph *graph, const CUgraphNode **deps,
                                     const CUgraphEdgeData **edges, size_t *ndeps)
{
    if (!status)
        return CUDA_ERROR_INVALID_VALUE;
    CUcontext ctx;
    unsigned flags;
    int priority;
    unsigned long long sid;
    FAB__CU_TRY(fab__cu_stream_props(h, per_thread, &ctx, &flags, &priority, &sid));
    /* Stream capture is not emulated: no stream is ever capturing, and the
     * other outputs are defined only while one is. */
    *status = CU_STREAM_CAPTURE_STATUS_NONE;
    (void)id;
    (void)graph;
    (void)deps;
    (void)edges;
    (void)ndeps;
    return CUDA_SUCCESS;
}

CUresult cuStreamIsCapturing(CUstream hStream, CUstreamCaptureStatus *captureStatus)
{
    FAB__CU_FAULT();
    return fab__cu_capture_info(hStream, false, captureStatus, NULL, NULL, NULL, NULL, NULL);
}

CUresult cuStreamIsCapturing_ptsz(CUstream hStream, CUstreamCaptureStatus *captureStatus)
{
    FAB__CU_FAULT();
    return fab__cu_capture_info(hStream, true, captureStatus, NULL, NULL, NULL, NULL, NULL);
}

CUresult cuStreamGetCaptureInfo(CUstream hStream, CUstreamCaptureStatus *captureStatus_out,
                                cuuint64_t *id_out)
{
    FAB__CU_FAULT();
    return fab__cu_capture_info(hStream, false, captureStatus_out, id_out, NULL, NULL, NULL, NULL);
}

CUresult cuStreamGetCaptureInfo_ptsz(CUstream hStream, CUstreamCaptureStatus *captureStatus_out,
                                     cuuint64_t *id_out)
{
    FAB__CU_FAULT();
    return fab__cu_capture_info(hStream, true, captureStatus_out, id_out, NULL, NULL, NULL, NULL);
}

CUresult cuStreamGetCaptureInfo_v2(CUstream hStream, CUstreamCaptureStatus *captureStatus_out,
                                   cuuint64_t *id_out, CUgraph *graph_out,
                                   const CUgraphNode **dependencies_out,
                                   size_t *numDependencies_out)
{
    FAB__CU_FAULT();
    return fab__cu_capture_info(hStream, false, captureStatus_out, id_out, graph_out,
                                dependencies_out, NULL, numDependencies_out);
}

CUresult cuStreamGetCaptureInfo_v2_ptsz(CUstream hStream, CUstreamCaptureStatus *captureStatus_out,
                                        cuuint64_t *id_out, CUgraph *graph_out,
                                        const CUgraphNode **dependencies_out,
                                        size_t *numDependencies_out)
{
    FAB__CU_FAULT();
    return fab__cu_capture_info(hStream, true, captureStatus_out, id_out, graph_out,
                                dependencies_out, NULL, numDependencies_out);
}

CUresult cuStreamGetCaptureInfo_v3(CUstream hStream, CUstreamCaptureStatus *captureStatus_out,
                                   cuuint64_t *id_out, CUgraph *graph_out,
                                   const CUgraphNode **dependencies_out,
                                   const CUgraphEdgeData **edgeData_out,
                                   size_t *numDependencies_out)
{
    FAB__CU_FAULT();
    return fab__cu_capture_info(hStream, false, captureStatus_out, id_out, graph_out,
                                dependencies_out, edgeData_out, numDependencies_out);
}

CUresult cuStreamGetCaptureInfo_v3_ptsz(CUstream hStream, CUstreamCaptureStatus *captureStatus_out,
                                        cuuint64_t *id_out, CUgraph *graph_out,
                                        const CUgraphNode **dependencies_out,
                                        const CUgraphEdgeData **edgeData_out,
                                        size_t *numDependencies_out)
{
    FAB__CU_FAULT();
    return fab__cu_capture_info(hStream, true, captureStatus_out, id_out, graph_out,
                                dependencies_out, edgeData_out, numDependencies_out);
}

CUresult cuThreadExchangeStreamCaptureMode(CUstreamCaptureMode *mode)
{
    FAB__CU_ENTER();
    static _Thread_local CUstreamCaptureMode current = CU_STREAM_CAPTURE_MODE_GLOBAL;
    if (!mode || (unsigned)*mode > CU_STREAM_CAPTURE_MODE_RELAXED)
        return CUDA_ERROR_INVALID_VALUE;
    CUstreamCaptureMode old = current;
    current = *mode;
    *mode = old;
    return CUDA_SUCCESS;
}

/* ---- host functions ------------------------------------------------------- */

typedef struct fab__cu_host_call {
    CUhostFn fn;
    CUstreamCallback cb;
    CUstream stream;
    void *user;
} fab__cu_host_call_t;

static void fab__cu_host_call_run(void *arg)
{
    fab__cu_host_call_t *c = arg;
    if (c->fn)
        c->fn(c->user);
    else
        c->cb(c->stream, CUDA_SUCCESS, c->user);
}

static CUresult fab__cu_host_call(CUstream h, bool per_thread, CUhostFn fn, CUstreamCallback cb,
                                  void *user)
{
    FAB__CU_ENTER();
    fab__cu_host_call_t *c = malloc(sizeof(*c));
    if (!c)
        return CUDA_ERROR_OUT_OF_MEMORY;
    c->fn = fn;
    c->cb = cb;
    c->stream = h;
    c->user = user;
    CUresult r = fab__cu_stream_submit(h, per_thread ? FAB__CU_SUBMIT_PER_THREAD : 0,
                                       fab__cu_host_call_run, c, free);
    if (r != CUDA_SUCCESS)
        free(c);
    return r;
}

CUresult cuLaunchHostFunc(CUstream hStream, CUhostFn fn, void *userData)
{
    FAB__CU_FAULT();
    if (!fn)
        return CUDA_ERROR_INVALID_VALUE;
    return fab__cu_host_call(hStream, false, fn, NULL, userData);
}

CUresult cuLaunchHostFunc_ptsz(CUstream hStream, CUhostFn fn, void *userData)
{
    FAB__CU_FAULT();
    if (!fn)
        return CUDA_ERROR_INVALID_VALUE;
    return fab__cu_host_call(hStream, true, fn, NULL, userData);
}

CUresult cuStreamAddCallback(CUstream hStream, CUstreamCallback callback, void *userData,
                             unsigned int flags)
{
    FAB__CU_FAULT();
    if (!callback || flags != 0)
        return CUDA_ERROR_INVALID_VALUE;
    return fab__cu_host_call(hStream, false, NULL, callback, userData);
}

CUresult cuStreamAddCallback_ptsz(CUstream hStream, CUstreamCallback callback, void *userData,
                                  unsigned int flags)
{
    FAB__CU_FAULT();
    if (!callback || flags != 0)
        return CUDA_ERROR_INVALID_VALUE;
    return fab__cu_host_call(hStream, true, NULL, callback, userData);
}

/* ---- events ---------------------------------------------------------------- */

/* Say that this process has e's page (the rule at the top of this file): a read lock
 * on its first byte, held until the process exits or closes a descriptor
 * of the page (POSIX locks are the process's, not the descriptor's), so it
 * is taken again after any such close. Best effort: without it, others
 * stop waiting for this process's records once they have none of their
 * own queued. */
static void fab__cu_event_lock(const struct CUevent_st *e)
{
    struct flock fl = {.l_type = F_RDLCK, .l_whence = SEEK_SET, .l_start = 0, .l_len = 1};
    (void)fcntl(e->shared_fd, F_SETLK, &fl);
}

/* Give e its shared page: fd's (another process's, which e then owns), or
 * a new one (fd < 0). 0, or -1. */
static int fab__cu_event_share(struct CUevent_st *e, int fd)
{
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    bool made = fd < 0;
    if (made && fab__memfd_create("cuEventIpc", page, &fd) != FAB_SUCCESS)
        return -1;
    void *p = mmap(NULL, page, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (p == MAP_FAILED) {
        if (made)
            close(fd);
        return -1;
    }
    e->shared = p;
    e->shared_fd = fd;
    fab__cu_event_lock(e);
    return 0;
}

/* Whether a record of e's page may still complete where its count says it
 * has not: one of ours is queued, or another process holds the page (its
 * read lock: it lives and has the page). */
static bool fab__cu_shared_may_complete(struct CUevent_st *e)
{
    if (__atomic_load_n(&e->queued, __ATOMIC_ACQUIRE) != 0)
        return true;
    struct flock fl = {.l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = 0, .l_len = 1};
    if (fcntl(e->shared_fd, F_GETLK, &fl) != 0)
        return true; /* cannot tell: keep waiting, as before */
    return fl.l_type != F_UNLCK;
}

static bool fab__cu_shared_done(struct CUevent_st *e, uint64_t target)
{
    return __atomic_load_n(&e->shared[1], __ATOMIC_ACQUIRE) >= target ||
           !fab__cu_shared_may_complete(e);
}

/* Wait, with no lock held, until the shared page's completed count reaches
 * target: another process's stream gets there, so poll, backing off; or
 * until nobody is left who could get it there. */
static void fab__cu_shared_wait(struct CUevent_st *e, uint64_t target)
{
    long ns = 1000;
    while (__atomic_load_n(&e->shared[1], __ATOMIC_ACQUIRE) < target) {
        struct timespec ts = {0, ns};
        nanosleep(&ts, NULL);
        if (ns < 1000000)
            ns *= 2;
        else if (!fab__cu_shared_may_complete(e))
            return;
    }
}

typedef struct fab__cu_shared_waiter {
    struct CUevent_st *event; /* holds a ref: its page stays mapped */
    uint64_t target;
} fab__cu_shared_waiter_t;

static void fab__cu_shared_wait_run(void *arg)
{
    fab__cu_shared_waiter_t *w = arg;
    fab__cu_shared_wait(w->event, w->target);
    pthread_mutex_lock(&fab__cu_sq.mu);
    fab__cu_event_put(w->event);
    pthread_mutex_unlock(&fab__cu_sq.mu);
    free(w);
}

CUresult cuEventCreate(CUevent *phEvent, unsigned int Flags)
{
    FAB__CU_ENTER();
    const unsigned known = CU_EVENT_BLOCKING_SYNC | CU_EVENT_DISABLE_TIMING | CU_EVENT_INTERPROCESS;
    if (!phEvent || (Flags & ~known))
        return CUDA_ERROR_INVALID_VALUE;
    /* An interprocess event must not time (documented). */
    if ((Flags & CU_EVENT_INTERPROCESS) && !(Flags & CU_EVENT_DISABLE_TIMING))
        return CUDA_ERROR_INVALID_VALUE;
    CUcontext ctx;
    FAB__CU_TRY(fab__cu_current_ctx(&ctx));
    struct CUevent_st *e = calloc(1, sizeof(*e));
    if (!e)
        return CUDA_ERROR_OUT_OF_MEMORY;
    e->flags = Flags;
    e->refs = 1;
    e->shared_fd = -1;
    if ((Flags & CU_EVENT_INTERPROCESS) && fab__cu_event_share(e, -1) != 0) {
        free(e);
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
    pthread_mutex_lock(&fab__cu_sq.mu);
    int err = fab__cu_idtable_insert(&fab__cu_sq.events, (uintptr_t)e, e);
    pthread_mutex_unlock(&fab__cu_sq.mu);
    if (err != 0) {
        pthread_mutex_lock(&fab__cu_sq.mu);
        fab__cu_event_put(e);
        pthread_mutex_unlock(&fab__cu_sq.mu);
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
    *phEvent = e;
    return CUDA_SUCCESS;
}

typedef struct fab__cu_record {
    struct CUevent_st *event; /* holds a ref */
    uint64_t point;
    uint64_t shared_seq; /* interprocess: this record's number in the page */
} fab__cu_record_t;

static void fab__cu_record_run(void *arg)
{
    fab__cu_record_t *rec = arg;
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    uint64_t *sh = rec->event->shared;
    if (sh) { /* raise completed to our number, never lower it */
        uint64_t have = __atomic_load_n(&sh[1], __ATOMIC_RELAXED);
        while (have < rec->shared_seq &&
               !__atomic_compare_exchange_n(&sh[1], &have, rec->shared_seq, true,
                                            __ATOMIC_RELEASE, __ATOMIC_RELAXED))
            ;
        __atomic_sub_fetch(&rec->event->queued, 1, __ATOMIC_ACQ_REL);
    }
    pthread_mutex_lock(&fab__cu_sq.mu);
    if (rec->event->point == rec->point) { /* not recorded again since */
        rec->event->time = now;
        rec->event->timed = true;
    }
    fab__cu_event_put(rec->event);
    pthread_mutex_unlock(&fab__cu_sq.mu);
    free(rec);
}

static CUresult fab__cu_event_record(CUevent ev, CUstream h, bool per_thread, unsigned flags)
{
    FAB__CU_ENTER();
    if (flags & ~(unsigned)CU_EVENT_RECORD_EXTERNAL)
        return CUDA_ERROR_INVALID_VALUE;
    fab__cu_record_t *rec = malloc(sizeof(*rec));
    if (!rec)
        return CUDA_ERROR_OUT_OF_MEMORY;
    pthread_mutex_lock(&fab__cu_sq.mu);
    struct CUevent_st *e = fab__cu_idtable_find(&fab__cu_sq.events, (uintptr_t)ev);
    struct CUstream_st *s = NULL;
    CUresult r = e ? fab__cu_resolve(h, per_thread, &s) : CUDA_ERROR_INVALID_HANDLE;
    uint64_t point = 0;
    if (r == CUDA_SUCCESS) {
        rec->event = e;
        /* The point is known only once queued; the record reads it then,
         * under mu, which this thread holds until the event names it. */
        rec->point = s->submitted + 1;
        if (e->shared)
            __atomic_add_fetch(&e->queued, 1, __ATOMIC_ACQ_REL);
        rec->shared_seq = e->shared ? __atomic_add_fetch(&e->shared[0], 1, __ATOMIC_ACQ_REL) : 0;
        e->refs++;
        r = fab__cu_submit_locked(s, 0, fab__cu_record_run, rec, NULL, NULL, &point);
        if (r != CUDA_SUCCESS) {
            e->refs--;
            if (e->shared) /* its number stays taken: a count nobody reaches */
                __atomic_sub_fetch(&e->queued, 1, __ATOMIC_ACQ_REL);
        }
    }
    if (r == CUDA_SUCCESS) {
        fab__cu_stream_get(s);
        if (e->stream)
            fab__cu_stream_put(e->stream);
        e->stream = s;
        e->point = point;
        e->timed = false;
    }
    pthread_mutex_unlock(&fab__cu_sq.mu);
    if (r != CUDA_SUCCESS)
        free(rec);
    return r;
}

CUresult cuEventRecord(CUevent hEvent, CUstream hStream)
{
    FAB__CU_FAULT();
    return fab__cu_event_record(hEvent, hStream, false, 0);
}

CUresult cuEventRecord_ptsz(CUevent hEvent, CUstream hStream)
{
    FAB__CU_FAULT();
    return fab__cu_event_record(hEvent, hStream, true, 0);
}

CUresult cuEventRecordWithFlags(CUevent hEvent, CUstream hStream, unsigned int flags)
{
    FAB__CU_FAULT();
    return fab__cu_event_record(hEvent, hStream, false, flags);
}

CUresult cuEventRecordWithFlags_ptsz(CUevent hEvent, CUstream hStream, unsigned int flags)
{
    FAB__CU_FAULT();
    return fab__cu_event_record(hEvent, hStream, true, flags);
}

static bool fab__cu_event_done(const struct CUevent_st *e)
{
    if (e->shared)
        return fab__cu_shared_done((struct CUevent_st *)e,
                                   __atomic_load_n(&e->shared[0], __ATOMIC_ACQUIRE));
    return !e->stream || e->stream->completed >= e->point;
}

CUresult cuEventQuery(CUevent hEvent)
{
    FAB__CU_ENTER();
    pthread_mutex_lock(&fab__cu_sq.mu);
    struct CUevent_st *e = fab__cu_idtable_find(&fab__cu_sq.events, (uintptr_t)hEvent);
    CUresult r = !e                      ? CUDA_ERROR_INVALID_HANDLE
                 : fab__cu_event_done(e) ? CUDA_SUCCESS
                                         : CUDA_ERROR_NOT_READY;
    pthread_mutex_unlock(&fab__cu_sq.mu);
    return r;
}

CUresult cuEventSynchronize(CUevent hEvent)
{
    FAB__CU_ENTER();
    pthread_mutex_lock(&fab__cu_sq.mu);
    struct CUevent_st *e = fab__cu_idtable_find(&fab__cu_sq.events, (uintptr_t)hEvent);
    if (e && e->shared) {
        uint64_t target = __atomic_load_n(&e->shared[0], __ATOMIC_ACQUIRE);
        e->refs++;
        pthread_mutex_unlock(&fab__cu_sq.mu);
        fab__cu_shared_wait(e, target);
        pthread_mutex_lock(&fab__cu_sq.mu);
        fab__cu_event_put(e);
    } else if (e && e->stream) {
        struct CUstream_st *s = e->stream;
        fab__cu_stream_get(s);
        fab__cu_wait_point(s, e->point);
        fab__cu_stream_put(s);
    }
    pthread_mutex_unlock(&fab__cu_sq.mu);
    return e ? fab__cu_synced(CUDA_SUCCESS) : CUDA_ERROR_INVALID_HANDLE;
}

CUresult cuEventDestroy_v2(CUevent hEvent)
{
    FAB__CU_ENTER();
    unsigned char handle[64];
    bool published = false;
    pthread_mutex_lock(&fab__cu_sq.mu);
    struct CUevent_st *e = fab__cu_idtable_remove(&fab__cu_sq.events, (uintptr_t)hEvent);
    if (e) {
        if ((published = e->published))
            memcpy(handle, e->handle, sizeof(handle));
        fab__cu_event_put(e); /* a record still queued holds its own ref */
    }
    pthread_mutex_unlock(&fab__cu_sq.mu);
    /* Its IPC handle no longer opens (processes that opened it keep their
     * event); the daemon is asked with no lock held. */
    if (published && fab__cu.client)
        (void)fab__client_ipc_withdraw(fab__cu.client, handle);
    return e ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}

CUresult cuEventDestroy(CUevent hEvent)
{
    return cuEventDestroy_v2(hEvent);
}

CUresult cuEventElapsedTime_v2(float *pMilliseconds, CUevent hStart, CUevent hEnd)
{
    FAB__CU_ENTER();
    if (!pMilliseconds)
        return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&fab__cu_sq.mu);
    struct CUevent_st *a = fab__cu_idtable_find(&fab__cu_sq.events, (uintptr_t)hStart);
    struct CUevent_st *b = fab__cu_idtable_find(&fab__cu_sq.events, (uintptr_t)hEnd);
    CUresult r = CUDA_SUCCESS;
    /* The documented order: not events, never recorded or not timing →
     * INVALID_HANDLE; recorded but not yet reached → NOT_READY. */
    if (!a || !b || !a->stream || !b->stream ||
        ((a->flags | b->flags) & CU_EVENT_DISABLE_TIMING))
        r = CUDA_ERROR_INVALID_HANDLE;
    else if (!fab__cu_event_done(a) || !fab__cu_event_done(b) || !a->timed || !b->timed)
        r = CUDA_ERROR_NOT_READY;
    else
        *pMilliseconds = (float)((double)(b->time.tv_sec - a->time.tv_sec) * 1e3 +
                                 (double)(b->time.tv_nsec - a->time.tv_nsec) / 1e6);
    pthread_mutex_unlock(&fab__cu_sq.mu);
    return r;
}

/* The ABI before 13.0 has the same arguments and meaning. */
CUresult cuEventElapsedTime(float *pMilliseconds, CUevent hStart, CUevent hEnd)
{
    return cuEventElapsedTime_v2(pMilliseconds, hStart, hEnd);
}

static CUresult fab__cu_stream_wait_event(CUstream h, bool per_thread, CUevent ev, unsigned flags)
{
    FAB__CU_ENTER();
    if (flags & ~(unsigned)CU_EVENT_WAIT_EXTERNAL)
        return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&fab__cu_sq.mu);
    struct CUevent_st *e = fab__cu_idtable_find(&fab__cu_sq.events, (uintptr_t)ev);
    struct CUstream_st *s = NULL;
    CUresult r = e ? fab__cu_resolve(h, per_thread, &s) : CUDA_ERROR_INVALID_HANDLE;
    if (r == CUDA_SUCCESS && e->shared) {
        /* Maybe recorded in another process: wait on the page. */
        uint64_t target = __atomic_load_n(&e->shared[0], __ATOMIC_ACQUIRE);
        fab__cu_shared_waiter_t *w = NULL;
        if (!fab__cu_shared_done(e, target) && !(w = malloc(sizeof(*w))))
            r = CUDA_ERROR_OUT_OF_MEMORY;
        if (w) {
            w->event = e;
            w->target = target;
            e->refs++;
            r = fab__cu_submit_locked(s, 0, fab__cu_shared_wait_run, w, NULL, NULL, NULL);
            if (r != CUDA_SUCCESS) {
                e->refs--;
                free(w);
            }
        }
        pthread_mutex_unlock(&fab__cu_sq.mu);
        return r;
    }
    /* An event never recorded is complete: nothing to wait for. */
    if (r == CUDA_SUCCESS && e->stream) {
        fab__cu_dep_t dep = {e->stream, e->point};
        r = fab__cu_submit_locked(s, 0, NULL, NULL, NULL, &dep, NULL);
    }
    pthread_mutex_unlock(&fab__cu_sq.mu);
    return r;
}

CUresult cuStreamWaitEvent(CUstream hStream, CUevent hEvent, unsigned int Flags)
{
    FAB__CU_FAULT();
    return fab__cu_stream_wait_event(hStream, false, hEvent, Flags);
}

CUresult cuStreamWaitEvent_ptsz(CUstream hStream, CUevent hEvent, unsigned int Flags)
{
    FAB__CU_FAULT();
    return fab__cu_stream_wait_event(hStream, true, hEvent, Flags);
}

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
    return fab__cu_synced(CUDA_SUCCESS);
}

CUresult cuCtxSynchronize(void)
{
    return cuCtxSynchronize_v2(NULL);
}

/* ---- interprocess events, for ipc.c (stream.h) ---------------------------------- */

CUresult fab__cu_event_ipc_source(CUevent ev, int *fd_out, bool *cached, unsigned char handle[64])
{
    CUresult r = CUDA_SUCCESS;
    *fd_out = -1;
    pthread_mutex_lock(&fab__cu_sq.mu);
    struct CUevent_st *e = fab__cu_idtable_find(&fab__cu_sq.events, (uintptr_t)ev);
    if (!e)
        r = CUDA_ERROR_INVALID_HANDLE;
    else if (!e->shared)
        r = CUDA_ERROR_INVALID_VALUE; /* not created CU_EVENT_INTERPROCESS */
    else if ((*cached = e->published))
        memcpy(handle, e->handle, sizeof(e->handle));
    else if ((*fd_out = fcntl(e->shared_fd, F_DUPFD_CLOEXEC, 0)) < 0)
        r = CUDA_ERROR_OUT_OF_MEMORY;
    pthread_mutex_unlock(&fab__cu_sq.mu);
    return r;
}

void fab__cu_event_ipc_relock(CUevent ev)
{
    pthread_mutex_lock(&fab__cu_sq.mu);
    const struct CUevent_st *e = fab__cu_idtable_find(&fab__cu_sq.events, (uintptr_t)ev);
    if (e && e->shared)
        fab__cu_event_lock(e);
    pthread_mutex_unlock(&fab__cu_sq.mu);
}

bool fab__cu_event_ipc_cache(CUevent ev, unsigned char handle[64])
{
    bool kept = false;
    pthread_mutex_lock(&fab__cu_sq.mu);
    struct CUevent_st *e = fab__cu_idtable_find(&fab__cu_sq.events, (uintptr_t)ev);
    if (e && e->published) {
        memcpy(handle, e->handle, sizeof(e->handle));
    } else if (e) {
        memcpy(e->handle, handle, sizeof(e->handle));
        e->published = kept = true;
    }
    pthread_mutex_unlock(&fab__cu_sq.mu);
    return kept;
}

CUresult fab__cu_event_ipc_open(int fd, CUevent *out)
{
    CUcontext ctx;
    FAB__CU_TRY(fab__cu_current_ctx(&ctx));
    struct CUevent_st *e = calloc(1, sizeof(*e));
    if (!e)
        return CUDA_ERROR_OUT_OF_MEMORY;
    e->flags = CU_EVENT_INTERPROCESS | CU_EVENT_DISABLE_TIMING;
    e->refs = 1;
    e->shared_fd = -1;
    if (fab__cu_event_share(e, fd) != 0) {
        free(e);
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
    pthread_mutex_lock(&fab__cu_sq.mu);
    int err = fab__cu_idtable_insert(&fab__cu_sq.events, (uintptr_t)e, e);
    if (err != 0)
        fab__cu_event_put(e);
    pthread_mutex_unlock(&fab__cu_sq.mu);
    if (err != 0)
        return CUDA_ERROR_OUT_OF_MEMORY;
    *out = e;
    return CUDA_SUCCESS;
}
