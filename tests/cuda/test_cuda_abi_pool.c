/* The pool part of the emulation's ABI (src/cuda/cuda_abi_pool.h) against
 * NVIDIA's cuda.h, as test_cuda_abi.c checks the rest: every value, size and
 * field offset is static-asserted equal, so a mismatch fails the build.
 * Built only where NVIDIA's cuda.h is installed. */
#include <cuda.h>
#include <stddef.h>

#define FAB_CU(name) abi_##name
#include "src/cuda/cuda_abi.h"

#include "fabtest.h"

#define SAME_VALUE(name, value)                                             \
    _Static_assert((long long)name == (long long)abi_##name, #name " differs"); \
    _Static_assert((long long)name == (long long)(value), #name " value");
#define SAME_TYPE(t) _Static_assert(sizeof(t) == sizeof(abi_##t) && \
                                    _Alignof(t) == _Alignof(abi_##t), #t " size/alignment")
#define SAME_FIELD(t, f) _Static_assert(offsetof(t, f) == offsetof(abi_##t, f) && \
                                        sizeof(((t *)0)->f) == sizeof(((abi_##t *)0)->f), \
                                        #t "." #f " offset/size")

FAB_CU_MEMPOOL_ATTR_LIST(SAME_VALUE)
SAME_TYPE(CUmemPool_attribute);
SAME_TYPE(CUmemoryPool);
SAME_TYPE(CUmemPoolProps);
SAME_FIELD(CUmemPoolProps, allocType);
SAME_FIELD(CUmemPoolProps, handleTypes);
SAME_FIELD(CUmemPoolProps, location);
SAME_FIELD(CUmemPoolProps, win32SecurityAttributes);
SAME_FIELD(CUmemPoolProps, maxSize);
SAME_FIELD(CUmemPoolProps, usage);
SAME_FIELD(CUmemPoolProps, reserved);
SAME_TYPE(CUmemPoolPtrExportData);
SAME_FIELD(CUmemPoolPtrExportData, reserved);
_Static_assert(CU_MEM_POOL_CREATE_USAGE_HW_DECOMPRESS == FAB_CU_MEM_POOL_CREATE_USAGE_HW_DECOMPRESS,
               "CU_MEM_POOL_CREATE_USAGE_HW_DECOMPRESS");

/* The checks above ran when this file compiled; the test records that. */
static void pool_abi_matches_nvidia_cuda_h(void **state)
{
    (void)state;
    assert_int_equal(sizeof(CUmemPoolProps), sizeof(abi_CUmemPoolProps));
    assert_int_equal(sizeof(CUmemPoolPtrExportData), 64);
}

static const struct CMUnitTest tests[] = {
    cmocka_unit_test(pool_abi_matches_nvidia_cuda_h),
};

FAB_TEST_MAIN_NO_HELPERS("cuda", tests)
