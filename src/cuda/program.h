/* A module's PTX program (program.c), as modules and launches need it:
 * built from an image's PTX texts for one device, its variables' memory, its
 * kernels, and the launch of one of them as stream work. program.c's top
 * comment has the rules. None of these expects fab__cu.lock held, except
 * where said. */
#ifndef FAB_CUDA_PROGRAM_H
#define FAB_CUDA_PROGRAM_H

#include <stdbool.h>
#include <stddef.h>

#include "src/cuda/cuda_abi.h"
#include "src/cuda/image.h"
#include "src/ptx/ptx.h"

typedef struct fab__cu_program fab__cu_program_t;

/* The program of img's PTX for a device of compute capability cc (90 for
 * 9.0), in *out; *out NULL (and CUDA_SUCCESS) when the image has no PTX the
 * device can run. CUDA_ERROR_INVALID_PTX (malformed, unsupported or
 * unlinkable PTX: error says which line and rule), or
 * CUDA_ERROR_OUT_OF_MEMORY. */
CUresult fab__cu_program_build(const fab__cu_image_t *img, unsigned cc, fab__cu_program_t **out,
                               char *error, size_t error_len);
void fab__cu_program_free(fab__cu_program_t *p);

/* The block holding the program's variables (NULL, 0 when none), for the
 * owner to register as device memory. */
void fab__cu_program_memory(const fab__cu_program_t *p, void **mem_out, size_t *len_out);

/* The variable name (cuModuleGetGlobal): CUDA_ERROR_NOT_FOUND when p has
 * none (or p is NULL). */
CUresult fab__cu_program_global(const fab__cu_program_t *p, const char *name, CUdeviceptr *dptr,
                                size_t *bytes);

/* Bytes of p's .const variables, each at its alignment (0 for NULL): what
 * ptxas puts in the module's user constant bank, which its kernels share
 * (CU_FUNC_ATTRIBUTE_CONST_SIZE_BYTES). */
size_t fab__cu_program_const_bytes(const fab__cu_program_t *p);

/* The kernel name of p, or NULL (p NULL, or no such .entry). */
const fab__ptx_kernel_t *fab__cu_program_kernel(const fab__cu_program_t *p, const char *name);

/* A checked launch's arguments: kernelParams or the extra array's packed
 * buffer. */
typedef struct fab__cu_program_args {
    uint32_t grid[3], block[3], cluster[3];
    size_t shared_bytes;
    void **params;
    const void *arg_buffer;
    size_t arg_buffer_size;
    bool cooperative;
    int device;
    CUcontext ctx; /* the context launched in: a fault makes its error sticky */
    uint32_t watch_ms;
} fab__cu_program_args_t;

/* Put a launch of kernel (called name, for reports) on stream: the
 * arguments are copied now, in the kernel's .param layout, and the grid
 * runs when the stream comes to it (the call returns before, unless submit
 * has FAB__CU_SUBMIT_WAIT). CUDA_ERROR_INVALID_VALUE (an argument missing, a
 * buffer too short), or fab__cu_stream_submit's errors. The caller holds no
 * lock. */
CUresult fab__cu_program_launch(const fab__ptx_kernel_t *kernel, const char *name,
                                const fab__cu_program_args_t *args, CUstream stream,
                                unsigned submit);

#endif /* FAB_CUDA_PROGRAM_H */
