/* Finding and starting fabmemd, for the client's autostart and for the
 * tools that start a daemon of their own (fabmem run, --node-per-rank):
 * one function starts it and waits for its ready fd (spawn.c). */
#ifndef FABMEM_FABRIC_FABMEMD_H
#define FABMEM_FABRIC_FABMEMD_H

#include <stddef.h>
#include <sys/types.h>

/* Where the fabmemd program is: $FABMEM_DAEMON, else next to the library or
 * program that holds this code (installed: bin/ beside lib/ or lib/fabmem/;
 * the build tree: src/daemon/), else the first on $PATH. The path into buf
 * (cap bytes): 0, or -1 when none is found. */
int fab__fabmemd_find(char *buf, size_t cap);

typedef struct fab__fabmemd_spawn {
    const char *exe;          /* the program (fab__fabmemd_find) */
    const char *const *args;  /* after --foreground --ready-fd N; NULL-terminated, at most 16 */
    char *const *envp;        /* NULL: ours */
    int detach;               /* 1: a daemon of its own (new session, no child of ours,
                               * stdio on /dev/null); 0: our child */
    int ready_fd;             /* the fd number the child holds the ready pipe at (-1: any) */
    int close_others;         /* 1: the child keeps only stdout, stderr and the pipe; stdin
                               * is /dev/null */
    int timeout_ms;           /* how long to wait for ready (<= 0: as long as it takes) */
    /* Called in the child instead of exec, with what it would have exec'd
     * (the job's janitor, which runs the daemon as its own child); must not
     * return. NULL: exec. */
    void (*in_child)(void *arg, const char *exe, char *const *argv);
    void *in_child_arg;
} fab__fabmemd_spawn_t;

/* Start fabmemd as spawn says and wait until it says it listens. 0: ready,
 * *pid_out (may be NULL) the child's pid (0 when detached); 1: it closed the
 * pipe unwritten (another daemon won the socket, or it failed: its own
 * message says why), and the child, if ours, is reaped (*pid_out 0), or the
 * wait ran out (*pid_out the child, still running); -1 with errno: no pipe
 * or no fork. Flushes stdio before it forks. */
int fab__fabmemd_spawn(const fab__fabmemd_spawn_t *spawn, pid_t *pid_out);

#endif /* FABMEM_FABRIC_FABMEMD_H */
