/* The trust boundary, tried as an attacker would: a socket planted by another
 * user, a daemon of another uid, a read-only import reopened writable, a
 * memfd truncated under its exporter, ADOPT with forged creator claims, freed
 * uuids, files that are not sealed memfds and leased memory, an IPC handle
 * another uid was given (it opens; only its publisher withdraws); and the
 * correctness of the restart path (stale region ids, importers back before
 * their creator), a client out of fds, fork, and a daemon that dies while a
 * client waits in its backlog. Tests that need a second uid run only as root
 * and drop a helper to uid 65534. */
#include "daemon_harness.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "fabmem.h"
#include "src/common/memfd.h"
#include "src/common/proto.h"

#define MIB2 (2u << 20)
#define NOBODY 65534

static fab_client_t *connect_ok(void)
{
    fab_client_options_t options = {NULL, NULL, 0};
    fab_client_t *client = NULL;
    assert_int_equal(fab_client_connect(&options, &client), FAB_SUCCESS);
    return client;
}

static fab_region_t *allocate(fab_client_t *client, fab_access_t peer, fab_handle_t *handle_out)
{
    fab_alloc_props_t props = fab_alloc_props_read_write(0, MIB2);
    props.peer_access = peer;
    fab_region_t *region = NULL;
    assert_int_equal(fab_client_allocate(client, &props, &region), FAB_SUCCESS);
    if (handle_out != NULL)
        assert_int_equal(fab_region_export(region, handle_out), FAB_SUCCESS);
    return region;
}

static int drop_to_nobody(void)
{
    return getuid() == 0 && (setgid(NOBODY) != 0 || setuid(NOBODY) != 0) ? -1 : 0;
}

static void skip_unless_root(void)
{
    if (getuid() != 0)
        fab_test_skip("needs a second uid");
}

static int under_valgrind(void)
{
    const char *launcher = getenv("FABTEST_DAEMON_LAUNCHER");
    return launcher != NULL && *launcher != '\0';
}

/* ---- raw protocol, to speak as a hostile or a bare client ------------------ */

/* ALLOC over a raw connection: the handle, the creator token and the memfd. */
static void raw_alloc(int sock, fab_handle_t *handle_out, uint8_t token_out[FAB__TOKEN_BYTES],
                      int *fd_out)
{
    fab__request_t alloc = {.type = FAB__MSG_ALLOC};
    alloc.u.alloc.size = MIB2;
    alloc.u.alloc.peer_access = FAB_ACCESS_READ_WRITE;
    alloc.u.alloc.handle_type = FAB_HANDLE_TYPE_FABRIC;
    fab__reply_t reply;
    assert_int_equal(fab_test_raw_call(sock, &alloc, -1, &reply, fd_out), FAB_SUCCESS);
    assert_true(*fd_out >= 0);
    *handle_out = reply.u.alloc.handle;
    memcpy(token_out, reply.u.alloc.token, FAB__TOKEN_BYTES);
}

static int sealed_memfd(void)
{
    int fd = -1;
    assert_int_equal(fab__memfd_create("attacker", MIB2, &fd), FAB_SUCCESS);
    return fd;
}

/* ---- 1. where the client connects ----------------------------------------- */

/* A socket directory the client must refuse, made by prepare(dir). */
static void expect_socket_dir_refused(void (*prepare)(const char *dir))
{
    char *dir = fab_test_tempdir();
    assert_non_null(dir);
    char sockdir[512], path[600];
    snprintf(sockdir, sizeof(sockdir), "%s/sock", dir);
    snprintf(path, sizeof(path), "%s/fabmemd.sock", sockdir);
    prepare(sockdir);
    fab_client_options_t options = {path, NULL, 0};
    fab_client_t *client = NULL;
    assert_int_equal(fab_client_connect(&options, &client), FAB_ERROR_NOT_PERMITTED);
    options.autostart = 1; /* nor may it start a daemon there */
    assert_int_equal(fab_client_connect(&options, &client), FAB_ERROR_NOT_PERMITTED);
    fab_test_rmtree(dir);
    free(dir);
}

static void make_nobodys_dir(const char *dir)
{
    assert_int_equal(mkdir(dir, 0700), 0);
    assert_int_equal(chown(dir, NOBODY, NOBODY), 0);
}

static void socket_directory_of_another_user_is_refused(void **state)
{
    (void)state;
    skip_unless_root();
    expect_socket_dir_refused(make_nobodys_dir);
}

static void make_symlinked_dir(const char *dir)
{
    char target[512];
    snprintf(target, sizeof(target), "%s.real", dir);
    assert_int_equal(mkdir(target, 0700), 0);
    assert_int_equal(symlink(target, dir), 0);
}

static void symlinked_socket_directory_is_refused(void **state)
{
    (void)state;
    expect_socket_dir_refused(make_symlinked_dir);
}

static void make_world_writable_dir(const char *dir)
{
    assert_int_equal(mkdir(dir, 0700), 0);
    assert_int_equal(chmod(dir, 01777), 0); /* sticky does not help: anyone may create */
}

static void world_writable_socket_directory_is_refused(void **state)
{
    (void)state;
    expect_socket_dir_refused(make_world_writable_dir);
}

static void make_group_writable_dir(const char *dir)
{
    assert_int_equal(mkdir(dir, 0700), 0);
    assert_int_equal(chmod(dir, 0770), 0);
}

static void group_writable_socket_directory_is_refused(void **state)
{
    (void)state;
    expect_socket_dir_refused(make_group_writable_dir);
}

/* helper "impostor" PATH: as root, bind PATH, become uid 65534, listen (the
 * peer credentials are taken then), say ready, and report whether a client
 * sent it anything before leaving. */
