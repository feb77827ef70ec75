/* cudaProfiler.h's cuProfilerStart / cuProfilerStop: nothing to start on
 * fabmem, but the calls exist and want a current context. */
#include "cuda_test.h"
#if __has_include(<cudaProfiler.h>)
#include <cudaProfiler.h>
#endif

static void profiler_start_and_stop_succeed_in_a_context_and_refuse_without(void **state)
{
    (void)state;
    CU_OK(cuInit(0));
    CU_OK(cuCtxSetCurrent(NULL));
    CU_IS(cuProfilerStart(), CUDA_ERROR_INVALID_CONTEXT);
    CU_IS(cuProfilerStop(), CUDA_ERROR_INVALID_CONTEXT);
    cut_init(0);
    CU_OK(cuProfilerStart());
    CU_OK(cuProfilerStart()); /* already on: no effect */
    CU_OK(cuProfilerStop());
    void *fn = NULL;
    CU_OK(cuGetProcAddress("cuProfilerStart", &fn, 13000, 0, NULL));
    assert_non_null(fn);
    CU_OK(cuGetProcAddress("cuProfilerStop", &fn, 13000, 0, NULL));
    assert_non_null(fn);
}

static const struct CMUnitTest tests[] = {
    cmocka_unit_test(profiler_start_and_stop_succeed_in_a_context_and_refuse_without),
};

FAB_TEST_MAIN_NO_HELPERS("cuda", tests)
