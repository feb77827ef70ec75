/* Test harness for the fabric suites: a private fabmemd per test. Each daemon
 * gets its own temp dir, socket, config and log file; the test process points
 * FABMEM_SOCKET at the last daemon started (helpers inherit it) and forbids
 * autostart. fab_test_teardown, a cmocka teardown, stops every daemon the test
 * started (SIGTERM by pid, then reaps it) and removes their dirs, whether the
 * test passed or not. */
#ifndef FABTEST_DAEMON_HARNESS_H
#define FABTEST_DAEMON_HARNESS_H

#include <stddef.h>
#include <sys/types.h>

#include "fabtest.h"
#include "fabmem.h"

typedef struct fab_test_daemon {
    pid_t pid;
    char *dir;
    char socket[108]; /* sun_path's size */
    char config[256];
    char log[256];
    char state[256];
    uid_t uid; /* the uid it runs as (0: the test's own) */
} fab_test_daemon_t;

/* When nonzero, the next daemons start with this RLIMIT_NOFILE (soft and
 * hard), to run them out of fds. */
extern int fab_test_daemon_nofile;

/* When nonzero (and the test runs as root), the next daemons start as this
 * uid, with the gid of the same number and no supplementary groups: their
 * dir is given to that uid (a daemon listens only in a directory of its
 * own), and privileges are dropped in the child before exec. Its log is
 * still opened by the test, so the test reads it as before. */
extern int fab_test_daemon_uid;

/* Start fabmemd with config_text (NULL: the built-in topology) and wait until
 * it listens. state_file (NULL: in its own dir) lets two daemons share a key.
 * Returns the daemon (owned by the harness) or NULL. */
fab_test_daemon_t *fab_test_daemon_start(const char *config_text, const char *state_file);

/* Stop it and start it again on the same socket, config and state file
 * (a restart). 0, or -1. */
int fab_test_daemon_restart(fab_test_daemon_t *daemon);

/* SIGCONT it (in case a test stopped it), SIGTERM it and reap it;
 * returns its exit status (0 is a clean exit). The dir stays until teardown
 * so that its log can be read. */
int fab_test_daemon_stop(fab_test_daemon_t *daemon);

/* Whether the daemon's log contains text. */
int fab_test_daemon_log_contains(const fab_test_daemon_t *daemon, const char *text);

/* How many lines of the daemon's log contain text. */
int fab_test_daemon_log_count(const fab_test_daemon_t *daemon, const char *text);

/* How many fds the daemon holds open (from /proc). */
int fab_test_daemon_fd_count(const fab_test_daemon_t *daemon);

/* How many fds this process holds open (from /proc). */
int fab_test_open_fds(void);

/* The daemon's fd count, read again until it is want or FAB_TEST_TIMEOUT_MS
 * has passed (its closes may lag a client's calls): the last count read. */
int fab_test_daemon_fd_count_settled(const fab_test_daemon_t *daemon, int want);

/* A client of the daemon at FABMEM_SOCKET that says it runs on node (NULL:
 * the first node); the connect is asserted. */
fab_client_t *fab_test_connect_node(const char *node);

/* cmocka teardown: stop every daemon this test started. */
int fab_test_teardown(void **state);

/* Hex of 16 uuid bytes, as the daemon logs them. */
void fab_test_hex16(const unsigned char *bytes, char out[33]);

/* The text of examples/<name> (a static buffer, overwritten by the next
 * call), for a daemon started on an example config (asserted). */
char *fab_test_example_config(const char *name);

/* The same, with one more IMEX channel (63) held by whoever runs the test, so
 * that its processes may make and import FABRIC memory (a static buffer of
 * its own, overwritten by the next call). */
char *fab_test_example_config_for_me(const char *name);

/* The start of a command line running fabmemd exe: FABTEST_DAEMON_LAUNCHER's
 * words (the valgrind build sets it; buf of cap bytes holds them), then exe.
 * argv needs room for 33 entries more than the caller adds; returns the
 * count. */
int fab_test_daemon_argv(const char *exe, const char **argv, char *buf, size_t cap);

/* ---- the raw protocol, to speak to a daemon as a bare or hostile client ---- */

#include "src/common/proto.h"

/* A connection to the socket at path (asserted). */
int fab_test_raw_connect(const char *path);

/* Send request with fd (-1: none) attached (asserted). */
void fab_test_raw_send(int sock, fab__request_t *request, int fd);

/* The next reply's status, or -1 when the daemon closed the connection
 * instead; the reply goes to *reply_out and its fd to *fd_out (each may be
 * NULL: an fd is then closed). Waits at most FAB_TEST_TIMEOUT_MS. */
int fab_test_raw_reply(int sock, fab__reply_t *reply_out, int *fd_out);

/* fab_test_raw_send, then fab_test_raw_reply. */
int fab_test_raw_call(int sock, fab__request_t *request, int fd, fab__reply_t *reply_out, int *fd_out);

/* HELLO on sock, asserted to succeed. */
void fab_test_raw_say_hello(int sock);

/* ADOPT handle (creator 0/1, with token: NULL is zeros) with fd attached;
 * the status. */
int fab_test_raw_adopt(int sock, const fab_handle_t *handle, int creator, const uint8_t *token, int fd);

/* A connection to path that said HELLO. */
int fab_test_raw_hello(const char *path);

#endif /* FABTEST_DAEMON_HARNESS_H */
