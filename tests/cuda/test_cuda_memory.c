/* Memory outside the VMM API against cuda.h only: cuMemAlloc and its
 * pitch, host allocations and registrations, copies between every kind of
 * memory, memsets (zeros give shared pages back), pointer attributes of each kind, cuMemGetInfo, contexts
 * (push/pop, the 13.0 cuCtxGetDevice through cuGetProcAddress) and peer
 * copies. */
#include "cuda_test.h"

#include <pthread.h>
#include <stdbool.h>
#include <sys/mman.h>
#include <unistd.h>

#define TWO_GPUS "[node a]\ngpus = 2\n"

static void fill(unsigned char *p, size_t n, unsigned char seed)
{
    for (size_t i = 0; i < n; i++)
        p[i] = (unsigned char)(seed + i * 7);
}

static void mem_free_of_zero_succeeds_and_double_free_fails(void **state)
{
    (void)state;
    cut_init(0);
    CU_OK(cuMemFree(0));
    CUdeviceptr p;
    CU_OK(cuMemAlloc(&p, 1000));
    CU_IS(cuMemFree(p + 8), CUDA_ERROR_INVALID_VALUE); /* not what cuMemAlloc gave */
    CU_OK(cuMemFree(p));
    CU_IS(cuMemFree(p), CUDA_ERROR_INVALID_VALUE);
    CU_IS(cuMemAlloc(&p, 0), CUDA_ERROR_INVALID_VALUE);
    void *h;
    CU_OK(cuMemAllocHost(&h, 100));
    CU_OK(cuMemFreeHost(h));
    CU_IS(cuMemFreeHost(h), CUDA_ERROR_INVALID_VALUE);
}

static void mem_alloc_pitch_aligns_rows(void **state)
{
    (void)state;
    cut_init(0);
    CUdeviceptr p;
    size_t pitch = 0;
    CU_OK(cuMemAllocPitch(&p, &pitch, 1000, 10, 4));
    assert_true(pitch >= 1000);
    assert_int_equal(pitch % 256, 0);
    assert_int_equal(p % 256, 0);
    /* Every row is usable up to the pitch. */
    CU_OK(cuMemsetD8(p, 0xab, pitch * 10));
    CU_IS(cuMemAllocPitch(&p, &pitch, 1000, 10, 3), CUDA_ERROR_INVALID_VALUE);
    CU_OK(cuMemFree(p));
}

static void copies_between_every_kind_of_memory(void **state)
{
    (void)state;
    cut_init(0);
    enum { N = 8192 };
    CUdeviceptr dev;
    CU_OK(cuMemAlloc(&dev, N));
    void *pinned;
    CU_OK(cuMemHostAlloc(&pinned, N, CU_MEMHOSTALLOC_PORTABLE));
    unsigned char *reg = aligned_alloc(4096, N);
    assert_non_null(reg);
    CU_OK(cuMemHostRegister(reg, N, 0));
    unsigned char *pageable = malloc(N), *back = malloc(N);
    assert_non_null(pageable);
    assert_non_null(back);
    /* Kinds as cuMemcpy sees them: device, pinned, registered, pageable. */
    CUdeviceptr kinds[4] = {dev, (CUdeviceptr)(uintptr_t)pinned, (CUdeviceptr)(uintptr_t)reg,
                            (CUdeviceptr)(uintptr_t)pageable};
    CUstream s;
    CU_OK(cuStreamCreate(&s, 0));
    for (int from = 0; from < 4; from++) {
        for (int to = 0; to < 4; to++) {
            if (from == to)
                continue;
            unsigned char seed = (unsigned char)(from * 4 + to);
            fill((unsigned char *)(uintptr_t)(from == 0 ? (uintptr_t)back : kinds[from]), N, seed);
            if (from == 0)
                CU_OK(cuMemcpyHtoD(dev, back, N));
            if (to % 2)
                CU_OK(cuMemcpy(kinds[to], kinds[from], N));
            else
                CU_OK(cuMemcpyAsync(kinds[to], kinds[from], N, s));
            CU_OK(cuStreamSynchronize(s));
            memset(back, 0, N);
            CU_OK(cuMemcpy((CUdeviceptr)(uintptr_t)back, kinds[to], N));
            unsigned char want[N];
            fill(want, N, seed);
            assert_memory_equal(back, want, N);
        }
    }
    /* The explicit directions take pinned and registered memory on the
     * device side too (unified addressing). */
    CUdeviceptr dpinned;
    CU_OK(cuMemHostGetDevicePointer(&dpinned, pinned, 0));
    assert_ptr_equal((void *)(uintptr_t)dpinned, pinned);
    fill(pageable, N, 99);
    CU_OK(cuMemcpyHtoD(dpinned, pageable, N));
    CU_OK(cuMemcpyDtoD((CUdeviceptr)(uintptr_t)reg, dpinned, N));
    CU_OK(cuMemcpyDtoDAsync(dev, (CUdeviceptr)(uintptr_t)reg, N, s));
    CU_OK(cuMemcpyDtoHAsync(back, dev, N, s));
    assert_memory_equal(back, pageable, N);
    /* A pageable address is not device memory. */
    CU_IS(cuMemcpyHtoD((CUdeviceptr)(uintptr_t)back, pageable, N), CUDA_ERROR_INVALID_VALUE);
    CU_IS(cuMemcpyDtoH(back, dev + 1, N), CUDA_ERROR_INVALID_VALUE); /* runs past the end */
    CU_OK(cuStreamDestroy(s));
    CU_OK(cuMemHostUnregister(reg));
    CU_OK(cuMemFreeHost(pinned));
    CU_OK(cuMemFree(dev));
    free(reg);
    free(pageable);
    free(back);
}