static int helper_impostor(int argc, char **argv, int sock)
{
    if (argc < 2)
        return 10;
    int listener = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
    struct sockaddr_un addr;
    if (fab__sockaddr_un(argv[1], &addr) != 0)
        return 10;
    if (listener < 0 || bind(listener, (struct sockaddr *)&addr, sizeof(addr)) != 0 ||
        chmod(argv[1], 0666) != 0 || drop_to_nobody() != 0 || listen(listener, 8) != 0)
        return 11;
    if (fab_test_send_word(sock, "ready") != 0)
        return 12;
    struct pollfd p = {.fd = listener, .events = POLLIN};
    if (poll(&p, 1, FAB_TEST_TIMEOUT_MS) != 1)
        return 13;
    int conn = accept(listener, NULL, NULL);
    char buf[FAB__PROTO_MAX];
    struct pollfd c = {.fd = conn, .events = POLLIN};
    ssize_t n = poll(&c, 1, FAB_TEST_TIMEOUT_MS) == 1 ? recv(conn, buf, sizeof(buf), 0) : -1;
    return fab_test_send_word(sock, n == 0 ? "nothing" : "received") == 0 ? 0 : 14;
}

static void daemon_of_another_user_is_refused(void **state)
{
    (void)state;
    skip_unless_root();
    char *dir = fab_test_tempdir();
    assert_non_null(dir);
    assert_int_equal(chmod(dir, 0755), 0); /* root's, writable by nobody else: allowed */
    char path[512];
    snprintf(path, sizeof(path), "%s/fabmemd.sock", dir);
    const char *args[] = {path, NULL};
    fab_test_child_t child;
    assert_int_equal(fab_test_spawn("impostor", args, NULL, &child), 0);
    assert_int_equal(fab_test_expect_word(child.sock, "ready"), 0);
    fab_client_options_t options = {path, NULL, 0};
    fab_client_t *client = NULL;
    assert_int_equal(fab_client_connect(&options, &client), FAB_ERROR_NOT_PERMITTED);
    /* Refused before a single byte (HELLO) went to it. */
    assert_int_equal(fab_test_expect_word(child.sock, "nothing"), 0);
    assert_int_equal(fab_test_reap(&child), 0);
    fab_test_rmtree(dir);
    free(dir);
}

/* helper "daemon_in" DIR: as uid 65534, run fabmemd on a socket in DIR (a
 * root-owned sticky directory, like /tmp) and report its exit status. */
static int helper_daemon_in(int argc, char **argv, int sock)
{
    if (argc < 2 || drop_to_nobody() != 0)
        return 10;
    char path[512], state[512];
    snprintf(path, sizeof(path), "%s/fabmemd.sock", argv[1]);
    snprintf(state, sizeof(state), "FABMEM_CONFIG=/nonexistent");
    pid_t pid = fork();
    if (pid == 0) {
        int null = open("/dev/null", O_WRONLY);
        dup2(null, 2);
        execl(getenv("FABMEM_DAEMON"), "fabmemd", "--foreground", "--socket", path, (char *)NULL);
        _exit(127);
    }
    int status = 0;
    if (pid < 0 || waitpid(pid, &status, 0) != pid)
        return 11;
    char word[32];
    snprintf(word, sizeof(word), "exit-%d", WIFEXITED(status) ? WEXITSTATUS(status) : 128);
    struct stat st;
    if (lstat(path, &st) == 0)
        snprintf(word, sizeof(word), "listened");
    return fab_test_send_word(sock, word) == 0 ? 0 : 12;
}

static void daemon_refuses_a_shared_sticky_directory(void **state)
{
    (void)state;
    skip_unless_root();
    char *dir = fab_test_tempdir();
    assert_non_null(dir);
    assert_int_equal(chmod(dir, 01777), 0);
    const char *args[] = {dir, NULL};
    fab_test_child_t child;
    assert_int_equal(fab_test_spawn("daemon_in", args, NULL, &child), 0);
    assert_int_equal(fab_test_expect_word(child.sock, "exit-1"), 0);
    assert_int_equal(fab_test_reap(&child), 0);
    fab_test_rmtree(dir);
    free(dir);
}

/* ---- 2, 3. what an fd lets its holder do ----------------------------------- */

/* Whether fd's memory can be had writable through /proc: 0 if refused. */
static int reopen_writable(int fd)
{
    char path[64];
    snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
    int rw = open(path, O_RDWR | O_CLOEXEC);
    if (rw >= 0) {
        close(rw);
        return 1;
    }
    return errno == EACCES ? 0 : 2;
}

/* Import handle read-only and try to get write access to it every way. */
static const char *read_only_import_attack(fab_client_t *client, const fab_handle_t *handle)
{
    fab_region_t *region = NULL;
    if (fab_client_import(client, handle, 0, &region) != FAB_SUCCESS)
        return "import-failed";
    const char *verdict = "refused";
    int fd = fab_region_fd(region);
    if (fab_region_access(region) != FAB_ACCESS_READ_ONLY)
        verdict = "not-read-only";
    else if (reopen_writable(fd) != 0)
        verdict = "reopened-writable";
    else if (mmap(NULL, MIB2, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0) != MAP_FAILED)
        verdict = "mapped-writable";
    fab_region_release(region);
    return verdict;
}

/* helper "ro_importer": as uid 65534, import the handle it is sent. */
static int helper_ro_importer(int argc, char **argv, int sock)
{
    (void)argc;
    (void)argv;
    if (drop_to_nobody() != 0)
        return 10;
    fab_client_t *client = NULL;
    fab_handle_t handle;
    if (fab_client_connect(NULL, &client) != FAB_SUCCESS ||
        fab_test_send_word(sock, "ready") != 0 ||
        fab_test_recv(sock, handle.bytes, sizeof(handle.bytes)) != 0)
        return 11;
    const char *verdict = read_only_import_attack(client, &handle);
    fab_client_close(client);
    return fab_test_send_word(sock, verdict) == 0 ? 0 : 12;
}

static void read_only_import_cannot_be_reopened_writable_by_another_uid(void **state)
{
    (void)state;
    skip_unless_root();
    assert_non_null(fab_test_daemon_start("[daemon]\nsocket_mode = 0666\n[channel 0]\nuids = 0, 65534\n",
                                      NULL));
    fab_client_t *client = connect_ok();
    fab_handle_t handle;
    fab_region_t *region = allocate(client, FAB_ACCESS_READ_ONLY, &handle);
    fab_test_child_t child;
    assert_int_equal(fab_test_spawn("ro_importer", NULL, NULL, &child), 0);
    assert_int_equal(fab_test_expect_word(child.sock, "ready"), 0);
    assert_int_equal(fab_test_send(child.sock, handle.bytes, sizeof(handle.bytes)), 0);
    assert_int_equal(fab_test_expect_word(child.sock, "refused"), 0);
    assert_int_equal(fab_test_reap(&child), 0);
    fab_region_release(region);
    assert_int_equal(fab_client_close(client), FAB_SUCCESS);
}

