/* The field faults' vocabulary (see faultwords.h): names and values, and the
 * one place a fault kept as a private attribute is written into a node. It
 * owns no state. */
#include "src/common/faultwords.h"
#include "src/common/topology_impl.h"

#include <string.h>

static const char *const fab__fault_keys[] = {
    [FAB__FAULT_KEY_IMEX] = "imex",
    [FAB__FAULT_KEY_FABRIC_STATE] = "fabric_state",
    [FAB__FAULT_KEY_FABRIC_MANAGER] = "fabric_manager",
    [FAB__FAULT_KEY_GPUS_ISOLATED] = "gpus_isolated",
};

/* Each key's words, by value: index i is value i. */
static const char *const fab__imex_words[] = {"up", "down", "hung", NULL};
static const char *const fab__state_words[] = {"not_supported", "not_started", "in_progress",
                                               "completed", NULL};
static const char *const fab__manager_words[] = {"up", "down", "starting", NULL};
static const char *const fab__isolated_words[] = {"no", "yes", NULL};

static const char *const *fab__fault_words(int key)
{
    switch (key) {
    case FAB__FAULT_KEY_IMEX: return fab__imex_words;
    case FAB__FAULT_KEY_FABRIC_STATE: return fab__state_words;
    case FAB__FAULT_KEY_FABRIC_MANAGER: return fab__manager_words;
    case FAB__FAULT_KEY_GPUS_ISOLATED: return fab__isolated_words;
    default: return NULL;
    }
}

int fab__fault_key_parse(const char *name)
{
    for (int k = 1; k <= FAB__FAULT_KEY_MAX; k++) {
        if (strcmp(name, fab__fault_keys[k]) == 0)
            return k;
    }
    return -1;
}

const char *fab__fault_key_name(int key)
{
    return key >= 1 && key <= FAB__FAULT_KEY_MAX ? fab__fault_keys[key] : "?";
}

int fab__fault_value_parse(int key, const char *text, int32_t *value)
{
    const char *const *words = fab__fault_words(key);
    for (int i = 0; words != NULL && words[i] != NULL; i++) {
        if (strcmp(text, words[i]) == 0) {
            *value = i;
            return 0;
        }
    }
    return -1;
}

const char *fab__fault_value_words(int key)
{
    switch (key) {
    case FAB__FAULT_KEY_IMEX: return "up, down or hung";
    case FAB__FAULT_KEY_FABRIC_STATE: return "not_supported, not_started, in_progress or completed";
    case FAB__FAULT_KEY_FABRIC_MANAGER: return "up, down or starting";
    case FAB__FAULT_KEY_GPUS_ISOLATED: return "no or yes";
    default: return "";
    }
}

uint32_t fab__fault_key_attribute(int key)
{
    switch (key) {
    case FAB__FAULT_KEY_IMEX: return FAB__ATTRIBUTE_IMEX;
    case FAB__FAULT_KEY_FABRIC_MANAGER: return FAB__ATTRIBUTE_FABRIC_MANAGER_DOWN;
    case FAB__FAULT_KEY_GPUS_ISOLATED: return FAB__ATTRIBUTE_GPUS_ISOLATED;
    default: return 0;
    }
}

int fab__fault_attribute_set(fab__node_t *node, uint32_t id, int32_t value)
{
    for (unsigned i = 0; i < node->nattributes; i++) {
        if (node->attributes[i].id != id)
            continue;
        if (value != 0) {
            node->attributes[i].value = value;
        } else {
            /* Order does not matter: move the last one into the hole. */
            node->attributes[i] = node->attributes[node->nattributes - 1];
            node->nattributes--;
        }
        return 0;
    }
    if (value == 0)
        return 0;
    if (node->nattributes == FAB__NODE_ATTRIBUTES_MAX)
        return -1;
    node->attributes[node->nattributes].id = id;
    node->attributes[node->nattributes].value = value;
    node->nattributes++;
    return 0;
}
