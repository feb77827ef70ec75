/* Connecting to fabmemd: deadlines, the connect itself, the trust rules
 * (the socket's directory, the daemon's uid) and the autostart, as
 * client.c's top comment says. */
#include "fabmem/fabric.h"
#include "src/fabric/fabmemd.h"
#include "src/fabric/client_impl.h"
#include "src/fabric/client_ipc.h"
#include "src/fabric/client_mc.h"
#include "src/fabric/client_fault.h"

#include <dlfcn.h>
#include <errno.h>
#include <stddef.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "src/common/log.h"
#include "src/common/proto.h"
#include "src/fabric/observe.h"
#include "src/base/env.h"

/* ---- connecting ------------------------------------------------------------ */

int64_t fab__client_deadline(const fab_client_t *client)
{
    return client->timeout_ms > 0 ? fab__now_ms() + client->timeout_ms : -1;
}


/* Set how long a send on sock (connect included) may block: ms, at least 1;
 * 0 leaves it unbounded. */
static int fab__send_timeout(int sock, int64_t ms)
{
    if (ms <= 0)
        return 0;
    struct timeval tv = {.tv_sec = (time_t)(ms / 1000), .tv_usec = (suseconds_t)(ms % 1000) * 1000};
    return setsockopt(sock, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
}

/* One connection to the socket at path, given up at deadline (-1: none)
 * with ETIMEDOUT. A daemon whose listen backlog is full (a hung one, or one
 * another user floods) leaves an AF_UNIX connect() waiting for room, and
 * poll cannot wait for that on a non-blocking socket (connect answers
 * EAGAIN at once, with nothing in progress), so the wait is bounded by
 * SO_SNDTIMEO, which the kernel applies to that wait. It stays set to
 * timeout_ms: a send that blocks as long breaks the connection
 * (SYSTEM_NOT_READY) rather than hanging the call. */
static int fab__connect_once(const char *path, int64_t deadline, int timeout_ms)
{
    int sock = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
    if (sock < 0)
        return -1;
    struct sockaddr_un addr;
    if (fab__sockaddr_un(path, &addr) != 0) {
        close(sock);
        return -1;
    }
    for (;;) {
        int64_t left = deadline >= 0 ? deadline - fab__now_ms() : 0;
        if (deadline >= 0 && (left <= 0 || fab__send_timeout(sock, left) != 0)) {
            errno = ETIMEDOUT;
            break;
        }
        if (connect(sock, (struct sockaddr *)&addr, sizeof(addr)) == 0) {
            if (fab__send_timeout(sock, timeout_ms) != 0)
                break;
            return sock;
        }
        if (errno == EAGAIN || errno == EWOULDBLOCK)
            errno = ETIMEDOUT; /* the backlog stayed full until the deadline */
        if (errno != EINTR)
            break;
    }
    int saved = errno;
    close(sock);
    errno = saved;
    return -1;
}

extern char **environ;

/* Start a daemon for socket path and wait until it listens or gives way
 * (fab__fabmemd_spawn: detached, so that it is no child of ours). */
static int fab__fabmemd_start(const char *socket_path, int timeout_ms)
{
    char exe[PATH_MAX];
    if (fab__fabmemd_find(exe, sizeof(exe)) != 0) {
        fab__log(FAB__LOG_WARN, "no fabmemd to start (set FABMEM_DAEMON)");
        return -1;
    }
    /* The daemon's environment: ours, with FABMEM_SOCKET the socket's. */
    char sockenv[PATH_MAX + 16];
    snprintf(sockenv, sizeof(sockenv), FAB__ENV_SOCKET "=%s", socket_path);
    size_t nenv = 0;
    while (environ != NULL && environ[nenv] != NULL)
        nenv++;
    char **envp = calloc(nenv + 2, sizeof(*envp));
    if (envp == NULL)
        return -1;
    size_t k = 0;
    for (size_t i = 0; i < nenv; i++) {
        if (strncmp(environ[i], FAB__ENV_SOCKET "=", sizeof(FAB__ENV_SOCKET)) != 0)
            envp[k++] = environ[i];
    }
    envp[k++] = sockenv;
    static const char *const args[] = {"--autostarted", NULL};
    fab__fabmemd_spawn_t spawn = {.exe = exe, .args = args, .envp = envp, .detach = 1,
                                  .ready_fd = -1, .timeout_ms = timeout_ms};
    int ready = fab__fabmemd_spawn(&spawn, NULL);
    free(envp);
    if (ready < 0)
        return -1; /* no pipe, no fork */
    fab__log(FAB__LOG_INFO, "started %s for %s: %s", exe, socket_path,
             ready == 0 ? "ready" : "it gave way or failed");
    return 0;
}

/* Whether the daemon at the other end of sock may be trusted with our
 * memory: it runs as us or as root. */
static int fab__peer_trusted(int sock, const char *path)
{
    struct ucred cred;
    socklen_t len = sizeof(cred);
    if (getsockopt(sock, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0) {
        fab__log(FAB__LOG_WARN, "fabmemd at %s: SO_PEERCRED: %s", path, strerror(errno));
        return 0;
    }
    if (cred.uid == geteuid() || cred.uid == 0)
        return 1;
    fab__log(FAB__LOG_ERROR,
             "refusing fabmemd at %s: it runs as uid %lu (pid %ld); a daemon must run as this "
             "user (uid %lu) or as root", path, (unsigned long)cred.uid, (long)cred.pid,
             (unsigned long)geteuid());
    return 0;
}

/* A connection to a daemon we may trust, starting one if allowed. -1 with
 * *status_out NOT_PERMITTED (a trust rule broken: logged) or
 * SYSTEM_NOT_READY (no daemon). */
int fab__client_connect(const fab_client_t *client, fab_status_t *status_out)
{
    const char *path = client->path;
    char why[PATH_MAX + 160];
    *status_out = FAB_ERROR_SYSTEM_NOT_READY;
    if (fab__socket_dir_check(path, FAB__DIR_CLIENT, why, sizeof(why)) != 0) {
        if (errno == EPERM) {
            fab__log(FAB__LOG_ERROR, "refusing fabmemd's socket: %s", why);
            *status_out = FAB_ERROR_NOT_PERMITTED;
            return -1;
        }
        if (!client->autostart)
            return -1; /* no directory: no daemon */
        if (fab__socket_dir_make(path, FAB__DIR_CLIENT, why, sizeof(why)) != 0) {
            fab__log(FAB__LOG_ERROR, "refusing fabmemd's socket: %s", why);
            if (errno == EPERM)
                *status_out = FAB_ERROR_NOT_PERMITTED;
            return -1;
        }
    }
    int64_t deadline = fab__client_deadline(client);
    int sock = fab__connect_once(path, deadline, client->timeout_ms);
    if (sock < 0 && client->autostart && (errno == ENOENT || errno == ECONNREFUSED) &&
        fab__fabmemd_start(path, client->timeout_ms) == 0) {
        /* The daemon that won a start race may still be binding: retry
         * briefly, within the deadline. */
        for (int i = 0; i < 500 && sock < 0 && (errno == ENOENT || errno == ECONNREFUSED) &&
                        (deadline < 0 || fab__now_ms() < deadline);
             i++) {
            struct timespec ts = {0, 10 * 1000 * 1000};
            nanosleep(&ts, NULL);
            sock = fab__connect_once(path, deadline, client->timeout_ms);
        }
    }
    if (sock < 0) {
        if (errno == ETIMEDOUT)
            fab__log(FAB__LOG_WARN, "fabmemd at %s did not take the connection within %d ms "
                     "(its listen backlog is full)", path, client->timeout_ms);
        return -1;
    }
    if (!fab__peer_trusted(sock, path)) {
        close(sock);
        *status_out = FAB_ERROR_NOT_PERMITTED;
        return -1;
    }
    return sock;
}
