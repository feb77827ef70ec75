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
#include "../fabric/daemon_harness.h"

extern char **environ;

#define PROLOGUE                                                                        \
    "#include <cstdio>\n"                                                               \
    "#include <cuda_runtime.h>\n"                                                       \
    "#define CHECK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) {"              \
    " printf(\"FAIL %s: %s\\n\", #x, cudaGetErrorName(e_)); return 1; } } while (0)\n" \
    "#define EXPECT(c) do { if (!(c)) { printf(\"FAIL %s\\n\", #c); return 1; } } while (0)\n"

/* A <<<>>> kernel on the legacy and on a created stream, a __device__
 * variable read and written by symbol and passed to the kernel by address,
 * device basics, and a kernel with no CPU implementation run from its PTX. */
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
    "    nowhere<<<1, 1>>>(d); CHECK(cudaGetLastError()); CHECK(cudaDeviceSynchronize());\n"
    "    int first = 0; CHECK(cudaMemcpy(&first, d, sizeof first, cudaMemcpyDeviceToHost));\n"
    "    EXPECT(first == 1);\n"
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

/* Streams and events in order: a kernel on one stream, an event, a second
 * stream waiting for it; timed events; then the error rules (the last
 * error kept until read, per call; names). */
static const char streams_source[] = PROLOGUE
    "#include <cstring>\n"
    "__global__ void add(int *p, int v, int n)\n"
    "{ int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) p[i] += v; }\n"
    "int main()\n"
    "{\n"
    "    int *d = 0; CHECK(cudaMalloc(&d, 64 * sizeof(int))); CHECK(cudaMemset(d, 0, 64 * sizeof(int)));\n"
    "    cudaStream_t s1, s2;\n"
    "    CHECK(cudaStreamCreateWithFlags(&s1, cudaStreamNonBlocking));\n"
    "    CHECK(cudaStreamCreateWithFlags(&s2, cudaStreamNonBlocking));\n"
    "    cudaEvent_t e, t0, t1; CHECK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));\n"
    "    CHECK(cudaEventCreate(&t0)); CHECK(cudaEventCreate(&t1));\n"
    "    CHECK(cudaEventRecord(t0, s1));\n"
    "    add<<<2, 32, 0, s1>>>(d, 1, 64); CHECK(cudaGetLastError());\n"
    "    CHECK(cudaEventRecord(e, s1));\n"
    "    CHECK(cudaStreamWaitEvent(s2, e, 0));\n"
    "    add<<<2, 32, 0, s2>>>(d, 2, 64); CHECK(cudaGetLastError());\n"
    "    int h[64]; CHECK(cudaMemcpyAsync(h, d, sizeof h, cudaMemcpyDeviceToHost, s2));\n"
    "    CHECK(cudaEventRecord(t1, s2));\n"
    "    CHECK(cudaStreamSynchronize(s2));\n"
    "    for (int i = 0; i < 64; i++) EXPECT(h[i] == 3);\n"
    "    CHECK(cudaEventSynchronize(t1)); EXPECT(cudaEventQuery(e) == cudaSuccess);\n"
    "    float ms = -1; CHECK(cudaEventElapsedTime(&ms, t0, t1)); EXPECT(ms >= 0);\n"
    "    EXPECT(cudaEventElapsedTime(&ms, e, t1) == cudaErrorInvalidResourceHandle);\n"
    "    EXPECT(cudaGetLastError() == cudaErrorInvalidResourceHandle);\n"
    "    EXPECT(cudaSetDevice(100000) == cudaErrorInvalidDevice);\n"
    "    EXPECT(cudaPeekAtLastError() == cudaErrorInvalidDevice);\n"
    "    EXPECT(cudaGetLastError() == cudaErrorInvalidDevice);\n"
    "    EXPECT(cudaGetLastError() == cudaSuccess);\n"
    "    EXPECT(strcmp(cudaGetErrorName(cudaErrorInvalidDevice), \"cudaErrorInvalidDevice\") == 0);\n"
    "    CHECK(cudaStreamDestroy(s1)); CHECK(cudaStreamDestroy(s2)); CHECK(cudaFree(d));\n"
    "    printf(\"OK\\n\"); return 0;\n"
    "}\n";

