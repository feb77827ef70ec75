/* Copies and memsets: cuMemcpy*, cuMemcpyPeer*, cuMemcpy2D*, cuMemcpy3D*,
 * cuMemsetD*.
 * Device memory is host memory, so a copy is a memmove, run as an operation
 * of a stream (stream.h): the Async forms on the stream they name, the
 * synchronous forms on the default stream (the legacy one, or the
 * per-thread one for the _ptds names), waiting until it ran, so that each
 * waits for the work before it as CUDA's default-stream rules say.
 *
 * What the driver checks, this checks first, at the call: a current
 * context, a live stream, and that each range is memory the driver knows
 * wholly (memory.c, fab__cu_mem_check: a cuMemAlloc or host allocation, a
 * registration, or a VMM range mapped with the access the copy needs), or,
 * where CUDA allows any host pointer, pageable host memory. The operation
 * checks the same again when it runs, holding fab__cu.lock for reading while
 * the bytes move, so that memory freed or unmapped between the call and the
 * run is skipped (and said in the log) instead of touched.
 *
 * Pageable host memory follows CUDA's rules for asynchronous copies: a
 * source is copied into a staging buffer at the call, so the caller may
 * reuse it at once, and a copy into a pageable destination returns only once
 * done. cuMemcpy and cuMemcpyAsync infer each side's kind from the address,
 * as unified addressing does. */
#include "src/common/memfd.h"
#include "src/cuda/state.h"
#include "src/cuda/check.h"
#include "src/cuda/device.h"
#include "src/cuda/stream.h"
#include "src/cuda/memory.h"
#include "src/cuda/entry.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "src/common/log.h"

typedef enum { FAB__CU_HOST, FAB__CU_DEVICE, FAB__CU_INFER } fab__cu_side_t;

#define FAB__CU_XFER_ASYNC 0x1u
#define FAB__CU_XFER_PTDS 0x2u

/* One copy or memset: depth slices, each slice bytes apart, of height rows
 * of width bytes, each pitch apart (depth 1 for 1D and 2D). */
typedef struct fab__cu_xfer {
    uintptr_t dst, src;
    fab__cu_side_t dst_side, src_side;
    size_t width, height, dpitch, spitch;
    size_t depth, dslice, sslice;
    bool set;                 /* a memset of pattern (pat_width bytes) */
    unsigned char pattern[4];
    size_t pat_width;
    /* filled in at the call */
    int device;
    bool dst_pageable, src_pageable;
    void *staging; /* the pageable source, copied at the call */
} fab__cu_xfer_t;

/* The bytes from the first to the last byte touched; 0 when that does not
 * fit in a size_t. */
static size_t fab__cu_span(const fab__cu_xfer_t *x, size_t pitch, size_t slice)
{
    size_t rows = x->height - 1, slices = x->depth - 1;
    if ((pitch && rows > SIZE_MAX / pitch) || (slice && slices > SIZE_MAX / slice))
        return 0;
    size_t a = rows * pitch, b = slices * slice;
    if (a > SIZE_MAX - b || a + b > SIZE_MAX - x->width)
        return 0;
    return a + b + x->width;
}

static size_t fab__cu_dspan(const fab__cu_xfer_t *x)
{
    return fab__cu_span(x, x->dpitch, x->dslice);
}

static size_t fab__cu_sspan(const fab__cu_xfer_t *x)
{
    return fab__cu_span(x, x->spitch, x->sslice);
}

/* Check one side (lock held); *pageable says it is host memory the driver
 * does not know (allowed only where a host pointer may be). */
static CUresult fab__cu_side_check(uintptr_t addr, size_t span, fab__cu_side_t side, int device,
                                   bool write, bool *pageable)
{
    *pageable = fab__cu_mem_where(addr) == FAB__CU_WHERE_PAGEABLE;
    if (*pageable)
        return side == FAB__CU_DEVICE ? CUDA_ERROR_INVALID_VALUE : CUDA_SUCCESS;
    return fab__cu_mem_check(addr, span, device, write);
}

/* A memset of zeros of at least this many bytes gives the whole pages of
 * shared memory back instead of writing them (fab__memfd_zero_mapped: they
 * read as zeros, for every process that maps them): NCCL clears its NVLS
 * buffers, hundreds of MiB a rank, before it binds them, and written zeros
 * are pages a bind, a synchronisation and every reader then pay for. Only
 * device memory; memory that is not shared (MADV_REMOVE refused) is written
 * as before. */
#define FAB__CU_ZERO_PAGES_FROM ((size_t)64 << 10)

static bool fab__cu_xfer_zeros(const fab__cu_xfer_t *x)
{
    for (size_t i = 0; i < x->pat_width; i++) {
        if (x->pattern[i] != 0)
            return false;
    }
    return true;
}

