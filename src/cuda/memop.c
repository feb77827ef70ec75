/* Stream memory operations: cuStreamWriteValue32/64, cuStreamWaitValue32/64
 * and cuStreamBatchMemOp, under every name cuda.h has for them (the old ABI,
 * _v2, and the _ptsz forms of both). PyTorch checks at start that they
 * exist; NCCL uses them to signal between streams and processes.
 *
 * Each is an operation of its stream (stream.h). A write stores the value
 * atomically (sequentially consistent, so it is also the memory barrier the
 * driver puts before it). A wait polls the word until its condition holds,
 * on the stream's worker thread: only that stream (and work waiting for it)
 * waits, never the caller. The poll backs off from a microsecond to a
 * millisecond; the word may be written by another thread, another stream or
 * another process sharing the memory, none of which can wake a sleeper, so
 * polling is the one way to see it. Each look at the word re-checks, under
 * fab__cu.lock for reading, that the memory is still there; a wait whose
 * memory went is abandoned (and said in the log) instead of faulting.
 *
 * The addresses must be memory the driver knows (cuMemAlloc, VMM mappings,
 * page-locked or registered host memory), aligned to the value's size. */
#include "src/cuda/state.h"
#include "src/cuda/device.h"
#include "src/cuda/stream.h"
#include "src/cuda/memory.h"
#include "src/cuda/entry.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "src/common/log.h"

#define FAB__CU_MAX_BATCH 256 /* CU_DEVICE_ATTRIBUTE's documented batch limit */

typedef struct fab__cu_memop {
    CUstreamBatchMemOpType op;
    uintptr_t addr;
    uint64_t value;
    unsigned flags;
} fab__cu_memop_t;

typedef struct fab__cu_memops {
    int device;
    unsigned count;
    fab__cu_memop_t ops[];
} fab__cu_memops_t;

static bool fab__cu_memop_wide(const fab__cu_memop_t *m)
{
    return m->op == CU_STREAM_MEM_OP_WAIT_VALUE_64 || m->op == CU_STREAM_MEM_OP_WRITE_VALUE_64;
}

static bool fab__cu_memop_holds(const fab__cu_memop_t *m, uint64_t now)
{
    bool wide = fab__cu_memop_wide(m);
    uint64_t v = m->value;
    if (!wide) {
        now = (uint32_t)now;
        v = (uint32_t)v;
    }
    switch (m->flags & 0x3u) {
    case CU_STREAM_WAIT_VALUE_GEQ: /* cyclic: the difference, as signed, is >= 0 */
        return wide ? (int64_t)(now - v) >= 0 : (int32_t)(uint32_t)(now - v) >= 0;
    case CU_STREAM_WAIT_VALUE_EQ: return now == v;
    case CU_STREAM_WAIT_VALUE_AND: return (now & v) != 0;
    default: /* NOR */
        return wide ? ~(now | v) != 0 : (uint32_t)~(now | v) != 0;
    }
}

/* One operation, run on the stream's worker. False when its memory went. */
static bool fab__cu_memop_run_one(const fab__cu_memop_t *m, int device)
{
    size_t size = fab__cu_memop_wide(m) ? 8 : 4;
    bool write = m->op == CU_STREAM_MEM_OP_WRITE_VALUE_32 ||
                 m->op == CU_STREAM_MEM_OP_WRITE_VALUE_64;
    bool wait = m->op == CU_STREAM_MEM_OP_WAIT_VALUE_32 || m->op == CU_STREAM_MEM_OP_WAIT_VALUE_64;
    if (!write && !wait) {
        __atomic_thread_fence(__ATOMIC_SEQ_CST); /* barrier, flush */
        return true;
    }
    long delay_ns = 1000;
    for (;;) {
        fab__rw_rdlock(&fab__cu.lock);
        if (fab__cu_mem_check(m->addr, size, device, write) != CUDA_SUCCESS) {
            fab__rw_unlock(&fab__cu.lock);
            return false;
        }
        uint64_t now = 0;
        if (write && size == 4)
            __atomic_store_n((uint32_t *)m->addr, (uint32_t)m->value, __ATOMIC_SEQ_CST);
        else if (write)
            __atomic_store_n((uint64_t *)m->addr, m->value, __ATOMIC_SEQ_CST);
        else if (size == 4)
            now = __atomic_load_n((const uint32_t *)m->addr, __ATOMIC_SEQ_CST);
        else
            now = __atomic_load_n((const uint64_t *)m->addr, __ATOMIC_SEQ_CST);
        fab__rw_unlock(&fab__cu.lock);
        if (write || fab__cu_memop_holds(m, now))
            return true;
        struct timespec ts = {0, delay_ns};
        nanosleep(&ts, NULL);
        if (delay_ns < 1000000)
            delay_ns *= 2;
    }
}

