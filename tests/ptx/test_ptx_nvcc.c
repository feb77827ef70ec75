/* The PTX that NVIDIA's nvcc emits, parsed whole (ptx.nvcc_<file>, label
 * nvcc): each kernel file of tests/ptx/kernels/ compiled with -ptx
 * -rdc=true for sm_75, sm_80, sm_90, sm_100 and sm_120, every text parsed,
 * and its kernels found by name with their parameter counts. SKIPPED where
 * nvcc is absent (FABMEM_NVCC names another). */
#include "ptx_test.h"

#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

typedef struct kernel {
    const char *name;     /* a suffix of the mangled name (static kernels carry a prefix) */
    uint32_t nparams;
    unsigned min_sm;      /* only compiled for this architecture and above */
} kernel_t;

static const char *nvcc_path(void)
{
    const char *p = getenv("FABMEM_NVCC");
    return p && *p ? p : "/usr/local/cuda/bin/nvcc";
}

static char *read_all(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    assert_int_equal(fseek(f, 0, SEEK_END), 0);
    long n = ftell(f);
    assert_true(n > 0);
    rewind(f);
    char *buf = malloc((size_t)n); /* exactly its size: no NUL to lean on */
    assert_non_null(buf);
    assert_int_equal(fread(buf, 1, (size_t)n, f), (size_t)n);
    fclose(f);
    *len = (size_t)n;
    return buf;
}

static bool ends_with(const char *s, const char *suffix)
{
    size_t a = strlen(s), b = strlen(suffix);
    return a >= b && strcmp(s + a - b, suffix) == 0;
}

static void parse_file(const char *file, const kernel_t *kernels, size_t nkernels)
{
    const char *nvcc = nvcc_path();
    if (access(nvcc, X_OK) != 0) {
        char why[1100];
        snprintf(why, sizeof(why), "no nvcc at %s (set FABMEM_NVCC to another)", nvcc);
        fab_test_skip(why);
    }
    static const unsigned archs[] = {75, 80, 90, 100, 120};
    char *dir = fab_test_tempdir();
    assert_non_null(dir);
    char src[1024];
    snprintf(src, sizeof(src), "%s/%s", FAB_PTX_KERNELS_DIR, file);
    for (size_t a = 0; a < sizeof(archs) / sizeof(archs[0]); a++) {
        char arch[32], out[1024];
        snprintf(arch, sizeof(arch), "-arch=sm_%u", archs[a]);
        snprintf(out, sizeof(out), "%s/k_%u.ptx", dir, archs[a]);
        const char *argv[] = {nvcc, "-ptx", "-rdc=true", arch, src, "-o", out, NULL};
        pid_t pid;
        assert_int_equal(posix_spawn(&pid, nvcc, NULL, NULL, (char *const *)argv, environ), 0);
        int status = 0;
        assert_int_equal(waitpid(pid, &status, 0), pid);
        if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
            fail_msg("nvcc %s %s failed", arch, src);
        size_t len;
        char *text = read_all(out, &len);
        fab__ptx_module_t *m = NULL;
        fab__ptx_diag_t d;
        fab__ptx_status_t st = fab__ptx_parse(text, len, &m, &d);
        if (st != FAB__PTX_OK)
            fail_msg("%s for sm_%u: line %u: %s", file, archs[a], d.line, d.msg);
        assert_int_equal(m->sm, archs[a]);
        for (size_t k = 0; k < nkernels; k++) {
            if (archs[a] < kernels[k].min_sm)
                continue;
            const fab__ptx_func_t *found = NULL;
            for (uint32_t i = 0; i < m->nfuncs; i++) {
                if (m->funcs[i].entry && m->funcs[i].defined && ends_with(m->funcs[i].name, kernels[k].name))
                    found = &m->funcs[i];
            }
            if (!found)
                fail_msg("%s for sm_%u: no kernel %s", file, archs[a], kernels[k].name);
            assert_int_equal(found->nparams, kernels[k].nparams);
            assert_true(found->ninsns > 0);
        }
        fab__ptx_module_free(m);
        free(text);
    }
    fab_test_rmtree(dir);
    free(dir);
}

