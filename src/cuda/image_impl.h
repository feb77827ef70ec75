/* What the image readers share (image.c, image_ptx.c, image_elf.c,
 * image_fatbin.c): the formats' magic numbers, the bound on what a header
 * may claim, the result's builders (image.c) and each format's reader. Not
 * for any file but those four. */
#ifndef FAB_CUDA_IMAGE_IMPL_H
#define FAB_CUDA_IMAGE_IMPL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "src/cuda/image.h"

#define FAB__CU_ELF_MAGIC "\x7f" "ELF"
#define FAB__CU_EM_CUDA 190
#define FAB__CU_FATBIN_MAGIC 0xBA55ED50u
#define FAB__CU_FATBIN_WRAPPER_MAGIC 0x466243B1u
#define FAB__CU_FATBIN_LZ4 0x2000u
#define FAB__CU_FATBIN_ZSTD 0x8000u
/* No global or decompressed entry may claim more: a bound that keeps a
 * hostile header from asking for absurd memory. */
#define FAB__CU_IMAGE_MAX_BYTES ((size_t)1 << 30)

/* A fatbin entry's kinds that declare what a load uses. */
enum { FAB__CU_FATBIN_PTX = 1, FAB__CU_FATBIN_ELF = 2 };

/* Return the call's error from the calling function (state.h's FAB__CU_TRY;
 * the image files include no state). */
#define FAB__CU_IMAGE_TRY(call)                                             \
    do {                                                                    \
        CUresult fab__cu_try_ = (call);                                     \
        if (fab__cu_try_ != CUDA_SUCCESS)                                   \
            return fab__cu_try_;                                            \
    } while (0)

/* ---- the result (image.c) ---------------------------------------------------- */

/* Say why a parse failed in img->error; return r. */
CUresult fab__cu_image_fail(fab__cu_image_t *img, CUresult r, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Add a kernel unless one of that name is there already. */
CUresult fab__cu_image_add_kernel(fab__cu_image_t *img, const char *name, size_t len);
/* Add a global unless one of that name is there already; init (size bytes)
 * is copied, or NULL for zeros. */
CUresult fab__cu_image_add_global(fab__cu_image_t *img, const char *name, size_t len,
                                  size_t size, const unsigned char *init);
/* Keep a copy of a PTX text (up to its first NUL) for the PTX engine. */
CUresult fab__cu_image_keep_ptx(fab__cu_image_t *img, const char *text, size_t len,
                                unsigned arch);
/* Whether [off, off+n) lies in a buffer of len bytes, without overflow. */
bool fab__cu_image_in(uint64_t off, uint64_t n, size_t len);

/* ---- the readers --------------------------------------------------------------- */

/* image_ptx.c: the kernels (entries with a body) and globals (.global and
 * .const variables a module defines) of a PTX text, from the PTX front
 * end's parse (src/ptx): the project's one PTX parser. */
CUresult fab__cu_ptx_parse(const char *text, size_t len, fab__cu_image_t *img);

/* image_elf.c: a cubin's kernels and globals; its extent from its ELF
 * header (d starts with FAB__CU_ELF_MAGIC). */
CUresult fab__cu_elf_parse(const unsigned char *d, size_t len, fab__cu_image_t *img);
size_t fab__cu_elf_extent(const unsigned char *d);

/* image_fatbin.c: every PTX and cubin entry of the fatbin containers back
 * to back at d; a container's extent from its header (d starts with
 * FAB__CU_FATBIN_MAGIC). */
CUresult fab__cu_fatbin_parse(const unsigned char *d, size_t len, fab__cu_image_t *img);
size_t fab__cu_fatbin_extent(const unsigned char *d);

#endif /* FAB_CUDA_IMAGE_IMPL_H */