static void fab__cu_memops_run(void *arg)
{
    fab__cu_memops_t *b = arg;
    for (unsigned i = 0; i < b->count; i++) {
        if (!fab__cu_memop_run_one(&b->ops[i], b->device)) {
            fab__log(FAB__LOG_ERROR, "a stream memory operation found its memory gone; "
                                     "the rest of its batch is skipped");
            return;
        }
    }
}

/* Check one operation as the driver would (lock held). */
static CUresult fab__cu_memop_check(const fab__cu_memop_t *m, int device)
{
    switch (m->op) {
    case CU_STREAM_MEM_OP_WAIT_VALUE_32:
    case CU_STREAM_MEM_OP_WAIT_VALUE_64:
        if (m->flags & ~(3u | (unsigned)CU_STREAM_WAIT_VALUE_FLUSH))
            return CUDA_ERROR_INVALID_VALUE;
        break;
    case CU_STREAM_MEM_OP_WRITE_VALUE_32:
    case CU_STREAM_MEM_OP_WRITE_VALUE_64:
        if (m->flags & ~(unsigned)CU_STREAM_WRITE_VALUE_NO_MEMORY_BARRIER)
            return CUDA_ERROR_INVALID_VALUE;
        break;
    case CU_STREAM_MEM_OP_FLUSH_REMOTE_WRITES:
    case CU_STREAM_MEM_OP_BARRIER: return CUDA_SUCCESS;
    default: return CUDA_ERROR_INVALID_VALUE;
    }
    size_t size = fab__cu_memop_wide(m) ? 8 : 4;
    if (m->addr % size != 0)
        return CUDA_ERROR_INVALID_VALUE;
    bool write = m->op == CU_STREAM_MEM_OP_WRITE_VALUE_32 ||
                 m->op == CU_STREAM_MEM_OP_WRITE_VALUE_64;
    if (fab__cu_mem_where(m->addr) == FAB__CU_WHERE_PAGEABLE)
        return CUDA_ERROR_INVALID_VALUE;
    return fab__cu_mem_check(m->addr, size, device, write);
}

static CUresult fab__cu_memops(CUstream stream, bool per_thread, unsigned count,
                               const fab__cu_memop_t *ops)
{
    FAB__CU_ENTER();
    int dev;
    FAB__CU_TRY(fab__cu_current_device(&dev));
    if (count > FAB__CU_MAX_BATCH)
        return CUDA_ERROR_INVALID_VALUE;
    fab__cu_memops_t *b = malloc(sizeof(*b) + count * sizeof(b->ops[0]));
    if (!b)
        return CUDA_ERROR_OUT_OF_MEMORY;
    b->device = dev;
    b->count = count;
    if (count)
        memcpy(b->ops, ops, count * sizeof(b->ops[0]));
    CUresult r = CUDA_SUCCESS;
    fab__rw_rdlock(&fab__cu.lock);
    for (unsigned i = 0; i < count && r == CUDA_SUCCESS; i++)
        r = fab__cu_memop_check(&b->ops[i], dev);
    fab__rw_unlock(&fab__cu.lock);
    if (r == CUDA_SUCCESS)
        r = fab__cu_stream_submit(stream, per_thread ? FAB__CU_SUBMIT_PER_THREAD : 0,
                                  fab__cu_memops_run, b, free);
    if (r != CUDA_SUCCESS)
        free(b);
    return r;
}

static CUresult fab__cu_memop1(CUstream stream, bool per_thread, CUstreamBatchMemOpType op,
                               CUdeviceptr addr, uint64_t value, unsigned flags)
{
    fab__cu_memop_t m = {op, (uintptr_t)addr, value, flags};
    return fab__cu_memops(stream, per_thread, 1, &m);
}

static CUresult fab__cu_batch(CUstream stream, bool per_thread, unsigned count,
                              const CUstreamBatchMemOpParams *params, unsigned flags)
{
    if (flags != 0 || (count > 0 && !params) || count > FAB__CU_MAX_BATCH)
        return fab__cu_check_init() != CUDA_SUCCESS ? CUDA_ERROR_NOT_INITIALIZED
                                                    : CUDA_ERROR_INVALID_VALUE;
    fab__cu_memop_t ops[FAB__CU_MAX_BATCH];
    for (unsigned i = 0; i < count; i++) {
        const CUstreamBatchMemOpParams *p = &params[i];
        ops[i].op = p->operation;
        ops[i].addr = 0;
        ops[i].value = 0;
        ops[i].flags = 0;
        switch (p->operation) {
        case CU_STREAM_MEM_OP_WAIT_VALUE_32:
        case CU_STREAM_MEM_OP_WAIT_VALUE_64:
            ops[i].addr = (uintptr_t)p->waitValue.address;
            ops[i].value = p->operation == CU_STREAM_MEM_OP_WAIT_VALUE_32 ? p->waitValue.value
                                                                            : p->waitValue.value64;
            ops[i].flags = p->waitValue.flags;
            break;
        case CU_STREAM_MEM_OP_WRITE_VALUE_32:
        case CU_STREAM_MEM_OP_WRITE_VALUE_64:
            ops[i].addr = (uintptr_t)p->writeValue.address;
            ops[i].value = p->operation == CU_STREAM_MEM_OP_WRITE_VALUE_32
                               ? p->writeValue.value
                               : p->writeValue.value64;
            ops[i].flags = p->writeValue.flags;
            break;
        default: break; /* checked in fab__cu_memops */
        }
    }
    return fab__cu_memops(stream, per_thread, count, ops);
}

