/* Test support: one-test-per-process main, spawn-self helpers and the small
 * socket protocol between a test and its helpers. See fabtest.h. */
#include "fabtest.h"

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

static char fab__self_path[PATH_MAX];

/* Whether a test of this run called fab_test_skip. */
static int fab__skipped;

void fab__test_skipped(const char *why)
{
    fprintf(stderr, "SKIP: %s\n", why);
    fab__skipped = 1;
}

int fab_test_main(int argc, char **argv, const char *group, const struct CMUnitTest *tests,
                  size_t ntests, const fab_test_helper_t *helpers, size_t nhelpers)
{
    /* The path of this binary, for re-running it as a helper. valgrind reports
     * the tested program here, not itself. */
    ssize_t n = readlink("/proc/self/exe", fab__self_path, sizeof(fab__self_path) - 1);
    if (n > 0)
        fab__self_path[n] = '\0';
    else
        snprintf(fab__self_path, sizeof(fab__self_path), "%s", argv[0]);

    if (argc >= 3 && strcmp(argv[1], "--helper") == 0) {
        const char *fd_text = getenv("FABTEST_SOCK");
        int sock = fd_text ? atoi(fd_text) : -1;
        for (size_t i = 0; i < nhelpers; i++) {
            if (strcmp(helpers[i].name, argv[2]) == 0)
                return helpers[i].fn(argc - 2, argv + 2, sock);
        }
        fprintf(stderr, "%s: no helper named %s\n", argv[0], argv[2]);
        return 2;
    }
    if (argc >= 2) {
        int found = 0;
        for (size_t i = 0; i < ntests; i++)
            found |= strcmp(tests[i].name, argv[1]) == 0;
        if (!found) {
            fprintf(stderr, "%s: no test named %s\n", argv[0], argv[1]);
            return 2;
        }
        cmocka_set_test_filter(argv[1]);
    }
    int failed = _cmocka_run_group_tests(group, tests, ntests, NULL, NULL);
    /* One test, skipped: CTest's SKIP_RETURN_CODE. */
    return failed == 0 && fab__skipped && argc >= 2 ? 77 : failed;
}

int fab_test_spawn(const char *name, const char *const *args, const char *const *env,
                   fab_test_child_t *child_out)
{
    /* Everything the child needs is built before fork: a multithreaded test
     * may only call async-signal-safe functions in the child. */
    enum { MAX_ARGS = 64, MAX_ENV = 1024 };
    const char *argv[MAX_ARGS];
    const char *envp[MAX_ENV];
    char sockvar[64];
    size_t k = 0, e = 0;
    argv[k++] = fab__self_path;
    argv[k++] = "--helper";
    argv[k++] = name;
    for (size_t i = 0; args && args[i]; i++) {
        if (k == MAX_ARGS - 1) {
            errno = E2BIG;
            return -1;
        }
        argv[k++] = args[i];
    }
    argv[k] = NULL;

    int sv[2];
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0)
        return -1;
    /* The child's end is dup'ed to a descriptor without CLOEXEC, in the parent
     * so that its number is known before fork; the parent closes it after. */
    int child_fd = fcntl(sv[1], F_DUPFD, 3);
    if (child_fd < 0)
        goto close_pair;
    snprintf(sockvar, sizeof(sockvar), "FABTEST_SOCK=%d", child_fd);
    envp[e++] = sockvar;
    for (size_t i = 0; env && env[i]; i++) {
        if (e == MAX_ENV - 1)
            goto e2big;
        envp[e++] = env[i];
    }
    for (char **v = environ; *v; v++) {
        if (strncmp(*v, "FABTEST_SOCK=", 13) == 0)
            continue;
        /* A variable given in env overrides the inherited one. */
        const char *eq = strchr(*v, '=');
        size_t keylen = eq ? (size_t)(eq - *v) + 1 : strlen(*v);
        bool overridden = false;
        for (size_t i = 0; env && env[i]; i++)
            overridden |= strncmp(env[i], *v, keylen) == 0;
        if (overridden)
            continue;
        if (e == MAX_ENV - 1)
            goto e2big;
        envp[e++] = *v;
    }
    envp[e] = NULL;

    pid_t pid = fork();
    if (pid < 0)
        goto close_child_fd;
    if (pid == 0) {
        execve(fab__self_path, (char *const *)argv, (char *const *)envp);
        _exit(127);
    }
    close(child_fd);
    close(sv[1]);
    child_out->pid = pid;
    child_out->sock = sv[0];
    return 0;

e2big:
    errno = E2BIG;
close_child_fd:
    close(child_fd);
close_pair:
    close(sv[0]);
    close(sv[1]);
    return -1;
}

int fab_test_reap(fab_test_child_t *child)
{
    int status = 0;
    if (child->sock >= 0) {
        close(child->sock);
        child->sock = -1;
    }
    while (waitpid(child->pid, &status, 0) < 0) {
        if (errno != EINTR)
            return -1;
    }
    if (WIFSIGNALED(status))
        return 128 + WTERMSIG(status);
    return WEXITSTATUS(status);
}

static int fab__wait_readable(int sock)
{
    struct pollfd p = {.fd = sock, .events = POLLIN};
    for (;;) {
        int r = poll(&p, 1, FAB_TEST_TIMEOUT_MS);
        if (r > 0)
            return 0;
        if (r == 0) {
            fprintf(stderr, "fabtest: peer said nothing for %d ms\n", FAB_TEST_TIMEOUT_MS);
            return -1;
        }
        if (errno != EINTR)
            return -1;
    }
}

