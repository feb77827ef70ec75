/* The rules the daemon enforces, each as the driver reports it: authenticity
 * (forged, altered, other fabric), channels (also for a second uid, by a
 * helper that drops privileges), topology (IMEX domain, clique, cluster,
 * fabric state), lifetime (stale handles, the release warning), argument
 * checks, and the key surviving a restart. */
#include "daemon_harness.h"

#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zlib.h>

#include "fabmem.h"

#define MIB2 (2u * 1024 * 1024)

/* What an attacker does after changing bytes: make the CRC right again. */
static void recompute_crc(fab_handle_t *handle)
{
    uint32_t crc = (uint32_t)crc32(crc32(0L, Z_NULL, 0), handle->bytes, FAB_HANDLE_CRC_OFFSET);
    for (int i = 0; i < 4; i++)
        handle->bytes[FAB_HANDLE_CRC_OFFSET + i] = (uint8_t)(crc >> (8 * i));
}

static fab_region_t *allocate(fab_client_t *client, fab_handle_t *handle_out)
{
    fab_alloc_props_t props = fab_alloc_props_read_write(0, MIB2);
    fab_region_t *region = NULL;
    assert_int_equal(fab_client_allocate(client, &props, &region), FAB_SUCCESS);
    assert_int_equal(fab_region_export(region, handle_out), FAB_SUCCESS);
    return region;
}

static void expect_import(fab_client_t *client, const fab_handle_t *handle, fab_status_t want)
{
    fab_region_t *region = NULL;
    fab_status_t got = fab_client_import(client, handle, 0, &region);
    assert_int_equal(got, want);
    if (got == FAB_SUCCESS)
        fab_region_release(region);
}

static void forged_or_altered_handles_are_invalid(void **state)
{
    (void)state;
    assert_non_null(fab_test_daemon_start(NULL, NULL));
    fab_client_t *client = fab_test_connect_node(NULL);
    fab_handle_t handle;
    fab_region_t *region = allocate(client, &handle);

    /* Right format, guessed uuid, a made-up tag, a valid CRC. */
    fab_handle_t forged;
    fab_uuid_t guess = {{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}};
    uint8_t tag[FAB_HANDLE_TAG_BYTES] = {0xde, 0xad};
    assert_int_equal(fab_handle_encode(guess, MIB2, FAB_ACCESS_READ_WRITE, FAB_HANDLE_ORIGIN_FABRIC,
                                       fab_handle_domain(&handle), tag, &forged), FAB_SUCCESS);
    fab_handle_t intact;
    assert_int_equal(fab_handle_from_bytes(forged.bytes, FAB_HANDLE_BYTES, &intact), FAB_SUCCESS);
    expect_import(client, &forged, FAB_ERROR_INVALID_HANDLE);

    /* The real uuid with a forged tag. */
    assert_int_equal(fab_handle_encode(fab_handle_uuid(&handle), MIB2, FAB_ACCESS_READ_WRITE,
                                       FAB_HANDLE_ORIGIN_FABRIC, fab_handle_domain(&handle), tag,
                                       &forged), FAB_SUCCESS);
    expect_import(client, &forged, FAB_ERROR_INVALID_HANDLE);

    /* Each byte altered, plain (the CRC catches it) and with the CRC
     * recomputed over the altered bytes (the tag catches it). */
    for (int i = 0; i < FAB_HANDLE_CRC_OFFSET; i++) {
        fab_handle_t altered = handle;
        altered.bytes[i] ^= 0x01;
        expect_import(client, &altered, FAB_ERROR_INVALID_HANDLE);
        recompute_crc(&altered);
        expect_import(client, &altered, FAB_ERROR_INVALID_HANDLE);
    }
    /* A handle minted by the model (no key) is no fabric handle. */
    fab_memory_t *memory;
    fab_alloc_props_t props = fab_alloc_props_read_write(0, MIB2);
    assert_int_equal(fab_memory_allocate(1, guess, &props, &memory), FAB_SUCCESS);
    assert_int_equal(fab_memory_export(memory, &forged), FAB_SUCCESS);
    fab_memory_destroy(memory);
    expect_import(client, &forged, FAB_ERROR_INVALID_HANDLE);

    expect_import(client, &handle, FAB_SUCCESS);
    fab_region_release(region);
    assert_int_equal(fab_client_close(client), FAB_SUCCESS);
}

