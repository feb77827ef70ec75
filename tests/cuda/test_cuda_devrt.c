/* Archives given to the JIT linker (CU_JIT_INPUT_LIBRARY) and the device
 * runtime's grid-sync functions that the linker adds with them: an archive's
 * PTX members are linked and its other members add nothing; a kernel calling
 * cudaCGGetIntrinsicHandle / cudaCGSynchronize (as numba-cuda's grid.sync()
 * does, with NVIDIA's SASS-only libcudadevrt.a given to the linker) waits for
 * every block of a cooperative launch, and traps in one that is not. */
#include "cuda_test.h"

#include <stdlib.h>
#include <string.h>

#define PTX_HEAD ".version 8.0\n.target sm_80\n.address_size 64\n"

static const char caller_ptx[] = PTX_HEAD
    ".extern .func (.param .b32 r) twice(.param .b32 x);\n"
    ".visible .entry call_twice(.param .u64 out, .param .u32 x)\n"
    "{\n"
    "  .reg .b32 %r<3>;\n"
    "  .reg .b64 %rd<2>;\n"
    "  ld.param.u64 %rd1, [out];\n"
    "  ld.param.u32 %r1, [x];\n"
    "  {\n"
    "  .param .b32 a0;\n"
    "  st.param.b32 [a0], %r1;\n"
    "  .param .b32 r0;\n"
    "  call.uni (r0), twice, (a0);\n"
    "  ld.param.b32 %r2, [r0];\n"
    "  }\n"
    "  st.global.u32 [%rd1], %r2;\n"
    "  ret;\n"
    "}\n";

static const char callee_ptx[] = PTX_HEAD
    ".visible .func (.param .b32 r) twice(.param .b32 x)\n"
    "{\n"
    "  .reg .b32 %r<3>;\n"
    "  ld.param.b32 %r1, [x];\n"
    "  add.s32 %r2, %r1, %r1;\n"
    "  st.param.b32 [r], %r2;\n"
    "  ret;\n"
    "}\n";

/* Each block's thread 0 writes 100 + its block index to a[block], all
 * blocks sync through the device runtime's functions, then each writes the
 * next block's value to b[block]: right only if every block arrived. */
static const char gsync_ptx[] = PTX_HEAD
    ".extern .func (.param .b64 r) cudaCGGetIntrinsicHandle(.param .b32 scope);\n"
    ".extern .func (.param .b32 r) cudaCGSynchronize(.param .b64 h, .param .b32 flags);\n"
    ".visible .entry gsync(.param .u64 a, .param .u64 b)\n"
    "{\n"
    "  .reg .pred %p<2>;\n"
    "  .reg .b32 %r<8>;\n"
    "  .reg .b64 %rd<8>;\n"
    "  ld.param.u64 %rd1, [a];\n"
    "  ld.param.u64 %rd2, [b];\n"
    "  mov.u32 %r1, %ctaid.x;\n"
    "  mov.u32 %r2, %tid.x;\n"
    "  mov.u32 %r3, %nctaid.x;\n"
    "  setp.ne.u32 %p1, %r2, 0;\n"
    "  mul.wide.u32 %rd3, %r1, 4;\n"
    "  add.u64 %rd4, %rd1, %rd3;\n"
    "  add.u32 %r4, %r1, 100;\n"
    "  @!%p1 st.global.u32 [%rd4], %r4;\n"
    "  {\n"
    "  .param .b32 sc;\n"
    "  st.param.b32 [sc], 1;\n"
    "  .param .b64 hh;\n"
    "  call.uni (hh), cudaCGGetIntrinsicHandle, (sc);\n"
    "  ld.param.b64 %rd5, [hh];\n"
    "  }\n"
    "  {\n"
    "  .param .b64 h2;\n"
    "  st.param.b64 [h2], %rd5;\n"
    "  .param .b32 fl;\n"
    "  st.param.b32 [fl], 0;\n"
    "  .param .b32 rs;\n"
    "  call.uni (rs), cudaCGSynchronize, (h2, fl);\n"
    "  ld.param.b32 %r5, [rs];\n"
    "  }\n"
    "  add.u32 %r6, %r1, 1;\n"
    "  rem.u32 %r6, %r6, %r3;\n"
    "  mul.wide.u32 %rd6, %r6, 4;\n"
    "  add.u64 %rd6, %rd1, %rd6;\n"
    "  ld.global.u32 %r7, [%rd6];\n"
    "  add.u64 %rd7, %rd2, %rd3;\n"
    "  @!%p1 st.global.u32 [%rd7], %r7;\n"
    "  ret;\n"
    "}\n";

/* An ar archive of the given members (name, bytes): the global header, then
 * each member's 60-byte header and its bytes, padded to even. */