/* helper "same_uid": as uid 65534, run a daemon of our own and be both
 * exporter and read-only importer, all as one uid. */
static int helper_same_uid(int argc, char **argv, int sock)
{
    (void)argc;
    (void)argv;
    if (drop_to_nobody() != 0)
        return 10;
    fab_test_daemon_t *daemon = fab_test_daemon_start(NULL, NULL);
    if (daemon == NULL)
        return 11;
    fab_client_options_t options = {NULL, NULL, 0};
    fab_client_t *exporter = NULL, *importer = NULL;
    fab_alloc_props_t props = fab_alloc_props_read_write(0, MIB2);
    props.peer_access = FAB_ACCESS_READ_ONLY;
    fab_region_t *region = NULL;
    fab_handle_t handle;
    const char *verdict = "setup-failed";
    if (fab_client_connect(&options, &exporter) == FAB_SUCCESS &&
        fab_client_connect(&options, &importer) == FAB_SUCCESS &&
        fab_client_allocate(exporter, &props, &region) == FAB_SUCCESS &&
        fab_region_export(region, &handle) == FAB_SUCCESS)
        verdict = read_only_import_attack(importer, &handle);
    if (region != NULL)
        fab_region_release(region);
    fab_client_close(importer);
    fab_client_close(exporter);
    int stopped = fab_test_daemon_stop(daemon);
    fab_test_teardown(NULL);
    if (stopped != 0)
        return 13;
    return fab_test_send_word(sock, verdict) == 0 ? 0 : 12;
}

static void read_only_import_cannot_be_reopened_writable_by_the_same_uid(void **state)
{
    (void)state;
    skip_unless_root(); /* root reopens anything: the attacker must not be root */
    fab_test_child_t child;
    assert_int_equal(fab_test_spawn("same_uid", NULL, NULL, &child), 0);
    assert_int_equal(fab_test_expect_word(child.sock, "refused"), 0);
    assert_int_equal(fab_test_reap(&child), 0);
}

static void memfd_size_cannot_be_changed_by_a_read_write_importer(void **state)
{
    (void)state;
    assert_non_null(fab_test_daemon_start(NULL, NULL));
    fab_client_t *exporter = connect_ok(), *importer = connect_ok();
    fab_handle_t handle;
    fab_region_t *region = allocate(exporter, FAB_ACCESS_READ_WRITE, &handle);
    char *p;
    assert_int_equal(fab_region_map(region, FAB_ACCESS_READ_WRITE, (void **)&p), FAB_SUCCESS);
    p[MIB2 - 1] = 7;
    fab_region_t *imported;
    assert_int_equal(fab_client_import(importer, &handle, 0, &imported), FAB_SUCCESS);
    int fd = fab_region_fd(imported);
    assert_int_equal(ftruncate(fd, 4096), -1);
    assert_int_equal(errno, EPERM);
    assert_int_equal(ftruncate(fd, 2 * MIB2), -1);
    assert_int_equal(errno, EPERM);
    assert_int_equal(fcntl(fd, F_GET_SEALS), F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL);
    assert_int_equal(p[MIB2 - 1], 7); /* the exporter's last page is still there */
    fab_region_release(imported);
    fab_region_unmap(region, p);
    fab_region_release(region);
    fab_client_close(importer);
    fab_client_close(exporter);
}

/* ---- 4. ADOPT ------------------------------------------------------------------ */

static void creator_claim_needs_the_creator_token(void **state)
{
    (void)state;
    fab_test_daemon_t *daemon = fab_test_daemon_start(NULL, NULL);
    assert_non_null(daemon);
    fab_client_t *creator = connect_ok();
    fab_handle_t handle, other_handle;
    fab_region_t *region = allocate(creator, FAB_ACCESS_READ_WRITE, &handle);
    fab_region_t *other = allocate(creator, FAB_ACCESS_READ_WRITE, &other_handle);
    char *p;
    assert_int_equal(fab_region_map(region, FAB_ACCESS_READ_WRITE, (void **)&p), FAB_SUCCESS);
    strcpy(p, "the creator's memory");

    assert_int_equal(fab_test_daemon_restart(daemon), 0);
    /* The attacker comes back first, with memory of its own. */
    int sock = fab_test_raw_hello(daemon->socket);
    int fake = sealed_memfd();
    uint8_t zero[FAB__TOKEN_BYTES] = {0};
    assert_int_equal(fab_test_raw_adopt(sock, &handle, 1, zero, fake), FAB_ERROR_NOT_PERMITTED);
    /* A token is bound to its allocation: another one's does not do. */
    int tokfd;
    fab_handle_t raw_handle;
    uint8_t token[FAB__TOKEN_BYTES];
    raw_alloc(sock, &raw_handle, token, &tokfd);
    assert_int_equal(fab_test_raw_adopt(sock, &handle, 1, token, fake), FAB_ERROR_NOT_PERMITTED);
    close(tokfd);
    close(sock);
    close(fake);

    /* The real creator's next call brings its memory back; importers read it. */
    fab_daemon_stats_t stats;
    assert_int_equal(fab_client_stats(creator, &stats), FAB_SUCCESS);
    fab_client_t *reader = connect_ok();
    fab_region_t *imported;
    assert_int_equal(fab_client_import(reader, &handle, 0, &imported), FAB_SUCCESS);
    char *q;
    assert_int_equal(fab_region_map(imported, FAB_ACCESS_READ_ONLY, (void **)&q), FAB_SUCCESS);
    assert_string_equal(q, "the creator's memory");
    fab_region_unmap(imported, q);
    fab_region_release(imported);
    fab_region_unmap(region, p);
    fab_region_release(region);
    fab_region_release(other);
    fab_client_close(reader);
    fab_client_close(creator);
}