static void handle_from_another_fabric_is_invalid(void **state)
{
    (void)state;
    fab_test_daemon_t *a = fab_test_daemon_start(NULL, NULL);
    assert_non_null(a);
    fab_client_options_t options = {a->socket, NULL, 0};
    fab_client_t *ca;
    assert_int_equal(fab_client_connect(&options, &ca), FAB_SUCCESS);
    fab_test_daemon_t *b = fab_test_daemon_start(NULL, NULL);
    assert_non_null(b);
    options.socket_path = b->socket;
    fab_client_t *cb;
    assert_int_equal(fab_client_connect(&options, &cb), FAB_SUCCESS);
    fab_handle_t handle;
    fab_region_t *region = allocate(ca, &handle);
    expect_import(cb, &handle, FAB_ERROR_INVALID_HANDLE);
    bool live;
    assert_int_equal(fab_client_verify(cb, &handle, &live), FAB_ERROR_INVALID_HANDLE);
    assert_int_equal(fab_client_verify(ca, &handle, &live), FAB_SUCCESS);
    assert_true(live);
    expect_import(ca, &handle, FAB_SUCCESS);
    fab_region_release(region);
    fab_client_close(ca);
    fab_client_close(cb);
}

static void restarted_daemon_recognizes_its_handles(void **state)
{
    (void)state;
    char *dir = fab_test_tempdir();
    assert_non_null(dir);
    char key[512];
    snprintf(key, sizeof(key), "%s/fabmemd.state", dir);
    fab_test_daemon_t *a = fab_test_daemon_start(NULL, key);
    assert_non_null(a);
    fab_client_t *client = fab_test_connect_node(NULL);
    fab_handle_t handle;
    fab_region_t *region = allocate(client, &handle);
    fab_region_release(region);
    fab_client_close(client);
    assert_int_equal(fab_test_daemon_stop(a), 0);

    fab_test_daemon_t *b = fab_test_daemon_start(NULL, key);
    assert_non_null(b);
    client = fab_test_connect_node(NULL);
    bool live = true;
    assert_int_equal(fab_client_verify(client, &handle, &live), FAB_SUCCESS);
    assert_false(live);
    expect_import(client, &handle, FAB_ERROR_INVALID_HANDLE); /* authentic, but gone */
    fab_client_close(client);

    fab_test_daemon_t *c = fab_test_daemon_start(NULL, NULL); /* a fresh key */
    assert_non_null(c);
    client = fab_test_connect_node(NULL);
    assert_int_equal(fab_client_verify(client, &handle, &live), FAB_ERROR_INVALID_HANDLE);
    fab_client_close(client);
    fab_test_rmtree(dir);
    free(dir);
}

static void restarted_daemon_honours_live_handles(void **state)
{
    (void)state;
    fab_test_daemon_t *daemon = fab_test_daemon_start(NULL, NULL);
    assert_non_null(daemon);
    fab_client_t *exporter = fab_test_connect_node(NULL);
    fab_client_t *holder = fab_test_connect_node(NULL);
    fab_handle_t handle;
    fab_region_t *region = allocate(exporter, &handle);
    char *p, *q;
    assert_int_equal(fab_region_map(region, FAB_ACCESS_READ_WRITE, (void **)&p), FAB_SUCCESS);
    strcpy(p, "written before the restart");
    fab_region_t *held;
    assert_int_equal(fab_client_import(holder, &handle, 1, &held), FAB_SUCCESS);

    assert_int_equal(fab_test_daemon_restart(daemon), 0);
    fab_client_t *late = fab_test_connect_node(NULL);
    /* The new daemon has the key but not yet the memory. */
    bool live = true;
    assert_int_equal(fab_client_verify(late, &handle, &live), FAB_SUCCESS);
    assert_false(live);
    expect_import(late, &handle, FAB_ERROR_INVALID_HANDLE);
    /* The exporter's next call reconnects and hands its region back; then
     * the holder's; the handle is live again and names the same memory. */
    fab_daemon_stats_t stats;
    assert_int_equal(fab_client_stats(exporter, &stats), FAB_SUCCESS);
    assert_int_equal(stats.allocations, 1);
    assert_int_equal(fab_client_stats(holder, &stats), FAB_SUCCESS);
    assert_int_equal(stats.references, 2);
    fab_region_t *imported;
    assert_int_equal(fab_client_import(late, &handle, 0, &imported), FAB_SUCCESS);
    assert_int_equal(fab_region_map(imported, FAB_ACCESS_READ_WRITE, (void **)&q), FAB_SUCCESS);
    assert_string_equal(q, "written before the restart");
    strcpy(q, "and after it");
    assert_string_equal(p, "and after it");
    fab_region_unmap(imported, q);
    fab_region_release(imported);
    /* Lifetime as before: the holder keeps it alive past the exporter. */
    fab_region_unmap(region, p);
    assert_int_equal(fab_region_release(region), FAB_SUCCESS);
    expect_import(late, &handle, FAB_SUCCESS);
    assert_int_equal(fab_region_release(held), FAB_SUCCESS);
    /* A RELEASE is not waited for: one round trip on the holder's own
     * connection makes sure the daemon has seen it before another asks. */
    fab_daemon_stats_t synced;
    assert_int_equal(fab_client_stats(holder, &synced), FAB_SUCCESS);
    expect_import(late, &handle, FAB_ERROR_INVALID_HANDLE);
    assert_int_equal(fab_client_close(exporter), FAB_SUCCESS);
    assert_int_equal(fab_client_close(holder), FAB_SUCCESS);
    assert_int_equal(fab_client_close(late), FAB_SUCCESS);
}

