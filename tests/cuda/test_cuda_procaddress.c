/* cuGetProcAddress, both ABIs, against cuda.h only.
 *
 * The lookup table is checked against NVIDIA's own statement of every
 * function's signatures: cudaTypedefs.h, where the toolkit is installed,
 * declares one pointer type per name and version (PFN_cuMemAlloc_v3020, and
 * _ptds/_ptsz for the per-thread ABIs). For every such type whose name the
 * emulation answers, the test asks for the name at that version and ten
 * below it, finds the exported symbol it got (dladdr), and writes a C file
 * that initialises a pointer of that type with that symbol; NVIDIA's
 * headers and the C compiler then say whether the signature matches. A
 * per-thread type must also resolve to a per-thread symbol. Where the
 * toolkit is absent the test says SKIPPED. */
#include "cuda_test.h"

#include <dlfcn.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

typedef CUresult (*get_proc_v1_t)(const char *, void **, int, cuuint64_t);

static get_proc_v1_t old_get_proc_address(void)
{
    void *fn = NULL;
    CUdriverProcAddressQueryResult q;
    CU_OK(cuGetProcAddress("cuGetProcAddress", &fn, 11030, CU_GET_PROC_ADDRESS_DEFAULT, &q));
    assert_non_null(fn);
    get_proc_v1_t v1;
    memcpy(&v1, &fn, sizeof(fn));
    return v1;
}

/* The 11.3 ABI has no status argument: "not there" is its result. */
static void old_abi_answers_unknown_names_with_not_found(void **state)
{
    (void)state;
    CU_OK(cuInit(0));
    get_proc_v1_t v1 = old_get_proc_address();
    void *fn = (void *)&fn;
    assert_int_equal(v1("cuNoSuchFunction", &fn, 12000, CU_GET_PROC_ADDRESS_DEFAULT),
                     CUDA_ERROR_NOT_FOUND);
    assert_null(fn);
}

static void old_abi_answers_too_old_a_version_with_not_found(void **state)
{
    (void)state;
    CU_OK(cuInit(0));
    get_proc_v1_t v1 = old_get_proc_address();
    void *fn = (void *)&fn;
    /* cuMemCreate came with CUDA 10.2 */
    assert_int_equal(v1("cuMemCreate", &fn, 10010, CU_GET_PROC_ADDRESS_DEFAULT),
                     CUDA_ERROR_NOT_FOUND);
    assert_null(fn);
    CU_OK(v1("cuMemCreate", &fn, 10020, CU_GET_PROC_ADDRESS_DEFAULT));
    assert_non_null(fn);
}

static void old_abi_refuses_what_the_new_one_refuses(void **state)
{
    (void)state;
    CU_OK(cuInit(0));
    get_proc_v1_t v1 = old_get_proc_address();
    void *fn = NULL;
    int driver = 0;
    CU_OK(cuDriverGetVersion(&driver));
    assert_int_equal(v1("cuMemCreate", &fn, driver + 10, 0), CUDA_ERROR_INVALID_VALUE);
    assert_int_equal(v1(NULL, &fn, 12000, 0), CUDA_ERROR_INVALID_VALUE);
    assert_int_equal(v1("cuMemCreate", NULL, 12000, 0), CUDA_ERROR_INVALID_VALUE);
}

/* cuStreamGetCtx at 12.5 is the ABI that also names a green context: NULL,
 * since the emulation makes none; the context is the stream's. */
static void stream_get_ctx_at_12050_names_no_green_context(void **state)
{
    (void)state;
    CUcontext ctx = cut_init(0);
    void *fn = NULL;
    CUdriverProcAddressQueryResult q;
    CU_OK(cuGetProcAddress("cuStreamGetCtx", &fn, 12050, CU_GET_PROC_ADDRESS_LEGACY_STREAM, &q));
    assert_non_null(fn);
    CUresult (*get_ctx)(CUstream, CUcontext *, void **);
    memcpy(&get_ctx, &fn, sizeof(fn));
    CUstream s;
    CU_OK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
    CUcontext got = NULL;
    void *green = (void *)&green;
    CU_OK(get_ctx(s, &got, &green));
    assert_ptr_equal(got, ctx);
    assert_null(green);
    assert_int_equal(get_ctx(s, NULL, &green), CUDA_ERROR_INVALID_VALUE);
    CU_OK(cuStreamDestroy(s));
}

