/* The config file: the topology read from an INI file with inih, or built
 * in when there is none, and freed. Its keys are FAB__CONFIG_KEYS'
 * (topology_impl.h), which docs/fabric.md's tables name; the readers and
 * the rules the topology makes are topology.c's.
 *
 * Nodes keep the order in which they first appear. An unknown section or key,
 * or a bad value, fails the load and is logged with file and line. */
#include "src/common/topology_impl.h"
#include "src/base/cuda_attributes.h"

#include <errno.h>
#include <ini.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "src/common/faultwords.h"
#include "src/common/log.h"
#include "src/base/env.h"
#include "src/base/hex.h"

#define FAB__GIB (1024ull * 1024 * 1024)
#define FAB__MIB (1024ull * 1024)

typedef struct fab__parse {
    fab_topology_t *topology;
    char error[200]; /* the first error; inih gives its line */
    int oom;
} fab__parse_t;

/* The default PCI device id: H100 SXM5's (0x2330) with NVIDIA's vendor id,
 * to match the default GPU name. */
#define FAB__PCI_DEVICE_ID_DEFAULT 0x233010deu

/* Defaults of the node at index: the platform place and the PCI domain come
 * from the index, so that every node of a rack has its own tray and no two
 * GPUs of one topology share a PCI address (NCCL, for one, takes two ranks
 * with one host and one bus id for the same GPU). */
static void fab__node_defaults(fab__node_t *node, const char *name, int index)
{
    memset(node, 0, sizeof(*node));
    snprintf(node->info.name, sizeof(node->info.name), "%s", name);
    node->info.fabric_status = 0;
    node->info.fabric_health = FAB_FABRIC_HEALTH_HEALTHY;
    snprintf(node->info.chassis_serial, sizeof(node->info.chassis_serial), "FABMEM-RACK0");
    node->info.slot_number = (uint8_t)index;
    node->info.tray_index = (uint8_t)index;
    node->info.host_id = 0;
    node->info.host_numa_nodes = 1;
    node->info.host_memory = 512 * FAB__GIB;
    node->device.pci_domain = (uint32_t)index;
    node->device.pci_device_id = FAB__PCI_DEVICE_ID_DEFAULT;
    snprintf(node->info.imex_domain, sizeof(node->info.imex_domain), "default");
    node->info.clique_id = 0;
    node->info.fabric_state = FAB_FABRIC_STATE_COMPLETED;
    node->info.device_count = 8;
    snprintf(node->device.name, sizeof(node->device.name), "fabmem H100 (emulated)");
    node->device.total_memory = 80 * FAB__GIB;
    node->device.granularity = 2 * FAB__MIB;
    node->device.handle_types = FAB_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR | FAB_HANDLE_TYPE_FABRIC;
    node->device.compute_major = 9;
    node->device.compute_minor = 0;
    node->device.sm_count = 132;
}

static fab_topology_t *fab__topology_new(void)
{
    fab_topology_t *t = calloc(1, sizeof(*t));
    if (t == NULL)
        return NULL;
    t->driver_version = FAB_DRIVER_VERSION_DEFAULT;
    t->socket_mode = 0600;
    t->limits.connections = FAB__LIMIT_CONNECTIONS_DEFAULT;
    t->limits.allocations = FAB__LIMIT_ALLOCATIONS_DEFAULT;
    t->limits.ipc_entries = FAB__LIMIT_IPC_ENTRIES_DEFAULT;
    t->limits.references = FAB__LIMIT_REFERENCES_DEFAULT;
    t->limits.fds_in_flight = FAB__LIMIT_FDS_IN_FLIGHT_DEFAULT;
    t->imex_timeout_ms = FAB__IMEX_TIMEOUT_MS_DEFAULT;
    return t;
}

void fab_topology_destroy(fab_topology_t *topology)
{
    if (topology == NULL)
        return;
    for (int i = 0; i < topology->nchannels; i++) {
        free(topology->channels[i].uids);
        free(topology->channels[i].gids);
    }
    free(topology->channels);
    free(topology->nodes);
    free(topology->state_file);
    free(topology);
}

