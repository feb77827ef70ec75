/* A module's PTX program: which of an image's PTX texts the PTX engine
 * (src/ptx) runs for a device, the memory of the program's variables, and
 * the run of one launch of one of its kernels as stream work.
 *
 * Choosing the texts: an image may hold PTX for several architectures (a
 * fatbin with -gencode for compute_80 and compute_90, say). As the driver
 * JIT-compiles the highest PTX that the device can run, the texts of the
 * highest architecture not above the device's compute capability are
 * taken; bare PTX text (cuModuleLoadData of a string, arch 0) is always
 * eligible. All the texts of that architecture are linked into one program
 * (cuLinkComplete's images carry one text per input; .extern names resolve
 * across them).
 *
 * Lifecycle: fab__cu_program_build (parse, link, load, lay the variables
 * out in one block, initialise them) ─▶ launches (fab__cu_program_launch
 * copies the arguments, the stream runs the grid) ─▶ fab__cu_program_free
 * with the module. The variables' block is driver-owned device memory
 * (module.c registers it as vmm's owned range), so that cuModuleGetGlobal's
 * pointers work with every copy.
 *
 * Faults: a kernel that stops on an illegal address, a trap or an assert
 * makes its context's error sticky (device.h): every later
 * synchronisation and launch returns it, as on the driver. */
#include "src/cuda/state.h"
#include "src/cuda/device.h"
#include "src/cuda/check.h"
#include "src/cuda/stream.h"
#include "src/cuda/multicast.h"
#include "src/cuda/program.h"
#include "src/cuda/profile.h"
#include "src/fabric/client_mc.h"
#include "src/cuda/entry.h"

#include <stdio.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "src/common/log.h"

/* Variables start at multiples of this (or of their own, larger,
 * alignment), as the driver aligns allocations. */
#define FAB__CU_PROGRAM_ALIGN 256

struct fab__cu_program {
    fab__ptx_program_t *ptx;
    unsigned arch;
    void *mem; /* the variables' block, or NULL */
    size_t mem_len;
    uintptr_t *var_addr; /* one per fab__ptx_program_var */
    size_t nvars;
};

static CUresult fab__cu_from_ptx(fab__ptx_status_t s)
{
    switch (s) {
    case FAB__PTX_OK: return CUDA_SUCCESS;
    case FAB__PTX_E_SYNTAX:
    case FAB__PTX_E_UNSUPPORTED: return CUDA_ERROR_INVALID_PTX;
    case FAB__PTX_E_LINK: return CUDA_ERROR_INVALID_PTX;
    case FAB__PTX_E_NOMEM: return CUDA_ERROR_OUT_OF_MEMORY;
    case FAB__PTX_E_INVALID: return CUDA_ERROR_INVALID_VALUE;
    case FAB__PTX_E_FAULT: return CUDA_ERROR_ILLEGAL_ADDRESS;
    case FAB__PTX_E_MISALIGNED: return CUDA_ERROR_MISALIGNED_ADDRESS;
    case FAB__PTX_E_TRAP: return CUDA_ERROR_LAUNCH_FAILED;
    case FAB__PTX_E_ASSERT: return CUDA_ERROR_ASSERT;
    }
    return CUDA_ERROR_UNKNOWN;
}

/* The architecture whose texts run on a device of compute capability cc
 * (90 for 9.0): the highest not above it, bare text counting as any. 0
 * with *found false when none may run. */
static unsigned fab__cu_program_arch(const fab__cu_image_t *img, unsigned cc, bool *found)
{
    unsigned best = 0;
    *found = false;
    for (size_t i = 0; i < img->nptx; i++) {
        unsigned a = img->ptx[i].arch;
        if (a <= cc && (!*found || a > best)) {
            best = a;
            *found = true;
        }
    }
    return best;
}

