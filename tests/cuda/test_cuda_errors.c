/* Every row of docs/design.md's table of the driver's rules that one process can
 * show without a daemon, against cuda.h only: granularity, offset 0, a type
 * not requested at create, map then access, whole-range unmap, teardown order,
 * stale and forged generic handles, copies over unmapped or inaccessible
 * memory, and the POSIX fd's reference. The fabric rows (channels, stale,
 * forged and other-domain fabric handles) are in test_cuda_fabric.c. */
#include "cuda_test.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

static size_t g;

static CUmemGenericAllocationHandle create(unsigned types, size_t size)
{
    CUmemAllocationProp prop = cut_prop(types, 0);
    CUmemGenericAllocationHandle h = 0;
    CU_OK(cuMemCreate(&h, size, &prop, 0));
    return h;
}

static int setup(void **state)
{
    (void)state;
    cut_init(0);
    g = cut_granularity(0);
    return 0;
}

static void handle_type_values_are_cudas(void **state)
{
    (void)state;
    assert_int_equal(CU_MEM_HANDLE_TYPE_NONE, 0);
    assert_int_equal(CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 1);
    assert_int_equal(CU_MEM_HANDLE_TYPE_WIN32, 2);
    assert_int_equal(CU_MEM_HANDLE_TYPE_WIN32_KMT, 4);
    assert_int_equal(CU_MEM_HANDLE_TYPE_FABRIC, 8);
    assert_int_equal(sizeof(CUmemFabricHandle), 64);
    assert_int_equal(CU_MEM_ACCESS_FLAGS_PROT_NONE, 0);
    assert_int_equal(CU_MEM_ACCESS_FLAGS_PROT_READ, 1);
    assert_int_equal(CU_MEM_ACCESS_FLAGS_PROT_READWRITE, 3);
    assert_int_equal(CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED, 102);
    assert_int_equal(CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR_SUPPORTED, 103);
    assert_int_equal(CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_FABRIC_SUPPORTED, 128);
}

static void create_size_must_be_granular(void **state)
{
    (void)state;
    CUmemAllocationProp prop = cut_prop(0, 0);
    CUmemGenericAllocationHandle h;
    CU_IS(cuMemCreate(&h, 0, &prop, 0), CUDA_ERROR_INVALID_VALUE);
    CU_IS(cuMemCreate(&h, g / 2, &prop, 0), CUDA_ERROR_INVALID_VALUE);
    CU_IS(cuMemCreate(&h, g + 4096, &prop, 0), CUDA_ERROR_INVALID_VALUE);
    CU_IS(cuMemCreate(&h, g, &prop, 1), CUDA_ERROR_INVALID_VALUE);
    CU_IS(cuMemCreate(&h, g, NULL, 0), CUDA_ERROR_INVALID_VALUE);
    prop.location.id = 999;
    CU_IS(cuMemCreate(&h, g, &prop, 0), CUDA_ERROR_INVALID_DEVICE);
    prop = cut_prop(CU_MEM_HANDLE_TYPE_WIN32, 0);
    CU_IS(cuMemCreate(&h, g, &prop, 0), CUDA_ERROR_NOT_SUPPORTED);
}

static void map_address_size_offset_must_be_granular(void **state)
{
    (void)state;
    CUmemGenericAllocationHandle h = create(0, 2 * g);
    CUdeviceptr ptr;
    CU_OK(cuMemAddressReserve(&ptr, 4 * g, 0, 0, 0));
    CU_IS(cuMemMap(ptr + 4096, g, 0, h, 0), CUDA_ERROR_INVALID_VALUE);
    CU_IS(cuMemMap(ptr, g + 4096, 0, h, 0), CUDA_ERROR_INVALID_VALUE);
    CU_IS(cuMemMap(ptr, g, g, h, 0), CUDA_ERROR_INVALID_VALUE); /* offset must be 0 */
    CU_IS(cuMemMap(ptr, 4 * g, 0, h, 0), CUDA_ERROR_INVALID_VALUE); /* past the allocation */
    CU_IS(cuMemMap(ptr + 3 * g, 2 * g, 0, h, 0), CUDA_ERROR_INVALID_VALUE); /* past the range */
    CU_IS(cuMemMap(ptr, 2 * g, 0, h, 1), CUDA_ERROR_INVALID_VALUE);
    CU_OK(cuMemMap(ptr, 2 * g, 0, h, 0));
    CU_IS(cuMemMap(ptr + g, g, 0, h, 0), CUDA_ERROR_INVALID_VALUE); /* already mapped */
    CU_OK(cuMemUnmap(ptr, 2 * g));
    CU_OK(cuMemRelease(h));
    CU_OK(cuMemAddressFree(ptr, 4 * g));
}