static void released_allocation_never_comes_back(void **state)
{
    (void)state;
    fab_test_daemon_t *daemon = fab_test_daemon_start(NULL, NULL);
    assert_non_null(daemon);
    int sock = fab_test_raw_hello(daemon->socket);
    fab_handle_t handle;
    uint8_t token[FAB__TOKEN_BYTES];
    int fd;
    raw_alloc(sock, &handle, token, &fd);
    fab__request_t release = {.type = FAB__MSG_RELEASE};
    release.u.region.region = 1;
    assert_int_equal(fab_test_raw_call(sock, &release, -1, NULL, NULL), FAB_SUCCESS);
    /* Its creator, with its token and the very memory, cannot revive it. */
    assert_int_equal(fab_test_raw_adopt(sock, &handle, 1, token, fd), FAB_ERROR_INVALID_HANDLE);
    assert_int_equal(fab_test_raw_adopt(sock, &handle, 0, NULL, fd), FAB_ERROR_INVALID_HANDLE);
    fab_client_t *client = connect_ok();
    bool live = true;
    assert_int_equal(fab_client_verify(client, &handle, &live), FAB_SUCCESS);
    assert_false(live);
    fab_region_t *region;
    assert_int_equal(fab_client_import(client, &handle, 0, &region), FAB_ERROR_INVALID_HANDLE);
    assert_true(fab_test_daemon_log_contains(daemon, "freed before"));
    fab_client_close(client);
    close(fd);
    close(sock);
}

static void adopt_takes_only_sealed_memfds(void **state)
{
    (void)state;
    fab_test_daemon_t *daemon = fab_test_daemon_start(NULL, NULL);
    assert_non_null(daemon);
    fab_client_t *client = connect_ok();
    fab_handle_t handle;
    fab_region_t *region = allocate(client, FAB_ACCESS_READ_WRITE, &handle);
    assert_int_equal(fab_test_daemon_restart(daemon), 0);
    int sock = fab_test_raw_hello(daemon->socket);

    char path[600];
    snprintf(path, sizeof(path), "%s/on-disk", daemon->dir);
    int file = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    assert_true(file >= 0);
    assert_int_equal(ftruncate(file, MIB2), 0);
    int pipefd[2];
    assert_int_equal(pipe2(pipefd, O_CLOEXEC), 0);
    int pair[2];
    assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair), 0);
    int unsealed = memfd_create("unsealed", MFD_CLOEXEC);
    assert_int_equal(ftruncate(unsealed, MIB2), 0);
    int open_mode = memfd_create("mode", MFD_CLOEXEC | MFD_ALLOW_SEALING);
    assert_int_equal(ftruncate(open_mode, MIB2), 0);
    assert_int_equal(fcntl(open_mode, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL), 0);
    int small;
    assert_int_equal(fab__memfd_create("small", 4096, &small), FAB_SUCCESS);
    int bad[] = {file, pipefd[0], pair[0], unsealed, open_mode, small};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        assert_int_equal(fab_test_raw_adopt(sock, &handle, 0, NULL, bad[i]), FAB_ERROR_INVALID_VALUE);
        close(bad[i]);
    }
    close(pipefd[1]);
    close(pair[1]);
    close(sock);
    assert_true(fab_test_daemon_log_contains(daemon, "not a memfd sealed with"));
    /* The region's own memfd is still taken back. */
    fab_daemon_stats_t stats;
    assert_int_equal(fab_client_stats(client, &stats), FAB_SUCCESS);
    assert_int_equal(stats.allocations, 1);
    fab_region_release(region);
    fab_client_close(client);
}

/* ---- 5, 6. the restart path ------------------------------------------------------ */

static void region_requests_after_a_restart_name_the_right_region(void **state)
{
    (void)state;
    fab_test_daemon_t *daemon = fab_test_daemon_start(NULL, NULL);
    assert_non_null(daemon);
    fab_client_t *client = connect_ok();
    fab_region_t *a = allocate(client, FAB_ACCESS_READ_WRITE, NULL);
    fab_region_t *b = allocate(client, FAB_ACCESS_READ_WRITE, NULL);
    fab_region_t *c = allocate(client, FAB_ACCESS_READ_WRITE, NULL);
    fab_uuid_t ua = fab_region_uuid(a), ub = fab_region_uuid(b);
    assert_int_equal(fab_test_daemon_restart(daemon), 0);
    /* The first call after the restart is about a region: it must be about
     * that region, whatever id the new daemon gave it. */
    fab_handle_t handle;
    assert_int_equal(fab_region_export(a, &handle), FAB_SUCCESS);
    fab_uuid_t got = fab_handle_uuid(&handle);
    assert_memory_equal(got.bytes, ua.bytes, 16);
    assert_int_equal(fab_region_release(c), FAB_SUCCESS);
    assert_int_equal(fab_region_export(b, &handle), FAB_SUCCESS);
    got = fab_handle_uuid(&handle);
    assert_memory_equal(got.bytes, ub.bytes, 16);
    fab_daemon_stats_t stats;
    assert_int_equal(fab_client_stats(client, &stats), FAB_SUCCESS);
    assert_int_equal(stats.allocations, 2);
    assert_int_equal(stats.references, 2);
    fab_region_release(a);
    fab_region_release(b);
    fab_client_close(client);
}

static void release_as_first_call_after_a_restart_drops_only_that_region(void **state)
{
    (void)state;
    fab_test_daemon_t *daemon = fab_test_daemon_start(NULL, NULL);
    assert_non_null(daemon);
    fab_client_t *client = connect_ok();
    fab_region_t *a = allocate(client, FAB_ACCESS_READ_WRITE, NULL);
    fab_region_t *b = allocate(client, FAB_ACCESS_READ_WRITE, NULL);
    fab_uuid_t ub = fab_region_uuid(b);
    assert_int_equal(fab_test_daemon_restart(daemon), 0);
    assert_int_equal(fab_region_release(a), FAB_SUCCESS);
    fab_handle_t handle;
    assert_int_equal(fab_region_export(b, &handle), FAB_SUCCESS);
    fab_uuid_t got = fab_handle_uuid(&handle);
    assert_memory_equal(got.bytes, ub.bytes, 16);
    fab_daemon_stats_t stats;
    assert_int_equal(fab_client_stats(client, &stats), FAB_SUCCESS);
    assert_int_equal(stats.allocations, 1);
    assert_int_equal(stats.references, 1);
    fab_region_release(b);
    fab_client_close(client);
}