/* What a program needs to run itself again as a second process: the 64
 * bytes of a handle in hex on the command line, and the child's status. */
#define SPAWN_SELF                                                                        \
    "#include <cstdlib>\n#include <cstring>\n#include <spawn.h>\n#include <sys/wait.h>\n"  \
    "extern char **environ;\n"                                                              \
    "static void hex(const void *in, char *out)\n"                                         \
    "{ for (int i = 0; i < 64; i++) sprintf(out + 2 * i, \"%02x\", ((const unsigned char *)in)[i]); }\n" \
    "static void unhex(const char *in, void *out)\n"                                       \
    "{ for (int i = 0; i < 64; i++) { unsigned v; sscanf(in + 2 * i, \"%2x\", &v);"        \
    " ((unsigned char *)out)[i] = (unsigned char)v; } }\n"                                  \
    "static int spawn_self(const char *self, const char *arg)\n"                           \
    "{ const char *argv[] = {self, \"child\", arg, 0}; pid_t pid;\n"                       \
    "  if (posix_spawn(&pid, self, 0, 0, (char *const *)argv, environ) != 0) return -1;\n" \
    "  int st = 0; if (waitpid(pid, &st, 0) != pid) return -1;\n"                          \
    "  return WIFEXITED(st) ? WEXITSTATUS(st) : -1; }\n"

/* PyTorch's way of sharing a tensor: cudaIpcGetMemHandle in one process,
 * cudaIpcOpenMemHandle in another, and both see the same bytes. */
static const char ipc_source[] = PROLOGUE SPAWN_SELF
    "static int child(const char *arg)\n"
    "{\n"
    "    cudaIpcMemHandle_t h; unhex(arg, h.reserved);\n"
    "    void *p = 0; CHECK(cudaIpcOpenMemHandle(&p, h, cudaIpcMemLazyEnablePeerAccess));\n"
    "    unsigned char b = 0; CHECK(cudaMemcpy(&b, p, 1, cudaMemcpyDeviceToHost)); EXPECT(b == 42);\n"
    "    CHECK(cudaMemset((char *)p + 1, 43, 1)); CHECK(cudaDeviceSynchronize());\n"
    "    CHECK(cudaIpcCloseMemHandle(p)); return 0;\n"
    "}\n"
    "int main(int argc, char **argv)\n"
    "{\n"
    "    if (argc == 3) return child(argv[2]);\n"
    "    void *p = 0; CHECK(cudaMalloc(&p, 1 << 20)); CHECK(cudaMemset(p, 42, 1));\n"
    "    CHECK(cudaDeviceSynchronize());\n"
    "    cudaIpcMemHandle_t h; CHECK(cudaIpcGetMemHandle(&h, p));\n"
    "    void *q = 0; /* not in the process that made it */\n"
    "    EXPECT(cudaIpcOpenMemHandle(&q, h, cudaIpcMemLazyEnablePeerAccess) == cudaErrorDeviceUninitialized);\n"
    "    EXPECT(cudaGetLastError() == cudaErrorDeviceUninitialized);\n"
    "    char arg[129]; hex(h.reserved, arg);\n"
    "    EXPECT(spawn_self(argv[0], arg) == 0);\n"
    "    unsigned char b = 0; CHECK(cudaMemcpy(&b, (char *)p + 1, 1, cudaMemcpyDeviceToHost));\n"
    "    EXPECT(b == 43); CHECK(cudaFree(p));\n"
    "    printf(\"OK\\n\"); return 0;\n"
    "}\n";

/* UCX's and PyTorch's way of sharing stream-ordered memory: a pool made
 * for POSIX_FD sharing, cudaMallocFromPoolAsync, the pool's fd inherited by
 * a second process and the pointer's export data passed in hex; the second
 * process imports both and writes the same bytes. */