static fab__node_t *fab__node_get(fab__parse_t *p, const char *name)
{
    fab_topology_t *t = p->topology;
    for (int i = 0; i < t->nnodes; i++) {
        if (strcmp(t->nodes[i].info.name, name) == 0)
            return &t->nodes[i];
    }
    fab__node_t *grown = realloc(t->nodes, sizeof(*grown) * (size_t)(t->nnodes + 1));
    if (grown == NULL) {
        p->oom = 1;
        return NULL;
    }
    t->nodes = grown;
    fab__node_defaults(&t->nodes[t->nnodes], name, t->nnodes);
    return &t->nodes[t->nnodes++];
}

static fab__channel_t *fab__channel_get(fab_topology_t *t, unsigned number, int *oom)
{
    for (int i = 0; i < t->nchannels; i++) {
        if (t->channels[i].number == number)
            return &t->channels[i];
    }
    fab__channel_t *grown = realloc(t->channels, sizeof(*grown) * (size_t)(t->nchannels + 1));
    if (grown == NULL) {
        *oom = 1;
        return NULL;
    }
    t->channels = grown;
    fab__channel_t *c = &t->channels[t->nchannels++];
    memset(c, 0, sizeof(*c));
    c->number = number;
    return c;
}

/* An unsigned integer, decimal or 0x/0 prefixed, the whole text. */
static int fab__parse_u64(const char *text, unsigned long long *out)
{
    char *end;
    errno = 0;
    if (*text == '-' || *text == '\0')
        return -1;
    unsigned long long v = strtoull(text, &end, 0);
    if (errno != 0 || *end != '\0')
        return -1;
    *out = v;
    return 0;
}

/* Bytes with an optional binary suffix: 80G, 2MiB, 4096. */
static int fab__parse_bytes(const char *text, uint64_t *out)
{
    char *end;
    errno = 0;
    if (*text == '-' || *text == '\0')
        return -1;
    unsigned long long v = strtoull(text, &end, 10);
    if (errno != 0 || end == text)
        return -1;
    unsigned shift = 0;
    switch (*end) {
    case 'K': case 'k': shift = 10; end++; break;
    case 'M': case 'm': shift = 20; end++; break;
    case 'G': case 'g': shift = 30; end++; break;
    case 'T': case 't': shift = 40; end++; break;
    default: break;
    }
    if (shift != 0 && *end == 'i')
        end++;
    if (*end == 'B')
        end++;
    if (*end != '\0' || (shift != 0 && v > (UINT64_MAX >> shift)))
        return -1;
    *out = (uint64_t)v << shift;
    return 0;
}

static int fab__parse_uuid(const char *text, fab_uuid_t *out)
{
    fab_uuid_t u;
    int n = 0;
    for (const char *s = text; *s != '\0'; s++) {
        if (*s == '-')
            continue;
        int v = fab__hex_digit((unsigned char)*s);
        if (v < 0)
            return -1;
        if (n >= 32)
            return -1;
        if (n % 2 == 0)
            u.bytes[n / 2] = (uint8_t)(v << 4);
        else
            u.bytes[n / 2] |= (uint8_t)v;
        n++;
    }
    if (n != 32)
        return -1;
    *out = u;
    return 0;
}

static int fab__parse_state(const char *text, fab_fabric_state_t *out)
{
    static const char *const names[] = {"not_supported", "not_started", "in_progress", "completed"};
    for (int i = 0; i < 4; i++) {
        if (strcasecmp(text, names[i]) == 0) {
            *out = (fab_fabric_state_t)i;
            return 0;
        }
    }
    return -1;
}

/* The fabric health mask: a number, or a list of the problems present
 * (degraded_bw, route_recovery, route_unhealthy, access_timeout_recovery),
 * each field not named being false; "healthy" names none, and
 * "not_supported" gives a mask whose every field is not supported. */