static void importer_back_before_its_creator_keeps_the_memory_alive(void **state)
{
    (void)state;
    fab_test_daemon_t *daemon = fab_test_daemon_start(NULL, NULL);
    assert_non_null(daemon);
    fab_client_t *creator = connect_ok(), *holder = connect_ok();
    fab_handle_t handle;
    fab_region_t *region = allocate(creator, FAB_ACCESS_READ_WRITE, &handle);
    char *p;
    assert_int_equal(fab_region_map(region, FAB_ACCESS_READ_WRITE, (void **)&p), FAB_SUCCESS);
    strcpy(p, "kept alive by its importer");
    fab_region_t *held;
    assert_int_equal(fab_client_import(holder, &handle, 0, &held), FAB_SUCCESS);

    assert_int_equal(fab_test_daemon_restart(daemon), 0);
    fab_daemon_stats_t stats;
    assert_int_equal(fab_client_stats(holder, &stats), FAB_SUCCESS); /* back first: parked */
    fab_client_t *third = connect_ok();
    fab_region_t *imported;
    assert_int_equal(fab_client_import(third, &handle, 0, &imported), FAB_ERROR_INVALID_HANDLE);
    assert_int_equal(fab_client_stats(creator, &stats), FAB_SUCCESS); /* the creator is back */
    assert_int_equal(stats.references, 2);
    /* The creator lets go: the holder's reference keeps the handle live. */
    fab_region_unmap(region, p);
    assert_int_equal(fab_region_release(region), FAB_SUCCESS);
    assert_int_equal(fab_client_stats(creator, &stats), FAB_SUCCESS);
    assert_int_equal(fab_client_import(third, &handle, 0, &imported), FAB_SUCCESS);
    char *q;
    assert_int_equal(fab_region_map(imported, FAB_ACCESS_READ_ONLY, (void **)&q), FAB_SUCCESS);
    assert_string_equal(q, "kept alive by its importer");
    fab_region_unmap(imported, q);
    fab_region_release(imported);
    assert_int_equal(fab_region_release(held), FAB_SUCCESS);
    assert_int_equal(fab_client_stats(holder, &stats), FAB_SUCCESS);
    assert_int_equal(fab_client_import(third, &handle, 0, &imported), FAB_ERROR_INVALID_HANDLE);
    fab_client_close(third);
    fab_client_close(holder);
    fab_client_close(creator);
}

static void parked_importer_with_other_memory_loses_its_reference(void **state)
{
    (void)state;
    fab_test_daemon_t *daemon = fab_test_daemon_start(NULL, NULL);
    assert_non_null(daemon);
    fab_client_t *creator = connect_ok();
    fab_handle_t handle;
    fab_region_t *region = allocate(creator, FAB_ACCESS_READ_WRITE, &handle);
    assert_int_equal(fab_test_daemon_restart(daemon), 0);
    /* A peer that holds the handle but not the memory parks with its own. */
    int sock = fab_test_raw_hello(daemon->socket);
    int fake = sealed_memfd();
    assert_int_equal(fab_test_raw_adopt(sock, &handle, 0, NULL, fake), FAB_SUCCESS);
    fab_daemon_stats_t stats;
    assert_int_equal(fab_client_stats(creator, &stats), FAB_SUCCESS);
    assert_int_equal(stats.references, 1); /* the creator's only */
    assert_true(fab_test_daemon_log_contains(daemon, "held other memory"));
    close(fake);
    close(sock);
    fab_region_release(region);
    fab_client_close(creator);
}

static void parked_importer_exports_the_same_handle(void **state)
{
    (void)state;
    /* The first node is of another domain, so a handle minted for the wrong
     * node would differ in its domain id. */
    fab_test_daemon_t *daemon = fab_test_daemon_start(
        "[channel 0]\nuids = 0\n[node elsewhere]\nimex_domain = two\n"
        "[node a]\nimex_domain = one\n[node b]\nimex_domain = one\n", NULL);
    assert_non_null(daemon);
    fab_client_options_t on_a = {NULL, "a", 0}, on_b = {NULL, "b", 0};
    fab_client_t *creator, *holder;
    assert_int_equal(fab_client_connect(&on_a, &creator), FAB_SUCCESS);
    assert_int_equal(fab_client_connect(&on_b, &holder), FAB_SUCCESS);
    fab_handle_t handle, again;
    fab_region_t *region = allocate(creator, FAB_ACCESS_READ_WRITE, &handle);
    fab_region_t *held;
    assert_int_equal(fab_client_import(holder, &handle, 0, &held), FAB_SUCCESS);
    assert_int_equal(fab_test_daemon_restart(daemon), 0);
    assert_int_equal(fab_region_export(held, &again), FAB_SUCCESS); /* parked, then exported */
    assert_memory_equal(again.bytes, handle.bytes, FAB_HANDLE_BYTES);
    fab_region_release(held);
    fab_region_release(region);
    fab_client_close(holder);
    fab_client_close(creator);
}

/* ---- 7. out of fds in the client ---------------------------------------------------- */