static const char pool_source[] = PROLOGUE SPAWN_SELF
    "#include <fcntl.h>\n"
    "static int child(const char *arg)\n"
    "{\n"
    "    CHECK(cudaSetDevice(0));\n"
    "    int fd = atoi(arg); const char *hexdata = strchr(arg, ':'); EXPECT(hexdata);\n"
    "    cudaMemPoolPtrExportData data; unhex(hexdata + 1, data.reserved);\n"
    "    cudaMemPool_t pool;\n"
    "    CHECK(cudaMemPoolImportFromShareableHandle(&pool, (void *)(long)fd,"
    " cudaMemHandleTypePosixFileDescriptor, 0));\n"
    "    void *p = 0; CHECK(cudaMemPoolImportPointer(&p, pool, &data));\n"
    "    unsigned char b = 0; CHECK(cudaMemcpy(&b, p, 1, cudaMemcpyDeviceToHost)); EXPECT(b == 42);\n"
    "    CHECK(cudaMemset((char *)p + 1, 43, 1)); CHECK(cudaDeviceSynchronize());\n"
    "    CHECK(cudaFree(p)); return 0;\n"
    "}\n"
    "int main(int argc, char **argv)\n"
    "{\n"
    "    if (argc == 3) return child(argv[2]);\n"
    "    CHECK(cudaSetDevice(0));\n"
    "    cudaMemPoolProps props = {}; props.allocType = cudaMemAllocationTypePinned;\n"
    "    props.handleTypes = cudaMemHandleTypePosixFileDescriptor;\n"
    "    props.location.type = cudaMemLocationTypeDevice; props.location.id = 0;\n"
    "    cudaMemPool_t pool; CHECK(cudaMemPoolCreate(&pool, &props));\n"
    "    cudaStream_t s; CHECK(cudaStreamCreate(&s));\n"
    "    void *p = 0; CHECK(cudaMallocFromPoolAsync(&p, 1 << 20, pool, s));\n"
    "    CHECK(cudaMemsetAsync(p, 42, 1, s)); CHECK(cudaStreamSynchronize(s));\n"
    "    int fd = -1; CHECK(cudaMemPoolExportToShareableHandle(&fd, pool,"
    " cudaMemHandleTypePosixFileDescriptor, 0));\n"
    "    EXPECT(fcntl(fd, F_SETFD, 0) == 0); /* the second process inherits it */\n"
    "    cudaMemPoolPtrExportData data; CHECK(cudaMemPoolExportPointer(&data, p));\n"
    "    char arg[160]; int n = snprintf(arg, sizeof arg, \"%d:\", fd); hex(data.reserved, arg + n);\n"
    "    EXPECT(spawn_self(argv[0], arg) == 0);\n"
    "    unsigned char b = 0; CHECK(cudaMemcpy(&b, (char *)p + 1, 1, cudaMemcpyDeviceToHost));\n"
    "    EXPECT(b == 43);\n"
    "    CHECK(cudaFreeAsync(p, s)); CHECK(cudaStreamSynchronize(s)); CHECK(cudaMemPoolDestroy(pool));\n"
    "    printf(\"OK\\n\"); return 0;\n"
    "}\n";

/* NCCL's multi-node NVLink path from a runtime program: cudaGetDriverEntryPoint
 * to the VMM calls, a FABRIC allocation made on tray00, its handle passed to
 * a process on tray01 (FABMEM_NODE) that imports, maps and writes it. */
