/* Fatbins in a code image: NVIDIA's container, its compressed entries, and
 * nvcc's wrapper around it (fab__cu_image_unwrap, fab__cu_image_gather).
 *
 * A fatbin is one or more containers (magic 0xBA55ED50) back to back: each
 * entry's header says its kind (1 PTX, 2 cubin), its payload size and
 * whether it is compressed (flag 0x2000: an LZ4 block; 0x8000: a zstd
 * frame); every PTX and cubin entry is read (image_ptx.c, image_elf.c) and
 * the names merged. The decompressors are the system's liblz4.so.1 and
 * libzstd.so.1, found with dlopen when first needed.
 *
 * nvcc's __fatBinC_Wrapper_t around a fatbin: version 1 points at the
 * fatbin; version 2 (a -rdc=true build's, from nvlink's crt/link.stub) at
 * the device-linked fatbin and a NULL-ended list of each translation unit's
 * prelinked fatbin. The image is the linked fatbin (where it holds code:
 * its cubins) followed by every prelinked one (their PTX, which the PTX
 * engine links again), read back to back as one image.
 *
 * The layout of the fatbin container is documented by open-source readers
 * (docs/cuda.md, "Code objects and kernels", names them) and was checked
 * against what nvcc 13 writes. */
#include "src/cuda/image_impl.h"
#include "src/base/le.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* ---- the container ------------------------------------------------------------- */

size_t fab__cu_fatbin_extent(const unsigned char *d)
{
    uint64_t body = fab__le_get64(d + 8);
    unsigned hsize = fab__le_get16(d + 6);
    return body > FAB__CU_IMAGE_MAX_BYTES ? FAB__CU_IMAGE_MAX_BYTES : hsize + (size_t)body;
}

typedef size_t (*fab__cu_zstd_fn)(void *dst, size_t cap, const void *src, size_t len);
typedef unsigned (*fab__cu_zstd_err_fn)(size_t code);
typedef int (*fab__cu_lz4_fn)(const char *src, char *dst, int len, int cap);

static struct {
    pthread_once_t once;
    fab__cu_zstd_fn zstd;
    fab__cu_zstd_err_fn zstd_is_error;
    fab__cu_lz4_fn lz4;
} fab__cu_codecs = {PTHREAD_ONCE_INIT, NULL, NULL, NULL};

/* dlsym's object pointer to a function pointer, without the cast ISO C lacks. */
static void fab__cu_sym(void *lib, const char *name, void *fn_out, size_t fn_size)
{
    void *p = lib ? dlsym(lib, name) : NULL;
    memset(fn_out, 0, fn_size);
    if (p)
        memcpy(fn_out, &p, fn_size);
}

static void fab__cu_codecs_load(void)
{
    /* Kept open for the life of the process: a decompressor may be needed at
     * any load. */
    void *z = dlopen("libzstd.so.1", RTLD_NOW | RTLD_LOCAL);
    fab__cu_sym(z, "ZSTD_decompress", &fab__cu_codecs.zstd, sizeof(fab__cu_codecs.zstd));
    fab__cu_sym(z, "ZSTD_isError", &fab__cu_codecs.zstd_is_error,
                sizeof(fab__cu_codecs.zstd_is_error));
    void *l = dlopen("liblz4.so.1", RTLD_NOW | RTLD_LOCAL);
    fab__cu_sym(l, "LZ4_decompress_safe", &fab__cu_codecs.lz4, sizeof(fab__cu_codecs.lz4));
}