static void client_out_of_fds_gets_out_of_memory_and_keeps_its_connection(void **state)
{
    (void)state;
    if (under_valgrind())
        fab_test_skip("valgrind keeps fds of its own under the same limit");
    assert_non_null(fab_test_daemon_start(NULL, NULL));
    fab_client_t *exporter = connect_ok(), *importer = connect_ok();
    fab_handle_t handle;
    fab_region_t *region = allocate(exporter, FAB_ACCESS_READ_WRITE, &handle);
    fab_region_t *first;
    assert_int_equal(fab_client_import(importer, &handle, 0, &first), FAB_SUCCESS);
    struct rlimit saved, low;
    assert_int_equal(getrlimit(RLIMIT_NOFILE, &saved), 0);
    low = saved;
    low.rlim_cur = 64;
    assert_int_equal(setrlimit(RLIMIT_NOFILE, &low), 0);
    int fill[64], nfill = 0;
    while (nfill < 64 && (fill[nfill] = open("/dev/null", O_RDONLY | O_CLOEXEC)) >= 0)
        nfill++;
    assert_int_equal(errno, EMFILE);
    fab_region_t *second = NULL;
    assert_int_equal(fab_client_import(importer, &handle, 0, &second), FAB_ERROR_OUT_OF_MEMORY);
    close(fill[--nfill]);
    assert_int_equal(fab_client_import(importer, &handle, 0, &second), FAB_SUCCESS);
    fab_daemon_stats_t stats;
    assert_int_equal(fab_client_stats(importer, &stats), FAB_SUCCESS);
    assert_int_equal(stats.references, 3); /* creator, first, second: the lost one was given back */
    while (nfill > 0)
        close(fill[--nfill]);
    assert_int_equal(setrlimit(RLIMIT_NOFILE, &saved), 0);
    fab_region_release(second);
    fab_region_release(first);
    fab_region_release(region);
    fab_client_close(importer);
    fab_client_close(exporter);
}

/* ---- 9. a lease cannot stall the daemon ----------------------------------------------- */

static void leased_memory_does_not_stall_the_daemon(void **state)
{
    (void)state;
    setenv("FABMEM_TIMEOUT_MS", "5000", 1); /* far less than the kernel's lease-break time */
    signal(SIGIO, SIG_IGN);                 /* the lease holder is told of a break attempt */
    fab_test_daemon_t *daemon = fab_test_daemon_start(NULL, NULL);
    assert_non_null(daemon);
    int sock = fab_test_raw_hello(daemon->socket);
    fab__request_t alloc = {.type = FAB__MSG_ALLOC};
    alloc.u.alloc.size = MIB2;
    alloc.u.alloc.peer_access = FAB_ACCESS_READ_ONLY;
    alloc.u.alloc.handle_type = FAB_HANDLE_TYPE_FABRIC;
    fab__reply_t reply;
    int fd;
    assert_int_equal(fab_test_raw_call(sock, &alloc, -1, &reply, &fd), FAB_SUCCESS);
    close(sock);
    assert_int_equal(fab_test_daemon_restart(daemon), 0);
    /* Ours alone now: a write lease, then the memory goes back to the daemon. */
    if (fcntl(fd, F_SETLEASE, F_WRLCK) != 0) {
        close(fd);
        fab_test_skip("this kernel gives no lease on a memfd");
    }
    sock = fab_test_raw_hello(daemon->socket);
    assert_int_equal(fab_test_raw_adopt(sock, &reply.u.alloc.handle, 1, reply.u.alloc.token, fd), FAB_SUCCESS);
    /* A read-only import needs a read-only open of that memory: it must fail
     * at once rather than wait for the lease to break. */
    fab_client_t *importer = connect_ok();
    fab_region_t *region = NULL;
    assert_int_equal(fab_client_import(importer, &reply.u.alloc.handle, 0, &region), FAB_ERROR_OUT_OF_MEMORY);
    fab_daemon_stats_t stats;
    assert_int_equal(fab_client_stats(importer, &stats), FAB_SUCCESS);
    fab_client_close(importer);
    fcntl(fd, F_SETLEASE, F_UNLCK);
    close(fd);
    close(sock);
}

/* ---- smaller items ------------------------------------------------------------------------ */

static void forked_child_cannot_use_its_parents_client(void **state)
{
    (void)state;
    assert_non_null(fab_test_daemon_start(NULL, NULL));
    fab_client_t *client = connect_ok();
    fab_handle_t handle;
    fab_region_t *region = allocate(client, FAB_ACCESS_READ_WRITE, &handle);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        fab_daemon_stats_t stats;
        fab_handle_t h;
        fab_region_t *r;
        int ok = fab_client_stats(client, &stats) == FAB_ERROR_ILLEGAL_STATE &&
                 fab_region_export(region, &h) == FAB_ERROR_ILLEGAL_STATE &&
                 fab_client_import(client, &handle, 0, &r) == FAB_ERROR_ILLEGAL_STATE &&
                 fab_region_release(region) == FAB_ERROR_ILLEGAL_STATE &&
                 fab_client_close(client) == FAB_ERROR_ILLEGAL_STATE;
        _exit(ok ? 0 : 1);
    }
    int status;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0);
    /* The parent's connection saw nothing of it. */
    fab_daemon_stats_t stats;
    assert_int_equal(fab_client_stats(client, &stats), FAB_SUCCESS);
    assert_int_equal(stats.references, 1);
    fab_region_release(region);
    assert_int_equal(fab_client_close(client), FAB_SUCCESS);
}

/* helper "fake_daemon" PATH [other-version]: answer HELLO, then every
 * request with INVALID_HANDLE and an fd attached; with other-version, answer
 * HELLO as a daemon of another protocol version does (NOT_SUPPORTED). */
static int helper_fake_daemon(int argc, char **argv, int sock)
{
    if (argc < 2)
        return 10;
    bool other_version = argc > 2 && strcmp(argv[2], "other-version") == 0;
    int listener = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
    struct sockaddr_un addr;
    if (fab__sockaddr_un(argv[1], &addr) != 0)
        return 10;
    if (bind(listener, (struct sockaddr *)&addr, sizeof(addr)) != 0 || listen(listener, 8) != 0 ||
        fab_test_send_word(sock, "ready") != 0)
        return 11;
    int conn = accept(listener, NULL, NULL);
    int devnull = open("/dev/null", O_RDONLY | O_CLOEXEC);
    for (;;) {
        uint8_t buf[FAB__PROTO_MAX];
        ssize_t n = fab__proto_recv(conn, buf, NULL, 0);
        fab__request_t request;
        if (n <= 0 || fab__request_decode(buf, (size_t)n, &request) != FAB_SUCCESS)
            return 0;
        fab__reply_t reply = {.type = request.type, .seq = request.seq};
        if (request.type != FAB__MSG_HELLO)
            reply.status = FAB_ERROR_INVALID_HANDLE;
        else if (other_version)
            reply.status = FAB_ERROR_NOT_SUPPORTED;
        size_t len = fab__reply_encode(&reply, buf);
        if (fab__proto_send(conn, buf, len, request.type == FAB__MSG_HELLO ? -1 : devnull) != 0)
            return 12;
    }
}

