/* Launches: cuLaunchKernel, cuLaunchKernelEx and cuLaunchCooperativeKernel
 * (and their per-thread-stream _ptsz names). A launch is checked as the
 * driver checks it, then runs one of two ways:
 *   - the kernel's PTX, on the PTX engine (program.c): the arguments are
 *     copied in the kernel's .param layout at the call, and the grid runs
 *     when its stream comes to it: the call returns before (asynchronous,
 *     as on a GPU);
 *   - a CPU implementation from a plugin (plugin.c; include/fabmem/kernel.h
 *     has the contract), which, when FABMEM_KERNELS gives one, takes the
 *     kernel's place: it is called with the whole grid, and the launch
 *     returns once it ran (its arguments' sizes are unknown, so
 *     kernelParams must stay valid while it runs).
 *
 * A launch's life: the entry point checks the context, the function, the
 * dimensions, the shared memory, the arguments and the stream under the read
 * lock, finds the implementation, and fills a fab__cu_launch_t; then, with no
 * lock held (the kernel may call the driver), it is submitted to the stream.
 *
 * A kernel with neither (an image with only SASS for it, which fabmem never
 * executes) fails the launch with CUDA_ERROR_NO_BINARY_FOR_GPU and one log
 * line naming the kernel (mangled and demangled) and the nvcc flag that
 * keeps PTX. A launch in a context that holds a sticky error (device.h)
 * returns that error. */
#include "src/cuda/state.h"
#include "src/cuda/device.h"
#include "src/cuda/multicast.h"
#include "src/cuda/plugin.h"
#include "src/cuda/module.h"
#include "src/cuda/launch.h"
#include "src/cuda/program.h"
#include "src/cuda/stream.h"
#include "src/cuda/entry.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "src/common/log.h"
#include "src/base/env.h"

/* More pairs than any extra array holds: a bound on walking one that lacks
 * its CU_LAUNCH_PARAM_END. */
#define FAB__CU_EXTRA_MAX 64

CUresult fab__cu_launch_run(const fab__cu_launch_t *launch)
{
    fab__log(FAB__LOG_DEBUG, "launch %s: grid %ux%ux%u, block %ux%ux%u, %zu shared bytes",
             launch->info.name, launch->info.grid.x, launch->info.grid.y, launch->info.grid.z,
             launch->info.block.x, launch->info.block.y, launch->info.block.z,
             launch->info.shared_bytes);
    launch->fn(&launch->info);
    /* The end of a kernel is a synchronisation point for multicast stores
     * (multicast.c), as the kernel's completion is on a GPU. */
    fab__cu_mc_sync();
    return CUDA_SUCCESS;
}

/* The extra array: CU_LAUNCH_PARAM_BUFFER_POINTER and _SIZE, each with its
 * value, then CU_LAUNCH_PARAM_END. As cuda.h documents it, a pointer without
 * a size has no effect, and a nonzero size without a pointer is an error. */
static CUresult fab__cu_launch_extra(void **extra, fab_launch_t *info)
{
    const void *buffer = NULL;
    bool have_ptr = false, have_size = false;
    size_t size = 0;
    for (int i = 0; i < FAB__CU_EXTRA_MAX * 2; i += 2) {
        uintptr_t key = (uintptr_t)extra[i];
        if (key == FAB_CU_LAUNCH_PARAM_END_AS_INT) {
            if (have_size && size != 0 && !have_ptr)
                return CUDA_ERROR_INVALID_VALUE;
            if (have_ptr && have_size) {
                info->arg_buffer = buffer;
                info->arg_buffer_size = size;
            }
            return CUDA_SUCCESS;
        }
        if (key == FAB_CU_LAUNCH_PARAM_BUFFER_POINTER_AS_INT) {
            buffer = extra[i + 1];
            have_ptr = true;
        } else if (key == FAB_CU_LAUNCH_PARAM_BUFFER_SIZE_AS_INT) {
            if (!extra[i + 1])
                return CUDA_ERROR_INVALID_VALUE;
            size = *(const size_t *)extra[i + 1];
            have_size = true;
        } else {
            return CUDA_ERROR_INVALID_VALUE;
        }
    }
    return CUDA_ERROR_INVALID_VALUE; /* no end marker */
}

/* Check a launch and prepare it; the implementation is found last, so that
 * every argument error is reported as the driver would before it. */