static void fab__cu_xfer_run(void *arg)
{
    fab__cu_xfer_t *x = arg;
    uintptr_t src = x->staging ? (uintptr_t)x->staging : x->src;
    size_t spitch = x->staging ? x->width : x->spitch;
    size_t sslice = x->staging ? x->width * x->height : x->sslice;
    fab__rw_rdlock(&fab__cu.lock);
    /* Again, now: the memory may have gone since the call. */
    CUresult r = CUDA_SUCCESS;
    if (!x->dst_pageable) {
        r = fab__cu_mem_check(x->dst, fab__cu_dspan(x), x->device, true);
        if (r != CUDA_SUCCESS)
            FAB__CU_CHECK(fab__cu_check_bad_range(x->dst, fab__cu_dspan(x), true, r,
                                                  x->set ? "a queued memset" : "a queued copy"));
    }
    if (r == CUDA_SUCCESS && !x->set && !x->src_pageable) {
        r = fab__cu_mem_check(x->src, fab__cu_sspan(x), x->device, false);
        if (r != CUDA_SUCCESS)
            FAB__CU_CHECK(fab__cu_check_bad_range(x->src, fab__cu_sspan(x), false, r,
                                                  "a queued copy"));
    }
    /* Device memory alone: pinned host memory may be a mapping of the
     * user's own file, whose blocks a memset must not punch. */
    bool zero_pages = r == CUDA_SUCCESS && x->set && x->width >= FAB__CU_ZERO_PAGES_FROM &&
                      fab__cu_xfer_zeros(x) && fab__cu_mem_where(x->dst) == FAB__CU_WHERE_DEVICE;
    for (size_t k = 0; r == CUDA_SUCCESS && k < x->depth * x->height; k++) {
        size_t z = k / x->height, row = k % x->height;
        unsigned char *d = (unsigned char *)(x->dst + z * x->dslice + row * x->dpitch);
        if (!x->set) {
            memmove(d, (const void *)(src + z * sslice + row * spitch), x->width);
        } else if (zero_pages) {
            fab__memfd_zero_mapped(d, x->width);
        } else if (x->pat_width == 1) {
            memset(d, x->pattern[0], x->width);
        } else {
            for (size_t i = 0; i < x->width; i += x->pat_width)
                memcpy(d + i, x->pattern, x->pat_width);
        }
    }
    fab__rw_unlock(&fab__cu.lock);
    if (r != CUDA_SUCCESS)
        fab__log(FAB__LOG_ERROR, "a queued copy or memset found its memory gone; skipped");
}

static void fab__cu_xfer_free(void *arg)
{
    fab__cu_xfer_t *x = arg;
    free(x->staging);
    free(x);
}

static CUresult fab__cu_xfer(const fab__cu_xfer_t *req, CUstream stream, unsigned mode)
{
    FAB__CU_ENTER();
    int dev;
    FAB__CU_TRY(fab__cu_current_device(&dev));
    bool async = mode & FAB__CU_XFER_ASYNC;
    if (!async)
        stream = NULL;
    /* Nothing to move: the stream must still be one. */
    if (req->width == 0 || req->height == 0 || req->depth == 0)
        return async ? fab__cu_stream_check(stream) : CUDA_SUCCESS;
    if (!req->dst || (!req->set && !req->src))
        return CUDA_ERROR_INVALID_VALUE;
    /* Rows and slices may not overlap their neighbours. */
    if (req->height > 1 && (req->dpitch < req->width || (!req->set && req->spitch < req->width)))
        return CUDA_ERROR_INVALID_VALUE;
    if (req->depth > 1 && (req->dslice < req->dpitch * (req->height - 1) + req->width ||
                           (!req->set && req->sslice < req->spitch * (req->height - 1) + req->width)))
        return CUDA_ERROR_INVALID_VALUE;
    if (fab__cu_dspan(req) == 0 || (!req->set && fab__cu_sspan(req) == 0))
        return CUDA_ERROR_INVALID_VALUE;
    if (req->width > SIZE_MAX / req->height / req->depth)
        return CUDA_ERROR_INVALID_VALUE;
    fab__cu_xfer_t *x = malloc(sizeof(*x));
    if (!x)
        return CUDA_ERROR_OUT_OF_MEMORY;
    *x = *req;
    x->device = dev;
    x->staging = NULL;
    x->src_pageable = false;
    fab__rw_rdlock(&fab__cu.lock);
    CUresult r = fab__cu_side_check(x->dst, fab__cu_dspan(x), x->dst_side, dev, true,
                                    &x->dst_pageable);
    /* The checker names the side the driver refused (check.h). */
    if (r != CUDA_SUCCESS)
        FAB__CU_CHECK(fab__cu_check_bad_range(x->dst, fab__cu_dspan(x), true, r,
                                              x->set ? "a memset" : "a copy"));
    if (r == CUDA_SUCCESS && !x->set) {
        r = fab__cu_side_check(x->src, fab__cu_sspan(x), x->src_side, dev, false,
                               &x->src_pageable);
        if (r != CUDA_SUCCESS)
            FAB__CU_CHECK(fab__cu_check_bad_range(x->src, fab__cu_sspan(x), false, r, "a copy"));
    }
    fab__rw_unlock(&fab__cu.lock);
    if (r == CUDA_SUCCESS && x->set && x->dst_pageable)
        r = CUDA_ERROR_INVALID_VALUE; /* memsets take device-accessible memory only */
    if (r == CUDA_SUCCESS && async && x->src_pageable) {
        /* CUDA stages a pageable source at the call: the caller may reuse it
         * as soon as the call returns. */
        x->staging = malloc(x->width * x->height * x->depth);
        if (!x->staging) {
            r = CUDA_ERROR_OUT_OF_MEMORY;
        } else {
            for (size_t k = 0; k < x->depth * x->height; k++) {
                size_t z = k / x->height, row = k % x->height;
                memcpy((unsigned char *)x->staging + k * x->width,
                       (const void *)(x->src + z * x->sslice + row * x->spitch), x->width);
            }
        }
    }
    if (r != CUDA_SUCCESS) {
        fab__cu_xfer_free(x);
        return r;
    }
    unsigned flags = (mode & FAB__CU_XFER_PTDS) ? FAB__CU_SUBMIT_PER_THREAD : 0;
    if (!async || x->dst_pageable)
        flags |= FAB__CU_SUBMIT_WAIT; /* into pageable memory: done before returning */
    r = fab__cu_stream_submit(stream, flags, fab__cu_xfer_run, x, fab__cu_xfer_free);
    if (r != CUDA_SUCCESS)
        fab__cu_xfer_free(x);
    return r;
}

