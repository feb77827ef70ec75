/* The emulation's one process context and what it is built from: the lazy,
 * once-only load of the devices (from the fabric topology), cuInit,
 * cuDriverGetVersion, and the error names and messages (one table,
 * cuda_abi.h's FAB_CU_RESULT_LIST). Messages go through the fabric's logger
 * (FABMEM_LOG), so a process has one log format whatever layer speaks.
 *
 * The CUDA API implies one driver state per process, so this is the single
 * process-wide object fabmem keeps (docs/design.md, "Threads, fork and locks"). */
#include "src/cuda/state.h"
#include "src/cuda/entry.h"
#include "src/cuda/device.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "fabmem/fabric.h"
#include "src/common/log.h"


fab__cu_state_t fab__cu = {
    .lock = FAB__RWLOCK_INITIALIZER,
};

CUresult fab__cu_from_status(fab_status_t status)
{
    /* fab_status_t is numbered as CUresult (fabmem/status.h). */
    switch (status) {
#define FAB__CU_SAME(name, value, text) \
    case FAB_##name:                    \
        return CUDA_##name;
        FAB_STATUS_MAP(FAB__CU_SAME)
#undef FAB__CU_SAME
    }
    return CUDA_ERROR_UNKNOWN;
}

static pthread_once_t fab__cu_once = PTHREAD_ONCE_INIT;
static CUresult fab__cu_load_result = CUDA_ERROR_NOT_INITIALIZED;
static fab_status_t fab__cu_no_daemon; /* why the local config applies */

/* The node ordinal that one CUDA_VISIBLE_DEVICES entry names among
 * count devices: an index, or a prefix of a device's "GPU-..." uuid that
 * fits one device alone; -1 for anything else. */
static int fab__cu_visible_entry(const char *entry, size_t len, const fab_topology_t *topo,
                                 int node, int count)
{
    while (len > 0 && (*entry == ' ' || *entry == '\t')) {
        entry++;
        len--;
    }
    while (len > 0 && (entry[len - 1] == ' ' || entry[len - 1] == '\t'))
        len--;
    if (len == 0)
        return -1;
    if (entry[0] >= '0' && entry[0] <= '9') {
        long v = 0;
        for (size_t i = 0; i < len; i++) {
            if (entry[i] < '0' || entry[i] > '9' || v > 100000)
                return -1;
            v = v * 10 + (entry[i] - '0');
        }
        return v < count ? (int)v : -1;
    }
    if (len < 5 || strncasecmp(entry, "GPU-", 4) != 0)
        return -1;
    int found = -1;
    for (int i = 0; i < count; i++) {
        fab_device_info_t di;
        char text[FAB_UUID_STRING_MAX];
        if (fab_topology_device(topo, node, i, &di) != FAB_SUCCESS)
            continue;
        fab_device_uuid_string(&di.uuid, text, sizeof(text));
        if (len <= strlen(text) && strncasecmp(text, entry, len) == 0) {
            if (found >= 0)
                return -1; /* a prefix that fits two devices names neither */
            found = i;
        }
    }
    return found;
}

/* The node ordinals CUDA_VISIBLE_DEVICES selects, in its order, as CUDA reads
 * it: a comma list whose first invalid entry (not a device, or one already
 * listed) ends it. Unset: every device. Returns how many. */
static int fab__cu_visible(const fab_topology_t *topo, int node, int count,
                           int ordinals[FAB__CU_MAX_DEVICES])
{
    const char *env = getenv("CUDA_VISIBLE_DEVICES");
    if (env == NULL) {
        for (int i = 0; i < count; i++)
            ordinals[i] = i;
        return count;
    }
    int n = 0;
    for (const char *at = env; n < count;) {
        const char *comma = strchr(at, ',');
        size_t len = comma ? (size_t)(comma - at) : strlen(at);
        int ordinal = fab__cu_visible_entry(at, len, topo, node, count);
        for (int k = 0; k < n && ordinal >= 0; k++) {
            if (ordinals[k] == ordinal)
                ordinal = -1;
        }
        if (ordinal < 0)
            break;
        ordinals[n++] = ordinal;
        if (!comma)
            break;
        at = comma + 1;
    }
    if (n < count && env[0] != '\0')
        fab__log(FAB__LOG_INFO, "CUDA_VISIBLE_DEVICES=%s: %d of the node's %d devices visible",
                 env, n, count);
    return n;
}

/* Copy node's devices out of topology, those CUDA_VISIBLE_DEVICES selects
 * and in its order; in local mode only what needs no daemon (POSIX_FD) is
 * offered. */
