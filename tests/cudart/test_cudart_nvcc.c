/* Real CUDA programs, built at test time by NVIDIA's nvcc with the runtime
 * linked shared (-cudart shared), run on fabmem: LD_LIBRARY_PATH names the
 * build's lib/fabmem, where fabmem's libcudart.so.13 and libcuda.so.1 sit,
 * and FABMEM_KERNELS the CPU implementations of their kernels
 * (kernels_for_cudart.c). Each program checks itself and prints OK; the
 * test asserts its exit status and output. One more is built with nvcc's
 * default static runtime, which carries NVIDIA's runtime: it must fail with
 * the driver's log line saying how to run it. Skipped, saying so, where
 * nvcc is absent (FABMEM_NVCC names another). */
#include <fcntl.h>
#include <spawn.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fabtest.h"

extern char **environ;

#define PROLOGUE                                                                        \
    "#include <cstdio>\n"                                                               \
    "#include <cuda_runtime.h>\n"                                                       \
    "#define CHECK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) {"              \
    " printf(\"FAIL %s: %s\\n\", #x, cudaGetErrorName(e_)); return 1; } } while (0)\n" \
    "#define EXPECT(c) do { if (!(c)) { printf(\"FAIL %s\\n\", #c); return 1; } } while (0)\n"

/* A <<<>>> kernel on the legacy and on a created stream, a __device__
 * variable read and written by symbol and passed to the kernel by address,
 * device basics, and a kernel with no CPU implementation refused. */
static const char kernel_source[] = PROLOGUE
    "__device__ int factor = 3;\n"
    "__global__ void scale(int *p, const int *f, int n)\n"
    "{ int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) p[i] *= *f; }\n"
    "__global__ void nowhere(int *p) { p[0] = 1; }\n"
    "int main()\n"
    "{\n"
    "    int n = 0; CHECK(cudaGetDeviceCount(&n)); EXPECT(n >= 1);\n"
    "    cudaDeviceProp prop; CHECK(cudaGetDeviceProperties(&prop, 0)); EXPECT(prop.name[0]);\n"
    "    int init = 0; CHECK(cudaMemcpyFromSymbol(&init, factor, sizeof init)); EXPECT(init == 3);\n"
    "    int five = 5; CHECK(cudaMemcpyToSymbol(factor, &five, sizeof five));\n"
    "    int *f = 0; CHECK(cudaGetSymbolAddress((void **)&f, factor));\n"
    "    size_t size = 0; CHECK(cudaGetSymbolSize(&size, factor)); EXPECT(size == sizeof(int));\n"
    "    int h[64]; for (int i = 0; i < 64; i++) h[i] = i;\n"
    "    int *d = 0; CHECK(cudaMalloc(&d, sizeof h));\n"
    "    CHECK(cudaMemcpy(d, h, sizeof h, cudaMemcpyHostToDevice));\n"
    "    scale<<<2, 32>>>(d, f, 64); CHECK(cudaGetLastError());\n"
    "    CHECK(cudaDeviceSynchronize());\n"
    "    CHECK(cudaMemcpy(h, d, sizeof h, cudaMemcpyDeviceToHost));\n"
    "    for (int i = 0; i < 64; i++) EXPECT(h[i] == 5 * i);\n"
    "    cudaStream_t s; CHECK(cudaStreamCreate(&s));\n"
    "    scale<<<1, 64, 0, s>>>(d, f, 64); CHECK(cudaGetLastError());\n"
    "    CHECK(cudaMemcpyAsync(h, d, sizeof h, cudaMemcpyDeviceToHost, s));\n"
    "    CHECK(cudaStreamSynchronize(s));\n"
    "    for (int i = 0; i < 64; i++) EXPECT(h[i] == 25 * i);\n"
    "    cudaFuncAttributes attr; CHECK(cudaFuncGetAttributes(&attr, scale));\n"
    "    nowhere<<<1, 1>>>(d); EXPECT(cudaGetLastError() == cudaErrorNotSupported);\n"
    "    CHECK(cudaGetLastError());\n"
    "    CHECK(cudaStreamDestroy(s)); CHECK(cudaFree(d));\n"
    "    printf(\"OK\\n\"); return 0;\n"
    "}\n";