static CUresult fab__cu_copy(uintptr_t dst, fab__cu_side_t dst_side, uintptr_t src,
                             fab__cu_side_t src_side, size_t len, CUstream stream, unsigned mode)
{
    fab__cu_xfer_t x = {.dst = dst, .src = src, .dst_side = dst_side, .src_side = src_side,
                        .width = len, .height = 1, .dpitch = len, .spitch = len, .depth = 1};
    return fab__cu_xfer(&x, stream, mode);
}

static CUresult fab__cu_set(uintptr_t dst, const void *value, size_t width, size_t n,
                            CUstream stream, unsigned mode)
{
    if (dst % width != 0 || n > SIZE_MAX / width)
        return fab__cu_check_init() != CUDA_SUCCESS ? CUDA_ERROR_NOT_INITIALIZED
                                                    : CUDA_ERROR_INVALID_VALUE;
    fab__cu_xfer_t x = {.dst = dst, .dst_side = FAB__CU_DEVICE, .width = n * width, .height = 1,
                        .dpitch = n * width, .depth = 1, .set = true, .pat_width = width};
    memcpy(x.pattern, value, width);
    return fab__cu_xfer(&x, stream, mode);
}

/* cuMemsetD2D*: Height rows of Width elements, dstPitch bytes apart; the
 * driver's rule that the pitch hold a row (for more than one row) is
 * fab__cu_xfer's. */
static CUresult fab__cu_set2d(uintptr_t dst, size_t pitch, const void *value, size_t width,
                              size_t n, size_t height, CUstream stream, unsigned mode)
{
    if (dst % width != 0 || n > SIZE_MAX / width || (height > 1 && pitch % width != 0))
        return fab__cu_check_init() != CUDA_SUCCESS ? CUDA_ERROR_NOT_INITIALIZED
                                                    : CUDA_ERROR_INVALID_VALUE;
    fab__cu_xfer_t x = {.dst = dst, .dst_side = FAB__CU_DEVICE, .width = n * width,
                        .height = height, .dpitch = height > 1 ? pitch : n * width, .depth = 1,
                        .set = true, .pat_width = width};
    memcpy(x.pattern, value, width);
    return fab__cu_xfer(&x, stream, mode);
}

/* ---- copies ------------------------------------------------------------------ */

#define FAB__CU_ASYNC FAB__CU_XFER_ASYNC
#define FAB__CU_PTDS FAB__CU_XFER_PTDS

/* Each copy under its plain name (legacy default stream) and its
 * per-thread-default-stream name (_ptds for synchronous calls, _ptsz for
 * Async ones, as cuda.h spells them). */
#define FAB__CU_COPY_PAIR(name, ptname, mode, params, dst, dside, src, sside, len, stream) \
    CUresult name params                                                                    \
    {                                                                                       \
        FAB__CU_FAULT();                                                                    \
        return fab__cu_copy(dst, dside, src, sside, len, stream, mode);                     \
    }                                                                                       \
    CUresult ptname params                                                                  \
    {                                                                                       \
        FAB__CU_FAULT();                                                                    \
        return fab__cu_copy(dst, dside, src, sside, len, stream, (mode) | FAB__CU_PTDS);    \
    }

FAB__CU_EXPORT CUresult cuMemcpy_ptds(CUdeviceptr dst, CUdeviceptr src, size_t ByteCount);
FAB__CU_EXPORT CUresult cuMemcpyAsync_ptsz(CUdeviceptr dst, CUdeviceptr src, size_t ByteCount,
                                           CUstream hStream);
FAB__CU_EXPORT CUresult cuMemcpyHtoD_v2_ptds(CUdeviceptr dstDevice, const void *srcHost,
                                             size_t ByteCount);
