/* FABMEM_FAULTS, per-call fault injection (docs/cuda.md, "Fault injection"),
 * against cuda.h only. Each test runs its calls in a helper (this binary
 * re-run) whose environment carries the spec, since the driver reads it once
 * per process at cuInit; the helper sends back what each call returned and
 * what the driver logged, and the test asserts on them. Against NVIDIA's
 * driver the variable means nothing, so these tests are fabmem's own. */
#include "cuda_test.h"

#include <unistd.h>

#define MAX_RESULTS 128
#define MAX_LOG 8192

typedef struct outcome {
    int n;
    int results[MAX_RESULTS];
    char log[MAX_LOG];
} outcome_t;

/* ---- scenarios, run in the helper ---------------------------------------------- */

static void record(outcome_t *o, CUresult r)
{
    if (o->n < MAX_RESULTS)
        o->results[o->n++] = (int)r;
}

static CUcontext start(void)
{
    CUcontext ctx = NULL;
    if (cuInit(0) != CUDA_SUCCESS || cuDevicePrimaryCtxRetain(&ctx, 0) != CUDA_SUCCESS ||
        cuCtxSetCurrent(ctx) != CUDA_SUCCESS)
        exit(3);
    return ctx;
}

/* Only cuInit: what it returns with the spec of the environment. */
static void scenario_init(outcome_t *o)
{
    record(o, cuInit(0));
}

/* Four cuDeviceGetCount calls. */
static void scenario_count4(outcome_t *o)
{
    start();
    for (int i = 0; i < 4; i++) {
        int n;
        record(o, cuDeviceGetCount(&n));
    }
}

/* 64 cuDeviceGetCount calls, then 8 cuCtxGetCurrent calls. */
static void scenario_draws(outcome_t *o)
{
    start();
    for (int i = 0; i < 64; i++) {
        int n;
        record(o, cuDeviceGetCount(&n));
    }
    for (int i = 0; i < 8; i++) {
        CUcontext c;
        record(o, cuCtxGetCurrent(&c));
    }
}

/* cuMemAlloc (cuda.h names cuMemAlloc_v2) three times, each freed. */
static void scenario_alloc3(outcome_t *o)
{
    start();
    for (int i = 0; i < 3; i++) {
        CUdeviceptr p = 0;
        CUresult r = cuMemAlloc(&p, 4096);
        record(o, r);
        if (r == CUDA_SUCCESS)
            cuMemFree(p);
    }
}

/* cuMemAllocPitch (which allocates inside), then cuMemAlloc. */
static void scenario_pitch(outcome_t *o)
{
    start();
    CUdeviceptr p = 0;
    size_t pitch = 0;
    CUresult r = cuMemAllocPitch(&p, &pitch, 100, 4, 4);
    record(o, r);
    if (r == CUDA_SUCCESS)
        cuMemFree(p);
    r = cuMemAlloc(&p, 4096);
    record(o, r);
    if (r == CUDA_SUCCESS)
        cuMemFree(p);
}

/* cuStreamSynchronize through the legacy name, then through the _ptsz ABI
 * that cuGetProcAddress gives for the per-thread default stream, then the
 * legacy name again. */
static void scenario_ptsz(outcome_t *o)
{
    start();
    void *fn = NULL;
    CUdriverProcAddressQueryResult q;
    if (cuGetProcAddress("cuStreamSynchronize", &fn, 12000,
                         CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM, &q) != CUDA_SUCCESS ||
        !fn)
        exit(4);
    CUresult (*sync_ptsz)(CUstream);
    memcpy(&sync_ptsz, &fn, sizeof(fn));
    record(o, cuStreamSynchronize(NULL));
    record(o, sync_ptsz(NULL));
    record(o, cuStreamSynchronize(NULL));
}

/* An injected cuMemCreate: its result, whether the handle was written, the
 * free memory before and after, then a second cuMemCreate's result. */