static int fab__parse_health(const char *text, uint32_t *out)
{
    static const struct {
        const char *name;
        int shift;
    } fields[] = {
        {"degraded_bw", FAB_FABRIC_HEALTH_SHIFT_DEGRADED_BW},
        {"route_recovery", FAB_FABRIC_HEALTH_SHIFT_ROUTE_RECOVERY},
        {"route_unhealthy", FAB_FABRIC_HEALTH_SHIFT_ROUTE_UNHEALTHY},
        {"access_timeout_recovery", FAB_FABRIC_HEALTH_SHIFT_ACCESS_TIMEOUT_RECOVERY},
    };
    unsigned long long v;
    if (fab__parse_u64(text, &v) == 0) {
        if (v > UINT32_MAX)
            return -1;
        *out = (uint32_t)v;
        return 0;
    }
    char buf[256];
    if (snprintf(buf, sizeof(buf), "%s", text) >= (int)sizeof(buf))
        return -1;
    uint32_t mask = FAB_FABRIC_HEALTH_HEALTHY;
    int words = 0;
    char *save = NULL;
    for (char *tok = strtok_r(buf, ", |", &save); tok != NULL; tok = strtok_r(NULL, ", |", &save)) {
        words++;
        if (strcasecmp(tok, "healthy") == 0)
            continue;
        if (strcasecmp(tok, "not_supported") == 0) {
            mask = 0;
            continue;
        }
        size_t i = 0;
        while (i < sizeof(fields) / sizeof(fields[0]) && strcasecmp(tok, fields[i].name) != 0)
            i++;
        if (i == sizeof(fields) / sizeof(fields[0]))
            return -1;
        mask = (mask & ~(3u << fields[i].shift)) | (FAB_FABRIC_HEALTH_FIELD_TRUE << fields[i].shift);
    }
    if (words == 0)
        return -1;
    *out = mask;
    return 0;
}

static int fab__parse_handle_types(const char *text, uint32_t *out)
{
    char buf[256];
    uint32_t bits = 0;
    snprintf(buf, sizeof(buf), "%s", text);
    char *save = NULL;
    for (char *tok = strtok_r(buf, ", |", &save); tok != NULL; tok = strtok_r(NULL, ", |", &save)) {
        if (strcasecmp(tok, "posix_fd") == 0)
            bits |= FAB_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
        else if (strcasecmp(tok, "fabric") == 0)
            bits |= FAB_HANDLE_TYPE_FABRIC;
        else if (strcasecmp(tok, "none") != 0)
            return -1;
    }
    *out = bits;
    return 0;
}

/* A list of ids ("0, 1000 65534") appended to *ids. */
static int fab__parse_ids(const char *text, uint32_t **ids, unsigned *n, int *oom)
{
    char buf[1024];
    if (snprintf(buf, sizeof(buf), "%s", text) >= (int)sizeof(buf))
        return -1;
    char *save = NULL;
    for (char *tok = strtok_r(buf, ", ", &save); tok != NULL; tok = strtok_r(NULL, ", ", &save)) {
        unsigned long long v;
        if (fab__parse_u64(tok, &v) != 0 || v > UINT32_MAX)
            return -1;
        uint32_t *grown = realloc(*ids, sizeof(**ids) * (*n + 1));
        if (grown == NULL) {
            *oom = 1;
            return -1;
        }
        *ids = grown;
        (*ids)[(*n)++] = (uint32_t)v;
    }
    return 0;
}

#define FAB__BAD(...) (snprintf(p->error, sizeof(p->error), __VA_ARGS__), 0)

/* The device attributes by name, for "attribute.NAME" keys. */
static const struct {
    const char *name;
    uint32_t id;
} fab__attribute_names[] = {
#define FAB__ATTRIBUTE_NAME(name, value) {#name, value},
    FAB_CUDA_DEVICE_ATTRIBUTES(FAB__ATTRIBUTE_NAME)
#undef FAB__ATTRIBUTE_NAME
};

/* "attribute.NAME = value": the value the emulation answers for the
 * attribute on this node's devices; a later key for the same one wins. */