static void stale_handle_after_last_release_is_invalid(void **state)
{
    (void)state;
    assert_non_null(fab_test_daemon_start(NULL, NULL));
    fab_client_t *client = fab_test_connect_node(NULL);
    fab_handle_t handle;
    fab_region_t *region = allocate(client, &handle);
    fab_region_t *imported;
    assert_int_equal(fab_client_import(client, &handle, 1, &imported), FAB_SUCCESS);
    assert_int_equal(fab_region_release(region), FAB_SUCCESS);
    /* The import still holds the memory: the handle is live. */
    expect_import(client, &handle, FAB_SUCCESS);
    assert_int_equal(fab_region_release(imported), FAB_SUCCESS);
    expect_import(client, &handle, FAB_ERROR_INVALID_HANDLE);
    assert_int_equal(fab_client_close(client), FAB_SUCCESS);
}

static void release_with_unimported_exports_warns_naming_the_allocation(void **state)
{
    (void)state;
    fab_test_daemon_t *daemon = fab_test_daemon_start(NULL, NULL);
    assert_non_null(daemon);
    fab_client_t *client = fab_test_connect_node(NULL);
    fab_handle_t handle;
    fab_region_t *region = allocate(client, &handle);
    assert_int_equal(fab_region_export(region, &handle), FAB_SUCCESS);
    fab_uuid_t uuid = fab_region_uuid(region);
    /* Not a refusal, as in the seed: the driver allows it. */
    assert_int_equal(fab_region_release(region), FAB_SUCCESS);
    fab_daemon_stats_t stats;
    assert_int_equal(fab_client_stats(client, &stats), FAB_SUCCESS); /* the log is written */
    char hex[33], text[128];
    fab_test_hex16(uuid.bytes, hex);
    snprintf(text, sizeof(text), "allocation %s released by pid %ld with 2 exported handles never imported",
             hex, (long)getpid());
    assert_true(fab_test_daemon_log_contains(daemon, text));
    expect_import(client, &handle, FAB_ERROR_INVALID_HANDLE); /* the late import fails */
    assert_int_equal(fab_client_close(client), FAB_SUCCESS);
}

static void fabric_allocation_without_channel_is_not_permitted(void **state)
{
    (void)state;
    assert_non_null(fab_test_daemon_start("[channel 3]\nuids = 12345\n", NULL));
    fab_client_t *client = fab_test_connect_node(NULL);
    fab_alloc_props_t props = fab_alloc_props_read_write(0, MIB2);
    fab_region_t *region;
    assert_int_equal(fab_client_allocate(client, &props, &region), FAB_ERROR_NOT_PERMITTED);
    assert_int_equal(fab_client_close(client), FAB_SUCCESS);
}

static void channel_by_group_is_honoured(void **state)
{
    (void)state;
    char config[64];
    snprintf(config, sizeof(config), "[channel 7]\ngids = %lu\n", (unsigned long)getgid());
    assert_non_null(fab_test_daemon_start(config, NULL));
    fab_client_t *client = fab_test_connect_node(NULL);
    fab_handle_t handle;
    fab_region_t *region = allocate(client, &handle);
    expect_import(client, &handle, FAB_SUCCESS);
    fab_region_release(region);
    assert_int_equal(fab_client_close(client), FAB_SUCCESS);
}