static CUresult fab__cu_launch_prepare(CUfunction f, const fab_dim3_t *grid, const fab_dim3_t *block,
                                       unsigned shared, CUstream stream, void **params,
                                       void **extra, bool cooperative, fab__cu_launch_t *out)
{
    FAB__CU_ENTER();
    int dev;
    FAB__CU_TRY(fab__cu_current_device(&dev));
    memset(out, 0, sizeof(*out));
    fab_launch_t *info = &out->info;
    int max_grid[3], max_block[3], max_threads = 0;
    fab__cu_fault_mute(1); /* the device's limits, not calls of the user's */
    cuDeviceGetAttribute(&max_grid[0], CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X, dev);
    cuDeviceGetAttribute(&max_grid[1], CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y, dev);
    cuDeviceGetAttribute(&max_grid[2], CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z, dev);
    cuDeviceGetAttribute(&max_block[0], CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X, dev);
    cuDeviceGetAttribute(&max_block[1], CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y, dev);
    cuDeviceGetAttribute(&max_block[2], CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z, dev);
    cuDeviceGetAttribute(&max_threads, CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK, dev);
    fab__cu_fault_mute(-1);

    CUresult r = CUDA_SUCCESS;
    fab__rw_rdlock(&fab__cu.lock);
    const fab__cu_function_t *fn = fab__cu_function_find(f);
    if (!fn) {
        r = CUDA_ERROR_INVALID_HANDLE;
        goto out;
    }
    if (fab__cu_function_device(fn) >= 0 && fab__cu_function_device(fn) != dev) {
        r = CUDA_ERROR_INVALID_HANDLE; /* a module of another device's context */
        goto out;
    }
    const unsigned g[3] = {grid->x, grid->y, grid->z}, b[3] = {block->x, block->y, block->z};
    for (int i = 0; i < 3; i++) {
        if (g[i] == 0 || g[i] > (unsigned)max_grid[i] || b[i] == 0 || b[i] > (unsigned)max_block[i]) {
            r = CUDA_ERROR_INVALID_VALUE;
            goto out;
        }
    }
    uint64_t threads = (uint64_t)b[0] * b[1] * b[2];
    if (threads > (uint64_t)max_threads || shared > (unsigned)fn->max_dynamic_shared) {
        fab__log(FAB__LOG_DEBUG, "launch %s: %llu threads (at most %d), %u shared bytes (at most %d: "
                 "CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES): INVALID_VALUE", fn->name,
                 (unsigned long long)threads, max_threads, shared, fn->max_dynamic_shared);
        r = CUDA_ERROR_INVALID_VALUE;
        goto out;
    }
    if (params && extra) {
        r = CUDA_ERROR_INVALID_VALUE; /* one way of passing arguments, not both */
        goto out;
    }
    if (extra && (r = fab__cu_launch_extra(extra, info)) != CUDA_SUCCESS)
        goto out;
    if ((r = fab__cu_stream_check(stream)) != CUDA_SUCCESS)
        goto out;
    if (cooperative) {
        uint64_t blocks = (uint64_t)g[0] * g[1] * g[2];
        uint64_t resident = (uint64_t)fab__cu_occupancy((int)threads, shared) *
                            (uint64_t)fab__cu.devices[dev].sm_count;
        if (blocks > resident) {
            r = CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE; /* all blocks must be resident at once */
            goto out;
        }
    }
    info->name = fn->name;
    info->grid = *grid;
    info->block = *block;
    info->shared_bytes = shared;
    info->stream = (void *)stream;
    info->params = params;
    info->extra = extra;
    info->cooperative = cooperative;
    info->device = dev;
    info->multicast = &fab__cu_mc_ops;
    out->fn = fab__cu_plugin_find(fn->name);
    out->ptx = fn->ptx;
    if (!out->fn && out->ptx && threads > 0) {
        fab__ptx_kernel_info_t k;
        fab__ptx_kernel_info(out->ptx, &k);
        if (threads > k.max_threads ||
            (k.reqntid[0] && (b[0] != k.reqntid[0] || b[1] != (k.reqntid[1] ? k.reqntid[1] : 1) ||
                              b[2] != (k.reqntid[2] ? k.reqntid[2] : 1)))) {
            fab__log(FAB__LOG_DEBUG, "launch %s: %llu threads, over its .maxntid %u or not its .reqntid: "
                     "INVALID_VALUE", fn->name, (unsigned long long)threads, k.max_threads);
            r = CUDA_ERROR_INVALID_VALUE; /* more threads than .maxntid, or not .reqntid */
            goto out;
        }
    }
    if (!out->fn && !out->ptx) {
        char demangled[512];
        int cc = fab__cu.devices[dev].compute_major * 10 + fab__cu.devices[dev].compute_minor;
        fab__cu_plugin_demangle(fn->name, demangled, sizeof(demangled));
        fab__log(FAB__LOG_ERROR,
                 "launch of kernel %s (%s): its image holds no PTX for it that compute "
                 "capability %d.%d runs, only SASS, which fabmem does not execute; build it with "
                 "PTX kept (nvcc -gencode arch=compute_%d,code=compute_%d, or %d-virtual in "
                 "CMAKE_CUDA_ARCHITECTURES), or give 'void fab_kernel_%s(const fab_launch_t *)' "
                 "in a library named by FABMEM_KERNELS",
                 fn->name, demangled, cc / 10, cc % 10, cc, cc, cc, fn->name);
        r = CUDA_ERROR_NO_BINARY_FOR_GPU;
    }
    if (r == CUDA_SUCCESS) {
        CUcontext ctx = NULL;
        (void)fab__cu_current_ctx(&ctx);
        r = fab__cu_sticky(ctx);
    }
out:
    fab__rw_unlock(&fab__cu.lock);
    return r;
}

