/* The lifetime checker: FABMEM_CHECK=1 (or `fabmem run --check`) makes
 * libcuda keep a record of every object whose lifetime the program manages,
 * and report, in the manner of compute-sanitizer, the lifetime bugs of VMM,
 * fabric and IPC code that no other tool sees (docs/cuda.md, "Lifetime
 * checker", has each finding, its rule and its source). This file keeps
 * the records, the hooks the modules call, the findings made at once and
 * the start and end of checking; checkreport.c writes the findings,
 * checkfault.c has the fault handler; the types and state the three share
 * are check_impl.h's.
 *
 * Records. One per object: a cuMemCreate or imported handle (its handle
 * references counted: create, import and cuMemRetainAllocationHandle add
 * one, cuMemRelease drops one), a cuMemMap mapping, a cuMemAddressReserve
 * range, cuMemAlloc and host memory, a cuIpcOpenMemHandle mapping. Each
 * keeps its size, device, handle types, the entry point that made it and
 * the stack of that call (glibc backtrace, captured only here, only when
 * checking). Lifecycle: made live by the module's success path (add) ─▶
 * released by the call that ends it (release; the record stays, released,
 * with that call's stack, so that a later use can say who released it) ─▶
 * replaced when a new object takes its key (addresses are reused; handles
 * are not), or dropped, oldest first, when more than FAB__CU_CHECK_DEAD_MAX
 * released records are kept. At exit, every live record is a finding.
 *
 * Findings at once come from the hooks in the modules' refusal paths (a
 * handle used after its last release, a second free, a reservation freed
 * while mapped, a copy outside any mapping, an import of memory the daemon
 * says is gone) and from the SIGSEGV/SIGBUS handler (checkfault.c).
 *
 * Threads: one mutex guards the records and the output; hooks run with
 * fab__cu.lock held or not, and the mutex is always taken inside it. A
 * forked child that did not exec keeps its parent's records but reports
 * nothing at its exit: they are its parent's objects. */
#include "src/cuda/state.h"
#include "src/cuda/check.h"
#include "src/cuda/check_impl.h"

#include <errno.h>
#include <execinfo.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "fabmem/fabric.h"
#include "src/fabric/observe.h"
#include "src/base/env.h"

#define FAB__CU_CHECK_BUCKETS 4096
#define FAB__CU_CHECK_DEAD_MAX 4096

bool fab__cu_checking;

pthread_mutex_t fab__cu_check_mutex = PTHREAD_MUTEX_INITIALIZER;
static fab__cu_check_rec_t *fab__cu_check_buckets[FAB__CU_CHECK_BUCKETS];
static fab__cu_check_rec_t *fab__cu_check_dead_head, *fab__cu_check_dead_tail;
static unsigned fab__cu_check_dead_count;
static uint64_t fab__cu_check_seq;
int fab__cu_check_fd = -1; /* FABMEM_CHECK_FILE */
static pid_t fab__cu_check_pid;
int fab__cu_check_probe[2] = {-1, -1}; /* a pipe: is an address readable? */
struct sigaction fab__cu_check_old_segv, fab__cu_check_old_bus;