static void scenario_create(outcome_t *o)
{
    start();
    size_t free0 = 0, free1 = 0, total = 0;
    CUmemAllocationProp prop = cut_prop(CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0);
    size_t g = 0;
    if (cuMemGetAllocationGranularity(&g, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM) != CUDA_SUCCESS)
        exit(5);
    cuMemGetInfo(&free0, &total);
    CUmemGenericAllocationHandle h = 0x5eed;
    record(o, cuMemCreate(&h, g, &prop, 0));
    record(o, h == 0x5eed ? 0 : 1);
    cuMemGetInfo(&free1, &total);
    record(o, free1 == free0 ? 0 : 1);
    CUresult r = cuMemCreate(&h, g, &prop, 0);
    record(o, r);
    if (r == CUDA_SUCCESS)
        cuMemRelease(h);
}

/* cuInit as the spec says, then a call, then cuInit again, then the call. */
static void scenario_init_twice(outcome_t *o)
{
    int n;
    record(o, cuInit(0));
    record(o, cuDeviceGetCount(&n));
    record(o, cuInit(0));
    record(o, cuDeviceGetCount(&n));
}

static const struct {
    const char *name;
    void (*fn)(outcome_t *);
} scenarios[] = {
    {"init", scenario_init},       {"count4", scenario_count4},
    {"draws", scenario_draws},     {"alloc3", scenario_alloc3},
    {"pitch", scenario_pitch},     {"ptsz", scenario_ptsz},
    {"create", scenario_create},   {"init_twice", scenario_init_twice},
};

/* helper "run" SCENARIO: runs it with stderr (the driver's log) in a file,
 * then sends the outcome. */
static int helper_run(int argc, char **argv, int sock)
{
    if (argc < 2)
        return 2;
    static outcome_t o;
    memset(&o, 0, sizeof(o));
    FILE *log = tmpfile();
    if (!log || dup2(fileno(log), 2) < 0)
        return 2;
    for (size_t i = 0; i < sizeof(scenarios) / sizeof(scenarios[0]); i++) {
        if (strcmp(argv[1], scenarios[i].name) == 0)
            scenarios[i].fn(&o);
    }
    fflush(stderr);
    rewind(log);
    size_t got = fread(o.log, 1, sizeof(o.log) - 1, log);
    o.log[got] = '\0';
    return fab_test_send(sock, &o, sizeof(o)) == 0 ? 0 : 2;
}

/* ---- the tests ----------------------------------------------------------------- */

/* Run scenario in a helper with env (NULL-terminated "K=V" strings). */
static void run(const char *scenario, const char *const *env, outcome_t *o)
{
    const char *args[] = {scenario, NULL};
    fab_test_child_t child;
    assert_int_equal(fab_test_spawn("run", args, env, &child), 0);
    int got = fab_test_recv(child.sock, o, sizeof(*o));
    int status = fab_test_reap(&child);
    if (got != 0 || status != 0)
        fprintf(stderr, "helper %s: status %d\n", scenario, status);
    assert_int_equal(got, 0);
    assert_int_equal(status, 0);
}

static void nothing_is_injected_when_faults_is_unset(void **state)
{
    (void)state;
    static outcome_t o;
    run("draws", NULL, &o);
    assert_int_equal(o.n, 72);
    for (int i = 0; i < o.n; i++)
        assert_int_equal(o.results[i], CUDA_SUCCESS);
}

static void an_empty_faults_variable_injects_nothing(void **state)
{
    (void)state;
    static outcome_t o;
    const char *env[] = {"FABMEM_FAULTS=", NULL};
    run("count4", env, &o);
    assert_int_equal(o.n, 4);
    for (int i = 0; i < o.n; i++)
        assert_int_equal(o.results[i], CUDA_SUCCESS);
}

static void the_nth_call_fails_and_the_others_run(void **state)
{
    (void)state;
    static outcome_t o;
    const char *env[] = {"FABMEM_FAULTS=cuDeviceGetCount:NOT_PERMITTED@3", NULL};
    run("count4", env, &o);
    assert_int_equal(o.n, 4);
    assert_int_equal(o.results[0], CUDA_SUCCESS);
    assert_int_equal(o.results[1], CUDA_SUCCESS);
    assert_int_equal(o.results[2], CUDA_ERROR_NOT_PERMITTED);
    assert_int_equal(o.results[3], CUDA_SUCCESS);
}

