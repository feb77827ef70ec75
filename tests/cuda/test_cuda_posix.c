/* POSIX_FILE_DESCRIPTOR sharing between processes, against cuda.h only: the
 * exporter's fd travels over a Unix socket with SCM_RIGHTS, the importer
 * imports it by value ((void *)(uintptr_t)fd) and maps the same pages. No
 * daemon is involved. The helper is this binary re-run (fab_test_spawn). */
#include "cuda_test.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#define PATTERN_BYTES 8192
#define SIZE_SEALS (F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL)

/* helper "importer": receive an fd, import it, check the pattern, write a
 * reply at offset 1 MiB, tear down in the driver's order, say "done". */
static int helper_importer(int argc, char **argv, int sock)
{
    (void)argc;
    (void)argv;
    CUT_HELPER_READY(sock);
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

/* helper "reopener": drop to uid/gid 65534, receive an exported fd, try to
 * reopen it through /proc/self/fd with read-write access and with read
 * access, then import it and read byte 0; say "refused" or "reopened", then
 * the byte's value as a word. */
static int helper_reopener(int argc, char **argv, int sock)
{
    (void)argc;
    (void)argv;
    if (setgid(65534) != 0 || setuid(65534) != 0)
        return 9;
    CUT_HELPER_READY(sock);
    int fd = fab_test_recv_fd(sock);
    if (fd < 0)
        return 14;
    char path[64];
    snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
    int rw = open(path, O_RDWR | O_CLOEXEC);
    int ro = open(path, O_RDONLY | O_CLOEXEC);
    const char *verdict = rw < 0 && ro < 0 ? "refused" : "reopened";
    if (rw >= 0)
        close(rw);
    if (ro >= 0)
        close(ro);
    if (fab_test_send_word(sock, verdict) != 0)
        return 15;
    /* What the descriptor itself carries still works for another user. */
    CUmemGenericAllocationHandle h;
    HELPER_CU(cuMemImportFromShareableHandle(&h, (void *)(uintptr_t)fd,
                                             CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR), 16);
    close(fd);
    size_t size = 2u << 20;
    CUdeviceptr ptr;
    HELPER_CU(cuMemAddressReserve(&ptr, size, 0, 0, 0), 17);
    HELPER_CU(cuMemMap(ptr, size, 0, h, 0), 18);
    CUmemAccessDesc d = cut_access(0, CU_MEM_ACCESS_FLAGS_PROT_READ);
    HELPER_CU(cuMemSetAccess(ptr, size, &d, 1), 19);
    unsigned char b = 0;
    HELPER_CU(cuMemcpyDtoH(&b, ptr, 1), 20);
    HELPER_CU(cuMemUnmap(ptr, size), 21);
    HELPER_CU(cuMemRelease(h), 22);
    HELPER_CU(cuMemAddressFree(ptr, size), 23);
    char word[8];
    snprintf(word, sizeof(word), "%u", b);
    return fab_test_send_word(sock, word) == 0 ? 0 : 24;
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

/* The descriptors open in this process, as a bit set over 0..1023. */
static void open_fds(bool out[1024])
{
    memset(out, 0, 1024 * sizeof(bool));
    DIR *dir = opendir("/proc/self/fd");
    assert_non_null(dir);
    int self = dirfd(dir);
    struct dirent *e;
    while ((e = readdir(dir)) != NULL) {
        int fd = atoi(e->d_name);
        if (e->d_name[0] != '.' && fd != self && fd >= 0 && fd < 1024)
            out[fd] = true;
    }
    closedir(dir);
}

/* Sealed when made, not when first exported: the memory never exists
 * unsealed, and its mode lets nobody reopen it by path. */
static void allocations_are_sealed_from_the_start(void **state)
{
    (void)state;
    cut_init(0);
    bool before[1024], after[1024];
    open_fds(before);
    CUmemAllocationProp prop = cut_prop(CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0);
    CUmemGenericAllocationHandle h;
    CU_OK(cuMemCreate(&h, 2u << 20, &prop, 0));
    open_fds(after);
    int found = 0;
    for (int fd = 0; fd < 1024; fd++) {
        if (!after[fd] || before[fd])
            continue;
        found++;
        assert_int_equal(fcntl(fd, F_GET_SEALS), SIZE_SEALS);
        struct stat st;
        assert_int_equal(fstat(fd, &st), 0);
        assert_int_equal(st.st_mode & 07777, 0400); /* its owner's read, for nobody else */
    }
    assert_int_equal(found, 1); /* the allocation's memfd */
    CU_OK(cuMemRelease(h));
}

static void exported_fd_is_size_sealed(void **state)
{
    (void)state;
    CUmemGenericAllocationHandle h;
    int fd;
    CUdeviceptr ptr = export_pattern(&h, &fd);
    assert_int_equal(fcntl(fd, F_GET_SEALS), SIZE_SEALS);
    errno = 0;
    assert_int_equal(ftruncate(fd, 1u << 20), -1);
    assert_int_equal(errno, EPERM);
    errno = 0;
    assert_int_equal(ftruncate(fd, 4u << 20), -1);
    assert_int_equal(errno, EPERM);
    /* F_SEAL_SEAL: no holder can add a write seal and stop the others. */
    errno = 0;
    assert_int_equal(fcntl(fd, F_ADD_SEALS, F_SEAL_WRITE), -1);
    assert_int_equal(errno, EPERM);
    struct stat st;
    assert_int_equal(fstat(fd, &st), 0);
    assert_int_equal(st.st_size, 2u << 20);
    close(fd);
    CU_OK(cuMemUnmap(ptr, 2u << 20));
    CU_OK(cuMemRelease(h));
    CU_OK(cuMemAddressFree(ptr, 2u << 20));
}

/* A receiver holds exactly the access its descriptor carries: it cannot
 * reopen /proc/self/fd/N for more. Root ignores file modes, so the check runs
 * in a helper that is another user. */
static void exported_fd_cannot_be_reopened(void **state)
{
    (void)state;
    if (getuid() != 0) {
        fprintf(stderr, "skipped: needs root to run the helper as uid 65534\n");
        fab_test_skip("needs root for uid 65534");
    }
    CUmemGenericAllocationHandle h;
    int fd;
    CUdeviceptr ptr = export_pattern(&h, &fd);
    fab_test_child_t child;
    assert_int_equal(fab_test_spawn("reopener", NULL, NULL, &child), 0);
    assert_int_equal(fab_test_expect_word(child.sock, "ready"), 0);
    assert_int_equal(fab_test_send_fd(child.sock, fd), 0);
    close(fd);
    assert_int_equal(fab_test_expect_word(child.sock, "refused"), 0);
    assert_int_equal(fab_test_expect_word(child.sock, "3"), 0); /* pattern byte 0 */
    assert_int_equal(fab_test_reap(&child), 0);
    CU_OK(cuMemUnmap(ptr, 2u << 20));
    CU_OK(cuMemRelease(h));
    CU_OK(cuMemAddressFree(ptr, 2u << 20));
}

static const struct CMUnitTest tests[] = {
    cmocka_unit_test(posix_fd_shares_memory_between_processes),
    cmocka_unit_test(posix_memory_outlives_the_exporters_handles),
    cmocka_unit_test(allocations_are_sealed_from_the_start),
    cmocka_unit_test(exported_fd_is_size_sealed),
    cmocka_unit_test(exported_fd_cannot_be_reopened),
};

static const fab_test_helper_t helpers[] = {
    {"importer", helper_importer},
    {"reopener", helper_reopener},
};

FAB_TEST_MAIN("cuda", tests, helpers)
