/* FABMEM_PTX_PROFILE: with it naming a file, a module's report (its
 * functions, opcodes and hottest PTX lines, as warp instructions run and
 * spin yields) is appended there when the module is unloaded, or at exit
 * for a module still loaded, one report a module, never two, and none for a
 * module whose kernels never ran; without it nothing is written. */
#include "cuda_test.h"

#include <fcntl.h>
#include <stdbool.h>
#include <sys/stat.h>
#include <unistd.h>

/* Lines 4-13: ten rounds of a loop, then the count stored. */
static const char loop_ptx[] =
    ".version 8.0\n"
    ".target sm_80\n"
    ".address_size 64\n"
    ".visible .entry loop(.param .u64 out)\n" /* 4 */
    "{\n"                                     /* 5 */
    ".reg .u64 %o; .reg .b32 %i; .reg .pred %p;\n"
    "ld.param.u64 %o, [out];\n"               /* 7 */
    "mov.b32 %i, 0;\n"                        /* 8 */
    "L: add.s32 %i, %i, 1;\n"                 /* 9 */
    "setp.lt.s32 %p, %i, 10;\n"               /* 10 */
    "@%p bra L;\n"                            /* 11 */
    "st.global.u32 [%o], %i;\n"               /* 12 */
    "ret;\n"                                  /* 13 */
    "}\n";

static char *read_text(const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return NULL;
    char *buf = calloc(1, 65536);
    assert_non_null(buf);
    size_t n = fread(buf, 1, 65535, f);
    buf[n] = '\0';
    fclose(f);
    return buf;
}

static size_t count_of(const char *text, const char *needle)
{
    size_t n = 0;
    for (const char *p = text; (p = strstr(p, needle)); p += strlen(needle))
        n++;
    return n;
}

/* Load the module, run loop on blocks of 64 threads (2 warps each), check
 * its result; the module is left loaded. */
static int load_and_run(CUmodule *mod, unsigned blocks)
{
    CUfunction f;
    CUdeviceptr out;
    uint32_t got = 0;
    if (cuModuleLoadData(mod, loop_ptx) != CUDA_SUCCESS || cuModuleGetFunction(&f, *mod, "loop") ||
        cuMemAlloc(&out, 4))
        return 20;
    void *params[] = {&out};
    if (cuLaunchKernel(f, blocks, 1, 1, 64, 1, 1, 0, NULL, params, NULL) || cuCtxSynchronize() ||
        cuMemcpyDtoH(&got, out, 4) || cuMemFree(out))
        return 21;
    return got == 10 ? 0 : 22;
}

static void ptx_profile_report_is_appended_when_the_module_unloads(void **state)
{
    (void)state;
    char *dir = fab_test_tempdir();
    char path[512];
    snprintf(path, sizeof(path), "%s/profile.txt", dir);
    setenv("FABMEM_PTX_PROFILE", path, 1);
    cut_init(0);
    CUmodule mod;
    /* a module none of whose kernels ran has no report */
    CU_OK(cuModuleLoadData(&mod, loop_ptx));
    CU_OK(cuModuleUnload(mod));
    assert_int_equal(access(path, F_OK), -1);
    assert_int_equal(load_and_run(&mod, 2), 0); /* 4 warps */
    assert_int_equal(access(path, F_OK), -1);   /* nothing before the unload */
    CU_OK(cuModuleUnload(mod));
    char *text = read_text(path);
    assert_non_null(text);
    assert_non_null(strstr(text, "# fabmem PTX profile: pid "));
    assert_non_null(strstr(text, "a module of 1 kernel (the first loop), at unload\n"));
    assert_non_null(strstr(text, "# 132 warp instructions run, 0 spin yields, 7 of "));
    assert_non_null(strstr(text, "# by function: share, runs, spin yields, function\n"));
    assert_non_null(strstr(text, "100.00%            132          0  loop\n"));
    assert_non_null(strstr(text, "# by opcode: share, runs, spin yields, opcode\n"));
    assert_non_null(strstr(text, " 30.30%             40          0  add\n"));
    assert_non_null(strstr(text, "# hottest lines: share, runs, spin yields, PTX line, opcode, function\n"));
    /* the hottest line first: the loop's add, 10 rounds of 4 warps */
    const char *hot = strstr(text, "PTX line, opcode, function\n");
    assert_non_null(hot);
    assert_non_null(strstr(hot, " 30.30%             40          0        9  add          loop\n"));
    assert_true(strstr(hot, "        9  add") < strstr(hot, "       11  bra"));
    /* the file is the user's alone */
    struct stat st;
    assert_int_equal(stat(path, &st), 0);
    assert_int_equal(st.st_mode & 0777, 0600);
    free(text);

    /* a second module appends a second report, the first kept */
    assert_int_equal(load_and_run(&mod, 1), 0);
    CU_OK(cuModuleUnload(mod));
    text = read_text(path);
    assert_int_equal(count_of(text, "# fabmem PTX profile: "), 2);
    assert_non_null(strstr(text, "# 66 warp instructions run"));
    free(text);
    unsetenv("FABMEM_PTX_PROFILE");
    fab_test_rmtree(dir);
    free(dir);
}