const char *const fab__cu_check_kind_names[FAB__CU_CHECK_KINDS] = {
    [FAB__CU_CHECK_ALLOC] = "allocation",
    [FAB__CU_CHECK_IMPORT] = "imported handle",
    [FAB__CU_CHECK_MAP] = "mapping",
    [FAB__CU_CHECK_RESERVE] = "reservation",
    [FAB__CU_CHECK_MEM] = "cuMemAlloc memory",
    [FAB__CU_CHECK_HOST] = "host memory",
    [FAB__CU_CHECK_IPC_OPEN] = "IPC mapping",
    [FAB__CU_CHECK_POOL] = "pool allocation",
};
/* The JSON names of the leaks, one per kind. */
static const char *const fab__cu_check_leak_ids[FAB__CU_CHECK_KINDS] = {
    [FAB__CU_CHECK_ALLOC] = "leaked-allocation",
    [FAB__CU_CHECK_IMPORT] = "leaked-import",
    [FAB__CU_CHECK_MAP] = "leaked-mapping",
    [FAB__CU_CHECK_RESERVE] = "leaked-reservation",
    [FAB__CU_CHECK_MEM] = "leaked-memory",
    [FAB__CU_CHECK_HOST] = "leaked-host-memory",
    [FAB__CU_CHECK_IPC_OPEN] = "leaked-ipc-open",
    [FAB__CU_CHECK_POOL] = "leaked-pool-allocation",
};
/* What the program should have called. */
static const char *const fab__cu_check_release_calls[FAB__CU_CHECK_KINDS] = {
    [FAB__CU_CHECK_ALLOC] = "cuMemRelease",
    [FAB__CU_CHECK_IMPORT] = "cuMemRelease",
    [FAB__CU_CHECK_MAP] = "cuMemUnmap",
    [FAB__CU_CHECK_RESERVE] = "cuMemAddressFree",
    [FAB__CU_CHECK_MEM] = "cuMemFree",
    [FAB__CU_CHECK_HOST] = "cuMemFreeHost",
    [FAB__CU_CHECK_IPC_OPEN] = "cuIpcCloseMemHandle",
    [FAB__CU_CHECK_POOL] = "cuMemFreeAsync or cuMemFree",
};

bool fab__cu_check_is_handle(fab__cu_check_kind_t kind)
{
    return kind == FAB__CU_CHECK_ALLOC || kind == FAB__CU_CHECK_IMPORT;
}

/* ---- the records ------------------------------------------------------------- */

/* Handles share one key space (ALLOC and IMPORT): the bucket and the match
 * go by the handle alone. */
static unsigned fab__cu_check_bucket(fab__cu_check_kind_t kind, uint64_t key)
{
    uint64_t k = key * 0x9e3779b97f4a7c15ull;
    if (!fab__cu_check_is_handle(kind))
        k ^= (uint64_t)kind * 0xff51afd7ed558ccdull;
    return (unsigned)(k >> 40) % FAB__CU_CHECK_BUCKETS;
}

static bool fab__cu_check_match(const fab__cu_check_rec_t *r, fab__cu_check_kind_t kind,
                                uint64_t key)
{
    if (r->key != key)
        return false;
    if (fab__cu_check_is_handle(kind))
        return fab__cu_check_is_handle(r->kind);
    return r->kind == kind;
}

static fab__cu_check_rec_t **fab__cu_check_slot(fab__cu_check_kind_t kind, uint64_t key)
{
    fab__cu_check_rec_t **p = &fab__cu_check_buckets[fab__cu_check_bucket(kind, key)];
    while (*p && !fab__cu_check_match(*p, kind, key))
        p = &(*p)->next;
    return p;
}

static void fab__cu_check_dead_unlink(fab__cu_check_rec_t *r)
{
    if (r->dead_prev)
        r->dead_prev->dead_next = r->dead_next;
    else
        fab__cu_check_dead_head = r->dead_next;
    if (r->dead_next)
        r->dead_next->dead_prev = r->dead_prev;
    else
        fab__cu_check_dead_tail = r->dead_prev;
    r->dead_prev = r->dead_next = NULL;
    fab__cu_check_dead_count--;
}

static void fab__cu_check_unlink(fab__cu_check_rec_t *r)
{
    fab__cu_check_rec_t **p = fab__cu_check_slot(r->kind, r->key);
    if (*p == r)
        *p = r->next;
    if (r->released_by)
        fab__cu_check_dead_unlink(r);
}

/* The stack of the hook's caller: frames[0] is the entry point. Never
 * inlined, so that the two frames it skips are itself and the hook. */