static void the_code_comes_back_as_named_with_or_without_prefix(void **state)
{
    (void)state;
    static outcome_t o;
    const char *env[] = {"FABMEM_FAULTS=cuDeviceGetCount:CUDA_ERROR_NOT_SUPPORTED@1,"
                         "cuDeviceGetCount:OUT_OF_MEMORY@2,cuDeviceGetCount:CUDA_ERROR_UNKNOWN@4",
                         NULL};
    run("count4", env, &o);
    assert_int_equal(o.results[0], CUDA_ERROR_NOT_SUPPORTED);
    assert_int_equal(o.results[1], CUDA_ERROR_OUT_OF_MEMORY);
    assert_int_equal(o.results[2], CUDA_SUCCESS);
    assert_int_equal(o.results[3], CUDA_ERROR_UNKNOWN);
}

static void an_injected_call_is_logged_at_info_with_call_code_and_spec(void **state)
{
    (void)state;
    static outcome_t o;
    const char *env[] = {"FABMEM_FAULTS=cuDeviceGetCount:NOT_PERMITTED@2", "FABMEM_LOG=info",
                         NULL};
    run("count4", env, &o);
    assert_int_equal(o.results[1], CUDA_ERROR_NOT_PERMITTED);
    const char *line = strstr(o.log, "cuDeviceGetCount (call 2");
    assert_non_null(line);
    assert_non_null(strstr(line, "CUDA_ERROR_NOT_PERMITTED"));
    assert_non_null(strstr(line, "\"cuDeviceGetCount:NOT_PERMITTED@2\""));
}

static void a_spec_for_a_base_name_fails_its_versioned_abi(void **state)
{
    (void)state;
    static outcome_t o;
    /* cuda.h maps cuMemAlloc to cuMemAlloc_v2. */
    const char *env[] = {"FABMEM_FAULTS=cuMemAlloc:OUT_OF_MEMORY@2", NULL};
    run("alloc3", env, &o);
    assert_int_equal(o.n, 3);
    assert_int_equal(o.results[0], CUDA_SUCCESS);
    assert_int_equal(o.results[1], CUDA_ERROR_OUT_OF_MEMORY);
    assert_int_equal(o.results[2], CUDA_SUCCESS);
}

static void a_spec_counts_the_ptsz_abi_with_the_legacy_one(void **state)
{
    (void)state;
    static outcome_t o;
    const char *env[] = {"FABMEM_FAULTS=cuStreamSynchronize:LAUNCH_FAILED@2", NULL};
    run("ptsz", env, &o);
    assert_int_equal(o.n, 3);
    assert_int_equal(o.results[0], CUDA_SUCCESS);
    assert_int_equal(o.results[1], CUDA_ERROR_LAUNCH_FAILED); /* the _ptsz call */
    assert_int_equal(o.results[2], CUDA_SUCCESS);
}

static void a_call_the_driver_makes_inside_another_is_not_counted(void **state)
{
    (void)state;
    static outcome_t o;
    /* cuMemAllocPitch allocates as cuMemAlloc does; the user's first
     * cuMemAlloc is the one after it. */
    const char *env[] = {"FABMEM_FAULTS=cuMemAlloc:OUT_OF_MEMORY@1", NULL};
    run("pitch", env, &o);
    assert_int_equal(o.results[0], CUDA_SUCCESS);
    assert_int_equal(o.results[1], CUDA_ERROR_OUT_OF_MEMORY);
}

static void an_injected_create_changes_nothing(void **state)
{
    (void)state;
    static outcome_t o;
    const char *env[] = {"FABMEM_FAULTS=cuMemCreate:OUT_OF_MEMORY@1", NULL};
    run("create", env, &o);
    assert_int_equal(o.n, 4);
    assert_int_equal(o.results[0], CUDA_ERROR_OUT_OF_MEMORY);
    assert_int_equal(o.results[1], 0); /* the handle untouched */
    assert_int_equal(o.results[2], 0); /* cuMemGetInfo's free unchanged */
    assert_int_equal(o.results[3], CUDA_SUCCESS);
}

