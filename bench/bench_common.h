/* What the benchmarks that run a daemon next to a bare server share: the
 * clock, pinning, medians, context switch counts, starting fabmemd, and the
 * bare mechanism itself (an fd over SCM_RIGHTS, and a server that answers
 * every request on its sockets with one memfd, all of them in one epoll, as
 * fabmemd holds its clients'). One header for programs of their own, as
 * syscall_counter.h is. */
#ifndef FAB_BENCH_COMMON_H
#define FAB_BENCH_COMMON_H

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static inline double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Pin pid (0: this process) to cpu; cpu < 0: let it run anywhere. */
static inline void pin(pid_t pid, int cpu)
{
    cpu_set_t set;
    CPU_ZERO(&set);
    long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
    for (long c = 0; c < ncpu && c < CPU_SETSIZE; c++) {
        if (cpu < 0 || c == cpu)
            CPU_SET(c, &set);
    }
    (void)sched_setaffinity(pid, sizeof(set), &set);
}

static inline int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The value of a syscall_counter() (-1 for none). */
static inline double counter_value(int fd)
{
    uint64_t v;
    return fd >= 0 && read(fd, &v, sizeof(v)) == sizeof(v) ? (double)v : -1;
}

/* Voluntary and involuntary context switches of this process and of its
 * children that were waited for, so far. */
static inline double own_switches(void)
{
    struct rusage self, children;
    getrusage(RUSAGE_SELF, &self);
    getrusage(RUSAGE_CHILDREN, &children);
    return (double)(self.ru_nvcsw + self.ru_nivcsw + children.ru_nvcsw + children.ru_nivcsw);
}

/* The same of another process, from /proc. */
static inline double proc_switches(pid_t pid)
{
    char path[64], line[256];
    snprintf(path, sizeof(path), "/proc/%ld/status", (long)pid);
    FILE *f = fopen(path, "r");
    double total = 0;
    if (f == NULL)
        return -1;
    while (fgets(line, sizeof(line), f) != NULL) {
        unsigned long long v;
        if (sscanf(line, "voluntary_ctxt_switches: %llu", &v) == 1 ||
            sscanf(line, "nonvoluntary_ctxt_switches: %llu", &v) == 1)
            total += (double)v;
    }
    fclose(f);
    return total;
}

/* fabmemd (exe) on socket with config, in the foreground; its pid once it
 * says it is ready, or -1. */
static inline pid_t daemon_start(const char *exe, const char *socket, const char *config)
{
    int pipefd[2];
    if (pipe(pipefd) != 0)
        return -1;
    char fdtext[16];
    snprintf(fdtext, sizeof(fdtext), "%d", pipefd[1]);
    pid_t pid = fork();
    if (pid == 0) {
        close(pipefd[0]);
        execl(exe, exe, "--foreground", "--socket", socket, "--config", config, "--ready-fd",
              fdtext, (char *)NULL);
        _exit(127);
    }
    close(pipefd[1]);
    char byte;
    if (read(pipefd[0], &byte, 1) != 1) {
        fprintf(stderr, "fabmemd did not start (%s)\n", exe);
        return -1;
    }
    close(pipefd[0]);
    return pid;
}

static inline void daemon_stop(pid_t pid)
{
    kill(pid, SIGTERM);
    waitpid(pid, NULL, 0);
}

/* ---- the bare mechanism ---- */

static inline int send_fd(int sock, int fd)
{
    char byte = 'F';
    struct iovec iov = {.iov_base = &byte, .iov_len = 1};
    union {
        struct cmsghdr align;
        char buf[CMSG_SPACE(sizeof(int))];
    } control;
    memset(&control, 0, sizeof(control));
    struct msghdr msg = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = control.buf,
                         .msg_controllen = sizeof(control.buf)};
    struct cmsghdr *c = CMSG_FIRSTHDR(&msg);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN(sizeof(int));
    memcpy(CMSG_DATA(c), &fd, sizeof(int));
    return sendmsg(sock, &msg, MSG_NOSIGNAL) == 1 ? 0 : -1;
}

static inline int recv_fd(int sock)
{
    char byte;
    struct iovec iov = {.iov_base = &byte, .iov_len = 1};
    union {
        struct cmsghdr align;
        char buf[CMSG_SPACE(sizeof(int))];
    } control;
    struct msghdr msg = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = control.buf,
                         .msg_controllen = sizeof(control.buf)};
    if (recvmsg(sock, &msg, MSG_CMSG_CLOEXEC) != 1)
        return -1;
    struct cmsghdr *c = CMSG_FIRSTHDR(&msg);
    if (c == NULL || c->cmsg_type != SCM_RIGHTS)
        return -1;
    int fd;
    memcpy(&fd, CMSG_DATA(c), sizeof(int));
    return fd;
}

/* The epoll server: answers every request on its n sockets with its one
 * memfd of size bytes, until every socket is closed; it never returns. */
#define BENCH_EPOLL_MAX 64
static inline void epoll_serve(const int *socks, int n, size_t size)
{
    int memfd = memfd_create("bare", MFD_CLOEXEC);
    int ep = epoll_create1(EPOLL_CLOEXEC);
    if (memfd < 0 || ftruncate(memfd, (off_t)size) != 0 || ep < 0)
        _exit(1);
    for (int i = 0; i < n; i++) {
        struct epoll_event ev = {.events = EPOLLIN, .data.fd = socks[i]};
        if (epoll_ctl(ep, EPOLL_CTL_ADD, socks[i], &ev) != 0)
            _exit(1);
    }
    for (int open = n; open > 0;) {
        struct epoll_event evs[BENCH_EPOLL_MAX];
        int k = epoll_wait(ep, evs, BENCH_EPOLL_MAX, -1);
        for (int j = 0; j < k; j++) {
            char req[64];
            ssize_t got = recv(evs[j].data.fd, req, sizeof(req), MSG_DONTWAIT);
            if (got == 0 || (got < 0 && errno != EAGAIN)) {
                epoll_ctl(ep, EPOLL_CTL_DEL, evs[j].data.fd, NULL);
                open--;
            } else if (got > 0 && send_fd(evs[j].data.fd, memfd) != 0) {
                _exit(1);
            }
        }
    }
    _exit(0);
}

#endif /* FAB_BENCH_COMMON_H */