static const char fabric_source[] = PROLOGUE SPAWN_SELF
    "#include <cuda.h>\n"
    "#define GET(name) decltype(&name) name##_p; do { void *p_ = 0; cudaDriverEntryPointQueryResult q_;"
    " CHECK(cudaGetDriverEntryPointByVersion(#name, &p_, 12000, cudaEnableDefault, &q_));"
    " EXPECT(q_ == cudaDriverEntryPointSuccess && p_); name##_p = (decltype(&name))p_; } while (0)\n"
    "#define CU(x) EXPECT((x) == CUDA_SUCCESS)\n"
    "static const size_t SIZE = 2 << 20;\n"
    "static int map(CUmemGenericAllocationHandle h, CUdeviceptr *va)\n"
    "{\n"
    "    GET(cuMemAddressReserve); GET(cuMemMap); GET(cuMemSetAccess);\n"
    "    CU(cuMemAddressReserve_p(va, SIZE, 0, 0, 0)); CU(cuMemMap_p(*va, SIZE, 0, h, 0));\n"
    "    CUmemAccessDesc acc = {}; acc.location.type = CU_MEM_LOCATION_TYPE_DEVICE;\n"
    "    acc.location.id = 0; acc.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;\n"
    "    CU(cuMemSetAccess_p(*va, SIZE, &acc, 1)); return 0;\n"
    "}\n"
    "static int child(const char *arg)\n"
    "{\n"
    "    CHECK(cudaSetDevice(0)); GET(cuMemImportFromShareableHandle);\n"
    "    CUmemFabricHandle fh; unhex(arg, fh.data);\n"
    "    CUmemGenericAllocationHandle h;\n"
    "    CU(cuMemImportFromShareableHandle_p(&h, &fh, CU_MEM_HANDLE_TYPE_FABRIC));\n"
    "    CUdeviceptr va = 0; if (map(h, &va) != 0) return 1;\n"
    "    unsigned char b = 0; CHECK(cudaMemcpy(&b, (void *)va, 1, cudaMemcpyDeviceToHost)); EXPECT(b == 7);\n"
    "    CHECK(cudaMemset((char *)va + 1, 8, 1)); CHECK(cudaDeviceSynchronize()); return 0;\n"
    "}\n"
    "int main(int argc, char **argv)\n"
    "{\n"
    "    if (argc == 3) return child(argv[2]);\n"
    "    CHECK(cudaSetDevice(0)); GET(cuMemCreate); GET(cuMemExportToShareableHandle);\n"
    "    GET(cuDeviceGetAttribute); int fabric = 0;\n"
    "    CU(cuDeviceGetAttribute_p(&fabric, CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_FABRIC_SUPPORTED, 0));\n"
    "    EXPECT(fabric == 1);\n"
    "    CUmemAllocationProp prop = {}; prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;\n"
    "    prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE; prop.location.id = 0;\n"
    "    prop.requestedHandleTypes = CU_MEM_HANDLE_TYPE_FABRIC;\n"
    "    CUmemGenericAllocationHandle h; CU(cuMemCreate_p(&h, SIZE, &prop, 0));\n"
    "    CUdeviceptr va = 0; if (map(h, &va) != 0) return 1;\n"
    "    CHECK(cudaMemset((void *)va, 7, 1)); CHECK(cudaDeviceSynchronize());\n"
    "    CUmemFabricHandle fh; CU(cuMemExportToShareableHandle_p(&fh, h, CU_MEM_HANDLE_TYPE_FABRIC, 0));\n"
    "    char arg[129]; hex(fh.data, arg);\n"
    "    setenv(\"FABMEM_NODE\", \"tray01\", 1);\n"
    "    EXPECT(spawn_self(argv[0], arg) == 0);\n"
    "    unsigned char b = 0; CHECK(cudaMemcpy(&b, (char *)va + 1, 1, cudaMemcpyDeviceToHost));\n"
    "    EXPECT(b == 8);\n"
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

/* Build source with nvcc (flags, up to 6, then the runtime), run it on
 * fabmem, and return its exit status with its output in *out_text
 * (malloc'd). */