static void ptx_profile_is_off_without_the_variable(void **state)
{
    (void)state;
    unsetenv("FABMEM_PTX_PROFILE");
    char *dir = fab_test_tempdir();
    cut_init(0);
    CUmodule mod;
    assert_int_equal(load_and_run(&mod, 1), 0);
    CU_OK(cuModuleUnload(mod));
    setenv("FABMEM_PTX_PROFILE", "", 1); /* empty: off too */
    assert_int_equal(load_and_run(&mod, 1), 0);
    CU_OK(cuModuleUnload(mod));
    unsetenv("FABMEM_PTX_PROFILE");
    /* nothing was written anywhere the test can see: the directory is empty */
    char probe[512];
    snprintf(probe, sizeof(probe), "%s/profile.txt", dir);
    assert_int_equal(access(probe, F_OK), -1);
    fab_test_rmtree(dir);
    free(dir);
}

/* Helper: run the kernel, unload the module when its argument says
 * "unload", then exit: one report either way, at exit or at unload (and
 * none more at exit). */
static int helper_run_then_exit(int argc, char **argv, int sock)
{
    bool unload = argc > 1 && strcmp(argv[1], "unload") == 0;
    CUT_HELPER_READY(sock);
    CUmodule mod;
    int rc = load_and_run(&mod, 1);
    if (rc)
        return rc;
    if (unload && cuModuleUnload(mod) != CUDA_SUCCESS)
        return 24;
    return fab_test_send_word(sock, "ran") == 0 ? 0 : 23; /* exit: the report is written then */
}

static char *run_helper(const char *how, const char *path)
{
    char env[600];
    snprintf(env, sizeof(env), "FABMEM_PTX_PROFILE=%s", path);
    const char *const envs[] = {env, NULL};
    fab_test_child_t child;
    const char *const args[] = {how, NULL};
    assert_int_equal(fab_test_spawn("run_then_exit", args, envs, &child), 0);
    assert_int_equal(fab_test_expect_word(child.sock, "ready"), 0);
    assert_int_equal(fab_test_expect_word(child.sock, "ran"), 0);
    assert_int_equal(fab_test_reap(&child), 0);
    return read_text(path);
}

static void ptx_profile_of_a_module_still_loaded_is_written_at_exit(void **state)
{
    (void)state;
    char *dir = fab_test_tempdir();
    char path[512];
    snprintf(path, sizeof(path), "%s/exit.txt", dir);
    char *text = run_helper("stay", path);
    assert_non_null(text);
    assert_int_equal(count_of(text, "# fabmem PTX profile: "), 1);
    assert_non_null(strstr(text, "(the first loop), at exit\n"));
    assert_non_null(strstr(text, "# 66 warp instructions run, 0 spin yields"));
    free(text);

    snprintf(path, sizeof(path), "%s/unload.txt", dir);
    text = run_helper("unload", path);
    assert_non_null(text);
    assert_int_equal(count_of(text, "# fabmem PTX profile: "), 1);
    assert_non_null(strstr(text, "(the first loop), at unload\n"));
    free(text);
    fab_test_rmtree(dir);
    free(dir);
}

static void ptx_profile_to_a_file_it_cannot_open_warns_and_the_program_goes_on(void **state)
{
    (void)state;
    setenv("FABMEM_PTX_PROFILE", "/nonexistent-dir/profile.txt", 1);
    cut_init(0);
    CUmodule mod;
    fab_test_stderr_begin();
    assert_int_equal(load_and_run(&mod, 1), 0);
    CUresult r = cuModuleUnload(mod);
    char err[2048];
    fab_test_stderr_end(err, sizeof(err));
    unsetenv("FABMEM_PTX_PROFILE");
    CU_OK(r);
    assert_non_null(strstr(err, "FABMEM_PTX_PROFILE /nonexistent-dir/profile.txt: No such file or directory: "
                                "no PTX profile written"));
}

static const struct CMUnitTest tests[] = {
    cmocka_unit_test(ptx_profile_report_is_appended_when_the_module_unloads),
    cmocka_unit_test(ptx_profile_is_off_without_the_variable),
    cmocka_unit_test(ptx_profile_of_a_module_still_loaded_is_written_at_exit),
    cmocka_unit_test(ptx_profile_to_a_file_it_cannot_open_warns_and_the_program_goes_on),
};

static const fab_test_helper_t helpers[] = {
    {"run_then_exit", helper_run_then_exit},
};

FAB_TEST_MAIN("cuda", tests, helpers)
