/* FABMEM_PTX_PROFILE (profile.c): a module's program profiled from its
 * build, its report appended to the named file at unload or exit. */
#ifndef FAB_CUDA_PROFILE_H
#define FAB_CUDA_PROFILE_H

#include "src/cuda/cuda_abi.h"
#include "src/ptx/ptx.h"

/* When FABMEM_PTX_PROFILE names a file: profile ptx from now on.
 * CUDA_ERROR_OUT_OF_MEMORY, else CUDA_SUCCESS (also when it is unset). */
CUresult fab__cu_profile_start(fab__ptx_program_t *ptx);
/* Before ptx is freed: its report, unless the exit's has been written. */
void fab__cu_profile_end(const fab__ptx_program_t *ptx);

#endif /* FAB_CUDA_PROFILE_H */
