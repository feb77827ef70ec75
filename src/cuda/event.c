/* Events: cuEventCreate, cuEventRecord*, cuEventQuery, cuEventSynchronize,
 * cuEventDestroy, cuEventElapsedTime, cuStreamWaitEvent, and interprocess
 * events' side of legacy IPC, for ipc.c (stream.h). Events complete at
 * points of stream.c's streams and share its mutex (stream_impl.h; stream.c's
 * top comment has the locking rules).
 *
 * Lifecycle of an event: create (refs 1, the handle) ─▶ record* (each pending
 * record operation holds a ref; the event names the stream and the point of
 * its last record) ─▶ destroy (out of the handle table; freed by the last
 * ref, so a record still queued completes harmlessly).
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
 * and no longer. */
#include "src/cuda/state.h"
#include "src/cuda/device.h"
#include "src/cuda/stream.h"
#include "src/cuda/stream_impl.h"
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

#include "src/common/memfd.h"
#include "src/fabric/client_ipc.h"

/* ---- events ---------------------------------------------------------------- */

/* Say that this process has e's page (the rule at the top of this file): a read lock
 * on its first byte, held until the process exits or closes a descriptor
 * of the page (POSIX locks are the process's, not the descriptor's), so it
 * is taken again after any such close. Best effort: without it, others
 * stop waiting for this process's records once they have none of their
 * own queued. */
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
    CUresult r = e ? fab__cu_stream_from_handle(h, per_thread, &s) : CUDA_ERROR_INVALID_HANDLE;
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
    CUcontext ctx = NULL;
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
        ctx = s->ctx;
        fab__cu_stream_get(s);
        fab__cu_wait_point(s, e->point);
        fab__cu_stream_put(s);
    }
    pthread_mutex_unlock(&fab__cu_sq.mu);
    if (!e)
        return CUDA_ERROR_INVALID_HANDLE;
    /* The recording stream's context answers its sticky error; an event
     * never recorded here (or an interprocess one) the current context. */
    return ctx ? fab__cu_synced_ctx(CUDA_SUCCESS, ctx) : fab__cu_synced(CUDA_SUCCESS);
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
    CUresult r = e ? fab__cu_stream_from_handle(h, per_thread, &s) : CUDA_ERROR_INVALID_HANDLE;
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