/* helper "nobody": drop to uid/gid 65534, then import the handle it is sent
 * and report the status as a word. */
static int helper_nobody(int argc, char **argv, int sock)
{
    (void)argc;
    (void)argv;
    if (getuid() == 0 && (setgid(65534) != 0 || setuid(65534) != 0))
        return 10;
    fab_client_t *client;
    fab_status_t status = fab_client_connect(NULL, &client);
    if (status != FAB_SUCCESS) {
        fab_test_send_word(sock, fab_status_name(status));
        return 11;
    }
    fab_handle_t handle;
    if (fab_test_send_word(sock, "ready") != 0 ||
        fab_test_recv(sock, handle.bytes, sizeof(handle.bytes)) != 0)
        return 12;
    fab_region_t *region;
    status = fab_client_import(client, &handle, 0, &region);
    if (status == FAB_SUCCESS) {
        unsigned char *p;
        if (fab_region_map(region, FAB_ACCESS_READ_ONLY, (void **)&p) != FAB_SUCCESS || p[0] != 42)
            return 13;
        fab_region_unmap(region, p);
        fab_region_release(region);
    }
    fab_client_close(client);
    return fab_test_send_word(sock, fab_status_name(status)) == 0 ? 0 : 14;
}

static void second_uid(const char *config, const char *want)
{
    if (getuid() != 0)
        fab_test_skip("needs to drop privileges");
    assert_non_null(fab_test_daemon_start(config, NULL));
    fab_client_t *client = fab_test_connect_node(NULL);
    fab_handle_t handle;
    fab_region_t *region = allocate(client, &handle);
    unsigned char *p;
    assert_int_equal(fab_region_map(region, FAB_ACCESS_READ_WRITE, (void **)&p), FAB_SUCCESS);
    p[0] = 42;
    fab_test_child_t child;
    assert_int_equal(fab_test_spawn("nobody", NULL, NULL, &child), 0);
    assert_int_equal(fab_test_expect_word(child.sock, "ready"), 0);
    assert_int_equal(fab_test_send(child.sock, handle.bytes, sizeof(handle.bytes)), 0);
    assert_int_equal(fab_test_expect_word(child.sock, want), 0);
    assert_int_equal(fab_test_reap(&child), 0);
    fab_region_unmap(region, p);
    fab_region_release(region);
    assert_int_equal(fab_client_close(client), FAB_SUCCESS);
}

static void second_uid_without_shared_channel_is_not_permitted(void **state)
{
    (void)state;
    second_uid("[daemon]\nsocket_mode = 0666\n[channel 0]\nuids = 0\n[channel 1]\nuids = 65534\n",
               "FAB_ERROR_NOT_PERMITTED");
}

static void second_uid_sharing_a_channel_imports(void **state)
{
    (void)state;
    second_uid("[daemon]\nsocket_mode = 0666\n[channel 0]\nuids = 0, 65534\n", "FAB_SUCCESS");
}

static const char topology_config[] =
    "[channel 0]\nuids = 0\n"
    "[node a]\nimex_domain = one\ncluster_uuid = 11111111-2222-3333-4444-555555555555\n"
    "clique_id = 1\ngpus = 2\n"
    "[node b]\nimex_domain = one\ncluster_uuid = 11111111-2222-3333-4444-555555555555\n"
    "clique_id = 1\ngpus = 2\n"
    "[node other-domain]\nimex_domain = two\ncluster_uuid = 11111111-2222-3333-4444-555555555555\n"
    "clique_id = 1\n"
    "[node other-clique]\nimex_domain = one\ncluster_uuid = 11111111-2222-3333-4444-555555555555\n"
    "clique_id = 2\n"
    "[node other-cluster]\nimex_domain = one\ncluster_uuid = 99999999-2222-3333-4444-555555555555\n"
    "clique_id = 1\n"
    "[node in-progress]\nimex_domain = one\ncluster_uuid = 11111111-2222-3333-4444-555555555555\n"
    "clique_id = 1\nfabric_state = in_progress\n";