#define PARSE(file, ...)                                                        \
    do {                                                                        \
        static const kernel_t ks[] = {__VA_ARGS__};                             \
        parse_file(file, ks, sizeof(ks) / sizeof(ks[0]));                       \
    } while (0)

static void nvcc_basics_parse(void **state)
{
    (void)state;
    PARSE("basics.cu", {"_Z4vaddPKfS0_Pfi", 4, 0}, {"_Z6reducePKiPi", 2, 0}, {"_Z3shfPi", 1, 0},
          {"_Z2pri", 1, 0}, {"_Z4atomPyPfPd", 3, 0}, {"_Z8bystruct1SPi", 2, 0}, {"_Z3indPi", 1, 0},
          {"_Z3inlPi", 1, 0}, {"_Z3dynPi", 1, 0});
}

static void nvcc_tables_parse(void **state)
{
    (void)state;
    PARSE("tables.cu", {"_Z1kPii", 2, 0}, {"_Z2lbP6float4PKS_", 2, 0}, {"_Z3extPi", 1, 0});
}

static void nvcc_math_parse(void **state)
{
    (void)state;
    PARSE("math.cu", {"_Z9transcendPKfPfPd", 3, 0}, {"_Z6halvesPK7__half2S1_PS_P14__nv_bfloat162", 4, 0},
          {"_Z4intsPKxPyi", 3, 0}, {"_Z7selectsPKfPi", 2, 0});
}

static void nvcc_sync_parse(void **state)
{
    (void)state;
    PARSE("sync.cu", {"_Z7atomicsPiPjPyPfPd", 5, 0}, {"_Z5warpsPKiPi", 2, 0}, {"_Z6groupsPiS_", 2, 0},
          {"_Z5namedPViPi", 2, 0});
}

static void nvcc_memory_parse(void **state)
{
    (void)state;
    PARSE("memory.cu", {"_Z7vectorsPK6float4PS_PK4int2P7double2", 4, 0}, {"_Z5flagsPiS_", 2, 0},
          {"_Z6localsiPi", 2, 0}, {"_Z8shared2dPKfPf", 2, 0});
}

static void nvcc_calls_parse(void **state)
{
    (void)state;
    PARSE("calls.cu", {"_Z8by_value3Big5SmallPi", 3, 0}, {"_Z4virtPi", 1, 0}, {"_Z7externsPi", 1, 0},
          {"_Z6hiddenPi", 1, 0}, {"4anonEPi", 1, 0}, {"_Z5templIfLi3EEvPT_", 1, 0},
          {"_Z5templIdLi4EEvPT_", 1, 0});
}

static void nvcc_asm_parse(void **state)
{
    (void)state;
    PARSE("asm.cu", {"_Z10asm_kernelPjPy", 2, 0});
}

static void nvcc_modern_parse(void **state)
{
    (void)state;
    PARSE("modern.cu", {"_Z6copiesPK4int4PS_", 2, 0}, {"_Z4barsPi", 1, 0}, {"_Z8clustersPi", 1, 90},
          {"_Z3fp8PKfP13__nv_fp8_e4m3P13__nv_fp8_e5m2", 3, 0});
}

static void nvcc_libraries_parse(void **state)
{
    (void)state;
    PARSE("libraries.cu", {"_Z10cub_reducePKiPi", 2, 0}, {"_Z6tensorPK6__halfS1_Pf", 3, 0},
          {"_Z8texturesyyPf", 3, 0}, {"_Z11halfatomicsP6__halfP7__half2Pf", 3, 0});
}

static const struct CMUnitTest tests[] = {
    cmocka_unit_test(nvcc_basics_parse),
    cmocka_unit_test(nvcc_tables_parse),
    cmocka_unit_test(nvcc_math_parse),
    cmocka_unit_test(nvcc_sync_parse),
    cmocka_unit_test(nvcc_memory_parse),
    cmocka_unit_test(nvcc_calls_parse),
    cmocka_unit_test(nvcc_asm_parse),
    cmocka_unit_test(nvcc_modern_parse),
    cmocka_unit_test(nvcc_libraries_parse),
};

FAB_TEST_MAIN_NO_HELPERS("ptx", tests)
