/* The runtime calls of what the emulation lacks (arrays, 3D copies, texture
 * and surface objects, managed-memory hints, graph uploads and dumps) are
 * there and refuse, and the profiler calls answer in a context: a library
 * that links them all (CuPy's runtime module, loaded with RTLD_NOW) loads,
 * and a program that calls one gets cudaErrorNotSupported, the last error
 * recorded. The prototypes are declared here with the argument sizes of
 * NVIDIA's cuda_runtime_api.h, since the project's header leaves these
 * types out; only the runtime's library is linked. */
#include <stddef.h>
#include <stdint.h>

#include "fabtest.h"

enum { SUCCESS = 0, INVALID_VALUE = 1, NOT_SUPPORTED = 801 };

struct array;
struct extent {
    size_t width, height, depth;
};
struct location {
    int type, id;
};
typedef unsigned long long object;
typedef void *stream;

int cudaGetLastError(void);
int cudaPeekAtLastError(void);
int cudaSetDevice(int device);
int cudaMallocArray(struct array **array, const void *desc, size_t width, size_t height,
                    unsigned int flags);
int cudaMalloc3DArray(struct array **array, const void *desc, struct extent extent,
                      unsigned int flags);
int cudaFreeArray(struct array *array);
int cudaGetChannelDesc(void *desc, const struct array *array);
int cudaMemcpy2DToArray(struct array *dst, size_t wOffset, size_t hOffset, const void *src,
                        size_t spitch, size_t width, size_t height, int kind);
int cudaMemcpy2DToArrayAsync(struct array *dst, size_t wOffset, size_t hOffset,
                             const void *src, size_t spitch, size_t width, size_t height,
                             int kind, stream s);
int cudaMemcpy2DFromArray(void *dst, size_t dpitch, const struct array *src, size_t wOffset,
                          size_t hOffset, size_t width, size_t height, int kind);
int cudaMemcpy2DFromArrayAsync(void *dst, size_t dpitch, const struct array *src,
                               size_t wOffset, size_t hOffset, size_t width, size_t height,
                               int kind, stream s);
int cudaMemcpy3D(const void *p);
int cudaMemcpy3DAsync(const void *p, stream s);
int cudaMemcpy3D_ptds(const void *p);
int cudaMemcpy3DAsync_ptsz(const void *p, stream s);
int cudaCreateTextureObject(object *tex, const void *res, const void *texDesc,
                            const void *view);
int cudaCreateSurfaceObject(object *surf, const void *res);
int cudaDestroyTextureObject(object tex);
int cudaDestroySurfaceObject(object surf);
int cudaGetTextureObjectResourceDesc(void *res, object tex);
int cudaGetTextureObjectTextureDesc(void *texDesc, object tex);
int cudaMemAdvise(const void *p, size_t count, int advice, struct location location);
int cudaMemPrefetchAsync(const void *p, size_t count, struct location location,
                         unsigned int flags, stream s);
int cudaMemPrefetchAsync_ptsz(const void *p, size_t count, struct location location,
                              unsigned int flags, stream s);
int cudaGraphUpload(void *graphExec, stream s);
int cudaGraphUpload_ptsz(void *graphExec, stream s);
int cudaGraphDebugDotPrint(void *graph, const char *path, unsigned int flags);
int cudaProfilerStart(void);
int cudaProfilerStop(void);

/* The call refused, and its error left as the thread's last. */
#define REFUSED(call)                                                                       \
    do {                                                                                    \
        assert_int_equal((call), NOT_SUPPORTED);                                            \
        assert_int_equal(cudaGetLastError(), NOT_SUPPORTED);                                \
    } while (0)

