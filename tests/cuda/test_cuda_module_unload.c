/* cuModuleUnload and cuLibraryUnload while a launch of their kernel is still
 * queued: the unload waits for it, so the kernel runs its code, not freed
 * memory (numba-cuda unloads modules while its threads' launches are queued). */
#include "cuda_test.h"

#include <pthread.h>

static const char store_ptx[] =
    ".version 8.0\n"
    ".target sm_80\n"
    ".address_size 64\n"
    ".visible .entry store(.param .u64 out)\n"
    "{\n"
    "    .reg .b64 %rd<2>;\n"
    "    .reg .b32 %r<2>;\n"
    "    ld.param.u64 %rd1, [out];\n"
    "    mov.u32 %r1, 4011;\n"
    "    st.global.u32 [%rd1], %r1;\n"
    "    ret;\n"
    "}\n";

static void *open_gate(void *gate)
{
    __atomic_store_n((uint32_t *)gate, 1, __ATOMIC_SEQ_CST);
    return NULL;
}

/* Queue a launch of f behind a closed gate, then open the gate from another
 * thread while unload (the call under test) runs. */
static void launch_behind_gate(CUfunction f, CUstream s, uint32_t *gate, CUdeviceptr out,
                               pthread_t *opener)
{
    gate[0] = 0;
    CU_OK(cuMemsetD32(out, 0, 1));
    CU_OK(cuStreamWaitValue32(s, (CUdeviceptr)(uintptr_t)gate, 1, CU_STREAM_WAIT_VALUE_EQ));
    void *params[] = {&out};
    CU_OK(cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, s, params, NULL));
    assert_int_equal(pthread_create(opener, NULL, open_gate, gate), 0);
}

static void unload_waits_for_the_launches_queued_of_its_kernels(void **state)
{
    (void)state;
    cut_init(0);
    CUstream s;
    CU_OK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
    uint32_t *gate;
    CU_OK(cuMemAllocHost((void **)&gate, 64));
    CUdeviceptr out;
    CU_OK(cuMemAlloc(&out, 64));
    uint32_t got = 0;
    pthread_t opener;

    CUmodule mod;
    CU_OK(cuModuleLoadData(&mod, store_ptx));
    CUfunction f;
    CU_OK(cuModuleGetFunction(&f, mod, "store"));
    launch_behind_gate(f, s, gate, out, &opener);
    CU_OK(cuModuleUnload(mod));
    CU_OK(cuStreamSynchronize(s));
    assert_int_equal(pthread_join(opener, NULL), 0);
    CU_OK(cuMemcpyDtoH(&got, out, sizeof got));
    assert_int_equal(got, 4011);

    CUlibrary lib;
    CU_OK(cuLibraryLoadData(&lib, store_ptx, NULL, NULL, 0, NULL, NULL, 0));
    CUkernel k;
    CU_OK(cuLibraryGetKernel(&k, lib, "store"));
    launch_behind_gate((CUfunction)k, s, gate, out, &opener);
    CU_OK(cuLibraryUnload(lib));
    CU_OK(cuStreamSynchronize(s));
    assert_int_equal(pthread_join(opener, NULL), 0);
    got = 0;
    CU_OK(cuMemcpyDtoH(&got, out, sizeof got));
    assert_int_equal(got, 4011);

    CU_OK(cuMemFree(out));
    CU_OK(cuMemFreeHost(gate));
    CU_OK(cuStreamDestroy(s));
}

static const struct CMUnitTest tests[] = {
    cmocka_unit_test(unload_waits_for_the_launches_queued_of_its_kernels),
};

FAB_TEST_MAIN_NO_HELPERS("cuda", tests)
