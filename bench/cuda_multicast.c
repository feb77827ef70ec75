/* What a multicast team's own stores and reductions cost (docs/cuda.md,
 * "Multicast"): two processes of one node, one device each, one FABRIC
 * object of one granule with both devices' memory bound. The parent times
 *
 *   sync idle:  cuCtxSynchronize with nothing stored since the last one
 *   store 4 B:  a 4-byte cuMemcpyHtoD through the multicast mapping, then
 *               cuCtxSynchronize (the store reaches both devices' copies)
 *   store all:  the whole granule stored through the mapping, then synchronised
 *   reduce:     a CPU kernel's reduce_add_u32 over the whole granule (both
 *               copies read), mc_sum of the test kernels
 *
 * and prints the median microseconds per operation of each, over rounds.
 * It needs a daemon, and the test kernels for the reduction: run it as
 *
 *   FABMEM_DAEMON=build/src/daemon/fabmemd FABMEM_SOCKET=/tmp/fab-b/fabmemd.sock \
 *   FABMEM_KERNELS=build/tests/cuda/libtest_cuda_kernels.so \
 *   build/bench/cuda_multicast [operations per round, default 2000] [rounds, default 5]
 *
 * (the socket's directory made with mode 0700 first; the default topology's
 * node0 has the fabric, the channel and two devices). */
#include <cuda.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bench_cuda.h"

static CUdeviceptr map_rw(CUmemGenericAllocationHandle h, size_t size, int dev)
{
    CUdeviceptr p = 0;
    CHECK(cuMemAddressReserve(&p, size, 0, 0, 0));
    CHECK(cuMemMap(p, size, 0, h, 0));
    CUmemAccessDesc d = {{CU_MEM_LOCATION_TYPE_DEVICE, dev}, CU_MEM_ACCESS_FLAGS_PROT_READWRITE};
    CHECK(cuMemSetAccess(p, size, &d, 1));
    return p;
}

