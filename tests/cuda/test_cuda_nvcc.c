/* Images that NVIDIA's compiler writes, made at run time from a tiny .cu in
 * a temp dir: PTX, a cubin, a fatbin as nvcc writes it by default (its PTX
 * compressed) and one with every entry compressed. Each is loaded, its
 * kernels and globals found with their sizes and initial values, and its
 * kernels launched with the CPU implementations of kernels_for_tests.c, and
 * again with no plugin (cuda.as_written.*), from their PTX.
 * Written against cuda.h only. Skipped, saying so, where nvcc is absent
 * (FABMEM_NVCC names another). */
#include "cuda_test.h"

#include <spawn.h>
#include <stdbool.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

static const char source[] =
    "__device__ int counter = 7;\n"
    "__device__ float table[16] = {1, 2, 3};\n"
    "extern \"C\" __global__ void fill(unsigned *out, unsigned base)\n"
    "{\n"
    "    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "    out[i] = base + i + counter * 0;\n"
    "}\n"
    "__global__ void scale(float *p, float f) { p[threadIdx.x] *= f * table[0]; }\n";

static const char *nvcc_path(void)
{
    const char *p = getenv("FABMEM_NVCC");
    return p && *p ? p : "/usr/local/cuda/bin/nvcc";
}

/* Compile the source in a fresh temp dir with nvcc's flags and output name
 * out; returns the output's path (malloc'd) and the dir in *dir_out, or
 * skips the test when nvcc is absent. */
static char *compile(const char *const *flags, const char *out, char **dir_out)
{
    const char *nvcc = nvcc_path();
    if (access(nvcc, X_OK) != 0) {
        fprintf(stderr, "SKIPPED: no nvcc at %s (set FABMEM_NVCC to another)\n", nvcc);
        fab_test_skip("no nvcc");
    }
    char *dir = fab_test_tempdir();
    assert_non_null(dir);
    char src[512], dst[512];
    snprintf(src, sizeof(src), "%s/k.cu", dir);
    snprintf(dst, sizeof(dst), "%s/%s", dir, out);
    fab_test_write_file(src, source);
    const char *argv[16];
    int n = 0;
    argv[n++] = nvcc;
    for (int i = 0; flags[i]; i++)
        argv[n++] = flags[i];
    argv[n++] = src;
    argv[n++] = "-o";
    argv[n++] = dst;
    argv[n] = NULL;
    pid_t pid;
    assert_int_equal(posix_spawn(&pid, nvcc, NULL, NULL, (char *const *)argv, environ), 0);
    int status = 0;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    *dir_out = dir;
    return strdup(dst);
}

static void *read_all(const char *path)
{
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    assert_int_equal(fseek(f, 0, SEEK_END), 0);
    long n = ftell(f);
    assert_true(n > 0);
    rewind(f);
    char *buf = calloc(1, (size_t)n + 1);
    assert_non_null(buf);
    assert_int_equal(fread(buf, 1, (size_t)n, f), (size_t)n);
    fclose(f);
    return buf;
}

/* What every image of the source declares, and that its kernels run: by
 * the test plugin, or as written (the cuda.as_written variant, no plugin)
 * from the image's PTX, where an image of SASS alone is refused at launch. */