/* Decompress an entry's payload into a new buffer of exactly want bytes. */
static CUresult fab__cu_fatbin_inflate(const unsigned char *src, size_t len, uint64_t flags,
                                       uint64_t want, unsigned char **out, fab__cu_image_t *img)
{
    pthread_once(&fab__cu_codecs.once, fab__cu_codecs_load);
    bool zstd = (flags & FAB__CU_FATBIN_ZSTD) != 0;
    if (zstd && (flags & FAB__CU_FATBIN_LZ4))
        return fab__cu_image_fail(img, CUDA_ERROR_NOT_SUPPORTED,
                                  "fatbin: an entry with an unknown compression (flags %#llx)",
                                  (unsigned long long)flags);
    if (zstd ? !(fab__cu_codecs.zstd && fab__cu_codecs.zstd_is_error) : !fab__cu_codecs.lz4)
        return fab__cu_image_fail(img, CUDA_ERROR_NOT_SUPPORTED,
                                  "fatbin: an entry is %s-compressed and %s cannot be loaded; "
                                  "install it (Debian: %s) or build with nvcc -Xfatbin "
                                  "-compress-all=false / --no-compress",
                                  zstd ? "zstd" : "LZ4", zstd ? "libzstd.so.1" : "liblz4.so.1",
                                  zstd ? "libzstd1" : "liblz4-1");
    /* An LZ4 block grows at most 255-fold; nothing may claim more. */
    if (want == 0 || want > FAB__CU_IMAGE_MAX_BYTES || (!zstd && want / 255 > len + 16) ||
        len > INT32_MAX)
        return fab__cu_image_fail(img, CUDA_ERROR_INVALID_IMAGE,
                                  "fatbin: an implausible decompressed size %llu",
                                  (unsigned long long)want);
    unsigned char *buf = malloc((size_t)want);
    if (!buf)
        return CUDA_ERROR_OUT_OF_MEMORY;
    bool ok;
    if (zstd) {
        size_t n = fab__cu_codecs.zstd(buf, (size_t)want, src, len);
        ok = !fab__cu_codecs.zstd_is_error(n) && n == want;
    } else {
        int n = fab__cu_codecs.lz4((const char *)src, (char *)buf, (int)len, (int)want);
        ok = n >= 0 && (uint64_t)n == want;
    }
    if (!ok) {
        free(buf);
        return fab__cu_image_fail(img, CUDA_ERROR_INVALID_IMAGE,
                                  "fatbin: a compressed entry does not decompress");
    }
    *out = buf;
    return CUDA_SUCCESS;
}

CUresult fab__cu_fatbin_parse(const unsigned char *d, size_t len, fab__cu_image_t *img)
{
    size_t off = 0;
    unsigned used = 0;
    while (off < len) {
        if (!fab__cu_image_in(off, 16, len) || fab__le_get32(d + off) != FAB__CU_FATBIN_MAGIC) {
            if (off > 0)
                break; /* trailing bytes after the last container */
            return fab__cu_image_fail(img, CUDA_ERROR_INVALID_IMAGE, "fatbin: no container");
        }
        unsigned hsize = fab__le_get16(d + off + 6);
        uint64_t body = fab__le_get64(d + off + 8);
        if (fab__le_get16(d + off + 4) != 1 || hsize < 16 || !fab__cu_image_in(off + hsize, body, len))
            return fab__cu_image_fail(img, CUDA_ERROR_INVALID_IMAGE,
                                      "fatbin: a bad container header at offset %zu", off);
        size_t e = off + hsize, stop = off + hsize + (size_t)body;
        while (e < stop) {
            if (!fab__cu_image_in(e, 64, stop))
                return fab__cu_image_fail(img, CUDA_ERROR_INVALID_IMAGE,
                                          "fatbin: a truncated entry at offset %zu", e);
            const unsigned char *h = d + e;
            unsigned kind = fab__le_get16(h);
            uint32_t ehsize = fab__le_get32(h + 4), csize = fab__le_get32(h + 16);
            uint64_t psize = fab__le_get64(h + 8), flags = fab__le_get64(h + 40),
                     dsize = fab__le_get64(h + 56);
            if (ehsize < 64 || !fab__cu_image_in(e + ehsize, psize, stop))
                return fab__cu_image_fail(img, CUDA_ERROR_INVALID_IMAGE,
                                          "fatbin: an entry out of its container at offset %zu", e);
            const unsigned char *payload = h + ehsize;
            size_t plen = (size_t)psize;
            e += ehsize + plen;
            if (kind != FAB__CU_FATBIN_PTX && kind != FAB__CU_FATBIN_ELF)
                continue; /* other kinds (LTO IR) declare nothing a load uses */
            unsigned char *inflated = NULL;
            if (flags & (FAB__CU_FATBIN_LZ4 | FAB__CU_FATBIN_ZSTD)) {
                if (csize > plen)
                    return fab__cu_image_fail(img, CUDA_ERROR_INVALID_IMAGE,
                                              "fatbin: a compressed size past its entry");
                FAB__CU_IMAGE_TRY(fab__cu_fatbin_inflate(payload, csize, flags, dsize, &inflated, img));
                payload = inflated;
                plen = (size_t)dsize;
            }
            CUresult r = kind == FAB__CU_FATBIN_ELF
                             ? (plen >= 4 && memcmp(payload, FAB__CU_ELF_MAGIC, 4) == 0
                                    ? fab__cu_elf_parse(payload, plen, img)
                                    : fab__cu_image_fail(img, CUDA_ERROR_INVALID_IMAGE,
                                                         "fatbin: a cubin entry is not ELF"))
                             : fab__cu_ptx_parse((const char *)payload, plen, img);
            if (r == CUDA_SUCCESS && kind == FAB__CU_FATBIN_PTX)
                r = fab__cu_image_keep_ptx(img, (const char *)payload, plen,
                                           fab__le_get32(h + 28));
            free(inflated);
            if (r == CUDA_ERROR_INVALID_IMAGE && kind == FAB__CU_FATBIN_PTX)
                r = CUDA_ERROR_INVALID_PTX; /* a PTX entry that is not PTX */
            if (r != CUDA_SUCCESS)
                return r;
            used++;
        }
        off = stop;
    }
    if (used == 0)
        return fab__cu_image_fail(img, CUDA_ERROR_NO_BINARY_FOR_GPU,
                                  "fatbin: no PTX or cubin entry");
    return CUDA_SUCCESS;
}

