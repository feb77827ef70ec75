/* FABRIC sharing through the daemon, against cuda.h only: a fabric handle's
 * 64 bytes travel over a socket and the peer maps the same pages; NCCL's
 * fallback when the user holds no IMEX channel; the table's fabric rows
 * (no channel, no shared channel, stale, forged and other-domain handles,
 * unreachable peers) and the lifetime rule (a fabric handle holds no
 * reference; a mapping does). Each test starts its own fabmemd with its own
 * temp dir and socket (tests/fabric/daemon_harness.c) and stops it by pid. */
#include "cuda_test.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "../fabric/daemon_harness.h"

#define SIZE (2u << 20)

/* helper "importer": receive a fabric handle, import it, report the status by
 * name; on success check byte 0 is 42, write 43 at byte 1, tear down. */
static int helper_importer(int argc, char **argv, int sock)
{
    (void)argc;
    (void)argv;
    if (argc > 1 && strcmp(argv[1], "nobody") == 0 && getuid() == 0 &&
        (setgid(65534) != 0 || setuid(65534) != 0))
        return 9;
    CUT_HELPER_READY(sock);
    CUmemFabricHandle fh;
    if (fab_test_recv(sock, fh.data, sizeof(fh.data)) != 0)
        return 14;
    CUmemGenericAllocationHandle h;
    CUresult r = cuMemImportFromShareableHandle(&h, &fh, CU_MEM_HANDLE_TYPE_FABRIC);
    if (r == CUDA_SUCCESS) {
        CUdeviceptr ptr;
        HELPER_CU(cuMemAddressReserve(&ptr, SIZE, 0, 0, 0), 15);
        HELPER_CU(cuMemMap(ptr, SIZE, 0, h, 0), 16);
        CUmemAccessDesc d = cut_access(0, CU_MEM_ACCESS_FLAGS_PROT_READWRITE);
        HELPER_CU(cuMemSetAccess(ptr, SIZE, &d, 1), 17);
        unsigned char b = 0;
        HELPER_CU(cuMemcpyDtoH(&b, ptr, 1), 18);
        if (b != 42)
            return 19;
        HELPER_CU(cuMemsetD8(ptr + 1, 43, 1), 20);
        HELPER_CU(cuMemUnmap(ptr, SIZE), 21);
        HELPER_CU(cuMemRelease(h), 22);
        HELPER_CU(cuMemAddressFree(ptr, SIZE), 23);
    }
    const char *name = "?";
    cuGetErrorName(r, &name);
    return fab_test_send_word(sock, name) == 0 ? 0 : 24;
}

/* helper "devices": what cuInit shows a process that has no config of its
 * own, only FABMEM_SOCKET and FABMEM_NODE (extra args: env to unset). Sends
 * "count=N version=V fabric=F name=<device 0's name>", or "init=<error>". */
static int helper_devices(int argc, char **argv, int sock)
{
    for (int i = 1; i < argc; i++)
        unsetenv(argv[i]);
    CUresult r = cuInit(0);
    if (r != CUDA_SUCCESS) {
        const char *name = "?";
        cuGetErrorName(r, &name);
        char word[128];
        snprintf(word, sizeof(word), "init=%s", name);
        return fab_test_send_word(sock, word) == 0 ? 0 : 10;
    }
    int count = 0, version = 0, fabric = -1;
    char name[128];
    HELPER_CU(cuDeviceGetCount(&count), 11);
    HELPER_CU(cuDriverGetVersion(&version), 12);
    HELPER_CU(cuDeviceGetAttribute(&fabric, CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_FABRIC_SUPPORTED, 0),
              13);
    HELPER_CU(cuDeviceGetName(name, sizeof(name), 0), 14);
    char word[255];
    snprintf(word, sizeof(word), "count=%d version=%d fabric=%d name=%s", count, version, fabric,
             name);
    return fab_test_send_word(sock, word) == 0 ? 0 : 15;
}

/* Run the "devices" helper with env and expect its word. */
static void devices_in_peer(const char *const *args, const char *const *env, const char *want)
{
    fab_test_child_t child;
    assert_int_equal(fab_test_spawn("devices", args, env, &child), 0);
    assert_int_equal(fab_test_expect_word(child.sock, want), 0);
    assert_int_equal(fab_test_reap(&child), 0);
}