static CUresult fab__cu_devices_copy(fab__cu_state_t *st, const fab_topology_t *topo, int node)
{
    fab_node_info_t info;
    if (fab_topology_node(topo, node, &info) != FAB_SUCCESS)
        return CUDA_ERROR_NO_DEVICE;
    int count = info.device_count;
    if (count > FAB__CU_MAX_DEVICES) {
        fab__log(FAB__LOG_WARN, "node %s has %d devices; the emulation shows the first %d",
                 info.name, count, FAB__CU_MAX_DEVICES);
        count = FAB__CU_MAX_DEVICES;
    }
    int ordinals[FAB__CU_MAX_DEVICES];
    count = fab__cu_visible(topo, node, count, ordinals);
    for (int i = 0; i < count; i++) {
        fab_device_info_t di;
        if (fab_topology_device(topo, node, ordinals[i], &di) != FAB_SUCCESS) {
            count = i;
            break;
        }
        fab__cu_device_t *d = &st->devices[i];
        memset(d, 0, sizeof(*d));
        d->ordinal = ordinals[i];
        snprintf(d->name, sizeof(d->name), "%s", di.name);
        memcpy(d->uuid.bytes, di.uuid.bytes, 16);
        d->total_memory = di.total_memory;
        d->granularity = di.granularity;
        d->handle_types = di.handle_types;
        if (!st->fabric)
            d->handle_types &= CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
        d->compute_major = di.compute_major;
        d->compute_minor = di.compute_minor;
        d->sm_count = di.sm_count;
        d->pci_domain = di.pci_domain;
        d->pci_bus = di.pci_bus;
        d->pci_device = di.pci_device;
        d->pci_device_id = di.pci_device_id;
        d->host_numa_id = di.host_numa_id;
    }
    st->host_numa_nodes = info.host_numa_nodes > 0 ? info.host_numa_nodes : 1;
    st->granularity_max = 0;
    for (int i = 0; i < count; i++) {
        if (st->devices[i].granularity > st->granularity_max)
            st->granularity_max = st->devices[i].granularity;
    }
    st->device_count = count;
    st->topology = topo;
    st->node = node;
    st->driver_version = fab_topology_driver_version(topo);
    if (st->driver_version <= 0)
        st->driver_version = FAB_DRIVER_VERSION_DEFAULT;
    return count > 0 ? CUDA_SUCCESS : CUDA_ERROR_NO_DEVICE;
}

/* With no daemon answering and none allowed to start: the devices of
 * $FABMEM_NODE in $FABMEM_CONFIG (or the built-in topology). */
static CUresult fab__cu_devices_local(fab__cu_state_t *st)
{
    fab_topology_t *topo = NULL;
    fab_status_t s = fab_topology_load(NULL, &topo);
    if (s != FAB_SUCCESS) {
        fab__log(FAB__LOG_ERROR, "cuInit: cannot load the local topology: %s",
                 fab_status_name(s));
        return s == FAB_ERROR_OUT_OF_MEMORY ? CUDA_ERROR_OUT_OF_MEMORY : CUDA_ERROR_NO_DEVICE;
    }
    int node = 0;
    if (fab_topology_find_node(topo, NULL, &node) != FAB_SUCCESS) {
        fab__log(FAB__LOG_ERROR, "cuInit: FABMEM_NODE names no node of the local topology");
        fab_topology_destroy(topo);
        return CUDA_ERROR_NO_DEVICE;
    }
    /* Kept for the process's life, as the daemon's topology is. */
    return fab__cu_devices_copy(st, topo, node);
}

/* Where the devices come from (docs/design.md, "One topology"): the daemon's
 * topology, asked for once, so that this process and the daemon that enforces
 * the rules agree on every node, device and version. Only when no daemon
 * answers and none may be started does the local config apply, and then only
 * to POSIX_FD sharing, which needs no daemon. Called once, by cuInit or
 * cuDriverGetVersion. */
static CUresult fab__cu_devices_load(fab__cu_state_t *st)
{
    fab_client_t *client = NULL;
    fab_status_t s = fab_client_connect(NULL, &client);
    if (s == FAB_SUCCESS) {
        const fab_topology_t *topo = NULL;
        s = fab_client_topology(client, &topo);
        if (s == FAB_SUCCESS) {
            st->client = client;
            st->fabric = true;
            return fab__cu_devices_copy(st, topo, fab_client_node_index(client));
        }
        fab_client_close(client);
    }
    if (s != FAB_ERROR_SYSTEM_NOT_READY) {
        /* A daemon answered and refused: FABMEM_NODE names none of its
         * nodes, or the socket failed the trust rules. Not a reason to
         * believe another topology. */
        fab__log(FAB__LOG_ERROR, "cuInit: the fabric daemon refused this process: %s",
                 fab_status_string(s));
        return s == FAB_ERROR_NOT_FOUND ? CUDA_ERROR_NO_DEVICE : fab__cu_from_status(s);
    }
    fab__cu_no_daemon = s;
    fab__log(FAB__LOG_INFO, "cuInit: no fabric daemon answers and none may start; devices "
             "from the local config, POSIX_FILE_DESCRIPTOR sharing only");
    return fab__cu_devices_local(st);
}