/* ---- the whole table against cudaTypedefs.h ------------------------------------------- */

typedef struct pfn_type {
    char ident[128]; /* cuMemcpyHtoD_v7000_ptds */
    char base[112];  /* cuMemcpyHtoD */
    int version;     /* 7000 */
    bool per_thread; /* _ptds or _ptsz */
} pfn_type_t;

typedef struct pfn_list {
    pfn_type_t *v;
    size_t n, cap;
} pfn_list_t;

/* Split "cuMemcpyHtoD_v7000_ptds" into its parts; false if it is not of the
 * form name_vNNNN[_ptds|_ptsz]. */
static bool pfn_split(const char *ident, pfn_type_t *out)
{
    size_t len = strlen(ident);
    if (len >= sizeof(out->ident))
        return false;
    memset(out, 0, sizeof(*out));
    memcpy(out->ident, ident, len + 1);
    char tmp[128];
    memcpy(tmp, ident, len + 1);
    if (len > 5 && (strcmp(tmp + len - 5, "_ptds") == 0 || strcmp(tmp + len - 5, "_ptsz") == 0)) {
        out->per_thread = true;
        tmp[len - 5] = '\0';
    }
    char *v = strrchr(tmp, '_');
    if (!v || v[1] != 'v' || v[2] == '\0' || strspn(v + 2, "0123456789") != strlen(v + 2))
        return false;
    out->version = atoi(v + 2);
    *v = '\0';
    if (strlen(tmp) >= sizeof(out->base))
        return false;
    strcpy(out->base, tmp);
    return true;
}

/* Every "PFN_<ident>)" of the header, once each. */
static pfn_list_t pfn_read(const char *path)
{
    pfn_list_t l = {NULL, 0, 0};
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    char line[2048];
    while (fgets(line, sizeof(line), f)) {
        const char *p = strstr(line, "(CUDAAPI *PFN_");
        if (!p)
            continue;
        p += strlen("(CUDAAPI *PFN_");
        size_t n = strcspn(p, ")");
        char ident[160];
        if (n >= sizeof(ident))
            continue;
        memcpy(ident, p, n);
        ident[n] = '\0';
        pfn_type_t t;
        if (!pfn_split(ident, &t))
            continue;
        bool seen = false;
        for (size_t i = 0; i < l.n && !seen; i++)
            seen = strcmp(l.v[i].ident, t.ident) == 0;
        if (seen)
            continue;
        if (l.n == l.cap) {
            l.cap = l.cap ? 2 * l.cap : 256;
            l.v = realloc(l.v, l.cap * sizeof(*l.v));
            assert_non_null(l.v);
        }
        l.v[l.n++] = t;
    }
    fclose(f);
    return l;
}

/* The newest type of t's name and ABI kind older than t, or NULL. */
static const pfn_type_t *pfn_previous(const pfn_list_t *l, const pfn_type_t *t)
{
    const pfn_type_t *best = NULL;
    for (size_t i = 0; i < l->n; i++) {
        const pfn_type_t *c = &l->v[i];
        if (c->per_thread == t->per_thread && c->version < t->version &&
            strcmp(c->base, t->base) == 0 && (!best || c->version > best->version))
            best = c;
    }
    return best;
}

/* The exported name of what cuGetProcAddress gives for name at version, or
 * NULL (with *status set). */
static const char *resolve(const char *name, int version, bool per_thread,
                           CUdriverProcAddressQueryResult *status)
{
    void *fn = NULL;
    cuuint64_t flags = per_thread ? CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM
                                  : CU_GET_PROC_ADDRESS_LEGACY_STREAM;
    CU_OK(cuGetProcAddress(name, &fn, version, flags, status));
    if (!fn)
        return NULL;
    Dl_info info;
    if (!dladdr(fn, &info) || !info.dli_sname)
        fail_msg("%s at %d: the pointer is no exported symbol", name, version);
    return info.dli_sname;
}

static bool ends_per_thread(const char *sym)
{
    size_t n = strlen(sym);
    return n > 5 && (strcmp(sym + n - 5, "_ptds") == 0 || strcmp(sym + n - 5, "_ptsz") == 0);
}