typedef struct exported {
    CUmemGenericAllocationHandle h;
    CUdeviceptr ptr;
    CUmemFabricHandle fh;
} exported_t;

/* Create a FABRIC allocation on device 0, map it, write 42, export it. */
static exported_t export_fabric(unsigned extra_types)
{
    exported_t e;
    cut_init(0);
    CUmemAllocationProp prop = cut_prop(CU_MEM_HANDLE_TYPE_FABRIC | extra_types, 0);
    CU_OK(cuMemCreate(&e.h, SIZE, &prop, 0));
    e.ptr = cut_map_rw(e.h, SIZE);
    CU_OK(cuMemsetD8(e.ptr, 42, 1));
    CU_OK(cuMemExportToShareableHandle(&e.fh, e.h, CU_MEM_HANDLE_TYPE_FABRIC, 0));
    return e;
}

/* Spawn the importer (with extra env), send it fh, expect the status word. */
static void import_in_peer(const CUmemFabricHandle *fh, const char *const *args,
                           const char *const *env, const char *want)
{
    fab_test_child_t child;
    assert_int_equal(fab_test_spawn("importer", args, env, &child), 0);
    assert_int_equal(fab_test_expect_word(child.sock, "ready"), 0);
    assert_int_equal(fab_test_send(child.sock, fh->data, sizeof(fh->data)), 0);
    assert_int_equal(fab_test_expect_word(child.sock, want), 0);
    assert_int_equal(fab_test_reap(&child), 0);
}

static void teardown_export(exported_t *e, bool released)
{
    if (!released)
        CU_OK(cuMemRelease(e->h));
    cut_unmap_free(e->ptr, SIZE);
}

static void fabric_handle_shares_memory_between_processes(void **state)
{
    (void)state;
    assert_non_null(fab_test_daemon_start(NULL, NULL));
    exported_t e = export_fabric(0);
    int fabric = 0;
    CU_OK(cuDeviceGetAttribute(&fabric, CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_FABRIC_SUPPORTED, 0));
    assert_int_equal(fabric, 1); /* what NCCL asks before it tries */
    import_in_peer(&e.fh, NULL, NULL, "CUDA_SUCCESS");
    unsigned char b = 0;
    CU_OK(cuMemcpyDtoH(&b, e.ptr + 1, 1));
    assert_int_equal(b, 43); /* the peer's write, in the very same pages */
    unsigned long long allowed = 0;
    CU_OK(cuPointerGetAttribute(&allowed, CU_POINTER_ATTRIBUTE_ALLOWED_HANDLE_TYPES, e.ptr));
    assert_int_equal(allowed, CU_MEM_HANDLE_TYPE_FABRIC);
    teardown_export(&e, false);
}

static void nccl_fallback_drops_fabric_without_a_channel(void **state)
{
    (void)state;
    /* A config that gives no IMEX channel to anyone. */
    assert_non_null(fab_test_daemon_start("[driver]\nversion = 13000\n", NULL));
    cut_init(0);
    int fabric = 0;
    CU_OK(cuDeviceGetAttribute(&fabric, CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_FABRIC_SUPPORTED, 0));
    assert_int_equal(fabric, 1); /* the attribute says yes ... */
    CUmemAllocationProp prop =
        cut_prop(CU_MEM_HANDLE_TYPE_FABRIC | CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0);
    CUmemGenericAllocationHandle h;
    CUresult r = cuMemCreate(&h, SIZE, &prop, 0);
    assert_int_equal(r, CUDA_ERROR_NOT_PERMITTED); /* ... cuMemCreate says no */
    /* NCCL: on NOT_PERMITTED or NOT_SUPPORTED, drop FABRIC and retry. */
    if (r == CUDA_ERROR_NOT_PERMITTED || r == CUDA_ERROR_NOT_SUPPORTED) {
        prop.requestedHandleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
        r = cuMemCreate(&h, SIZE, &prop, 0);
    }
    CU_OK(r);
    CUdeviceptr ptr = cut_map_rw(h, SIZE);
    int fd = -1;
    CU_OK(cuMemExportToShareableHandle(&fd, h, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0));
    close(fd);
    CUmemFabricHandle fh;
    CU_IS(cuMemExportToShareableHandle(&fh, h, CU_MEM_HANDLE_TYPE_FABRIC, 0),
          CUDA_ERROR_INVALID_VALUE);
    CU_OK(cuMemRelease(h));
    cut_unmap_free(ptr, SIZE);
}

