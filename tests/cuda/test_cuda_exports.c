/* The entry-point table against the library, needing no NVIDIA toolkit:
 * every row of procaddress.c's tables (its base name, the CUDA version that
 * introduced the ABI, the symbol) names an exported function, which
 * cuGetProcAddress hands out for that name at that version (with the
 * per-thread flag for the per-thread table's rows), and every cu* function
 * libcuda.so.1 exports is some row's symbol. The rows are read from
 * src/cuda/procaddress.c when the build is configured (procaddress_rows.h),
 * so the table stays the one list. */
#include "cuda_test.h"

#include <dlfcn.h>
#include <elf.h>
#include <fcntl.h>
#include <stdbool.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

typedef struct row {
    const char *name;
    int version;
    const char *symbol;
    bool per_thread;
} row_t;

static const row_t rows[] = {
#define ROW(name, version, symbol, per_thread) {name, version, symbol, per_thread},
#include "procaddress_rows.h"
#undef ROW
};
#define NROWS (sizeof(rows) / sizeof(rows[0]))

static void every_table_row_is_exported_and_resolves_at_its_version(void **state)
{
    (void)state;
    assert_true(NROWS > 100);
    Dl_info lib;
    assert_int_not_equal(dladdr((void *)(uintptr_t)&cuInit, &lib), 0);
    for (size_t i = 0; i < NROWS; i++) {
        const row_t *r = &rows[i];
        void *sym = dlsym(RTLD_DEFAULT, r->symbol);
        if (sym == NULL)
            fail_msg("%s (the row of %s at %d) is not exported", r->symbol, r->name, r->version);
        Dl_info where;
        assert_int_not_equal(dladdr(sym, &where), 0);
        if (strcmp(where.dli_fname, lib.dli_fname) != 0)
            fail_msg("%s comes from %s, not %s", r->symbol, where.dli_fname, lib.dli_fname);
        void *fn = NULL;
        CUdriverProcAddressQueryResult q = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
        cuuint64_t flags = r->per_thread ? CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM
                                         : CU_GET_PROC_ADDRESS_DEFAULT;
        CU_OK(cuGetProcAddress(r->name, &fn, r->version, flags, &q));
        if (q != CU_GET_PROC_ADDRESS_SUCCESS || fn != sym)
            fail_msg("cuGetProcAddress(%s, %d%s) gives %p (status %d), not %s (%p)", r->name,
                     r->version, r->per_thread ? ", per-thread" : "", fn, (int)q, r->symbol, sym);
    }
}

static bool is_row_symbol(const char *name)
{
    for (size_t i = 0; i < NROWS; i++)
        if (strcmp(rows[i].symbol, name) == 0)
            return true;
    return false;
}

static void every_exported_cu_function_is_a_table_row(void **state)
{
    (void)state;
    Dl_info lib;
    assert_int_not_equal(dladdr((void *)(uintptr_t)&cuInit, &lib), 0);
    int fd = open(lib.dli_fname, O_RDONLY | O_CLOEXEC);
    assert_true(fd >= 0);
    struct stat st;
    assert_int_equal(fstat(fd, &st), 0);
    const uint8_t *file = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
    close(fd);
    assert_true(file != MAP_FAILED);
    const Elf64_Ehdr *eh = (const Elf64_Ehdr *)file;
    assert_memory_equal(eh->e_ident, ELFMAG, SELFMAG);
    assert_int_equal(eh->e_ident[EI_CLASS], ELFCLASS64);
    const Elf64_Shdr *sh = (const Elf64_Shdr *)(file + eh->e_shoff);
    size_t exported = 0, missing = 0;
    for (unsigned s = 0; s < eh->e_shnum; s++) {
        if (sh[s].sh_type != SHT_DYNSYM)
            continue;
        const Elf64_Sym *syms = (const Elf64_Sym *)(file + sh[s].sh_offset);
        const char *names = (const char *)(file + sh[sh[s].sh_link].sh_offset);
        for (size_t k = 0; k < sh[s].sh_size / sizeof(Elf64_Sym); k++) {
            const Elf64_Sym *y = &syms[k];
            const char *name = names + y->st_name;
            if (y->st_shndx == SHN_UNDEF || ELF64_ST_TYPE(y->st_info) != STT_FUNC ||
                ELF64_ST_BIND(y->st_info) == STB_LOCAL || strncmp(name, "cu", 2) != 0)
                continue;
            exported++;
            if (!is_row_symbol(name)) {
                fprintf(stderr, "exported %s is no row of procaddress.c's tables\n", name);
                missing++;
            }
        }
    }
    munmap((void *)(uintptr_t)file, (size_t)st.st_size);
    assert_true(exported > 100);
    assert_int_equal(missing, 0);
}

static const struct CMUnitTest tests[] = {
    cmocka_unit_test(every_table_row_is_exported_and_resolves_at_its_version),
    cmocka_unit_test(every_exported_cu_function_is_a_table_row),
};

FAB_TEST_MAIN_NO_HELPERS("cuda_exports", tests)
