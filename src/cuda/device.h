/* Contexts and streams (device.c), as the other modules need them: the
 * calling thread's current context, which decides the device of a copy, an
 * import and an access query, and the check that a stream handle is one. */
#ifndef FAB_CUDA_DEVICE_H
#define FAB_CUDA_DEVICE_H

#include "src/cuda/cuda_abi.h"

/* The device of the calling thread's current context in *dev_out, or
 * CUDA_ERROR_INVALID_CONTEXT and *dev_out left as it was when the thread has
 * none. */
CUresult fab__cu_current_device(int *dev_out);

/* CUDA_SUCCESS for 0, the legacy and per-thread default streams and any live
 * stream, else CUDA_ERROR_INVALID_HANDLE. The caller holds fab__cu.lock. */
CUresult fab__cu_stream_check(CUstream stream);

#endif /* FAB_CUDA_DEVICE_H */