static void topology_decides_reachability(void **state)
{
    (void)state;
    assert_non_null(fab_test_daemon_start(topology_config, NULL));
    fab_client_t *a = fab_test_connect_node("a");
    fab_handle_t handle;
    fab_region_t *region = allocate(a, &handle);
    static const struct {
        const char *node;
        fab_status_t want;
    } cases[] = {
        {"a", FAB_SUCCESS},
        {"b", FAB_SUCCESS},
        {"other-domain", FAB_ERROR_INVALID_HANDLE},
        {"other-clique", FAB_ERROR_NOT_SUPPORTED},
        {"other-cluster", FAB_ERROR_NOT_SUPPORTED},
        {"in-progress", FAB_ERROR_NOT_SUPPORTED},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        fab_client_t *peer = fab_test_connect_node(cases[i].node);
        fab_region_t *imported = NULL;
        fab_status_t got = fab_client_import(peer, &handle, 0, &imported);
        if (got != cases[i].want)
            fail_msg("import on node %s: %s, want %s", cases[i].node, fab_status_name(got),
                     fab_status_name(cases[i].want));
        if (got == FAB_SUCCESS)
            fab_region_release(imported);
        assert_int_equal(fab_client_close(peer), FAB_SUCCESS);
    }
    fab_client_t *b = fab_test_connect_node("b");
    fab_region_t *imported;
    assert_int_equal(fab_client_import(b, &handle, 2, &imported), FAB_ERROR_INVALID_DEVICE);
    fab_client_close(b);
    fab_client_options_t options = {NULL, "no-such-node", 0};
    fab_client_t *none;
    assert_int_equal(fab_client_connect(&options, &none), FAB_ERROR_NOT_FOUND);
    fab_region_release(region);
    fab_client_close(a);
}

static void allocation_arguments_are_checked(void **state)
{
    (void)state;
    assert_non_null(fab_test_daemon_start("[channel 0]\nuids = 0\n[node n]\ngpus = 2\n"
                                      "gpu_memory = 8M\nhandle_types = fabric\n", NULL));
    fab_client_t *client = fab_test_connect_node(NULL);
    fab_region_t *region;
    fab_alloc_props_t props = fab_alloc_props_read_write(0, MIB2 + 4096);
    assert_int_equal(fab_client_allocate(client, &props, &region), FAB_ERROR_INVALID_VALUE);
    props.size = 0;
    assert_int_equal(fab_client_allocate(client, &props, &region), FAB_ERROR_INVALID_VALUE);
    props = fab_alloc_props_read_write(2, MIB2);
    assert_int_equal(fab_client_allocate(client, &props, &region), FAB_ERROR_INVALID_DEVICE);
    props = fab_alloc_props_read_write(-1, MIB2);
    assert_int_equal(fab_client_allocate(client, &props, &region), FAB_ERROR_INVALID_DEVICE);
    props = fab_alloc_props_read_write(0, MIB2);
    props.handle_type = FAB_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
    assert_int_equal(fab_client_allocate(client, &props, &region), FAB_ERROR_NOT_SUPPORTED);
    props.handle_type = FAB_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR | FAB_HANDLE_TYPE_FABRIC;
    assert_int_equal(fab_client_allocate(client, &props, &region), FAB_ERROR_NOT_SUPPORTED);
    props = fab_alloc_props_read_write(0, 16 * MIB2);
    assert_int_equal(fab_client_allocate(client, &props, &region), FAB_ERROR_OUT_OF_MEMORY);
    props = fab_alloc_props_read_write(0, MIB2);
    props.peer_access = FAB_ACCESS_NONE;
    assert_int_equal(fab_client_allocate(client, &props, &region), FAB_SUCCESS);
    fab_handle_t handle;
    assert_int_equal(fab_region_export(region, &handle), FAB_ERROR_NOT_PERMITTED);
    assert_int_equal(fab_region_release(region), FAB_SUCCESS);
    assert_int_equal(fab_client_allocate(client, NULL, &region), FAB_ERROR_INVALID_VALUE);
    assert_int_equal(fab_client_import(client, NULL, 0, &region), FAB_ERROR_INVALID_VALUE);
    assert_int_equal(fab_client_close(client), FAB_SUCCESS);
}

/* Host NUMA memory is ordinal FAB_HOST_NUMA_ORDINAL_BASE + n: the daemon
 * checks the node has NUMA node n and counts its bytes against that node's
 * host_memory, apart from each GPU's and each other NUMA node's. */