__attribute__((noinline)) int fab__cu_check_capture(void **frames)
{
    void *all[FAB__CU_CHECK_FRAMES + 2];
    int n = backtrace(all, FAB__CU_CHECK_FRAMES + 2);
    int skip = n > 2 ? 2 : 0; /* this function and the hook */
    memcpy(frames, all + skip, (size_t)(n - skip) * sizeof(void *));
    return n - skip;
}

static void fab__cu_check_mark_released(fab__cu_check_rec_t *r, const char *call)
{
    if (!r->released_by) {
        r->dead_prev = fab__cu_check_dead_tail;
        if (fab__cu_check_dead_tail)
            fab__cu_check_dead_tail->dead_next = r;
        else
            fab__cu_check_dead_head = r;
        fab__cu_check_dead_tail = r;
        fab__cu_check_dead_count++;
    }
    r->released_by = call;
    r->rel_nframes = fab__cu_check_capture(r->rel_frames);
}

/* Drop the oldest released records beyond the cap; not while walking the
 * buckets, which this may change. */
static void fab__cu_check_evict(void)
{
    while (fab__cu_check_dead_count > FAB__CU_CHECK_DEAD_MAX) {
        fab__cu_check_rec_t *old = fab__cu_check_dead_head;
        fab__cu_check_unlink(old);
        free(old);
    }
}

/* ---- hooks --------------------------------------------------------------------- */

void fab__cu_check_add(fab__cu_check_kind_t kind, uint64_t key, size_t size, int device,
                       unsigned handle_types, uint64_t other, const char *call)
{
    /* A driver-internal handle (a pool's arena) is the pool's business. */
    if (fab__cu_check_is_handle(kind) && fab__cu_fault_is_muted())
        return;
    fab__cu_check_rec_t *r = calloc(1, sizeof(*r));
    if (!r)
        return;
    r->kind = kind;
    r->key = key;
    r->size = size;
    r->device = device;
    r->handle_types = handle_types;
    r->other = other;
    r->refs = 1;
    r->made_by = call;
    r->nframes = fab__cu_check_capture(r->frames);
    pthread_mutex_lock(&fab__cu_check_mutex);
    r->seq = ++fab__cu_check_seq;
    fab__cu_check_rec_t **p = fab__cu_check_slot(kind, key);
    if (*p) { /* an address taken again: the old record goes */
        fab__cu_check_rec_t *old = *p;
        fab__cu_check_unlink(old);
        free(old);
        p = fab__cu_check_slot(kind, key);
    }
    r->next = *p;
    *p = r;
    pthread_mutex_unlock(&fab__cu_check_mutex);
}

void fab__cu_check_retain(uint64_t handle)
{
    if (fab__cu_fault_is_muted())
        return;
    pthread_mutex_lock(&fab__cu_check_mutex);
    fab__cu_check_rec_t *r = *fab__cu_check_slot(FAB__CU_CHECK_ALLOC, handle);
    if (r) {
        if (r->released_by) { /* a released handle known again (still mapped) */
            fab__cu_check_dead_unlink(r);
            r->released_by = NULL;
            r->refs = 0;
        }
        r->refs++;
    }
    pthread_mutex_unlock(&fab__cu_check_mutex);
}

void fab__cu_check_release(fab__cu_check_kind_t kind, uint64_t key, const char *call)
{
    if (fab__cu_check_is_handle(kind) && fab__cu_fault_is_muted())
        return;
    pthread_mutex_lock(&fab__cu_check_mutex);
    fab__cu_check_rec_t *r = *fab__cu_check_slot(kind, key);
    if (r && !r->released_by && --r->refs == 0)
        fab__cu_check_mark_released(r, call);
    fab__cu_check_evict();
    pthread_mutex_unlock(&fab__cu_check_mutex);
}