static void fabric_and_posix_from_one_allocation(void **state)
{
    (void)state;
    assert_non_null(fab_test_daemon_start(NULL, NULL));
    exported_t e = export_fabric(CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR);
    int fd = -1;
    CU_OK(cuMemExportToShareableHandle(&fd, e.h, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0));
    CUmemGenericAllocationHandle other;
    CU_OK(cuMemImportFromShareableHandle(&other, (void *)(uintptr_t)fd,
                                         CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR));
    close(fd);
    CUdeviceptr p2 = cut_map_rw(other, SIZE);
    unsigned char b = 0;
    CU_OK(cuMemcpyDtoH(&b, p2, 1));
    assert_int_equal(b, 42);
    CU_OK(cuMemRelease(other));
    cut_unmap_free(p2, SIZE);
    import_in_peer(&e.fh, NULL, NULL, "CUDA_SUCCESS");
    teardown_export(&e, false);
}

static void release_before_import_leaves_a_stale_handle(void **state)
{
    (void)state;
    assert_non_null(fab_test_daemon_start(NULL, NULL));
    exported_t e = export_fabric(0);
    /* The fabric handle names the memory but holds no reference. */
    CU_OK(cuMemRelease(e.h));
    cut_unmap_free(e.ptr, SIZE);
    import_in_peer(&e.fh, NULL, NULL, "CUDA_ERROR_INVALID_HANDLE");
}

static void a_live_mapping_keeps_fabric_memory(void **state)
{
    (void)state;
    assert_non_null(fab_test_daemon_start(NULL, NULL));
    exported_t e = export_fabric(0);
    CU_OK(cuMemRelease(e.h)); /* the mapping still holds the memory */
    import_in_peer(&e.fh, NULL, NULL, "CUDA_SUCCESS");
    unsigned char b = 0;
    CU_OK(cuMemcpyDtoH(&b, e.ptr + 1, 1));
    assert_int_equal(b, 43);
    teardown_export(&e, true);
}

static void forged_fabric_handle_is_refused(void **state)
{
    (void)state;
    assert_non_null(fab_test_daemon_start(NULL, NULL));
    exported_t e = export_fabric(0);
    CUmemFabricHandle forged = e.fh;
    forged.data[20] ^= 0x01;
    CUmemGenericAllocationHandle h;
    CU_IS(cuMemImportFromShareableHandle(&h, &forged, CU_MEM_HANDLE_TYPE_FABRIC),
          CUDA_ERROR_INVALID_HANDLE);
    memset(&forged, 0, sizeof(forged));
    CU_IS(cuMemImportFromShareableHandle(&h, &forged, CU_MEM_HANDLE_TYPE_FABRIC),
          CUDA_ERROR_INVALID_HANDLE);
    import_in_peer(&e.fh, NULL, NULL, "CUDA_SUCCESS"); /* the genuine one still works */
    teardown_export(&e, false);
}

static const char topology_config[] =
    "[channel 0]\nuids = 0\n"
    "[node a]\nimex_domain = one\ncluster_uuid = 11111111-2222-3333-4444-555555555555\n"
    "clique_id = 1\ngpus = 2\n"
    "[node b]\nimex_domain = one\ncluster_uuid = 11111111-2222-3333-4444-555555555555\n"
    "clique_id = 1\ngpus = 2\n"
    "[node other-domain]\nimex_domain = two\n"
    "cluster_uuid = 11111111-2222-3333-4444-555555555555\nclique_id = 1\n"
    "[node other-clique]\nimex_domain = one\n"
    "cluster_uuid = 11111111-2222-3333-4444-555555555555\nclique_id = 2\n";