static void an_async_copy_from_pageable_memory_takes_it_at_the_call(void **state)
{
    (void)state;
    cut_init(0);
    CUstream s;
    CU_OK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
    uint32_t *gate;
    CU_OK(cuMemAllocHost((void **)&gate, 64));
    gate[0] = 0;
    CUdeviceptr dev;
    CU_OK(cuMemAlloc(&dev, 64));
    CU_OK(cuStreamWaitValue32(s, (CUdeviceptr)(uintptr_t)gate, 1, CU_STREAM_WAIT_VALUE_EQ));
    uint32_t src[4] = {1, 2, 3, 4};
    CU_OK(cuMemcpyHtoDAsync(dev, src, sizeof(src), s));
    src[0] = 100; /* too late to matter */
    __atomic_store_n(&gate[0], 1, __ATOMIC_SEQ_CST);
    CU_OK(cuStreamSynchronize(s));
    uint32_t got[4];
    CU_OK(cuMemcpyDtoH(got, dev, sizeof(got)));
    assert_int_equal(got[0], 1);
    assert_int_equal(got[3], 4);
    CU_OK(cuMemFree(dev));
    CU_OK(cuMemFreeHost(gate));
    CU_OK(cuStreamDestroy(s));
}

static void memsets_reach_device_and_page_locked_memory_only(void **state)
{
    (void)state;
    cut_init(0);
    unsigned short *reg = aligned_alloc(4096, 4096);
    assert_non_null(reg);
    CU_OK(cuMemHostRegister(reg, 4096, CU_MEMHOSTREGISTER_DEVICEMAP));
    CU_OK(cuMemsetD16((CUdeviceptr)(uintptr_t)reg, 0xbeef, 2048));
    assert_int_equal(reg[0], 0xbeef);
    assert_int_equal(reg[2047], 0xbeef);
    CU_OK(cuMemsetD32Async((CUdeviceptr)(uintptr_t)reg, 0x01020304u, 1024, NULL));
    CU_OK(cuStreamSynchronize(NULL));
    assert_int_equal(((uint32_t *)reg)[1023], 0x01020304u);
    CU_OK(cuMemHostUnregister(reg));
    CU_IS(cuMemsetD8((CUdeviceptr)(uintptr_t)reg, 0, 16), CUDA_ERROR_INVALID_VALUE);
    CU_IS(cuMemsetD32((CUdeviceptr)(uintptr_t)reg + 2, 0, 4), CUDA_ERROR_INVALID_VALUE);
    free(reg);
}

