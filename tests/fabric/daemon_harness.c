/* The fabric tests' private daemons (see daemon_harness.h). Readiness comes
 * over a pipe (--ready-fd): no test sleeps to wait for a daemon. */
#include "daemon_harness.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define FAB_TEST_MAX_DAEMONS 4

static fab_test_daemon_t fab_test__daemons[FAB_TEST_MAX_DAEMONS];
int fab_test_daemon_nofile;
int fab_test_daemon_uid;
static int fab_test__count;


int fab_test_daemon_argv(const char *exe, const char **argv, char *buf, size_t cap)
{
    int k = 0;
    const char *wrap = getenv("FABTEST_DAEMON_LAUNCHER");
    if (wrap != NULL && *wrap != '\0') {
        snprintf(buf, cap, "%s", wrap);
        char *save = NULL;
        for (char *w = strtok_r(buf, " ", &save); w != NULL && k < 32;
             w = strtok_r(NULL, " ", &save))
            argv[k++] = w;
    }
    argv[k++] = exe;
    return k;
}

/* Start fabmemd for d's socket and config; wait until it listens. */
static int fab_test__launch(fab_test_daemon_t *d)
{
    const char *exe = getenv("FABMEM_DAEMON");
    int pipefd[2];
    if (pipe2(pipefd, O_CLOEXEC) != 0)
        return -1;
    char fdtext[16];
    snprintf(fdtext, sizeof(fdtext), "%d", pipefd[1]);
    /* FABTEST_DAEMON_LAUNCHER (the valgrind build sets it) runs the daemon
     * under the same checker as the tests. */
    const char *argv[48];
    static char launcher[1024];
    int k = fab_test_daemon_argv(exe, argv, launcher, sizeof(launcher));
    argv[k++] = "--foreground";
    argv[k++] = "--socket";
    argv[k++] = d->socket;
    argv[k++] = "--ready-fd";
    argv[k++] = fdtext;
    argv[k++] = "--log";
    argv[k++] = "info";
    if (d->config[0] != '\0') {
        argv[k++] = "--config";
        argv[k++] = d->config;
    }
    argv[k] = NULL;
    pid_t pid = fork();
    if (pid < 0)
        return -1;
    if (pid == 0) {
        int log = open(d->log, O_WRONLY | O_CREAT | O_APPEND, 0644);
        int null = open("/dev/null", O_RDWR);
        if (log >= 0)
            dup2(log, 2);
        if (null >= 0) {
            dup2(null, 0);
            dup2(null, 1);
        }
        fcntl(pipefd[1], F_SETFD, 0);
        if (fab_test_daemon_nofile > 0) {
            struct rlimit rl = {(rlim_t)fab_test_daemon_nofile, (rlim_t)fab_test_daemon_nofile};
            setrlimit(RLIMIT_NOFILE, &rl);
        }
        if (d->uid != 0) {
            gid_t gid = (gid_t)d->uid;
            if (setgroups(0, NULL) != 0 || setgid(gid) != 0 || setuid(d->uid) != 0)
                _exit(126);
        }
        execv(argv[0], (char *const *)argv);
        _exit(127);
    }
    close(pipefd[1]);
    d->pid = pid;
    struct pollfd p = {.fd = pipefd[0], .events = POLLIN};
    char byte = 0;
    int ready = poll(&p, 1, FAB_TEST_TIMEOUT_MS) > 0 && read(pipefd[0], &byte, 1) == 1;
    /* Then EOF: the daemon has closed its end, so its fds are settled. */
    ready = ready && poll(&p, 1, FAB_TEST_TIMEOUT_MS) > 0 && read(pipefd[0], &byte, 1) == 0;
    close(pipefd[0]);
    if (!ready) {
        fab_test_daemon_stop(d);
        return -1;
    }
    return 0;
}

int fab_test_daemon_restart(fab_test_daemon_t *d)
{
    if (fab_test_daemon_stop(d) != 0)
        return -1;
    return fab_test__launch(d);
}