static unsigned char *archive(const char *const *names, const char *const *data, size_t n,
                              size_t *len_out)
{
    size_t len = 8;
    for (size_t i = 0; i < n; i++)
        len += 60 + ((strlen(data[i]) + 1) & ~(size_t)1);
    unsigned char *a = calloc(1, len);
    assert_non_null(a);
    memcpy(a, "!<arch>\n", 8);
    size_t off = 8;
    for (size_t i = 0; i < n; i++) {
        char h[96];
        size_t size = strlen(data[i]);
        snprintf(h, sizeof(h), "%-16s%-12s%-6s%-6s%-8s%-10u`\n", names[i], "0", "0", "0", "644",
                 (unsigned)size);
        memcpy(a + off, h, 60);
        memcpy(a + off + 60, data[i], size);
        if (size & 1)
            a[off + 60 + size] = '\n';
        off += 60 + ((size + 1) & ~(size_t)1);
    }
    *len_out = len;
    return a;
}

static CUmodule link_with_archive(const char *ptx, const char *name, unsigned char *ar, size_t ar_len)
{
    CUlinkState link;
    CU_OK(cuLinkCreate(0, NULL, NULL, &link));
    CU_OK(cuLinkAddData(link, CU_JIT_INPUT_PTX, (void *)ptx, strlen(ptx) + 1, name, 0, NULL, NULL));
    CU_OK(cuLinkAddData(link, CU_JIT_INPUT_LIBRARY, ar, ar_len, "lib.a", 0, NULL, NULL));
    void *image = NULL;
    size_t size = 0;
    CU_OK(cuLinkComplete(link, &image, &size));
    CUmodule mod;
    CU_OK(cuModuleLoadData(&mod, image));
    CU_OK(cuLinkDestroy(link));
    return mod;
}

static void an_archive_links_its_ptx_members_and_skips_the_others(void **state)
{
    (void)state;
    cut_init(0);
    const char *names[] = {"twice.ptx/", "notes.txt/"};
    const char *data[] = {callee_ptx, "not device code"};
    size_t len;
    unsigned char *ar = archive(names, data, 2, &len);
    CUmodule mod = link_with_archive(caller_ptx, "caller", ar, len);
    free(ar);
    CUfunction f;
    CU_OK(cuModuleGetFunction(&f, mod, "call_twice"));
    CUdeviceptr out;
    CU_OK(cuMemAlloc(&out, 4));
    unsigned x = 21;
    void *params[] = {&out, &x};
    CU_OK(cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, NULL, params, NULL));
    CU_OK(cuCtxSynchronize());
    unsigned got = 0;
    CU_OK(cuMemcpyDtoH(&got, out, 4));
    assert_int_equal(got, 42);
    CU_OK(cuMemFree(out));
    CU_OK(cuModuleUnload(mod));
}

static void a_library_input_that_is_no_archive_is_refused(void **state)
{
    (void)state;
    cut_init(0);
    CUlinkState link;
    CU_OK(cuLinkCreate(0, NULL, NULL, &link));
    char text[] = "plain text";
    CU_IS(cuLinkAddData(link, CU_JIT_INPUT_LIBRARY, text, sizeof(text), "x", 0, NULL, NULL),
          CUDA_ERROR_INVALID_IMAGE);
    CU_OK(cuLinkDestroy(link));
}

enum { NB = 8, NT = 64 };

static void a_grid_sync_through_the_device_runtime_waits_for_every_block(void **state)
{
    (void)state;
    cut_init(0);
    size_t len;
    unsigned char *ar = archive(NULL, NULL, 0, &len); /* as a SASS-only libcudadevrt.a adds */
    CUmodule mod = link_with_archive(gsync_ptx, "gsync", ar, len);
    free(ar);
    CUfunction f;
    CU_OK(cuModuleGetFunction(&f, mod, "gsync"));
    CUdeviceptr a, b;
    CU_OK(cuMemAlloc(&a, NB * 4));
    CU_OK(cuMemAlloc(&b, NB * 4));
    CU_OK(cuMemsetD32(a, 0, NB));
    CU_OK(cuMemsetD32(b, 0, NB));
    void *params[] = {&a, &b};
    for (int round = 0; round < 2; round++) { /* the barrier word is used again */
        CU_OK(cuLaunchCooperativeKernel(f, NB, 1, 1, NT, 1, 1, 0, NULL, params));
        CU_OK(cuCtxSynchronize());
        unsigned got[NB];
        CU_OK(cuMemcpyDtoH(got, b, sizeof(got)));
        for (unsigned i = 0; i < NB; i++)
            assert_int_equal(got[i], 100 + (i + 1) % NB);
    }
    /* not cooperative: no grid workspace, and the sync traps */
    CU_OK(cuLaunchKernel(f, NB, 1, 1, NT, 1, 1, 0, NULL, params, NULL));
    CU_IS(cuCtxSynchronize(), CUDA_ERROR_LAUNCH_FAILED);
    CU_OK(cuMemFree(a)); /* a lost context's memory is still freed */
    CU_OK(cuMemFree(b));
}

static const struct CMUnitTest tests[] = {
    cmocka_unit_test(an_archive_links_its_ptx_members_and_skips_the_others),
    cmocka_unit_test(a_library_input_that_is_no_archive_is_refused),
    cmocka_unit_test(a_grid_sync_through_the_device_runtime_waits_for_every_block),
};

FAB_TEST_MAIN_NO_HELPERS("cuda", tests)
