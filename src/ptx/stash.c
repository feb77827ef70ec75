/* Block memory kept between runs: the register files, local and shared
 * windows of a finished run's blocks, handed to the next run's blocks
 * instead of being freed. A kernel's register window can be megabytes a
 * warp (NCCL's are), so that allocating it anew for every launch (large
 * callocs are fresh mappings) made most of a launch's time page faults in
 * the kernel. At most FAB__PTX_STASH_BYTES are kept (one run's blocks of
 * such a kernel: 16 blocks of 640 threads with 14 KiB of local memory a
 * thread hold 190 MiB); a buffer taken is the smallest kept that is at
 * least the size asked (a register file that calls grew comes back grown),
 * its bytes as the last user left them (the caller zeroes what must start
 * zeroed). */
#include <pthread.h>
#include <stdlib.h>

#include "src/ptx/engine.h"

#define FAB__PTX_STASH_BYTES ((size_t)512 << 20)
#define FAB__PTX_STASH_SLOTS 2048

static pthread_mutex_t fab__ptx_stash_mu = PTHREAD_MUTEX_INITIALIZER;
static struct {
    void *p;
    size_t bytes;
} fab__ptx_stash[FAB__PTX_STASH_SLOTS];
static unsigned fab__ptx_stash_n;
static size_t fab__ptx_stash_total;

void *fab__ptx_stash_take(size_t bytes, size_t align, size_t *got)
{
    void *p = NULL;
    pthread_mutex_lock(&fab__ptx_stash_mu);
    unsigned best = FAB__PTX_STASH_SLOTS;
    for (unsigned i = 0; i < fab__ptx_stash_n; i++) {
        size_t b = fab__ptx_stash[i].bytes;
        if (b >= bytes && (uintptr_t)fab__ptx_stash[i].p % align == 0 &&
            (best == FAB__PTX_STASH_SLOTS || b < fab__ptx_stash[best].bytes))
            best = i;
    }
    if (best != FAB__PTX_STASH_SLOTS) {
        p = fab__ptx_stash[best].p;
        *got = fab__ptx_stash[best].bytes;
        fab__ptx_stash_total -= *got;
        fab__ptx_stash[best] = fab__ptx_stash[--fab__ptx_stash_n];
    }
    pthread_mutex_unlock(&fab__ptx_stash_mu);
    return p;
}

void fab__ptx_stash_give(void *p, size_t bytes)
{
    if (!p)
        return;
    pthread_mutex_lock(&fab__ptx_stash_mu);
    bool kept = fab__ptx_stash_n < FAB__PTX_STASH_SLOTS && fab__ptx_stash_total + bytes <= FAB__PTX_STASH_BYTES;
    if (kept) {
        fab__ptx_stash[fab__ptx_stash_n].p = p;
        fab__ptx_stash[fab__ptx_stash_n++].bytes = bytes;
        fab__ptx_stash_total += bytes;
    }
    pthread_mutex_unlock(&fab__ptx_stash_mu);
    if (!kept)
        free(p);
}

void fab__ptx_stash_atfork_child(void)
{
    /* the buffers are the child's copies; only the lock may be another thread's */
    pthread_mutex_t fresh = PTHREAD_MUTEX_INITIALIZER;
    fab__ptx_stash_mu = fresh;
}
