/* fabmem's CUDA runtime (libcudart.so.13): the state every part of it
 * shares, owned by runtime.c. The runtime is a layer over the driver
 * emulation: it calls only exported cu* entry points (src/cuda/entry.h lists
 * them) and keeps its own state beside the driver's:
 *
 *   per thread   the device cudaSetDevice chose and the last error
 *                (cudaGetLastError / cudaPeekAtLastError);
 *   per process  cuInit's result (called once), the primary context of each
 *                device (retained once, at its first use, and made current
 *                in each thread lazily, as NVIDIA's runtime does), the
 *                device flags, and each device's sticky error.
 *
 * Files, in the order they may use one another: runtime.c (state, errors,
 * devices, driver entry points), memory.c (allocations and copies), stream.c
 * (streams, events, host functions, capture queries, graphs refused),
 * kernel.c (what nvcc's generated code calls: fatbin and kernel registration,
 * launches, symbols), unsupported.c (arrays, 3D copies, textures and
 * managed-memory hints, each refused). Each includes this header only.
 *
 * Locking: one mutex, fab__rt_lock, guards the process state and kernel.c's
 * registrations; no driver call is made under it except cuDevicePrimaryCtx*
 * and cuLibraryLoadData, which take only the driver's own lock. */
#ifndef FAB_CUDART_RUNTIME_H
#define FAB_CUDART_RUNTIME_H

#include <pthread.h>
#include <stdbool.h>

#include "src/cuda/include/cuda.h" /* libcuda's exported API, and only that */
#include "cuda_runtime_api.h"

/* libcuda exports the per-thread-stream forms of the pool calls; cuda.h
 * names them only for a program built with CUDA_API_PER_THREAD_DEFAULT_STREAM,
 * and the runtime picks one or the other per call. */
CUresult cuMemAllocAsync_ptsz(CUdeviceptr *dptr, size_t bytesize, CUstream hStream);
CUresult cuMemAllocFromPoolAsync_ptsz(CUdeviceptr *dptr, size_t bytesize, CUmemoryPool pool,
                                      CUstream hStream);
CUresult cuMemFreeAsync_ptsz(CUdeviceptr dptr, CUstream hStream);

#define FAB__RT_EXPORT __attribute__((visibility("default")))
#define FAB__RT_API FAB__RT_EXPORT cudaError_t
#define FAB__RT_MAX_DEVICES 64

extern pthread_mutex_t fab__rt_lock;

/* The cudaError_t of a driver result: the runtime numbers its errors as the
 * driver does wherever both have the code, so most map to the same number;
 * a driver code the runtime lacks becomes cudaErrorUnknown. */
cudaError_t fab__rt_from_cu(CUresult r);

/* Record e as the calling thread's last error (when it is one) and return
 * it: every entry point returns through this. */
cudaError_t fab__rt_error(cudaError_t e);
/* fab__rt_error(fab__rt_from_cu(r)), and a sticky error makes the current
 * device's error sticky. */
cudaError_t fab__rt_cu(CUresult r);

/* cuInit once per process; cudaErrorNoDevice / cudaErrorInitializationError
 * when it failed. */
cudaError_t fab__rt_init(void);

/* The context the calling thread's runtime calls run in, made current: the
 * one current on the thread already (a driver API user's, or a primary the
 * runtime set), else the primary context of the thread's device (retained
 * now if this is its first use). Returns the device's sticky error if it
 * has one. dev_out may be NULL. */
cudaError_t fab__rt_context(int *dev_out);

/* The thread's default stream for a runtime stream argument: 0 and
 * cudaStreamLegacy stay the legacy stream; per_thread names the per-thread
 * stream (the _ptsz/_ptds entry points). */
CUstream fab__rt_stream(cudaStream_t stream, bool per_thread);

/* Where an entry point returns: records the error. */
#define FAB__RT_RETURN(e) return fab__rt_error(e)
#define FAB__RT_TRY(call)                                                   \
    do {                                                                    \
        cudaError_t fab__rt_try_ = (call);                                  \
        if (fab__rt_try_ != cudaSuccess)                                    \
            return fab__rt_error(fab__rt_try_);                             \
    } while (0)
/* The prologue of every call that needs a context. */
#define FAB__RT_ENTER() FAB__RT_TRY(fab__rt_context(NULL))


#endif /* FAB_CUDART_RUNTIME_H */