static void topology_decides_who_may_import(void **state)
{
    (void)state;
    assert_non_null(fab_test_daemon_start(topology_config, NULL));
    setenv("FABMEM_NODE", "a", 1);
    exported_t e = export_fabric(0);
    int count = 0;
    CU_OK(cuDeviceGetCount(&count));
    assert_int_equal(count, 2); /* node a's devices, from the daemon's config */
    const char *const same[] = {"FABMEM_NODE=b", NULL};
    import_in_peer(&e.fh, NULL, same, "CUDA_SUCCESS");
    const char *const domain[] = {"FABMEM_NODE=other-domain", NULL};
    import_in_peer(&e.fh, NULL, domain, "CUDA_ERROR_INVALID_HANDLE");
    const char *const clique[] = {"FABMEM_NODE=other-clique", NULL};
    import_in_peer(&e.fh, NULL, clique, "CUDA_ERROR_NOT_SUPPORTED");
    teardown_export(&e, false);
}

static void import_without_a_shared_channel_is_not_permitted(void **state)
{
    (void)state;
    if (getuid() != 0)
        fab_test_skip("needs a second user: drops privileges");
    assert_non_null(fab_test_daemon_start(
        "[daemon]\nsocket_mode = 0666\n[channel 0]\nuids = 0\n[channel 1]\nuids = 65534\n", NULL));
    exported_t e = export_fabric(0);
    const char *const args[] = {"nobody", NULL};
    import_in_peer(&e.fh, args, NULL, "CUDA_ERROR_NOT_PERMITTED");
    teardown_export(&e, false);
}

static void import_sharing_a_channel_across_users(void **state)
{
    (void)state;
    if (getuid() != 0)
        fab_test_skip("needs root for a second uid");
    assert_non_null(fab_test_daemon_start(
        "[daemon]\nsocket_mode = 0666\n[channel 0]\nuids = 0, 65534\n", NULL));
    exported_t e = export_fabric(0);
    const char *const args[] = {"nobody", NULL};
    import_in_peer(&e.fh, args, NULL, "CUDA_SUCCESS");
    teardown_export(&e, false);
}

/* ---- a stalled daemon ---------------------------------------------------------
 *
 * Threads whose calls need the daemon (a FABRIC create, a FABRIC export, the
 * release of FABRIC memory's last reference) are stuck while it is stopped;
 * calls that need no daemon, in other threads, must not wait for them. A
 * watchdog turns a wait into a failure (it resumes the daemon so that nothing
 * hangs), and the teardown resumes the daemon and joins every thread whatever
 * happened. */

typedef struct stalled_call {
    pthread_t thread;
    bool started;
    pid_t tid; /* under stall.mu; 0 until the thread runs */
    CUresult result;
} stalled_call_t;

enum { CALL_CREATE, CALL_EXPORT, CALL_RELEASE, NCALLS };

static struct {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    pid_t daemon;
    bool stopped;
    stalled_call_t calls[NCALLS];
    CUmemGenericAllocationHandle created, exported, released;
    CUmemFabricHandle fh;
    pthread_t watchdog;
    bool watchdog_started, local_done, watchdog_fired;
} stall = {.mu = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER};

static void stall_started(stalled_call_t *c)
{
    pthread_mutex_lock(&stall.mu);
    c->tid = (pid_t)syscall(SYS_gettid);
    pthread_cond_broadcast(&stall.cv);
    pthread_mutex_unlock(&stall.mu);
}

static void *stall_create(void *arg)
{
    stall_started(arg);
    CUmemAllocationProp prop = cut_prop(CU_MEM_HANDLE_TYPE_FABRIC, 0);
    stall.calls[CALL_CREATE].result = cuMemCreate(&stall.created, SIZE, &prop, 0);
    return NULL;
}

static void *stall_export(void *arg)
{
    stall_started(arg);
    stall.calls[CALL_EXPORT].result =
        cuMemExportToShareableHandle(&stall.fh, stall.exported, CU_MEM_HANDLE_TYPE_FABRIC, 0);
    return NULL;
}

static void *stall_release(void *arg)
{
    stall_started(arg);
    stall.calls[CALL_RELEASE].result = cuMemRelease(stall.released);
    return NULL;
}