/* FABMEM_KERNEL_WATCH_MS: after how long a kernel still running is logged
 * with its spinning warps (docs/ptx.md); 10 s by default, 0 never. */
static uint32_t fab__cu_launch_watch_ms(void)
{
    const char *v = getenv(FAB__ENV_KERNEL_WATCH_MS);
    if (!v || !*v)
        return 10000;
    char *end;
    unsigned long ms = strtoul(v, &end, 10);
    return *end == '\0' && ms <= UINT32_MAX ? (uint32_t)ms : 10000;
}

/* A launch as stream work: run in the stream's order, its result kept. */
typedef struct fab__cu_launch_work {
    const fab__cu_launch_t *launch;
    CUresult result;
} fab__cu_launch_work_t;

static void fab__cu_launch_work(void *arg)
{
    fab__cu_launch_work_t *w = arg;
    w->result = fab__cu_launch_run(w->launch);
}

static CUresult fab__cu_launch(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
                               unsigned by, unsigned bz, unsigned shared, CUstream stream,
                               void **params, void **extra, bool cooperative, unsigned submit)
{
    const fab_dim3_t grid = {gx, gy, gz}, block = {bx, by, bz};
    fab__cu_launch_t launch;
    FAB__CU_TRY(fab__cu_launch_prepare(f, &grid, &block, shared, stream, params, extra,
                                       cooperative, &launch));
    if (!launch.fn) {
        const fab_launch_t *i = &launch.info;
        fab__cu_program_args_t a = {
            .grid = {gx, gy, gz},
            .block = {bx, by, bz},
            .cluster = {launch.cluster[0], launch.cluster[1], launch.cluster[2]},
            .shared_bytes = shared,
            .params = params,
            .arg_buffer = i->arg_buffer,
            .arg_buffer_size = i->arg_buffer_size,
            .cooperative = cooperative,
            .device = i->device,
            .ctx = NULL,
            .watch_ms = fab__cu_launch_watch_ms(),
        };
        (void)fab__cu_current_ctx(&a.ctx);
        return fab__cu_program_launch(launch.ptx, i->name, &a, stream, submit);
    }
    /* In the stream's order, after the work queued before it; and the call
     * returns once the kernel ran (FAB__CU_SUBMIT_WAIT), since the driver
     * copies the arguments at launch and their sizes are not known here:
     * kernelParams must stay valid while the kernel runs. */
    fab__cu_launch_work_t work = {&launch, CUDA_SUCCESS};
    FAB__CU_TRY(fab__cu_stream_submit(stream, FAB__CU_SUBMIT_WAIT | submit, fab__cu_launch_work,
                                      &work, NULL));
    return work.result;
}

/* Each launch has two ABIs: the plain name, where a NULL stream is the
 * legacy default stream, and the _ptsz name (CUDA_API_PER_THREAD_DEFAULT_STREAM,
 * or cuGetProcAddress with the per-thread flag), where it is the calling
 * thread's own default stream, which does not wait for other streams. */
static CUresult fab__cu_launch_kernel(CUfunction f, unsigned int gridDimX, unsigned int gridDimY,
                                      unsigned int gridDimZ, unsigned int blockDimX,
                                      unsigned int blockDimY, unsigned int blockDimZ,
                                      unsigned int sharedMemBytes, CUstream hStream,
                                      void **kernelParams, void **extra, unsigned submit)
{
    return fab__cu_launch(f, gridDimX, gridDimY, gridDimZ, blockDimX, blockDimY, blockDimZ,
                          sharedMemBytes, hStream, kernelParams, extra, false, submit);
}

