/* The client-daemon wire protocol's transport (see proto.h): the send and
 * receive calls that carry one message and its fds over the Unix socket,
 * the waits with deadlines, and where the socket lives and the rules its
 * directory must pass. What the bytes mean is proto.c's. */
#include "src/common/proto.h"

#include "src/base/env.h"
#include "src/base/hot.h"

#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

FAB__HOT
int fab__proto_send(int sock, const uint8_t *buf, size_t len, int fd)
{
    return fab__proto_send_fds(sock, buf, len, &fd, fd >= 0 ? 1 : 0);
}

FAB__HOT
int fab__proto_send_fds(int sock, const uint8_t *buf, size_t len, const int *fds, unsigned nfds)
{
    struct iovec iov = {.iov_base = (void *)buf, .iov_len = len};
    union {
        struct cmsghdr align;
        char buf[CMSG_SPACE(FAB__PROTO_FDS_MAX * sizeof(int))];
    } control;
    struct msghdr msg = {.msg_iov = &iov, .msg_iovlen = 1};
    if (nfds > FAB__PROTO_FDS_MAX) {
        errno = EINVAL;
        return -1;
    }
    if (nfds > 0) {
        memset(&control, 0, sizeof(control));
        msg.msg_control = control.buf;
        msg.msg_controllen = CMSG_SPACE(nfds * sizeof(int));
        struct cmsghdr *c = CMSG_FIRSTHDR(&msg);
        c->cmsg_level = SOL_SOCKET;
        c->cmsg_type = SCM_RIGHTS;
        c->cmsg_len = CMSG_LEN(nfds * sizeof(int));
        memcpy(CMSG_DATA(c), fds, nfds * sizeof(int));
    }
    for (;;) {
        /* Without fds, send(): the kernel's sendmsg copies and checks a
         * msghdr and an iovec first, about a quarter of a microsecond a
         * message on the machines measured (docs/cuda.md). */
        ssize_t n = nfds > 0 ? sendmsg(sock, &msg, MSG_NOSIGNAL) : send(sock, buf, len, MSG_NOSIGNAL);
        if (n >= 0)
            return (size_t)n == len ? 0 : (errno = EPROTO, -1);
        if (errno != EINTR)
            return -1;
    }
}

FAB__HOT
ssize_t fab__proto_recv_fds(int sock, uint8_t *buf, int *fds, unsigned *nfds_out, int *lost_out,
                            int flags)
{
    /* Room for FAB__PROTO_FDS_MAX fds, what one reply of ours carries at
     * most: a peer that sends more loses them all (the kernel closes what
     * does not fit, and we close the rest). */
    union {
        struct cmsghdr align;
        char buf[CMSG_SPACE(FAB__PROTO_FDS_MAX * sizeof(int))];
    } control;
    struct iovec iov = {.iov_base = buf, .iov_len = FAB__PROTO_MAX};
    struct msghdr msg = {.msg_iov = &iov, .msg_iovlen = 1,
                         .msg_control = control.buf, .msg_controllen = sizeof(control.buf)};
    ssize_t n;
    *nfds_out = 0;
    *lost_out = 0;
    n = recvmsg(sock, &msg, MSG_CMSG_CLOEXEC | flags);
    if (n < 0)
        return -1; /* EINTR too: a wait with a deadline must see it */
    unsigned got = 0;
    int too_many = 0;
    for (struct cmsghdr *c = CMSG_FIRSTHDR(&msg); c != NULL; c = CMSG_NXTHDR(&msg, c)) {
        if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
            continue;
        size_t count = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
        for (size_t i = 0; i < count; i++) {
            int fd;
            memcpy(&fd, CMSG_DATA(c) + i * sizeof(int), sizeof(int));
            if (got < FAB__PROTO_FDS_MAX)
                fds[got++] = fd;
            else {
                close(fd);
                too_many = 1;
            }
        }
    }
    /* Control data cut short with our room full: the peer sent more than
     * FAB__PROTO_FDS_MAX, which no message of ours does. Cut short with room
     * left: the kernel could not install the rest (this process's table is
     * full); it installs in order, so those we got are the first. */
    if ((msg.msg_flags & MSG_CTRUNC) != 0 && got == FAB__PROTO_FDS_MAX)
        too_many = 1;
    if ((msg.msg_flags & MSG_TRUNC) != 0 || too_many) {
        for (unsigned i = 0; i < got; i++)
            close(fds[i]);
        errno = EMSGSIZE;
        return -1;
    }
    *nfds_out = got;
    *lost_out = (msg.msg_flags & MSG_CTRUNC) != 0;
    return n;
}

FAB__HOT
ssize_t fab__proto_recv(int sock, uint8_t *buf, int *fd_out, int flags)
{
    int fds[FAB__PROTO_FDS_MAX];
    unsigned nfds;
    int lost;
    ssize_t n;
    do {
        n = fab__proto_recv_fds(sock, buf, fds, &nfds, &lost, flags);
    } while (n < 0 && errno == EINTR);
    if (n < 0)
        return -1;
    for (unsigned i = fd_out != NULL ? 1 : 0; i < nfds; i++)
        close(fds[i]);
    /* One fd, as every message but IMPORT_MANY's reply has at most: cut
     * short with one in hand means more were sent than ever are. */
    if (lost && nfds > 0 && fd_out != NULL) {
        close(fds[0]);
        errno = EMSGSIZE;
        return -1;
    }
    if (fd_out != NULL)
        *fd_out = lost ? FAB__FD_LOST : nfds > 0 ? fds[0] : -1;
    return n;
}

