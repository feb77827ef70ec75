/* fabmem: the command-line tool. Subcommands:
 *   decode   show the fields of a 64-byte fabric handle and whether it is intact
 *   verify   ask the daemon whether it minted a handle and whether its memory lives
 *   status   the daemon's counters and its topology
 *   nodes    the daemon's nodes and which can share memory with which, as
 *            nvidia-imex-ctl -N shows an IMEX domain
 *   smi      this node's GPUs and their fabric, as nvidia-smi -q shows them
 *   errors   list every status code with its name and CUDA's message
 *   run      run a program on the emulation with a daemon of its own
 *            (tools/fabmem_run.c)
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
#include "tools/fabmem_run.h"
#include "run_job.h"
#include "src/base/env.h"
#include "src/base/hex.h"

#define FAB__INPUT_MAX 4096

void fab__tool_usage(FILE *out)
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

/* Hex text, ignoring white space; returns the byte count, or -1 if the text
 * holds anything else or an odd number of digits. */
static long parse_hex(const unsigned char *text, size_t len, uint8_t *out, size_t cap)
{
    size_t n = 0;
    int high = -1;
    for (size_t i = 0; i < len; i++) {
        if (isspace(text[i]))
            continue;
        int v = fab__hex_digit(text[i]);
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

/* The daemon's topology, as topology_of_daemon gets it, and this process's
 * node in it: its index in *here_out and its record in *node_out. NULL
 * (said on stderr, the connection closed) when either is missing. */
static fab_client_t *node_of_daemon(const fab_topology_t **topology_out, int *here_out,
                                    fab_node_info_t *node_out)
{
    fab_client_t *client = topology_of_daemon(topology_out);
    if (client == NULL)
        return NULL;
    *here_out = fab_client_node_index(client);
    if (fab_topology_node(*topology_out, *here_out, node_out) != FAB_SUCCESS) {
        fprintf(stderr, "fabmem: the daemon's topology has no node %d\n", *here_out);
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
    int here;
    fab_node_info_t mine;
    fab_client_t *client = node_of_daemon(&topology, &here, &mine);
    if (client == NULL)
        return 1;
    int n = fab_topology_node_count(topology);
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
    int here;
    fab_node_info_t node;
    fab_client_t *client = node_of_daemon(&topology, &here, &node);
    if (client == NULL)
        return 1;
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
        return fab__tool_run(argc, argv);
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
        fab__tool_usage(stdout);
        return 0;
    }
    fab__tool_usage(stderr);
    return 2;
}
