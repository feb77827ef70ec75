/* fabmem's own cuda_runtime.h, for C programs where NVIDIA's headers are
 * absent: the runtime API of cuda_runtime_api.h (nothing C++). */
#ifndef FAB_CUDA_RUNTIME_H
#define FAB_CUDA_RUNTIME_H
#include "cuda_runtime_api.h"
#endif