static void deadline_in(struct timespec *t, int ms)
{
    clock_gettime(CLOCK_REALTIME, t);
    t->tv_sec += ms / 1000;
    t->tv_nsec += (long)(ms % 1000) * 1000000L;
    if (t->tv_nsec >= 1000000000L) {
        t->tv_sec++;
        t->tv_nsec -= 1000000000L;
    }
}

static bool past(const struct timespec *t)
{
    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    return now.tv_sec > t->tv_sec || (now.tv_sec == t->tv_sec && now.tv_nsec >= t->tv_nsec);
}

static void pause_a_moment(void)
{
    struct timespec ms = {0, 1000000L};
    nanosleep(&ms, NULL);
}

/* The system call thread tid is blocked in (/proc/.../syscall's first field),
 * or -1 when it is running or gone. */
static long blocked_in(pid_t tid)
{
    char path[64], text[64] = "";
    snprintf(path, sizeof(path), "/proc/self/task/%ld/syscall", (long)tid);
    FILE *f = fopen(path, "r");
    if (!f)
        return -1;
    bool got = fgets(text, sizeof(text), f) != NULL;
    fclose(f);
    char *end;
    long nr = got ? strtol(text, &end, 10) : -1;
    return got && end != text ? nr : -1;
}

/* Waiting for the daemon's reply. */
static bool in_daemon_io(pid_t tid)
{
    long nr = blocked_in(tid);
#ifdef SYS_poll
    if (nr == SYS_poll)
        return true;
#endif
    return nr == SYS_ppoll || nr == SYS_recvmsg;
}

/* Waiting for a lock (the client's, held by the thread in daemon I/O). */
static bool on_a_lock(pid_t tid)
{
    return blocked_in(tid) == SYS_futex;
}

/* Start call k in its own thread; return once blocked(tid) holds. */
static void start_stalled(int k, void *(*fn)(void *), bool (*blocked)(pid_t))
{
    stalled_call_t *c = &stall.calls[k];
    assert_int_equal(pthread_create(&c->thread, NULL, fn, c), 0);
    c->started = true;
    struct timespec deadline;
    deadline_in(&deadline, FAB_TEST_TIMEOUT_MS);
    pthread_mutex_lock(&stall.mu);
    int rc = 0;
    while (c->tid == 0 && rc != ETIMEDOUT)
        rc = pthread_cond_timedwait(&stall.cv, &stall.mu, &deadline);
    pid_t tid = c->tid;
    pthread_mutex_unlock(&stall.mu);
    assert_true(tid != 0);
    while (!blocked(tid)) {
        if (past(&deadline))
            fail_msg("call %d never blocked (in syscall %ld)", k, blocked_in(tid));
        pause_a_moment();
    }
}

static void wait_until_stopped(pid_t pid)
{
    char path[64];
    snprintf(path, sizeof(path), "/proc/%ld/stat", (long)pid);
    struct timespec deadline;
    deadline_in(&deadline, FAB_TEST_TIMEOUT_MS);
    for (;;) {
        char text[512] = "";
        FILE *f = fopen(path, "r");
        assert_non_null(f);
        bool got = fgets(text, sizeof(text), f) != NULL;
        fclose(f);
        const char *paren = got ? strrchr(text, ')') : NULL;
        if (paren && paren[1] == ' ' && paren[2] == 'T')
            return;
        if (past(&deadline))
            fail_msg("the daemon never stopped: %s", text);
        pause_a_moment();
    }
}

static void resume_daemon(void)
{
    if (stall.stopped) {
        kill(stall.daemon, SIGCONT);
        stall.stopped = false;
    }
}

/* Give the local work 10 s; past that it waited for the daemon. */
static void *stall_watchdog(void *arg)
{
    (void)arg;
    struct timespec deadline;
    deadline_in(&deadline, 10000);
    pthread_mutex_lock(&stall.mu);
    int rc = 0;
    while (!stall.local_done && rc != ETIMEDOUT)
        rc = pthread_cond_timedwait(&stall.cv, &stall.mu, &deadline);
    if (!stall.local_done) {
        stall.watchdog_fired = true;
        kill(stall.daemon, SIGCONT);
    }
    pthread_mutex_unlock(&stall.mu);
    return NULL;
}