FAB__CU_EXPORT CUresult cuMemcpyDtoH_v2_ptds(void *dstHost, CUdeviceptr srcDevice,
                                             size_t ByteCount);
FAB__CU_EXPORT CUresult cuMemcpyDtoD_v2_ptds(CUdeviceptr dstDevice, CUdeviceptr srcDevice,
                                             size_t ByteCount);
FAB__CU_EXPORT CUresult cuMemcpyHtoDAsync_v2_ptsz(CUdeviceptr dstDevice, const void *srcHost,
                                                  size_t ByteCount, CUstream hStream);
FAB__CU_EXPORT CUresult cuMemcpyDtoHAsync_v2_ptsz(void *dstHost, CUdeviceptr srcDevice,
                                                  size_t ByteCount, CUstream hStream);
FAB__CU_EXPORT CUresult cuMemcpyDtoDAsync_v2_ptsz(CUdeviceptr dstDevice, CUdeviceptr srcDevice,
                                                  size_t ByteCount, CUstream hStream);

FAB__CU_COPY_PAIR(cuMemcpy, cuMemcpy_ptds, 0,
                  (CUdeviceptr dst, CUdeviceptr src, size_t ByteCount), dst, FAB__CU_INFER, src,
                  FAB__CU_INFER, ByteCount, NULL)
FAB__CU_COPY_PAIR(cuMemcpyAsync, cuMemcpyAsync_ptsz, FAB__CU_ASYNC,
                  (CUdeviceptr dst, CUdeviceptr src, size_t ByteCount, CUstream hStream), dst,
                  FAB__CU_INFER, src, FAB__CU_INFER, ByteCount, hStream)
FAB__CU_COPY_PAIR(cuMemcpyHtoD_v2, cuMemcpyHtoD_v2_ptds, 0,
                  (CUdeviceptr dstDevice, const void *srcHost, size_t ByteCount), dstDevice,
                  FAB__CU_DEVICE, (uintptr_t)srcHost, FAB__CU_HOST, ByteCount, NULL)
FAB__CU_COPY_PAIR(cuMemcpyDtoH_v2, cuMemcpyDtoH_v2_ptds, 0,
                  (void *dstHost, CUdeviceptr srcDevice, size_t ByteCount), (uintptr_t)dstHost,
                  FAB__CU_HOST, srcDevice, FAB__CU_DEVICE, ByteCount, NULL)
FAB__CU_COPY_PAIR(cuMemcpyDtoD_v2, cuMemcpyDtoD_v2_ptds, 0,
                  (CUdeviceptr dstDevice, CUdeviceptr srcDevice, size_t ByteCount), dstDevice,
                  FAB__CU_DEVICE, srcDevice, FAB__CU_DEVICE, ByteCount, NULL)
FAB__CU_COPY_PAIR(cuMemcpyHtoDAsync_v2, cuMemcpyHtoDAsync_v2_ptsz, FAB__CU_ASYNC,
                  (CUdeviceptr dstDevice, const void *srcHost, size_t ByteCount, CUstream hStream),
                  dstDevice, FAB__CU_DEVICE, (uintptr_t)srcHost, FAB__CU_HOST, ByteCount, hStream)
FAB__CU_COPY_PAIR(cuMemcpyDtoHAsync_v2, cuMemcpyDtoHAsync_v2_ptsz, FAB__CU_ASYNC,
                  (void *dstHost, CUdeviceptr srcDevice, size_t ByteCount, CUstream hStream),
                  (uintptr_t)dstHost, FAB__CU_HOST, srcDevice, FAB__CU_DEVICE, ByteCount, hStream)
FAB__CU_COPY_PAIR(cuMemcpyDtoDAsync_v2, cuMemcpyDtoDAsync_v2_ptsz, FAB__CU_ASYNC,
                  (CUdeviceptr dstDevice, CUdeviceptr srcDevice, size_t ByteCount,
                   CUstream hStream),
                  dstDevice, FAB__CU_DEVICE, srcDevice, FAB__CU_DEVICE, ByteCount, hStream)

/* The CUDA 3.1 ABI (32-bit device pointers and counts), under the plain names
 * the driver still exports. */
CUresult cuMemcpyHtoD(CUdeviceptr_v1 dstDevice, const void *srcHost, unsigned int ByteCount)
{
    return cuMemcpyHtoD_v2(dstDevice, srcHost, ByteCount);
}

CUresult cuMemcpyDtoH(void *dstHost, CUdeviceptr_v1 srcDevice, unsigned int ByteCount)
{
    return cuMemcpyDtoH_v2(dstHost, srcDevice, ByteCount);
}

CUresult cuMemcpyDtoD(CUdeviceptr_v1 dstDevice, CUdeviceptr_v1 srcDevice, unsigned int ByteCount)
{
    return cuMemcpyDtoD_v2(dstDevice, srcDevice, ByteCount);
}

CUresult cuMemcpyHtoDAsync(CUdeviceptr_v1 dstDevice, const void *srcHost, unsigned int ByteCount,
                           CUstream hStream)
{
    return cuMemcpyHtoDAsync_v2(dstDevice, srcHost, ByteCount, hStream);
}