static void host_numa_ordinals_draw_on_host_memory(void **state)
{
    (void)state;
    assert_non_null(fab_test_daemon_start("[channel 0]\nuids = 0\n[node n]\ngpus = 1\n"
                                          "gpu_memory = 2M\nhost_numa_nodes = 2\n"
                                          "host_memory = 4M\n", NULL));
    fab_client_t *client = fab_test_connect_node(NULL);
    fab_region_t *a, *b, *c, *gpu;
    fab_alloc_props_t props = fab_alloc_props_read_write(FAB_HOST_NUMA_ORDINAL_BASE + 2, MIB2);
    assert_int_equal(fab_client_allocate(client, &props, &a), FAB_ERROR_INVALID_DEVICE);
    props = fab_alloc_props_read_write(FAB_HOST_NUMA_ORDINAL_BASE + 1, 2 * MIB2);
    assert_int_equal(fab_client_allocate(client, &props, &a), FAB_SUCCESS);
    assert_int_equal(fab_client_allocate(client, &props, &b), FAB_ERROR_OUT_OF_MEMORY);
    props.device_ordinal = FAB_HOST_NUMA_ORDINAL_BASE;
    assert_int_equal(fab_client_allocate(client, &props, &b), FAB_SUCCESS);
    props = fab_alloc_props_read_write(0, MIB2);
    assert_int_equal(fab_client_allocate(client, &props, &gpu), FAB_SUCCESS); /* the GPU's own */
    assert_int_equal(fab_region_release(a), FAB_SUCCESS);
    props = fab_alloc_props_read_write(FAB_HOST_NUMA_ORDINAL_BASE + 1, 2 * MIB2);
    assert_int_equal(fab_client_allocate(client, &props, &c), FAB_SUCCESS); /* given back */
    assert_int_equal(fab_region_release(c), FAB_SUCCESS);
    assert_int_equal(fab_region_release(b), FAB_SUCCESS);
    assert_int_equal(fab_region_release(gpu), FAB_SUCCESS);
    assert_int_equal(fab_client_close(client), FAB_SUCCESS);
}

static void no_daemon_and_no_autostart_is_not_ready(void **state)
{
    (void)state;
    char *dir = fab_test_tempdir();
    char path[512];
    snprintf(path, sizeof(path), "%s/none.sock", dir);
    fab_client_options_t options = {path, NULL, -1};
    setenv("FABMEM_NO_AUTOSTART", "1", 1);
    fab_client_t *client;
    assert_int_equal(fab_client_connect(&options, &client), FAB_ERROR_SYSTEM_NOT_READY);
    options.autostart = 0;
    unsetenv("FABMEM_NO_AUTOSTART");
    assert_int_equal(fab_client_connect(&options, &client), FAB_ERROR_SYSTEM_NOT_READY);
    assert_int_equal(fab_client_connect(&options, NULL), FAB_ERROR_INVALID_VALUE);
    fab_test_rmtree(dir);
    free(dir);
}

static void daemon_gone_is_not_ready(void **state)
{
    (void)state;
    fab_test_daemon_t *daemon = fab_test_daemon_start(NULL, NULL);
    assert_non_null(daemon);
    fab_client_t *client = fab_test_connect_node(NULL);
    fab_handle_t handle;
    fab_region_t *region = allocate(client, &handle);
    char *p;
    assert_int_equal(fab_region_map(region, FAB_ACCESS_READ_WRITE, (void **)&p), FAB_SUCCESS);
    assert_int_equal(fab_test_daemon_stop(daemon), 0);
    strcpy(p, "the memory outlives the daemon");
    fab_region_t *other;
    assert_int_equal(fab_client_import(client, &handle, 0, &other), FAB_ERROR_SYSTEM_NOT_READY);
    fab_alloc_props_t props = fab_alloc_props_read_write(0, MIB2);
    assert_int_equal(fab_client_allocate(client, &props, &other), FAB_ERROR_SYSTEM_NOT_READY);
    assert_int_equal(fab_region_unmap(region, p), FAB_SUCCESS);
    assert_int_equal(fab_region_release(region), FAB_SUCCESS);
    assert_int_equal(fab_client_close(client), FAB_SUCCESS);
}