static CUresult fab__cu_launch_cooperative(CUfunction f, unsigned int gridDimX,
                                           unsigned int gridDimY, unsigned int gridDimZ,
                                           unsigned int blockDimX, unsigned int blockDimY,
                                           unsigned int blockDimZ, unsigned int sharedMemBytes,
                                           CUstream hStream, void **kernelParams, unsigned submit)
{
    return fab__cu_launch(f, gridDimX, gridDimY, gridDimZ, blockDimX, blockDimY, blockDimZ,
                          sharedMemBytes, hStream, kernelParams, NULL, true, submit);
}

static CUresult fab__cu_launch_ex(const CUlaunchConfig *config, CUfunction f, void **kernelParams,
                                  void **extra, unsigned submit)
{
    FAB__CU_ENTER();
    if (!config || (config->numAttrs > 0 && !config->attrs))
        return CUDA_ERROR_INVALID_VALUE;
    bool cooperative = false;
    for (unsigned i = 0; i < config->numAttrs; i++) {
        const CUlaunchAttribute *a = &config->attrs[i];
        if ((unsigned)a->id > FAB_CU_LAUNCH_ATTRIBUTE_LAST)
            return CUDA_ERROR_INVALID_VALUE;
        if (a->id == CU_LAUNCH_ATTRIBUTE_COOPERATIVE)
            cooperative = a->value.cooperative != 0;
    }
    return fab__cu_launch(f, config->gridDimX, config->gridDimY, config->gridDimZ,
                          config->blockDimX, config->blockDimY, config->blockDimZ,
                          config->sharedMemBytes, config->hStream, kernelParams, extra,
                          cooperative, submit);
}

CUresult cuLaunchKernel(CUfunction f, unsigned int gridDimX, unsigned int gridDimY,
                        unsigned int gridDimZ, unsigned int blockDimX, unsigned int blockDimY,
                        unsigned int blockDimZ, unsigned int sharedMemBytes, CUstream hStream,
                        void **kernelParams, void **extra)
{
    FAB__CU_FAULT();
    return fab__cu_launch_kernel(f, gridDimX, gridDimY, gridDimZ, blockDimX, blockDimY,
                                 blockDimZ, sharedMemBytes, hStream, kernelParams, extra, 0);
}

CUresult cuLaunchKernel_ptsz(CUfunction f, unsigned int gridDimX, unsigned int gridDimY,
                             unsigned int gridDimZ, unsigned int blockDimX, unsigned int blockDimY,
                             unsigned int blockDimZ, unsigned int sharedMemBytes,
                             CUstream hStream, void **kernelParams, void **extra)
{
    FAB__CU_FAULT();
    return fab__cu_launch_kernel(f, gridDimX, gridDimY, gridDimZ, blockDimX, blockDimY,
                                 blockDimZ, sharedMemBytes, hStream, kernelParams, extra,
                                 FAB__CU_SUBMIT_PER_THREAD);
}

CUresult cuLaunchCooperativeKernel(CUfunction f, unsigned int gridDimX, unsigned int gridDimY,
                                   unsigned int gridDimZ, unsigned int blockDimX,
                                   unsigned int blockDimY, unsigned int blockDimZ,
                                   unsigned int sharedMemBytes, CUstream hStream,
                                   void **kernelParams)
{
    FAB__CU_FAULT();
    return fab__cu_launch_cooperative(f, gridDimX, gridDimY, gridDimZ, blockDimX, blockDimY,
                                      blockDimZ, sharedMemBytes, hStream, kernelParams, 0);
}

CUresult cuLaunchCooperativeKernel_ptsz(CUfunction f, unsigned int gridDimX,
                                        unsigned int gridDimY, unsigned int gridDimZ,
                                        unsigned int blockDimX, unsigned int blockDimY,
                                        unsigned int blockDimZ, unsigned int sharedMemBytes,
                                        CUstream hStream, void **kernelParams)
{
    FAB__CU_FAULT();
    return fab__cu_launch_cooperative(f, gridDimX, gridDimY, gridDimZ, blockDimX, blockDimY,
                                      blockDimZ, sharedMemBytes, hStream, kernelParams,
                                      FAB__CU_SUBMIT_PER_THREAD);
}

CUresult cuLaunchKernelEx(const CUlaunchConfig *config, CUfunction f, void **kernelParams,
                          void **extra)
{
    FAB__CU_FAULT();
    return fab__cu_launch_ex(config, f, kernelParams, extra, 0);
}

CUresult cuLaunchKernelEx_ptsz(const CUlaunchConfig *config, CUfunction f, void **kernelParams,
                               void **extra)
{
    FAB__CU_FAULT();
    return fab__cu_launch_ex(config, f, kernelParams, extra, FAB__CU_SUBMIT_PER_THREAD);
}