/* NCCL's and PyTorch's path to the VMM calls: cudaGetDriverEntryPoint, then
 * cuMemCreate and friends through the pointers it gave; the memory is then
 * used through the runtime. The program never links libcuda itself. */
static const char entry_source[] = PROLOGUE
    "#include <cuda.h>\n"
    "#define GET(name) do { void *p_ = 0; cudaDriverEntryPointQueryResult q_;"
    " CHECK(cudaGetDriverEntryPointByVersion(#name, &p_, 13000, cudaEnableDefault, &q_));"
    " EXPECT(q_ == cudaDriverEntryPointSuccess && p_); name##_p = (decltype(&name))p_; } while (0)\n"
    "int main()\n"
    "{\n"
    "    CHECK(cudaSetDevice(0));\n"
    "    decltype(&cuMemGetAllocationGranularity) cuMemGetAllocationGranularity_p;\n"
    "    decltype(&cuMemCreate) cuMemCreate_p; decltype(&cuMemAddressReserve) cuMemAddressReserve_p;\n"
    "    decltype(&cuMemMap) cuMemMap_p; decltype(&cuMemSetAccess) cuMemSetAccess_p;\n"
    "    GET(cuMemGetAllocationGranularity); GET(cuMemCreate); GET(cuMemAddressReserve);\n"
    "    GET(cuMemMap); GET(cuMemSetAccess);\n"
    "    CUmemAllocationProp prop = {};\n"
    "    prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;\n"
    "    prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE; prop.location.id = 0;\n"
    "    size_t g = 0;\n"
    "    EXPECT(cuMemGetAllocationGranularity_p(&g, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM) == 0);\n"
    "    CUmemGenericAllocationHandle h; EXPECT(cuMemCreate_p(&h, g, &prop, 0) == 0);\n"
    "    CUdeviceptr va; EXPECT(cuMemAddressReserve_p(&va, g, 0, 0, 0) == 0);\n"
    "    EXPECT(cuMemMap_p(va, g, 0, h, 0) == 0);\n"
    "    CUmemAccessDesc acc = {}; acc.location = prop.location;\n"
    "    acc.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;\n"
    "    EXPECT(cuMemSetAccess_p(va, g, &acc, 1) == 0);\n"
    "    CHECK(cudaMemset((void *)va, 0x5a, g));\n"
    "    unsigned char last = 0;\n"
    "    CHECK(cudaMemcpy(&last, (char *)va + g - 1, 1, cudaMemcpyDeviceToHost));\n"
    "    EXPECT(last == 0x5a);\n"
    "    printf(\"OK\\n\"); return 0;\n"
    "}\n";

static const char *nvcc_path(void)
{
    const char *p = getenv("FABMEM_NVCC");
    return p && *p ? p : "/usr/local/cuda/bin/nvcc";
}

/* Run argv with extra environment env (NULL-ended) and its stdout and
 * stderr into out; returns the exit status. */
static int run(const char *const *argv, const char *const *env, const char *out)
{
    size_t n = 0;
    while (environ[n])
        n++;
    const char **envp = calloc(n + 8, sizeof *envp);
    assert_non_null(envp);
    size_t k = 0;
    for (size_t i = 0; env && env[i]; i++)
        envp[k++] = env[i];
    for (size_t i = 0; i < n; i++) {
        bool replaced = false;
        for (size_t j = 0; env && env[j]; j++) {
            size_t len = strcspn(env[j], "=") + 1;
            if (strncmp(environ[i], env[j], len) == 0)
                replaced = true;
        }
        if (!replaced)
            envp[k++] = environ[i];
    }
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 1, out, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_adddup2(&fa, 1, 2);
    pid_t pid;
    assert_int_equal(posix_spawn(&pid, argv[0], &fa, NULL, (char *const *)argv,
                                 (char *const *)envp), 0);
    posix_spawn_file_actions_destroy(&fa);
    free(envp);
    int status = 0;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    char *buf = calloc(1, 65536);
    assert_non_null(buf);
    size_t got = fread(buf, 1, 65535, f);
    buf[got] = '\0';
    fclose(f);
    return buf;
}

