/* The runtime calls of what the emulation does not have: CUDA arrays and the
 * copies to and from them, 3D copies, texture and surface objects, and the
 * managed-memory hints (cudaMemAdvise, cudaMemPrefetchAsync). Each is
 * exported and answers cudaErrorNotSupported, so that a library which links
 * them all but calls them only on request (CuPy's runtime module, which
 * Python loads with RTLD_NOW) loads and runs the rest; a program that calls
 * one stops there with a clear error rather than a missing symbol
 * (docs/runtime.md, "Refused"). No state: every call is refused whole, its
 * out-arguments set to "none" (a NULL array, object 0).
 *
 * The types these calls take are not in the project's cuda_runtime_api.h:
 * the prototypes below give each argument the size and class NVIDIA's
 * header gives it (pointers stay pointers, cudaExtent is three size_t by
 * value, cudaMemLocation two ints by value), which is all the calling
 * convention needs; nothing here reads them. */
#include "src/cudart/runtime.h"

#include <stddef.h>

struct fab__rt_array;        /* cudaArray_t: never made here */
struct fab__rt_extent {      /* cudaExtent, passed by value */
    size_t width, height, depth;
};
typedef unsigned long long fab__rt_object; /* cudaTextureObject_t, cudaSurfaceObject_t */

/* Each prototype before its definition: the names are exported, not declared
 * by the project's header. */
#define FAB__RT_REFUSED(name, params) FAB__RT_API name params; FAB__RT_API name params

FAB__RT_REFUSED(cudaMallocArray, (struct fab__rt_array **array, const void *desc, size_t width,
                                  size_t height, unsigned int flags))
{
    (void)desc, (void)width, (void)height, (void)flags;
    if (array)
        *array = NULL;
    FAB__RT_RETURN(cudaErrorNotSupported);
}

FAB__RT_REFUSED(cudaMalloc3DArray, (struct fab__rt_array **array, const void *desc,
                                    struct fab__rt_extent extent, unsigned int flags))
{
    (void)desc, (void)extent, (void)flags;
    if (array)
        *array = NULL;
    FAB__RT_RETURN(cudaErrorNotSupported);
}

/* CUDA: "If array is 0, no operation is performed"; no other array can
 * have come from this runtime. */
FAB__RT_REFUSED(cudaFreeArray, (struct fab__rt_array *array))
{
    if (!array)
        return cudaSuccess;
    FAB__RT_RETURN(cudaErrorNotSupported);
}

FAB__RT_REFUSED(cudaGetChannelDesc, (void *desc, const struct fab__rt_array *array))
{
    (void)desc, (void)array;
    FAB__RT_RETURN(cudaErrorNotSupported);
}

/* The 2D copies to and from an array, and their per-thread-stream names. */
#define FAB__RT_TO_ARRAY(name)                                                              \
    FAB__RT_REFUSED(name, (struct fab__rt_array *dst, size_t wOffset, size_t hOffset,       \
                           const void *src, size_t spitch, size_t width, size_t height,     \
                           int kind))                                                       \
    {                                                                                       \
        (void)dst, (void)wOffset, (void)hOffset, (void)src, (void)spitch, (void)width,      \
            (void)height, (void)kind;                                                       \
        FAB__RT_RETURN(cudaErrorNotSupported);                                              \
    }
#define FAB__RT_TO_ARRAY_ASYNC(name)                                                        \
    FAB__RT_REFUSED(name, (struct fab__rt_array *dst, size_t wOffset, size_t hOffset,       \
                           const void *src, size_t spitch, size_t width, size_t height,     \
                           int kind, cudaStream_t stream))                                  \
    {                                                                                       \
        (void)dst, (void)wOffset, (void)hOffset, (void)src, (void)spitch, (void)width,      \
            (void)height, (void)kind, (void)stream;                                         \
        FAB__RT_RETURN(cudaErrorNotSupported);                                              \
    }
#define FAB__RT_FROM_ARRAY(name)                                                            \
    FAB__RT_REFUSED(name, (void *dst, size_t dpitch, const struct fab__rt_array *src,       \
                           size_t wOffset, size_t hOffset, size_t width, size_t height,     \
                           int kind))                                                       \
    {                                                                                       \
        (void)dst, (void)dpitch, (void)src, (void)wOffset, (void)hOffset, (void)width,      \
            (void)height, (void)kind;                                                       \
        FAB__RT_RETURN(cudaErrorNotSupported);                                              \
    }
#define FAB__RT_FROM_ARRAY_ASYNC(name)                                                      \
    FAB__RT_REFUSED(name, (void *dst, size_t dpitch, const struct fab__rt_array *src,       \
                           size_t wOffset, size_t hOffset, size_t width, size_t height,     \
                           int kind, cudaStream_t stream))                                  \
    {                                                                                       \
        (void)dst, (void)dpitch, (void)src, (void)wOffset, (void)hOffset, (void)width,      \
            (void)height, (void)kind, (void)stream;                                         \
        FAB__RT_RETURN(cudaErrorNotSupported);                                              \
    }