/* Memory of dev, bound at offset 0 of mc; its multicast mapping in *mc_ptr. */
static CUmemGenericAllocationHandle bind_one(CUmemGenericAllocationHandle mc, int dev,
                                             size_t size, CUdeviceptr *mc_ptr)
{
    CUmemAllocationProp prop = device_prop(dev, CU_MEM_HANDLE_TYPE_FABRIC);
    CUmemGenericAllocationHandle mem;
    CHECK(cuMemCreate(&mem, size, &prop, 0));
    CHECK(cuMulticastBindMem(mc, 0, mem, 0, size, 0));
    *mc_ptr = map_rw(mc, size, dev);
    return mem;
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static const char ptx[] = ".version 8.0\n.target sm_90\n.address_size 64\n"
                          ".visible .entry mc_sum(.param .u64 out, .param .u64 mc,\n"
                          "                       .param .u32 n) { ret; }\n";

int main(int argc, char **argv)
{
    int ops = argc > 1 ? atoi(argv[1]) : 2000;
    int rounds = argc > 2 ? atoi(argv[2]) : 5;
    if (ops <= 0 || rounds <= 0 || rounds > 64)
        return 2;
    int to_child[2], to_parent[2];
    if (pipe(to_child) != 0 || pipe(to_parent) != 0)
        return 1;
    pid_t pid = fork();
    if (pid < 0)
        return 1;
    if (pid == 0) { /* the peer: device 1, imports, adds, binds, waits for the end */
        CUmemFabricHandle fh;
        if (read(to_child[0], fh.data, sizeof(fh.data)) != (ssize_t)sizeof(fh.data))
            _exit(3);
        CHECK(cuInit(0));
        CUcontext ctx;
        CHECK(cuDevicePrimaryCtxRetain(&ctx, 1));
        CHECK(cuCtxSetCurrent(ctx));
        CUmemGenericAllocationHandle mc;
        CHECK(cuMemImportFromShareableHandle(&mc, &fh, CU_MEM_HANDLE_TYPE_FABRIC));
        CHECK(cuMulticastAddDevice(mc, 1));
        size_t size = 0;
        CUmulticastObjectProp prop;
        memset(&prop, 0, sizeof(prop));
        CHECK(cuMulticastGetGranularity(&size, &prop, CU_MULTICAST_GRANULARITY_MINIMUM));
        CUdeviceptr mc_ptr;
        (void)bind_one(mc, 1, size, &mc_ptr);
        char c = 'b';
        if (write(to_parent[1], &c, 1) != 1 || read(to_child[0], &c, 1) != 1)
            _exit(4);
        _exit(0);
    }
    CHECK(cuInit(0));
    CUcontext ctx;
    CHECK(cuDevicePrimaryCtxRetain(&ctx, 0));
    CHECK(cuCtxSetCurrent(ctx));
    size_t size = 0;
    CUmulticastObjectProp prop;
    memset(&prop, 0, sizeof(prop));
    prop.numDevices = 2;
    prop.handleTypes = CU_MEM_HANDLE_TYPE_FABRIC;
    CHECK(cuMulticastGetGranularity(&size, &prop, CU_MULTICAST_GRANULARITY_MINIMUM));
    prop.size = size;
    CUmemGenericAllocationHandle mc;
    CHECK(cuMulticastCreate(&mc, &prop));
    CHECK(cuMulticastAddDevice(mc, 0));
    CUmemFabricHandle fh;
    CHECK(cuMemExportToShareableHandle(&fh, mc, CU_MEM_HANDLE_TYPE_FABRIC, 0));
    if (write(to_child[1], fh.data, sizeof(fh.data)) != (ssize_t)sizeof(fh.data))
        return 1;
    CUdeviceptr mc_ptr;
    (void)bind_one(mc, 0, size, &mc_ptr);
    char c;
    if (read(to_parent[0], &c, 1) != 1)
        return 1;

    CUmodule mod;
    CUfunction sum;
    CHECK(cuModuleLoadData(&mod, ptx));
    CHECK(cuModuleGetFunction(&sum, mod, "mc_sum"));
    CUmemAllocationProp op = device_prop(0, 0);
    CUmemGenericAllocationHandle oh;
    CHECK(cuMemCreate(&oh, 2 * size, &op, 0));
    CUdeviceptr out = map_rw(oh, 2 * size, 0);
    unsigned n = (unsigned)(size / 4);
    void *sum_params[] = {&out, &mc_ptr, &n};
    uint8_t *all = malloc(size);
    if (!all)
        return 1;

    const char *names[4] = {"sync idle", "store 4 B + sync", "store all + sync", "reduce all"};
    double t[4][64];
    for (int r = 0; r < rounds; r++) {
        for (int k = 0; k < 4; k++) {
            int count = k >= 2 ? (ops / 20 > 0 ? ops / 20 : 1) : ops; /* a granule is slow */
            double t0 = now_ns();
            for (int i = 0; i < count; i++) {
                uint32_t v = (uint32_t)(i + 1);
                if (k == 0) {
                    CHECK(cuCtxSynchronize());
                } else if (k == 1) {
                    CHECK(cuMemcpyHtoD(mc_ptr + 64, &v, sizeof(v)));
                    CHECK(cuCtxSynchronize());
                } else if (k == 2) {
                    memset(all, (int)(v & 0xff) | 1, size);
                    CHECK(cuMemcpyHtoD(mc_ptr, all, size));
                    CHECK(cuCtxSynchronize());
                } else {
                    CHECK(cuLaunchKernel(sum, 1, 1, 1, 1, 1, 1, 0, NULL, sum_params, NULL));
                }
            }
            t[k][r] = (now_ns() - t0) / count / 1000.0;
        }
    }
    uint32_t rc = 1;
    CHECK(cuMemcpyDtoH(&rc, out + 4 * (size_t)n, sizeof(rc)));
    if (rc != CUDA_SUCCESS) {
        fprintf(stderr, "reduce_add_u32 failed: %u\n", rc);
        return 1;
    }
    printf("multicast, 2 processes, %zu-byte object (median of %d rounds, us per operation)\n",
           size, rounds);
    for (int k = 0; k < 4; k++) {
        qsort(t[k], (size_t)rounds, sizeof(double), cmp);
        printf("  %-18s %10.2f\n", names[k], t[k][rounds / 2]);
    }
    c = 'e';
    if (write(to_child[1], &c, 1) != 1)
        return 1;
    int status = 0;
    waitpid(pid, &status, 0);
    free(all);
    return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : 1;
}