static void local_done(void)
{
    pthread_mutex_lock(&stall.mu);
    stall.local_done = true;
    pthread_cond_broadcast(&stall.cv);
    pthread_mutex_unlock(&stall.mu);
}

static int stall_teardown(void **state)
{
    local_done();
    resume_daemon();
    if (stall.watchdog_started)
        pthread_join(stall.watchdog, NULL);
    stall.watchdog_started = false;
    for (int k = 0; k < NCALLS; k++) {
        if (stall.calls[k].started)
            pthread_join(stall.calls[k].thread, NULL);
        stall.calls[k].started = false;
    }
    return fab_test_teardown(state);
}

/* The whole local VMM cycle, none of it the daemon's business. */
static CUresult local_cycle(void)
{
    CUmemAllocationProp prop = cut_prop(CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0);
    CUmemGenericAllocationHandle h;
    CUdeviceptr p;
    CUmemAccessDesc d = cut_access(0, CU_MEM_ACCESS_FLAGS_PROT_READWRITE);
    CUresult r = cuMemCreate(&h, SIZE, &prop, 0);
    if (r == CUDA_SUCCESS)
        r = cuMemAddressReserve(&p, SIZE, 0, 0, 0);
    if (r == CUDA_SUCCESS)
        r = cuMemMap(p, SIZE, 0, h, 0);
    if (r == CUDA_SUCCESS)
        r = cuMemSetAccess(p, SIZE, &d, 1);
    if (r == CUDA_SUCCESS)
        r = cuMemsetD32(p, 7, SIZE / 4);
    if (r == CUDA_SUCCESS)
        r = cuMemUnmap(p, SIZE);
    if (r == CUDA_SUCCESS)
        r = cuMemRelease(h);
    if (r == CUDA_SUCCESS)
        r = cuMemAddressFree(p, SIZE);
    return r;
}

static void a_stalled_daemon_stalls_only_the_calls_that_need_it(void **state)
{
    (void)state;
    /* The client's reply deadline must not end the stalled calls first. */
    setenv("FABMEM_TIMEOUT_MS", "60000", 1);
    fab_test_daemon_t *d = fab_test_daemon_start(NULL, NULL);
    assert_non_null(d);
    stall.daemon = d->pid;
    cut_init(0);
    /* FABRIC memory first, so the client is connected before the stop. */
    CUmemAllocationProp fabric = cut_prop(CU_MEM_HANDLE_TYPE_FABRIC, 0);
    CU_OK(cuMemCreate(&stall.exported, SIZE, &fabric, 0));
    CU_OK(cuMemCreate(&stall.released, SIZE, &fabric, 0));
    CUmemAllocationProp posix = cut_prop(CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0);
    CUmemGenericAllocationHandle local;
    CU_OK(cuMemCreate(&local, SIZE, &posix, 0));
    CUdeviceptr ptr = cut_map_rw(local, SIZE);

    assert_int_equal(kill(d->pid, SIGSTOP), 0);
    stall.stopped = true;
    wait_until_stopped(d->pid);
    start_stalled(CALL_CREATE, stall_create, in_daemon_io);
    /* These two wait behind it for the client. */
    start_stalled(CALL_EXPORT, stall_export, on_a_lock);
    start_stalled(CALL_RELEASE, stall_release, on_a_lock);

    assert_int_equal(pthread_create(&stall.watchdog, NULL, stall_watchdog, NULL), 0);
    stall.watchdog_started = true;
    CUresult set = cuMemsetD8(ptr, 0x3c, SIZE);
    CUresult cycle = local_cycle();
    /* The export in flight keeps the memory, not the handle: released once,
     * it is gone for every caller, the exporter's pin notwithstanding. */
    CUresult release = cuMemRelease(stall.exported);
    CUresult again = cuMemRelease(stall.exported);
    local_done();
    bool still = in_daemon_io(stall.calls[CALL_CREATE].tid) &&
                 on_a_lock(stall.calls[CALL_EXPORT].tid) &&
                 on_a_lock(stall.calls[CALL_RELEASE].tid);
    pthread_join(stall.watchdog, NULL);
    stall.watchdog_started = false;
    assert_false(stall.watchdog_fired); /* the local calls waited for the daemon */
    CU_OK(set);
    CU_OK(cycle);
    CU_OK(release);
    CU_IS(again, CUDA_ERROR_INVALID_VALUE);
    assert_true(still);

    resume_daemon();
    for (int k = 0; k < NCALLS; k++) {
        pthread_join(stall.calls[k].thread, NULL);
        stall.calls[k].started = false;
        CU_OK(stall.calls[k].result);
    }
    unsigned char b = 0;
    CU_OK(cuMemcpyDtoH(&b, ptr + SIZE - 1, 1));
    assert_int_equal(b, 0x3c);
    import_in_peer(&stall.fh, NULL, NULL, "CUDA_ERROR_INVALID_HANDLE"); /* released since */
    CU_OK(cuMemRelease(stall.created));
    CU_OK(cuMemRelease(local));
    cut_unmap_free(ptr, SIZE);
}