static void fab__cu_load_once(void)
{
    fab__cu_load_result = fab__cu_devices_load(&fab__cu);
}

CUresult fab__cu_client(fab_client_t **client_out)
{
    if (fab__cu.client) {
        *client_out = fab__cu.client;
        return CUDA_SUCCESS;
    }
    static int warned;
    if (!__atomic_exchange_n(&warned, 1, __ATOMIC_RELAXED))
        fab__log(FAB__LOG_WARN, "FABRIC handles need the fabric daemon, and none answered "
                 "at cuInit: %s (FABMEM_SOCKET, FABMEM_NO_AUTOSTART)",
                 fab_status_string(fab__cu_no_daemon));
    return CUDA_ERROR_NOT_SUPPORTED;
}


CUresult fab__cu_check_init(void)
{
    /* The flag is written once under the write lock, before any device is
     * visible; readers that see it set see the devices too. */
    return __atomic_load_n(&fab__cu.initialized, __ATOMIC_ACQUIRE) ? CUDA_SUCCESS
                                                                   : CUDA_ERROR_NOT_INITIALIZED;
}

CUresult fab__cu_check_device(CUdevice dev)
{
    FAB__CU_TRY(fab__cu_check_init());
    if (dev < 0 || dev >= fab__cu.device_count)
        return CUDA_ERROR_INVALID_DEVICE;
    return CUDA_SUCCESS;
}

CUresult cuInit(unsigned int Flags)
{
    if (Flags != 0)
        return CUDA_ERROR_INVALID_VALUE;
    /* A bad FABMEM_FAULTS refuses the start (fault.c). cuInit itself can be
     * failed like any call, before it changes anything; it checks before the
     * specs are armed for the others, which must first see cuInit succeed. */
    FAB__CU_TRY(fab__cu_fault_load());
    FAB__CU_TRY(fab__cu_fault_hit(__func__));
    pthread_once(&fab__cu_once, fab__cu_load_once);
    if (fab__cu_load_result == CUDA_SUCCESS) {
        fab__cu_fault_arm();
        __atomic_store_n(&fab__cu.initialized, true, __ATOMIC_RELEASE);
    }
    return fab__cu_load_result;
}

CUresult cuDriverGetVersion(int *driverVersion)
{
    if (!driverVersion)
        return CUDA_ERROR_INVALID_VALUE;
    /* Allowed before cuInit, as in the driver: the version comes from the
     * config, loaded here if cuInit has not run. */
    pthread_once(&fab__cu_once, fab__cu_load_once);
    *driverVersion = fab__cu.driver_version ? fab__cu.driver_version : FAB_DRIVER_VERSION_DEFAULT;
    return CUDA_SUCCESS;
}

/* ---- errors ------------------------------------------------------------- */

CUresult cuGetErrorString(CUresult error, const char **pStr)
{
    if (!pStr)
        return CUDA_ERROR_INVALID_VALUE;
    switch (error) {
#define FAB__CU_TEXT(name, value, text) \
    case CUDA_##name:                   \
        *pStr = text;                   \
        return CUDA_SUCCESS;
        FAB_CU_RESULT_LIST(FAB__CU_TEXT)
#undef FAB__CU_TEXT
    }
    /* The driver answers an unknown code with INVALID_VALUE and NULL. */
    *pStr = NULL;
    return CUDA_ERROR_INVALID_VALUE;
}

CUresult cuGetErrorName(CUresult error, const char **pStr)
{
    if (!pStr)
        return CUDA_ERROR_INVALID_VALUE;
    switch (error) {
#define FAB__CU_NAME(name, value, text) \
    case CUDA_##name:                   \
        *pStr = "CUDA_" #name;          \
        return CUDA_SUCCESS;
        FAB_CU_RESULT_LIST(FAB__CU_NAME)
#undef FAB__CU_NAME
    }
    *pStr = NULL;
    return CUDA_ERROR_INVALID_VALUE;
}

/* cudaProfiler.h: profile collection by "the active profiling tool" for the
 * current context. No profiler attaches to fabmem, so there is nothing to
 * start or stop; a current context is still required, as documented. */
CUresult cuProfilerStart(void)
{
    FAB__CU_ENTER();
    CUcontext ctx;
    return fab__cu_current_ctx(&ctx);
}

CUresult cuProfilerStop(void)
{
    FAB__CU_ENTER();
    CUcontext ctx;
    return fab__cu_current_ctx(&ctx);
}
