/* fabmem: the command-line tool. Subcommands:
 *   decode   show the fields of a 64-byte fabric handle and whether it is intact
 *   verify   ask the daemon whether it minted a handle and whether its memory lives
 *   status   the daemon's counters and its topology
 *   nodes    the daemon's nodes and which can share memory with which, as
 *            nvidia-imex-ctl -N shows an IMEX domain
 *   smi      this node's GPUs and their fabric, as nvidia-smi -q shows them
 *   errors   list every status code with its name and CUDA's message
 *   run      run a program on the emulation with a daemon of its own
 *   fault    change the running daemon's field faults (tools/fabmem_fault.c)
 * status, nodes and verify talk to the daemon at $FABMEM_SOCKET (else the
 * per-user default) and never start one; what they show is the daemon's
 * topology, never a config of the tool's own. status and nodes take --json:
 * the same facts as one JSON object (written with jansson), for scripts.
 * The handle may be given as 128 hex digits, as a file holding the 64 raw bytes
 * or the hex text, or as "-" for standard input. Exit status: 0 an intact
 * handle (verify: minted here and live), 1 a handle that is refused (its fields
 * are still shown) or no daemon answering, 2 bad usage or unreadable input. */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <jansson.h>

#include "fabmem.h"
#include "src/fabric/fabmemd.h"
#include "tools/connect.h"
#include "tools/fabmem_fault.h"
#include "run_job.h"
#include "src/base/env.h"

#define FAB__INPUT_MAX 4096

