/* The model, end to end, across a real process boundary: the exporter
 * allocates and exports, the 64 handle bytes travel through a pipe to a child
 * process, which decodes, imports and maps them; then each refusal the model
 * makes is shown once. Every step prints what it did and what it got. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fabmem.h"

static int step(const char *what, fab_status_t got, fab_status_t want)
{
    printf("  %-52s -> %s%s\n", what, fab_status_name(got),
           got == want ? "" : "   (UNEXPECTED)");
    return got == want ? 0 : 1;
}

static void print_uuid(const char *label, fab_uuid_t uuid)
{
    printf("  %s ", label);
    for (int i = 0; i < 16; i++)
        printf("%02x", uuid.bytes[i]);
    printf("\n");
}

static int importer_process(int rfd)
{
    uint8_t wire[FAB_HANDLE_BYTES];
    size_t got = 0;
    while (got < sizeof(wire)) {
        ssize_t n = read(rfd, wire + got, sizeof(wire) - got);
        if (n <= 0)
            return 1;
        got += (size_t)n;
    }
    printf("[importer pid %d] received %zu bytes\n", (int)getpid(), got);
    int bad = 0;
    fab_handle_t handle;
    bad |= step("fab_handle_from_bytes", fab_handle_from_bytes(wire, got, &handle), FAB_SUCCESS);
    fab_importer_t *importer = NULL;
    bad |= step("fab_importer_create(device 1)", fab_importer_create(1, &importer), FAB_SUCCESS);
    fab_import_t import;
    bad |= step("fab_importer_import", fab_importer_import(importer, &handle, &import), FAB_SUCCESS);
    print_uuid("same allocation, uuid", fab_import_uuid(&import));
    printf("  import handle %llu, %zu bytes, device %d\n", (unsigned long long)fab_import_handle(&import),
           fab_import_size(&import), fab_import_device_ordinal(&import));
    bad |= step("fab_import_map_writable", fab_import_map_writable(&import), FAB_SUCCESS);

    printf("[importer] refusals:\n");
    uint8_t tampered[FAB_HANDLE_BYTES];
    memcpy(tampered, wire, sizeof(tampered));
    tampered[24] ^= 0x01;
    fab_handle_t ignored;
    bad |= step("one size bit flipped in transit", fab_handle_from_bytes(tampered, 64, &ignored),
                FAB_ERROR_INVALID_HANDLE);
    bad |= step("only 32 of the 64 bytes", fab_handle_from_bytes(wire, 32, &ignored),
                FAB_ERROR_INVALID_VALUE);
    fab_importer_set_reachable(importer, false);
    bad |= step("import onto a device with no fabric path",
                fab_importer_import(importer, &handle, &import), FAB_ERROR_NOT_SUPPORTED);
    fab_importer_destroy(importer);
    return bad;
}

int main(void)
{
    int bad = 0;
    const fab_uuid_t uuid = {{0xfa, 0xb0, 0x00, 0x01, 0xde, 0xad, 0xbe, 0xef,
                              0x10, 0x20, 0x30, 0x40, 0x50, 0x60, 0x70, 0x80}};
    printf("[exporter pid %d]\n", (int)getpid());
    fab_alloc_props_t props = fab_alloc_props_read_write(0, (size_t)2 << 20);
    fab_memory_t *memory = NULL;
    bad |= step("fab_memory_allocate(device 0, 2 MiB, read-write)",
                fab_memory_allocate(1, uuid, &props, &memory), FAB_SUCCESS);
    if (memory == NULL)
        return 1;
    fab_handle_t handle;
    bad |= step("fab_memory_export", fab_memory_export(memory, &handle), FAB_SUCCESS);
    printf("  export count %u\n", fab_memory_export_count(memory));

    int fds[2];
    if (pipe(fds) != 0)
        return 1;
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        close(fds[1]);
        int rc = importer_process(fds[0]);
        fflush(stdout);
        _exit(rc);
    }
    close(fds[0]);
    printf("  shipping the 64 bytes through a pipe to pid %d\n", (int)pid);
    fflush(stdout);
    bad |= write(fds[1], handle.bytes, sizeof(handle.bytes)) != (ssize_t)sizeof(handle.bytes);
    close(fds[1]);
    int status = 0;
    waitpid(pid, &status, 0);
    bad |= !WIFEXITED(status) || WEXITSTATUS(status) != 0;

    printf("[exporter] lifetime:\n");
    bad |= step("fab_memory_release with an export outstanding", fab_memory_release(memory),
                FAB_ERROR_ILLEGAL_STATE);
    bad |= step("fab_memory_retire_export", fab_memory_retire_export(memory), FAB_SUCCESS);
    bad |= step("fab_memory_retire_export again", fab_memory_retire_export(memory),
                FAB_ERROR_ILLEGAL_STATE);
    bad |= step("fab_memory_release", fab_memory_release(memory), FAB_SUCCESS);
    bad |= step("fab_memory_export after release", fab_memory_export(memory, &handle),
                FAB_ERROR_INVALID_HANDLE);
    fab_memory_destroy(memory);

    props.peer_access = FAB_ACCESS_READ_ONLY;
    bad |= step("fab_memory_allocate(read-only grant)", fab_memory_allocate(2, uuid, &props, &memory),
                FAB_SUCCESS);
    bad |= step("fab_memory_export", fab_memory_export(memory, &handle), FAB_SUCCESS);
    fab_importer_t *importer = NULL;
    fab_import_t import;
    bad |= step("fab_importer_create(device 2)", fab_importer_create(2, &importer), FAB_SUCCESS);
    bad |= step("fab_importer_import", fab_importer_import(importer, &handle, &import), FAB_SUCCESS);
    bad |= step("fab_import_map_writable of a read-only grant", fab_import_map_writable(&import),
                FAB_ERROR_NOT_PERMITTED);
    bad |= step("fab_import_map_readable", fab_import_map_readable(&import), FAB_SUCCESS);
    fab_importer_destroy(importer);
    fab_memory_destroy(memory);

    props.handle_type = FAB_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
    bad |= step("fab_memory_allocate(POSIX_FD only)", fab_memory_allocate(3, uuid, &props, &memory),
                FAB_ERROR_NOT_SUPPORTED);

    printf(bad ? "model demo: FAILED\n" : "model demo: every step as expected\n");
    return bad;
}
