/* The code-object part of the emulation's ABI (src/cuda/cuda_abi_code.h)
 * against NVIDIA's cuda.h, as test_cuda_abi.c checks the rest: every value,
 * size and field offset is static-asserted equal, so a mismatch fails the
 * build. Built only where NVIDIA's cuda.h is installed. */
#include <cuda.h>
#include <stddef.h>

#define FAB_CU(name) abi_##name
#include "src/cuda/cuda_abi.h"

#include "fabtest.h"

#define SAME_VALUE(name, value)                                             \
    _Static_assert((long long)name == (long long)abi_##name, #name " differs"); \
    _Static_assert((long long)name == (long long)(value), #name " value");

FAB_CU_FUNC_ATTRIBUTE_LIST(SAME_VALUE)
FAB_CU_FUNC_CACHE_LIST(SAME_VALUE)
FAB_CU_SHARED_CONFIG_LIST(SAME_VALUE)
FAB_CU_MEM_ATTACH_LIST(SAME_VALUE)
FAB_CU_MODULE_LOADING_LIST(SAME_VALUE)
FAB_CU_JIT_OPTION_LIST(SAME_VALUE)
FAB_CU_LIBRARY_OPTION_LIST(SAME_VALUE)
FAB_CU_JIT_INPUT_LIST(SAME_VALUE)
FAB_CU_OCCUPANCY_FLAGS_LIST(SAME_VALUE)
FAB_CU_LAUNCH_ATTRIBUTE_LIST(SAME_VALUE)
SAME_VALUE(CU_LAUNCH_ATTRIBUTE_NVLINK_UTIL_CENTRIC_SCHEDULING, FAB_CU_LAUNCH_ATTRIBUTE_LAST)
SAME_VALUE(CU_FUNC_ATTRIBUTE_MAX, 16)
_Static_assert(CU_LAUNCH_PARAM_END_AS_INT == FAB_CU_LAUNCH_PARAM_END_AS_INT, "END");
_Static_assert(CU_LAUNCH_PARAM_BUFFER_POINTER_AS_INT == FAB_CU_LAUNCH_PARAM_BUFFER_POINTER_AS_INT,
               "BUFFER_POINTER");
_Static_assert(CU_LAUNCH_PARAM_BUFFER_SIZE_AS_INT == FAB_CU_LAUNCH_PARAM_BUFFER_SIZE_AS_INT,
               "BUFFER_SIZE");

#define SAME_TYPE(t) _Static_assert(sizeof(t) == sizeof(abi_##t) && \
                                    _Alignof(t) == _Alignof(abi_##t), #t " size/alignment")
#define SAME_FIELD(t, f) _Static_assert(offsetof(t, f) == offsetof(abi_##t, f) && \
                                        sizeof(((t *)0)->f) == sizeof(((abi_##t *)0)->f), \
                                        #t "." #f " offset/size")

SAME_TYPE(CUmodule);
SAME_TYPE(CUfunction);
SAME_TYPE(CUtexref);
SAME_TYPE(CUsurfref);
SAME_TYPE(CUarray_format);
SAME_TYPE(CUaddress_mode);
SAME_TYPE(CUfilter_mode);
SAME_TYPE(CUsharedconfig);
SAME_TYPE(CUlibrary);
SAME_TYPE(CUkernel);
SAME_TYPE(CUfunction_attribute);
SAME_TYPE(CUfunc_cache);
SAME_TYPE(CUmoduleLoadingMode);
SAME_TYPE(CUjit_option);
SAME_TYPE(CUlibraryOption);
SAME_TYPE(CUlaunchAttributeID);
SAME_TYPE(CUlaunchAttributeValue);
SAME_TYPE(CUlaunchAttribute);
SAME_TYPE(CUlaunchConfig);
SAME_FIELD(CUlaunchAttributeValue, cooperative);
SAME_FIELD(CUlaunchAttributeValue, clusterDim.x);
SAME_FIELD(CUlaunchAttributeValue, clusterDim.y);
SAME_FIELD(CUlaunchAttributeValue, clusterDim.z);
SAME_FIELD(CUlaunchAttribute, id);
SAME_FIELD(CUlaunchAttribute, value);
SAME_FIELD(CUlaunchConfig, gridDimX);
SAME_FIELD(CUlaunchConfig, gridDimY);
SAME_FIELD(CUlaunchConfig, gridDimZ);
SAME_FIELD(CUlaunchConfig, blockDimX);
SAME_FIELD(CUlaunchConfig, blockDimY);
SAME_FIELD(CUlaunchConfig, blockDimZ);
SAME_FIELD(CUlaunchConfig, sharedMemBytes);
SAME_FIELD(CUlaunchConfig, hStream);
SAME_FIELD(CUlaunchConfig, attrs);
SAME_FIELD(CUlaunchConfig, numAttrs);
_Static_assert(_Generic((CUoccupancyB2DSize)0, abi_CUoccupancyB2DSize: 1, default: 0),
               "CUoccupancyB2DSize");

/* The checks above ran when this file compiled; the test records that. */
static void code_abi_matches_nvidia_cuda_h(void **state)
{
    (void)state;
    assert_int_equal(sizeof(CUlaunchAttribute), sizeof(abi_CUlaunchAttribute));
}

static const struct CMUnitTest tests[] = {
    cmocka_unit_test(code_abi_matches_nvidia_cuda_h),
};

FAB_TEST_MAIN_NO_HELPERS("cuda", tests)