/* The quick start of docs/fabric.md, as written: a daemon serving
 * examples/nvl72.ini, and a program that names only the socket and its node
 * sees that node's 4 devices, their name and the config's driver version. */
static void quick_start_program_on_tray07_sees_four_devices(void **state)
{
    (void)state;
    assert_non_null(fab_test_daemon_start(fab_test_example_config("nvl72.ini"), NULL));
    const char *const unset[] = {"FABMEM_CONFIG", NULL};
    const char *const env[] = {"FABMEM_NODE=tray07", NULL};
    devices_in_peer(unset, env, "count=4 version=13000 fabric=1 name=fabmem GB200 (emulated)");
}

/* The daemon's topology wins over a local config that says otherwise: devices,
 * their name and the driver version all come from the daemon. */
static void devices_and_version_come_from_the_daemon_not_the_local_config(void **state)
{
    (void)state;
    assert_non_null(fab_test_daemon_start(
        "[driver]\nversion = 12080\n[channel 0]\nuids = 0\n"
        "[node n]\ngpus = 3\ngpu_name = the daemon's\n", NULL));
    char *dir = NULL;
    char *path = fab_test_config_file("[driver]\nversion = 13000\n[node n]\ngpus = 5\n"
                                      "gpu_name = local\n", &dir);
    char config_env[600];
    snprintf(config_env, sizeof(config_env), "FABMEM_CONFIG=%s", path);
    free(path);
    const char *const env[] = {config_env, NULL};
    devices_in_peer(NULL, env, "count=3 version=12080 fabric=1 name=the daemon's");
    fab_test_rmtree(dir);
    free(dir);
}

/* With no daemon answering and none allowed to start, the local config gives
 * the devices, and only what needs no daemon is offered: FABRIC handles are
 * not supported (so NCCL-style code falls back to POSIX_FD), which works. */
static void without_a_daemon_the_local_config_offers_posix_fd_only(void **state)
{
    (void)state;
    char *dir = fab_test_tempdir();
    assert_non_null(dir);
    char sock_env[600];
    snprintf(sock_env, sizeof(sock_env), "FABMEM_SOCKET=%s/none/fabmemd.sock", dir);
    const char *const env[] = {sock_env, "FABMEM_NO_AUTOSTART=1", NULL};
    devices_in_peer(NULL, env, "count=8 version=13000 fabric=0 name=fabmem H100 (emulated)");
    setenv("FABMEM_SOCKET", strchr(sock_env, '=') + 1, 1);
    cut_init(0);
    CUmemAllocationProp prop = cut_prop(CU_MEM_HANDLE_TYPE_FABRIC, 0);
    CUmemGenericAllocationHandle h;
    CU_IS(cuMemCreate(&h, SIZE, &prop, 0), CUDA_ERROR_NOT_SUPPORTED);
    CUmemFabricHandle fh;
    memset(&fh, 0, sizeof(fh));
    CU_IS(cuMemImportFromShareableHandle(&h, &fh, CU_MEM_HANDLE_TYPE_FABRIC),
          CUDA_ERROR_NOT_SUPPORTED);
    prop = cut_prop(CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0);
    CU_OK(cuMemCreate(&h, SIZE, &prop, 0));
    CU_OK(cuMemRelease(h));
    fab_test_rmtree(dir);
    free(dir);
}