fab_test_daemon_t *fab_test_daemon_start(const char *config_text, const char *state_file)
{
    const char *exe = getenv("FABMEM_DAEMON");
    if (exe == NULL || fab_test__count == FAB_TEST_MAX_DAEMONS)
        return NULL;
    fab_test_daemon_t *d = &fab_test__daemons[fab_test__count];
    memset(d, 0, sizeof(*d));
    d->dir = fab_test_tempdir();
    if (d->dir == NULL)
        return NULL;
    fab_test__count++;
    /* Other users (the dropped-privilege tests) must reach the socket. */
    chmod(d->dir, 0755);
    if (fab_test_daemon_uid != 0) {
        /* The daemon's own: it makes its socket, lock and key there. */
        d->uid = (uid_t)fab_test_daemon_uid;
        if (chown(d->dir, d->uid, (gid_t)d->uid) != 0)
            return NULL;
    }
    if (snprintf(d->socket, sizeof(d->socket), "%s/fabmemd.sock", d->dir) >= (int)sizeof(d->socket))
        return NULL;
    snprintf(d->log, sizeof(d->log), "%s/daemon.log", d->dir);
    snprintf(d->state, sizeof(d->state), "%s", state_file ? state_file : "");
    if (config_text != NULL || state_file != NULL) {
        snprintf(d->config, sizeof(d->config), "%s/fabmem.ini", d->dir);
        FILE *f = fopen(d->config, "w");
        if (f == NULL)
            return NULL;
        if (state_file != NULL)
            fprintf(f, "[daemon]\nstate_file = %s\n", state_file);
        fputs(config_text ? config_text : "[channel 0]\nuids = 0\n", f);
        fclose(f);
    }
    if (fab_test__launch(d) != 0)
        return NULL;
    setenv("FABMEM_SOCKET", d->socket, 1);
    setenv("FABMEM_NO_AUTOSTART", "1", 1);
    return d;
}

int fab_test_daemon_stop(fab_test_daemon_t *d)
{
    if (d->pid <= 0)
        return 0; /* stopped before: the test checked that status */
    int status = 0;
    /* A test that stopped it may have failed before resuming it. SIGCONT
     * goes first: sent after SIGTERM it could reach a daemon already in its
     * exit, and undo the SIGSTOP by which LeakSanitizer's tracer attaches
     * (a sanitizer build would then hang in the leak check). */
    kill(d->pid, SIGCONT);
    kill(d->pid, SIGTERM);
    while (waitpid(d->pid, &status, 0) < 0 && errno == EINTR)
        ;
    d->pid = 0;
    if (WIFSIGNALED(status))
        return 128 + WTERMSIG(status);
    return WEXITSTATUS(status);
}

int fab_test_daemon_log_contains(const fab_test_daemon_t *d, const char *text)
{
    FILE *f = fopen(d->log, "r");
    if (f == NULL)
        return 0;
    char line[2048];
    int found = 0;
    while (!found && fgets(line, sizeof(line), f) != NULL)
        found = strstr(line, text) != NULL;
    fclose(f);
    return found;
}

int fab_test_daemon_log_count(const fab_test_daemon_t *d, const char *text)
{
    FILE *f = fopen(d->log, "r");
    if (f == NULL)
        return 0;
    char line[2048];
    int n = 0;
    while (fgets(line, sizeof(line), f) != NULL)
        n += strstr(line, text) != NULL;
    fclose(f);
    return n;
}

int fab_test_daemon_fd_count_settled(const fab_test_daemon_t *d, int want)
{
    struct timespec t0, t;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (;;) {
        int n = fab_test_daemon_fd_count(d);
        clock_gettime(CLOCK_MONOTONIC, &t);
        long ms = (t.tv_sec - t0.tv_sec) * 1000L + (t.tv_nsec - t0.tv_nsec) / 1000000L;
        if (n == want || ms > FAB_TEST_TIMEOUT_MS)
            return n;
    }
}

fab_client_t *fab_test_connect_node(const char *node)
{
    fab_client_options_t options = {NULL, node, 0};
    fab_client_t *client = NULL;
    assert_int_equal(fab_client_connect(&options, &client), FAB_SUCCESS);
    return client;
}

/* The fds of process pid, from /proc/pid/fd; -1 if it cannot be read. The
 * directory's own fd, while it is read, is not counted for this process. */
static int fab_test__fd_count(pid_t pid)
{
    char path[64];
    snprintf(path, sizeof(path), "/proc/%ld/fd", (long)pid);
    DIR *dir = opendir(path);
    if (dir == NULL)
        return -1;
    int n = 0;
    struct dirent *e;
    while ((e = readdir(dir)) != NULL)
        n += e->d_name[0] != '.';
    closedir(dir);
    return pid == getpid() ? n - 1 : n;
}

int fab_test_daemon_fd_count(const fab_test_daemon_t *d)
{
    return fab_test__fd_count(d->pid);
}

int fab_test_open_fds(void)
{
    return fab_test__fd_count(getpid());
}

