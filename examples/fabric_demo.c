/* The two-process demo: real memory shared through a fabric handle.
 *
 *   fabric_demo            the exporter: allocates 2 MiB through fabmemd
 *                          (started on demand), writes a pattern, exports the
 *                          64-byte handle and sends it, as 128 hex digits, down
 *                          a pipe to a second process (this program again, as
 *                          "fabric_demo --import"); once that one is done it
 *                          reads the reply the importer wrote into the memory.
 *   fabric_demo --import   the importer: reads the hex handle from stdin (so
 *                          any byte channel will do), imports and maps it,
 *                          checks the pattern and writes a reply.
 *
 * Each step is printed. Exit status 0 when the round trip worked. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fabmem.h"

#define SIZE (2u * 1024 * 1024)
#define REPLY_AT 4096

static int fail(const char *who, const char *what, fab_status_t status)
{
    fprintf(stderr, "[%s] %s: %s (%s)\n", who, what, fab_status_name(status),
            fab_status_string(status));
    return 1;
}

static int importer(void)
{
    char hex[2 * FAB_HANDLE_BYTES + 2];
    if (fgets(hex, sizeof(hex), stdin) == NULL || strlen(hex) < 2 * FAB_HANDLE_BYTES) {
        fprintf(stderr, "[importer] no handle on stdin\n");
        return 1;
    }
    uint8_t raw[FAB_HANDLE_BYTES];
    for (int i = 0; i < FAB_HANDLE_BYTES; i++) {
        unsigned byte;
        if (sscanf(hex + 2 * i, "%2x", &byte) != 1)
            return 1;
        raw[i] = (uint8_t)byte;
    }
    printf("[importer] pid %ld received a handle: %.16s...\n", (long)getpid(), hex);
    fab_handle_t handle;
    fab_status_t s = fab_handle_from_bytes(raw, sizeof(raw), &handle);
    if (s != FAB_SUCCESS)
        return fail("importer", "handle", s);
    fab_client_t *client;
    if ((s = fab_client_connect(NULL, &client)) != FAB_SUCCESS)
        return fail("importer", "connect", s);
    fab_region_t *region;
    if ((s = fab_client_import(client, &handle, 0, &region)) != FAB_SUCCESS)
        return fail("importer", "import", s);
    printf("[importer] imported %zu bytes on device 0\n", fab_region_size(region));
    unsigned char *p;
    if ((s = fab_region_map(region, FAB_ACCESS_READ_WRITE, (void **)&p)) != FAB_SUCCESS)
        return fail("importer", "map", s);
    for (size_t i = 0; i < REPLY_AT; i++) {
        if (p[i] != (unsigned char)(i % 251)) {
            fprintf(stderr, "[importer] pattern differs at byte %zu\n", i);
            return 1;
        }
    }
    printf("[importer] mapped at %p: the exporter's pattern is there (%d bytes checked)\n",
           (void *)p, REPLY_AT);
    snprintf((char *)p + REPLY_AT, 64, "hello from pid %ld", (long)getpid());
    printf("[importer] wrote the reply \"%s\"\n", (char *)p + REPLY_AT);
    fab_region_unmap(region, p);
    fab_region_release(region);
    fab_client_close(client);
    printf("[importer] unmapped, released, done\n");
    return 0;
}

static int exporter(const char *self)
{
    fab_client_t *client;
    fab_status_t s = fab_client_connect(NULL, &client);
    if (s != FAB_SUCCESS)
        return fail("exporter", "connect", s);
    fab_alloc_props_t props = fab_alloc_props_read_write(0, SIZE);
    fab_region_t *region;
    if ((s = fab_client_allocate(client, &props, &region)) != FAB_SUCCESS)
        return fail("exporter", "allocate", s);
    printf("[exporter] pid %ld allocated %u bytes on device 0\n", (long)getpid(), SIZE);
    unsigned char *p;
    if ((s = fab_region_map(region, FAB_ACCESS_READ_WRITE, (void **)&p)) != FAB_SUCCESS)
        return fail("exporter", "map", s);
    for (size_t i = 0; i < REPLY_AT; i++)
        p[i] = (unsigned char)(i % 251);
    printf("[exporter] wrote a %d-byte pattern\n", REPLY_AT);
    fab_handle_t handle;
    if ((s = fab_region_export(region, &handle)) != FAB_SUCCESS)
        return fail("exporter", "export", s);
    char hex[2 * FAB_HANDLE_BYTES + 1];
    for (int i = 0; i < FAB_HANDLE_BYTES; i++)
        snprintf(hex + 2 * i, 3, "%02x", handle.bytes[i]);
    printf("[exporter] exported the handle, sending it through a pipe\n");
    fflush(stdout);

    int pipefd[2];
    if (pipe(pipefd) != 0)
        return 1;
    pid_t pid = fork();
    if (pid == 0) {
        dup2(pipefd[0], 0);
        close(pipefd[0]);
        close(pipefd[1]);
        execl(self, self, "--import", (char *)NULL);
        _exit(127);
    }
    close(pipefd[0]);
    FILE *out = fdopen(pipefd[1], "w");
    fprintf(out, "%s\n", hex);
    fclose(out);
    int status = 1;
    waitpid(pid, &status, 0);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        fprintf(stderr, "[exporter] the importer failed\n");
        return 1;
    }
    printf("[exporter] the importer's reply, read from our own mapping: \"%s\"\n",
           (char *)p + REPLY_AT);
    fab_region_unmap(region, p);
    fab_region_release(region);
    fab_client_close(client);
    printf("[exporter] unmapped, released, done\n");
    return 0;
}

int main(int argc, char **argv)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (argc == 2 && strcmp(argv[1], "--import") == 0)
        return importer();
    if (argc != 1) {
        fprintf(stderr, "usage: %s [--import]\n", argv[0]);
        return 2;
    }
    char self[4096];
    ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
    if (n <= 0)
        return 1;
    self[n] = '\0';
    return exporter(self);
}