static void a_memset_of_zeros_gives_shared_memorys_pages_back_and_keeps_the_rest(void **state)
{
    (void)state;
    cut_init(0);
    size_t size = cut_granularity(0);
    CUmemGenericAllocationHandle h = cut_create_posix(size, 0);
    CUdeviceptr p = cut_map_rw(h, size);
    int fd = -1;
    CU_OK(cuMemExportToShareableHandle(&fd, h, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0));
    CU_OK(cuMemsetD8(p, 0x5a, size));
    assert_int_equal(lseek(fd, 0, SEEK_DATA), 0);
    /* Zeros over [100, size - 100): the bytes outside keep theirs; inside,
     * the whole pages are holes, in the memory every process shares. */
    CU_OK(cuMemsetD8(p + 100, 0, size - 200));
    unsigned char edge[2] = {0, 0};
    assert_int_equal(pread(fd, &edge[0], 1, 99), 1);
    assert_int_equal(pread(fd, &edge[1], 1, (off_t)size - 100), 1);
    assert_int_equal(edge[0], 0x5a);
    assert_int_equal(edge[1], 0x5a);
    assert_true(fab_test_reads_zeros(fd, 100, size - 200));
    assert_int_equal(lseek(fd, 4096, SEEK_HOLE), 4096);
    assert_int_equal(lseek(fd, 4096, SEEK_DATA), (off_t)size - 4096);
    /* The queued form and the wider ones alike; a pattern that is not
     * zeros is written. */
    CU_OK(cuMemsetD32Async(p, 0x01010101u, size / 4, NULL));
    CU_OK(cuStreamSynchronize(NULL));
    CU_OK(cuMemsetD32Async(p, 0, size / 4, NULL));
    CU_OK(cuStreamSynchronize(NULL));
    assert_true(fab_test_reads_zeros(fd, 0, size));
    assert_int_equal(lseek(fd, 0, SEEK_DATA), -1);
    CU_OK(cuMemsetD16(p, 0x0100, size / 2));
    assert_int_equal(lseek(fd, 0, SEEK_DATA), 0);
    unsigned char got[2];
    assert_int_equal(pread(fd, got, 2, 4096), 2);
    assert_int_equal(got[0], 0x00);
    assert_int_equal(got[1], 0x01);
    close(fd);
    cut_unmap_free(p, size);
    CU_OK(cuMemRelease(h));
    /* Memory that is not shared between processes is written. */
    void *host = NULL;
    CU_OK(cuMemAllocHost(&host, 1 << 20));
    memset(host, 0x77, 1 << 20);
    CU_OK(cuMemsetD8((CUdeviceptr)(uintptr_t)host, 0, 1 << 20));
    for (size_t i = 0; i < (1 << 20); i += 4093)
        assert_int_equal(((unsigned char *)host)[i], 0);
    CU_OK(cuMemFreeHost(host));
    /* Registered host memory may be a mapping of the user's own file: its
     * zeros are written, its blocks never punched. */
    int file = memfd_create("users-file", MFD_CLOEXEC);
    assert_true(file >= 0);
    assert_int_equal(ftruncate(file, 1 << 20), 0);
    unsigned char *mine = mmap(NULL, 1 << 20, PROT_READ | PROT_WRITE, MAP_SHARED, file, 0);
    assert_true(mine != MAP_FAILED);
    memset(mine, 0x77, 1 << 20);
    CU_OK(cuMemHostRegister(mine, 1 << 20, CU_MEMHOSTREGISTER_DEVICEMAP));
    CU_OK(cuMemsetD8((CUdeviceptr)(uintptr_t)mine, 0, 1 << 20));
    assert_true(fab_test_reads_zeros(file, 0, 1 << 20));
    assert_int_equal(lseek(file, 0, SEEK_HOLE), 1 << 20); /* every block still there */
    CU_OK(cuMemHostUnregister(mine));
    munmap(mine, 1 << 20);
    close(file);
}

static void host_registration_rules(void **state)
{
    (void)state;
    cut_init(0);
    unsigned char *p = aligned_alloc(4096, 3 * 4096);
    assert_non_null(p);
    CU_OK(cuMemHostRegister(p + 4096, 4096, CU_MEMHOSTREGISTER_READ_ONLY));
    CU_IS(cuMemHostRegister(p, 4097, 0), CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED);
    CU_IS(cuMemHostRegister(p + 8191, 2, 0), CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED);
    CU_OK(cuMemHostRegister(p, 4096, 0)); /* right next to it */
    CU_IS(cuMemHostUnregister(p + 1), CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED);
    CU_IS(cuMemHostRegister(p + 8192, 4096, 0x40), CUDA_ERROR_INVALID_VALUE);
    unsigned flags = 0;
    CU_OK(cuMemHostGetFlags(&flags, p + 4096 + 10));
    assert_true(flags & CU_MEMHOSTREGISTER_READ_ONLY);
    /* Read-only registered memory is not written by the device. */
    CU_IS(cuMemsetD8((CUdeviceptr)(uintptr_t)(p + 4096), 0, 8), CUDA_ERROR_INVALID_VALUE);
    CUdeviceptr d = 0;
    CU_IS(cuMemHostGetDevicePointer(&d, p + 8192, 0), CUDA_ERROR_INVALID_VALUE);
    CU_OK(cuMemHostUnregister(p));
    CU_OK(cuMemHostUnregister(p + 4096));
    CU_IS(cuMemHostUnregister(p), CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED);
    free(p);
}

