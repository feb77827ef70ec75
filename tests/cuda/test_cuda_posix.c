/* POSIX_FILE_DESCRIPTOR sharing between processes, against cuda.h only: the
 * exporter's fd travels over a Unix socket with SCM_RIGHTS, the importer
 * imports it by value ((void *)(uintptr_t)fd) and maps the same pages. No
 * daemon is involved. The helper is this binary re-run (fab_test_spawn). */
#include "cuda_test.h"

#include <stdlib.h>
#include <unistd.h>

#define PATTERN_BYTES 8192

/* helper "importer": receive an fd, import it, check the pattern, write a
 * reply at offset 1 MiB, tear down in the driver's order, say "done". */
static int helper_importer(int argc, char **argv, int sock)
{
    (void)argc;
    (void)argv;
    HELPER_CU(cuInit(0), 10);
    CUcontext ctx;
    HELPER_CU(cuDevicePrimaryCtxRetain(&ctx, 0), 11);
    HELPER_CU(cuCtxSetCurrent(ctx), 12);
    if (fab_test_send_word(sock, "ready") != 0)
        return 13;
    int fd = fab_test_recv_fd(sock);
    if (fd < 0)
        return 14;
    if (fab_test_expect_word(sock, "go") != 0)
        return 15;
    CUmemGenericAllocationHandle h;
    HELPER_CU(cuMemImportFromShareableHandle(&h, (void *)(uintptr_t)fd,
                                             CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR), 16);
    close(fd); /* the driver keeps its own reference */
    CUmemAllocationProp prop;
    HELPER_CU(cuMemGetAllocationPropertiesFromHandle(&prop, h), 17);
    size_t size = 2u << 20;
    CUdeviceptr ptr;
    HELPER_CU(cuMemAddressReserve(&ptr, size, 0, 0, 0), 18);
    HELPER_CU(cuMemMap(ptr, size, 0, h, 0), 19);
    CUmemAccessDesc d = cut_access(0, CU_MEM_ACCESS_FLAGS_PROT_READWRITE);
    HELPER_CU(cuMemSetAccess(ptr, size, &d, 1), 20);
    unsigned char buf[PATTERN_BYTES];
    HELPER_CU(cuMemcpyDtoH(buf, ptr, sizeof(buf)), 21);
    for (size_t i = 0; i < sizeof(buf); i++) {
        if (buf[i] != (unsigned char)(i * 7 + 3))
            return 22;
    }
    static const char reply[] = "reply from the importer";
    HELPER_CU(cuMemcpyHtoD(ptr + (1u << 20), reply, sizeof(reply)), 23);
    HELPER_CU(cuMemUnmap(ptr, size), 24);
    HELPER_CU(cuMemRelease(h), 25);
    HELPER_CU(cuMemAddressFree(ptr, size), 26);
    return fab_test_send_word(sock, "done") == 0 ? 0 : 27;
}

static CUdeviceptr export_pattern(CUmemGenericAllocationHandle *h_out, int *fd_out)
{
    cut_init(0);
    size_t size = 2u << 20;
    CUmemAllocationProp prop = cut_prop(CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0);
    CU_OK(cuMemCreate(h_out, size, &prop, 0));
    CUdeviceptr ptr = cut_map_rw(*h_out, size);
    unsigned char buf[PATTERN_BYTES];
    for (size_t i = 0; i < sizeof(buf); i++)
        buf[i] = (unsigned char)(i * 7 + 3);
    CU_OK(cuMemcpyHtoD(ptr, buf, sizeof(buf)));
    CU_OK(cuMemExportToShareableHandle(fd_out, *h_out, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0));
    return ptr;
}

static void posix_fd_shares_memory_between_processes(void **state)
{
    (void)state;
    CUmemGenericAllocationHandle h;
    int fd;
    CUdeviceptr ptr = export_pattern(&h, &fd);
    fab_test_child_t child;
    assert_int_equal(fab_test_spawn("importer", NULL, NULL, &child), 0);
    assert_int_equal(fab_test_expect_word(child.sock, "ready"), 0);
    assert_int_equal(fab_test_send_fd(child.sock, fd), 0);
    close(fd);
    assert_int_equal(fab_test_send_word(child.sock, "go"), 0);
    assert_int_equal(fab_test_expect_word(child.sock, "done"), 0);
    assert_int_equal(fab_test_reap(&child), 0);
    char reply[32] = {0};
    CU_OK(cuMemcpyDtoH(reply, ptr + (1u << 20), 24));
    assert_string_equal(reply, "reply from the importer");
    CU_OK(cuMemUnmap(ptr, 2u << 20));
    CU_OK(cuMemRelease(h));
    CU_OK(cuMemAddressFree(ptr, 2u << 20));
}

static void posix_memory_outlives_the_exporters_handles(void **state)
{
    (void)state;
    CUmemGenericAllocationHandle h;
    int fd;
    CUdeviceptr ptr = export_pattern(&h, &fd);
    fab_test_child_t child;
    assert_int_equal(fab_test_spawn("importer", NULL, NULL, &child), 0);
    assert_int_equal(fab_test_expect_word(child.sock, "ready"), 0);
    assert_int_equal(fab_test_send_fd(child.sock, fd), 0);
    close(fd);
    /* The exporter lets go of everything before the peer imports: the fd in
     * flight holds the memory (DESIGN: "a POSIX fd does hold a reference"). */
    CU_OK(cuMemUnmap(ptr, 2u << 20));
    CU_OK(cuMemRelease(h));
    CU_OK(cuMemAddressFree(ptr, 2u << 20));
    assert_int_equal(fab_test_send_word(child.sock, "go"), 0);
    assert_int_equal(fab_test_expect_word(child.sock, "done"), 0);
    assert_int_equal(fab_test_reap(&child), 0);
}

static const struct CMUnitTest tests[] = {
    cmocka_unit_test(posix_fd_shares_memory_between_processes),
    cmocka_unit_test(posix_memory_outlives_the_exporters_handles),
};

static const fab_test_helper_t helpers[] = {
    {"importer", helper_importer},
};

FAB_TEST_MAIN("cuda", tests, helpers)
