/* Code images: the result of a parse and the entry points (image.h), which
 * hand a buffer to the reader of its format: a cubin (image_elf.c), a
 * fatbin container or nvcc's wrapper around one (image_fatbin.c), PTX text
 * (image_ptx.c). The image files own nothing but the result of a parse
 * (fab__cu_image_t: names, sizes, initial values), which the caller frees
 * with fab__cu_image_free; they know no CUDA state, so that the fuzzer
 * (fuzz/fuzz_image.c) can feed them any bytes. Each reader's top comment
 * says what it reads. */
#include "src/cuda/image.h"
#include "src/cuda/image_impl.h"
#include "src/base/le.h"

#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- results --------------------------------------------------------------- */

CUresult fab__cu_image_fail(fab__cu_image_t *img, CUresult r, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(img->error, sizeof(img->error), fmt, ap);
    va_end(ap);
    return r;
}

static bool fab__cu_image_has_kernel(const fab__cu_image_t *img, const char *name, size_t len)
{
    for (size_t i = 0; i < img->nkernels; i++) {
        if (strlen(img->kernels[i]) == len && memcmp(img->kernels[i], name, len) == 0)
            return true;
    }
    return false;
}

static fab__cu_image_global_t *fab__cu_image_find_global(const fab__cu_image_t *img,
                                                         const char *name, size_t len)
{
    for (size_t i = 0; i < img->nglobals; i++) {
        if (strlen(img->globals[i].name) == len && memcmp(img->globals[i].name, name, len) == 0)
            return &img->globals[i];
    }
    return NULL;
}

static char *fab__cu_strndup(const char *s, size_t len)
{
    char *d = malloc(len + 1);
    if (d) {
        memcpy(d, s, len);
        d[len] = '\0';
    }
    return d;
}

CUresult fab__cu_image_add_kernel(fab__cu_image_t *img, const char *name, size_t len)
{
    if (len == 0 || fab__cu_image_has_kernel(img, name, len))
        return CUDA_SUCCESS;
    char **k = realloc(img->kernels, (img->nkernels + 1) * sizeof(*k));
    if (!k)
        return CUDA_ERROR_OUT_OF_MEMORY;
    img->kernels = k;
    if (!(k[img->nkernels] = fab__cu_strndup(name, len)))
        return CUDA_ERROR_OUT_OF_MEMORY;
    img->nkernels++;
    return CUDA_SUCCESS;
}

CUresult fab__cu_image_add_global(fab__cu_image_t *img, const char *name, size_t len,
                                  size_t size, const unsigned char *init)
{
    if (len == 0 || fab__cu_image_find_global(img, name, len))
        return CUDA_SUCCESS;
    fab__cu_image_global_t *g = realloc(img->globals, (img->nglobals + 1) * sizeof(*g));
    if (!g)
        return CUDA_ERROR_OUT_OF_MEMORY;
    img->globals = g;
    g = &img->globals[img->nglobals];
    memset(g, 0, sizeof(*g));
    g->size = size;
    if (!(g->name = fab__cu_strndup(name, len)))
        return CUDA_ERROR_OUT_OF_MEMORY;
    if (init && size > 0) {
        if (!(g->init = malloc(size))) {
            free(g->name);
            return CUDA_ERROR_OUT_OF_MEMORY;
        }
        memcpy(g->init, init, size);
    }
    img->nglobals++;
    return CUDA_SUCCESS;
}

void fab__cu_image_free(fab__cu_image_t *img)
{
    if (!img)
        return;
    for (size_t i = 0; i < img->nkernels; i++)
        free(img->kernels[i]);
    for (size_t i = 0; i < img->nglobals; i++) {
        free(img->globals[i].name);
        free(img->globals[i].init);
    }
    for (size_t i = 0; i < img->nptx; i++)
        free(img->ptx[i].text);
    free(img->kernels);
    free(img->globals);
    free(img->ptx);
    img->kernels = NULL;
    img->globals = NULL;
    img->ptx = NULL;
    img->nkernels = img->nglobals = img->nptx = 0;
}

CUresult fab__cu_image_keep_ptx(fab__cu_image_t *img, const char *text, size_t len,
                                unsigned arch)
{
    const char *nul = memchr(text, '\0', len);
    if (nul)
        len = (size_t)(nul - text);
    fab__cu_image_ptx_t *p = realloc(img->ptx, (img->nptx + 1) * sizeof(*p));
    if (!p)
        return CUDA_ERROR_OUT_OF_MEMORY;
    img->ptx = p;
    if (!(p[img->nptx].text = fab__cu_strndup(text, len)))
        return CUDA_ERROR_OUT_OF_MEMORY;
    p[img->nptx].len = len;
    p[img->nptx].arch = arch;
    img->nptx++;
    return CUDA_SUCCESS;
}

bool fab__cu_image_in(uint64_t off, uint64_t n, size_t len)
{
    return off <= len && n <= len - off;
}

/* ---- the entry points ------------------------------------------------------------- */

CUresult fab__cu_image_parse(const void *data, size_t len, fab__cu_image_t *img)
{
    memset(img, 0, sizeof(*img));
    const unsigned char *d = data;
    CUresult r;
    if (!d || len == 0)
        r = fab__cu_image_fail(img, CUDA_ERROR_INVALID_IMAGE, "an empty image");
    else if (len >= 4 && memcmp(d, FAB__CU_ELF_MAGIC, 4) == 0)
        r = fab__cu_elf_parse(d, len, img);
    else if (len >= 4 && fab__le_get32(d) == FAB__CU_FATBIN_MAGIC)
        r = fab__cu_fatbin_parse(d, len, img);
    else if ((r = fab__cu_ptx_parse((const char *)d, len, img)) == CUDA_SUCCESS)
        r = fab__cu_image_keep_ptx(img, (const char *)d, len, 0);
    if (r != CUDA_SUCCESS) {
        fab__cu_image_free(img);
        if (r == CUDA_ERROR_OUT_OF_MEMORY && !img->error[0])
            snprintf(img->error, sizeof(img->error), "out of memory");
    }
    return r;
}

size_t fab__cu_image_extent(const void *data)
{
    const unsigned char *d = data;
    if (memcmp(d, FAB__CU_ELF_MAGIC, 4) == 0)
        return fab__cu_elf_extent(d);
    if (fab__le_get32(d) == FAB__CU_FATBIN_MAGIC)
        return fab__cu_fatbin_extent(d);
    return strlen((const char *)d) + 1;
}

CUresult fab__cu_image_read_file(const char *path, unsigned char **data_out, size_t *len_out)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return errno == ENOMEM ? CUDA_ERROR_OUT_OF_MEMORY : CUDA_ERROR_FILE_NOT_FOUND;
    unsigned char *data = NULL;
    size_t len = 0, cap = 0;
    for (;;) {
        if (len == cap) {
            size_t ncap = cap ? cap * 2 : 65536;
            unsigned char *n = ncap > cap ? realloc(data, ncap + 1) : NULL;
            if (!n) {
                free(data);
                fclose(f);
                return CUDA_ERROR_OUT_OF_MEMORY;
            }
            data = n;
            cap = ncap;
        }
        size_t got = fread(data + len, 1, cap - len, f);
        len += got;
        if (got == 0)
            break;
    }
    bool failed = ferror(f) != 0;
    fclose(f);
    if (failed) {
        free(data);
        return CUDA_ERROR_FILE_NOT_FOUND;
    }
    data[len] = '\0'; /* PTX text read from a file need not end in a NUL */
    *data_out = data;
    *len_out = len;
    return CUDA_SUCCESS;
}
