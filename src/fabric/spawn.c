/* Finding the fabmemd program and starting it: the one way a daemon is
 * started, by the client's autostart (client.c), `fabmem run` and `fabmem
 * run --node-per-rank` (tools/fabmem.c, tools/run_job.c). The daemon says
 * it listens by writing a byte to its --ready-fd, or closes the pipe
 * unwritten when another daemon won the race for the socket (or it failed:
 * its own message says why). */
#include "src/fabric/fabmemd.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "src/base/env.h"
#include "src/common/proto.h"

extern char **environ;

static int fab__is_executable(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode) && access(path, X_OK) == 0;
}

static const char fab__anchor = 0; /* an object of this library, for dladdr */

int fab__fabmemd_find(char *buf, size_t cap)
{
    const char *env = getenv(FAB__ENV_DAEMON);
    if (env != NULL && *env != '\0') {
        snprintf(buf, cap, "%s", env);
        return fab__is_executable(buf) ? 0 : -1;
    }
    Dl_info info;
    if (dladdr(&fab__anchor, &info) != 0 && info.dli_fname != NULL) {
        char dir[PATH_MAX];
        snprintf(dir, sizeof(dir), "%s", info.dli_fname);
        char *slash = strrchr(dir, '/');
        if (slash != NULL) {
            *slash = '\0';
            /* Installed (lib/, lib/fabmem/; a program in bin/), then the
             * build tree (libfabmem.so at its top, libcuda.so.1 in
             * lib/fabmem/, the fabmem program in tools/). */
            static const char *const rel[] = {"/../bin/fabmemd", "/../../bin/fabmemd",
                                              "/fabmemd", "/src/daemon/fabmemd",
                                              "/../../src/daemon/fabmemd",
                                              "/../src/daemon/fabmemd"};
            for (size_t i = 0; i < sizeof(rel) / sizeof(rel[0]); i++) {
                if ((size_t)snprintf(buf, cap, "%s%s", dir, rel[i]) < cap && fab__is_executable(buf))
                    return 0;
            }
        }
    }
    const char *path = getenv("PATH");
    if (path == NULL)
        return -1;
    char copy[4096];
    snprintf(copy, sizeof(copy), "%s", path);
    char *save = NULL;
    for (char *dir = strtok_r(copy, ":", &save); dir != NULL; dir = strtok_r(NULL, ":", &save)) {
        if ((size_t)snprintf(buf, cap, "%s/fabmemd", dir) < cap && fab__is_executable(buf))
            return 0;
    }
    return -1;
}
#define FAB__SPAWN_ARGS_MAX 16

int fab__fabmemd_spawn(const fab__fabmemd_spawn_t *spawn, pid_t *pid_out)
{
    /* Everything the child needs is made before fork: between fork and exec
     * a threaded process may only make async-signal-safe calls. */
    const char *argv[FAB__SPAWN_ARGS_MAX + 5];
    size_t argc = 0;
    char fdtext[16];
    argv[argc++] = spawn->exe;
    argv[argc++] = "--foreground";
    argv[argc++] = "--ready-fd";
    argv[argc++] = fdtext;
    for (size_t i = 0; spawn->args != NULL && spawn->args[i] != NULL; i++) {
        if (i == FAB__SPAWN_ARGS_MAX) {
            errno = E2BIG;
            return -1;
        }
        argv[argc++] = spawn->args[i];
    }
    argv[argc] = NULL;
    int pipefd[2];
    if (pipe2(pipefd, O_CLOEXEC) != 0)
        return -1;
    int child_fd = spawn->ready_fd >= 0 ? spawn->ready_fd : pipefd[1];
    snprintf(fdtext, sizeof(fdtext), "%d", child_fd);
    char *const *envp = spawn->envp != NULL ? spawn->envp : environ;
    /* Nothing buffered is written twice, by us and by the child's exit. */
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) {
        int saved = errno;
        close(pipefd[0]);
        close(pipefd[1]);
        errno = saved;
        return -1;
    }
    if (pid == 0) {
        if (spawn->detach) {
            /* A daemon of its own: a new session, the grandchild of ours. */
            setsid();
            if (fork() != 0)
                _exit(0);
            int null = open("/dev/null", O_RDWR);
            if (null >= 0) {
                dup2(null, 0);
                dup2(null, 1);
                dup2(null, 2);
            }
        }
        if (child_fd != pipefd[1] && dup2(pipefd[1], child_fd) != child_fd)
            _exit(1);
        fcntl(child_fd, F_SETFD, 0);
        if (spawn->close_others) {
            /* Nothing of ours but stdio and the pipe outlives us there. */
            close_range((unsigned)child_fd + 1, ~0u, 0);
            int null = open("/dev/null", O_RDONLY | O_CLOEXEC);
            if (null >= 0) {
                dup2(null, 0);
                close(null);
            }
        }
        if (spawn->in_child != NULL)
            spawn->in_child(spawn->in_child_arg, spawn->exe, (char *const *)argv);
        execve(spawn->exe, (char *const *)argv, envp);
        _exit(127);
    }
    close(pipefd[1]);
    if (spawn->detach) /* the intermediate child, which exits at once */
        while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
            ;
    int64_t deadline = spawn->timeout_ms > 0 ? fab__now_ms() + spawn->timeout_ms : -1;
    char byte = 0;
    ssize_t got = -1; /* -1: the wait ran out */
    if (fab__proto_wait(pipefd[0], deadline) == 1)
        while ((got = read(pipefd[0], &byte, 1)) < 0 && errno == EINTR)
            ;
    close(pipefd[0]);
    if (pid_out != NULL)
        *pid_out = spawn->detach ? 0 : pid;
    if (got == 1)
        return 0;
    if (!spawn->detach && got >= 0) { /* it closed the pipe: it is going, or gone */
        while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
            ;
        if (pid_out != NULL)
            *pid_out = 0;
    }
    return 1;
}