static void daemon_exits_cleanly_on_sigint_freeing_everything(void **state)
{
    (void)state;
    fab_test_daemon_t *daemon = fab_test_daemon_start(NULL, NULL);
    assert_non_null(daemon);
    fab_client_t *client = fab_test_connect_node(NULL);
    fab_handle_t handle;
    fab_region_t *region = allocate(client, &handle);
    kill(daemon->pid, SIGINT);
    int status = 0;
    assert_int_equal(waitpid(daemon->pid, &status, 0), daemon->pid);
    daemon->pid = 0;
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0);
    assert_int_not_equal(access(daemon->socket, F_OK), 0); /* socket removed */
    assert_true(fab_test_daemon_log_contains(daemon, "signal 2, exiting"));
    assert_int_equal(fab_region_release(region), FAB_SUCCESS);
    assert_int_equal(fab_client_close(client), FAB_SUCCESS);
}

static void client_learns_the_topology_from_the_daemon(void **state)
{
    (void)state;
    assert_non_null(fab_test_daemon_start(fab_test_example_config("nvl72.ini"), NULL));
    setenv("FABMEM_CONFIG", "/nonexistent/fabmem.ini", 1); /* ours must not matter */
    fab_client_t *client = fab_test_connect_node("tray07");
    const fab_topology_t *topology = NULL;
    assert_int_equal(fab_client_topology(client, &topology), FAB_SUCCESS);
    assert_int_equal(fab_topology_node_count(topology), 18);
    fab_node_info_t node;
    assert_int_equal(fab_topology_node(topology, fab_client_node_index(client), &node), FAB_SUCCESS);
    assert_string_equal(node.name, "tray07");
    assert_string_equal(node.imex_domain, "nvl72-rack0");
    assert_int_equal(node.device_count, 4);
    assert_int_equal(node.fabric_state, FAB_FABRIC_STATE_COMPLETED);
    fab_device_info_t device;
    assert_int_equal(fab_topology_device(topology, fab_client_node_index(client), 3, &device),
                     FAB_SUCCESS);
    assert_true(device.total_memory > 0);
    assert_true(device.granularity > 0);
    assert_int_equal(fab_topology_device(topology, fab_client_node_index(client), 4, &device),
                     FAB_ERROR_INVALID_DEVICE);
    /* The same object again, until the connection changes. */
    const fab_topology_t *again = NULL;
    assert_int_equal(fab_client_topology(client, &again), FAB_SUCCESS);
    assert_ptr_equal(again, topology);
    unsetenv("FABMEM_CONFIG");
    assert_int_equal(fab_client_close(client), FAB_SUCCESS);
}

static void platform_fabric_and_pci_fields_arrive_through_topology(void **state)
{
    (void)state;
    assert_non_null(fab_test_daemon_start("[channel 0]\nuids = 0\n[node a]\ngpus = 2\n"
                                          "[node b]\ngpus = 2\nfabric_state = not_started\n"
                                          "fabric_status = 27\nfabric_health = degraded_bw\n"
                                          "chassis_serial = SN-B\nslot_number = 12\n"
                                          "tray_index = 5\nhost_id = 2\npci_domain = 0x19\n"
                                          "pci_device_id = 0x294110de\n",
                                          NULL));
    fab_client_t *client = fab_test_connect_node("b");
    const fab_topology_t *topology = NULL;
    assert_int_equal(fab_client_topology(client, &topology), FAB_SUCCESS);
    fab_node_info_t node;
    assert_int_equal(fab_topology_node(topology, 1, &node), FAB_SUCCESS);
    assert_int_equal(node.fabric_state, FAB_FABRIC_STATE_NOT_STARTED);
    assert_int_equal(node.fabric_status, 27);
    assert_int_equal(node.fabric_health, (FAB_FABRIC_HEALTH_HEALTHY & ~3u) | 1u);
    assert_string_equal(node.chassis_serial, "SN-B");
    assert_int_equal(node.slot_number, 12);
    assert_int_equal(node.tray_index, 5);
    assert_int_equal(node.host_id, 2);
    fab_device_info_t device;
    assert_int_equal(fab_topology_device(topology, 1, 1, &device), FAB_SUCCESS);
    char id[FAB_PCI_BUS_ID_MAX];
    fab_device_pci_bus_id(&device, id, sizeof(id));
    assert_string_equal(id, "0019:02:00.0");
    assert_int_equal(device.pci_device_id, 0x294110de);
    /* node a keeps the defaults of index 0 */
    assert_int_equal(fab_topology_node(topology, 0, &node), FAB_SUCCESS);
    assert_int_equal(node.tray_index, 0);
    assert_int_equal(node.fabric_health, FAB_FABRIC_HEALTH_HEALTHY);
    assert_string_equal(node.chassis_serial, "FABMEM-RACK0");
    assert_int_equal(fab_client_close(client), FAB_SUCCESS);
}

