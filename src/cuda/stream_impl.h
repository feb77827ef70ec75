/* Streams' and events' types and shared state, for the files that keep
 * them: stream.c (the queues, the workers, the waits; its top comment has
 * the execution model and the locking rules), streamapi.c (the other stream
 * entry points) and event.c (events). No other module sees them: they use
 * stream.h. */
#ifndef FAB_CUDA_STREAM_IMPL_H
#define FAB_CUDA_STREAM_IMPL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "src/cuda/cuda_abi.h"
#include "src/cuda/idtable.h"

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

struct fab__cu_sq {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    fab__cu_idtable_t streams; /* live created streams, by address */
    fab__cu_idtable_t events;  /* live events, by address */
    fab__cu_ctxq_t *ctxqs;
    unsigned long long next_id;
    pthread_key_t ptds_key;
    /* Operations submitted and not finished, on every stream of every
     * context: written under mu, read without it (fab__cu_streams_idle). */
    atomic_ulong queued;
};
extern struct fab__cu_sq fab__cu_sq;

/* stream.c's functions that streamapi.c and event.c use (callers of those
 * that take a struct CUstream_st hold fab__cu_sq.mu). */
void fab__cu_stream_get(struct CUstream_st *s);
void fab__cu_stream_put(struct CUstream_st *s);
struct CUstream_st *fab__cu_stream_new(CUcontext ctx, fab__cu_ctxq_t *cq,
                                       fab__cu_skind_t kind, unsigned flags, int priority);
fab__cu_ctxq_t *fab__cu_ctxq(CUcontext ctx);
CUresult fab__cu_stream_from_handle(CUstream h, bool per_thread, struct CUstream_st **out);
void fab__cu_wait_point(struct CUstream_st *s, uint64_t point);
CUresult fab__cu_submit_locked(struct CUstream_st *s, unsigned flags,
                               void (*run)(void *), void *arg, void (*done)(void *),
                               const fab__cu_dep_t *extra, uint64_t *seq_out);
/* A synchronisation returns (stream.c): multicast stores go out, and on
 * success ctx's sticky error is the answer; fab__cu_synced takes the
 * current context. */
CUresult fab__cu_synced_ctx(CUresult r, CUcontext ctx);
CUresult fab__cu_synced(CUresult r);

#endif
