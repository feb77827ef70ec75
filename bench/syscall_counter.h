/* A count of system calls made, from the kernel's raw_syscalls:sys_enter
 * tracepoint through perf_event_open: what the benchmarks report per import
 * and per cycle. The tracepoint needs root, or perf_event_paranoid -1; where
 * it is refused the counter is -1 and the benchmark says so. One header for
 * the benchmarks that count, each a program of its own. */
#ifndef FAB_BENCH_SYSCALL_COUNTER_H
#define FAB_BENCH_SYSCALL_COUNTER_H

#include <linux/perf_event.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <unistd.h>

/* The tracepoint's id, from tracefs (either mount point), or -1. */
static inline int syscall_tracepoint(void)
{
    static const char *paths[] = {"/sys/kernel/tracing/events/raw_syscalls/sys_enter/id",
                                  "/sys/kernel/debug/tracing/events/raw_syscalls/sys_enter/id"};
    for (size_t i = 0; i < sizeof(paths) / sizeof(paths[0]); i++) {
        FILE *f = fopen(paths[i], "r");
        int id;
        if (f == NULL)
            continue;
        int ok = fscanf(f, "%d", &id) == 1;
        fclose(f);
        if (ok)
            return id;
    }
    return -1;
}

/* A counter of pid's system calls (0: this process, and with inherit its
 * children forked from now on, added in as each exits); -1 if perf refuses. */
static inline int syscall_counter(pid_t pid, int inherit)
{
    int id = syscall_tracepoint();
    if (id < 0)
        return -1;
    struct perf_event_attr attr;
    memset(&attr, 0, sizeof(attr));
    attr.size = sizeof(attr);
    attr.type = PERF_TYPE_TRACEPOINT;
    attr.config = (unsigned)id;
    attr.inherit = inherit ? 1 : 0;
    return (int)syscall(SYS_perf_event_open, &attr, pid, -1, -1, PERF_FLAG_FD_CLOEXEC);
}

#endif /* FAB_BENCH_SYSCALL_COUNTER_H */
