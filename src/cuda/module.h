/* Modules, libraries and functions (module.c), as launches and the
 * functions' attributes (funcattr.c) need them: finding the function a
 * CUfunction (or a CUkernel cast to one) names, and its attributes. The
 * caller holds fab__cu.lock (for reading suffices), but for the check of
 * JIT options, which the linker (link.c) shares and which needs no lock. */
#ifndef FAB_CUDA_MODULE_H
#define FAB_CUDA_MODULE_H

#include "src/cuda/cuda_abi.h"
#include "src/ptx/ptx.h"

typedef struct fab__cu_function {
    const char *name;           /* the kernel's mangled name, owned by its module */
    struct fab__cu_module *module;
    int max_dynamic_shared;     /* CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES */
    int carveout;               /* CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT */
    int cluster[3];             /* CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_WIDTH/HEIGHT/DEPTH */
    int non_portable_cluster;   /* CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED */
    int cluster_policy;         /* CU_FUNC_ATTRIBUTE_CLUSTER_SCHEDULING_POLICY_PREFERENCE */
    CUfunc_cache cache;
    /* The kernel as the PTX engine runs it (program.h), or NULL when the
     * image holds no PTX of it that the device can run. */
    const fab__ptx_kernel_t *ptx;
} fab__cu_function_t;

/* The live function f names (a CUfunction, or a CUkernel passed as one), or
 * NULL. */
fab__cu_function_t *fab__cu_function_find(CUfunction f);

/* The device whose context loaded the function's module, or -1 for a
 * library's (context-independent) kernel. */
int fab__cu_function_device(const fab__cu_function_t *fn);

/* Bytes of the .const variables of the function's module (its PTX program's;
 * 0 for a plugin's or a cubin's kernel): CU_FUNC_ATTRIBUTE_CONST_SIZE_BYTES. */
size_t fab__cu_function_const_bytes(const fab__cu_function_t *fn);

/* The live library kernel a CUkernel names (its library's function object),
 * or NULL: a module's function is not a CUkernel. */
fab__cu_function_t *fab__cu_kernel_find(CUkernel kernel);

/* Blocks of block_size threads, each with dynamic_shared bytes, that fit on
 * one multiprocessor of a device (docs/cuda.md, "Occupancy"; funcattr.c); 0
 * when none. */
int fab__cu_occupancy(int block_size, size_t dynamic_shared);

/* JIT option arrays as the driver checks them, for loads and links alike:
 * given together, each a known one. CUDA_SUCCESS or CUDA_ERROR_INVALID_VALUE. */
CUresult fab__cu_jit_check(unsigned n, const CUjit_option *options, void **values);

#endif /* FAB_CUDA_MODULE_H */
