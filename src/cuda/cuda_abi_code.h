/* The part of the CUDA driver ABI that code objects and launches speak
 * (modules, libraries, kernels, functions, launch configurations, JIT and
 * library options), declared fresh as cuda.h 13.0 defines them; included at
 * the end of cuda_abi.h, and written through FAB_CU(name) like it, so that
 * tests/cuda/test_cuda_abi_code.c can static-assert every value, size and
 * offset against NVIDIA's cuda.h. Nothing here has behaviour. */
#ifndef FAB_CUDA_ABI_CODE_H
#define FAB_CUDA_ABI_CODE_H

/* Opaque handles. */
typedef struct FAB_CU(CUmod_st) *FAB_CU(CUmodule);
typedef struct FAB_CU(CUfunc_st) *FAB_CU(CUfunction);
typedef struct FAB_CU(CUlib_st) *FAB_CU(CUlibrary);
typedef struct FAB_CU(CUkern_st) *FAB_CU(CUkernel);

#define FAB_CU_FUNC_ATTRIBUTE_LIST(XX)                              \
    XX(CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, 0)                  \
    XX(CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, 1)                      \
    XX(CU_FUNC_ATTRIBUTE_CONST_SIZE_BYTES, 2)                       \
    XX(CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES, 3)                       \
    XX(CU_FUNC_ATTRIBUTE_NUM_REGS, 4)                               \
    XX(CU_FUNC_ATTRIBUTE_PTX_VERSION, 5)                            \
    XX(CU_FUNC_ATTRIBUTE_BINARY_VERSION, 6)                         \
    XX(CU_FUNC_ATTRIBUTE_CACHE_MODE_CA, 7)                          \
    XX(CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, 8)          \
    XX(CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT, 9)       \
    XX(CU_FUNC_ATTRIBUTE_CLUSTER_SIZE_MUST_BE_SET, 10)              \
    XX(CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_WIDTH, 11)                \
    XX(CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_HEIGHT, 12)               \
    XX(CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_DEPTH, 13)                \
    XX(CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED, 14)     \
    XX(CU_FUNC_ATTRIBUTE_CLUSTER_SCHEDULING_POLICY_PREFERENCE, 15)
typedef enum FAB_CU(CUfunction_attribute_enum) {
    FAB_CU_FUNC_ATTRIBUTE_LIST(FAB__CU_ENUMERATOR)
    FAB_CU(CU_FUNC_ATTRIBUTE_MAX)
} FAB_CU(CUfunction_attribute);

#define FAB_CU_FUNC_CACHE_LIST(XX)          \
    XX(CU_FUNC_CACHE_PREFER_NONE, 0x00)     \
    XX(CU_FUNC_CACHE_PREFER_SHARED, 0x01)   \
    XX(CU_FUNC_CACHE_PREFER_L1, 0x02)       \
    XX(CU_FUNC_CACHE_PREFER_EQUAL, 0x03)
typedef enum FAB_CU(CUfunc_cache_enum) {
    FAB_CU_FUNC_CACHE_LIST(FAB__CU_ENUMERATOR)
} FAB_CU(CUfunc_cache);

#define FAB_CU_MODULE_LOADING_LIST(XX)   \
    XX(CU_MODULE_EAGER_LOADING, 0x1)     \
    XX(CU_MODULE_LAZY_LOADING, 0x2)
typedef enum FAB_CU(CUmoduleLoadingMode_enum) {
    FAB_CU_MODULE_LOADING_LIST(FAB__CU_ENUMERATOR)
} FAB_CU(CUmoduleLoadingMode);

/* The JIT options the emulation reads (the log buffers); any other below
 * CU_JIT_NUM_OPTIONS is accepted and has no effect, nothing being compiled. */
#define FAB_CU_JIT_OPTION_LIST(XX)                   \
    XX(CU_JIT_INFO_LOG_BUFFER, 3)                    \
    XX(CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES, 4)         \
    XX(CU_JIT_ERROR_LOG_BUFFER, 5)                   \
    XX(CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES, 6)        \
    XX(CU_JIT_NUM_OPTIONS, 35)
typedef enum FAB_CU(CUjit_option_enum) {
    FAB_CU_JIT_OPTION_LIST(FAB__CU_ENUMERATOR)
} FAB_CU(CUjit_option);

