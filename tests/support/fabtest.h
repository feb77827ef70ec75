/* Test support shared by every suite: a main that runs one cmocka test by name
 * (so each test is its own CTest case), and helpers for multi-process tests.
 *
 * A multi-process test re-runs its own binary as the helper process, as libuv's
 * spawn_helper does: fab_test_spawn() executes this binary with
 * "--helper <name> [args...]", and fab_test_main() dispatches that to the
 * helper function of that name. Parent and helper hold the two ends of a
 * socketpair; the helper says it is ready by sending its first message, so no
 * test ever sleeps to wait. Every receive has a deadline (FAB_TEST_TIMEOUT_MS)
 * so that a broken peer fails the test instead of hanging it.
 *
 * This support code is independent of fabmem: the driver-emulation tests use it
 * with nothing but cuda.h. */
#ifndef FABTEST_H
#define FABTEST_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <sys/types.h>
#include <cmocka.h>

#define FAB_TEST_TIMEOUT_MS 30000

/* A helper body: argv[0] is the helper's name; the socket to the parent is sock.
 * Its return value is the helper process's exit status. */
typedef int (*fab_test_helper_fn)(int argc, char **argv, int sock);

typedef struct fab_test_helper {
    const char *name;
    fab_test_helper_fn fn;
} fab_test_helper_t;

typedef struct fab_test_child {
    pid_t pid;
    int sock; /* parent's end of the socketpair */
} fab_test_child_t;

/* Run the group: with no argument every test, with one the test of that name,
 * with "--helper NAME ..." the helper of that name. Returns the exit status. */
int fab_test_main(int argc, char **argv, const char *group, const struct CMUnitTest *tests,
                  size_t ntests, const fab_test_helper_t *helpers, size_t nhelpers);

#define FAB_TEST_MAIN(group, tests, helpers)                                             \
    int main(int argc, char **argv)                                                      \
    {                                                                                    \
        return fab_test_main(argc, argv, group, tests, sizeof(tests) / sizeof((tests)[0]), \
                             helpers, sizeof(helpers) / sizeof((helpers)[0]));           \
    }
#define FAB_TEST_MAIN_NO_HELPERS(group, tests)                                           \
    int main(int argc, char **argv)                                                      \
    {                                                                                    \
        return fab_test_main(argc, argv, group, tests, sizeof(tests) / sizeof((tests)[0]), \
                             NULL, 0);                                                   \
    }

/* Skip the running test, saying why on stderr: CTest reports it SKIPPED,
 * not passed (the binary, run for that one test, exits 77, which
 * fab_add_test_binary registers as SKIP_RETURN_CODE). Use it, not cmocka's
 * bare skip(), for a test that cannot run here (not root, no toolkit). */
#define fab_test_skip(why)                                                               \
    do {                                                                                 \
        fab__test_skipped(why);                                                          \
        skip();                                                                          \
    } while (0)
void fab__test_skipped(const char *why);

/* Start this binary as helper `name` with extra args (NULL-terminated, may be
 * NULL). Extra environment "K=V" strings (NULL-terminated, may be NULL) are
 * added to the child's. Returns 0, or -1 with errno. */
int fab_test_spawn(const char *name, const char *const *args, const char *const *env,
                   fab_test_child_t *child_out);

/* Wait for the child; returns its exit status, or 128 + signal if killed. */
int fab_test_reap(fab_test_child_t *child);

/* Send/receive exactly len bytes; receive waits at most FAB_TEST_TIMEOUT_MS.
 * Return 0, or -1 (error, timeout, or peer closed). */
int fab_test_send(int sock, const void *buf, size_t len);
int fab_test_recv(int sock, void *buf, size_t len);

/* Pass a file descriptor (with one byte) over a Unix socket with SCM_RIGHTS. */
int fab_test_send_fd(int sock, int fd);
int fab_test_recv_fd(int sock); /* the received fd, or -1 */

/* Short control words between parent and helper, e.g. "ready", "go". */
int fab_test_send_word(int sock, const char *word);
int fab_test_expect_word(int sock, const char *word); /* 0 if it matched */

/* A fresh private directory under the system's temp dir; the caller removes it
 * with fab_test_rmtree. Returns a malloc'd path or NULL. */
char *fab_test_tempdir(void);
void fab_test_rmtree(const char *path);

/* Whether [off, +len) of fd reads as zeros: pread, which allocates nothing
 * in a memfd's holes (reading them through a mapping would). A short read
 * fails the test. */
int fab_test_reads_zeros(int fd, off_t off, size_t len);

/* Capture what this process writes to stderr (fabmem's log) from _begin to
 * _end, which puts stderr back and copies the text into buf (cap bytes, NUL
 * ended). One capture at a time. */
void fab_test_stderr_begin(void);
void fab_test_stderr_end(char *buf, size_t cap);

/* Write text to path, replacing what was there (asserted). */
void fab_test_write_file(const char *path, const char *text);

/* A fresh temp dir holding one config file, fabmem.ini, with text (asserted).
 * Returns the file's malloc'd path; *dir_out gets the dir, which the caller
 * removes with fab_test_rmtree (and frees, with the path). */
char *fab_test_config_file(const char *text, char **dir_out);

#endif /* FABTEST_H */