/* A daemon that answers but knows no node of this name is not a reason to
 * believe another topology: cuInit fails, it does not fall back. */
static void a_node_the_daemon_lacks_fails_cuinit(void **state)
{
    (void)state;
    assert_non_null(fab_test_daemon_start(NULL, NULL));
    const char *const env[] = {"FABMEM_NODE=no-such-node", NULL};
    devices_in_peer(NULL, env, "init=CUDA_ERROR_NO_DEVICE");
}

/* A node's "attribute.NAME" keys have the last word on what
 * cuDeviceGetAttribute answers: the attribute can promise FABRIC while the
 * node's handle types refuse it, as users meet on real machines. */
static void config_attributes_override_what_the_device_answers(void **state)
{
    (void)state;
    assert_non_null(fab_test_daemon_start("[node tray]\ngpus = 2\nhandle_types = posix_fd\n"
                                          "attribute.HANDLE_TYPE_FABRIC_SUPPORTED = 1\n"
                                          "attribute.HOST_NUMA_ID = 3\n"
                                          "attribute.HOST_NUMA_ID = -7\n",
                                          NULL));
    cut_init(0);
    int v = 0;
    CU_OK(cuDeviceGetAttribute(&v, CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_FABRIC_SUPPORTED, 1));
    assert_int_equal(v, 1); /* the attribute says yes ... */
    CU_OK(cuDeviceGetAttribute(&v, CU_DEVICE_ATTRIBUTE_HOST_NUMA_ID, 0));
    assert_int_equal(v, -7); /* the later key wins */
    CU_OK(cuDeviceGetAttribute(&v, CU_DEVICE_ATTRIBUTE_WARP_SIZE, 0));
    assert_int_equal(v, 32); /* the rest are the emulation's own */
    CUmemAllocationProp prop = cut_prop(CU_MEM_HANDLE_TYPE_FABRIC, 0);
    CUmemGenericAllocationHandle h;
    CU_IS(cuMemCreate(&h, SIZE, &prop, 0), CUDA_ERROR_NOT_SUPPORTED); /* ... creation says no */
}

static const struct CMUnitTest tests[] = {
    cmocka_unit_test_teardown(fabric_handle_shares_memory_between_processes, fab_test_teardown),
    cmocka_unit_test_teardown(nccl_fallback_drops_fabric_without_a_channel, fab_test_teardown),
    cmocka_unit_test_teardown(fabric_and_posix_from_one_allocation, fab_test_teardown),
    cmocka_unit_test_teardown(release_before_import_leaves_a_stale_handle, fab_test_teardown),
    cmocka_unit_test_teardown(a_live_mapping_keeps_fabric_memory, fab_test_teardown),
    cmocka_unit_test_teardown(forged_fabric_handle_is_refused, fab_test_teardown),
    cmocka_unit_test_teardown(topology_decides_who_may_import, fab_test_teardown),
    cmocka_unit_test_teardown(quick_start_program_on_tray07_sees_four_devices, fab_test_teardown),
    cmocka_unit_test_teardown(devices_and_version_come_from_the_daemon_not_the_local_config,
                              fab_test_teardown),
    cmocka_unit_test_teardown(without_a_daemon_the_local_config_offers_posix_fd_only,
                              fab_test_teardown),
    cmocka_unit_test_teardown(a_node_the_daemon_lacks_fails_cuinit, fab_test_teardown),
    cmocka_unit_test_teardown(config_attributes_override_what_the_device_answers,
                              fab_test_teardown),
    cmocka_unit_test_teardown(import_without_a_shared_channel_is_not_permitted, fab_test_teardown),
    cmocka_unit_test_teardown(import_sharing_a_channel_across_users, fab_test_teardown),
    cmocka_unit_test_teardown(a_stalled_daemon_stalls_only_the_calls_that_need_it,
                              stall_teardown),
};

static const fab_test_helper_t helpers[] = {
    {"importer", helper_importer},
    {"devices", helper_devices},
};

FAB_TEST_MAIN("cuda", tests, helpers)