static int build_and_run_with(const char *source, const char *const *flags, const char *runtime,
                              char **out_text)
{
    const char *nvcc = nvcc_path();
    if (access(nvcc, X_OK) != 0) {
        fprintf(stderr, "SKIPPED: no nvcc at %s (set FABMEM_NVCC to another)\n", nvcc);
        fab_test_skip("no nvcc");
    }
    char *dir = fab_test_tempdir();
    assert_non_null(dir);
    char src[512], exe[512], log[512];
    snprintf(src, sizeof src, "%s/prog.cu", dir);
    snprintf(exe, sizeof exe, "%s/prog", dir);
    snprintf(log, sizeof log, "%s/out.txt", dir);
    fab_test_write_file(src, source);
    const char *build[16] = {nvcc};
    size_t nb = 1;
    for (size_t i = 0; flags && flags[i] && i < 6; i++)
        build[nb++] = flags[i];
    const char *tail[] = {"-cudart", runtime, "-o", exe, src, NULL};
    for (size_t i = 0; i < sizeof tail / sizeof tail[0]; i++)
        build[nb++] = tail[i];
    int rc = run(build, NULL, log);
    if (rc != 0) {
        char *text = slurp(log);
        fprintf(stderr, "nvcc failed:\n%s\n", text);
        free(text);
    }
    assert_int_equal(rc, 0);
    char libpath[1024], kernels[1024];
    snprintf(libpath, sizeof libpath, "LD_LIBRARY_PATH=%s", FAB_TEST_LIBDIR);
    /* No plugin named: the kernels run as written, on the PTX engine. */
    snprintf(kernels, sizeof kernels, "FABMEM_KERNELS=%s", FAB_TEST_KERNELS);
    const char *env[4] = {libpath};
    size_t nenv = 1;
    if (FAB_TEST_KERNELS[0])
        env[nenv++] = kernels;
#ifdef FAB_TEST_PRELOAD
    env[nenv++] = "LD_PRELOAD=" FAB_TEST_PRELOAD;
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

static int build_and_run(const char *source, const char *runtime, char **out_text)
{
    return build_and_run_with(source, NULL, runtime, out_text);
}

/* A static kernel (internal linkage: a LOCAL symbol of the cubin) in a
 * build with cubins only, launched and found by symbol, as NCCL's one-rank
 * kernels are. */
static const char static_kernel_source[] = PROLOGUE
    "static __global__ void hidden_set(int *p, int v) { p[0] = v; }\n"
    "int main()\n"
    "{\n"
    "    int *d = 0, h = 0; CHECK(cudaMalloc(&d, sizeof h));\n"
    "    hidden_set<<<1, 1>>>(d, 77); CHECK(cudaGetLastError());\n"
    "    CHECK(cudaMemcpy(&h, d, sizeof h, cudaMemcpyDeviceToHost)); EXPECT(h == 77);\n"
    "    cudaFunction_t f = 0; CHECK(cudaGetFuncBySymbol(&f, (const void *)hidden_set)); EXPECT(f);\n"
    "    CHECK(cudaFree(d));\n"
    "    printf(\"OK\\n\"); return 0;\n"
    "}\n";

/* A -rdc=true build with PTX only: nvlink cannot link PTX, so the linked
 * fatbin of nvcc's version-2 wrapper is empty and the code is in the
 * prelinked one. */
static const char rdc_source[] = PROLOGUE
    "__device__ int twice(int x) { return 2 * x; }\n"
    "__global__ void rdc_add(int *p, int v) { p[0] += twice(v); }\n"
    "int main()\n"
    "{\n"
    "    int *d = 0, h = 1; CHECK(cudaMalloc(&d, sizeof h));\n"
    "    CHECK(cudaMemcpy(d, &h, sizeof h, cudaMemcpyHostToDevice));\n"
    "    rdc_add<<<1, 1>>>(d, 20); CHECK(cudaGetLastError());\n"
    "    CHECK(cudaMemcpy(&h, d, sizeof h, cudaMemcpyDeviceToHost)); EXPECT(h == 41);\n"
    "    CHECK(cudaFree(d));\n"
    "    printf(\"OK\\n\"); return 0;\n"
    "}\n";

static void nvcc_static_kernel_of_a_cubin_only_build_runs(void **state)
{
    (void)state;
    /* As written, there must be PTX to run: the same build keeps it. */
    const char *flags[] = {"-gencode",
                           FAB_TEST_KERNELS[0] ? "arch=compute_90,code=sm_90"
                                               : "arch=compute_90,code=[compute_90,sm_90]",
                           NULL};
    char *out = NULL;
    assert_int_equal(build_and_run_with(static_kernel_source, flags, "shared", &out), 0);
    assert_non_null(strstr(out, "OK\n"));
    free(out);
}

static void nvcc_rdc_build_with_ptx_only_runs_from_its_prelinked_image(void **state)
{
    (void)state;
    const char *flags[] = {"-rdc=true", "-gencode", "arch=compute_90,code=compute_90", NULL};
    char *out = NULL;
    assert_int_equal(build_and_run_with(rdc_source, flags, "shared", &out), 0);
    assert_non_null(strstr(out, "OK\n"));
    free(out);
}

static void nvcc_kernel_and_device_variable_run_on_the_cpu(void **state)
{
    (void)state;
    char *out = NULL;
    assert_int_equal(build_and_run(kernel_source, "shared", &out), 0);
    assert_non_null(strstr(out, "OK\n"));
    free(out);
}

/* Built with SASS only (no PTX kept), a kernel cannot run: its launch fails
 * with cudaErrorNoKernelImageForDevice and the log names the nvcc flag that
 * keeps PTX. */
static const char sass_only_source[] = PROLOGUE
    "__global__ void only_sass(int *p) { p[0] = 1; }\n"
    "int main()\n"
    "{\n"
    "    int *d = 0; CHECK(cudaMalloc(&d, sizeof(int)));\n"
    "    only_sass<<<1, 1>>>(d);\n"
    "    EXPECT(cudaGetLastError() == cudaErrorNoKernelImageForDevice);\n"
    "    CHECK(cudaFree(d));\n"
    "    printf(\"OK\\n\"); return 0;\n"
    "}\n";

static void nvcc_sass_only_kernel_is_refused_with_the_flag_that_keeps_ptx(void **state)
{
    (void)state;
    char *out = NULL;
    const char *flags[] = {"-gencode", "arch=compute_90,code=sm_90", NULL};
    assert_int_equal(build_and_run_with(sass_only_source, flags, "shared", &out), 0);
    assert_non_null(strstr(out, "OK\n"));
    assert_non_null(strstr(out, "code=compute_90"));
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

static void nvcc_streams_events_and_errors_keep_cuda_order(void **state)
{
    (void)state;
    char *out = NULL;
    assert_int_equal(build_and_run(streams_source, "shared", &out), 0);
    assert_non_null(strstr(out, "OK\n"));
    free(out);
}

static void nvcc_ipc_handle_shares_memory_with_another_process(void **state)
{
    (void)state;
    assert_non_null(fab_test_daemon_start(NULL, NULL));
    char *out = NULL;
    assert_int_equal(build_and_run(ipc_source, "shared", &out), 0);
    assert_non_null(strstr(out, "OK\n"));
    free(out);
}

static void nvcc_malloc_async_pool_is_shared_with_another_process(void **state)
{
    (void)state;
    char *out = NULL;
    assert_int_equal(build_and_run(pool_source, "shared", &out), 0);
    assert_non_null(strstr(out, "OK\n"));
    free(out);
}

static void nvcc_fabric_memory_moves_between_two_trays(void **state)
{
    (void)state;
    assert_non_null(fab_test_daemon_start(fab_test_example_config_for_me("nvl72.ini"), NULL));
    setenv("FABMEM_NODE", "tray00", 1);
    char *out = NULL;
    assert_int_equal(build_and_run(fabric_source, "shared", &out), 0);
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
    cmocka_unit_test(nvcc_sass_only_kernel_is_refused_with_the_flag_that_keeps_ptx),
    cmocka_unit_test(nvcc_driver_entry_point_reaches_cu_mem_create),
    cmocka_unit_test(nvcc_streams_events_and_errors_keep_cuda_order),
    cmocka_unit_test_teardown(nvcc_ipc_handle_shares_memory_with_another_process,
                              fab_test_teardown),
    cmocka_unit_test_teardown(nvcc_fabric_memory_moves_between_two_trays, fab_test_teardown),
    cmocka_unit_test(nvcc_malloc_async_pool_is_shared_with_another_process),
    cmocka_unit_test(nvcc_static_runtime_is_refused_with_advice),
    cmocka_unit_test(nvcc_static_kernel_of_a_cubin_only_build_runs),
    cmocka_unit_test(nvcc_rdc_build_with_ptx_only_runs_from_its_prelinked_image),
};

FAB_TEST_MAIN_NO_HELPERS("cudart", tests)
