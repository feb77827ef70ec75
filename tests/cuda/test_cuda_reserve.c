/* Freed reservations (docs/cuda.md, "Performance of an import"):
 * cuMemAddressFree keeps the last few freed ranges as address space for the
 * next cuMemAddressReserve of their size, and these tests hold it to what a
 * freed range must still be: found by no call, holding no memory, faulting
 * when touched, given up when its address is asked for by name, and few.
 * They look at the process's own address space, which is where fabmem's
 * device addresses live. */
#include "cuda_test.h"

#include <signal.h>
#include <stdbool.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

/* Whether /proc/self/maps shows a mapping overlapping [addr, addr+len):
 * any (files false), or only of a file (a memfd: an allocation's memory).
 * The kernel's own list, which a probe by mmap under valgrind is not. */
static bool maps_show(uintptr_t addr, size_t len, bool files)
{
    FILE *f = fopen("/proc/self/maps", "r");
    assert_non_null(f);
    char line[512];
    bool found = false;
    while (fgets(line, sizeof(line), f)) {
        unsigned long lo, hi, ino;
        if (sscanf(line, "%lx-%lx %*s %*s %*s %lu", &lo, &hi, &ino) == 3 && lo < addr + len &&
            addr < hi && (!files || ino != 0))
            found = true;
    }
    fclose(f);
    return found;
}

static bool mapped(uintptr_t addr, size_t len)
{
    return maps_show(addr, len, false);
}

static bool file_mapped(uintptr_t addr, size_t len)
{
    return maps_show(addr, len, true);
}

static void write_read(CUdeviceptr ptr, size_t size)
{
    unsigned char out[64], in[64];
    memset(out, 0x5a, sizeof(out));
    CU_OK(cuMemcpyHtoD(ptr + size - sizeof(out), out, sizeof(out)));
    CU_OK(cuMemcpyDtoH(in, ptr + size - sizeof(out), sizeof(in)));
    assert_memory_equal(in, out, sizeof(out));
}

/* The cycle pools and importers repeat: a range freed and one of its size
 * reserved again is the same address space, and works as a new one. */
static void a_freed_range_of_the_same_size_is_reserved_again(void **state)
{
    (void)state;
    cut_init(0);
    size_t g = cut_granularity(0);
    CUmemGenericAllocationHandle h = cut_create_posix(g, 0);
    CUdeviceptr first = cut_map_rw(h, g);
    write_read(first, g);
    cut_unmap_free(first, g);
    CUdeviceptr again = cut_map_rw(h, g);
    assert_int_equal(again, first);
    write_read(again, g);
    cut_unmap_free(again, g);
    CU_OK(cuMemRelease(h));
}

/* A kept range is found by no call: freeing, mapping or asking about it is
 * answered as for any freed range. */
static void a_freed_range_answers_as_freed(void **state)
{
    (void)state;
    cut_init(0);
    size_t g = cut_granularity(0);
    CUmemGenericAllocationHandle h = cut_create_posix(g, 0);
    CUdeviceptr ptr;
    CU_OK(cuMemAddressReserve(&ptr, g, 0, 0, 0));
    CU_OK(cuMemAddressFree(ptr, g));
    CU_IS(cuMemAddressFree(ptr, g), CUDA_ERROR_INVALID_VALUE);
    CU_IS(cuMemMap(ptr, g, 0, h, 0), CUDA_ERROR_INVALID_VALUE);
    CUdeviceptr start = 0;
    CU_IS(cuPointerGetAttribute(&start, CU_POINTER_ATTRIBUTE_RANGE_START_ADDR, ptr),
          CUDA_ERROR_INVALID_VALUE);
    unsigned char byte = 0;
    CU_IS(cuMemcpyHtoD(ptr, &byte, 1), CUDA_ERROR_INVALID_VALUE);
    CU_OK(cuMemRelease(h));
}

/* Its pages are gone with the unmap: nothing of the allocation is mapped
 * there, the memory is freed with the last handle, and a touch faults. */
static void a_freed_range_holds_no_memory_and_faults_when_touched(void **state)
{
    (void)state;
    cut_init(0);
    size_t g = cut_granularity(0);
    CUmemGenericAllocationHandle h = cut_create_posix(g, 0);
    CUdeviceptr ptr = cut_map_rw(h, g);
    write_read(ptr, g);
    assert_true(file_mapped(ptr, g));
    cut_unmap_free(ptr, g);
    CU_OK(cuMemRelease(h));
    assert_false(file_mapped(ptr, g));
    pid_t child = fork();
    assert_true(child >= 0);
    if (child == 0) {
        signal(SIGSEGV, SIG_DFL);
        *(volatile unsigned char *)(uintptr_t)ptr = 1;
        _exit(0); /* not reached: the touch faults */
    }
    int status = 0;
    assert_int_equal(waitpid(child, &status, 0), child);
    assert_true(WIFSIGNALED(status));
    assert_int_equal(WTERMSIG(status), SIGSEGV);
}

/* A reserve that names the address of a kept range of another size gets
 * that address: the kept range gives way. */
static void an_address_asked_for_by_name_is_had_though_a_freed_range_held_it(void **state)
{
    (void)state;
    cut_init(0);
    size_t g = cut_granularity(0);
    CUdeviceptr big;
    CU_OK(cuMemAddressReserve(&big, 4 * g, 0, 0, 0));
    CU_OK(cuMemAddressFree(big, 4 * g));
    CUdeviceptr named;
    CU_OK(cuMemAddressReserve(&named, g, 0, big + g, 0));
    assert_int_equal(named, big + g);
    CU_OK(cuMemAddressFree(named, g));
    CU_OK(cuMemAddressReserve(&named, 2 * g, 0, big, 0));
    assert_int_equal(named, big);
    CU_OK(cuMemAddressFree(named, 2 * g));
}

/* Few are kept: of sixteen ranges freed at most eight still hold their
 * address space, and a range larger than 4 GiB is given back at once. */
static void few_freed_ranges_keep_their_address_space(void **state)
{
    (void)state;
    cut_init(0);
    size_t g = cut_granularity(0);
    enum { N = 16 };
    CUdeviceptr ptrs[N];
    for (int i = 0; i < N; i++)
        CU_OK(cuMemAddressReserve(&ptrs[i], g, 0, 0, 0));
    for (int i = 0; i < N; i++)
        CU_OK(cuMemAddressFree(ptrs[i], g));
    int held = 0;
    for (int i = 0; i < N; i++)
        held += mapped(ptrs[i], g);
    assert_true(held <= 8);
    size_t huge = ((size_t)8 << 30);
    CUdeviceptr big;
    CU_OK(cuMemAddressReserve(&big, huge, 0, 0, 0));
    assert_true(mapped(big, huge));
    CU_OK(cuMemAddressFree(big, huge));
    assert_false(mapped(big, huge));
}

static const struct CMUnitTest tests[] = {
    cmocka_unit_test(a_freed_range_of_the_same_size_is_reserved_again),
    cmocka_unit_test(a_freed_range_answers_as_freed),
    cmocka_unit_test(a_freed_range_holds_no_memory_and_faults_when_touched),
    cmocka_unit_test(an_address_asked_for_by_name_is_had_though_a_freed_range_held_it),
    cmocka_unit_test(few_freed_ranges_keep_their_address_space),
};

FAB_TEST_MAIN_NO_HELPERS("cuda", tests)