static void a_probability_fails_the_same_calls_under_one_seed(void **state)
{
    (void)state;
    static outcome_t a, b;
    const char *env[] = {"FABMEM_FAULTS=cuDeviceGetCount:UNKNOWN@50%", "FABMEM_FAULTS_SEED=42",
                         NULL};
    run("draws", env, &a);
    run("draws", env, &b);
    assert_int_equal(a.n, 72);
    assert_int_equal(b.n, 72);
    int failed = 0;
    for (int i = 0; i < 64; i++) {
        assert_int_equal(a.results[i], b.results[i]);
        assert_true(a.results[i] == CUDA_SUCCESS || a.results[i] == CUDA_ERROR_UNKNOWN);
        failed += a.results[i] != CUDA_SUCCESS;
    }
    /* Some calls failed and some ran, as one half should. */
    assert_true(failed > 0 && failed < 64);
    for (int i = 64; i < 72; i++) /* another name is not touched */
        assert_int_equal(a.results[i], CUDA_SUCCESS);
}

static void another_seed_fails_other_calls(void **state)
{
    (void)state;
    static outcome_t a, b;
    const char *env_a[] = {"FABMEM_FAULTS=cuDeviceGetCount:UNKNOWN@50%", "FABMEM_FAULTS_SEED=1",
                           NULL};
    const char *env_b[] = {"FABMEM_FAULTS=cuDeviceGetCount:UNKNOWN@50%", "FABMEM_FAULTS_SEED=2",
                           NULL};
    run("draws", env_a, &a);
    run("draws", env_b, &b);
    int differ = 0;
    for (int i = 0; i < 64; i++)
        differ += a.results[i] != b.results[i];
    assert_true(differ > 0);
}

static void zero_percent_never_fails_and_hundred_percent_always_does(void **state)
{
    (void)state;
    static outcome_t o;
    const char *env[] = {"FABMEM_FAULTS=cuDeviceGetCount:UNKNOWN@0%,cuCtxGetCurrent:UNKNOWN@100%",
                         NULL};
    run("draws", env, &o);
    assert_int_equal(o.n, 72);
    for (int i = 0; i < 64; i++)
        assert_int_equal(o.results[i], CUDA_SUCCESS);
    for (int i = 64; i < 72; i++)
        assert_int_equal(o.results[i], CUDA_ERROR_UNKNOWN);
}

static void cuinit_itself_can_be_failed_once(void **state)
{
    (void)state;
    static outcome_t o;
    const char *env[] = {"FABMEM_FAULTS=cuInit:NO_DEVICE@1", NULL};
    run("init_twice", env, &o);
    assert_int_equal(o.results[0], CUDA_ERROR_NO_DEVICE);
    assert_int_equal(o.results[1], CUDA_ERROR_NOT_INITIALIZED);
    assert_int_equal(o.results[2], CUDA_SUCCESS);
    assert_int_equal(o.results[3], CUDA_SUCCESS);
}

/* cuInit with a bad spec: INVALID_VALUE, and an error line that names the
 * item and holds `why`. */
static void bad_spec(const char *spec, const char *item, const char *why)
{
    static outcome_t o;
    char var[256];
    snprintf(var, sizeof(var), "FABMEM_FAULTS=%s", spec);
    const char *env[] = {var, NULL};
    run("init", env, &o);
    assert_int_equal(o.n, 1);
    assert_int_equal(o.results[0], CUDA_ERROR_INVALID_VALUE);
    const char *line = strstr(o.log, "error: FABMEM_FAULTS:");
    if (!line || !strstr(line, item) || !strstr(line, why))
        fprintf(stderr, "log was: %s\n", o.log);
    assert_non_null(line);
    assert_non_null(strstr(line, item));
    assert_non_null(strstr(line, why));
}

static void an_unknown_name_fails_cuinit(void **state)
{
    (void)state;
    bad_spec("cuMemCreat:OUT_OF_MEMORY@1", "\"cuMemCreat:OUT_OF_MEMORY@1\"",
             "NAME is no driver entry point");
}