static CUresult fab__cu_program_place(fab__cu_program_t *p)
{
    p->nvars = fab__ptx_program_nvars(p->ptx);
    if (p->nvars == 0)
        return CUDA_SUCCESS;
    if (!(p->var_addr = calloc(p->nvars, sizeof(*p->var_addr))))
        return CUDA_ERROR_OUT_OF_MEMORY;
    size_t total = 0;
    for (size_t i = 0; i < p->nvars; i++) {
        fab__ptx_var_info_t v;
        fab__ptx_program_var(p->ptx, i, &v);
        size_t align = v.align > FAB__CU_PROGRAM_ALIGN ? v.align : FAB__CU_PROGRAM_ALIGN;
        if (align & (align - 1))
            align = FAB__CU_PROGRAM_ALIGN;
        size_t size = v.size ? (size_t)v.size : 1;
        if (v.size > SIZE_MAX / 2 || total > SIZE_MAX / 2)
            return CUDA_ERROR_OUT_OF_MEMORY;
        total = (total + align - 1) & ~(align - 1);
        p->var_addr[i] = total; /* an offset until the block exists */
        total += size;
    }
    total = (total + FAB__CU_PROGRAM_ALIGN - 1) & ~(size_t)(FAB__CU_PROGRAM_ALIGN - 1);
    void *mem = mmap(NULL, total, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (mem == MAP_FAILED)
        return CUDA_ERROR_OUT_OF_MEMORY;
    p->mem = mem;
    p->mem_len = total;
    for (size_t i = 0; i < p->nvars; i++) {
        p->var_addr[i] += (uintptr_t)mem;
        fab__ptx_program_place(p->ptx, i, (void *)p->var_addr[i]);
    }
    for (size_t i = 0; i < p->nvars; i++)
        fab__ptx_program_init_var(p->ptx, i);
    return CUDA_SUCCESS;
}

CUresult fab__cu_program_build(const fab__cu_image_t *img, unsigned cc, fab__cu_program_t **out,
                               char *error, size_t error_len)
{
    *out = NULL;
    if (img->nptx == 0)
        return CUDA_SUCCESS;
    bool found;
    unsigned arch = fab__cu_program_arch(img, cc, &found);
    if (!found) {
        /* PTX only for newer devices: kernels fail at launch, as the
         * driver fails them (NO_BINARY_FOR_GPU), when no cubin runs either. */
        fab__log(FAB__LOG_INFO, "the image's PTX is for compute capabilities above %u.%u: none runs",
                 cc / 10, cc % 10);
        return CUDA_SUCCESS;
    }
    fab__cu_program_t *p = calloc(1, sizeof(*p));
    size_t n = 0;
    for (size_t i = 0; i < img->nptx; i++)
        n += img->ptx[i].arch == arch;
    fab__ptx_module_t **mods = calloc(n, sizeof(*mods));
    if (!p || !mods) {
        free(p);
        free(mods);
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
    p->arch = arch;
    fab__ptx_diag_t diag = {0};
    fab__ptx_status_t s = FAB__PTX_OK;
    size_t k = 0;
    for (size_t i = 0; i < img->nptx && s == FAB__PTX_OK; i++) {
        if (img->ptx[i].arch != arch)
            continue;
        s = fab__ptx_parse(img->ptx[i].text, img->ptx[i].len, &mods[k], &diag);
        if (s == FAB__PTX_OK)
            k++;
    }
    fab__ptx_module_t *linked = NULL;
    if (s == FAB__PTX_OK)
        s = fab__ptx_link((const fab__ptx_module_t *const *)mods, k, &linked, &diag);
    for (size_t i = 0; i < k; i++)
        fab__ptx_module_free(mods[i]);
    free(mods);
    if (s == FAB__PTX_OK && linked) {
        s = fab__ptx_program_load(linked, &p->ptx, &diag);
        if (s != FAB__PTX_OK)
            fab__ptx_module_free(linked);
    }
    CUresult r = fab__cu_from_ptx(s);
    if (r != CUDA_SUCCESS) {
        if (diag.line)
            snprintf(error, error_len, "PTX line %u: %s", (unsigned)diag.line, diag.msg);
        else
            snprintf(error, error_len, "PTX: %s", diag.msg);
        fab__cu_program_free(p);
        return r;
    }
    if (!p->ptx) { /* src/ptx/stub.c: no engine yet, so no program */
        fab__cu_program_free(p);
        return CUDA_SUCCESS;
    }
    if ((r = fab__cu_program_place(p)) != CUDA_SUCCESS) {
        snprintf(error, error_len, "out of memory for the module's variables");
        fab__cu_program_free(p);
        return r;
    }
    if ((r = fab__cu_profile_start(p->ptx)) != CUDA_SUCCESS) {
        snprintf(error, error_len, "out of memory for the module's PTX profile");
        fab__cu_program_free(p);
        return r;
    }
    *out = p;
    return CUDA_SUCCESS;
}

void fab__cu_program_free(fab__cu_program_t *p)
{
    if (!p)
        return;
    fab__cu_profile_end(p->ptx);
    if (p->mem)
        munmap(p->mem, p->mem_len);
    fab__ptx_program_free(p->ptx);
    free(p->var_addr);
    free(p);
}

void fab__cu_program_memory(const fab__cu_program_t *p, void **mem_out, size_t *len_out)
{
    *mem_out = p ? p->mem : NULL;
    *len_out = p ? p->mem_len : 0;
}

CUresult fab__cu_program_global(const fab__cu_program_t *p, const char *name, CUdeviceptr *dptr,
                                size_t *bytes)
{
    if (!p)
        return CUDA_ERROR_NOT_FOUND;
    /* A visible variable wins over an internal one of the same name (two
     * linked texts may each have a `$str`). */
    size_t hit = SIZE_MAX;
    for (size_t i = 0; i < p->nvars; i++) {
        fab__ptx_var_info_t v;
        fab__ptx_program_var(p->ptx, i, &v);
        if (strcmp(v.name, name) != 0)
            continue;
        if (hit == SIZE_MAX || v.linkage != FAB__PTX_L_INTERNAL)
            hit = i;
        if (v.linkage != FAB__PTX_L_INTERNAL)
            break;
    }
    if (hit == SIZE_MAX)
        return CUDA_ERROR_NOT_FOUND;
    fab__ptx_var_info_t v;
    fab__ptx_program_var(p->ptx, hit, &v);
    if (dptr)
        *dptr = (CUdeviceptr)p->var_addr[hit];
    if (bytes)
        *bytes = (size_t)v.size;
    return CUDA_SUCCESS;
}

size_t fab__cu_program_const_bytes(const fab__cu_program_t *p)
{
    size_t total = 0;
    for (size_t i = 0; p && i < p->nvars; i++) {
        fab__ptx_var_info_t v;
        fab__ptx_program_var(p->ptx, i, &v);
        if (v.space != FAB__PTX_S_CONST)
            continue;
        size_t align = v.align && !(v.align & (v.align - 1)) ? v.align : 1;
        total = (total + align - 1) & ~(align - 1);
        total += (size_t)v.size;
    }
    return total;
}

const fab__ptx_kernel_t *fab__cu_program_kernel(const fab__cu_program_t *p, const char *name)
{
    return p ? fab__ptx_program_kernel(p->ptx, name) : NULL;
}

/* ---- launches ------------------------------------------------------------------ */

typedef struct fab__cu_program_run {
    fab__ptx_launch_t launch;
    int device;
    CUcontext ctx;
    char *name;
    /* The packed arguments, copied at the launch. On a 16-byte boundary, as
     * the widest read of them is (ld.param.v2.b64, v4.b32 of a parameter
     * declared .align 16, as NCCL's argument struct is): the layout aligns
     * each parameter from this base, so a base 8 bytes off misaligns them. */
    _Alignas(16) unsigned char params[];
} fab__cu_program_run_t;
/* The record comes from calloc, whose blocks are aligned for max_align_t. */
_Static_assert(_Alignof(max_align_t) >= 16, "calloc's blocks hold a 16-byte-aligned params");

static void fab__cu_program_print(void *ctx, const char *text, size_t len)
{
    (void)ctx;
    flockfile(stdout);
    fwrite(text, 1, len, stdout);
    fflush(stdout);
    funlockfile(stdout);
}

static void fab__cu_program_log(void *ctx, const char *line)
{
    (void)ctx;
    fab__log(FAB__LOG_WARN, "%s", line);
}

/* multimem.* (docs/ptx.md): on a multicast mapping only. */
static bool fab__cu_program_mc_is(void *ctx, uintptr_t addr)
{
    (void)ctx;
    return fab__cu_mc_is(addr);
}

static size_t fab__cu_program_type_size(unsigned type)
{
    switch (type) {
    case FAB__PTX_T_B16: case FAB__PTX_T_U16: case FAB__PTX_T_S16: case FAB__PTX_T_F16:
    case FAB__PTX_T_BF16: return 2;
    case FAB__PTX_T_B64: case FAB__PTX_T_U64: case FAB__PTX_T_S64: case FAB__PTX_T_F64: return 8;
    case FAB__PTX_T_B8: case FAB__PTX_T_U8: case FAB__PTX_T_S8: return 1;
    default: return 4;
    }
}

/* The reductions the daemon makes over every bound buffer: 32-bit adds,
 * float or integer (two's complement makes .s32 and .u32 the same sum),
 * pairs of halves or bfloat16s, summed in float and rounded once (what
 * .acc::f32 asks; without it the hardware's precision between steps is its
 * own, and fabmem sums in float too), and the least or greatest .u64. Other
 * reductions stop the kernel with a line saying so. */
static int fab__cu_program_mc_ld_reduce(void *ctx, uintptr_t addr, unsigned type, unsigned op,
                                        void *out, size_t count)
{
    (void)ctx;
    uint32_t sum = 0;
    if (op == FAB__PTX_W_ADD) {
        switch (type) {
        case FAB__PTX_T_F32: sum = FAB__CLIENT_MC_SUM_F32; break;
        case FAB__PTX_T_U32: case FAB__PTX_T_S32: sum = FAB__CLIENT_MC_SUM_U32; break;
        case FAB__PTX_T_F16X2: sum = FAB__CLIENT_MC_SUM_F16X2; break;
        case FAB__PTX_T_BF16X2: sum = FAB__CLIENT_MC_SUM_BF16X2; break;
        default: break;
        }
    } else if ((op == FAB__PTX_W_MIN || op == FAB__PTX_W_MAX) &&
               (type == FAB__PTX_T_U64 || type == FAB__PTX_T_B64)) {
        /* NCCL's NVLS steps: every peer's step counter, the least (min.u64) */
        sum = op == FAB__PTX_W_MIN ? FAB__CLIENT_MC_MIN_U64 : FAB__CLIENT_MC_MAX_U64;
    }
    if (sum)
        return fab__cu_mc_reduce((const void *)addr, out, count, sum) == CUDA_SUCCESS
                   ? FAB__PTX_OK : FAB__PTX_E_FAULT;
    fab__log(FAB__LOG_ERROR, "multimem.ld_reduce%s%s: only .add of .f32, .u32, .s32, .f16x2 "
             "and .bf16x2, and .min and .max of .u64, are emulated", fab__ptx_word_name(op),
             fab__ptx_type_name(type));
    return FAB__PTX_E_TRAP;
}

/* A store through the multicast mapping (multimem.st, or an ordered st)
 * reaches every bound buffer, this process's and its peers', before the
 * instruction completes: the engine hands over a warp's run of consecutive
 * elements at once, and the daemon writes it (multicast.c). */
static int fab__cu_program_mc_st(void *ctx, uintptr_t addr, unsigned type, const void *in,
                                 size_t count)
{
    (void)ctx;
    return fab__cu_mc_write(addr, in, count * fab__cu_program_type_size(type), 0) == CUDA_SUCCESS
               ? FAB__PTX_OK : FAB__PTX_E_FAULT;
}

/* A reduction into every bound buffer, folded in by the daemon before the
 * instruction completes: .add of .u32, .s32, .u64, .f32, .f16x2 and
 * .bf16x2, and .min and .max of .u64. Others stop the kernel with a line
 * saying so. */
static int fab__cu_program_mc_red(void *ctx, uintptr_t addr, unsigned type, unsigned op,
                                  const void *in, size_t count)
{
    (void)ctx;
    uint32_t how = 0;
    if (op == FAB__PTX_W_ADD) {
        switch (type) {
        case FAB__PTX_T_F32: how = FAB__CLIENT_MC_SUM_F32; break;
        case FAB__PTX_T_U32: case FAB__PTX_T_S32: how = FAB__CLIENT_MC_SUM_U32; break;
        case FAB__PTX_T_U64: case FAB__PTX_T_S64: how = FAB__CLIENT_MC_SUM_U64; break;
        case FAB__PTX_T_F16X2: how = FAB__CLIENT_MC_SUM_F16X2; break;
        case FAB__PTX_T_BF16X2: how = FAB__CLIENT_MC_SUM_BF16X2; break;
        default: break;
        }
    } else if ((op == FAB__PTX_W_MIN || op == FAB__PTX_W_MAX) && type == FAB__PTX_T_U64) {
        how = op == FAB__PTX_W_MIN ? FAB__CLIENT_MC_MIN_U64 : FAB__CLIENT_MC_MAX_U64;
    }
    if (how)
        return fab__cu_mc_write(addr, in, count * fab__cu_program_type_size(type), how) ==
                       CUDA_SUCCESS
                   ? FAB__PTX_OK : FAB__PTX_E_FAULT;
    fab__log(FAB__LOG_ERROR, "multimem.red%s%s: only .add of .u32, .s32, .u64, .s64, .f32, "
             ".f16x2 and .bf16x2, and .min and .max of .u64, are emulated",
             fab__ptx_word_name(op), fab__ptx_type_name(type));
    return FAB__PTX_E_TRAP;
}

static const fab__ptx_host_t fab__cu_program_host = {
    .print = fab__cu_program_print,
    .log = fab__cu_program_log,
    .mc_is = fab__cu_program_mc_is,
    .mc_ld_reduce = fab__cu_program_mc_ld_reduce,
    .mc_st = fab__cu_program_mc_st,
    .mc_red = fab__cu_program_mc_red,
};

static void fab__cu_program_work(void *arg)
{
    fab__cu_program_run_t *run = arg;
    if (fab__cu_sticky(run->ctx) != CUDA_SUCCESS)
        return; /* the context is lost: later work does not run */
    fab__ptx_fault_t fault;
    memset(&fault, 0, sizeof(fault));
    fab__ptx_status_t s = fab__ptx_run(&run->launch, &fault);
    /* The end of a kernel is a synchronisation point for multicast stores,
     * as its completion is on a GPU. */
    fab__cu_mc_sync();
    if (s == FAB__PTX_OK)
        return;
    CUresult r = fab__cu_from_ptx(s);
    const char *rname = "CUDA_ERROR_UNKNOWN";
    cuGetErrorName(r, &rname);
    fab__log(FAB__LOG_ERROR, "kernel %s stopped (%s): %s", run->name, rname,
             fault.report[0] ? fault.report : "no report");
    if (s == FAB__PTX_E_FAULT || s == FAB__PTX_E_MISALIGNED)
        FAB__CU_CHECK(fab__cu_check_bad_range(fault.address, fault.size ? fault.size : 1, fault.write, r,
                                              run->name));
    fab__cu_sticky_set(run->ctx, r);
}

static void fab__cu_program_done(void *arg)
{
    fab__cu_program_run_t *run = arg;
    free(run->name);
    free(run);
}

CUresult fab__cu_program_launch(const fab__ptx_kernel_t *kernel, const char *name,
                                const fab__cu_program_args_t *a, CUstream stream, unsigned submit)
{
    fab__ptx_kernel_info_t info;
    fab__ptx_kernel_info(kernel, &info);
    fab__cu_program_run_t *run = calloc(1, sizeof(*run) + info.param_bytes);
    if (!run || !(run->name = strdup(name))) {
        free(run);
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
    if (a->arg_buffer) {
        /* the bytes given, the rest zero: NCCL passes the used part of a 4 KiB block */
        memcpy(run->params, a->arg_buffer,
               a->arg_buffer_size < info.param_bytes ? a->arg_buffer_size : info.param_bytes);
    } else {
        for (uint32_t i = 0; i < info.nparams; i++) {
            size_t off, size;
            fab__ptx_kernel_param(kernel, i, &off, &size);
            if (!a->params || !a->params[i]) {
                free(run->name);
                free(run);
                return CUDA_ERROR_INVALID_VALUE; /* an argument the kernel takes is missing */
            }
            memcpy(run->params + off, a->params[i], size);
        }
    }
    run->device = a->device;
    run->ctx = a->ctx;
    fab__ptx_launch_t *l = &run->launch;
    l->kernel = kernel;
    memcpy(l->grid, a->grid, sizeof(l->grid));
    memcpy(l->block, a->block, sizeof(l->block));
    memcpy(l->cluster, a->cluster, sizeof(l->cluster));
    l->dynamic_shared = a->shared_bytes;
    l->params = run->params;
    l->cooperative = a->cooperative;
    l->host = &fab__cu_program_host;
    l->watch_ms = a->watch_ms;
    l->device = (uint32_t)a->device;
    CUresult r = fab__cu_stream_submit(stream, submit, fab__cu_program_work, run,
                                       fab__cu_program_done);
    if (r != CUDA_SUCCESS)
        fab__cu_program_done(run);
    return r;
}