CUresult cuMemcpyDtoHAsync(void *dstHost, CUdeviceptr_v1 srcDevice, unsigned int ByteCount,
                           CUstream hStream)
{
    return cuMemcpyDtoHAsync_v2(dstHost, srcDevice, ByteCount, hStream);
}

CUresult cuMemcpyDtoDAsync(CUdeviceptr_v1 dstDevice, CUdeviceptr_v1 srcDevice,
                           unsigned int ByteCount, CUstream hStream)
{
    return cuMemcpyDtoDAsync_v2(dstDevice, srcDevice, ByteCount, hStream);
}

/* ---- peer copies: every device reaches every other's memory ------------------- */

static CUresult fab__cu_peer(CUdeviceptr dst, CUcontext dctx, CUdeviceptr src, CUcontext sctx,
                             size_t n, CUstream stream, unsigned mode)
{
    FAB__CU_ENTER();
    FAB__CU_TRY(fab__cu_ctx_check(dctx));
    FAB__CU_TRY(fab__cu_ctx_check(sctx));
    return fab__cu_copy(dst, FAB__CU_DEVICE, src, FAB__CU_DEVICE, n, stream, mode);
}

FAB__CU_EXPORT CUresult cuMemcpyPeer_ptds(CUdeviceptr dstDevice, CUcontext dstContext,
                                          CUdeviceptr srcDevice, CUcontext srcContext,
                                          size_t ByteCount);
FAB__CU_EXPORT CUresult cuMemcpyPeerAsync_ptsz(CUdeviceptr dstDevice, CUcontext dstContext,
                                               CUdeviceptr srcDevice, CUcontext srcContext,
                                               size_t ByteCount, CUstream hStream);

CUresult cuMemcpyPeer(CUdeviceptr dstDevice, CUcontext dstContext, CUdeviceptr srcDevice,
                      CUcontext srcContext, size_t ByteCount)
{
    FAB__CU_FAULT();
    return fab__cu_peer(dstDevice, dstContext, srcDevice, srcContext, ByteCount, NULL, 0);
}

CUresult cuMemcpyPeer_ptds(CUdeviceptr dstDevice, CUcontext dstContext, CUdeviceptr srcDevice,
                           CUcontext srcContext, size_t ByteCount)
{
    FAB__CU_FAULT();
    return fab__cu_peer(dstDevice, dstContext, srcDevice, srcContext, ByteCount, NULL,
                        FAB__CU_PTDS);
}

CUresult cuMemcpyPeerAsync(CUdeviceptr dstDevice, CUcontext dstContext, CUdeviceptr srcDevice,
                           CUcontext srcContext, size_t ByteCount, CUstream hStream)
{
    FAB__CU_FAULT();
    return fab__cu_peer(dstDevice, dstContext, srcDevice, srcContext, ByteCount, hStream,
                        FAB__CU_ASYNC);
}

CUresult cuMemcpyPeerAsync_ptsz(CUdeviceptr dstDevice, CUcontext dstContext,
                                CUdeviceptr srcDevice, CUcontext srcContext, size_t ByteCount,
                                CUstream hStream)
{
    FAB__CU_FAULT();
    return fab__cu_peer(dstDevice, dstContext, srcDevice, srcContext, ByteCount, hStream,
                        FAB__CU_ASYNC | FAB__CU_PTDS);
}

/* ---- 2D copies ---------------------------------------------------------------- */

/* One side of a CUDA_MEMCPY2D: its address and kind. Arrays are not
 * emulated. */
static CUresult fab__cu_2d_side(CUmemorytype type, const void *host, CUdeviceptr device,
                                size_t x, size_t y, size_t pitch, uintptr_t *addr,
                                fab__cu_side_t *side)
{
    uintptr_t base;
    switch (type) {
    case CU_MEMORYTYPE_HOST: base = (uintptr_t)host; *side = FAB__CU_HOST; break;
    case CU_MEMORYTYPE_DEVICE: base = (uintptr_t)device; *side = FAB__CU_DEVICE; break;
    case CU_MEMORYTYPE_UNIFIED: base = (uintptr_t)device; *side = FAB__CU_INFER; break;
    case CU_MEMORYTYPE_ARRAY: return CUDA_ERROR_NOT_SUPPORTED;
    default: return CUDA_ERROR_INVALID_VALUE;
    }
    if (!base)
        return CUDA_ERROR_INVALID_VALUE;
    if (y > 0 && y > (SIZE_MAX - x) / (pitch ? pitch : 1))
        return CUDA_ERROR_INVALID_VALUE;
    *addr = base + y * pitch + x;
    return CUDA_SUCCESS;
}