void fab__cu_check_unmap(uintptr_t addr, size_t size, const char *call)
{
    pthread_mutex_lock(&fab__cu_check_mutex);
    for (unsigned b = 0; b < FAB__CU_CHECK_BUCKETS; b++)
        for (fab__cu_check_rec_t *r = fab__cu_check_buckets[b]; r; r = r->next)
            if (r->kind == FAB__CU_CHECK_MAP && !r->released_by && r->key >= addr &&
                r->key - addr < size)
                fab__cu_check_mark_released(r, call);
    fab__cu_check_evict();
    pthread_mutex_unlock(&fab__cu_check_mutex);
}

void fab__cu_check_export(uint64_t handle, const void *fabric_handle)
{
    fab_handle_t h;
    memcpy(h.bytes, fabric_handle, FAB_HANDLE_BYTES);
    pthread_mutex_lock(&fab__cu_check_mutex);
    fab__cu_check_rec_t *r = *fab__cu_check_slot(FAB__CU_CHECK_ALLOC, handle);
    if (r) {
        r->exports++;
        r->has_uuid = true;
        r->uuid = fab_handle_uuid(&h);
    }
    pthread_mutex_unlock(&fab__cu_check_mutex);
}

void fab__cu_check_driver_export(uint64_t handle, const void *fabric_handle)
{
    fab_handle_t h;
    memcpy(h.bytes, fabric_handle, FAB_HANDLE_BYTES);
    pthread_mutex_lock(&fab__cu_check_mutex);
    fab__cu_check_rec_t *r = *fab__cu_check_slot(FAB__CU_CHECK_ALLOC, handle);
    if (r) {
        r->driver_exports++;
        r->has_uuid = true;
        r->uuid = fab_handle_uuid(&h);
    }
    pthread_mutex_unlock(&fab__cu_check_mutex);
}

static void fab__cu_check_uuid_hex(const fab_uuid_t *uuid, char hex[33])
{
    for (int i = 0; i < 16; i++)
        snprintf(hex + 2 * i, 3, "%02x", uuid->bytes[i]);
}

/* The daemon's word on a RELEASE (observe.h): the allocation went with
 * exported handles that no process imported. Called with the client's lock
 * held; takes only the checker's mutex. */
static void fab__cu_check_on_unimported(const fab_uuid_t *uuid, uint32_t unimported)
{
    char hex[33];
    fab__cu_check_uuid_hex(uuid, hex);
    pthread_mutex_lock(&fab__cu_check_mutex);
    const fab__cu_check_rec_t *rec = NULL;
    for (unsigned b = 0; b < FAB__CU_CHECK_BUCKETS && !rec; b++)
        for (fab__cu_check_rec_t *r = fab__cu_check_buckets[b]; r && !rec; r = r->next)
            if (r->has_uuid && memcmp(r->uuid.bytes, uuid->bytes, sizeof(uuid->bytes)) == 0)
                rec = r;
    /* Only the program's own allocations: a multicast object's or a pool's
     * control memory is exported by the driver itself, for members that
     * may never come, which is no bug of the program's; and so is a bound
     * allocation's export by cuMulticastBindMem. */
    if (!rec || unimported <= rec->driver_exports) {
        pthread_mutex_unlock(&fab__cu_check_mutex);
        return;
    }
    /* The driver's own exports of it (a multicast bind's, for members that
     * may never read it) are not the program's: the daemon counts one
     * number, so those are taken off it. */
    unimported -= rec->driver_exports;
    fab__cu_check_finding_t f = {.id = "export-never-imported", .offset = -1, .rec = rec};
    snprintf(f.message, sizeof(f.message),
             "allocation %s released with %u exported FABRIC handle%s that no process "
             "imported (an import of %s now fails with CUDA_ERROR_INVALID_HANDLE)",
             hex, unimported, unimported == 1 ? "" : "s", unimported == 1 ? "it" : "them");
    fab__cu_check_emit(&f);
    pthread_mutex_unlock(&fab__cu_check_mutex);
}

/* ---- findings at once ----------------------------------------------------------- */