static void export_of_a_type_not_requested_is_refused(void **state)
{
    (void)state;
    CUmemGenericAllocationHandle none = create(0, g);
    int fd = -1;
    CU_IS(cuMemExportToShareableHandle(&fd, none, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0),
          CUDA_ERROR_INVALID_VALUE);
    CUmemFabricHandle fh;
    CU_IS(cuMemExportToShareableHandle(&fh, none, CU_MEM_HANDLE_TYPE_FABRIC, 0),
          CUDA_ERROR_INVALID_VALUE);
    CUmemGenericAllocationHandle posix = create(CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, g);
    CU_IS(cuMemExportToShareableHandle(&fh, posix, CU_MEM_HANDLE_TYPE_FABRIC, 0),
          CUDA_ERROR_INVALID_VALUE);
    CU_OK(cuMemExportToShareableHandle(&fd, posix, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0));
    assert_true(fd >= 0);
    close(fd);
    CU_OK(cuMemRelease(none));
    CU_OK(cuMemRelease(posix));
}

/* In a child: read the first byte at ptr. */
static int child_reads(CUdeviceptr ptr)
{
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        volatile unsigned char b = *(volatile unsigned char *)(uintptr_t)ptr;
        (void)b;
        _exit(0);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

static void map_makes_nothing_accessible(void **state)
{
    (void)state;
    CUmemGenericAllocationHandle h = create(0, g);
    CUdeviceptr ptr;
    CU_OK(cuMemAddressReserve(&ptr, g, 0, 0, 0));
    CU_OK(cuMemMap(ptr, g, 0, h, 0));
    unsigned long long flags = 99;
    CUmemLocation loc = {.type = CU_MEM_LOCATION_TYPE_DEVICE, .id = 0};
    CU_OK(cuMemGetAccess(&flags, &loc, ptr));
    assert_int_equal(flags, CU_MEM_ACCESS_FLAGS_PROT_NONE);
    unsigned char byte = 0;
    CU_IS(cuMemcpyDtoH(&byte, ptr, 1), CUDA_ERROR_ILLEGAL_ADDRESS);
    CU_IS(cuMemsetD8(ptr, 1, 1), CUDA_ERROR_ILLEGAL_ADDRESS);
    assert_false(child_reads(ptr)); /* the page itself is PROT_NONE */
    CUmemAccessDesc ro = cut_access(0, CU_MEM_ACCESS_FLAGS_PROT_READ);
    CU_OK(cuMemSetAccess(ptr, g, &ro, 1));
    CU_OK(cuMemcpyDtoH(&byte, ptr, 1));
    assert_true(child_reads(ptr));
    CU_IS(cuMemsetD8(ptr, 1, 1), CUDA_ERROR_ILLEGAL_ADDRESS); /* read-only */
    /* Access for another device does not give this context's device any. */
    CUmemAccessDesc other = cut_access(1, CU_MEM_ACCESS_FLAGS_PROT_READWRITE);
    CU_OK(cuMemSetAccess(ptr, g, &other, 1));
    CU_IS(cuMemsetD8(ptr, 1, 1), CUDA_ERROR_ILLEGAL_ADDRESS);
    /* Unmap drops access: a new mapping starts with none. */
    CU_OK(cuMemUnmap(ptr, g));
    CU_OK(cuMemMap(ptr, g, 0, h, 0));
    CU_OK(cuMemGetAccess(&flags, &loc, ptr));
    assert_int_equal(flags, CU_MEM_ACCESS_FLAGS_PROT_NONE);
    CU_OK(cuMemUnmap(ptr, g));
    CU_OK(cuMemRelease(h));
    CU_OK(cuMemAddressFree(ptr, g));
}

static void set_access_needs_a_fully_mapped_range(void **state)
{
    (void)state;
    CUmemGenericAllocationHandle h = create(0, g);
    CUdeviceptr ptr;
    CU_OK(cuMemAddressReserve(&ptr, 2 * g, 0, 0, 0));
    CUmemAccessDesc d = cut_access(0, CU_MEM_ACCESS_FLAGS_PROT_READWRITE);
    CU_IS(cuMemSetAccess(ptr, g, &d, 1), CUDA_ERROR_INVALID_VALUE); /* nothing mapped */
    CU_OK(cuMemMap(ptr, g, 0, h, 0));
    CU_IS(cuMemSetAccess(ptr, 2 * g, &d, 1), CUDA_ERROR_INVALID_VALUE); /* half mapped */
    CU_IS(cuMemSetAccess(ptr, g, &d, 0), CUDA_ERROR_INVALID_VALUE);
    CUmemAccessDesc bad = cut_access(0, (CUmemAccess_flags)2);
    CU_IS(cuMemSetAccess(ptr, g, &bad, 1), CUDA_ERROR_INVALID_VALUE);
    CUmemAccessDesc nodev = cut_access(999, CU_MEM_ACCESS_FLAGS_PROT_READWRITE);
    CU_IS(cuMemSetAccess(ptr, g, &nodev, 1), CUDA_ERROR_INVALID_DEVICE);
    CU_OK(cuMemSetAccess(ptr, g, &d, 1));
    CU_OK(cuMemUnmap(ptr, g));
    CU_OK(cuMemRelease(h));
    CU_OK(cuMemAddressFree(ptr, 2 * g));
}

/* The page protection of the mapping holding ptr, as /proc/self/maps shows it
 * ("rw-s"); out must hold 5 bytes. */
static void page_perms(CUdeviceptr ptr, char *out)
{
    FILE *f = fopen("/proc/self/maps", "r");
    assert_non_null(f);
    char line[1024];
    out[0] = '\0';
    while (fgets(line, sizeof(line), f)) {
        uintptr_t lo, hi;
        char perms[5];
        if (sscanf(line, "%" SCNxPTR "-%" SCNxPTR " %4s", &lo, &hi, perms) == 3 &&
            (uintptr_t)ptr >= lo && (uintptr_t)ptr < hi) {
            memcpy(out, perms, 5);
            break;
        }
    }
    fclose(f);
    assert_true(out[0] != '\0');
}

static unsigned long long access_at(CUdeviceptr ptr)
{
    unsigned long long flags = 99;
    CUmemLocation loc = {.type = CU_MEM_LOCATION_TYPE_DEVICE, .id = 0};
    CU_OK(cuMemGetAccess(&flags, &loc, ptr));
    return flags;
}

/* A memfd of size bytes whose first byte is first. */
static int test_memfd(size_t size, unsigned char first)
{
    int fd = memfd_create("test", MFD_CLOEXEC | MFD_ALLOW_SEALING);
    assert_true(fd >= 0);
    assert_int_equal(ftruncate(fd, (off_t)size), 0);
    assert_int_equal(pwrite(fd, &first, 1, 0), 1);
    return fd;
}

static CUmemGenericAllocationHandle import_fd(int fd)
{
    CUmemGenericAllocationHandle h = 0;
    CU_OK(cuMemImportFromShareableHandle(&h, (void *)(uintptr_t)fd,
                                         CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR));
    return h;
}

/* An fd opened read-only cannot back a writable mapping: the upgrade is
 * refused up front, as for a fabric import granted read-only, and nothing
 * changes, so a copy into it is an error, not a fault. */
static void write_access_to_a_read_only_import_is_refused(void **state)
{
    (void)state;
    int rw = test_memfd(g, 0x77);
    char path[64];
    snprintf(path, sizeof(path), "/proc/self/fd/%d", rw);
    int ro = open(path, O_RDONLY | O_CLOEXEC);
    assert_true(ro >= 0);
    CUmemGenericAllocationHandle h = import_fd(ro);
    close(ro);
    close(rw);
    CUdeviceptr ptr;
    CU_OK(cuMemAddressReserve(&ptr, g, 0, 0, 0));
    CU_OK(cuMemMap(ptr, g, 0, h, 0));
    CUmemAccessDesc rwd = cut_access(0, CU_MEM_ACCESS_FLAGS_PROT_READWRITE);
    CUmemAccessDesc rod = cut_access(0, CU_MEM_ACCESS_FLAGS_PROT_READ);
    CU_IS(cuMemSetAccess(ptr, g, &rwd, 1), CUDA_ERROR_NOT_PERMITTED);
    assert_int_equal(access_at(ptr), CU_MEM_ACCESS_FLAGS_PROT_NONE);
    CU_OK(cuMemSetAccess(ptr, g, &rod, 1));
    unsigned char b = 0;
    CU_OK(cuMemcpyDtoH(&b, ptr, 1));
    assert_int_equal(b, 0x77);
    CU_IS(cuMemSetAccess(ptr, g, &rwd, 1), CUDA_ERROR_NOT_PERMITTED);
    assert_int_equal(access_at(ptr), CU_MEM_ACCESS_FLAGS_PROT_READ);
    char perms[5];
    page_perms(ptr, perms);
    assert_string_equal(perms, "r--s");
    b = 1;
    CU_IS(cuMemcpyHtoD(ptr, &b, 1), CUDA_ERROR_ILLEGAL_ADDRESS);
    CU_OK(cuMemcpyDtoH(&b, ptr, 1));
    assert_int_equal(b, 0x77);
    CU_OK(cuMemUnmap(ptr, g));
    CU_OK(cuMemRelease(h));
    CU_OK(cuMemAddressFree(ptr, g));
}

/* The generic case: mprotect fails part-way through a range (here on memory
 * write-sealed after it was imported, which no up-front check sees). The
 * pages already changed are put back and no recorded access changes. */
static void set_access_failing_part_way_changes_nothing(void **state)
{
    (void)state;
    int fd = test_memfd(g, 0x42);
    if (fcntl(fd, F_ADD_SEALS, F_SEAL_FUTURE_WRITE) != 0) {
        fprintf(stderr, "skipped: no F_SEAL_FUTURE_WRITE (Linux 5.1): %s\n", strerror(errno));
        close(fd);
        fab_test_skip("no F_SEAL_FUTURE_WRITE");
    }
    CUmemGenericAllocationHandle sealed = import_fd(fd);
    close(fd);
    CUmemGenericAllocationHandle plain = create(0, g);
    CUdeviceptr ptr;
    CU_OK(cuMemAddressReserve(&ptr, 2 * g, 0, 0, 0));
    /* The writable one first: a single mprotect over both changes it, then
     * fails on the sealed one. */
    CU_OK(cuMemMap(ptr, g, 0, plain, 0));
    CU_OK(cuMemMap(ptr + g, g, 0, sealed, 0));
    CUmemAccessDesc rod = cut_access(0, CU_MEM_ACCESS_FLAGS_PROT_READ);
    CUmemAccessDesc rwd = cut_access(0, CU_MEM_ACCESS_FLAGS_PROT_READWRITE);
    CU_OK(cuMemSetAccess(ptr, 2 * g, &rod, 1));
    CU_IS(cuMemSetAccess(ptr, 2 * g, &rwd, 1), CUDA_ERROR_NOT_PERMITTED);
    assert_int_equal(access_at(ptr), CU_MEM_ACCESS_FLAGS_PROT_READ);
    assert_int_equal(access_at(ptr + g), CU_MEM_ACCESS_FLAGS_PROT_READ);
    char perms[5];
    page_perms(ptr, perms);
    assert_string_equal(perms, "r--s");
    page_perms(ptr + g, perms);
    assert_string_equal(perms, "r--s");
    unsigned char b = 1;
    CU_IS(cuMemcpyHtoD(ptr, &b, 1), CUDA_ERROR_ILLEGAL_ADDRESS);
    CU_OK(cuMemcpyDtoH(&b, ptr + g, 1));
    assert_int_equal(b, 0x42);
    /* Several devices at once: device 1's grant must not survive either. */
    CUmemAccessDesc both[2] = {cut_access(0, CU_MEM_ACCESS_FLAGS_PROT_READ),
                               cut_access(1, CU_MEM_ACCESS_FLAGS_PROT_READWRITE)};
    CU_IS(cuMemSetAccess(ptr, 2 * g, both, 2), CUDA_ERROR_NOT_PERMITTED);
    unsigned long long flags = 99;
    CUmemLocation dev1 = {.type = CU_MEM_LOCATION_TYPE_DEVICE, .id = 1};
    CU_OK(cuMemGetAccess(&flags, &dev1, ptr));
    assert_int_equal(flags, CU_MEM_ACCESS_FLAGS_PROT_NONE);
    page_perms(ptr, perms);
    assert_string_equal(perms, "r--s");
    /* What the memory allows still works. */
    CU_OK(cuMemSetAccess(ptr, g, &rwd, 1));
    CU_OK(cuMemsetD8(ptr, 9, 1));
    CU_OK(cuMemUnmap(ptr, 2 * g));
    CU_OK(cuMemRelease(plain));
    CU_OK(cuMemRelease(sealed));
    CU_OK(cuMemAddressFree(ptr, 2 * g));
}

static void unmap_must_cover_whole_mappings(void **state)
{
    (void)state;
    CUmemGenericAllocationHandle h = create(0, 2 * g);
    CUdeviceptr ptr = cut_map_rw(h, 2 * g);
    CU_IS(cuMemUnmap(ptr, g), CUDA_ERROR_INVALID_VALUE);
    CU_IS(cuMemUnmap(ptr + g, g), CUDA_ERROR_INVALID_VALUE);
    CU_IS(cuMemUnmap(ptr, 3 * g), CUDA_ERROR_INVALID_VALUE);
    CU_OK(cuMemsetD8(ptr, 1, 2 * g)); /* still mapped, still accessible */
    CU_OK(cuMemUnmap(ptr, 2 * g));
    CU_IS(cuMemUnmap(ptr, 2 * g), CUDA_ERROR_INVALID_VALUE); /* nothing left */
    CU_OK(cuMemRelease(h));
    CU_OK(cuMemAddressFree(ptr, 2 * g));
}

static void teardown_order_unmap_before_address_free(void **state)
{
    (void)state;
    CUmemGenericAllocationHandle h = create(0, g);
    CUdeviceptr ptr = cut_map_rw(h, g);
    CU_OK(cuMemRelease(h)); /* a handle may go while its mapping lives */
    CU_IS(cuMemAddressFree(ptr, g), CUDA_ERROR_INVALID_VALUE);
    CU_OK(cuMemsetD8(ptr, 9, g));
    CU_OK(cuMemUnmap(ptr, g));
    CU_IS(cuMemAddressFree(ptr, 2 * g), CUDA_ERROR_INVALID_VALUE); /* not its size */
    CU_IS(cuMemAddressFree(ptr + g / 2, g), CUDA_ERROR_INVALID_VALUE);
    CU_OK(cuMemAddressFree(ptr, g));
    CU_IS(cuMemAddressFree(ptr, g), CUDA_ERROR_INVALID_VALUE);
}

static void stale_and_forged_generic_handles_are_refused(void **state)
{
    (void)state;
    CUmemGenericAllocationHandle h = create(CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, g);
    CU_OK(cuMemRelease(h));
    CUdeviceptr ptr;
    CU_OK(cuMemAddressReserve(&ptr, g, 0, 0, 0));
    CU_IS(cuMemMap(ptr, g, 0, h, 0), CUDA_ERROR_INVALID_VALUE);
    CU_IS(cuMemRelease(h), CUDA_ERROR_INVALID_VALUE);
    int fd;
    CU_IS(cuMemExportToShareableHandle(&fd, h, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0),
          CUDA_ERROR_INVALID_VALUE);
    CUmemAllocationProp prop;
    CU_IS(cuMemGetAllocationPropertiesFromHandle(&prop, h), CUDA_ERROR_INVALID_VALUE);
    const CUmemGenericAllocationHandle forged = 0x123456789abcdefull;
    CU_IS(cuMemMap(ptr, g, 0, forged, 0), CUDA_ERROR_INVALID_VALUE);
    CU_IS(cuMemRelease(forged), CUDA_ERROR_INVALID_VALUE);
    CUmemGenericAllocationHandle out;
    CU_IS(cuMemRetainAllocationHandle(&out, (void *)(uintptr_t)ptr), CUDA_ERROR_INVALID_VALUE);
    CU_OK(cuMemAddressFree(ptr, g));
}

static void copies_check_the_whole_range(void **state)
{
    (void)state;
    CUmemGenericAllocationHandle h = create(0, g);
    CUdeviceptr ptr;
    CU_OK(cuMemAddressReserve(&ptr, 2 * g, 0, 0, 0));
    CU_OK(cuMemMap(ptr, g, 0, h, 0));
    CUmemAccessDesc d = cut_access(0, CU_MEM_ACCESS_FLAGS_PROT_READWRITE);
    CU_OK(cuMemSetAccess(ptr, g, &d, 1));
    unsigned char *buf = calloc(1, 2 * g);
    CU_OK(cuMemcpyHtoD(ptr, buf, g));
    CU_IS(cuMemcpyHtoD(ptr, buf, g + 1), CUDA_ERROR_INVALID_VALUE); /* runs off the mapping */
    CU_IS(cuMemcpyDtoH(buf, ptr + g, 16), CUDA_ERROR_INVALID_VALUE); /* reserved, unmapped */
    CU_IS(cuMemsetD32(ptr + g - 4, 0, 2), CUDA_ERROR_INVALID_VALUE);
    CU_IS(cuMemsetD32(ptr + 2, 0, 1), CUDA_ERROR_INVALID_VALUE); /* misaligned */
    CU_IS(cuMemcpyDtoD(ptr + g, ptr, 16), CUDA_ERROR_INVALID_VALUE);
    CU_IS(cuMemcpyHtoD((CUdeviceptr)(uintptr_t)buf, buf + 8, 8), CUDA_ERROR_INVALID_VALUE);
    CU_IS(cuMemcpyHtoD(0, buf, 8), CUDA_ERROR_INVALID_VALUE);
    CU_OK(cuMemcpyHtoD(ptr, buf, 0));
    CU_OK(cuMemUnmap(ptr, g));
    CU_IS(cuMemcpyHtoD(ptr, buf, 16), CUDA_ERROR_INVALID_VALUE); /* unmapped now */
    /* Without a current context. */
    CU_OK(cuMemMap(ptr, g, 0, h, 0));
    CU_OK(cuMemSetAccess(ptr, g, &d, 1));
    CU_OK(cuCtxSetCurrent(NULL));
    CU_IS(cuMemcpyHtoD(ptr, buf, 16), CUDA_ERROR_INVALID_CONTEXT);
    CU_OK(cuMemUnmap(ptr, g));
    CU_OK(cuMemRelease(h));
    CU_OK(cuMemAddressFree(ptr, 2 * g));
    free(buf);
}

static void posix_fd_holds_a_reference(void **state)
{
    (void)state;
    CUmemGenericAllocationHandle h = create(CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, g);
    CUdeviceptr a = cut_map_rw(h, g);
    CU_OK(cuMemsetD32(a, 0x600dd00du, 1));
    int fd = -1;
    CU_OK(cuMemExportToShareableHandle(&fd, h, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0));
    CU_OK(cuMemRelease(h));
    cut_unmap_free(a, g);
    /* Every handle and mapping is gone; the fd still holds the memory. */
    CUmemGenericAllocationHandle back;
    CU_OK(cuMemImportFromShareableHandle(&back, (void *)(uintptr_t)fd,
                                         CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR));
    close(fd);
    CUdeviceptr b = cut_map_rw(back, g);
    uint32_t v = 0;
    CU_OK(cuMemcpyDtoH(&v, b, 4));
    assert_int_equal(v, 0x600dd00du);
    CU_OK(cuMemRelease(back));
    cut_unmap_free(b, g);
}

static void posix_import_of_a_bad_fd_is_refused(void **state)
{
    (void)state;
    CUmemGenericAllocationHandle h;
    CU_IS(cuMemImportFromShareableHandle(&h, (void *)(uintptr_t)-1,
                                         CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR),
          CUDA_ERROR_INVALID_VALUE);
    int p[2];
    assert_int_equal(pipe(p), 0);
    CU_IS(cuMemImportFromShareableHandle(&h, (void *)(uintptr_t)p[0],
                                         CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR),
          CUDA_ERROR_INVALID_HANDLE);
    close(p[0]);
    close(p[1]);
    CU_IS(cuMemImportFromShareableHandle(&h, (void *)(uintptr_t)p[0],
                                         CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR),
          CUDA_ERROR_INVALID_VALUE);
    CU_IS(cuMemImportFromShareableHandle(&h, NULL, CU_MEM_HANDLE_TYPE_FABRIC),
          CUDA_ERROR_INVALID_VALUE);
    CU_IS(cuMemImportFromShareableHandle(&h, NULL, CU_MEM_HANDLE_TYPE_WIN32),
          CUDA_ERROR_INVALID_VALUE);
}

static void reserve_checks_its_arguments(void **state)
{
    (void)state;
    CUdeviceptr ptr;
    CU_IS(cuMemAddressReserve(&ptr, 0, 0, 0, 0), CUDA_ERROR_INVALID_VALUE);
    CU_IS(cuMemAddressReserve(&ptr, 100, 0, 0, 0), CUDA_ERROR_INVALID_VALUE);
    CU_IS(cuMemAddressReserve(&ptr, g, 3 * g, 0, 0), CUDA_ERROR_INVALID_VALUE);
    CU_IS(cuMemAddressReserve(&ptr, g, 0, 0, 1), CUDA_ERROR_INVALID_VALUE);
    CU_OK(cuMemAddressReserve(&ptr, g, 4 * g, 0, 0));
    assert_int_equal(ptr % (4 * g), 0);
    CU_OK(cuMemAddressFree(ptr, g));
}

static const struct CMUnitTest tests[] = {
    cmocka_unit_test_setup(handle_type_values_are_cudas, setup),
    cmocka_unit_test_setup(create_size_must_be_granular, setup),
    cmocka_unit_test_setup(map_address_size_offset_must_be_granular, setup),
    cmocka_unit_test_setup(export_of_a_type_not_requested_is_refused, setup),
    cmocka_unit_test_setup(map_makes_nothing_accessible, setup),
    cmocka_unit_test_setup(set_access_needs_a_fully_mapped_range, setup),
    cmocka_unit_test_setup(write_access_to_a_read_only_import_is_refused, setup),
    cmocka_unit_test_setup(set_access_failing_part_way_changes_nothing, setup),
    cmocka_unit_test_setup(unmap_must_cover_whole_mappings, setup),
    cmocka_unit_test_setup(teardown_order_unmap_before_address_free, setup),
    cmocka_unit_test_setup(stale_and_forged_generic_handles_are_refused, setup),
    cmocka_unit_test_setup(copies_check_the_whole_range, setup),
    cmocka_unit_test_setup(posix_fd_holds_a_reference, setup),
    cmocka_unit_test_setup(posix_import_of_a_bad_fd_is_refused, setup),
    cmocka_unit_test_setup(reserve_checks_its_arguments, setup),
};

FAB_TEST_MAIN_NO_HELPERS("cuda", tests)