static CUresult fab__cu_2d(const CUDA_MEMCPY2D *p, CUstream stream, unsigned mode)
{
    FAB__CU_ENTER();
    if (!p)
        return CUDA_ERROR_INVALID_VALUE;
    fab__cu_xfer_t x = {.width = p->WidthInBytes, .height = p->Height, .dpitch = p->dstPitch,
                        .spitch = p->srcPitch, .depth = 1};
    if (x.height == 1) { /* one row: its pitch does not matter */
        x.dpitch = x.dpitch ? x.dpitch : x.width;
        x.spitch = x.spitch ? x.spitch : x.width;
    }
    FAB__CU_TRY(fab__cu_2d_side(p->srcMemoryType, p->srcHost, p->srcDevice, p->srcXInBytes,
                                p->srcY, p->srcPitch, &x.src, &x.src_side));
    FAB__CU_TRY(fab__cu_2d_side(p->dstMemoryType, p->dstHost, p->dstDevice, p->dstXInBytes,
                                p->dstY, p->dstPitch, &x.dst, &x.dst_side));
    return fab__cu_xfer(&x, stream, mode);
}

FAB__CU_EXPORT CUresult cuMemcpy2D_v2_ptds(const CUDA_MEMCPY2D *pCopy);
FAB__CU_EXPORT CUresult cuMemcpy2DUnaligned_v2_ptds(const CUDA_MEMCPY2D *pCopy);
FAB__CU_EXPORT CUresult cuMemcpy2DAsync_v2_ptsz(const CUDA_MEMCPY2D *pCopy, CUstream hStream);

CUresult cuMemcpy2D_v2(const CUDA_MEMCPY2D *pCopy)
{
    FAB__CU_FAULT();
    return fab__cu_2d(pCopy, NULL, 0);
}

CUresult cuMemcpy2D_v2_ptds(const CUDA_MEMCPY2D *pCopy)
{
    FAB__CU_FAULT();
    return fab__cu_2d(pCopy, NULL, FAB__CU_PTDS);
}

/* No pitch restriction applies here, so the unaligned form is the same. */
CUresult cuMemcpy2DUnaligned_v2(const CUDA_MEMCPY2D *pCopy)
{
    FAB__CU_FAULT();
    return fab__cu_2d(pCopy, NULL, 0);
}

CUresult cuMemcpy2DUnaligned_v2_ptds(const CUDA_MEMCPY2D *pCopy)
{
    FAB__CU_FAULT();
    return fab__cu_2d(pCopy, NULL, FAB__CU_PTDS);
}

CUresult cuMemcpy2DAsync_v2(const CUDA_MEMCPY2D *pCopy, CUstream hStream)
{
    FAB__CU_FAULT();
    return fab__cu_2d(pCopy, hStream, FAB__CU_ASYNC);
}

CUresult cuMemcpy2DAsync_v2_ptsz(const CUDA_MEMCPY2D *pCopy, CUstream hStream)
{
    FAB__CU_FAULT();
    return fab__cu_2d(pCopy, hStream, FAB__CU_ASYNC | FAB__CU_PTDS);
}

/* ---- 3D copies: slices of 2D copies -------------------------------------------- */

static CUresult fab__cu_3d(const CUDA_MEMCPY3D *p, CUstream stream, unsigned mode)
{
    FAB__CU_ENTER();
    if (!p || p->srcLOD || p->dstLOD || p->reserved0 || p->reserved1)
        return CUDA_ERROR_INVALID_VALUE; /* LODs are for arrays; the reserved must be NULL */
    fab__cu_xfer_t x = {.width = p->WidthInBytes, .height = p->Height, .depth = p->Depth,
                        .dpitch = p->dstPitch, .spitch = p->srcPitch};
    if (x.height == 1 && x.depth == 1) {
        x.dpitch = x.dpitch ? x.dpitch : x.width;
        x.spitch = x.spitch ? x.spitch : x.width;
    }
    /* A slice is the side's height (at least the copy's) of rows. */
    size_t dh = p->dstHeight, sh = p->srcHeight;
    if (x.depth > 1 && (dh < x.height || sh < x.height))
        return CUDA_ERROR_INVALID_VALUE;
    if ((dh && x.dpitch > SIZE_MAX / dh) || (sh && x.spitch > SIZE_MAX / sh))
        return CUDA_ERROR_INVALID_VALUE;
    x.dslice = x.dpitch * dh;
    x.sslice = x.spitch * sh;
    if ((sh && p->srcZ > (SIZE_MAX - p->srcY) / sh) || (dh && p->dstZ > (SIZE_MAX - p->dstY) / dh))
        return CUDA_ERROR_INVALID_VALUE;
    FAB__CU_TRY(fab__cu_2d_side(p->srcMemoryType, p->srcHost, p->srcDevice, p->srcXInBytes,
                                p->srcZ * sh + p->srcY, p->srcPitch, &x.src, &x.src_side));
    FAB__CU_TRY(fab__cu_2d_side(p->dstMemoryType, p->dstHost, p->dstDevice, p->dstXInBytes,
                                p->dstZ * dh + p->dstY, p->dstPitch, &x.dst, &x.dst_side));
    return fab__cu_xfer(&x, stream, mode);
}

