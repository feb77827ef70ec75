/* Code images: what a PTX text, a cubin and a fatbin declare. image.c owns
 * nothing but the result of a parse (fab__cu_image_t: names, sizes, initial
 * values), which the caller frees with fab__cu_image_free; it knows no CUDA
 * state, so that the fuzzer (fuzz/fuzz_image.c) can feed it any bytes.
 *
 * What is read:
 *   PTX     parsed whole by the PTX front end (src/ptx, the project's one
 *           PTX parser): every `.entry` with a body is a kernel; every
 *           `.global` or `.const` variable is a global, its size from its
 *           type, vector width and array dimensions, its initial value from
 *           its initializer (addresses in it read as zeros here: the PTX
 *           engine places them). `.visible` and `.weak` change nothing here;
 *           `.extern` declares what another module defines, so it adds
 *           nothing. The text must start (after comments) with `.version`.
 *   cubin   an ELF64 little-endian file for EM_CUDA (190): kernels are the
 *           defined function symbols marked as entries (st_other bit 0x10, as
 *           nvcc writes them), whatever their binding: a `static __global__`
 *           kernel or one in an anonymous namespace is a LOCAL symbol. If no
 *           function is marked, every defined global (not LOCAL) function is
 *           a kernel. Globals are the defined object symbols of the
 *           `.nv.global*` and `.nv.constant*` sections, with their initial
 *           values from the section's bytes (`.nv.global.init`), zeros for a
 *           NOBITS section.
 *   fatbin  NVIDIA's container (magic 0xBA55ED50, one or more back to back):
 *           each entry's header says its kind (1 PTX, 2 cubin), its payload
 *           size and whether it is compressed (flag 0x2000: an LZ4 block;
 *           0x8000: a zstd frame); every PTX and cubin entry is read and the
 *           names merged. The decompressors are the system's liblz4.so.1 and
 *           libzstd.so.1, found with dlopen when first needed.
 *   wrapper nvcc's __fatBinC_Wrapper_t around a fatbin (fab__cu_image_gather):
 *           version 1 points at the fatbin; version 2 (a -rdc=true build's,
 *           from nvlink's crt/link.stub) at the device-linked fatbin and a
 *           NULL-ended list of each translation unit's prelinked fatbin. The
 *           image is the linked fatbin (where it holds code: its cubins)
 *           followed by every prelinked one (their PTX, which the PTX engine
 *           links again), read back to back as one image.
 * The layout of the fatbin container is documented by open-source readers
 * (docs/cuda.md, "Code objects and kernels", names them) and was checked
 * against what nvcc 13 writes. */
#include "src/cuda/image.h"
#include "src/base/le.h"
#include "src/ptx/ptx.h"

#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>


#define FAB__CU_ELF_MAGIC "\x7f" "ELF"
#define FAB__CU_EM_CUDA 190
#define FAB__CU_FATBIN_MAGIC 0xBA55ED50u
#define FAB__CU_FATBIN_WRAPPER_MAGIC 0x466243B1u
#define FAB__CU_FATBIN_LZ4 0x2000u
#define FAB__CU_FATBIN_ZSTD 0x8000u
/* No global or decompressed entry may claim more: a bound that keeps a
 * hostile header from asking for absurd memory. */
#define FAB__CU_IMAGE_MAX_BYTES ((size_t)1 << 30)

/* Return the call's error from the calling function (state.h's FAB__CU_TRY;
 * image.c includes no state). */
#define FAB__CU_IMAGE_TRY(call)                                             \
    do {                                                                    \
        CUresult fab__cu_try_ = (call);                                     \
        if (fab__cu_try_ != CUDA_SUCCESS)                                   \
            return fab__cu_try_;                                            \
    } while (0)

/* ---- results --------------------------------------------------------------- */