static void pointer_attributes_of_each_kind_of_memory(void **state)
{
    (void)state;
    CUcontext ctx = cut_init(0);
    CUdeviceptr dev;
    CU_OK(cuMemAlloc(&dev, 10000));
    void *pinned;
    CU_OK(cuMemAllocHost(&pinned, 5000));
    unsigned char *reg = aligned_alloc(4096, 4096);
    assert_non_null(reg);
    CU_OK(cuMemHostRegister(reg, 4096, 0));

    unsigned type = 0;
    CU_OK(cuPointerGetAttribute(&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, dev + 10));
    assert_int_equal(type, CU_MEMORYTYPE_DEVICE);
    CU_OK(cuPointerGetAttribute(&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE,
                                (CUdeviceptr)(uintptr_t)pinned));
    assert_int_equal(type, CU_MEMORYTYPE_HOST);
    CU_OK(cuPointerGetAttribute(&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE,
                                (CUdeviceptr)(uintptr_t)reg));
    assert_int_equal(type, CU_MEMORYTYPE_HOST);

    CUcontext owner = NULL;
    CU_OK(cuPointerGetAttribute(&owner, CU_POINTER_ATTRIBUTE_CONTEXT, dev));
    assert_ptr_equal(owner, ctx);
    CUdeviceptr start = 0;
    size_t size = 0;
    CU_OK(cuPointerGetAttribute(&start, CU_POINTER_ATTRIBUTE_RANGE_START_ADDR, dev + 123));
    CU_OK(cuPointerGetAttribute(&size, CU_POINTER_ATTRIBUTE_RANGE_SIZE, dev + 123));
    assert_int_equal(start, dev);
    assert_int_equal(size, 10000);
    CUdeviceptr base = 0;
    size_t bsize = 0;
    CU_OK(cuMemGetAddressRange(&base, &bsize, dev + 9999));
    assert_int_equal(base, dev);
    assert_int_equal(bsize, 10000);
    bool ipc = false, mapped = false;
    CU_OK(cuPointerGetAttribute(&ipc, CU_POINTER_ATTRIBUTE_IS_LEGACY_CUDA_IPC_CAPABLE, dev));
    assert_true(ipc);
    CU_OK(cuPointerGetAttribute(&ipc, CU_POINTER_ATTRIBUTE_IS_LEGACY_CUDA_IPC_CAPABLE,
                                (CUdeviceptr)(uintptr_t)pinned));
    assert_false(ipc);
    CU_OK(cuPointerGetAttribute(&mapped, CU_POINTER_ATTRIBUTE_MAPPED, dev));
    assert_true(mapped);
    int ordinal = -1;
    CU_OK(cuPointerGetAttribute(&ordinal, CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL, dev));
    assert_int_equal(ordinal, 0);
    void *host = NULL;
    CU_IS(cuPointerGetAttribute(&host, CU_POINTER_ATTRIBUTE_HOST_POINTER, dev),
          CUDA_ERROR_INVALID_VALUE);
    CU_OK(cuPointerGetAttribute(&host, CU_POINTER_ATTRIBUTE_HOST_POINTER,
                                (CUdeviceptr)(uintptr_t)reg + 5));
    assert_ptr_equal(host, reg + 5);
    CUmemoryPool pool = (CUmemoryPool)1;
    CU_OK(cuPointerGetAttribute(&pool, CU_POINTER_ATTRIBUTE_MEMPOOL_HANDLE, dev));
    assert_null(pool);
    unsigned long long types = 1;
    CU_OK(cuPointerGetAttribute(&types, CU_POINTER_ATTRIBUTE_ALLOWED_HANDLE_TYPES, dev));
    assert_int_equal(types, 0);
    unsigned access = 0;
    CU_OK(cuPointerGetAttribute(&access, CU_POINTER_ATTRIBUTE_ACCESS_FLAGS, dev));
    assert_int_equal(access, CU_POINTER_ATTRIBUTE_ACCESS_FLAG_READWRITE);

    /* SYNC_MEMOPS is settable on cuMemAlloc memory. */
    bool sync = true;
    CU_OK(cuPointerGetAttribute(&sync, CU_POINTER_ATTRIBUTE_SYNC_MEMOPS, dev));
    assert_false(sync);
    bool on = true;
    CU_OK(cuPointerSetAttribute(&on, CU_POINTER_ATTRIBUTE_SYNC_MEMOPS, dev));
    CU_OK(cuPointerGetAttribute(&sync, CU_POINTER_ATTRIBUTE_SYNC_MEMOPS, dev));
    assert_true(sync);

    /* Memory the driver does not know: an error alone, defaults in a set. */
    int local = 0;
    CUdeviceptr unknown = (CUdeviceptr)(uintptr_t)&local;
    CU_IS(cuPointerGetAttribute(&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, unknown),
          CUDA_ERROR_INVALID_VALUE);
    CUpointer_attribute attrs[3] = {CU_POINTER_ATTRIBUTE_MEMORY_TYPE,
                                    CU_POINTER_ATTRIBUTE_CONTEXT,
                                    CU_POINTER_ATTRIBUTE_DEVICE_POINTER};
    unsigned t2 = 7;
    CUcontext c2 = ctx;
    CUdeviceptr d2 = 7;
    void *data[3] = {&t2, &c2, &d2};
    CU_OK(cuPointerGetAttributes(3, attrs, data, unknown));
    assert_int_equal(t2, 0);
    assert_null(c2);
    assert_int_equal(d2, 0);
    CU_OK(cuPointerGetAttributes(3, attrs, data, dev + 1));
    assert_int_equal(t2, CU_MEMORYTYPE_DEVICE);
    assert_ptr_equal(c2, ctx);
    assert_int_equal(d2, dev + 1);

    CU_OK(cuMemHostUnregister(reg));
    CU_OK(cuMemFreeHost(pinned));
    CU_OK(cuMemFree(dev));
    free(reg);
}

static void buffer_ids_are_unique_and_never_reused(void **state)
{
    (void)state;
    cut_init(0);
    unsigned long long ids[8];
    for (int i = 0; i < 8; i++) {
        CUdeviceptr p;
        CU_OK(cuMemAlloc(&p, 4096)); /* often at the address just freed */
        CU_OK(cuPointerGetAttribute(&ids[i], CU_POINTER_ATTRIBUTE_BUFFER_ID, p));
        CU_OK(cuMemFree(p));
        for (int j = 0; j < i; j++)
            assert_true(ids[i] != ids[j]);
    }
}

