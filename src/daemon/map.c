/* The daemon's hash map (see map.h). Keys are random uuids' words or
 * sequential ids; a 64-bit mix spreads the latter. */
#include "src/daemon/map.h"

#include "src/base/hot.h"

#include <stdlib.h>

static size_t fab__mix(uint64_t key, size_t cap)
{
    key ^= key >> 33;
    key *= 0xff51afd7ed558ccdull;
    key ^= key >> 33;
    return (size_t)key & (cap - 1);
}

static size_t fab__map_slot(const fab__map_t *map, uint64_t key)
{
    return fab__mix(key, map->cap);
}

FAB__HOT
void *fab__map_get(const fab__map_t *map, uint64_t key)
{
    if (map->cap == 0 || key == 0)
        return NULL;
    for (size_t i = fab__map_slot(map, key);; i = (i + 1) & (map->cap - 1)) {
        if (map->slots[i].key == key)
            return map->slots[i].value;
        if (map->slots[i].key == 0)
            return NULL;
    }
}

FAB__HOT
static void fab__map_insert(fab__map_t *map, uint64_t key, void *value)
{
    size_t i = fab__map_slot(map, key);
    while (map->slots[i].key != 0)
        i = (i + 1) & (map->cap - 1);
    map->slots[i].key = key;
    map->slots[i].value = value;
    map->count++;
}

static int fab__map_resize(fab__map_t *map, size_t cap)
{
    fab__map_entry_t *old = map->slots;
    size_t oldcap = map->cap;
    fab__map_entry_t *slots = calloc(cap, sizeof(*slots));
    if (slots == NULL)
        return -1;
    map->slots = slots;
    map->cap = cap;
    map->count = 0;
    for (size_t i = 0; i < oldcap; i++) {
        if (old[i].key != 0)
            fab__map_insert(map, old[i].key, old[i].value);
    }
    free(old);
    return 0;
}

FAB__HOT
int fab__map_put(fab__map_t *map, uint64_t key, void *value)
{
    if ((map->count + 1) * 2 > map->cap && fab__map_resize(map, map->cap ? map->cap * 2 : 16) != 0)
        return -1;
    fab__map_insert(map, key, value);
    return 0;
}

FAB__HOT
void *fab__map_remove(fab__map_t *map, uint64_t key)
{
    if (map->cap == 0 || key == 0)
        return NULL;
    size_t mask = map->cap - 1;
    size_t i = fab__map_slot(map, key);
    while (map->slots[i].key != key) {
        if (map->slots[i].key == 0)
            return NULL;
        i = (i + 1) & mask;
    }
    void *value = map->slots[i].value;
    /* Backward shift: move later entries of the run into the hole when their
     * home slot does not lie between the hole and them. */
    size_t hole = i;
    for (size_t j = (i + 1) & mask; map->slots[j].key != 0; j = (j + 1) & mask) {
        size_t home = fab__map_slot(map, map->slots[j].key);
        if (((j - home) & mask) >= ((j - hole) & mask)) {
            map->slots[hole] = map->slots[j];
            hole = j;
        }
    }
    map->slots[hole].key = 0;
    map->slots[hole].value = NULL;
    map->count--;
    if (map->count == 0 && !map->keep) {
        fab__map_free(map);
    } else if (map->cap > 64 && map->count * 8 < map->cap) {
        (void)fab__map_resize(map, map->cap / 2);
    }
    return value;
}

void fab__map_free(fab__map_t *map)
{
    free(map->slots);
    map->slots = NULL;
    map->cap = 0;
    map->count = 0;
}

int fab__set_has(const fab__set_t *set, uint64_t key)
{
    if (set->cap == 0 || key == 0)
        return 0;
    for (size_t i = fab__mix(key, set->cap);; i = (i + 1) & (set->cap - 1)) {
        if (set->slots[i] == key)
            return 1;
        if (set->slots[i] == 0)
            return 0;
    }
}

static void fab__set_insert(uint64_t *slots, size_t cap, uint64_t key)
{
    size_t i = fab__mix(key, cap);
    while (slots[i] != 0 && slots[i] != key)
        i = (i + 1) & (cap - 1);
    slots[i] = key;
}

int fab__set_add(fab__set_t *set, uint64_t key)
{
    if (key == 0 || fab__set_has(set, key))
        return 0;
    if ((set->count + 1) * 2 > set->cap) {
        size_t cap = set->cap ? set->cap * 2 : 64;
        uint64_t *slots = calloc(cap, sizeof(*slots));
        if (slots == NULL)
            return -1;
        for (size_t i = 0; i < set->cap; i++) {
            if (set->slots[i] != 0)
                fab__set_insert(slots, cap, set->slots[i]);
        }
        free(set->slots);
        set->slots = slots;
        set->cap = cap;
    }
    fab__set_insert(set->slots, set->cap, key);
    set->count++;
    return 0;
}

void fab__set_free(fab__set_t *set)
{
    free(set->slots);
    set->slots = NULL;
    set->cap = set->count = 0;
}