static void usage(FILE *out)
{
    fprintf(out,
            "usage: fabmem decode HANDLE    HANDLE: 128 hex digits, a file (raw or hex), or -\n"
            "       fabmem verify HANDLE    ask the daemon: minted here? memory still live?\n"
            "       fabmem status [--json]  the daemon's counters and its topology\n"
            "       fabmem nodes [--json]   the daemon's nodes and which can share with which\n"
            "       fabmem smi [--json]     this node's GPUs and their fabric (nvidia-smi -q)\n"
            "       fabmem errors           list status codes, names and messages\n"
            "       fabmem run [--config FILE] [--node NAME] [--kernels LIB]... -- PROGRAM [ARG...]\n"
            "                               run PROGRAM on the emulation, with a daemon of\n"
            "                               its own serving FILE, on node NAME, its kernels'\n"
            "                               CPU implementations from each LIB\n"
            "       fabmem fault NODE KEY=VALUE... | channel N withdraw|restore | reset\n"
            "                               change the running daemon's field faults\n"
            "                               (imex, fabric_state, fabric_manager, gpus_isolated)\n"
            "       fabmem run --node-per-rank [--rank-env RANK NAME=VALUE]... [--config FILE]\n"
            "                  -- PROGRAM [ARG...]\n"
            "                               one rank of an MPI job (mpirun ... fabmem run\n"
            "                               --node-per-rank ...): rank r on the topology's r-th\n"
            "                               GPU, all ranks sharing one daemon (docs/mpi.md)\n"
            "       fabmem run --check [--error-exitcode N] [--json FILE] ... -- PROGRAM [ARG...]\n"
            "                               the same, with libcuda's lifetime checker in every\n"
            "                               process: leaks at exit, misuse at once; exit N on\n"
            "                               any finding; every finding as JSON into FILE\n"
            "       fabmem --version        the version of fabmem\n"
            "       fabmem help\n"
            "\n"
            "verify, status and nodes ask the fabmemd at $FABMEM_SOCKET (else the per-user\n"
            "socket) and never start one; they show the daemon's topology, never a config\n"
            "of their own. --json prints one JSON object instead of text.\n"
            "\n"
            "Exit status:\n"
            "  0  success (decode: an intact handle; verify: minted here and live)\n"
            "  1  a refused handle (its fields are still shown), or no daemon answering\n"
            "  2  bad usage or unreadable input\n"
            "\n"
            "Environment:\n"
            "  FABMEM_SOCKET  the daemon's socket\n"
            "  FABMEM_NODE    the node this process sits on (default: the first)\n"
            "  FABMEM_LOG     error, warn (default), info or debug\n"
            "\n"
            "Documentation: docs/tools.md and docs/fabric.md in the fabmem sources.\n");
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
    fab_client_t *client = fab__tool_connect("fabmem");
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

/* A uuid as CUDA and NVML print one: 8-4-4-4-12 hex digits. */
static void uuid_text(const fab_uuid_t *uuid, char out[37])
{
    int k = 0;
    for (int i = 0; i < 16; i++) {
        if (i == 4 || i == 6 || i == 8 || i == 10)
            out[k++] = '-';
        snprintf(out + k, 3, "%02x", uuid->bytes[i]);
        k += 2;
    }
    out[k] = '\0';
}

/* The daemon's topology as JSON: driver, this process's node, and each node
 * with its devices. */
static json_t *topology_json(const fab_topology_t *topology, int here)
{
    json_t *nodes = json_array();
    for (int i = 0; i < fab_topology_node_count(topology); i++) {
        fab_node_info_t info;
        if (fab_topology_node(topology, i, &info) != FAB_SUCCESS)
            continue;
        char cluster[37];
        uuid_text(&info.cluster_uuid, cluster);
        json_t *devices = json_array();
        for (int d = 0; d < info.device_count; d++) {
            fab_device_info_t dev;
            if (fab_topology_device(topology, i, d, &dev) != FAB_SUCCESS)
                continue;
            char uuid[37], cc[24];
            uuid_text(&dev.uuid, uuid);
            snprintf(cc, sizeof(cc), "%d.%d", dev.compute_major, dev.compute_minor);
            json_array_append_new(
                devices, json_pack("{s:i, s:s, s:s, s:I, s:I, s:s, s:i}", "index", d, "name",
                                   dev.name, "uuid", uuid, "memory", (json_int_t)dev.total_memory,
                                   "granularity", (json_int_t)dev.granularity,
                                   "compute_capability", cc, "sm_count", dev.sm_count));
        }
        json_array_append_new(nodes, json_pack("{s:i, s:s, s:s, s:s, s:I, s:s, s:o}", "index", i,
                                               "name", info.name, "imex_domain", info.imex_domain,
                                               "cluster_uuid", cluster, "clique_id",
                                               (json_int_t)info.clique_id, "fabric_state",
                                               fabric_state_name(info.fabric_state), "devices",
                                               devices));
    }
    return json_pack("{s:i, s:i, s:o}", "driver_version", fab_topology_driver_version(topology),
                     "this_node", here, "nodes", nodes);
}

static int print_json(json_t *root)
{
    int rc = json_dumpf(root, stdout, JSON_INDENT(2) | JSON_PRESERVE_ORDER) == 0 ? 0 : 1;
    putchar('\n');
    json_decref(root);
    return rc;
}

/* The client and its daemon's topology, for status and nodes; NULL when no
 * daemon answers (said on stderr). */
static fab_client_t *topology_of_daemon(const fab_topology_t **topology_out)
{
    fab_client_t *client = fab__tool_connect("fabmem");
    if (client == NULL)
        return NULL;
    fab_status_t status = fab_client_topology(client, topology_out);
    if (status != FAB_SUCCESS) {
        fprintf(stderr, "fabmem: the daemon did not answer: %s\n", fab_status_name(status));
        fab_client_close(client);
        return NULL;
    }
    return client;
}

static int cmd_status(bool json)
{
    const fab_topology_t *topology = NULL;
    fab_client_t *client = topology_of_daemon(&topology);
    if (client == NULL)
        return 1;
    fab_daemon_stats_t stats;
    fab_status_t status = fab_client_stats(client, &stats);
    if (status != FAB_SUCCESS) {
        fprintf(stderr, "fabmem: the daemon did not answer: %s\n", fab_status_name(status));
        fab_client_close(client);
        return 1;
    }
    int here = fab_client_node_index(client);
    if (json) {
        json_t *daemon = json_pack("{s:I, s:I, s:I, s:I, s:I, s:I}", "pid", (json_int_t)stats.pid,
                                   "clients", (json_int_t)stats.clients, "allocations",
                                   (json_int_t)stats.allocations, "bytes",
                                   (json_int_t)stats.bytes, "references",
                                   (json_int_t)stats.references, "rss", (json_int_t)stats.rss);
        json_t *root = json_pack("{s:o, s:o}", "daemon", daemon, "topology",
                                 topology_json(topology, here));
        fab_client_close(client);
        return print_json(root);
    }
    printf("daemon       pid %llu\n", (unsigned long long)stats.pid);
    printf("clients      %llu\n", (unsigned long long)stats.clients);
    printf("allocations  %llu (%llu bytes)\n", (unsigned long long)stats.allocations,
           (unsigned long long)stats.bytes);
    printf("references   %llu\n", (unsigned long long)stats.references);
    printf("daemon rss   %llu bytes\n", (unsigned long long)stats.rss);
    /* The daemon's topology, the one it enforces, not a config of ours. */
    printf("topology     %d node(s), driver %d; this process sits on node %d\n",
           fab_topology_node_count(topology), fab_topology_driver_version(topology), here);
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

/* One cell of the reachability table: what an import on node `to` of memory
 * exported on node `from` gets from the topology (fab_topology_path). */
static char path_mark(const fab_topology_t *topology, int from, int to)
{
    switch (fab_topology_path(topology, from, to)) {
    case FAB_SUCCESS:
        return 'C';
    case FAB_ERROR_NOT_SUPPORTED:
        return 'N';
    default:
        return '.';
    }
}

static const char *path_word(char mark)
{
    return mark == 'C' ? "connected" : mark == 'N' ? "no_fabric_path" : "other_domain";
}

static int cmd_nodes(bool json)
{
    const fab_topology_t *topology = NULL;
    fab_client_t *client = topology_of_daemon(&topology);
    if (client == NULL)
        return 1;
    int here = fab_client_node_index(client);
    int n = fab_topology_node_count(topology);
    fab_node_info_t mine;
    if (fab_topology_node(topology, here, &mine) != FAB_SUCCESS) {
        fprintf(stderr, "fabmem: the daemon's topology has no node %d\n", here);
        fab_client_close(client);
        return 1;
    }
    /* The domain is UP when every node of this process's IMEX domain has
     * its fabric COMPLETED; else DEGRADED, with the count of those not. */
    int in_domain = 0, not_ready = 0;
    for (int i = 0; i < n; i++) {
        fab_node_info_t info;
        if (fab_topology_node(topology, i, &info) != FAB_SUCCESS ||
            strcmp(info.imex_domain, mine.imex_domain) != 0)
            continue;
        in_domain++;
        not_ready += info.fabric_state != FAB_FABRIC_STATE_COMPLETED;
    }
    const char *domain_state = not_ready == 0 ? "UP" : "DEGRADED";
    if (json) {
        json_t *nodes = json_array();
        for (int i = 0; i < n; i++) {
            fab_node_info_t info;
            if (fab_topology_node(topology, i, &info) != FAB_SUCCESS)
                continue;
            char cluster[37];
            uuid_text(&info.cluster_uuid, cluster);
            json_t *to = json_object();
            for (int j = 0; j < n; j++) {
                fab_node_info_t other;
                if (fab_topology_node(topology, j, &other) == FAB_SUCCESS)
                    json_object_set_new(to, other.name,
                                        json_string(path_word(path_mark(topology, i, j))));
            }
            json_array_append_new(
                nodes, json_pack("{s:i, s:s, s:s, s:s, s:I, s:s, s:i, s:o}", "index", i, "name",
                                 info.name, "imex_domain", info.imex_domain, "cluster_uuid",
                                 cluster, "clique_id", (json_int_t)info.clique_id, "fabric_state",
                                 fabric_state_name(info.fabric_state), "gpus", info.device_count,
                                 "can_share_with", to));
        }
        json_t *root = json_pack("{s:s, s:s, s:s, s:i, s:i, s:o}", "imex_domain",
                                 mine.imex_domain, "domain_state", domain_state, "this_node",
                                 mine.name, "nodes_in_domain", in_domain, "nodes_not_ready",
                                 not_ready, "nodes", nodes);
        fab_client_close(client);
        return print_json(root);
    }
    printf("IMEX domain  %s, %d node(s), this process on %s (#%d)\n", mine.imex_domain,
           in_domain, mine.name, here);
    printf("\n  #    node              domain            cluster                               "
           "clique  fabric\n");
    for (int i = 0; i < n; i++) {
        fab_node_info_t info;
        if (fab_topology_node(topology, i, &info) != FAB_SUCCESS)
            continue;
        char cluster[37];
        uuid_text(&info.cluster_uuid, cluster);
        printf("  %-4d %-17s %-17s %-37s %-7u %s\n", i, info.name, info.imex_domain, cluster,
               info.clique_id, fabric_state_name(info.fabric_state));
    }
    printf("\nwho can import whose memory (row: exporter, column: importer)\n"
           "  C  connected: one IMEX domain and an NVLink path\n"
           "  N  one domain, no fabric path: an import gets NOT_SUPPORTED\n"
           "  .  another IMEX domain: the handle is INVALID_HANDLE there\n\n");
    printf("  from\\to");
    for (int j = 0; j < n; j++)
        printf(" %2d", j);
    printf("\n");
    for (int i = 0; i < n; i++) {
        printf("  %7d", i);
        for (int j = 0; j < n; j++)
            printf("  %c", path_mark(topology, i, j));
        printf("\n");
    }
    if (not_ready == 0)
        printf("\ndomain state UP\n");
    else
        printf("\ndomain state DEGRADED: %d of %d node(s) not COMPLETED\n", not_ready, in_domain);
    fab_client_close(client);
    return 0;
}

/* ---- smi ------------------------------------------------------------------ */

/* One 2-bit field of the fabric health mask, as nvidia-smi words it. */
static const char *health_field(uint32_t mask, int shift, const char *if_true, const char *if_false)
{
    switch ((mask >> shift) & 3u) {
    case FAB_FABRIC_HEALTH_FIELD_TRUE:
        return if_true;
    case FAB_FABRIC_HEALTH_FIELD_FALSE:
        return if_false;
    default:
        return "N/A";
    }
}

/* fabmem smi: per GPU of this process's node (FABMEM_NODE), what
 * nvidia-smi -q prints of it and of its Fabric section, from the daemon's
 * topology: the values NVML and libcuda give a program on the node. */
static int cmd_smi(bool json)
{
    const fab_topology_t *topology = NULL;
    fab_client_t *client = topology_of_daemon(&topology);
    if (client == NULL)
        return 1;
    int here = fab_client_node_index(client);
    fab_node_info_t node;
    if (fab_topology_node(topology, here, &node) != FAB_SUCCESS) {
        fprintf(stderr, "fabmem: the daemon's topology has no node %d\n", here);
        fab_client_close(client);
        return 1;
    }
    char cluster[37];
    uuid_text(&node.cluster_uuid, cluster);
    bool fabric = node.fabric_state != FAB_FABRIC_STATE_NOT_SUPPORTED;
    const char *bandwidth = health_field(node.fabric_health, FAB_FABRIC_HEALTH_SHIFT_DEGRADED_BW,
                                         "Degraded", "Full");
    const char *recovery = health_field(node.fabric_health, FAB_FABRIC_HEALTH_SHIFT_ROUTE_RECOVERY,
                                        "True", "False");
    const char *unhealthy = health_field(node.fabric_health,
                                         FAB_FABRIC_HEALTH_SHIFT_ROUTE_UNHEALTHY, "True", "False");
    const char *timeout = health_field(node.fabric_health,
                                       FAB_FABRIC_HEALTH_SHIFT_ACCESS_TIMEOUT_RECOVERY, "True",
                                       "False");
    json_t *gpus = json ? json_array() : NULL;
    if (!json)
        printf("Driver Version (CUDA)  %d\nNode                   %s (#%d)\nAttached GPUs          %d\n",
               fab_topology_driver_version(topology), node.name, here, node.device_count);
    for (int d = 0; d < node.device_count; d++) {
        fab_device_info_t dev;
        if (fab_topology_device(topology, here, d, &dev) != FAB_SUCCESS)
            continue;
        char uuid[FAB_UUID_STRING_MAX], bus[FAB_PCI_BUS_ID_MAX], cc[24];
        fab_device_uuid_string(&dev.uuid, uuid, sizeof(uuid));
        fab_device_pci_bus_id(&dev, bus, sizeof(bus));
        snprintf(cc, sizeof(cc), "%d.%d", dev.compute_major, dev.compute_minor);
        if (json) {
            json_t *f = json_pack("{s:s, s:I, s:I, s:s, s:{s:s, s:s, s:s, s:s}}", "state",
                                  fabric_state_name(node.fabric_state), "status",
                                  (json_int_t)node.fabric_status, "clique_id",
                                  (json_int_t)node.clique_id, "cluster_uuid", cluster, "health",
                                  "bandwidth", bandwidth, "route_recovery_in_progress", recovery,
                                  "route_unhealthy", unhealthy, "access_timeout_recovery",
                                  timeout);
            json_array_append_new(
                gpus, json_pack("{s:i, s:s, s:s, s:s, s:I, s:s, s:o}", "index", d, "name",
                                dev.name, "uuid", uuid, "bus_id", bus, "memory",
                                (json_int_t)dev.total_memory, "compute_capability", cc, "fabric",
                                f));
            continue;
        }
        printf("\nGPU %s\n", bus);
        printf("    Product Name           %s\n", dev.name);
        printf("    GPU UUID               %s\n", uuid);
        printf("    Minor Number           %d\n", d);
        printf("    Bus Id                 %s\n", bus);
        printf("    Total Memory           %llu MiB\n",
               (unsigned long long)(dev.total_memory >> 20));
        printf("    Compute Capability     %s\n", cc);
        printf("    Fabric\n");
        printf("        State              %s\n", fabric ? fabric_state_name(node.fabric_state)
                                                         : "N/A");
        printf("        Status             %s\n",
               !fabric ? "N/A" : node.fabric_status == 0 ? "Success" : "Failure");
        printf("        CliqueId           %u\n", node.clique_id);
        printf("        ClusterUUID        %s\n", cluster);
        printf("        Health\n");
        printf("            Bandwidth                    %s\n", bandwidth);
        printf("            Route Recovery in progress   %s\n", recovery);
        printf("            Route Unhealthy              %s\n", unhealthy);
        printf("            Access Timeout Recovery      %s\n", timeout);
    }
    int rc = 0;
    if (json) /* before the close: the topology lives as long as the client */
        rc = print_json(json_pack("{s:i, s:s, s:i, s:o}", "driver_version",
                                  fab_topology_driver_version(topology), "node", node.name,
                                  "node_index", here, "gpus", gpus));
    fab_client_close(client);
    return rc;
}

/* ---- run ------------------------------------------------------------------ */

/* The folder of the driver emulation, relative to this program: installed,
 * <bindir>/<FABMEM_RUN_EMULATION_REL>; in the build tree, tools/../lib/fabmem.
 * The first that holds libcuda.so.1, into buf; -1 when neither does. */
static int emulation_dir(char *buf, size_t cap)
{
    char self[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
    if (n <= 0)
        return -1;
    self[n] = '\0';
    char *slash = strrchr(self, '/');
    if (slash == NULL)
        return -1;
    *slash = '\0';
    static const char *const rel[] = {FABMEM_RUN_EMULATION_REL, "../lib/fabmem"};
    for (size_t i = 0; i < sizeof(rel) / sizeof(rel[0]); i++) {
        char lib[PATH_MAX + 64];
        snprintf(lib, sizeof(lib), "%s/%s/libcuda.so.1", self, rel[i]);
        char real[PATH_MAX];
        if (realpath(lib, real) != NULL) {
            *strrchr(real, '/') = '\0';
            snprintf(buf, cap, "%s", real);
            return 0;
        }
    }
    return -1;
}

/* Start fabmemd (a child of ours) on socket with config; its pid once it
 * listens, else -1 (its own message on stderr says why). */
static pid_t run_daemon_start(const char *socket, const char *config)
{
    char exe[PATH_MAX];
    if (fab__fabmemd_find(exe, sizeof(exe)) != 0) {
        fprintf(stderr, "fabmem run: no fabmemd found (set FABMEM_DAEMON)\n");
        return -1;
    }
    const char *args[5] = {"--socket", socket};
    if (config != NULL) {
        args[2] = "--config";
        args[3] = config;
    }
    fab__fabmemd_spawn_t spawn = {.exe = exe, .args = args, .ready_fd = -1};
    pid_t pid = 0;
    if (fab__fabmemd_spawn(&spawn, &pid) == 0)
        return pid;
    fprintf(stderr, "fabmem run: fabmemd did not start (%s)\n", exe);
    return -1;
}

static void remove_tree(const char *dir)
{
    char path[PATH_MAX];
    static const char *const files[] = {"fabmemd.sock", "fabmemd.sock.lock", "fabmemd.sock.key"};
    for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
        snprintf(path, sizeof(path), "%s/%s", dir, files[i]);
        unlink(path);
    }
    rmdir(dir);
}

/* ---- run --node-per-rank (the job's side is run_job.c) ----------------------- */

/* The program's pid while it runs, for the SIGTERM handler. */
static volatile sig_atomic_t run_child, run_sigterm;

/* The launcher tears a job down with SIGTERM (mpirun, when a rank fails):
 * the program gets it, and we stay to leave the job cleanly. */
static void run_on_sigterm(int sig)
{
    run_sigterm = 1;
    if (run_child > 0)
        kill((pid_t)run_child, sig);
}

static void run_forward_sigterm(void)
{
    struct sigaction action;
    memset(&action, 0, sizeof(action));
    action.sa_handler = run_on_sigterm;
    sigemptyset(&action.sa_mask);
    sigaction(SIGTERM, &action, NULL); /* no SA_RESTART: waits see EINTR */
}

/* --rank-env RANK NAME=VALUE: a rank number and an assignment. */
static int run_rank_env_check(const char *rank, const char *assignment)
{
    char *end;
    long r = strtol(rank, &end, 10);
    const char *eq = strchr(assignment, '=');
    if (*rank == '\0' || *end != '\0' || r < 0 || r > INT_MAX || eq == NULL || eq == assignment) {
        fprintf(stderr, "fabmem run: --rank-env %s %s: want RANK NAME=VALUE\n", rank, assignment);
        return -1;
    }
    /* --node-per-rank chooses each rank's node and its GPU on it together;
     * another node for one rank would leave it a GPU index of the first. */
    if ((size_t)(eq - assignment) == strlen(FAB__ENV_NODE) &&
        strncmp(assignment, FAB__ENV_NODE, (size_t)(eq - assignment)) == 0) {
        fprintf(stderr, "fabmem run: --rank-env %s %s: --node-per-rank places every rank "
                        "(rank r on the r-th GPU of the topology, nodes in the config's order); "
                        "to put a rank on another node, order the config's nodes so, or run it "
                        "with fabmem run --node NODE\n", rank, assignment);
        return -1;
    }
    return 0;
}

/* The host identity NCCL gives a process (its host hash, from NCCL_HOSTID,
 * else the host name and boot id): each emulated node is a host of its own,
 * as a tray of an NVL72 is, so its ranks get the node's name with the real
 * host's. Only where the user has not set one. */
static void run_node_host_id(const char *node)
{
    const char *set = getenv("NCCL_HOSTID");
    if (set != NULL && *set != '\0')
        return;
    char host[256] = "localhost";
    if (gethostname(host, sizeof(host) - 1) != 0)
        snprintf(host, sizeof(host), "localhost");
    host[sizeof(host) - 1] = '\0';
    char id[sizeof(host) + FAB_NAME_MAX + 16];
    snprintf(id, sizeof(id), "%s/fabmem-node/%s", host, node);
    setenv("NCCL_HOSTID", id, 1);
}

/* ---- run --check ------------------------------------------------------------ */

/* fabmem run --check: the lifetime checker (docs/cuda.md, "Lifetime
 * checker") in every process of the run. Each process's libcuda appends one
 * JSON line per finding, and one "process" line at its end, to the file
 * FABMEM_CHECK_FILE names, in the run's private directory; once the program
 * has exited, every line (its children's too) is gathered here. */
typedef struct run_check {
    bool on;
    int error_exitcode; /* -1: the program's status whatever was found */
    const char *json;   /* --json FILE, or NULL */
    char file[PATH_MAX + 16];
} run_check_t;

/* An option of --check's at argv[*i]: 1 taken (and *i moved past its
 * argument), 0 not one of them, -1 a bad one (said on stderr). */
static int run_check_option(run_check_t *c, int argc, char **argv, int *i)
{
    const char *arg = argv[*i];
    if (strcmp(arg, "--check") == 0) {
        c->on = true;
        return 1;
    }
    if (strcmp(arg, "--error-exitcode") == 0 && *i + 1 < argc) {
        char *end;
        errno = 0;
        long n = strtol(argv[*i + 1], &end, 10);
        if (errno || *end || end == argv[*i + 1] || n < 0 || n > 255) {
            fprintf(stderr, "fabmem run: --error-exitcode %s: not a number from 0 to 255\n",
                    argv[*i + 1]);
            return -1;
        }
        c->error_exitcode = (int)n;
        c->on = true;
        ++*i;
        return 1;
    }
    if (strcmp(arg, "--json") == 0 && *i + 1 < argc) {
        c->json = argv[++*i];
        c->on = true;
        return 1;
    }
    return 0;
}

/* Join the job, then give the program its node and GPU, and the --rank-env
 * settings meant for its rank. 0, or the exit status to give. */
static int run_per_rank_join(fab__job_t *job, const char *config, bool config_given,
                             const char *rank_env[][2], int nrank_env)
{
    if (fab__job_rank(job) != 0)
        return 2;
    int rc = fab__job_join(job, config, config_given);
    if (rc != 0)
        return rc;
    char device[16];
    snprintf(device, sizeof(device), "%d", job->device);
    setenv("CUDA_VISIBLE_DEVICES", device, 1);
    run_node_host_id(job->node);
    for (int i = 0; i < nrank_env; i++) {
        if (atoi(rank_env[i][0]) != job->rank)
            continue;
        const char *eq = strchr(rank_env[i][1], '=');
        char name[256];
        snprintf(name, sizeof(name), "%.*s", (int)(eq - rank_env[i][1]), rank_env[i][1]);
        setenv(name, eq + 1, 1);
    }
    return 0;
}

/* Before the program starts: the checker on in every process of the run. */
static void run_check_arm(run_check_t *c, const char *dir)
{
    if (!c->on)
        return;
    snprintf(c->file, sizeof(c->file), "%s/check.jsonl", dir);
    setenv(FAB__ENV_CHECK, "1", 1);
    setenv(FAB__ENV_CHECK_FILE, c->file, 1);
}

/* After it has exited with rc: gather the findings, write --json, say how
 * many there were, and give the run's exit status. The file is removed. */
static int run_check_collect(run_check_t *c, int rc)
{
    if (!c->on)
        return rc;
    json_t *findings = json_array(), *processes = json_array();
    FILE *in = fopen(c->file, "r");
    char *line = NULL;
    size_t cap = 0;
    while (in && getline(&line, &cap, in) > 0) {
        json_t *obj = json_loads(line, 0, NULL);
        if (!obj)
            continue; /* a process killed mid-write leaves no whole line */
        if (json_is_true(json_object_get(obj, "process")))
            json_array_append_new(processes, obj);
        else
            json_array_append_new(findings, obj);
    }
    free(line);
    if (in)
        fclose(in);
    unlink(c->file);
    size_t n = json_array_size(findings);
    fprintf(stderr, "fabmem run --check: %zu finding%s in %zu process%s\n", n, n == 1 ? "" : "s",
            json_array_size(processes), json_array_size(processes) == 1 ? "" : "es");
    if (c->json) {
        json_t *root = json_pack("{s:I, s:o, s:o}", "count", (json_int_t)n, "findings", findings,
                                 "processes", processes);
        if (!root || json_dump_file(root, c->json, JSON_INDENT(2)) != 0) {
            fprintf(stderr, "fabmem run: --json %s: cannot write it\n", c->json);
            if (rc == 0)
                rc = 1;
        }
        json_decref(root);
    } else {
        json_decref(findings);
        json_decref(processes);
    }
    return n > 0 && c->error_exitcode >= 0 ? c->error_exitcode : rc;
}

/* fabmem run: the program runs with FABMEM_SOCKET at a daemon started for it
 * alone (in a fresh private directory), FABMEM_CONFIG and FABMEM_NODE as
 * given, FABMEM_NO_AUTOSTART=1 (so that nothing else starts), and the
 * emulation's folder first on LD_LIBRARY_PATH (where libcuda.so.1 and the
 * runtime, libcudart.so.13, sit), and each --kernels library, as an absolute
 * path, first in FABMEM_KERNELS; the daemon is stopped and its directory
 * removed when the program ends. The exit status is the program's (128 +
 * the signal that ended it). */
static int cmd_run(int argc, char **argv)
{
    const char *config = NULL, *node = NULL;
    char kernels[8192] = "";
    bool per_rank = false;
    const char *rank_env[16][2]; /* --rank-env RANK NAME=VALUE */
    int nrank_env = 0;
    run_check_t check = {.error_exitcode = -1};
    int i = 2;
    for (; i < argc && strcmp(argv[i], "--") != 0; i++) {
        int taken = run_check_option(&check, argc, argv, &i);
        if (taken < 0)
            return 2;
        if (taken > 0)
            continue;
        if (strcmp(argv[i], "--config") == 0 && i + 1 < argc)
            config = argv[++i];
        else if (strcmp(argv[i], "--node-per-rank") == 0)
            per_rank = true;
        else if (strcmp(argv[i], "--rank-env") == 0 && i + 2 < argc) {
            if (nrank_env == 16 || run_rank_env_check(argv[i + 1], argv[i + 2]) != 0)
                return 2;
            rank_env[nrank_env][0] = argv[++i];
            rank_env[nrank_env++][1] = argv[++i];
        }
        else if (strcmp(argv[i], "--node") == 0 && i + 1 < argc)
            node = argv[++i];
        else if (strcmp(argv[i], "--kernels") == 0 && i + 1 < argc) {
            char lib[PATH_MAX];
            if (realpath(argv[++i], lib) == NULL) {
                fprintf(stderr, "fabmem run: --kernels %s: %s\n", argv[i], strerror(errno));
                return 2;
            }
            size_t used = strlen(kernels);
            if (used + strlen(lib) + 2 > sizeof(kernels)) {
                fprintf(stderr, "fabmem run: too many --kernels\n");
                return 2;
            }
            snprintf(kernels + used, sizeof(kernels) - used, "%s%s", used ? ":" : "", lib);
        } else {
            fprintf(stderr, "fabmem run: unknown option %s\n", argv[i]);
            usage(stderr);
            return 2;
        }
    }
    if (i + 1 >= argc) {
        fprintf(stderr, "fabmem run: no program after --\n");
        usage(stderr);
        return 2;
    }
    char **program = argv + i + 1;
    if (per_rank && node != NULL) {
        fprintf(stderr, "fabmem run: --node and --node-per-rank conflict\n");
        return 2;
    }
    if (!per_rank && nrank_env > 0) {
        fprintf(stderr, "fabmem run: --rank-env needs --node-per-rank\n");
        return 2;
    }
    char config_path[PATH_MAX];
    bool config_given = config != NULL;
    if (config != NULL) {
        if (realpath(config, config_path) == NULL) {
            fprintf(stderr, "fabmem run: --config %s: %s\n", config, strerror(errno));
            return 2;
        }
        config = config_path;
    } else {
        config = getenv(FAB__ENV_CONFIG); /* the daemon's default rule */
    }
    char emu[PATH_MAX];
    if (emulation_dir(emu, sizeof(emu)) != 0) {
        fprintf(stderr, "fabmem run: the driver emulation (libcuda.so.1) is not next to "
                        "this program\n");
        return 2;
    }
    /* --node-per-rank: the job's daemon, shared with the other ranks. */
    fab__job_t job = {0};
    char dir[PATH_MAX] = "";
    char socket[PATH_MAX + 16];
    pid_t daemon = -1;
    if (per_rank) {
        int rc = run_per_rank_join(&job, config, config_given, rank_env, nrank_env);
        if (rc != 0)
            return rc;
        snprintf(socket, sizeof(socket), "%s", job.socket);
        node = job.node;
    } else {
        const char *tmp = getenv("TMPDIR");
        snprintf(dir, sizeof(dir), "%s/fabmem-run.XXXXXX", tmp && *tmp ? tmp : "/tmp");
        if (mkdtemp(dir) == NULL) {
            fprintf(stderr, "fabmem run: %s: %s\n", dir, strerror(errno));
            return 1;
        }
        snprintf(socket, sizeof(socket), "%s/fabmemd.sock", dir);
        daemon = run_daemon_start(socket, config);
        if (daemon < 0) {
            remove_tree(dir);
            return 1;
        }
    }
    setenv(FAB__ENV_SOCKET, socket, 1);
    setenv(FAB__ENV_NO_AUTOSTART, "1", 1);
    /* A rank's findings are its own: each rank gathers its program's in a
     * directory of its own, and --json FILE becomes FILE.<rank>. */
    char check_dir[PATH_MAX] = "", json_rank[PATH_MAX + 16];
    if (per_rank && check.on) {
        const char *tmp = getenv("TMPDIR");
        snprintf(check_dir, sizeof(check_dir), "%s/fabmem-check.XXXXXX",
                 tmp && *tmp ? tmp : "/tmp");
        if (mkdtemp(check_dir) == NULL) {
            fprintf(stderr, "fabmem run: %s: %s\n", check_dir, strerror(errno));
            fab__job_leave(&job, false);
            return 1;
        }
        if (check.json != NULL) {
            snprintf(json_rank, sizeof(json_rank), "%s.%d", check.json, job.rank);
            check.json = json_rank;
        }
    }
    run_check_arm(&check, per_rank ? check_dir : dir);
    if (config != NULL)
        setenv(FAB__ENV_CONFIG, config, 1);
    if (node != NULL)
        setenv(FAB__ENV_NODE, node, 1);
    if (kernels[0] != '\0') {
        const char *old_kernels = getenv(FAB__ENV_KERNELS);
        char all[sizeof(kernels) + PATH_MAX];
        snprintf(all, sizeof(all), "%s%s%s", kernels, old_kernels && *old_kernels ? ":" : "",
                 old_kernels ? old_kernels : "");
        setenv(FAB__ENV_KERNELS, all, 1);
    }
    /* The emulation's folder first, unless it is first already. */
    const char *old = getenv("LD_LIBRARY_PATH");
    size_t emu_len = strlen(emu);
    if (!old || strncmp(old, emu, emu_len) != 0 || (old[emu_len] != '\0' && old[emu_len] != ':')) {
        char libpath[2 * PATH_MAX + 2];
        snprintf(libpath, sizeof(libpath), "%s%s%s", emu, old && *old ? ":" : "", old ? old : "");
        setenv("LD_LIBRARY_PATH", libpath, 1);
    }

    /* The program gets the terminal's signals; we wait for it and clean up. */
    signal(SIGINT, SIG_IGN);
    signal(SIGQUIT, SIG_IGN);
    /* A rank passes the launcher's SIGTERM on; held back until the child's
     * pid is known, so that none comes in between and is lost. */
    sigset_t term, old_mask;
    sigemptyset(&old_mask);
    sigemptyset(&term);
    sigaddset(&term, SIGTERM);
    if (per_rank) {
        run_forward_sigterm();
        sigprocmask(SIG_BLOCK, &term, &old_mask);
    }
    fflush(NULL);
    pid_t child = fork();
    if (child == 0) {
        signal(SIGINT, SIG_DFL);
        signal(SIGQUIT, SIG_DFL);
        if (per_rank) {
            signal(SIGTERM, SIG_DFL);
            sigprocmask(SIG_SETMASK, &old_mask, NULL);
        }
        execvp(program[0], program);
        fprintf(stderr, "fabmem run: %s: %s\n", program[0], strerror(errno));
        _exit(127);
    }
    run_child = child;
    if (per_rank)
        sigprocmask(SIG_SETMASK, &old_mask, NULL);
    int status = 0, rc = 1;
    if (child > 0) {
        while (waitpid(child, &status, 0) < 0 && errno == EINTR)
            ;
        rc = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    }
    run_child = 0;
    if (per_rank) {
        fab__job_leave(&job, run_sigterm != 0);
        if (check.on) {
            rc = run_check_collect(&check, rc);
            rmdir(check_dir);
        }
        return rc;
    }
    kill(daemon, SIGTERM);
    int daemon_status = 0;
    while (waitpid(daemon, &daemon_status, 0) < 0 && errno == EINTR)
        ;
    rc = run_check_collect(&check, rc);
    remove_tree(dir);
    if (!WIFEXITED(daemon_status) || WEXITSTATUS(daemon_status) != 0)
        fprintf(stderr, "fabmem run: the daemon did not exit cleanly\n");
    return rc;
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
    if (argc >= 2 && strcmp(argv[1], "run") == 0)
        return cmd_run(argc, argv);
    if (argc >= 2 && strcmp(argv[1], "fault") == 0)
        return fab__tool_fault(argc, argv);
    if (argc == 3 && strcmp(argv[1], "decode") == 0)
        return cmd_decode(argv[2]);
    if (argc == 3 && strcmp(argv[1], "verify") == 0)
        return cmd_verify(argv[2]);
    bool json = argc == 3 && strcmp(argv[2], "--json") == 0;
    if ((argc == 2 || json) && strcmp(argv[1], "status") == 0)
        return cmd_status(json);
    if ((argc == 2 || json) && strcmp(argv[1], "nodes") == 0)
        return cmd_nodes(json);
    if ((argc == 2 || json) && strcmp(argv[1], "smi") == 0)
        return cmd_smi(json);
    if (argc == 2 && strcmp(argv[1], "errors") == 0)
        return cmd_errors();
    if (argc == 2 && strcmp(argv[1], "--version") == 0) {
        printf("fabmem %s (handle format %d)\n", FAB_VERSION_STRING, FAB_HANDLE_VERSION);
        return 0;
    }
    if (argc == 2 && (strcmp(argv[1], "help") == 0 || strcmp(argv[1], "--help") == 0)) {
        usage(stdout);
        return 0;
    }
    usage(stderr);
    return 2;
}
