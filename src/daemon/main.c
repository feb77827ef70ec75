/* fabmemd: the daemon that plays the IMEX service for one user (or, with a
 * permissive socket_mode, for several). It owns the process: options, the
 * single-instance lock, the key in the state file and the listening socket;
 * the event loop is loop.c's, the rules the registry's (registry.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <linux/sockios.h>
#include <limits.h>
#include <signal.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/file.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "fabmem/handle.h"
#include "fabmem/version.h"
#include "src/daemon/fieldfaults.h"
#include "src/daemon/loop.h"
#include "src/daemon/registry.h"
#include "src/common/log.h"
#include "src/common/proto.h"
#include "src/common/topology_impl.h"

#define FAB__AUTOSTART_IDLE_S 5

static void fab__usage(FILE *out)
{
    fprintf(out,
            "usage: fabmemd [--foreground] [--config FILE] [--socket PATH] [--log LEVEL]\n"
            "               [--idle-exit SECONDS] [--ready-fd FD] [--autostarted]\n"
            "The fabmem fabric daemon: plays NVIDIA's IMEX service for fabmem clients.\n"
            "  --foreground      stay in the foreground (else detach once listening)\n"
            "  --config FILE     topology and channels (default $FABMEM_CONFIG, else built in)\n"
            "  --socket PATH     listen here (default $FABMEM_SOCKET, else per user)\n"
            "  --log LEVEL       error, warn, info or debug (default $FABMEM_LOG, else warn)\n"
            "  --idle-exit S     exit after S seconds without clients or allocations\n"
            "  --ready-fd FD     write one byte to FD once listening, then close it\n"
            "  --autostarted     started by a client: exit when idle, give way quietly\n"
            "  --version         print the version and exit\n"
            "  --help            print this text and exit\n"
            "\n"
            "Exit status:\n"
            "  0  a clean exit (SIGTERM or SIGINT, or idle)\n"
            "  1  it could not start: a bad config (the log names file and line), a socket\n"
            "     directory that fails the trust rules, or another daemon on the socket\n"
            "  2  bad usage\n"
            "\n"
            "Environment:\n"
            "  FABMEM_SOCKET  the socket, when --socket is not given\n"
            "  FABMEM_CONFIG  the config, when --config is not given\n"
            "  FABMEM_LOG     the log level, when --log is not given\n"
            "\n"
            "Documentation: docs/fabric.md in the fabmem sources.\n");
}

/* A whole decimal number in [min, max]; 0, or -1. */
static int fab__parse_int(const char *text, long min, long max, int *out)
{
    char *end;
    errno = 0;
    long v = strtol(text, &end, 10);
    if (errno != 0 || end == text || *end != '\0' || v < min || v > max)
        return -1;
    *out = (int)v;
    return 0;
}

/* The key: 32 random bytes in a 0600 file, created on first start and read
 * on every later one, so a restarted daemon recognizes its handles. */
static int fab__key_load(const char *path, uint8_t key[FAB__KEY_BYTES])
{
    /* Non-blocking: a FIFO planted there must not hang the start. */
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY);
    if (fd >= 0) {
        struct stat st;
        int ok = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_uid == geteuid() &&
                 (st.st_mode & 077) == 0 && st.st_size == FAB__KEY_BYTES &&
                 read(fd, key, FAB__KEY_BYTES) == FAB__KEY_BYTES;
        close(fd);
        if (!ok)
            fab__log(FAB__LOG_ERROR, "state file %s: not a regular 32-byte file of ours with mode 0600",
                     path);
        return ok ? 0 : -1;
    }
    if (errno != ENOENT) {
        fab__log(FAB__LOG_ERROR, "state file %s: %s", path, strerror(errno));
        return -1;
    }
    randombytes_buf(key, FAB__KEY_BYTES);
    char tmp[PATH_MAX + 32];
    if (snprintf(tmp, sizeof(tmp), "%s.%ld", path, (long)getpid()) >= (int)sizeof(tmp))
        return -1;
    fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd < 0) {
        fab__log(FAB__LOG_ERROR, "state file %s: %s", tmp, strerror(errno));
        return -1;
    }
    int ok = write(fd, key, FAB__KEY_BYTES) == FAB__KEY_BYTES && fsync(fd) == 0;
    close(fd);
    if (!ok || rename(tmp, path) != 0) {
        fab__log(FAB__LOG_ERROR, "state file %s: cannot write", path);
        unlink(tmp);
        return -1;
    }
    return 0;
}

