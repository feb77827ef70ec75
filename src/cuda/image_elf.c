/* Cubins in a code image: the kernels and globals of an ELF file for
 * EM_CUDA, and where one ends.
 *
 * A cubin is an ELF64 little-endian file for EM_CUDA (190): kernels are the
 * defined function symbols marked as entries (st_other bit 0x10, as nvcc
 * writes them), whatever their binding: a `static __global__` kernel or one
 * in an anonymous namespace is a LOCAL symbol. If no function is marked,
 * every defined global (not LOCAL) function is a kernel. Globals are the
 * defined object symbols of the `.nv.global*` and `.nv.constant*` sections,
 * with their initial values from the section's bytes (`.nv.global.init`),
 * zeros for a NOBITS section. */
#include "src/cuda/image_impl.h"
#include "src/base/le.h"

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

size_t fab__cu_elf_extent(const unsigned char *d)
{
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
    if (!fab__cu_image_in(so, ss, e->len) || off >= ss)
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

CUresult fab__cu_elf_parse(const unsigned char *d, size_t len, fab__cu_image_t *img)
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
        !fab__cu_image_in(e.shoff, (uint64_t)e.shnum * FAB__CU_SHDR, len) || shstrndx >= e.shnum)
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
    if (!fab__cu_image_in(symoff, symsize, len) || symsize % FAB__CU_SYM != 0)
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
                if (!fab__cu_image_in(so, ss, len) || !fab__cu_image_in(value, size, ss))
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