static int fab__node_attribute(fab__parse_t *p, fab__node_t *node, const char *name,
                               const char *value)
{
    uint32_t id = 0;
    for (size_t i = 0; i < sizeof(fab__attribute_names) / sizeof(fab__attribute_names[0]); i++) {
        if (strcmp(fab__attribute_names[i].name, name) == 0)
            id = fab__attribute_names[i].id;
    }
    if (id == 0)
        return FAB__BAD("attribute.%s: no such device attribute (cuda.h's CU_DEVICE_ATTRIBUTE_ "
                        "names, without the prefix)", name);
    char *end;
    errno = 0;
    long v = strtol(value, &end, 0);
    if (*value == '\0' || *end != '\0' || errno != 0 || v < INT32_MIN || v > INT32_MAX)
        return FAB__BAD("attribute.%s: not a 32-bit integer: %s", name, value);
    for (unsigned i = 0; i < node->nattributes; i++) {
        if (node->attributes[i].id == id) {
            node->attributes[i].value = (int32_t)v;
            return 1;
        }
    }
    if (node->nattributes == FAB__NODE_ATTRIBUTES_MAX)
        return FAB__BAD("attribute.%s: a node may set at most %d attributes", name,
                        FAB__NODE_ATTRIBUTES_MAX);
    node->attributes[node->nattributes].id = id;
    node->attributes[node->nattributes].value = (int32_t)v;
    node->nattributes++;
    return 1;
}

/* "imex = up | down | hung", "gpus_isolated = no | yes" and
 * "fabric_manager = up | down | starting": field faults (faultwords.h), kept
 * as private attributes (ids past CUDA's), because attributes already travel
 * with the topology from the daemon to every client; the healthy value
 * spends no slot. fabric_manager down makes multicast binds fail as the
 * driver's do when Fabric Manager is not running; starting, as they do
 * while it is still setting the team up. */
static int fab__node_fault(fab__parse_t *p, fab__node_t *node, int key, const char *value)
{
    int32_t v;
    if (fab__fault_value_parse(key, value, &v) != 0)
        return FAB__BAD("%s: not %s: %s", fab__fault_key_name(key), fab__fault_value_words(key),
                        value);
    if (fab__fault_attribute_set(node, fab__fault_key_attribute(key), v) != 0)
        return FAB__BAD("%s: a node may set at most %d attributes", fab__fault_key_name(key),
                        FAB__NODE_ATTRIBUTES_MAX);
    return 1;
}