/* Build source with nvcc (extra flags first), run it on fabmem, and return
 * its exit status with its output in *out_text (malloc'd). */
static int build_and_run(const char *source, const char *runtime, char **out_text)
{
    const char *nvcc = nvcc_path();
    if (access(nvcc, X_OK) != 0) {
        fprintf(stderr, "SKIPPED: no nvcc at %s (set FABMEM_NVCC to another)\n", nvcc);
        skip();
    }
    char *dir = fab_test_tempdir();
    assert_non_null(dir);
    char src[512], exe[512], log[512];
    snprintf(src, sizeof src, "%s/prog.cu", dir);
    snprintf(exe, sizeof exe, "%s/prog", dir);
    snprintf(log, sizeof log, "%s/out.txt", dir);
    fab_test_write_file(src, source);
    const char *build[] = {nvcc, "-cudart", runtime, "-o", exe, src, NULL};
    int rc = run(build, NULL, log);
    if (rc != 0) {
        char *text = slurp(log);
        fprintf(stderr, "nvcc failed:\n%s\n", text);
        free(text);
    }
    assert_int_equal(rc, 0);
    char libpath[1024], kernels[1024];
    snprintf(libpath, sizeof libpath, "LD_LIBRARY_PATH=%s", FAB_TEST_LIBDIR);
    snprintf(kernels, sizeof kernels, "FABMEM_KERNELS=%s", FAB_TEST_KERNELS);
#ifdef FAB_TEST_PRELOAD
    const char *env[] = {libpath, kernels, "LD_PRELOAD=" FAB_TEST_PRELOAD, NULL};
#else
    const char *env[] = {libpath, kernels, NULL};
#endif
    const char *prog[] = {exe, NULL};
    rc = run(prog, env, log);
    *out_text = slurp(log);
    /* The sanitizers' report, if any, is in the output the test prints. */
    fprintf(stderr, "program said:\n%s\n", *out_text);
    fab_test_rmtree(dir);
    free(dir);
    return rc;
}

static void nvcc_kernel_and_device_variable_run_on_the_cpu(void **state)
{
    (void)state;
    char *out = NULL;
    assert_int_equal(build_and_run(kernel_source, "shared", &out), 0);
    assert_non_null(strstr(out, "OK\n"));
    /* The refused launch named the function to write. */
    assert_non_null(strstr(out, "fab_kernel__Z7nowherePi"));
    free(out);
}

static void nvcc_driver_entry_point_reaches_cu_mem_create(void **state)
{
    (void)state;
    char *out = NULL;
    assert_int_equal(build_and_run(entry_source, "shared", &out), 0);
    assert_non_null(strstr(out, "OK\n"));
    free(out);
}

/* nvcc's default links NVIDIA's runtime statically: it asks the driver for
 * cuGetExportTable, which fabmem refuses, so its first call fails, and the
 * driver says once why and what to do. */
static void nvcc_static_runtime_is_refused_with_advice(void **state)
{
    (void)state;
    char *out = NULL;
    assert_int_not_equal(build_and_run(kernel_source, "static", &out), 0);
    const char *line = strstr(out, "carries NVIDIA's CUDA runtime");
    assert_non_null(line);
    assert_null(strstr(line + 1, "carries NVIDIA's CUDA runtime"));
    assert_non_null(strstr(out, "nvcc -cudart shared"));
    assert_non_null(strstr(out, "lib/fabmem"));
    free(out);
}

static const struct CMUnitTest tests[] = {
    cmocka_unit_test(nvcc_kernel_and_device_variable_run_on_the_cpu),
    cmocka_unit_test(nvcc_driver_entry_point_reaches_cu_mem_create),
    cmocka_unit_test(nvcc_static_runtime_is_refused_with_advice),
};

FAB_TEST_MAIN_NO_HELPERS("cudart", tests)