int fab_test_send(int sock, const void *buf, size_t len)
{
    const char *p = buf;
    while (len > 0) {
        ssize_t n = send(sock, p, len, MSG_NOSIGNAL);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return -1;
        p += n;
        len -= (size_t)n;
    }
    return 0;
}

int fab_test_recv(int sock, void *buf, size_t len)
{
    char *p = buf;
    while (len > 0) {
        if (fab__wait_readable(sock) != 0)
            return -1;
        ssize_t n = recv(sock, p, len, 0);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return -1;
        p += n;
        len -= (size_t)n;
    }
    return 0;
}

int fab_test_send_fd(int sock, int fd)
{
    char byte = 'F';
    struct iovec iov = {.iov_base = &byte, .iov_len = 1};
    union {
        struct cmsghdr align;
        char buf[CMSG_SPACE(sizeof(int))];
    } control;
    memset(&control, 0, sizeof(control));
    struct msghdr msg = {.msg_iov = &iov, .msg_iovlen = 1,
                         .msg_control = control.buf, .msg_controllen = sizeof(control.buf)};
    struct cmsghdr *c = CMSG_FIRSTHDR(&msg);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN(sizeof(int));
    memcpy(CMSG_DATA(c), &fd, sizeof(int));
    return sendmsg(sock, &msg, MSG_NOSIGNAL) == 1 ? 0 : -1;
}

int fab_test_recv_fd(int sock)
{
    if (fab__wait_readable(sock) != 0)
        return -1;
    char byte;
    struct iovec iov = {.iov_base = &byte, .iov_len = 1};
    union {
        struct cmsghdr align;
        char buf[CMSG_SPACE(sizeof(int))];
    } control;
    struct msghdr msg = {.msg_iov = &iov, .msg_iovlen = 1,
                         .msg_control = control.buf, .msg_controllen = sizeof(control.buf)};
    if (recvmsg(sock, &msg, MSG_CMSG_CLOEXEC) != 1)
        return -1;
    struct cmsghdr *c = CMSG_FIRSTHDR(&msg);
    if (!c || c->cmsg_type != SCM_RIGHTS || c->cmsg_len != CMSG_LEN(sizeof(int)))
        return -1;
    int fd;
    memcpy(&fd, CMSG_DATA(c), sizeof(int));
    return fd;
}

int fab_test_send_word(int sock, const char *word)
{
    uint8_t len = (uint8_t)strlen(word);
    if (fab_test_send(sock, &len, 1) != 0)
        return -1;
    return fab_test_send(sock, word, len);
}

int fab_test_expect_word(int sock, const char *word)
{
    uint8_t len;
    char buf[256];
    if (fab_test_recv(sock, &len, 1) != 0 || fab_test_recv(sock, buf, len) != 0)
        return -1;
    buf[len] = '\0';
    if (strcmp(buf, word) != 0) {
        fprintf(stderr, "fabtest: expected \"%s\", peer said \"%s\"\n", word, buf);
        return -1;
    }
    return 0;
}

char *fab_test_tempdir(void)
{
    const char *base = getenv("TMPDIR");
    char tmpl[PATH_MAX];
    snprintf(tmpl, sizeof(tmpl), "%s/fabtest.XXXXXX", base && *base ? base : "/tmp");
    if (!mkdtemp(tmpl))
        return NULL;
    return strdup(tmpl);
}

static int fab__unlink_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st;
    (void)flag;
    (void)ftw;
    return remove(path);
}

int fab_test_reads_zeros(int fd, off_t off, size_t len)
{
    unsigned char buf[4096];
    for (size_t done = 0; done < len;) {
        size_t n = len - done < sizeof(buf) ? len - done : sizeof(buf);
        assert_int_equal(pread(fd, buf, n, off + (off_t)done), (ssize_t)n);
        for (size_t i = 0; i < n; i++) {
            if (buf[i] != 0)
                return 0;
        }
        done += n;
    }
    return 1;
}

void fab_test_rmtree(const char *path)
{
    if (path)
        nftw(path, fab__unlink_one, 16, FTW_DEPTH | FTW_PHYS);
}

void fab_test_write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    assert_int_equal(fputs(text, f) >= 0, 1);
    assert_int_equal(fclose(f), 0);
}

char *fab_test_config_file(const char *text, char **dir_out)
{
    char *dir = fab_test_tempdir();
    assert_non_null(dir);
    size_t len = strlen(dir) + sizeof("/fabmem.ini");
    char *path = malloc(len);
    assert_non_null(path);
    snprintf(path, len, "%s/fabmem.ini", dir);
    fab_test_write_file(path, text);
    *dir_out = dir;
    return path;
}

static int fab_test__saved_stderr = -1;
static FILE *fab_test__capture;

void fab_test_stderr_begin(void)
{
    assert_int_equal(fab_test__saved_stderr, -1);
    fflush(stderr);
    fab_test__capture = tmpfile();
    assert_non_null(fab_test__capture);
    fab_test__saved_stderr = dup(2);
    assert_true(fab_test__saved_stderr >= 0);
    assert_true(dup2(fileno(fab_test__capture), 2) == 2);
}

void fab_test_stderr_end(char *buf, size_t cap)
{
    assert_true(fab_test__saved_stderr >= 0);
    fflush(stderr);
    dup2(fab_test__saved_stderr, 2);
    close(fab_test__saved_stderr);
    fab_test__saved_stderr = -1;
    rewind(fab_test__capture);
    size_t n = fread(buf, 1, cap - 1, fab_test__capture);
    buf[n] = '\0';
    fclose(fab_test__capture);
    fab_test__capture = NULL;
}