static void mem_get_info_counts_mem_alloc(void **state)
{
    (void)state;
    cut_init(0);
    size_t free0, total0, free1, total1;
    CU_OK(cuMemGetInfo(&free0, &total0));
    CUdeviceptr p;
    CU_OK(cuMemAlloc(&p, 64u << 20));
    CU_OK(cuMemGetInfo(&free1, &total1));
    assert_int_equal(total0, total1);
    assert_int_equal(free0 - free1, 64u << 20);
    CU_OK(cuMemFree(p));
    CU_OK(cuMemGetInfo(&free1, &total1));
    assert_int_equal(free1, free0);
    CU_IS(cuMemAlloc(&p, total0 + 1), CUDA_ERROR_OUT_OF_MEMORY);
}

static void copy_2d_moves_rows_between_pitches(void **state)
{
    (void)state;
    cut_init(0);
    CUdeviceptr dev;
    size_t pitch;
    CU_OK(cuMemAllocPitch(&dev, &pitch, 100, 4, 4));
    unsigned char src[4][100], dst[4][100];
    for (int r = 0; r < 4; r++)
        fill(src[r], 100, (unsigned char)r);
    CUDA_MEMCPY2D c;
    memset(&c, 0, sizeof(c));
    c.srcMemoryType = CU_MEMORYTYPE_HOST;
    c.srcHost = src;
    c.srcPitch = 100;
    c.dstMemoryType = CU_MEMORYTYPE_DEVICE;
    c.dstDevice = dev;
    c.dstPitch = pitch;
    c.WidthInBytes = 100;
    c.Height = 4;
    CU_OK(cuMemcpy2D(&c));
    unsigned char row3[100];
    CU_OK(cuMemcpyDtoH(row3, dev + 3 * pitch, 100));
    assert_memory_equal(row3, src[3], 100);
    memset(&c, 0, sizeof(c));
    c.srcMemoryType = CU_MEMORYTYPE_UNIFIED;
    c.srcDevice = dev;
    c.srcPitch = pitch;
    c.dstMemoryType = CU_MEMORYTYPE_HOST;
    c.dstHost = dst;
    c.dstPitch = 100;
    c.WidthInBytes = 100;
    c.Height = 4;
    CU_OK(cuMemcpy2DAsync(&c, NULL));
    CU_OK(cuStreamSynchronize(NULL));
    assert_memory_equal(dst, src, sizeof(src));
    c.dstPitch = 50; /* narrower than a row */
    CU_IS(cuMemcpy2DUnaligned(&c), CUDA_ERROR_INVALID_VALUE);
    CU_OK(cuMemFree(dev));
}

static void copy_3d_moves_a_box_between_layouts(void **state)
{
    (void)state;
    cut_init(0);
    enum { W = 16, H = 3, D = 4, PITCH = 32, ROWS = 5 }; /* device: 5 rows of 32 per slice */
    CUdeviceptr dev;
    CU_OK(cuMemAlloc(&dev, PITCH * ROWS * D));
    CU_OK(cuMemsetD8(dev, 0, PITCH * ROWS * D));
    unsigned char box[D][H][W], back[D][H][W];
    for (int z = 0; z < D; z++)
        for (int y = 0; y < H; y++)
            fill(box[z][y], W, (unsigned char)(z * 16 + y));
    CUDA_MEMCPY3D c;
    memset(&c, 0, sizeof(c));
    c.srcMemoryType = CU_MEMORYTYPE_HOST;
    c.srcHost = box;
    c.srcPitch = W;
    c.srcHeight = H;
    c.dstMemoryType = CU_MEMORYTYPE_DEVICE;
    c.dstDevice = dev;
    c.dstPitch = PITCH;
    c.dstHeight = ROWS;
    c.dstY = 1; /* one row down in each slice */
    c.WidthInBytes = W;
    c.Height = H;
    c.Depth = D;
    CU_OK(cuMemcpy3D(&c));
    unsigned char row[W];
    CU_OK(cuMemcpyDtoH(row, dev + 2 * PITCH * ROWS + 3 * PITCH, W)); /* z 2, y 2 */
    assert_memory_equal(row, box[2][2], W);
    CU_OK(cuMemcpyDtoH(row, dev + 2 * PITCH * ROWS, W)); /* z 2, y 0: untouched */
    assert_int_equal(row[0], 0);
    CUDA_MEMCPY3D r;
    memset(&r, 0, sizeof(r));
    r.srcMemoryType = CU_MEMORYTYPE_DEVICE;
    r.srcDevice = dev;
    r.srcPitch = PITCH;
    r.srcHeight = ROWS;
    r.srcY = 1;
    r.dstMemoryType = CU_MEMORYTYPE_HOST;
    r.dstHost = back;
    r.dstPitch = W;
    r.dstHeight = H;
    r.WidthInBytes = W;
    r.Height = H;
    r.Depth = D;
    CU_OK(cuMemcpy3DAsync(&r, NULL));
    CU_OK(cuStreamSynchronize(NULL));
    assert_memory_equal(back, box, sizeof(box));
    r.srcLOD = 1; /* levels of detail belong to arrays */
    CU_IS(cuMemcpy3D(&r), CUDA_ERROR_INVALID_VALUE);
    CU_OK(cuMemFree(dev));
}