static void a_versioned_name_fails_cuinit(void **state)
{
    (void)state;
    bad_spec("cuMemAlloc_v2:OUT_OF_MEMORY@1", "cuMemAlloc_v2", "base name");
}

static void an_unknown_code_fails_cuinit(void **state)
{
    (void)state;
    bad_spec("cuMemCreate:OUT_OF_MEMORY@1,cuMemCreate:NO_SUCH_ERROR@1",
             "item 2 \"cuMemCreate:NO_SUCH_ERROR@1\"", "CODE is no CUresult name");
}

static void success_is_no_fault_and_fails_cuinit(void **state)
{
    (void)state;
    bad_spec("cuMemCreate:CUDA_SUCCESS@1", "cuMemCreate:CUDA_SUCCESS@1", "no fault");
}

static void a_bad_when_fails_cuinit(void **state)
{
    (void)state;
    bad_spec("cuMemCreate:OUT_OF_MEMORY@x", "cuMemCreate:OUT_OF_MEMORY@x", "WHEN must be");
    bad_spec("cuMemCreate:OUT_OF_MEMORY@0", "cuMemCreate:OUT_OF_MEMORY@0", "from 1");
    bad_spec("cuMemCreate:OUT_OF_MEMORY@101%", "@101%", "over 100%");
    bad_spec("cuMemCreate:OUT_OF_MEMORY@", "cuMemCreate:OUT_OF_MEMORY@", "no WHEN");
}

static void an_empty_item_fails_cuinit(void **state)
{
    (void)state;
    bad_spec("cuMemCreate:OUT_OF_MEMORY@1,,cuMemMap:UNKNOWN@1", "item 2", "empty item");
    bad_spec("cuMemCreate:OUT_OF_MEMORY@1,", "item 2", "empty item");
}

static void an_item_without_its_parts_fails_cuinit(void **state)
{
    (void)state;
    bad_spec("cuMemCreate", "\"cuMemCreate\"", "not NAME:CODE@WHEN");
}

static void a_call_that_is_not_injectable_fails_cuinit(void **state)
{
    (void)state;
    bad_spec("cuGetErrorName:UNKNOWN@1", "cuGetErrorName", "not injectable");
}

static const struct CMUnitTest tests[] = {
    cmocka_unit_test(nothing_is_injected_when_faults_is_unset),
    cmocka_unit_test(an_empty_faults_variable_injects_nothing),
    cmocka_unit_test(the_nth_call_fails_and_the_others_run),
    cmocka_unit_test(the_code_comes_back_as_named_with_or_without_prefix),
    cmocka_unit_test(an_injected_call_is_logged_at_info_with_call_code_and_spec),
    cmocka_unit_test(a_spec_for_a_base_name_fails_its_versioned_abi),
    cmocka_unit_test(a_spec_counts_the_ptsz_abi_with_the_legacy_one),
    cmocka_unit_test(a_call_the_driver_makes_inside_another_is_not_counted),
    cmocka_unit_test(an_injected_create_changes_nothing),
    cmocka_unit_test(a_probability_fails_the_same_calls_under_one_seed),
    cmocka_unit_test(another_seed_fails_other_calls),
    cmocka_unit_test(zero_percent_never_fails_and_hundred_percent_always_does),
    cmocka_unit_test(cuinit_itself_can_be_failed_once),
    cmocka_unit_test(an_unknown_name_fails_cuinit),
    cmocka_unit_test(a_versioned_name_fails_cuinit),
    cmocka_unit_test(an_unknown_code_fails_cuinit),
    cmocka_unit_test(success_is_no_fault_and_fails_cuinit),
    cmocka_unit_test(a_bad_when_fails_cuinit),
    cmocka_unit_test(an_empty_item_fails_cuinit),
    cmocka_unit_test(an_item_without_its_parts_fails_cuinit),
    cmocka_unit_test(a_call_that_is_not_injectable_fails_cuinit),
};

static const fab_test_helper_t helpers[] = {
    {"run", helper_run},
};

FAB_TEST_MAIN("cuda", tests, helpers)