/* ---- nvcc's wrapper ---------------------------------------------------------------- */

const void *fab__cu_image_unwrap(const void *data)
{
    const unsigned char *d = data;
    if (d && fab__le_get32(d) == FAB__CU_FATBIN_WRAPPER_MAGIC) {
        const void *inner;
        memcpy(&inner, d + 8, sizeof(inner));
        return inner;
    }
    return data;
}

/* Whether the fatbin container at d (its extent len) has a PTX or cubin
 * entry; a malformed one counts as code, so that its parse reports it. */
static bool fab__cu_fatbin_has_code(const unsigned char *d, size_t len)
{
    if (len < 16 || fab__le_get32(d) != FAB__CU_FATBIN_MAGIC)
        return true;
    size_t e = fab__le_get16(d + 6);
    while (e < len) {
        if (!fab__cu_image_in(e, 64, len))
            return true;
        unsigned kind = fab__le_get16(d + e);
        uint64_t ehsize = fab__le_get32(d + e + 4), psize = fab__le_get64(d + e + 8);
        if (kind == FAB__CU_FATBIN_PTX || kind == FAB__CU_FATBIN_ELF || ehsize < 64 ||
            !fab__cu_image_in(e + ehsize, psize, len))
            return true;
        e += (size_t)(ehsize + psize);
    }
    return false;
}

/* A -rdc=true build has one prelinked fatbin per translation unit; no
 * program has anywhere near this many, and a list that runs on is not
 * nvcc's. */
#define FAB__CU_WRAPPER_MAX_PRELINKED 65536

CUresult fab__cu_image_gather(const void *data, const void **image_out, size_t *len_out,
                              void **owned_out)
{
    *owned_out = NULL;
    const unsigned char *d = data;
    if (!d)
        return CUDA_ERROR_INVALID_VALUE;
    if (fab__le_get32(d) != FAB__CU_FATBIN_WRAPPER_MAGIC) {
        *image_out = data;
        *len_out = fab__cu_image_extent(data);
        return CUDA_SUCCESS;
    }
    const void *linked, *list;
    memcpy(&linked, d + 8, sizeof(linked));
    memcpy(&list, d + 16, sizeof(list));
    if (!linked)
        return CUDA_ERROR_INVALID_VALUE;
    size_t linked_len = fab__cu_image_extent(linked);
    if (fab__le_get32(d + 4) != 2 || !list) {
        *image_out = linked;
        *len_out = linked_len;
        return CUDA_SUCCESS;
    }
    /* The device-linked fatbin (its cubins: names, globals), then the
     * prelinked fatbins (each translation unit's PTX, which is what runs:
     * module.c links them again), back to back: the fatbin parse reads one
     * container after another. */
    const void *const *prelinked = list;
    bool linked_code = fab__cu_fatbin_has_code(linked, linked_len);
    size_t n = 0, total = linked_code ? linked_len : 0;
    for (; prelinked[n]; n++) {
        if (n == FAB__CU_WRAPPER_MAX_PRELINKED)
            return CUDA_ERROR_INVALID_IMAGE;
        size_t one = fab__cu_image_extent(prelinked[n]);
        if (fab__le_get32(prelinked[n]) != FAB__CU_FATBIN_MAGIC || one > FAB__CU_IMAGE_MAX_BYTES - total)
            return CUDA_ERROR_INVALID_IMAGE;
        total += one;
    }
    if (n == 0) {
        *image_out = linked;
        *len_out = linked_len;
        return CUDA_SUCCESS;
    }
    unsigned char *buf = malloc(total);
    if (!buf)
        return CUDA_ERROR_OUT_OF_MEMORY;
    size_t at = 0;
    if (linked_code) {
        memcpy(buf, linked, linked_len);
        at = linked_len;
    }
    for (size_t i = 0; i < n; i++) {
        size_t one = fab__cu_image_extent(prelinked[i]);
        memcpy(buf + at, prelinked[i], one);
        at += one;
    }
    *owned_out = buf;
    *image_out = buf;
    *len_out = total;
    return CUDA_SUCCESS;
}