static void context_push_and_pop(void **state)
{
    (void)state;
    char *dir = use_config(TWO_GPUS);
    CUcontext primary = cut_init(0);
    CUcontext other, got = NULL;
    CU_OK(cuDevicePrimaryCtxRetain(&other, 1));
    CU_OK(cuCtxPushCurrent(other));
    CU_OK(cuCtxGetCurrent(&got));
    assert_ptr_equal(got, other);
    CUdevice dev = -1;
    CU_OK(cuCtxGetDevice(&dev));
    assert_int_equal(dev, 1);
    CU_OK(cuCtxPopCurrent(&got));
    assert_ptr_equal(got, other);
    CU_OK(cuCtxGetCurrent(&got));
    assert_ptr_equal(got, primary);
    CU_OK(cuCtxPopCurrent(&got));
    assert_ptr_equal(got, primary);
    CU_OK(cuCtxGetCurrent(&got));
    assert_null(got);
    CU_IS(cuCtxPopCurrent(&got), CUDA_ERROR_INVALID_CONTEXT);
    CU_IS(cuCtxPushCurrent(NULL), CUDA_ERROR_INVALID_VALUE);
    unsigned long long id0 = 0, id1 = 0;
    CU_OK(cuCtxGetId(primary, &id0));
    CU_OK(cuCtxGetId(other, &id1));
    assert_true(id0 != id1);
    CU_OK(cuCtxPushCurrent(primary));
    unsigned flags = 99;
    CU_OK(cuCtxGetFlags(&flags));
    assert_int_equal(flags, 0);
    fab_test_rmtree(dir);
    free(dir);
}

static void ctx_get_device_at_13000_honours_its_context(void **state)
{
    (void)state;
    char *dir = use_config(TWO_GPUS);
    cut_init(0);
    CUcontext other;
    CU_OK(cuDevicePrimaryCtxRetain(&other, 1));
    int version = 0;
    CU_OK(cuDriverGetVersion(&version));
    if (version < 13000) { /* a driver without the 13.0 ABI has nothing to check */
        fab_test_rmtree(dir);
        free(dir);
        return;
    }
    void *fn = NULL, *old = NULL;
    CUdriverProcAddressQueryResult st;
    CU_OK(cuGetProcAddress("cuCtxGetDevice", &fn, 13000, 0, &st));
    CU_OK(cuGetProcAddress("cuCtxGetDevice", &old, 12000, 0, &st));
    assert_non_null(fn);
    assert_true(fn != old);
    CUresult (*get_device)(CUdevice *, CUcontext);
    memcpy(&get_device, &fn, sizeof(fn));
    CUdevice d = -1;
    CU_OK(get_device(&d, other));
    assert_int_equal(d, 1);
    CU_OK(get_device(&d, NULL)); /* NULL: the current context */
    assert_int_equal(d, 0);
    CU_OK(cuGetProcAddress("cuCtxSynchronize", &fn, 13000, 0, &st));
    CUresult (*sync)(CUcontext);
    memcpy(&sync, &fn, sizeof(fn));
    CU_OK(sync(other));
    fab_test_rmtree(dir);
    free(dir);
}

static void peer_copy_between_contexts_of_two_devices(void **state)
{
    (void)state;
    char *dir = use_config(TWO_GPUS);
    CUcontext c0 = cut_init(0);
    CUcontext c1;
    CU_OK(cuDevicePrimaryCtxRetain(&c1, 1));
    CUdeviceptr a, b;
    CU_OK(cuMemAlloc(&a, 256));
    CU_OK(cuCtxSetCurrent(c1));
    CU_OK(cuMemAlloc(&b, 256));
    int ordinal = -1;
    CU_OK(cuPointerGetAttribute(&ordinal, CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL, b));
    assert_int_equal(ordinal, 1);
    CU_OK(cuMemsetD8(b, 0x5a, 256));
    CU_OK(cuMemcpyPeer(a, c0, b, c1, 256));
    CU_OK(cuMemcpyPeerAsync(a, c0, b, c1, 128, NULL));
    CU_OK(cuCtxSynchronize());
    unsigned char got[256];
    CU_OK(cuMemcpyDtoH(got, a, 256));
    assert_int_equal(got[255], 0x5a);
    CU_OK(cuMemFree(a));
    CU_OK(cuMemFree(b));
    fab_test_rmtree(dir);
    free(dir);
}