static void check_module(CUmodule mod, bool sass_only)
{
    CUfunction fill, scale;
    CU_OK(cuModuleGetFunction(&fill, mod, "fill"));
    CU_OK(cuModuleGetFunction(&scale, mod, "_Z5scalePff"));
    CU_IS(cuModuleGetFunction(&scale, mod, "scale"), CUDA_ERROR_NOT_FOUND); /* mangled */
    CUdeviceptr counter, table;
    size_t bytes = 0;
    CU_OK(cuModuleGetGlobal(&counter, &bytes, mod, "counter"));
    assert_int_equal(bytes, 4);
    CU_OK(cuModuleGetGlobal(&table, &bytes, mod, "table"));
    assert_int_equal(bytes, 64);
    int c = 0;
    CU_OK(cuMemcpyDtoH(&c, counter, 4));
    assert_int_equal(c, 7);
    float t[16];
    CU_OK(cuMemcpyDtoH(t, table, sizeof(t)));
    assert_true(t[0] == 1.0f && t[1] == 2.0f && t[2] == 3.0f && t[3] == 0.0f);

    CUmemGenericAllocationHandle h;
    size_t size = 2u << 20;
    CUmemAllocationProp prop = cut_prop(CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0);
    CU_OK(cuMemCreate(&h, size, &prop, 0));
    CUdeviceptr ptr = cut_map_rw(h, size);
    unsigned base = 10;
    void *params[] = {&ptr, &base};
#ifdef FAB_AS_WRITTEN
    if (sass_only) {
        CU_IS(cuLaunchKernel(fill, 2, 1, 1, 32, 1, 1, 0, NULL, params, NULL), CUDA_ERROR_NO_BINARY_FOR_GPU);
        cut_unmap_free(ptr, size);
        CU_OK(cuMemRelease(h));
        return;
    }
#else
    (void)sass_only;
#endif
    CU_OK(cuLaunchKernel(fill, 2, 1, 1, 32, 1, 1, 0, NULL, params, NULL));
    unsigned got[64];
    CU_OK(cuMemcpyDtoH(got, ptr, sizeof(got)));
    for (unsigned i = 0; i < 64; i++)
        assert_int_equal(got[i], 10 + i);
    float v[4] = {1, 2, 3, 4}, f = 2.0f;
    CU_OK(cuMemcpyHtoD(ptr, v, sizeof(v)));
    void *sparams[] = {&ptr, &f};
    CU_OK(cuLaunchKernel(scale, 1, 1, 1, 4, 1, 1, 0, NULL, sparams, NULL));
    CU_OK(cuMemcpyDtoH(v, ptr, sizeof(v)));
    assert_true(v[0] == 2.0f && v[3] == 8.0f);
    cut_unmap_free(ptr, size);
    CU_OK(cuMemRelease(h));
}

static void load_file_and_check(const char *const *flags, const char *out, bool from_memory,
                                bool sass_only)
{
    cut_init(0);
    char *dir = NULL;
    char *path = compile(flags, out, &dir);
    CUmodule mod;
    void *image = NULL;
    if (from_memory) {
        image = read_all(path);
        CU_OK(cuModuleLoadData(&mod, image));
    } else {
        CU_OK(cuModuleLoad(&mod, path));
    }
    check_module(mod, sass_only);
    CU_OK(cuModuleUnload(mod));
    if (image) { /* and as a library, from memory */
        CUlibrary lib;
        CU_OK(cuLibraryLoadData(&lib, image, NULL, NULL, 0, NULL, NULL, 0));
        CUkernel k;
        CU_OK(cuLibraryGetKernel(&k, lib, "_Z5scalePff"));
        CU_OK(cuLibraryUnload(lib));
    }
    free(image);
    free(path);
    fab_test_rmtree(dir);
    free(dir);
}

static void nvcc_ptx_loads_and_launches(void **state)
{
    (void)state;
    static const char *const flags[] = {"-ptx", NULL};
    load_file_and_check(flags, "k.ptx", false, false);
}

static void nvcc_cubin_loads_and_launches(void **state)
{
    (void)state;
    static const char *const flags[] = {"-cubin", "-arch=sm_80", NULL};
    load_file_and_check(flags, "k.cubin", false, true);
}

static void nvcc_fatbin_loads_and_launches(void **state)
{
    (void)state;
    static const char *const flags[] = {"-fatbin", NULL};
    load_file_and_check(flags, "k.fatbin", true, false);
}

static void nvcc_compressed_fatbin_loads_and_launches(void **state)
{
    (void)state;
    static const char *const flags[] = {"-fatbin", "-Xfatbin", "-compress-all", NULL};
    load_file_and_check(flags, "kc.fatbin", true, false);
}

static void nvcc_uncompressed_fatbin_loads_and_launches(void **state)
{
    (void)state;
    static const char *const flags[] = {"-fatbin", "--no-compress", NULL};
    load_file_and_check(flags, "kn.fatbin", true, false);
}

static const struct CMUnitTest tests[] = {
    cmocka_unit_test(nvcc_ptx_loads_and_launches),
    cmocka_unit_test(nvcc_cubin_loads_and_launches),
    cmocka_unit_test(nvcc_fatbin_loads_and_launches),
    cmocka_unit_test(nvcc_compressed_fatbin_loads_and_launches),
    cmocka_unit_test(nvcc_uncompressed_fatbin_loads_and_launches),
};

FAB_TEST_MAIN_NO_HELPERS("cuda", tests)