void fab__cu_check_stale_handle(uint64_t handle, const char *call)
{
    if (fab__cu_fault_is_muted())
        return;
    pthread_mutex_lock(&fab__cu_check_mutex);
    fab__cu_check_rec_t *r = *fab__cu_check_slot(FAB__CU_CHECK_ALLOC, handle);
    if (r && r->released_by) {
        void *frames[FAB__CU_CHECK_FRAMES];
        fab__cu_check_finding_t f = {.id = "use-after-release", .call = call, .offset = -1,
                                     .frames = frames, .rec = r};
        f.nframes = fab__cu_check_capture(frames);
        snprintf(f.message, sizeof(f.message),
                 "%s of handle 0x%" PRIx64 " after its last release (undefined behaviour "
                 "for NVIDIA's driver; fabmem answers CUDA_ERROR_INVALID_VALUE)", call, handle);
        fab__cu_check_emit(&f);
    }
    pthread_mutex_unlock(&fab__cu_check_mutex);
}

void fab__cu_check_stale_free(fab__cu_check_kind_t kind, uintptr_t addr, const char *call)
{
    pthread_mutex_lock(&fab__cu_check_mutex);
    fab__cu_check_rec_t *r = *fab__cu_check_slot(kind, addr);
    if (r && r->released_by) {
        void *frames[FAB__CU_CHECK_FRAMES];
        fab__cu_check_finding_t f = {.id = "double-free", .call = call, .offset = -1,
                                     .frames = frames, .rec = r, .has_address = true,
                                     .address = addr};
        f.nframes = fab__cu_check_capture(frames);
        snprintf(f.message, sizeof(f.message),
                 "%s of 0x%" PRIxPTR ", freed already (the driver answers "
                 "CUDA_ERROR_INVALID_VALUE)", call, addr);
        fab__cu_check_emit(&f);
    }
    pthread_mutex_unlock(&fab__cu_check_mutex);
}

void fab__cu_check_free_mapped(uintptr_t base, size_t size, const char *call)
{
    pthread_mutex_lock(&fab__cu_check_mutex);
    fab__cu_check_rec_t *r = *fab__cu_check_slot(FAB__CU_CHECK_RESERVE, base);
    if (r && !r->released_by && r->size == size) {
        void *frames[FAB__CU_CHECK_FRAMES];
        fab__cu_check_finding_t f = {.id = "free-while-mapped", .call = call, .offset = -1,
                                     .frames = frames, .rec = r, .has_address = true,
                                     .address = base};
        f.nframes = fab__cu_check_capture(frames);
        snprintf(f.message, sizeof(f.message),
                 "%s of the reservation at 0x%" PRIxPTR " while mappings remain in it "
                 "(teardown order: cuMemUnmap, then cuMemAddressFree; the driver answers "
                 "CUDA_ERROR_INVALID_VALUE)", call, base);
        fab__cu_check_emit(&f);
    }
    pthread_mutex_unlock(&fab__cu_check_mutex);
}

/* The record whose memory holds addr: a live one of the address kinds
 * first, else the released one most recently released. */
fab__cu_check_rec_t *fab__cu_check_holding(uintptr_t addr, bool live)
{
    fab__cu_check_rec_t *best = NULL;
    for (unsigned b = 0; b < FAB__CU_CHECK_BUCKETS; b++)
        for (fab__cu_check_rec_t *r = fab__cu_check_buckets[b]; r; r = r->next) {
            if (fab__cu_check_is_handle(r->kind) || (r->released_by != NULL) == live)
                continue;
            if (addr < r->key || addr - r->key >= r->size)
                continue;
            /* a mapping tells more than the reservation that holds it */
            if (!best || (best->kind == FAB__CU_CHECK_RESERVE && r->kind != FAB__CU_CHECK_RESERVE) ||
                (!live && r->seq > best->seq))
                best = r;
        }
    return best;
}