static void proc_address_gives_the_per_thread_abi_when_asked(void **state)
{
    (void)state;
    cut_init(0);
    void *legacy = NULL, *ptds = NULL;
    CUdriverProcAddressQueryResult st;
    CU_OK(cuGetProcAddress("cuStreamSynchronize", &legacy, 12000,
                           CU_GET_PROC_ADDRESS_LEGACY_STREAM, &st));
    CU_OK(cuGetProcAddress("cuStreamSynchronize", &ptds, 12000,
                           CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM, &st));
    assert_non_null(legacy);
    assert_non_null(ptds);
    assert_true(legacy != ptds);
    const char *names[] = {"cuMemAlloc", "cuMemFree", "cuMemAllocHost", "cuMemHostAlloc",
                           "cuMemHostRegister", "cuPointerGetAttributes", "cuStreamWaitValue32",
                           "cuStreamWriteValue64", "cuStreamBatchMemOp", "cuEventElapsedTime",
                           "cuLaunchHostFunc", "cuStreamGetCaptureInfo", "cuCtxPushCurrent"};
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
        void *fn = NULL;
        CU_OK(cuGetProcAddress(names[i], &fn, 12080, 0, &st));
        assert_int_equal(st, CU_GET_PROC_ADDRESS_SUCCESS);
        assert_non_null(fn);
    }
}

static void managed_memory_is_device_memory_the_host_reads_and_writes(void **state)
{
    (void)state;
    cut_init(0);
    CUdeviceptr p;
    CU_IS(cuMemAllocManaged(&p, 0, CU_MEM_ATTACH_GLOBAL), CUDA_ERROR_INVALID_VALUE);
    CU_IS(cuMemAllocManaged(&p, 4096, CU_MEM_ATTACH_SINGLE), CUDA_ERROR_INVALID_VALUE);
    CU_IS(cuMemAllocManaged(&p, 4096, 0), CUDA_ERROR_INVALID_VALUE);
    CU_IS(cuMemAllocManaged(NULL, 4096, CU_MEM_ATTACH_GLOBAL), CUDA_ERROR_INVALID_VALUE);
    CU_OK(cuMemAllocManaged(&p, 4096, CU_MEM_ATTACH_GLOBAL));
    unsigned char *host = (unsigned char *)(uintptr_t)p;
    fill(host, 4096, 3); /* the host writes it directly */
    unsigned char back[4096];
    CU_OK(cuMemcpyDtoH(back, p, sizeof back)); /* and the driver copies it as device memory */
    assert_memory_equal(back, host, sizeof back);
    CU_OK(cuMemsetD8(p, 0x5a, 16));
    assert_int_equal(host[15], 0x5a);
    bool managed = false, ipc = true;
    unsigned int type = 0;
    CU_OK(cuPointerGetAttribute(&managed, CU_POINTER_ATTRIBUTE_IS_MANAGED, p));
    CU_OK(cuPointerGetAttribute(&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, p));
    CU_OK(cuPointerGetAttribute(&ipc, CU_POINTER_ATTRIBUTE_IS_LEGACY_CUDA_IPC_CAPABLE, p));
    assert_true(managed);
    assert_int_equal(type, CU_MEMORYTYPE_DEVICE);
    assert_false(ipc); /* managed memory is not shared by legacy IPC */
    CU_OK(cuMemFree(p));
    CU_IS(cuMemFree(p), CUDA_ERROR_INVALID_VALUE);
    CU_OK(cuMemAllocManaged(&p, 100, CU_MEM_ATTACH_HOST));
    CU_OK(cuPointerGetAttribute(&managed, CU_POINTER_ATTRIBUTE_IS_MANAGED, p));
    assert_true(managed);
    CU_OK(cuMemFree(p));
    /* Plain device memory is not managed. */
    CU_OK(cuMemAlloc(&p, 100));
    CU_OK(cuPointerGetAttribute(&managed, CU_POINTER_ATTRIBUTE_IS_MANAGED, p));
    assert_false(managed);
    CU_OK(cuMemFree(p));
    void *fn = NULL;
    CU_OK(cuGetProcAddress("cuMemAllocManaged", &fn, 13000, 0, NULL));
    CUresult (*alloc)(CUdeviceptr *, size_t, unsigned int);
    memcpy(&alloc, &fn, sizeof(fn));
    CU_OK(alloc(&p, 64, CU_MEM_ATTACH_GLOBAL));
    CU_OK(cuMemFree(p));
}