int fab_test_teardown(void **state)
{
    (void)state;
    int failed = 0;
    for (int i = 0; i < fab_test__count; i++) {
        fab_test_daemon_t *d = &fab_test__daemons[i];
        /* A daemon that does not exit 0 on SIGTERM crashed, or leaked (a
         * sanitizer build reports leaks at exit): show its log, fail. */
        int status = fab_test_daemon_stop(d);
        if (status != 0) {
            fprintf(stderr, "fabmemd %s exited with status %d; its log:\n", d->socket, status);
            FILE *f = fopen(d->log, "r");
            char line[1024];
            while (f != NULL && fgets(line, sizeof(line), f) != NULL)
                fputs(line, stderr);
            if (f != NULL)
                fclose(f);
            failed = 1;
        }
        fab_test_rmtree(d->dir);
        free(d->dir);
        d->dir = NULL;
    }
    fab_test__count = 0;
    return failed ? -1 : 0;
}

void fab_test_hex16(const unsigned char *bytes, char out[33])
{
    for (int i = 0; i < 16; i++)
        snprintf(out + 2 * i, 3, "%02x", bytes[i]);
}

/* ---- the raw protocol -------------------------------------------------------- */

int fab_test_raw_connect(const char *path)
{
    int sock = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
    assert_true(sock >= 0);
    struct sockaddr_un addr;
    assert_int_equal(fab__sockaddr_un(path, &addr), 0);
    assert_int_equal(connect(sock, (struct sockaddr *)&addr, sizeof(addr)), 0);
    return sock;
}

void fab_test_raw_send(int sock, fab__request_t *request, int fd)
{
    uint8_t buf[FAB__PROTO_MAX];
    size_t len = fab__request_encode(request, buf);
    assert_int_equal(fab__proto_send(sock, buf, len, fd), 0);
}

int fab_test_raw_reply(int sock, fab__reply_t *reply_out, int *fd_out)
{
    struct pollfd p = {.fd = sock, .events = POLLIN};
    assert_int_equal(poll(&p, 1, FAB_TEST_TIMEOUT_MS), 1);
    uint8_t buf[FAB__PROTO_MAX];
    int fd = -1;
    ssize_t n = fab__proto_recv(sock, buf, &fd, 0);
    if (n <= 0)
        return -1;
    fab__reply_t reply;
    assert_int_equal(fab__reply_decode(buf, (size_t)n, &reply), FAB_SUCCESS);
    if (reply_out != NULL)
        *reply_out = reply;
    if (fd_out != NULL)
        *fd_out = fd;
    else if (fd >= 0)
        close(fd);
    return (int)reply.status;
}

int fab_test_raw_call(int sock, fab__request_t *request, int fd, fab__reply_t *reply_out, int *fd_out)
{
    fab_test_raw_send(sock, request, fd);
    return fab_test_raw_reply(sock, reply_out, fd_out);
}

void fab_test_raw_say_hello(int sock)
{
    fab__request_t hello = {.type = FAB__MSG_HELLO, .seq = 1};
    hello.u.hello.version = FAB__PROTO_VERSION;
    assert_int_equal(fab_test_raw_call(sock, &hello, -1, NULL, NULL), FAB_SUCCESS);
}

int fab_test_raw_hello(const char *path)
{
    int sock = fab_test_raw_connect(path);
    fab_test_raw_say_hello(sock);
    return sock;
}

int fab_test_raw_adopt(int sock, const fab_handle_t *handle, int creator, const uint8_t *token, int fd)
{
    fab__request_t adopt = {.type = FAB__MSG_ADOPT, .seq = 9};
    adopt.u.import.handle = *handle;
    adopt.u.import.handle_type = FAB_HANDLE_TYPE_FABRIC;
    adopt.u.import.creator = (uint8_t)creator;
    if (token != NULL)
        memcpy(adopt.u.import.token, token, FAB__TOKEN_BYTES);
    return fab_test_raw_call(sock, &adopt, fd, NULL, NULL);
}

char *fab_test_example_config(const char *name)
{
    char path[512];
    snprintf(path, sizeof(path), "%s/%s", FABMEM_EXAMPLES_DIR, name);
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    static char text[65536];
    size_t n = fread(text, 1, sizeof(text) - 1, f);
    assert_true(feof(f)); /* all of it */
    fclose(f);
    text[n] = '\0';
    return text;
}

char *fab_test_example_config_for_me(const char *name)
{
    static char text[70000];
    int n = snprintf(text, sizeof(text), "%s\n[channel 63]\nuids = %u\n",
                     fab_test_example_config(name), (unsigned)getuid());
    assert_true(n > 0 && (size_t)n < sizeof(text));
    return text;
}