static int fab__node_key(fab__parse_t *p, fab__node_t *node, const char *key, const char *value)
{
    unsigned long long v;
    if (strcmp(key, "imex") == 0 || strcmp(key, "gpus_isolated") == 0 ||
        strcmp(key, "fabric_manager") == 0)
        return fab__node_fault(p, node, fab__fault_key_parse(key), value);
    if (strncmp(key, "attribute.", 10) == 0) {
        return fab__node_attribute(p, node, key + 10, value);
    } else if (strcmp(key, "imex_domain") == 0) {
        if (*value == '\0' || strlen(value) >= FAB_NAME_MAX)
            return FAB__BAD("imex_domain: empty or too long");
        snprintf(node->info.imex_domain, sizeof(node->info.imex_domain), "%s", value);
    } else if (strcmp(key, "cluster_uuid") == 0) {
        if (fab__parse_uuid(value, &node->info.cluster_uuid) != 0)
            return FAB__BAD("cluster_uuid: not 32 hex digits: %s", value);
    } else if (strcmp(key, "clique_id") == 0) {
        if (fab__parse_u64(value, &v) != 0 || v > UINT32_MAX)
            return FAB__BAD("clique_id: not a 32-bit number: %s", value);
        node->info.clique_id = (uint32_t)v;
    } else if (strcmp(key, "fabric_state") == 0) {
        if (fab__parse_state(value, &node->info.fabric_state) != 0)
            return FAB__BAD("fabric_state: not one of not_supported, not_started, "
                            "in_progress, completed: %s", value);
    } else if (strcmp(key, "fabric_status") == 0) {
        if (fab__parse_u64(value, &v) != 0 || v > UINT32_MAX)
            return FAB__BAD("fabric_status: not an NVML return code: %s", value);
        node->info.fabric_status = (uint32_t)v;
    } else if (strcmp(key, "fabric_health") == 0) {
        if (fab__parse_health(value, &node->info.fabric_health) != 0)
            return FAB__BAD("fabric_health: not a number or a list of healthy, degraded_bw, "
                            "route_recovery, route_unhealthy, access_timeout_recovery, "
                            "not_supported: %s", value);
    } else if (strcmp(key, "chassis_serial") == 0) {
        if (strlen(value) > FAB_CHASSIS_SERIAL_MAX)
            return FAB__BAD("chassis_serial: longer than %d bytes: %s", FAB_CHASSIS_SERIAL_MAX,
                            value);
        snprintf(node->info.chassis_serial, sizeof(node->info.chassis_serial), "%s", value);
    } else if (strcmp(key, "slot_number") == 0 || strcmp(key, "tray_index") == 0 ||
               strcmp(key, "host_id") == 0) {
        if (fab__parse_u64(value, &v) != 0 || v > UINT8_MAX)
            return FAB__BAD("%s: not a number from 0 to 255: %s", key, value);
        uint8_t *field = key[0] == 's' ? &node->info.slot_number
                         : key[0] == 't' ? &node->info.tray_index
                                         : &node->info.host_id;
        *field = (uint8_t)v;
    } else if (strcmp(key, "host_numa_nodes") == 0) {
        if (fab__parse_u64(value, &v) != 0 || v == 0 || v > FAB__HOST_NUMA_MAX)
            return FAB__BAD("host_numa_nodes: not a count from 1 to %d: %s", FAB__HOST_NUMA_MAX,
                            value);
        node->info.host_numa_nodes = (int)v;
    } else if (strcmp(key, "host_memory") == 0) {
        if (fab__parse_bytes(value, &node->info.host_memory) != 0)
            return FAB__BAD("host_memory: not a size: %s", value);
    } else if (strcmp(key, "pci_domain") == 0) {
        if (fab__parse_u64(value, &v) != 0 || v > 0xffff)
            return FAB__BAD("pci_domain: not a number from 0 to 0xffff: %s", value);
        node->device.pci_domain = (uint32_t)v;
    } else if (strcmp(key, "pci_device_id") == 0) {
        if (fab__parse_u64(value, &v) != 0 || v > UINT32_MAX)
            return FAB__BAD("pci_device_id: not a 32-bit number: %s", value);
        node->device.pci_device_id = (uint32_t)v;
    } else if (strcmp(key, "gpus") == 0) {
        if (fab__parse_u64(value, &v) != 0 || v > 64)
            return FAB__BAD("gpus: not a count from 0 to 64: %s", value);
        node->info.device_count = (int)v;
    } else if (strcmp(key, "gpu_name") == 0) {
        if (strlen(value) >= FAB_NAME_MAX)
            return FAB__BAD("gpu_name: too long");
        snprintf(node->device.name, sizeof(node->device.name), "%s", value);
    } else if (strcmp(key, "gpu_memory") == 0) {
        if (fab__parse_bytes(value, &node->device.total_memory) != 0)
            return FAB__BAD("gpu_memory: not a size: %s", value);
    } else if (strcmp(key, "granularity") == 0) {
        uint64_t g;
        if (fab__parse_bytes(value, &g) != 0 || g == 0 || (g & (g - 1)) != 0 ||
            g % (uint64_t)sysconf(_SC_PAGESIZE) != 0)
            return FAB__BAD("granularity: not a power of two multiple of the page size: %s", value);
        node->device.granularity = g;
    } else if (strcmp(key, "handle_types") == 0) {
        if (fab__parse_handle_types(value, &node->device.handle_types) != 0)
            return FAB__BAD("handle_types: not a list of posix_fd, fabric, none: %s", value);
    } else if (strcmp(key, "compute_capability") == 0) {
        int major, minor, used = 0;
        if (sscanf(value, "%d.%d%n", &major, &minor, &used) != 2 || value[used] != '\0' ||
            major < 0 || minor < 0)
            return FAB__BAD("compute_capability: not MAJOR.MINOR: %s", value);
        node->device.compute_major = major;
        node->device.compute_minor = minor;
    } else if (strcmp(key, "sm_count") == 0) {
        if (fab__parse_u64(value, &v) != 0 || v == 0 || v > 100000)
            return FAB__BAD("sm_count: not a count: %s", value);
        node->device.sm_count = (int)v;
    } else {
        return FAB__BAD("unknown key %s in a node section", key);
    }
    return 1;
}

/* The per-uid limit that [daemon] key counts (max_*_per_uid, bytes aside),
 * or NULL. */
