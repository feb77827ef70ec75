/* Fuzz target for libcuda's image parser (src/cuda/image*.c): any bytes, as a
 * cuModuleLoadData of PTX, a cubin or a fatbin would hand them over once
 * their size is known. The parse must succeed or refuse with one of its
 * documented errors, read nothing outside the input, and leave nothing
 * allocated once its result is freed (the leak checker sees to that).
 *
 * The input is copied to a buffer of exactly its size, so that a read past
 * the end is caught even when the fuzzer's own buffer is larger. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "src/cuda/image.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    uint8_t *copy = malloc(size ? size : 1);
    if (!copy)
        return 0;
    if (size)
        memcpy(copy, data, size);
    fab__cu_image_t img;
    CUresult r = fab__cu_image_parse(copy, size, &img);
    switch (r) {
    case CUDA_SUCCESS:
        for (size_t i = 0; i < img.nglobals; i++) {
            /* every initial value is as large as its global says */
            if (img.globals[i].init && img.globals[i].size)
                (void)(volatile uint8_t)img.globals[i].init[img.globals[i].size - 1];
        }
        fab__cu_image_free(&img);
        break;
    case CUDA_ERROR_INVALID_IMAGE:
    case CUDA_ERROR_INVALID_PTX:
    case CUDA_ERROR_NO_BINARY_FOR_GPU:
    case CUDA_ERROR_NOT_SUPPORTED:
    case CUDA_ERROR_OUT_OF_MEMORY:
        if (img.nkernels || img.nglobals || !img.error[0])
            abort(); /* a refusal holds nothing and says why */
        break;
    default:
        abort();
    }
    free(copy);
    return 0;
}