static void error_reply_with_an_fd_leaks_nothing(void **state)
{
    (void)state;
    char *dir = fab_test_tempdir();
    assert_non_null(dir);
    char path[512];
    snprintf(path, sizeof(path), "%s/fake.sock", dir);
    const char *args[] = {path, NULL};
    fab_test_child_t child;
    assert_int_equal(fab_test_spawn("fake_daemon", args, NULL, &child), 0);
    assert_int_equal(fab_test_expect_word(child.sock, "ready"), 0);
    fab_client_options_t options = {path, NULL, 0};
    fab_client_t *client;
    assert_int_equal(fab_client_connect(&options, &client), FAB_SUCCESS);
    fab_handle_t handle = {{0}};
    fab_region_t *region;
    int before = fab_test_open_fds();
    for (int i = 0; i < 8; i++)
        assert_int_equal(fab_client_import(client, &handle, 0, &region), FAB_ERROR_INVALID_HANDLE);
    assert_int_equal(fab_test_open_fds(), before);
    fab_client_close(client);
    assert_int_equal(fab_test_reap(&child), 0);
    fab_test_rmtree(dir);
    free(dir);
}

/* A daemon of another protocol version (another fabmem, still running) is
 * refused by name: the client says which versions differ and what to do, and
 * does not take it for a daemon that is not there. */
static void a_daemon_of_another_protocol_version_is_named_in_the_refusal(void **state)
{
    (void)state;
    char *dir = fab_test_tempdir();
    assert_non_null(dir);
    char path[512];
    snprintf(path, sizeof(path), "%s/old.sock", dir);
    const char *args[] = {path, "other-version", NULL};
    fab_test_child_t child;
    assert_int_equal(fab_test_spawn("fake_daemon", args, NULL, &child), 0);
    assert_int_equal(fab_test_expect_word(child.sock, "ready"), 0);
    fab_client_options_t options = {path, NULL, 0};
    fab_client_t *client = NULL;
    char log[4096];
    fab_test_stderr_begin();
    fab_status_t status = fab_client_connect(&options, &client);
    fab_test_stderr_end(log, sizeof(log));
    assert_int_equal(status, FAB_ERROR_NOT_SUPPORTED);
    assert_null(client);
    char version[64];
    snprintf(version, sizeof(version), "protocol version %u", FAB__PROTO_VERSION);
    if (!strstr(log, version) || !strstr(log, path))
        fail_msg("the refusal does not name the version and the socket:\n%s", log);
    assert_int_equal(fab_test_reap(&child), 0);
    fab_test_rmtree(dir);
    free(dir);
}

/* helper "dying_daemon" PATH: listen, and once a client waits in the
 * backlog, go away without accepting it, as a daemon leaving on idle does. */
static int helper_dying_daemon(int argc, char **argv, int sock)
{
    if (argc < 2)
        return 10;
    int listener = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
    struct sockaddr_un addr;
    if (fab__sockaddr_un(argv[1], &addr) != 0)
        return 10;
    if (bind(listener, (struct sockaddr *)&addr, sizeof(addr)) != 0 || listen(listener, 8) != 0 ||
        fab_test_send_word(sock, "ready") != 0)
        return 11;
    struct pollfd p = {.fd = listener, .events = POLLIN};
    if (poll(&p, 1, FAB_TEST_TIMEOUT_MS) != 1)
        return 12;
    unlink(argv[1]);
    close(listener);
    return fab_test_send_word(sock, "gone") == 0 ? 0 : 13;
}