FAB__CU_EXPORT CUresult cuMemcpy3D_v2_ptds(const CUDA_MEMCPY3D *pCopy);
FAB__CU_EXPORT CUresult cuMemcpy3DAsync_v2_ptsz(const CUDA_MEMCPY3D *pCopy, CUstream hStream);

CUresult cuMemcpy3D_v2(const CUDA_MEMCPY3D *pCopy)
{
    FAB__CU_FAULT();
    return fab__cu_3d(pCopy, NULL, 0);
}

CUresult cuMemcpy3D_v2_ptds(const CUDA_MEMCPY3D *pCopy)
{
    FAB__CU_FAULT();
    return fab__cu_3d(pCopy, NULL, FAB__CU_PTDS);
}

CUresult cuMemcpy3DAsync_v2(const CUDA_MEMCPY3D *pCopy, CUstream hStream)
{
    FAB__CU_FAULT();
    return fab__cu_3d(pCopy, hStream, FAB__CU_ASYNC);
}

CUresult cuMemcpy3DAsync_v2_ptsz(const CUDA_MEMCPY3D *pCopy, CUstream hStream)
{
    FAB__CU_FAULT();
    return fab__cu_3d(pCopy, hStream, FAB__CU_ASYNC | FAB__CU_PTDS);
}

/* ---- memsets ------------------------------------------------------------------- */

#define FAB__CU_SET_PAIR(name, ptname, mode, type, width, params, stream)    \
    CUresult name params                                                      \
    {                                                                         \
        FAB__CU_FAULT();                                                      \
        type v = value;                                                       \
        return fab__cu_set(dstDevice, &v, width, N, stream, mode);            \
    }                                                                         \
    CUresult ptname params                                                    \
    {                                                                         \
        FAB__CU_FAULT();                                                      \
        type v = value;                                                       \
        return fab__cu_set(dstDevice, &v, width, N, stream, (mode) | FAB__CU_PTDS); \
    }

FAB__CU_EXPORT CUresult cuMemsetD8_v2_ptds(CUdeviceptr dstDevice, unsigned char value, size_t N);
FAB__CU_EXPORT CUresult cuMemsetD16_v2_ptds(CUdeviceptr dstDevice, unsigned short value,
                                            size_t N);
FAB__CU_EXPORT CUresult cuMemsetD32_v2_ptds(CUdeviceptr dstDevice, unsigned int value, size_t N);
FAB__CU_EXPORT CUresult cuMemsetD8Async_ptsz(CUdeviceptr dstDevice, unsigned char value, size_t N,
                                             CUstream hStream);
FAB__CU_EXPORT CUresult cuMemsetD16Async_ptsz(CUdeviceptr dstDevice, unsigned short value,
                                              size_t N, CUstream hStream);
FAB__CU_EXPORT CUresult cuMemsetD32Async_ptsz(CUdeviceptr dstDevice, unsigned int value,
                                              size_t N, CUstream hStream);

FAB__CU_SET_PAIR(cuMemsetD8_v2, cuMemsetD8_v2_ptds, 0, unsigned char, 1,
                 (CUdeviceptr dstDevice, unsigned char value, size_t N), NULL)
FAB__CU_SET_PAIR(cuMemsetD16_v2, cuMemsetD16_v2_ptds, 0, unsigned short, 2,
                 (CUdeviceptr dstDevice, unsigned short value, size_t N), NULL)
FAB__CU_SET_PAIR(cuMemsetD32_v2, cuMemsetD32_v2_ptds, 0, unsigned int, 4,
                 (CUdeviceptr dstDevice, unsigned int value, size_t N), NULL)
FAB__CU_SET_PAIR(cuMemsetD8Async, cuMemsetD8Async_ptsz, FAB__CU_ASYNC, unsigned char, 1,
                 (CUdeviceptr dstDevice, unsigned char value, size_t N, CUstream hStream),
                 hStream)
FAB__CU_SET_PAIR(cuMemsetD16Async, cuMemsetD16Async_ptsz, FAB__CU_ASYNC, unsigned short, 2,
                 (CUdeviceptr dstDevice, unsigned short value, size_t N, CUstream hStream),
                 hStream)
FAB__CU_SET_PAIR(cuMemsetD32Async, cuMemsetD32Async_ptsz, FAB__CU_ASYNC, unsigned int, 4,
                 (CUdeviceptr dstDevice, unsigned int value, size_t N, CUstream hStream),
                 hStream)

#define FAB__CU_SET2D_PAIR(name, ptname, mode, type, width, params, stream)        \
    CUresult name params                                                            \
    {                                                                               \
        FAB__CU_FAULT();                                                            \
        type v = value;                                                             \
        return fab__cu_set2d(dstDevice, dstPitch, &v, width, Width, Height, stream, mode); \
    }                                                                               \
    CUresult ptname params                                                          \
    {                                                                               \
        FAB__CU_FAULT();                                                            \
        type v = value;                                                             \
        return fab__cu_set2d(dstDevice, dstPitch, &v, width, Width, Height, stream,  \
                             (mode) | FAB__CU_PTDS);                                \
    }