static CUresult fab__cu_image_fail(fab__cu_image_t *img, CUresult r, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static CUresult fab__cu_image_fail(fab__cu_image_t *img, CUresult r, const char *fmt, ...)
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

/* Add a kernel unless one of that name is there already. */
static CUresult fab__cu_image_add_kernel(fab__cu_image_t *img, const char *name, size_t len)
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

/* Add a global unless one of that name is there already; init (size bytes)
 * is copied, or NULL for zeros. */
static CUresult fab__cu_image_add_global(fab__cu_image_t *img, const char *name, size_t len,
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

/* Keep a copy of a PTX text (up to its first NUL) for the PTX engine. */
static CUresult fab__cu_image_keep_ptx(fab__cu_image_t *img, const char *text, size_t len,
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

/* Whether [off, off+n) lies in a buffer of len bytes, without overflow. */
static bool fab__cu_in(uint64_t off, uint64_t n, size_t len)
{
    return off <= len && n <= len - off;
}

/* ---- PTX ------------------------------------------------------------------------ */

/* Whether the text starts (after white space and comments) with .version:
 * what tells PTX from bytes that are no image at all. */
static bool fab__cu_ptx_looks_like_ptx(const char *p, size_t len)
{
    const char *end = p + len;
    while (p < end) {
        if (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r' || *p == '\f' || *p == '\v') {
            p++;
        } else if (end - p >= 2 && p[0] == '/' && p[1] == '/') {
            while (p < end && *p != '\n')
                p++;
        } else if (end - p >= 2 && p[0] == '/' && p[1] == '*') {
            const char *q = p + 2;
            while (end - q >= 2 && !(q[0] == '*' && q[1] == '/'))
                q++;
            p = end - q >= 2 ? q + 2 : end;
        } else {
            break;
        }
    }
    return end - p >= 8 && memcmp(p, ".version", 8) == 0;
}

/* The kernels (entries with a body) and globals (.global and .const
 * variables a module defines) of a PTX text, from the PTX front end's parse
 * (src/ptx): the project's one PTX parser. */
static CUresult fab__cu_ptx_parse(const char *text, size_t len, fab__cu_image_t *img)
{
    const char *nul = memchr(text, '\0', len);
    if (nul)
        len = (size_t)(nul - text);
    if (!fab__cu_ptx_looks_like_ptx(text, len))
        return fab__cu_image_fail(img, CUDA_ERROR_INVALID_IMAGE,
                                  "neither a cubin, a fatbin nor PTX text (which starts with .version)");
    fab__ptx_module_t *m = NULL;
    fab__ptx_diag_t diag;
    fab__ptx_status_t st = fab__ptx_parse(text, len, &m, &diag);
    if (st == FAB__PTX_E_NOMEM)
        return CUDA_ERROR_OUT_OF_MEMORY;
    if (st != FAB__PTX_OK)
        return fab__cu_image_fail(img, CUDA_ERROR_INVALID_PTX, "PTX line %u: %s", (unsigned)diag.line,
                                  diag.msg);
    CUresult r = CUDA_SUCCESS;
    for (uint32_t i = 0; i < m->nfuncs && r == CUDA_SUCCESS; i++) {
        const fab__ptx_func_t *f = &m->funcs[i];
        if (f->entry && f->defined)
            r = fab__cu_image_add_kernel(img, f->name, strlen(f->name));
    }
    for (uint32_t i = 0; i < m->nvars && r == CUDA_SUCCESS; i++) {
        const fab__ptx_var_t *v = &m->vars[i];
        /* .extern ones another module defines; .texref and the like (no
         * type) hold nothing a copy reaches */
        if (v->func != FAB__PTX_NONE || v->linkage == FAB__PTX_L_EXTERN || v->type == FAB__PTX_T_NONE ||
            (v->space != FAB__PTX_S_GLOBAL && v->space != FAB__PTX_S_CONST))
            continue;
        if (v->size > FAB__CU_IMAGE_MAX_BYTES)
            r = fab__cu_image_fail(img, CUDA_ERROR_INVALID_PTX, "PTX: %s is too large", v->name);
        else
            r = fab__cu_image_add_global(img, v->name, strlen(v->name), (size_t)v->size, v->init);
    }
    fab__ptx_module_free(m);
    return r;
}

/* ---- cubin (ELF) ---------------------------------------------------------------- */

enum {
    FAB__CU_SHT_SYMTAB = 2,
    FAB__CU_SHT_NOBITS = 8,
    FAB__CU_STT_OBJECT = 1,
    FAB__CU_STT_FUNC = 2,
    FAB__CU_STB_LOCAL = 0,
    FAB__CU_STO_ENTRY = 0x10,
    FAB__CU_SHDR = 64,
    FAB__CU_SYM = 24,
};

typedef struct fab__cu_elf {
    const unsigned char *d;
    size_t len;
    uint64_t shoff;
    unsigned shnum;
} fab__cu_elf_t;

/* Section i's header fields (i < shnum, checked by the caller). */
static const unsigned char *fab__cu_elf_shdr(const fab__cu_elf_t *e, unsigned i)
{
    return e->d + e->shoff + (uint64_t)i * FAB__CU_SHDR;
}

/* The NUL-terminated string at off in the string section strtab; NULL when
 * it runs out of the section. */
static const char *fab__cu_elf_str(const fab__cu_elf_t *e, unsigned strtab, uint64_t off,
                                   size_t *len_out)
{
    if (strtab >= e->shnum)
        return NULL;
    const unsigned char *sh = fab__cu_elf_shdr(e, strtab);
    uint64_t so = fab__le_get64(sh + 24), ss = fab__le_get64(sh + 32);
    if (!fab__cu_in(so, ss, e->len) || off >= ss)
        return NULL;
    const char *s = (const char *)e->d + so + off;
    const char *z = memchr(s, '\0', ss - off);
    if (!z)
        return NULL;
    *len_out = (size_t)(z - s);
    return s;
}

static bool fab__cu_starts(const char *s, size_t len, const char *prefix)
{
    size_t n = strlen(prefix);
    return len >= n && memcmp(s, prefix, n) == 0;
}

static CUresult fab__cu_elf_parse(const unsigned char *d, size_t len, fab__cu_image_t *img)
{
    if (len < 64 || d[4] != 2 /* ELFCLASS64 */ || d[5] != 1 /* little-endian */)
        return fab__cu_image_fail(img, CUDA_ERROR_INVALID_IMAGE,
                                  "cubin: not a 64-bit little-endian ELF file");
    if (fab__le_get16(d + 18) != FAB__CU_EM_CUDA)
        return fab__cu_image_fail(img, CUDA_ERROR_INVALID_IMAGE,
                                  "ELF file for machine %u, not EM_CUDA (190)", fab__le_get16(d + 18));
    fab__cu_elf_t e = {.d = d, .len = len, .shoff = fab__le_get64(d + 40), .shnum = fab__le_get16(d + 60)};
    unsigned shentsize = fab__le_get16(d + 58), shstrndx = fab__le_get16(d + 62);
    if (e.shnum == 0 || shentsize != FAB__CU_SHDR ||
        !fab__cu_in(e.shoff, (uint64_t)e.shnum * FAB__CU_SHDR, len) || shstrndx >= e.shnum)
        return fab__cu_image_fail(img, CUDA_ERROR_INVALID_IMAGE,
                                  "cubin: section headers out of the file");
    unsigned symtab = e.shnum;
    for (unsigned i = 0; i < e.shnum; i++) {
        if (fab__le_get32(fab__cu_elf_shdr(&e, i) + 4) == FAB__CU_SHT_SYMTAB) {
            symtab = i;
            break;
        }
    }
    if (symtab == e.shnum)
        return CUDA_SUCCESS; /* nothing declared */
    const unsigned char *sh = fab__cu_elf_shdr(&e, symtab);
    uint64_t symoff = fab__le_get64(sh + 24), symsize = fab__le_get64(sh + 32);
    unsigned strtab = fab__le_get32(sh + 40);
    if (!fab__cu_in(symoff, symsize, len) || symsize % FAB__CU_SYM != 0)
        return fab__cu_image_fail(img, CUDA_ERROR_INVALID_IMAGE, "cubin: symbol table out of the file");
    uint64_t nsyms = symsize / FAB__CU_SYM;
    bool marked = false; /* does any function carry the entry mark? */
    for (uint64_t k = 0; k < nsyms; k++) {
        const unsigned char *s = d + symoff + k * FAB__CU_SYM;
        if ((s[4] & 0xf) == FAB__CU_STT_FUNC && (s[5] & FAB__CU_STO_ENTRY))
            marked = true;
    }
    for (uint64_t k = 0; k < nsyms; k++) {
        const unsigned char *s = d + symoff + k * FAB__CU_SYM;
        unsigned type = s[4] & 0xf, bind = s[4] >> 4, shndx = fab__le_get16(s + 6);
        uint64_t value = fab__le_get64(s + 8), size = fab__le_get64(s + 16);
        if (shndx == 0 || shndx >= e.shnum)
            continue; /* undefined, absolute or common: not this image's */
        size_t name_len;
        const char *name;
        if (type == FAB__CU_STT_FUNC &&
            (marked ? (s[5] & FAB__CU_STO_ENTRY) != 0 : bind != FAB__CU_STB_LOCAL)) {
            if (!(name = fab__cu_elf_str(&e, strtab, fab__le_get32(s), &name_len)))
                return fab__cu_image_fail(img, CUDA_ERROR_INVALID_IMAGE, "cubin: a bad symbol name");
            FAB__CU_IMAGE_TRY(fab__cu_image_add_kernel(img, name, name_len));
        } else if (type == FAB__CU_STT_OBJECT) {
            const unsigned char *sec = fab__cu_elf_shdr(&e, shndx);
            size_t sec_len;
            const char *sec_name = fab__cu_elf_str(&e, shstrndx, fab__le_get32(sec), &sec_len);
            if (!sec_name || !(fab__cu_starts(sec_name, sec_len, ".nv.global") ||
                               fab__cu_starts(sec_name, sec_len, ".nv.constant")))
                continue;
            if (!(name = fab__cu_elf_str(&e, strtab, fab__le_get32(s), &name_len)))
                return fab__cu_image_fail(img, CUDA_ERROR_INVALID_IMAGE, "cubin: a bad symbol name");
            if (size > FAB__CU_IMAGE_MAX_BYTES)
                return fab__cu_image_fail(img, CUDA_ERROR_INVALID_IMAGE,
                                          "cubin: %.*s is too large", (int)name_len, name);
            const unsigned char *init = NULL;
            if (fab__le_get32(sec + 4) != FAB__CU_SHT_NOBITS) {
                uint64_t so = fab__le_get64(sec + 24), ss = fab__le_get64(sec + 32);
                if (!fab__cu_in(so, ss, len) || !fab__cu_in(value, size, ss))
                    return fab__cu_image_fail(img, CUDA_ERROR_INVALID_IMAGE,
                                              "cubin: the value of %.*s is out of its section",
                                              (int)name_len, name);
                init = d + so + value;
            }
            FAB__CU_IMAGE_TRY(fab__cu_image_add_global(img, name, name_len, (size_t)size, init));
        }
    }
    return CUDA_SUCCESS;
}

/* ---- fatbin ----------------------------------------------------------------------- */

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

enum { FAB__CU_FATBIN_PTX = 1, FAB__CU_FATBIN_ELF = 2 };

static CUresult fab__cu_fatbin_parse(const unsigned char *d, size_t len, fab__cu_image_t *img)
{
    size_t off = 0;
    unsigned used = 0;
    while (off < len) {
        if (!fab__cu_in(off, 16, len) || fab__le_get32(d + off) != FAB__CU_FATBIN_MAGIC) {
            if (off > 0)
                break; /* trailing bytes after the last container */
            return fab__cu_image_fail(img, CUDA_ERROR_INVALID_IMAGE, "fatbin: no container");
        }
        unsigned hsize = fab__le_get16(d + off + 6);
        uint64_t body = fab__le_get64(d + off + 8);
        if (fab__le_get16(d + off + 4) != 1 || hsize < 16 || !fab__cu_in(off + hsize, body, len))
            return fab__cu_image_fail(img, CUDA_ERROR_INVALID_IMAGE,
                                      "fatbin: a bad container header at offset %zu", off);
        size_t e = off + hsize, stop = off + hsize + (size_t)body;
        while (e < stop) {
            if (!fab__cu_in(e, 64, stop))
                return fab__cu_image_fail(img, CUDA_ERROR_INVALID_IMAGE,
                                          "fatbin: a truncated entry at offset %zu", e);
            const unsigned char *h = d + e;
            unsigned kind = fab__le_get16(h);
            uint32_t ehsize = fab__le_get32(h + 4), csize = fab__le_get32(h + 16);
            uint64_t psize = fab__le_get64(h + 8), flags = fab__le_get64(h + 40),
                     dsize = fab__le_get64(h + 56);
            if (ehsize < 64 || !fab__cu_in(e + ehsize, psize, stop))
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
    if (memcmp(d, FAB__CU_ELF_MAGIC, 4) == 0) {
        /* The section and program header tables end a cubin (nvcc writes
         * them after every section); only the ELF header is read here, and
         * the parse then checks every section against that extent. */
        if (d[4] != 2)
            return 64;
        uint64_t end = 64, shoff = fab__le_get64(d + 40), phoff = fab__le_get64(d + 32);
        uint64_t sh_end = shoff + (uint64_t)fab__le_get16(d + 60) * fab__le_get16(d + 58);
        uint64_t ph_end = phoff + (uint64_t)fab__le_get16(d + 56) * fab__le_get16(d + 54);
        if (shoff <= FAB__CU_IMAGE_MAX_BYTES && sh_end > end)
            end = sh_end;
        if (phoff <= FAB__CU_IMAGE_MAX_BYTES && ph_end > end)
            end = ph_end;
        return end > FAB__CU_IMAGE_MAX_BYTES ? FAB__CU_IMAGE_MAX_BYTES : (size_t)end;
    }
    if (fab__le_get32(d) == FAB__CU_FATBIN_MAGIC) {
        uint64_t body = fab__le_get64(d + 8);
        unsigned hsize = fab__le_get16(d + 6);
        return body > FAB__CU_IMAGE_MAX_BYTES ? FAB__CU_IMAGE_MAX_BYTES : hsize + (size_t)body;
    }
    return strlen((const char *)d) + 1;
}

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
        if (!fab__cu_in(e, 64, len))
            return true;
        unsigned kind = fab__le_get16(d + e);
        uint64_t ehsize = fab__le_get32(d + e + 4), psize = fab__le_get64(d + e + 8);
        if (kind == FAB__CU_FATBIN_PTX || kind == FAB__CU_FATBIN_ELF || ehsize < 64 ||
            !fab__cu_in(e + ehsize, psize, len))
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