FAB__RT_TO_ARRAY(cudaMemcpy2DToArray)
FAB__RT_TO_ARRAY(cudaMemcpy2DToArray_ptds)
FAB__RT_TO_ARRAY_ASYNC(cudaMemcpy2DToArrayAsync)
FAB__RT_TO_ARRAY_ASYNC(cudaMemcpy2DToArrayAsync_ptsz)
FAB__RT_FROM_ARRAY(cudaMemcpy2DFromArray)
FAB__RT_FROM_ARRAY(cudaMemcpy2DFromArray_ptds)
FAB__RT_FROM_ARRAY_ASYNC(cudaMemcpy2DFromArrayAsync)
FAB__RT_FROM_ARRAY_ASYNC(cudaMemcpy2DFromArrayAsync_ptsz)

/* cudaMemcpy3DParms names arrays or pitched pointers; neither form is here. */
#define FAB__RT_3D(name)                                                                    \
    FAB__RT_REFUSED(name, (const void *p))                                                  \
    {                                                                                       \
        (void)p;                                                                            \
        FAB__RT_RETURN(cudaErrorNotSupported);                                              \
    }
#define FAB__RT_3D_ASYNC(name)                                                              \
    FAB__RT_REFUSED(name, (const void *p, cudaStream_t stream))                             \
    {                                                                                       \
        (void)p, (void)stream;                                                              \
        FAB__RT_RETURN(cudaErrorNotSupported);                                              \
    }
FAB__RT_3D(cudaMemcpy3D)
FAB__RT_3D(cudaMemcpy3D_ptds)
FAB__RT_3D_ASYNC(cudaMemcpy3DAsync)
FAB__RT_3D_ASYNC(cudaMemcpy3DAsync_ptsz)

/* Texture and surface objects: made from arrays or linear memory; the
 * engine runs no tex/suld/sust (docs/ptx.md). */
FAB__RT_REFUSED(cudaCreateTextureObject, (fab__rt_object *pTexObject, const void *pResDesc,
                                          const void *pTexDesc, const void *pResViewDesc))
{
    (void)pResDesc, (void)pTexDesc, (void)pResViewDesc;
    if (pTexObject)
        *pTexObject = 0;
    FAB__RT_RETURN(cudaErrorNotSupported);
}

FAB__RT_REFUSED(cudaCreateSurfaceObject, (fab__rt_object *pSurfObject, const void *pResDesc))
{
    (void)pResDesc;
    if (pSurfObject)
        *pSurfObject = 0;
    FAB__RT_RETURN(cudaErrorNotSupported);
}

FAB__RT_REFUSED(cudaDestroyTextureObject, (fab__rt_object texObject))
{
    (void)texObject;
    FAB__RT_RETURN(cudaErrorNotSupported);
}

FAB__RT_REFUSED(cudaDestroySurfaceObject, (fab__rt_object surfObject))
{
    (void)surfObject;
    FAB__RT_RETURN(cudaErrorNotSupported);
}

FAB__RT_REFUSED(cudaGetTextureObjectResourceDesc, (void *pResDesc, fab__rt_object texObject))
{
    (void)pResDesc, (void)texObject;
    FAB__RT_RETURN(cudaErrorNotSupported);
}

FAB__RT_REFUSED(cudaGetTextureObjectTextureDesc, (void *pTexDesc, fab__rt_object texObject))
{
    (void)pTexDesc, (void)texObject;
    FAB__RT_RETURN(cudaErrorNotSupported);
}

/* Managed-memory hints: the driver emulation has no cuMemAdvise or
 * cuMemPrefetchAsync (docs/cuda.md), and managed memory here is host memory
 * that never migrates. */
FAB__RT_REFUSED(cudaMemAdvise, (const void *devPtr, size_t count, int advice,
                                struct cudaMemLocation location))
{
    (void)devPtr, (void)count, (void)advice, (void)location;
    FAB__RT_RETURN(cudaErrorNotSupported);
}

#define FAB__RT_PREFETCH(name)                                                              \
    FAB__RT_REFUSED(name, (const void *devPtr, size_t count, struct cudaMemLocation location, \
                           unsigned int flags, cudaStream_t stream))                        \
    {                                                                                       \
        (void)devPtr, (void)count, (void)location, (void)flags, (void)stream;               \
        FAB__RT_RETURN(cudaErrorNotSupported);                                              \
    }
FAB__RT_PREFETCH(cudaMemPrefetchAsync)
FAB__RT_PREFETCH(cudaMemPrefetchAsync_ptsz)
