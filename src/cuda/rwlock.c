/* The slow paths of the one-word reader-writer lock (rwlock.h): waiting on
 * the word, and waking its sleepers. */
#include "src/cuda/rwlock.h"

#include <errno.h>
#include <limits.h>
#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

/* Sleep while the word is v | FAB__RW_WAITING, once the bit is set; back at
 * once if the word changed first (the caller looks again). */
static void fab__rw_sleep(fab__rwlock_t *l, unsigned v)
{
    unsigned want = v | FAB__RW_WAITING;
    if (v != want && !atomic_compare_exchange_strong_explicit(&l->word, &v, want,
                                                              memory_order_relaxed,
                                                              memory_order_relaxed))
        return;
    (void)syscall(SYS_futex, &l->word, FUTEX_WAIT_PRIVATE, want, NULL, NULL, 0);
}

void fab__rw_rdlock_wait(fab__rwlock_t *l)
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

void fab__rw_wrlock_wait(fab__rwlock_t *l)
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

void fab__rw_wake(fab__rwlock_t *l)
{
    (void)syscall(SYS_futex, &l->word, FUTEX_WAKE_PRIVATE, INT_MAX, NULL, NULL, 0);
}