static void arrays_and_copies_to_them_are_refused(void **state)
{
    (void)state;
    char desc[32] = {0}, buf[64] = {0};
    struct array *a = (struct array *)(uintptr_t)0x1000; /* any array: none can exist */
    struct array *made = a;
    REFUSED(cudaMallocArray(&made, desc, 16, 1, 0));
    assert_null(made);
    made = a;
    REFUSED(cudaMalloc3DArray(&made, desc, (struct extent){16, 2, 2}, 0));
    assert_null(made);
    assert_int_equal(cudaFreeArray(NULL), SUCCESS);
    REFUSED(cudaFreeArray(a));
    REFUSED(cudaGetChannelDesc(desc, a));
    REFUSED(cudaMemcpy2DToArray(a, 0, 0, buf, 16, 16, 1, 1));
    REFUSED(cudaMemcpy2DToArrayAsync(a, 0, 0, buf, 16, 16, 1, 1, NULL));
    REFUSED(cudaMemcpy2DFromArray(buf, 16, a, 0, 0, 16, 1, 2));
    REFUSED(cudaMemcpy2DFromArrayAsync(buf, 16, a, 0, 0, 16, 1, 2, NULL));
    REFUSED(cudaMemcpy3D(buf));
    REFUSED(cudaMemcpy3DAsync(buf, NULL));
    REFUSED(cudaMemcpy3D_ptds(buf));
    REFUSED(cudaMemcpy3DAsync_ptsz(buf, NULL));
}

static void texture_and_surface_objects_are_refused(void **state)
{
    (void)state;
    char res[64] = {0}, tex[64] = {0};
    object o = 7;
    REFUSED(cudaCreateTextureObject(&o, res, tex, NULL));
    assert_int_equal(o, 0);
    o = 7;
    REFUSED(cudaCreateSurfaceObject(&o, res));
    assert_int_equal(o, 0);
    REFUSED(cudaDestroyTextureObject(1));
    REFUSED(cudaDestroySurfaceObject(1));
    REFUSED(cudaGetTextureObjectResourceDesc(res, 1));
    REFUSED(cudaGetTextureObjectTextureDesc(tex, 1));
}

static void managed_memory_hints_are_refused(void **state)
{
    (void)state;
    char buf[64] = {0};
    struct location dev0 = {1, 0}; /* cudaMemLocationTypeDevice, device 0 */
    REFUSED(cudaMemAdvise(buf, sizeof buf, 1, dev0));
    REFUSED(cudaMemPrefetchAsync(buf, sizeof buf, dev0, 0, NULL));
    REFUSED(cudaMemPrefetchAsync_ptsz(buf, sizeof buf, dev0, 0, NULL));
}

static void graph_uploads_and_dumps_are_refused(void **state)
{
    (void)state;
    int some = 0;
    assert_int_equal(cudaGraphUpload(NULL, NULL), INVALID_VALUE);
    assert_int_equal(cudaGraphUpload_ptsz(NULL, NULL), INVALID_VALUE);
    assert_int_equal(cudaGraphDebugDotPrint(NULL, "/dev/null", 0), INVALID_VALUE);
    assert_int_equal(cudaGraphDebugDotPrint(&some, NULL, 0), INVALID_VALUE);
    assert_int_equal(cudaGetLastError(), INVALID_VALUE);
    REFUSED(cudaGraphUpload(&some, NULL));
    REFUSED(cudaGraphUpload_ptsz(&some, NULL));
    REFUSED(cudaGraphDebugDotPrint(&some, "/dev/null", 0));
}

static void profiler_start_and_stop_succeed_in_a_context(void **state)
{
    (void)state;
    assert_int_equal(cudaSetDevice(0), SUCCESS);
    assert_int_equal(cudaProfilerStart(), SUCCESS);
    assert_int_equal(cudaProfilerStop(), SUCCESS);
    assert_int_equal(cudaPeekAtLastError(), SUCCESS);
}

static const struct CMUnitTest tests[] = {
    cmocka_unit_test(arrays_and_copies_to_them_are_refused),
    cmocka_unit_test(texture_and_surface_objects_are_refused),
    cmocka_unit_test(managed_memory_hints_are_refused),
    cmocka_unit_test(graph_uploads_and_dumps_are_refused),
    cmocka_unit_test(profiler_start_and_stop_succeed_in_a_context),
};

FAB_TEST_MAIN_NO_HELPERS("cudart", tests)