FAB__CU_EXPORT CUresult cuMemsetD2D8_v2_ptds(CUdeviceptr dstDevice, size_t dstPitch,
                                             unsigned char value, size_t Width, size_t Height);
FAB__CU_EXPORT CUresult cuMemsetD2D16_v2_ptds(CUdeviceptr dstDevice, size_t dstPitch,
                                              unsigned short value, size_t Width, size_t Height);
FAB__CU_EXPORT CUresult cuMemsetD2D32_v2_ptds(CUdeviceptr dstDevice, size_t dstPitch,
                                              unsigned int value, size_t Width, size_t Height);
FAB__CU_EXPORT CUresult cuMemsetD2D8Async_ptsz(CUdeviceptr dstDevice, size_t dstPitch,
                                               unsigned char value, size_t Width, size_t Height,
                                               CUstream hStream);
FAB__CU_EXPORT CUresult cuMemsetD2D16Async_ptsz(CUdeviceptr dstDevice, size_t dstPitch,
                                                unsigned short value, size_t Width,
                                                size_t Height, CUstream hStream);
FAB__CU_EXPORT CUresult cuMemsetD2D32Async_ptsz(CUdeviceptr dstDevice, size_t dstPitch,
                                                unsigned int value, size_t Width, size_t Height,
                                                CUstream hStream);

#define FAB__CU_D2D(type) (CUdeviceptr dstDevice, size_t dstPitch, type value, size_t Width, \
                           size_t Height)
#define FAB__CU_D2DA(type) (CUdeviceptr dstDevice, size_t dstPitch, type value, size_t Width, \
                            size_t Height, CUstream hStream)
FAB__CU_SET2D_PAIR(cuMemsetD2D8_v2, cuMemsetD2D8_v2_ptds, 0, unsigned char, 1,
                   FAB__CU_D2D(unsigned char), NULL)
FAB__CU_SET2D_PAIR(cuMemsetD2D16_v2, cuMemsetD2D16_v2_ptds, 0, unsigned short, 2,
                   FAB__CU_D2D(unsigned short), NULL)
FAB__CU_SET2D_PAIR(cuMemsetD2D32_v2, cuMemsetD2D32_v2_ptds, 0, unsigned int, 4,
                   FAB__CU_D2D(unsigned int), NULL)
FAB__CU_SET2D_PAIR(cuMemsetD2D8Async, cuMemsetD2D8Async_ptsz, FAB__CU_ASYNC, unsigned char, 1,
                   FAB__CU_D2DA(unsigned char), hStream)
FAB__CU_SET2D_PAIR(cuMemsetD2D16Async, cuMemsetD2D16Async_ptsz, FAB__CU_ASYNC, unsigned short,
                   2, FAB__CU_D2DA(unsigned short), hStream)
FAB__CU_SET2D_PAIR(cuMemsetD2D32Async, cuMemsetD2D32Async_ptsz, FAB__CU_ASYNC, unsigned int, 4,
                   FAB__CU_D2DA(unsigned int), hStream)

/* The 3.1 ABI's 2D and 3D descriptors hold device pointers in 32 bits, which
 * the emulation's 64-bit addresses do not fit (as cuMemAlloc's 3.1 ABI):
 * refused without reading them. */
CUresult cuMemcpy2D(const CUDA_MEMCPY2D_v1 *pCopy)
{
    (void)pCopy;
    FAB__CU_ENTER();
    return CUDA_ERROR_NOT_SUPPORTED;
}

CUresult cuMemcpy2DUnaligned(const CUDA_MEMCPY2D_v1 *pCopy)
{
    (void)pCopy;
    FAB__CU_ENTER();
    return CUDA_ERROR_NOT_SUPPORTED;
}

CUresult cuMemcpy2DAsync(const CUDA_MEMCPY2D_v1 *pCopy, CUstream hStream)
{
    (void)pCopy;
    (void)hStream;
    FAB__CU_ENTER();
    return CUDA_ERROR_NOT_SUPPORTED;
}

CUresult cuMemcpy3D(const CUDA_MEMCPY3D_v1 *pCopy)
{
    (void)pCopy;
    FAB__CU_ENTER();
    return CUDA_ERROR_NOT_SUPPORTED;
}

CUresult cuMemcpy3DAsync(const CUDA_MEMCPY3D_v1 *pCopy, CUstream hStream)
{
    (void)pCopy;
    (void)hStream;
    FAB__CU_ENTER();
    return CUDA_ERROR_NOT_SUPPORTED;
}

CUresult cuMemsetD8(CUdeviceptr_v1 dstDevice, unsigned char uc, unsigned int N)
{
    return cuMemsetD8_v2(dstDevice, uc, N);
}

CUresult cuMemsetD16(CUdeviceptr_v1 dstDevice, unsigned short us, unsigned int N)
{
    return cuMemsetD16_v2(dstDevice, us, N);
}

CUresult cuMemsetD32(CUdeviceptr_v1 dstDevice, unsigned int ui, unsigned int N)
{
    return cuMemsetD32_v2(dstDevice, ui, N);
}