static int fab__listen(const char *path, unsigned mode)
{
    int sock = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (sock < 0)
        return -1;
    struct sockaddr_un addr;
    if (fab__sockaddr_un(path, &addr) != 0) {
        close(sock);
        return -1;
    }
    unlink(path); /* stale: we hold the lock, so no daemon listens there */
    if (bind(sock, (struct sockaddr *)&addr, sizeof(addr)) != 0 || chmod(path, mode) != 0 ||
        listen(sock, 128) != 0) {
        fab__log(FAB__LOG_ERROR, "socket %s: %s", path, strerror(errno));
        close(sock);
        return -1;
    }
    return sock;
}

int main(int argc, char **argv)
{
    static const struct option options[] = {
        {"foreground", no_argument, NULL, 'f'}, {"config", required_argument, NULL, 'c'},
        {"socket", required_argument, NULL, 's'}, {"log", required_argument, NULL, 'l'},
        {"idle-exit", required_argument, NULL, 'i'}, {"ready-fd", required_argument, NULL, 'r'},
        {"autostarted", no_argument, NULL, 'a'}, {"help", no_argument, NULL, 'h'},
        {"version", no_argument, NULL, 'V'},
        {NULL, 0, NULL, 0},
    };
    const char *config = NULL, *socket_opt = NULL;
    int foreground = 0, autostarted = 0, ready_fd = -1, idle_exit = -1, opt;
    while ((opt = getopt_long(argc, argv, "fc:s:l:i:r:ah", options, NULL)) != -1) {
        switch (opt) {
        case 'f': foreground = 1; break;
        case 'c': config = optarg; break;
        case 's': socket_opt = optarg; break;
        case 'l':
            if (fab__log_level_parse(optarg) < 0) {
                fab__usage(stderr);
                return 2;
            }
            fab__log_set_level((fab__log_level_t)fab__log_level_parse(optarg));
            break;
        case 'i':
            if (fab__parse_int(optarg, 0, 86400 * 365, &idle_exit) != 0) {
                fprintf(stderr, "fabmemd: --idle-exit: not a number of seconds: %s\n", optarg);
                return 2;
            }
            break;
        case 'r':
            if (fab__parse_int(optarg, 0, INT_MAX, &ready_fd) != 0) {
                fprintf(stderr, "fabmemd: --ready-fd: not a file descriptor: %s\n", optarg);
                return 2;
            }
            break;
        case 'a': autostarted = 1; break;
        case 'h': fab__usage(stdout); return 0;
        case 'V':
            printf("fabmemd %s (protocol %u, handle format %d)\n", FAB_VERSION_STRING,
                   FAB__PROTO_VERSION, FAB_HANDLE_VERSION);
            return 0;
        default: fab__usage(stderr); return 2;
        }
    }
    if (optind != argc) {
        fab__usage(stderr);
        return 2;
    }
    /* Whatever the starter left open (a client's pipes, a test's sockets)
     * must not be held for the daemon's lifetime: keep only stdio and the
     * ready fd, moved to 3. */
    if (ready_fd >= 0 && ready_fd != 3) {
        if (dup2(ready_fd, 3) != 3)
            return 1;
        ready_fd = 3;
    }
    close_range(ready_fd >= 0 ? 4 : 3, ~0u, 0);
    if (sodium_init() < 0) {
        fab__log(FAB__LOG_ERROR, "libsodium failed to initialize");
        return 1;
    }
    int status = 1;
    fab_topology_t *topology = NULL;
    if (fab_topology_load(config, &topology) != FAB_SUCCESS)
        return 1;

    char path[PATH_MAX], lock_path[PATH_MAX + 8], key_path[PATH_MAX + 8];
    if (fab__socket_path(socket_opt, path, sizeof(path)) != 0) {
        fab__log(FAB__LOG_ERROR, "socket path too long");
        goto out_topology;
    }
    char why[PATH_MAX + 160];
    if (fab__socket_dir_make(path, FAB__DIR_DAEMON, why, sizeof(why)) != 0) {
        fab__log(FAB__LOG_ERROR, "refusing to listen: %s", why);
        goto out_topology;
    }
    snprintf(lock_path, sizeof(lock_path), "%s.lock", path);
    if (topology->state_file != NULL)
        snprintf(key_path, sizeof(key_path), "%s", topology->state_file);
    else
        snprintf(key_path, sizeof(key_path), "%s.key", path);

    /* Detach unless told not to: the parent returns once the child listens. */
    if (!foreground) {
        int pipefd[2];
        if (pipe2(pipefd, O_CLOEXEC) != 0)
            goto out_topology;
        pid_t pid = fork();
        if (pid < 0)
            goto out_topology;
        if (pid > 0) {
            char byte;
            close(pipefd[1]);
            ssize_t got = read(pipefd[0], &byte, 1);
            fab_topology_destroy(topology);
            return got == 1 ? 0 : 1;
        }
        close(pipefd[0]);
        setsid();
        if (ready_fd >= 0)
            close(ready_fd);
        ready_fd = pipefd[1];
    }

    int lock = open(lock_path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    if (lock < 0 || flock(lock, LOCK_EX | LOCK_NB) != 0) {
        /* Another daemon serves this socket: an autostarted one gives way. */
        fab__log(autostarted ? FAB__LOG_INFO : FAB__LOG_ERROR, "%s: another fabmemd holds it",
                 lock_path);
        status = autostarted ? 0 : 1;
        goto out_lock;
    }
    uint8_t key[FAB__KEY_BYTES];
    if (fab__key_load(key_path, key) != 0)
        goto out_lock;

    sigset_t mask;
    sigemptyset(&mask);
    sigaddset(&mask, SIGTERM);
    sigaddset(&mask, SIGINT);
    sigprocmask(SIG_BLOCK, &mask, NULL);
    signal(SIGPIPE, SIG_IGN);

    fab__loop_t loop = {.epoll = -1, .listener = -1, .signals = -1, .probe = {-1, -1}};
    loop.idle_exit = idle_exit >= 0 ? idle_exit : topology->idle_exit;
    if (autostarted && loop.idle_exit <= 0)
        loop.idle_exit = FAB__AUTOSTART_IDLE_S;
    loop.daemon = fab__registry_create(topology, key);
    sodium_memzero(key, sizeof(key));
    if (loop.daemon == NULL)
        goto out_lock;
    loop.signals = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
    loop.epoll = epoll_create1(EPOLL_CLOEXEC);
    if (loop.signals < 0 || loop.epoll < 0)
        goto out_loop;
    loop.listener = fab__listen(path, topology->socket_mode);
    if (loop.listener < 0)
        goto out_loop;
    /* Without the probe, replies' sizes are unknown and fds in flight are
     * counted until the client's whole queue is read. */
    loop.queue_bytes = calloc(FAB__PROTO_MAX + 1, sizeof(*loop.queue_bytes));
    if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, loop.probe) != 0)
        loop.probe[0] = loop.probe[1] = -1;

    /* Memory for a million allocations means a million memfds. */
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
        rl.rlim_cur = rl.rlim_max;
        setrlimit(RLIMIT_NOFILE, &rl);
    }

    fab__log(FAB__LOG_INFO, "listening on %s (%d nodes, %d channels)", path, topology->nnodes,
             topology->nchannels);
    if (ready_fd >= 0) {
        ssize_t w = write(ready_fd, "R", 1);
        (void)w;
        close(ready_fd);
        ready_fd = -1;
    }
    status = fab__loop_run(&loop) == 0 ? 0 : 1;
    fab__loop_shutdown(&loop);
    unlink(path);

out_loop:
    if (loop.listener >= 0)
        close(loop.listener);
    if (loop.probe[0] >= 0) {
        close(loop.probe[0]);
        close(loop.probe[1]);
    }
    free(loop.queue_bytes);
    if (loop.signals >= 0)
        close(loop.signals);
    if (loop.epoll >= 0)
        close(loop.epoll);
    fab__registry_destroy(loop.daemon);
out_lock:
    if (lock >= 0)
        close(lock);
    if (ready_fd >= 0)
        close(ready_fd);
out_topology:
    fab_topology_destroy(topology);
    return status;
}