void fab__cu_check_bad_range(uintptr_t addr, size_t len, bool write, CUresult r, const char *call)
{
    pthread_mutex_lock(&fab__cu_check_mutex);
    void *frames[FAB__CU_CHECK_FRAMES];
    fab__cu_check_finding_t f = {.id = "bad-range", .call = call, .offset = -1,
                                 .frames = frames, .has_address = true, .address = addr};
    f.nframes = fab__cu_check_capture(frames);
    const fab__cu_check_rec_t *live = fab__cu_check_holding(addr, true);
    const fab__cu_check_rec_t *dead = fab__cu_check_holding(addr, false);
    const char *why;
    if (live && live->kind != FAB__CU_CHECK_RESERVE) {
        f.rec = live;
        f.offset = (long long)(addr - live->key);
        why = r == CUDA_ERROR_ILLEGAL_ADDRESS ? "without the access it needs to a"
                                              : "running past the end of a";
    } else if (dead) {
        f.rec = dead;
        f.id = "use-after-release";
        f.offset = (long long)(addr - dead->key);
        why = "after the release of a";
    } else if (live) {
        f.rec = live;
        f.offset = (long long)(addr - live->key);
        why = "in an unmapped part of a";
    } else {
        /* Memory the checker keeps no record of (a pool's, a module's
         * globals, the program's own): only the driver's answer is known. */
        why = r == CUDA_ERROR_ILLEGAL_ADDRESS ? "without the access it needs to that"
                                              : "not wholly inside";
    }
    snprintf(f.message, sizeof(f.message),
             "%s %s %zu bytes at 0x%" PRIxPTR " %s %s (the driver answers %s)", call,
             write ? "writes" : "reads", len, addr, why,
             f.rec ? fab__cu_check_kind_names[f.rec->kind]
                   : r == CUDA_ERROR_ILLEGAL_ADDRESS ? "memory" : "memory it may touch",
             r == CUDA_ERROR_ILLEGAL_ADDRESS ? "CUDA_ERROR_ILLEGAL_ADDRESS"
                                             : "CUDA_ERROR_INVALID_VALUE");
    fab__cu_check_emit(&f);
    pthread_mutex_unlock(&fab__cu_check_mutex);
}

void fab__cu_check_import_refused(const void *fabric_handle, const char *call)
{
    fab_client_t *client;
    if (fab__cu_client(&client) != CUDA_SUCCESS)
        return;
    fab_handle_t h;
    memcpy(h.bytes, fabric_handle, FAB_HANDLE_BYTES);
    bool live = true;
    /* Authentic (the daemon minted it) and not live: memory now gone. */
    if (fab_client_verify(client, &h, &live) != FAB_SUCCESS || live)
        return;
    fab_uuid_t uuid = fab_handle_uuid(&h);
    char hex[33];
    fab__cu_check_uuid_hex(&uuid, hex);
    pthread_mutex_lock(&fab__cu_check_mutex);
    void *frames[FAB__CU_CHECK_FRAMES];
    fab__cu_check_finding_t f = {.id = "import-released", .call = call, .offset = -1,
                                 .frames = frames};
    f.nframes = fab__cu_check_capture(frames);
    snprintf(f.message, sizeof(f.message),
             "%s of a FABRIC handle whose memory (allocation %s, %zu bytes) is already "
             "released by every process that held it (the driver answers "
             "CUDA_ERROR_INVALID_HANDLE)", call, hex, (size_t)fab_handle_size(&h));
    fab__cu_check_emit(&f);
    pthread_mutex_unlock(&fab__cu_check_mutex);
}

/* ---- start and end ------------------------------------------------------------------ */

