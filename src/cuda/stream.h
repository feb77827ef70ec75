/* Streams and events (stream.c, streamapi.c, event.c), as the other modules
 * need them: checking a stream handle, and putting work on a stream so that
 * it runs in the stream's order, by the stream's worker thread.
 *
 * Work is a function and its argument. The module that submits it owns the
 * argument: run(arg) runs once, in stream order, with no lock of libcuda
 * held (it takes fab__cu.lock itself if it touches memory, for reading);
 * then done(arg), if not NULL, runs once on the same thread, to free it.
 * A submit that fails (bad stream, no context, no memory) calls neither, and
 * the caller still owns arg. run may block (cuStreamWaitValue32 does): only
 * its own stream, and those that wait for it, wait with it. */
#ifndef FAB_CUDA_STREAM_H
#define FAB_CUDA_STREAM_H

#include <stdbool.h>

#include "src/cuda/cuda_abi.h"

/* submit flags */
#define FAB__CU_SUBMIT_PER_THREAD 0x1u /* a NULL stream is the per-thread default
                                          stream (the _ptds/_ptsz entry points) */
#define FAB__CU_SUBMIT_WAIT 0x2u       /* return once done (the synchronous calls);
                                          run on the caller's thread when the
                                          stream is idle */

/* Put run(arg) / done(arg) on stream s (NULL, CU_STREAM_LEGACY,
 * CU_STREAM_PER_THREAD or a cuStreamCreate stream) of the calling thread's
 * current context. CUDA_SUCCESS, CUDA_ERROR_INVALID_CONTEXT (no current
 * context), CUDA_ERROR_INVALID_HANDLE (not a live stream) or
 * CUDA_ERROR_OUT_OF_MEMORY. The caller must not hold fab__cu.lock. */
CUresult fab__cu_stream_submit(CUstream s, unsigned flags, void (*run)(void *arg), void *arg,
                               void (*done)(void *arg));

/* fab__cu_stream_submit(s, 0, ...): the API kernel launches use. */
CUresult fab__cu_stream_enqueue(CUstream s, void (*run)(void *arg), void *arg,
                                void (*done)(void *arg));

/* CUDA_SUCCESS when s names a stream work can go on from this thread (NULL,
 * the two default-stream handles with a current context, or a live created
 * stream), else CUDA_ERROR_INVALID_CONTEXT or CUDA_ERROR_INVALID_HANDLE. May
 * be called with fab__cu.lock held (the stream lock comes after it). */
CUresult fab__cu_stream_check(CUstream s);

/* Interprocess events, for legacy IPC (ipc.c). The caller holds no lock. */

/* An event's shared page for cuIpcGetEventHandle: its cached handle
 * (*cached set), or a new descriptor of its memfd to publish (the caller
 * closes it). CUDA_ERROR_INVALID_HANDLE (not an event),
 * CUDA_ERROR_INVALID_VALUE (not created CU_EVENT_INTERPROCESS). */
CUresult fab__cu_event_ipc_source(CUevent ev, int *fd_out, bool *cached, unsigned char handle[64]);

/* Take ev's page lock again (event.c: who may still complete a record)
 * after a descriptor of the page that fab__cu_event_ipc_source gave was
 * closed, which drops this process's POSIX locks on it. */
void fab__cu_event_ipc_relock(CUevent ev);

/* Cache handle in ev; false when ev is gone or has one already (copied into
 * handle): the caller withdraws what it published. */
bool fab__cu_event_ipc_cache(CUevent ev, unsigned char handle[64]);

/* An event of this process over another process's shared page (fd, which
 * it takes on success). */
CUresult fab__cu_event_ipc_open(int fd, CUevent *out);

/* Called with no lock held at the end of cuStreamSynchronize,
 * cuCtxSynchronize and cuEventSynchronize, when set: multicast.c (below
 * this module) publishes multicast stores there. Set once, when the library
 * loads. */
extern void (*fab__cu_stream_sync_hook)(void);

/* No operation is queued or running on any stream of any context: a
 * synchronisation would wait for nothing (it still runs the sync hook and
 * reports the context's sticky error). Read without locks, for the calls
 * that wait only as cuMemFree does (fab__cu_free_waits); work another thread
 * submits meanwhile is not "before" the call. */
bool fab__cu_streams_idle(void);

#endif /* FAB_CUDA_STREAM_H */