static void address_range_of_host_allocations_is_theirs_and_registrations_have_none(void **state)
{
    (void)state;
    cut_init(0);
    void *pinned, *mapped;
    CU_OK(cuMemAllocHost(&pinned, 5000));
    CU_OK(cuMemHostAlloc(&mapped, 300, CU_MEMHOSTALLOC_DEVICEMAP));
    CUdeviceptr dmapped;
    CU_OK(cuMemHostGetDevicePointer(&dmapped, mapped, 0));
    CUdeviceptr base = 0;
    size_t size = 0;
    CU_OK(cuMemGetAddressRange(&base, &size, (CUdeviceptr)(uintptr_t)pinned + 4999));
    assert_int_equal(base, (CUdeviceptr)(uintptr_t)pinned);
    assert_int_equal(size, 5000);
    CU_OK(cuMemGetAddressRange(&base, &size, dmapped + 1));
    assert_int_equal(base, dmapped);
    assert_int_equal(size, 300);
    unsigned char *reg = aligned_alloc(4096, 4096);
    assert_non_null(reg);
    CU_OK(cuMemHostRegister(reg, 4096, 0));
    CU_IS(cuMemGetAddressRange(&base, &size, (CUdeviceptr)(uintptr_t)reg), CUDA_ERROR_NOT_FOUND);
    CU_OK(cuMemHostUnregister(reg));
    free(reg);
    CU_OK(cuMemFreeHost(pinned));
    CU_OK(cuMemFreeHost(mapped));
    CU_IS(cuMemGetAddressRange(&base, &size, (CUdeviceptr)(uintptr_t)pinned), CUDA_ERROR_NOT_FOUND);
}

static void *open_gate(void *gate)
{
    __atomic_store_n((uint32_t *)gate, 1, __ATOMIC_SEQ_CST);
    return NULL;
}

static void mem_free_waits_for_the_work_queued_on_its_memory(void **state)
{
    (void)state;
    cut_init(0);
    CUstream s;
    CU_OK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
    uint32_t *gate, *out;
    CU_OK(cuMemAllocHost((void **)&gate, 64));
    CU_OK(cuMemAllocHost((void **)&out, 64));
    gate[0] = 0;
    out[0] = 0;
    CUdeviceptr dev;
    CU_OK(cuMemAlloc(&dev, 64));
    /* The stream holds until the gate opens; then it fills dev and copies it out. */
    CU_OK(cuStreamWaitValue32(s, (CUdeviceptr)(uintptr_t)gate, 1, CU_STREAM_WAIT_VALUE_EQ));
    CU_OK(cuMemsetD32Async(dev, 0xfab, 16, s));
    CU_OK(cuMemcpyDtoHAsync(out, dev, 64, s));
    pthread_t opener;
    assert_int_equal(pthread_create(&opener, NULL, open_gate, gate), 0);
    CU_OK(cuMemFree(dev)); /* waits for the stream's work: its memory is still there for it */
    assert_int_equal(__atomic_load_n(&out[15], __ATOMIC_SEQ_CST), 0xfab);
    assert_int_equal(pthread_join(opener, NULL), 0);
    CU_OK(cuStreamSynchronize(s));
    assert_int_equal(out[0], 0xfab);
    /* cuMemFreeHost waits the same way for work on pinned memory. */
    gate[0] = 0;
    CU_OK(cuStreamWaitValue32(s, (CUdeviceptr)(uintptr_t)gate, 1, CU_STREAM_WAIT_VALUE_EQ));
    CU_OK(cuMemsetD32Async((CUdeviceptr)(uintptr_t)out, 7, 16, s));
    assert_int_equal(pthread_create(&opener, NULL, open_gate, gate), 0);
    CU_OK(cuMemFreeHost(out)); /* after the memset ran: the stream ends clean */
    assert_int_equal(pthread_join(opener, NULL), 0);
    CU_OK(cuStreamSynchronize(s));
    CU_OK(cuMemFreeHost(gate));
    CU_OK(cuStreamDestroy(s));
}

static const struct CMUnitTest tests[] = {
    cmocka_unit_test(mem_free_waits_for_the_work_queued_on_its_memory),
    cmocka_unit_test(address_range_of_host_allocations_is_theirs_and_registrations_have_none),
    cmocka_unit_test(managed_memory_is_device_memory_the_host_reads_and_writes),
    cmocka_unit_test(mem_free_of_zero_succeeds_and_double_free_fails),
    cmocka_unit_test(mem_alloc_pitch_aligns_rows),
    cmocka_unit_test(copies_between_every_kind_of_memory),
    cmocka_unit_test(an_async_copy_from_pageable_memory_takes_it_at_the_call),
    cmocka_unit_test(memsets_reach_device_and_page_locked_memory_only),
    cmocka_unit_test(a_memset_of_zeros_gives_shared_memorys_pages_back_and_keeps_the_rest),
    cmocka_unit_test(host_registration_rules),
    cmocka_unit_test(pointer_attributes_of_each_kind_of_memory),
    cmocka_unit_test(buffer_ids_are_unique_and_never_reused),
    cmocka_unit_test(mem_get_info_counts_mem_alloc),
    cmocka_unit_test(copy_2d_moves_rows_between_pitches),
    cmocka_unit_test(copy_3d_moves_a_box_between_layouts),
    cmocka_unit_test(context_push_and_pop),
    cmocka_unit_test(ctx_get_device_at_13000_honours_its_context),
    cmocka_unit_test(peer_copy_between_contexts_of_two_devices),
    cmocka_unit_test(proc_address_gives_the_per_thread_abi_when_asked),
};

FAB_TEST_MAIN_NO_HELPERS("cuda", tests)