/* The inputs of cuLinkAddData / cuLinkAddFile. */
#define FAB_CU_JIT_INPUT_LIST(XX)        \
    XX(CU_JIT_INPUT_CUBIN, 0)            \
    XX(CU_JIT_INPUT_PTX, 1)              \
    XX(CU_JIT_INPUT_FATBINARY, 2)        \
    XX(CU_JIT_INPUT_OBJECT, 3)           \
    XX(CU_JIT_INPUT_LIBRARY, 4)          \
    XX(CU_JIT_INPUT_NVVM, 5)             \
    XX(CU_JIT_NUM_INPUT_TYPES, 6)
typedef enum FAB_CU(CUjitInputType_enum) {
    FAB_CU_JIT_INPUT_LIST(FAB__CU_ENUMERATOR)
} FAB_CU(CUjitInputType);
typedef struct FAB_CU(CUlinkState_st) *FAB_CU(CUlinkState);

#define FAB_CU_LIBRARY_OPTION_LIST(XX)                       \
    XX(CU_LIBRARY_HOST_UNIVERSAL_FUNCTION_AND_DATA_TABLE, 0) \
    XX(CU_LIBRARY_BINARY_IS_PRESERVED, 1)                    \
    XX(CU_LIBRARY_NUM_OPTIONS, 2)
typedef enum FAB_CU(CUlibraryOption_enum) {
    FAB_CU_LIBRARY_OPTION_LIST(FAB__CU_ENUMERATOR)
} FAB_CU(CUlibraryOption);

#define FAB_CU_OCCUPANCY_FLAGS_LIST(XX)               \
    XX(CU_OCCUPANCY_DEFAULT, 0x0)                     \
    XX(CU_OCCUPANCY_DISABLE_CACHING_OVERRIDE, 0x1)
typedef enum FAB_CU(CUoccupancy_flags_enum) {
    FAB_CU_OCCUPANCY_FLAGS_LIST(FAB__CU_ENUMERATOR)
} FAB_CU(CUoccupancy_flags);

/* The launch attributes the emulation reads (cooperative, cluster); the
 * others up to FAB_CU_LAUNCH_ATTRIBUTE_LAST are accepted and have no effect on
 * a CPU. */
#define FAB_CU_LAUNCH_ATTRIBUTE_LIST(XX)          \
    XX(CU_LAUNCH_ATTRIBUTE_IGNORE, 0)             \
    XX(CU_LAUNCH_ATTRIBUTE_COOPERATIVE, 2)        \
    XX(CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION, 4)
typedef enum FAB_CU(CUlaunchAttributeID_enum) {
    FAB_CU_LAUNCH_ATTRIBUTE_LIST(FAB__CU_ENUMERATOR)
    FAB_CU(CU_LAUNCH_ATTRIBUTE_NVLINK_UTIL_CENTRIC_SCHEDULING) = 16
} FAB_CU(CUlaunchAttributeID);
#define FAB_CU_LAUNCH_ATTRIBUTE_LAST 16

/* 64 bytes, aligned as its pointer-holding members align it; the members
 * the emulation reads. */
typedef union FAB_CU(CUlaunchAttributeValue_union) {
    char pad[64];
    void *fab_align_; /* not NVIDIA's: gives the union its alignment */
    int cooperative;
    struct {
        unsigned int x;
        unsigned int y;
        unsigned int z;
    } clusterDim;
} FAB_CU(CUlaunchAttributeValue);

typedef struct FAB_CU(CUlaunchAttribute_st) {
    FAB_CU(CUlaunchAttributeID) id;
    char pad[8 - sizeof(FAB_CU(CUlaunchAttributeID))];
    FAB_CU(CUlaunchAttributeValue) value;
} FAB_CU(CUlaunchAttribute);

typedef struct FAB_CU(CUlaunchConfig_st) {
    unsigned int gridDimX;
    unsigned int gridDimY;
    unsigned int gridDimZ;
    unsigned int blockDimX;
    unsigned int blockDimY;
    unsigned int blockDimZ;
    unsigned int sharedMemBytes;
    FAB_CU(CUstream) hStream;
    FAB_CU(CUlaunchAttribute) *attrs;
    unsigned int numAttrs;
} FAB_CU(CUlaunchConfig);

typedef size_t (*FAB_CU(CUoccupancyB2DSize))(int blockSize);

/* The markers of a launch's extra array (cuda.h spells them as pointers). */
#define FAB_CU_LAUNCH_PARAM_END_AS_INT 0x00
#define FAB_CU_LAUNCH_PARAM_BUFFER_POINTER_AS_INT 0x01
#define FAB_CU_LAUNCH_PARAM_BUFFER_SIZE_AS_INT 0x02

#endif /* FAB_CUDA_ABI_CODE_H */