static void every_typedef_version_resolves_to_a_function_of_its_signature(void **state)
{
    (void)state;
    const char *inc = getenv("FABMEM_TEST_CUDA_INCLUDE");
    const char *cc = getenv("FABMEM_TEST_CC");
    char header[1024];
    if (!inc || !cc || snprintf(header, sizeof(header), "%s/cudaTypedefs.h", inc) >= (int)sizeof(header) ||
        access(header, R_OK) != 0) {
        printf("SKIPPED: no cudaTypedefs.h (NVIDIA's toolkit) on this machine\n");
        fab_test_skip("no cudaTypedefs.h");
    }
    CU_OK(cuInit(0));
    int driver = 0;
    CU_OK(cuDriverGetVersion(&driver));
    pfn_list_t l = pfn_read(header);
    assert_true(l.n > 300); /* CUDA 13.0 has 614 */

    char dir[] = "/tmp/fabmem-procaddr-XXXXXX";
    assert_non_null(mkdtemp(dir));
    char src[256], log[256];
    snprintf(src, sizeof(src), "%s/table.c", dir);
    snprintf(log, sizeof(log), "%s/cc.log", dir);
    FILE *out = fopen(src, "w");
    assert_non_null(out);
    /* Every ABI under its exported name, none renamed by a macro. */
    fprintf(out, "#define __CUDA_API_VERSION_INTERNAL 1\n#include <cuda.h>\n"
                 "#include <cudaTypedefs.h>\n");
    size_t checked = 0, absent = 0, wrong = 0;
    for (size_t i = 0; i < l.n; i++) {
        const pfn_type_t *t = &l.v[i];
        if (t->version > driver)
            continue;
        CUdriverProcAddressQueryResult st;
        const char *sym = resolve(t->base, t->version, t->per_thread, &st);
        if (st == CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND) {
            absent++; /* a function the emulation does not offer */
            continue;
        }
        if (!sym) {
            printf("FAIL: %s exists at %d in cuda.h; the emulation offers it only later\n",
                   t->base, t->version);
            wrong++;
            continue;
        }
        if (t->per_thread && !ends_per_thread(sym)) {
            printf("FAIL: %s at %d with the per-thread flag gives %s, a legacy-stream ABI\n",
                   t->base, t->version, sym);
            wrong++;
        }
        fprintf(out, "PFN_%s at_%zu = %s;\n", t->ident, i, sym);
        checked++;
        /* Just below this version: the previous ABI, or nothing at all. */
        const pfn_type_t *prev = pfn_previous(&l, t);
        const char *below = resolve(t->base, t->version - 10, t->per_thread, &st);
        if (prev && below) {
            fprintf(out, "PFN_%s below_%zu = %s;\n", prev->ident, i, below);
        } else if (!prev && below && !t->per_thread) {
            printf("FAIL: %s resolves at %d, before cuda.h's first ABI of it (%d): %s\n",
                   t->base, t->version - 10, t->version, below);
            wrong++;
        }
    }
    fclose(out);
    printf("%zu types checked, %zu names not emulated, %zu wrong\n", checked, absent, wrong);

    char cmd[2048];
    snprintf(cmd, sizeof(cmd),
             "%s -fsyntax-only -std=c11 -Werror=incompatible-pointer-types "
             "-Werror=implicit-function-declaration -I'%s' '%s' > '%s' 2>&1",
             cc, inc, src, log);
    int rc = system(cmd);
    if (rc != 0) {
        char show[2048];
        snprintf(show, sizeof(show), "grep -E 'error|note: ' '%s' | head -60", log);
        if (system(show) != 0)
            printf("(no compiler output)\n");
    }
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
    if (system(cmd) != 0)
        printf("could not remove %s\n", dir);
    free(l.v);
    assert_int_equal(rc, 0);
    assert_int_equal(wrong, 0);
    assert_true(checked > 100);
}

static const struct CMUnitTest tests[] = {
    cmocka_unit_test(old_abi_answers_unknown_names_with_not_found),
    cmocka_unit_test(old_abi_answers_too_old_a_version_with_not_found),
    cmocka_unit_test(old_abi_refuses_what_the_new_one_refuses),
    cmocka_unit_test(stream_get_ctx_at_12050_names_no_green_context),
    cmocka_unit_test(every_typedef_version_resolves_to_a_function_of_its_signature),
};

FAB_TEST_MAIN_NO_HELPERS("cuda", tests)
