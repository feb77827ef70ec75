/* A reader-writer lock in one word: the driver's process lock
 * (src/cuda/state.h) and, taken for writing only, the fabric client's
 * (src/fabric/client_impl.h). Header-only and below every layer.
 *
 * Why not pthread_rwlock_t or pthread_mutex_t: every driver call takes the
 * driver's lock, most of the VMM calls for writing, and every call of the
 * client (an import, map, unmap and release) takes the client's. glibc's
 * rwlock costs about 77 instructions for an uncontended write lock and
 * unlock, its mutex about 55 (callgrind, docs/cuda.md "Where the import
 * stands"); this one costs one compare-and-swap each way. What it keeps of
 * glibc's default kind: readers never wait for a waiting writer (a thread
 * that holds the lock for reading may take it for reading again), writers may
 * starve while readers keep coming, and it is not recursive for writing.
 *
 * The word: 0 free, 1 to FAB__RW_WRITER - 1 the number of readers,
 * FAB__RW_WRITER held for writing, and FAB__RW_WAITING, set by a thread that
 * is going to sleep on the word (a futex wait on exactly that value, so a
 * change in between returns it at once). A sleeper sets the bit with a
 * compare-and-swap and sleeps only if that succeeded; the unlock that takes
 * the word back to 0 swaps it out with the bit and so sees it, and wakes
 * every sleeper: they race for the word again, and those that lose set the
 * bit again before they sleep. The lock is process-private (FUTEX_PRIVATE). */
#ifndef FABMEM_BASE_RWLOCK_H
#define FABMEM_BASE_RWLOCK_H

#include <limits.h>
#include <linux/futex.h>
#include <stdatomic.h>
#include <sys/syscall.h>
#include <unistd.h>

#define FAB__RW_WRITER 0x7fffffffu
#define FAB__RW_WAITING 0x80000000u

typedef struct fab__rwlock {
    _Atomic unsigned word;
} fab__rwlock_t;

#define FAB__RWLOCK_INITIALIZER {0}

/* The slow paths: out of line and cold, so that the fast paths inline to a
 * compare-and-swap and a branch. */
#if defined(__GNUC__) || defined(__clang__)
#define FAB__RW_SLOW __attribute__((noinline, cold, unused))
#else
#define FAB__RW_SLOW
#endif

/* Sleep while the word is v | FAB__RW_WAITING, once the bit is set; back at
 * once if the word changed first (the caller looks again). */
FAB__RW_SLOW static void fab__rw_sleep(fab__rwlock_t *l, unsigned v)
{
    unsigned want = v | FAB__RW_WAITING;
    if (v != want && !atomic_compare_exchange_strong_explicit(&l->word, &v, want,
                                                              memory_order_relaxed,
                                                              memory_order_relaxed))
        return;
    (void)syscall(SYS_futex, &l->word, FUTEX_WAIT_PRIVATE, want, NULL, NULL, 0);
}

FAB__RW_SLOW static void fab__rw_rdlock_wait(fab__rwlock_t *l)
{
    for (;;) {
        unsigned v = atomic_load_explicit(&l->word, memory_order_relaxed);
        if ((v & FAB__RW_WRITER) < FAB__RW_WRITER - 1) {
            if (atomic_compare_exchange_weak_explicit(&l->word, &v, v + 1, memory_order_acquire,
                                                      memory_order_relaxed))
                return;
            continue;
        }
        fab__rw_sleep(l, v); /* a writer holds it (or 2^31 - 2 readers do) */
    }
}

FAB__RW_SLOW static void fab__rw_wrlock_wait(fab__rwlock_t *l)
{
    for (;;) {
        unsigned v = atomic_load_explicit(&l->word, memory_order_relaxed);
        if (v == 0) {
            if (atomic_compare_exchange_weak_explicit(&l->word, &v, FAB__RW_WRITER,
                                                      memory_order_acquire, memory_order_relaxed))
                return;
            continue;
        }
        fab__rw_sleep(l, v);
    }
}

FAB__RW_SLOW static void fab__rw_wake(fab__rwlock_t *l)
{
    (void)syscall(SYS_futex, &l->word, FUTEX_WAKE_PRIVATE, INT_MAX, NULL, NULL, 0);
}

static inline void fab__rw_rdlock(fab__rwlock_t *l)
{
    unsigned v = atomic_load_explicit(&l->word, memory_order_relaxed);
    if ((v & FAB__RW_WRITER) < FAB__RW_WRITER - 1 &&
        atomic_compare_exchange_weak_explicit(&l->word, &v, v + 1, memory_order_acquire,
                                              memory_order_relaxed))
        return;
    fab__rw_rdlock_wait(l);
}

static inline void fab__rw_wrlock(fab__rwlock_t *l)
{
    unsigned free_word = 0;
    if (atomic_compare_exchange_strong_explicit(&l->word, &free_word, FAB__RW_WRITER,
                                                memory_order_acquire, memory_order_relaxed))
        return;
    fab__rw_wrlock_wait(l);
}

/* Either kind: the writer's word, or one reader fewer. */
static inline void fab__rw_unlock(fab__rwlock_t *l)
{
    unsigned v = atomic_load_explicit(&l->word, memory_order_relaxed), next;
    do {
        unsigned count = v & FAB__RW_WRITER;
        next = count == FAB__RW_WRITER || count == 1 ? 0 : v - 1;
    } while (!atomic_compare_exchange_weak_explicit(&l->word, &v, next, memory_order_release,
                                                    memory_order_relaxed));
    if (next == 0 && (v & FAB__RW_WAITING) != 0)
        fab__rw_wake(l);
}

#endif /* FABMEM_BASE_RWLOCK_H */