static void fab__cu_check_at_exit(void)
{
    if (getpid() != fab__cu_check_pid)
        return; /* a forked child: these are its parent's objects */
    /* The replies of releases not read yet may carry the daemon's word on
     * exports never imported (fab__cu_check_on_unimported). */
    if (__atomic_load_n(&fab__cu.initialized, __ATOMIC_ACQUIRE) && fab__cu.client)
        fab__client_flush(fab__cu.client);
    pthread_mutex_lock(&fab__cu_check_mutex);
    size_t n = 0;
    for (unsigned b = 0; b < FAB__CU_CHECK_BUCKETS; b++)
        for (fab__cu_check_rec_t *r = fab__cu_check_buckets[b]; r; r = r->next)
            n += !r->released_by;
    fab__cu_check_rec_t **live = n ? malloc(n * sizeof(*live)) : NULL;
    size_t k = 0;
    for (unsigned b = 0; live && b < FAB__CU_CHECK_BUCKETS; b++)
        for (fab__cu_check_rec_t *r = fab__cu_check_buckets[b]; r; r = r->next)
            if (!r->released_by)
                live[k++] = r;
    /* In the order they were made: insertion sort, the list is short. */
    for (size_t i = 1; i < k; i++)
        for (size_t j = i; j > 0 && live[j - 1]->seq > live[j]->seq; j--) {
            fab__cu_check_rec_t *t = live[j];
            live[j] = live[j - 1];
            live[j - 1] = t;
        }
    for (size_t i = 0; i < k; i++) {
        const fab__cu_check_rec_t *r = live[i];
        fab__cu_check_finding_t f = {.id = fab__cu_check_leak_ids[r->kind], .offset = -1,
                                     .rec = r};
        snprintf(f.message, sizeof(f.message), "%s %s0x%" PRIx64 " (%zu bytes) never %s: no %s",
                 fab__cu_check_kind_names[r->kind],
                 r->kind == FAB__CU_CHECK_ALLOC ? "handle " : r->kind == FAB__CU_CHECK_IMPORT ? "" : "at ",
                 r->key, r->size,
                 r->kind == FAB__CU_CHECK_MAP ? "unmapped"
                 : r->kind == FAB__CU_CHECK_RESERVE ? "freed"
                 : r->kind == FAB__CU_CHECK_IPC_OPEN ? "closed"
                 : fab__cu_check_is_handle(r->kind) ? "released" : "freed",
                 fab__cu_check_release_calls[r->kind]);
        fab__cu_check_emit(&f);
    }
    free(live);
    fab__cu_check_summary();
    pthread_mutex_unlock(&fab__cu_check_mutex);
}

static bool fab__cu_check_env_on(const char *v)
{
    return v && *v && strcmp(v, "0") != 0 && strcasecmp(v, "no") != 0 &&
           strcasecmp(v, "off") != 0 && strcasecmp(v, "false") != 0;
}

/* At load, before any entry point can run: read FABMEM_CHECK once. */
__attribute__((constructor)) static void fab__cu_check_load(void)
{
    if (!fab__cu_check_env_on(getenv(FAB__ENV_CHECK)))
        return;
    fab__cu_check_pid = getpid();
    const char *file = getenv(FAB__ENV_CHECK_FILE);
    if (file && *file) {
        fab__cu_check_fd = open(file, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
        if (fab__cu_check_fd < 0)
            fprintf(stderr, FAB__CU_CHECK_PREFIX "FABMEM_CHECK_FILE %s: %s\n", file,
                    strerror(errno));
    }
    if (pipe2(fab__cu_check_probe, O_CLOEXEC | O_NONBLOCK) != 0)
        fab__cu_check_probe[0] = fab__cu_check_probe[1] = -1;
    /* backtrace loads its unwinder on first use: not in the signal handler. */
    void *warm[2];
    (void)backtrace(warm, 2);
    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_sigaction = fab__cu_check_on_fault;
    sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGSEGV, &sa, &fab__cu_check_old_segv);
    sigaction(SIGBUS, &sa, &fab__cu_check_old_bus);
    fab__client_set_unimported_hook(fab__cu_check_on_unimported);
    atexit(fab__cu_check_at_exit);
    __atomic_store_n(&fab__cu_checking, true, __ATOMIC_RELEASE);
}
