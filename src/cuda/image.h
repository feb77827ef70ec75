/* Code images (image.c and its readers), read for what they declare, never
 * run: the kernels and globals of PTX text, of a cubin (an ELF file for
 * EM_CUDA), and of every entry of NVIDIA's fatbin container. No CUDA state: a parse owns only its
 * result, so the parser can be fuzzed alone (fuzz/fuzz_image.c). */
#ifndef FAB_CUDA_IMAGE_H
#define FAB_CUDA_IMAGE_H

#include <stddef.h>

#include "src/cuda/cuda_abi.h"

typedef struct fab__cu_image_global {
    char *name;
    size_t size;
    unsigned char *init; /* size bytes of initial value, or NULL for zeros */
} fab__cu_image_global_t;

/* A PTX text the image carries, kept for the PTX engine (src/ptx), which
 * module.c hands the texts of the one architecture it runs. */
typedef struct fab__cu_image_ptx {
    char *text;    /* a NUL-terminated copy */
    size_t len;    /* bytes before the NUL */
    unsigned arch; /* the fatbin entry's compute capability (90 for 9.0), 0 for bare text */
} fab__cu_image_ptx_t;

/* The room for why a load failed ("PTX line N: " and the engine's whole
 * diagnostic, src/ptx/ptx.h), for the log and the JIT error log. */
#define FAB__CU_LOAD_ERROR_MAX 320

typedef struct fab__cu_image {
    char **kernels; /* their (mangled) names, each once */
    size_t nkernels;
    fab__cu_image_global_t *globals; /* each name once; the first image that declares it wins */
    size_t nglobals;
    fab__cu_image_ptx_t *ptx; /* every PTX text, in the order the image holds them */
    size_t nptx;
    char error[FAB__CU_LOAD_ERROR_MAX]; /* why a parse failed, for the log and the JIT error log */
} fab__cu_image_t;

/* Parse len bytes at data into *img (zeroed first). CUDA_SUCCESS;
 * CUDA_ERROR_INVALID_IMAGE (not an image, or a malformed cubin or fatbin),
 * CUDA_ERROR_INVALID_PTX (malformed PTX), CUDA_ERROR_NO_BINARY_FOR_GPU (a
 * fatbin with no PTX or cubin entry), CUDA_ERROR_NOT_SUPPORTED (an entry
 * compressed in a way this machine cannot undo) or CUDA_ERROR_OUT_OF_MEMORY;
 * on failure img holds nothing but error. */
CUresult fab__cu_image_parse(const void *data, size_t len, fab__cu_image_t *img);

/* How many bytes the image at data spans, read from its own headers, for
 * calls that pass an image without its size (cuModuleLoadData): a cubin's
 * extent, a fatbin container's size, or PTX text up to and including its
 * NUL. The caller vouches that the headers are readable. */
size_t fab__cu_image_extent(const void *data);

/* The fatbin a __fatBinC_Wrapper_t (the struct nvcc's host code registers,
 * magic 0x466243B1, as fatbinary_section.h declares it) points at, or data
 * itself when it is no such wrapper. */
const void *fab__cu_image_unwrap(const void *data);

/* The image a load call was given without its size: data and its extent,
 * or, for nvcc's fatbin wrapper, the fatbin it names (version 1), or a
 * version-2 wrapper's device-linked fatbin (where it holds code) and its
 * prelinked fatbins copied back to back into a buffer *owned_out that the
 * caller frees after the parse (NULL otherwise). CUDA_ERROR_INVALID_VALUE
 * (NULL), CUDA_ERROR_INVALID_IMAGE (a prelinked list that is not fatbins),
 * CUDA_ERROR_OUT_OF_MEMORY. */
CUresult fab__cu_image_gather(const void *data, const void **image_out, size_t *len_out,
                              void **owned_out);

/* A whole file's bytes, for the calls that load an image by path
 * (cuModuleLoad, cuLibraryLoadFromFile, cuLinkAddFile), with a NUL after
 * them (PTX text read from a file need not end in one): *data_out
 * (malloc'd) and *len_out. CUDA_ERROR_FILE_NOT_FOUND (cannot be read),
 * CUDA_ERROR_OUT_OF_MEMORY. */
CUresult fab__cu_image_read_file(const char *path, unsigned char **data_out, size_t *len_out);

void fab__cu_image_free(fab__cu_image_t *img);

#endif /* FAB_CUDA_IMAGE_H */
