/* The lifetime checker's SIGSEGV/SIGBUS handler (check.c's top comment has
 * the checker), installed at load only when checking.
 *
 * It reports a fault inside memory the checker has a record of and then
 * lets the process die of the signal as an unhandled fault would; a fault
 * anywhere else goes to the handler that was there before. A SIGSEGV or
 * SIGBUS that no fault raised (kill, raise, sigqueue, tgkill: si_code <= 0)
 * is not looked at: it goes to the handler that was there before, and where
 * that was the default it kills the process, as it would unchecked. The
 * handler is async-signal-safe: it allocates nothing and writes its stacks
 * as raw addresses (no backtrace_symbols, which mallocs); backtrace itself
 * is loaded at start, never first called in the handler. */
#include "src/cuda/check.h"
#include "src/cuda/check_impl.h"

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

/* ---- faults ----------------------------------------------------------------------- */

/* Whether one byte at addr can be read, without touching it: write(2) from
 * an unreadable address fails with EFAULT rather than faulting. */
static bool fab__cu_check_readable(uintptr_t addr)
{
    if (fab__cu_check_probe[1] < 0)
        return false;
    bool ok = write(fab__cu_check_probe[1], (const void *)addr, 1) == 1;
    if (ok) {
        char c;
        (void)!read(fab__cu_check_probe[0], &c, 1);
    }
    return ok;
}

/* Report a fault at addr if it lies in memory with a record; true then. */
static bool fab__cu_check_fault(int sig, uintptr_t addr)
{
    /* The mutex is taken with trylock: the faulting thread cannot hold it
     * (no check code touches user memory), another thread soon lets go. */
    int tries = 0;
    while (pthread_mutex_trylock(&fab__cu_check_mutex) != 0) {
        if (++tries > 100000)
            return false;
        sched_yield();
    }
    fab__cu_check_rec_t *live = fab__cu_check_holding(addr, true);
    fab__cu_check_rec_t *dead = fab__cu_check_holding(addr, false);
    void *frames[FAB__CU_CHECK_FRAMES];
    fab__cu_check_finding_t f = {.id = "fault", .offset = -1, .frames = frames,
                                 .has_address = true, .address = addr, .in_signal = true};
    f.nframes = fab__cu_check_capture(frames);
    const char *sig_name = sig == SIGBUS ? "SIGBUS" : "SIGSEGV";
    if (live && live->kind != FAB__CU_CHECK_RESERVE) {
        f.rec = live;
        f.offset = (long long)(addr - live->key);
        if (fab__cu_check_readable(addr)) {
            f.id = "write-read-only";
            f.access = "read-only";
            snprintf(f.message, sizeof(f.message),
                     "write to a read-only %s at 0x%" PRIxPTR " (%s; a GPU would raise "
                     "CUDA_ERROR_ILLEGAL_ADDRESS)", fab__cu_check_kind_names[live->kind], addr,
                     sig_name);
        } else {
            f.id = "no-access";
            f.access = "none";
            snprintf(f.message, sizeof(f.message),
                     "access to a %s at 0x%" PRIxPTR " that grants none (cuMemSetAccess never "
                     "granted it; %s; a GPU would raise CUDA_ERROR_ILLEGAL_ADDRESS)",
                     fab__cu_check_kind_names[live->kind], addr, sig_name);
        }
    } else if (dead) {
        f.rec = dead;
        f.id = "use-after-release";
        f.offset = (long long)(addr - dead->key);
        snprintf(f.message, sizeof(f.message),
                 "access to 0x%" PRIxPTR " after the release of its %s (%s; a GPU would raise "
                 "CUDA_ERROR_ILLEGAL_ADDRESS)", addr, fab__cu_check_kind_names[dead->kind],
                 sig_name);
    } else if (live) {
        f.rec = live;
        f.id = "unmapped";
        f.offset = (long long)(addr - live->key);
        snprintf(f.message, sizeof(f.message),
                 "access to 0x%" PRIxPTR ", reserved but not mapped (%s; a GPU would raise "
                 "CUDA_ERROR_ILLEGAL_ADDRESS)", addr, sig_name);
    } else {
        pthread_mutex_unlock(&fab__cu_check_mutex);
        return false;
    }
    fab__cu_check_emit(&f);
    fab__cu_check_summary();
    pthread_mutex_unlock(&fab__cu_check_mutex);
    return true;
}

void fab__cu_check_on_fault(int sig, siginfo_t *info, void *uc)
{
    int saved = errno;
    const struct sigaction *old = sig == SIGBUS ? &fab__cu_check_old_bus : &fab__cu_check_old_segv;
    if (info->si_code <= 0) {
        /* Sent, not raised by a fault: si_addr means nothing, and no
         * instruction will run again to die of it. What was there before
         * decides; the default (or our own handler being all there is)
         * kills the process by the signal, once this handler returns and
         * the signal, raised again, is no longer blocked. */
        errno = saved;
        if (old->sa_flags & SA_SIGINFO) {
            old->sa_sigaction(sig, info, uc);
        } else if (old->sa_handler == SIG_IGN) {
            /* ignored, as it would be unchecked */
        } else if (old->sa_handler != SIG_DFL) {
            old->sa_handler(sig);
        } else {
            signal(sig, SIG_DFL);
            raise(sig);
        }
        return;
    }
    if (fab__cu_check_fault(sig, (uintptr_t)info->si_addr)) {
        /* Die of it: with the default action back, the faulting instruction
         * runs again and the kernel ends the process (and dumps core). */
        signal(sig, SIG_DFL);
        errno = saved;
        return;
    }
    errno = saved;
    if (old->sa_flags & SA_SIGINFO) {
        old->sa_sigaction(sig, info, uc);
    } else if (old->sa_handler != SIG_DFL && old->sa_handler != SIG_IGN) {
        old->sa_handler(sig);
    } else {
        signal(sig, SIG_DFL); /* a fault cannot be ignored: it would run again forever */
    }
}