int64_t fab__now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int fab__proto_wait(int sock, int64_t deadline_ms)
{
    for (;;) {
        int timeout = -1;
        if (deadline_ms >= 0) {
            int64_t left = deadline_ms - fab__now_ms();
            if (left <= 0)
                return 0;
            timeout = left > INT32_MAX ? INT32_MAX : (int)left;
        }
        struct pollfd p = {.fd = sock, .events = POLLIN};
        int n = poll(&p, 1, timeout);
        if (n > 0)
            return 1;
        if (n == 0 && deadline_ms >= 0)
            continue; /* re-check the clock: poll may wake a little early */
        if (n < 0 && errno != EINTR)
            return -1;
    }
}

int fab__socket_path(const char *explicit_path, char *buf, size_t cap)
{
    const char *env = getenv(FAB__ENV_SOCKET);
    const char *xdg = getenv("XDG_RUNTIME_DIR");
    int n;
    if (explicit_path != NULL && *explicit_path != '\0')
        n = snprintf(buf, cap, "%s", explicit_path);
    else if (env != NULL && *env != '\0')
        n = snprintf(buf, cap, "%s", env);
    else if (xdg != NULL && *xdg != '\0')
        n = snprintf(buf, cap, "%s/fabmem/fabmemd.sock", xdg);
    else
        n = snprintf(buf, cap, "/tmp/fabmem-%lu/fabmemd.sock", (unsigned long)getuid());
    /* sun_path holds 108 bytes with its NUL. */
    if (n < 0 || (size_t)n >= cap || n >= 108)
        return -1;
    return 0;
}

int fab__sockaddr_un(const char *path, struct sockaddr_un *addr)
{
    size_t len = strlen(path);
    memset(addr, 0, sizeof(*addr));
    addr->sun_family = AF_UNIX;
    if (len >= sizeof(addr->sun_path)) {
        errno = ENAMETOOLONG;
        return -1;
    }
    memcpy(addr->sun_path, path, len + 1);
    return 0;
}

/* The directory part of path into dir; 0, or -1 (ENAMETOOLONG). A path
 * without one ("x.sock", "/x.sock") has "." or "/". */
static int fab__socket_dir_of(const char *path, char *dir, size_t cap)
{
    const char *slash = strrchr(path, '/');
    size_t len = slash == NULL ? 0 : slash == path ? 1 : (size_t)(slash - path);
    if (len + 2 > cap) {
        errno = ENAMETOOLONG;
        return -1;
    }
    if (len == 0)
        memcpy(dir, ".", 2);
    else {
        memcpy(dir, path, len);
        dir[len] = '\0';
    }
    return 0;
}

#define FAB__WHY(...) (why != NULL ? (void)snprintf(why, cap, __VA_ARGS__) : (void)0)

int fab__socket_dir_check(const char *path, fab__dir_rule_t rule, char *why, size_t cap)
{
    char dir[PATH_MAX];
    if (fab__socket_dir_of(path, dir, sizeof(dir)) != 0) {
        FAB__WHY("socket path %s: too long", path);
        return -1;
    }
    struct stat st;
    if (lstat(dir, &st) != 0) {
        int saved = errno;
        FAB__WHY("socket directory %s: %s", dir, strerror(saved));
        errno = saved;
        return -1;
    }
    uid_t me = geteuid();
    const char *broken = NULL;
    if (S_ISLNK(st.st_mode))
        broken = "is a symbolic link; it must be a real directory";
    else if (!S_ISDIR(st.st_mode))
        broken = "is not a directory";
    else if (st.st_uid != me && !(rule == FAB__DIR_CLIENT && st.st_uid == 0))
        broken = rule == FAB__DIR_CLIENT ? "belongs to another user; it must be yours or root's"
                                         : "belongs to another user; it must be the daemon's own";
    else if ((st.st_mode & (S_IWGRP | S_IWOTH)) != 0)
        broken = "is writable by group or others, so anyone could plant a socket there";
    if (broken == NULL)
        return 0;
    FAB__WHY("socket directory %s (owner uid %lu, mode %04o) %s", dir, (unsigned long)st.st_uid,
             (unsigned)(st.st_mode & 07777), broken);
    errno = EPERM;
    return -1;
}

int fab__socket_dir_make(const char *path, fab__dir_rule_t rule, char *why, size_t cap)
{
    char dir[PATH_MAX];
    if (fab__socket_dir_of(path, dir, sizeof(dir)) != 0) {
        FAB__WHY("socket path %s: too long", path);
        return -1;
    }
    if (mkdir(dir, 0700) != 0 && errno != EEXIST) {
        int saved = errno;
        FAB__WHY("socket directory %s: %s", dir, strerror(saved));
        errno = saved;
        return -1;
    }
    return fab__socket_dir_check(path, rule, why, cap);
}