/* Every name: the plain (pre-11.7) ABI and _v2 take the same arguments. */
#define FAB__CU_MEMOP_NAMES(base, op, vtype)                                                  \
    FAB__CU_EXPORT CUresult base##_ptsz(CUstream stream, CUdeviceptr addr, vtype value,        \
                                        unsigned int flags);                                   \
    FAB__CU_EXPORT CUresult base##_v2_ptsz(CUstream stream, CUdeviceptr addr, vtype value,     \
                                           unsigned int flags);                                \
    CUresult base(CUstream stream, CUdeviceptr addr, vtype value, unsigned int flags)          \
    {                                                                                          \
        FAB__CU_FAULT();                                                                       \
        return fab__cu_memop1(stream, false, op, addr, value, flags);                          \
    }                                                                                          \
    CUresult base##_ptsz(CUstream stream, CUdeviceptr addr, vtype value, unsigned int flags)   \
    {                                                                                          \
        FAB__CU_FAULT();                                                                       \
        return fab__cu_memop1(stream, true, op, addr, value, flags);                           \
    }                                                                                          \
    CUresult base##_v2(CUstream stream, CUdeviceptr addr, vtype value, unsigned int flags)     \
    {                                                                                          \
        FAB__CU_FAULT();                                                                       \
        return fab__cu_memop1(stream, false, op, addr, value, flags);                          \
    }                                                                                          \
    CUresult base##_v2_ptsz(CUstream stream, CUdeviceptr addr, vtype value,                    \
                            unsigned int flags)                                                \
    {                                                                                          \
        FAB__CU_FAULT();                                                                       \
        return fab__cu_memop1(stream, true, op, addr, value, flags);                           \
    }

FAB__CU_MEMOP_NAMES(cuStreamWriteValue32, CU_STREAM_MEM_OP_WRITE_VALUE_32, uint32_t)
FAB__CU_MEMOP_NAMES(cuStreamWaitValue32, CU_STREAM_MEM_OP_WAIT_VALUE_32, uint32_t)
FAB__CU_MEMOP_NAMES(cuStreamWriteValue64, CU_STREAM_MEM_OP_WRITE_VALUE_64, cuuint64_t)
FAB__CU_MEMOP_NAMES(cuStreamWaitValue64, CU_STREAM_MEM_OP_WAIT_VALUE_64, cuuint64_t)

FAB__CU_EXPORT CUresult cuStreamBatchMemOp_ptsz(CUstream stream, unsigned int count,
                                                CUstreamBatchMemOpParams *paramArray,
                                                unsigned int flags);
FAB__CU_EXPORT CUresult cuStreamBatchMemOp_v2_ptsz(CUstream stream, unsigned int count,
                                                   CUstreamBatchMemOpParams *paramArray,
                                                   unsigned int flags);

CUresult cuStreamBatchMemOp(CUstream stream, unsigned int count,
                            CUstreamBatchMemOpParams *paramArray, unsigned int flags)
{
    FAB__CU_FAULT();
    return fab__cu_batch(stream, false, count, paramArray, flags);
}

CUresult cuStreamBatchMemOp_ptsz(CUstream stream, unsigned int count,
                                 CUstreamBatchMemOpParams *paramArray, unsigned int flags)
{
    FAB__CU_FAULT();
    return fab__cu_batch(stream, true, count, paramArray, flags);
}

CUresult cuStreamBatchMemOp_v2(CUstream stream, unsigned int count,
                               CUstreamBatchMemOpParams *paramArray, unsigned int flags)
{
    FAB__CU_FAULT();
    return fab__cu_batch(stream, false, count, paramArray, flags);
}

CUresult cuStreamBatchMemOp_v2_ptsz(CUstream stream, unsigned int count,
                                    CUstreamBatchMemOpParams *paramArray, unsigned int flags)
{
    FAB__CU_FAULT();
    return fab__cu_batch(stream, true, count, paramArray, flags);
}
