/* fabmem: the command-line tool. Subcommands:
 *   decode   show the fields of a 64-byte fabric handle and whether it is intact
 *   verify   ask the daemon whether it minted a handle and whether its memory lives
 *   status   the daemon's counters and the topology (as nvidia-imex-ctl shows IMEX's)
 *   errors   list every status code with its name and CUDA's message
 * status and verify talk to the daemon at $FABMEM_SOCKET (else the per-user
 * default) and never start one.
 * The handle may be given as 128 hex digits, as a file holding the 64 raw bytes
 * or the hex text, or as "-" for standard input. Exit status: 0 an intact
 * handle (verify: minted here and live), 1 a handle that is refused (its fields
 * are still shown) or no daemon answering, 2 bad usage or unreadable input. */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fabmem.h"

#define FAB__INPUT_MAX 4096

static void usage(FILE *out)
{
    fprintf(out,
            "usage: fabmem decode HANDLE    HANDLE: 128 hex digits, a file (raw or hex), or -\n"
            "       fabmem verify HANDLE    ask the daemon: minted here? memory still live?\n"
            "       fabmem status           the daemon's counters and the topology\n"
            "       fabmem errors           list status codes, names and messages\n"
            "       fabmem help\n");
}

static int hexval(int c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    c = tolower(c);
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    return -1;
}

/* Hex text, ignoring white space; returns the byte count, or -1 if the text
 * holds anything else or an odd number of digits. */
static long parse_hex(const unsigned char *text, size_t len, uint8_t *out, size_t cap)
{
    size_t n = 0;
    int high = -1;
    for (size_t i = 0; i < len; i++) {
        if (isspace(text[i]))
            continue;
        int v = hexval(text[i]);
        if (v < 0 || n >= cap)
            return -1;
        if (high < 0) {
            high = v;
        } else {
            out[n++] = (uint8_t)(high << 4 | v);
            high = -1;
        }
    }
    return high < 0 ? (long)n : -1;
}

static long read_input(const char *arg, uint8_t *out, size_t cap)
{
    unsigned char buf[FAB__INPUT_MAX];
    size_t len = 0;
    FILE *f = strcmp(arg, "-") == 0 ? stdin : fopen(arg, "rb");
    if (f == NULL) {
        /* Not a file: the argument itself may be the hex. */
        long n = parse_hex((const unsigned char *)arg, strlen(arg), out, cap);
        if (n < 0)
            fprintf(stderr, "fabmem: %s: neither a readable file (%s) nor hex digits\n", arg,
                    strerror(errno));
        return n;
    }
    len = fread(buf, 1, sizeof(buf), f);
    int too_long = !feof(f) && fgetc(f) != EOF;
    if (f != stdin)
        fclose(f);
    if (too_long) {
        fprintf(stderr, "fabmem: %s: more than %d bytes; not a handle\n", arg, FAB__INPUT_MAX);
        return -1;
    }
    long n = parse_hex(buf, len, out, cap);
    if (n >= 0)
        return n;
    if (len > cap) {
        fprintf(stderr, "fabmem: %s: %zu bytes; a handle has %d\n", arg, len, FAB_HANDLE_BYTES);
        return -1;
    }
    memcpy(out, buf, len);
    return (long)len;
}

static const char *access_name(unsigned byte)
{
    switch (byte) {
    case 0:
        return "none";
    case 1:
        return "read-only";
    case 2:
        return "read-write";
    default:
        return "not an access level";
    }
}

/* Read arg (see read_input) into raw and decode it into *handle; *status is
 * fab_handle_from_bytes's verdict. Returns the byte count, -1 if unreadable. */
static long load_handle(const char *arg, uint8_t raw[FAB__INPUT_MAX], fab_handle_t *handle,
                        fab_status_t *status)
{
    long n = read_input(arg, raw, FAB__INPUT_MAX);
    if (n >= 0)
        *status = fab_handle_from_bytes(raw, (size_t)n, handle);
    return n;
}

static int cmd_decode(const char *arg)
{
    uint8_t raw[FAB__INPUT_MAX];
    fab_handle_t handle;
    fab_status_t status;
    long n = load_handle(arg, raw, &handle, &status);
    if (n < 0)
        return 2;
    if (n != FAB_HANDLE_BYTES) {
        printf("length     %ld bytes (a handle has %d)\n", n, FAB_HANDLE_BYTES);
        printf("verdict    %s: %s\n", fab_status_name(status), fab_status_string(status));
        return 1;
    }
    /* Show the fields as laid out even when the handle is refused: that is
     * when a reader most needs them. */
    fab_handle_t shown;
    memcpy(shown.bytes, raw, FAB_HANDLE_BYTES);
    fab_uuid_t uuid = fab_handle_uuid(&shown);
    printf("magic      ");
    for (int i = 0; i < 8; i++)
        printf(isprint(raw[i]) ? "%c" : "\\x%02x", raw[i]);
    printf("%s\n", memcmp(raw, "OXIFABRC", 8) ? " (wrong)" : "");
    printf("uuid       ");
    for (int i = 0; i < 16; i++)
        printf("%02x", uuid.bytes[i]);
    printf("\nsize       %zu bytes\n", fab_handle_size(&shown));
    printf("access     %s\n", access_name(raw[32]));
    printf("version    %u\n", fab_handle_version(&shown));
    printf("origin     %s\n", raw[34] == FAB_HANDLE_ORIGIN_MODEL    ? "model"
                              : raw[34] == FAB_HANDLE_ORIGIN_FABRIC ? "fabric daemon"
                                                                    : "unknown");
    printf("domain     %llu\n", (unsigned long long)fab_handle_domain(&shown));
    printf("verdict    %s: %s\n", fab_status_name(status),
           status == FAB_SUCCESS ? "intact (a daemon handle's tag is checked by its daemon)"
                                 : fab_status_string(status));
    return status == FAB_SUCCESS ? 0 : 1;
}

