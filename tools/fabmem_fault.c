/* fabmem fault: the field faults of the running daemon's fabric, changed
 * through it (the FAULT message), so that jobs already running see the
 * fabric change at their next request. Three forms, each checked whole
 * before anything is sent:
 *
 *   fabmem fault NODE KEY=VALUE...          imex, fabric_state, fabric_manager,
 *                                           gpus_isolated (src/common/faultwords.h)
 *   fabmem fault channel N withdraw|restore
 *   fabmem fault reset
 *
 * "channel" and "reset" are words of the grammar, not node names. Bad usage
 * names the problem and exits 2; the daemon's refusal (another uid than its
 * owner's: NOT_PERMITTED) or no daemon exits 1. */
#include "tools/fabmem_fault.h"
#include "tools/connect.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fabmem.h"
#include "src/common/faultwords.h"
#include "src/fabric/client_fault.h"

#define FAB__FAULT_SETS_MAX 8

typedef struct {
    int key;
    int32_t value;
} fab__fault_set_t;

static int fab__fault_usage(const char *problem)
{
    fprintf(stderr,
            "fabmem fault: %s\n"
            "usage: fabmem fault NODE KEY=VALUE...   KEY: imex (up|down|hung), fabric_state\n"
            "                                        (not_supported|not_started|in_progress|\n"
            "                                        completed), fabric_manager (up|down|starting),\n"
            "                                        gpus_isolated (no|yes)\n"
            "       fabmem fault channel N withdraw|restore\n"
            "       fabmem fault reset\n",
            problem);
    return 2;
}

/* Parse "KEY=VALUE" into *set; 0, or -1 after naming the problem. */
static int fab__fault_parse_set(const char *arg, fab__fault_set_t *set)
{
    char problem[512];
    const char *eq = strchr(arg, '=');
    if (eq == NULL) {
        snprintf(problem, sizeof(problem), "not KEY=VALUE: %s", arg);
        return fab__fault_usage(problem), -1;
    }
    char key[64];
    size_t len = (size_t)(eq - arg);
    if (len >= sizeof(key))
        len = sizeof(key) - 1;
    memcpy(key, arg, len);
    key[len] = '\0';
    set->key = fab__fault_key_parse(key);
    if (set->key < 0) {
        snprintf(problem, sizeof(problem),
                 "unknown key %s (imex, fabric_state, fabric_manager or gpus_isolated)", key);
        return fab__fault_usage(problem), -1;
    }
    if (fab__fault_value_parse(set->key, eq + 1, &set->value) != 0) {
        snprintf(problem, sizeof(problem), "%s: not %s: %s", key,
                 fab__fault_value_words(set->key), eq + 1);
        return fab__fault_usage(problem), -1;
    }
    return 0;
}

static int fab__fault_refused(const char *what, fab_status_t status)
{
    fprintf(stderr, "fabmem fault: %s: %s (%s)%s\n", what, fab_status_string(status),
            fab_status_name(status),
            status == FAB_ERROR_NOT_PERMITTED ? "; only the daemon's owner may change faults" : "");
    return 1;
}

static int fab__fault_send(uint8_t op, uint8_t key, uint32_t target, int32_t value,
                           const char *what)
{
    fab_client_t *client = fab__tool_connect("fabmem fault");
    if (client == NULL)
        return 1;
    fab_status_t status = fab__client_fault(client, op, key, target, value);
    fab_client_close(client);
    return status == FAB_SUCCESS ? 0 : fab__fault_refused(what, status);
}

static int fab__fault_channel(int argc, char **argv)
{
    char problem[256];
    if (argc != 5)
        return fab__fault_usage("channel takes a number and withdraw or restore");
    char *end;
    errno = 0;
    unsigned long n = strtoul(argv[3], &end, 10);
    if (errno != 0 || end == argv[3] || *end != '\0' || argv[3][0] == '-' || n > 63) {
        snprintf(problem, sizeof(problem), "channel: not a number from 0 to 63: %s", argv[3]);
        return fab__fault_usage(problem);
    }
    int withdraw;
    if (strcmp(argv[4], "withdraw") == 0) {
        withdraw = 1;
    } else if (strcmp(argv[4], "restore") == 0) {
        withdraw = 0;
    } else {
        snprintf(problem, sizeof(problem), "channel %lu: not withdraw or restore: %s", n, argv[4]);
        return fab__fault_usage(problem);
    }
    return fab__fault_send(FAB__FAULT_OP_CHANNEL, 0, (uint32_t)n, withdraw, "channel");
}

static int fab__fault_node(int argc, char **argv)
{
    fab__fault_set_t sets[FAB__FAULT_SETS_MAX];
    int nsets = argc - 3;
    if (nsets < 1)
        return fab__fault_usage("a node takes at least one KEY=VALUE");
    if (nsets > FAB__FAULT_SETS_MAX)
        return fab__fault_usage("at most 8 KEY=VALUE at once");
    for (int i = 0; i < nsets; i++) {
        if (fab__fault_parse_set(argv[3 + i], &sets[i]) != 0)
            return 2;
    }
    fab_client_t *client = fab__tool_connect("fabmem fault");
    if (client == NULL)
        return 1;
    const fab_topology_t *topology;
    fab_status_t status = fab_client_topology(client, &topology);
    int node = -1;
    if (status == FAB_SUCCESS && fab_topology_find_node(topology, argv[2], &node) != FAB_SUCCESS) {
        fab_client_close(client);
        char problem[384];
        snprintf(problem, sizeof(problem), "no node %s in the daemon's topology (fabmem nodes "
                 "lists them)", argv[2]);
        return fab__fault_usage(problem);
    }
    for (int i = 0; status == FAB_SUCCESS && i < nsets; i++) {
        status = fab__client_fault(client, FAB__FAULT_OP_SET, (uint8_t)sets[i].key,
                                   (uint32_t)node, sets[i].value);
        if (status != FAB_SUCCESS) {
            fab_client_close(client);
            return fab__fault_refused(argv[3 + i], status);
        }
    }
    fab_client_close(client);
    return status == FAB_SUCCESS ? 0 : fab__fault_refused("topology", status);
}

int fab__tool_fault(int argc, char **argv)
{
    if (argc < 3)
        return fab__fault_usage("what fault? a node, channel or reset");
    if (strcmp(argv[2], "reset") == 0) {
        if (argc != 3)
            return fab__fault_usage("reset takes nothing more");
        return fab__fault_send(FAB__FAULT_OP_RESET, 0, 0, 0, "reset");
    }
    if (strcmp(argv[2], "channel") == 0)
        return fab__fault_channel(argc, argv);
    return fab__fault_node(argc, argv);
}