static void restarted_daemon_is_asked_for_its_topology_again(void **state)
{
    (void)state;
    fab_test_daemon_t *daemon = fab_test_daemon_start("[channel 0]\nuids = 0\n[node a]\ngpus = 2\n", NULL);
    assert_non_null(daemon);
    fab_client_t *client = fab_test_connect_node(NULL);
    const fab_topology_t *before = NULL, *after = NULL;
    assert_int_equal(fab_client_topology(client, &before), FAB_SUCCESS);
    fab_node_info_t node;
    assert_int_equal(fab_topology_node(before, 0, &node), FAB_SUCCESS);
    assert_int_equal(node.device_count, 2);
    /* The daemon comes back with another config on the same socket. */
    fab_test_write_file(daemon->config, "[channel 0]\nuids = 0\n[node a]\ngpus = 3\n[node b]\ngpus = 1\n");
    assert_int_equal(fab_test_daemon_restart(daemon), 0);
    fab_daemon_stats_t stats;
    assert_int_equal(fab_client_stats(client, &stats), FAB_SUCCESS); /* reconnects */
    assert_int_equal(fab_client_topology(client, &after), FAB_SUCCESS);
    assert_int_equal(fab_topology_node_count(after), 2);
    assert_int_equal(fab_topology_node(after, 0, &node), FAB_SUCCESS);
    assert_int_equal(node.device_count, 3);
    assert_int_equal(fab_topology_node(before, 0, &node), FAB_SUCCESS); /* still readable */
    assert_int_equal(fab_client_close(client), FAB_SUCCESS);
}

static const struct CMUnitTest tests[] = {
    cmocka_unit_test_teardown(client_learns_the_topology_from_the_daemon, fab_test_teardown),
    cmocka_unit_test_teardown(platform_fabric_and_pci_fields_arrive_through_topology,
                              fab_test_teardown),
    cmocka_unit_test_teardown(restarted_daemon_is_asked_for_its_topology_again, fab_test_teardown),
    cmocka_unit_test_teardown(daemon_exits_cleanly_on_sigint_freeing_everything, fab_test_teardown),
    cmocka_unit_test_teardown(forged_or_altered_handles_are_invalid, fab_test_teardown),
    cmocka_unit_test_teardown(handle_from_another_fabric_is_invalid, fab_test_teardown),
    cmocka_unit_test_teardown(restarted_daemon_recognizes_its_handles, fab_test_teardown),
    cmocka_unit_test_teardown(restarted_daemon_honours_live_handles, fab_test_teardown),
    cmocka_unit_test_teardown(stale_handle_after_last_release_is_invalid, fab_test_teardown),
    cmocka_unit_test_teardown(release_with_unimported_exports_warns_naming_the_allocation,
                              fab_test_teardown),
    cmocka_unit_test_teardown(fabric_allocation_without_channel_is_not_permitted, fab_test_teardown),
    cmocka_unit_test_teardown(channel_by_group_is_honoured, fab_test_teardown),
    cmocka_unit_test_teardown(second_uid_without_shared_channel_is_not_permitted, fab_test_teardown),
    cmocka_unit_test_teardown(second_uid_sharing_a_channel_imports, fab_test_teardown),
    cmocka_unit_test_teardown(topology_decides_reachability, fab_test_teardown),
    cmocka_unit_test_teardown(allocation_arguments_are_checked, fab_test_teardown),
    cmocka_unit_test_teardown(host_numa_ordinals_draw_on_host_memory, fab_test_teardown),
    cmocka_unit_test_teardown(no_daemon_and_no_autostart_is_not_ready, fab_test_teardown),
    cmocka_unit_test_teardown(daemon_gone_is_not_ready, fab_test_teardown),
};

static const fab_test_helper_t helpers[] = {
    {"nobody", helper_nobody},
};

FAB_TEST_MAIN("fabric", tests, helpers)