static uint64_t *fab__limit_count(fab_topology_t *t, const char *key)
{
    const struct {
        const char *key;
        uint64_t *count;
    } limits[] = {
        {"max_connections_per_uid", &t->limits.connections},
        {"max_allocations_per_uid", &t->limits.allocations},
        {"max_ipc_entries_per_uid", &t->limits.ipc_entries},
        {"max_references_per_uid", &t->limits.references},
        {"max_fds_in_flight_per_uid", &t->limits.fds_in_flight},
    };
    for (size_t i = 0; i < sizeof(limits) / sizeof(limits[0]); i++)
        if (strcmp(key, limits[i].key) == 0)
            return limits[i].count;
    return NULL;
}

bool fab__config_key_listed(const char *section, const char *key)
{
#define FAB__KEY_(sec, name, sample)                                                       \
    if (strcmp(section, #sec) == 0 &&                                                      \
        (strcmp(key, name) == 0 ||                                                         \
         (strcmp(name, "attribute.NAME") == 0 && strncmp(key, "attribute.", 10) == 0)))    \
        return true;
    FAB__CONFIG_KEYS(FAB__KEY_)
#undef FAB__KEY_
    return false;
}

static int fab__ini_handler(void *user, const char *section, const char *key, const char *value)
{
    fab__parse_t *p = user;
    fab_topology_t *t = p->topology;
    unsigned long long v;
    if (p->error[0] != '\0' || p->oom)
        return 0;
    if (strcmp(section, "driver") == 0) {
        if (!fab__config_key_listed("driver", key) || strcmp(key, "version") != 0)
            return FAB__BAD("unknown key %s in [driver]", key);
        if (fab__parse_u64(value, &v) != 0 || v > INT32_MAX)
            return FAB__BAD("version: not a number: %s", value);
        t->driver_version = (int)v;
        return 1;
    }
    if (strcmp(section, "daemon") == 0) {
        if (!fab__config_key_listed("daemon", key)) {
            return FAB__BAD("unknown key %s in [daemon]", key);
        } else if (strcmp(key, "socket_mode") == 0) {
            char *end;
            errno = 0;
            unsigned long mode = strtoul(value, &end, 8);
            if (errno != 0 || *value == '\0' || *end != '\0' || mode > 0777)
                return FAB__BAD("socket_mode: not an octal mode: %s", value);
            t->socket_mode = (unsigned)mode;
        } else if (strcmp(key, "idle_exit") == 0) {
            if (fab__parse_u64(value, &v) != 0 || v > 86400 * 365)
                return FAB__BAD("idle_exit: not a number of seconds: %s", value);
            t->idle_exit = (int)v;
        } else if (fab__limit_count(t, key) != NULL) {
            if (fab__parse_u64(value, &v) != 0)
                return FAB__BAD("%s: not a number: %s", key, value);
            *fab__limit_count(t, key) = v;
        } else if (strcmp(key, "max_bytes_per_uid") == 0) {
            if (fab__parse_bytes(value, &t->limits.bytes) != 0)
                return FAB__BAD("max_bytes_per_uid: not a size: %s", value);
        } else if (strcmp(key, "imex_timeout_ms") == 0) {
            if (fab__parse_u64(value, &v) != 0 || v > 3600000)
                return FAB__BAD("imex_timeout_ms: not a number of milliseconds up to an hour: %s",
                                value);
            t->imex_timeout_ms = (int)v;
        } else if (strcmp(key, "state_file") == 0) {
            if (*value == '\0')
                return FAB__BAD("state_file: empty");
            free(t->state_file);
            t->state_file = strdup(value);
            if (t->state_file == NULL)
                p->oom = 1;
            return t->state_file != NULL;
        } else {
            return FAB__BAD("unknown key %s in [daemon]", key);
        }
        return 1;
    }
    if (strncmp(section, "node ", 5) == 0) {
        const char *name = section + 5;
        if (*name == '\0' || strlen(name) >= FAB_NAME_MAX)
            return FAB__BAD("node name empty or too long");
        if (!fab__config_key_listed("node", key))
            return FAB__BAD("unknown key %s in a node section", key);
        fab__node_t *node = fab__node_get(p, name);
        if (node == NULL)
            return 0;
        return fab__node_key(p, node, key, value);
    }
    if (strncmp(section, "channel ", 8) == 0) {
        if (fab__parse_u64(section + 8, &v) != 0 || v >= FAB__CHANNEL_MAX)
            return FAB__BAD("channel number not in 0..%d: %s", FAB__CHANNEL_MAX - 1, section + 8);
        fab__channel_t *c = fab__channel_get(t, (unsigned)v, &p->oom);
        if (c == NULL)
            return 0;
        if (!fab__config_key_listed("channel", key)) {
            return FAB__BAD("unknown key %s in a channel section", key);
        } else if (strcmp(key, "uids") == 0) {
            if (fab__parse_ids(value, &c->uids, &c->nuids, &p->oom) != 0)
                return p->oom ? 0 : FAB__BAD("uids: not a list of numbers: %s", value);
        } else if (strcmp(key, "gids") == 0) {
            if (fab__parse_ids(value, &c->gids, &c->ngids, &p->oom) != 0)
                return p->oom ? 0 : FAB__BAD("gids: not a list of numbers: %s", value);
        } else {
            return FAB__BAD("unknown key %s in a channel section", key);
        }
        return 1;
    }
    return FAB__BAD("unknown section [%s]", section);
}

/* The built-in machine: one node of 8 GPUs; channel 0 for the current user. */
static fab_status_t fab__topology_defaults(fab_topology_t *t, int with_channel)
{
    fab__parse_t p = {.topology = t};
    if (t->nnodes == 0 && fab__node_get(&p, "node0") == NULL)
        return FAB_ERROR_OUT_OF_MEMORY;
    if (with_channel) {
        int oom = 0;
        fab__channel_t *c = fab__channel_get(t, 0, &oom);
        if (c == NULL)
            return FAB_ERROR_OUT_OF_MEMORY;
        c->uids = malloc(sizeof(*c->uids));
        if (c->uids == NULL)
            return FAB_ERROR_OUT_OF_MEMORY;
        c->uids[0] = getuid();
        c->nuids = 1;
    }
    return FAB_SUCCESS;
}

fab_status_t fab_topology_load(const char *config_path, fab_topology_t **topology_out)
{
    if (topology_out == NULL)
        return FAB_ERROR_INVALID_VALUE;
    if (config_path == NULL || *config_path == '\0') {
        const char *env = getenv(FAB__ENV_CONFIG);
        config_path = env != NULL && *env != '\0' ? env : NULL;
    }
    fab_topology_t *t = fab__topology_new();
    if (t == NULL)
        return FAB_ERROR_OUT_OF_MEMORY;
    fab_status_t status = FAB_SUCCESS;
    if (config_path == NULL) {
        status = fab__topology_defaults(t, 1);
        if (status != FAB_SUCCESS)
            goto fail_topology;
        *topology_out = t;
        return FAB_SUCCESS;
    }
    FILE *f = fopen(config_path, "r");
    if (f == NULL) {
        fab__log(FAB__LOG_ERROR, "config %s: %s", config_path, strerror(errno));
        status = errno == ENOENT ? FAB_ERROR_NOT_FOUND : FAB_ERROR_INVALID_VALUE;
        goto fail_topology;
    }
    fab__parse_t p = {.topology = t};
    int line = ini_parse_file(f, fab__ini_handler, &p);
    fclose(f);
    if (p.oom || line == -2) {
        status = FAB_ERROR_OUT_OF_MEMORY;
        goto fail_topology;
    }
    if (line != 0) {
        fab__log(FAB__LOG_ERROR, "config %s:%d: %s", config_path, line,
                 p.error[0] != '\0' ? p.error : "syntax error");
        status = FAB_ERROR_INVALID_VALUE;
        goto fail_topology;
    }
    /* A file without nodes describes the default node; channels are only
     * those the file gives, so that a config can withhold them. */
    status = fab__topology_defaults(t, 0);
    if (status != FAB_SUCCESS)
        goto fail_topology;
    *topology_out = t;
    return FAB_SUCCESS;

fail_topology:
    fab_topology_destroy(t);
    return status;
}