/* A client that never starts a daemon: these commands observe, they do not
 * create. */
static fab_client_t *connect_quietly(void)
{
    fab_client_options_t options = {.socket_path = NULL, .node = NULL, .autostart = 0};
    fab_client_t *client = NULL;
    fab_status_t status = fab_client_connect(&options, &client);
    if (status != FAB_SUCCESS) {
        const char *where = getenv("FABMEM_SOCKET");
        fprintf(stderr, "fabmem: no daemon answers at %s: %s (%s)\n",
                where && *where ? where : "the per-user socket", fab_status_string(status),
                fab_status_name(status));
        return NULL;
    }
    return client;
}

static int cmd_verify(const char *arg)
{
    uint8_t raw[FAB__INPUT_MAX];
    fab_handle_t handle;
    fab_status_t status;
    if (load_handle(arg, raw, &handle, &status) < 0)
        return 2;
    if (status != FAB_SUCCESS) {
        printf("verdict    %s: %s (refused before asking the daemon)\n", fab_status_name(status),
               fab_status_string(status));
        return 1;
    }
    fab_client_t *client = connect_quietly();
    if (client == NULL)
        return 1;
    bool live = false;
    status = fab_client_verify(client, &handle, &live);
    fab_client_close(client);
    if (status != FAB_SUCCESS) {
        printf("verdict    %s: %s (not minted by this fabric, or altered)\n",
               fab_status_name(status), fab_status_string(status));
        return 1;
    }
    printf("minted     by this fabric (tag verified)\n");
    printf("memory     %s\n", live ? "live: an import would succeed as far as liveness goes"
                                    : "gone: the handle is stale, an import gets INVALID_HANDLE");
    return live ? 0 : 1;
}

static const char *fabric_state_name(fab_fabric_state_t state)
{
    switch (state) {
    case FAB_FABRIC_STATE_NOT_SUPPORTED:
        return "NOT_SUPPORTED";
    case FAB_FABRIC_STATE_NOT_STARTED:
        return "NOT_STARTED";
    case FAB_FABRIC_STATE_IN_PROGRESS:
        return "IN_PROGRESS";
    case FAB_FABRIC_STATE_COMPLETED:
        return "COMPLETED";
    }
    return "?";
}

static int cmd_status(void)
{
    fab_client_t *client = connect_quietly();
    if (client == NULL)
        return 1;
    fab_daemon_stats_t stats;
    const fab_topology_t *topology = NULL;
    fab_status_t status = fab_client_stats(client, &stats);
    if (status == FAB_SUCCESS)
        status = fab_client_topology(client, &topology);
    if (status != FAB_SUCCESS) {
        fprintf(stderr, "fabmem: the daemon did not answer: %s\n", fab_status_name(status));
        fab_client_close(client);
        return 1;
    }
    printf("daemon       pid %llu\n", (unsigned long long)stats.pid);
    printf("clients      %llu\n", (unsigned long long)stats.clients);
    printf("allocations  %llu (%llu bytes)\n", (unsigned long long)stats.allocations,
           (unsigned long long)stats.bytes);
    printf("references   %llu\n", (unsigned long long)stats.references);
    printf("daemon rss   %llu bytes\n", (unsigned long long)stats.rss);
    /* The daemon's topology, the one it enforces, not a config of ours. */
    printf("topology     %d node(s), driver %d; this process sits on node %d\n",
           fab_topology_node_count(topology), fab_topology_driver_version(topology),
           fab_client_node_index(client));
    for (int i = 0; i < fab_topology_node_count(topology); i++) {
        fab_node_info_t info;
        if (fab_topology_node(topology, i, &info) != FAB_SUCCESS)
            continue;
        printf("  %-16s domain %-12s clique %-4u gpus %-2d fabric %s\n", info.name,
               info.imex_domain, info.clique_id, info.device_count,
               fabric_state_name(info.fabric_state));
    }
    fab_client_close(client);
    return 0;
}

static int cmd_errors(void)
{
#define FAB__LIST(name, value, text) printf("%4d  %-28s %s\n", value, "FAB_" #name, text);
    FAB_STATUS_MAP(FAB__LIST)
#undef FAB__LIST
    return 0;
}

int main(int argc, char **argv)
{
    if (argc == 3 && strcmp(argv[1], "decode") == 0)
        return cmd_decode(argv[2]);
    if (argc == 3 && strcmp(argv[1], "verify") == 0)
        return cmd_verify(argv[2]);
    if (argc == 2 && strcmp(argv[1], "status") == 0)
        return cmd_status();
    if (argc == 2 && strcmp(argv[1], "errors") == 0)
        return cmd_errors();
    if (argc == 2 && (strcmp(argv[1], "help") == 0 || strcmp(argv[1], "--help") == 0)) {
        usage(stdout);
        return 0;
    }
    usage(stderr);
    return 2;
}