static void daemon_leaving_while_a_client_waits_is_invisible(void **state)
{
    (void)state;
    char *dir = fab_test_tempdir();
    assert_non_null(dir);
    char path[512];
    snprintf(path, sizeof(path), "%s/fabmemd.sock", dir);
    const char *args[] = {path, NULL};
    fab_test_child_t child;
    assert_int_equal(fab_test_spawn("dying_daemon", args, NULL, &child), 0);
    assert_int_equal(fab_test_expect_word(child.sock, "ready"), 0);
    fab_client_options_t options = {path, NULL, 1}; /* it may start a daemon */
    fab_client_t *client = NULL;
    assert_int_equal(fab_client_connect(&options, &client), FAB_SUCCESS);
    assert_int_equal(fab_test_expect_word(child.sock, "gone"), 0);
    assert_int_equal(fab_test_reap(&child), 0);
    fab_daemon_stats_t stats;
    assert_int_equal(fab_client_stats(client, &stats), FAB_SUCCESS);
    assert_int_equal(fab_client_close(client), FAB_SUCCESS);
    /* The daemon it started is ours to stop. */
    assert_int_equal(kill((pid_t)stats.pid, SIGTERM), 0);
    for (int i = 0; i < 3000 && kill((pid_t)stats.pid, 0) == 0; i++) {
        struct timespec ts = {0, 10 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    fab_test_rmtree(dir);
    free(dir);
}

/* helper "ipc_other_uid" PATH: as uid 65534, say HELLO to the daemon at
 * PATH, receive an IPC handle; say what withdrawing it answers, then what
 * opening it answers and, when it opened, the first byte of the memory. */
static int helper_ipc_other_uid(int argc, char **argv, int sock)
{
    if (argc < 2 || drop_to_nobody() != 0)
        return 10;
    int daemon = fab_test_raw_hello(argv[1]);
    if (fab_test_send_word(sock, "ready") != 0)
        return 11;
    fab__request_t request = {.seq = 5};
    if (fab_test_recv(sock, request.u.ipc.bytes, sizeof(request.u.ipc.bytes)) != 0)
        return 12;
    request.type = FAB__MSG_IPC_WITHDRAW;
    if (fab_test_send_word(sock, fab_status_name(
                                     (fab_status_t)fab_test_raw_call(daemon, &request, -1, NULL, NULL))) != 0)
        return 13;
    request.type = FAB__MSG_IPC_OPEN;
    int fd = -1;
    int status = fab_test_raw_call(daemon, &request, -1, NULL, &fd);
    if (fab_test_send_word(sock, fab_status_name((fab_status_t)status)) != 0)
        return 14;
    char word[8] = "none";
    if (fd >= 0) {
        unsigned char *p = mmap(NULL, 4096, PROT_READ, MAP_SHARED, fd, 0);
        if (p != MAP_FAILED) {
            snprintf(word, sizeof(word), "%u", p[0]);
            munmap(p, 4096);
        }
        close(fd);
    }
    close(daemon);
    return fab_test_send_word(sock, word) == 0 ? 0 : 15;
}

/* On a daemon shared by several users, an IPC handle is a capability: a
 * process of another uid that is given the bytes may open them, as the
 * driver lets any process that holds a handle open it, but only the
 * publishing connection may withdraw them. */
static void an_ipc_handle_opens_for_another_uid_but_only_its_publisher_withdraws(void **state)
{
    (void)state;
    skip_unless_root();
    fab_test_daemon_t *d = fab_test_daemon_start("[daemon]\nsocket_mode = 0666\n", NULL);
    assert_non_null(d);
    int sock = fab_test_raw_hello(d->socket);
    int fd;
    assert_int_equal(fab__memfd_create("ipc", 4096, &fd), FAB_SUCCESS);
    unsigned char *p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    assert_true(p != MAP_FAILED);
    p[0] = 77;
    fab__request_t publish = {.type = FAB__MSG_IPC_PUBLISH, .seq = 2};
    publish.u.ipc_publish.kind = FAB__IPC_KIND_MEM;
    publish.u.ipc_publish.size = 4096;
    fab__reply_t reply;
    assert_int_equal(fab_test_raw_call(sock, &publish, fd, &reply, NULL), FAB_SUCCESS);
    fab_test_child_t child;
    const char *args[] = {d->socket, NULL};
    assert_int_equal(fab_test_spawn("ipc_other_uid", args, NULL, &child), 0);
    assert_int_equal(fab_test_expect_word(child.sock, "ready"), 0);
    assert_int_equal(fab_test_send(child.sock, reply.u.ipc_publish.bytes,
                                   sizeof(reply.u.ipc_publish.bytes)), 0);
    assert_int_equal(fab_test_expect_word(child.sock, "FAB_ERROR_NOT_PERMITTED"), 0);
    assert_int_equal(fab_test_expect_word(child.sock, "FAB_SUCCESS"), 0);
    assert_int_equal(fab_test_expect_word(child.sock, "77"), 0);
    assert_int_equal(fab_test_reap(&child), 0);
    munmap(p, 4096);
    close(fd);
    close(sock);
}

static const struct CMUnitTest tests[] = {
    cmocka_unit_test_teardown(an_ipc_handle_opens_for_another_uid_but_only_its_publisher_withdraws,
                              fab_test_teardown),
    cmocka_unit_test_teardown(socket_directory_of_another_user_is_refused, fab_test_teardown),
    cmocka_unit_test_teardown(symlinked_socket_directory_is_refused, fab_test_teardown),
    cmocka_unit_test_teardown(world_writable_socket_directory_is_refused, fab_test_teardown),
    cmocka_unit_test_teardown(group_writable_socket_directory_is_refused, fab_test_teardown),
    cmocka_unit_test_teardown(daemon_of_another_user_is_refused, fab_test_teardown),
    cmocka_unit_test_teardown(daemon_refuses_a_shared_sticky_directory, fab_test_teardown),
    cmocka_unit_test_teardown(read_only_import_cannot_be_reopened_writable_by_another_uid, fab_test_teardown),
    cmocka_unit_test_teardown(read_only_import_cannot_be_reopened_writable_by_the_same_uid, fab_test_teardown),
    cmocka_unit_test_teardown(memfd_size_cannot_be_changed_by_a_read_write_importer, fab_test_teardown),
    cmocka_unit_test_teardown(creator_claim_needs_the_creator_token, fab_test_teardown),
    cmocka_unit_test_teardown(released_allocation_never_comes_back, fab_test_teardown),
    cmocka_unit_test_teardown(adopt_takes_only_sealed_memfds, fab_test_teardown),
    cmocka_unit_test_teardown(region_requests_after_a_restart_name_the_right_region, fab_test_teardown),
    cmocka_unit_test_teardown(release_as_first_call_after_a_restart_drops_only_that_region, fab_test_teardown),
    cmocka_unit_test_teardown(importer_back_before_its_creator_keeps_the_memory_alive, fab_test_teardown),
    cmocka_unit_test_teardown(parked_importer_with_other_memory_loses_its_reference, fab_test_teardown),
    cmocka_unit_test_teardown(parked_importer_exports_the_same_handle, fab_test_teardown),
    cmocka_unit_test_teardown(client_out_of_fds_gets_out_of_memory_and_keeps_its_connection, fab_test_teardown),
    cmocka_unit_test_teardown(leased_memory_does_not_stall_the_daemon, fab_test_teardown),
    cmocka_unit_test_teardown(forked_child_cannot_use_its_parents_client, fab_test_teardown),
    cmocka_unit_test_teardown(error_reply_with_an_fd_leaks_nothing, fab_test_teardown),
    cmocka_unit_test_teardown(a_daemon_of_another_protocol_version_is_named_in_the_refusal,
                              fab_test_teardown),
    cmocka_unit_test_teardown(daemon_leaving_while_a_client_waits_is_invisible, fab_test_teardown),
};

static const fab_test_helper_t helpers[] = {
    {"impostor", helper_impostor},       {"daemon_in", helper_daemon_in},
    {"ipc_other_uid", helper_ipc_other_uid},
    {"ro_importer", helper_ro_importer}, {"same_uid", helper_same_uid},
    {"fake_daemon", helper_fake_daemon}, {"dying_daemon", helper_dying_daemon},
};

FAB_TEST_MAIN("fabric", tests, helpers)
