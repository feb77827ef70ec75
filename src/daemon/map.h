/* A small open-addressing hash map from nonzero 64-bit keys to pointers, the
 * daemon's one container: allocations by uuid, each client's references by
 * id. Linear probing with backward-shift deletion keeps an entry at 16 bytes
 * and the table at most half full, which is what bounds the daemon's memory
 * per live allocation. */
#ifndef FABMEM_DAEMON_MAP_H
#define FABMEM_DAEMON_MAP_H

#include <stddef.h>
#include <stdint.h>

typedef struct fab__map_entry {
    uint64_t key; /* 0: empty */
    void *value;
} fab__map_entry_t;

typedef struct fab__map {
    fab__map_entry_t *slots;
    size_t cap; /* a power of two, or 0 */
    size_t count;
    int keep; /* set by the owner: keep the table when it empties (a
                 connection's references come and go with every import) */
} fab__map_t;

/* The value stored under key, or NULL. */
void *fab__map_get(const fab__map_t *map, uint64_t key);

/* Store value under key (which must be new and nonzero). 0, or -1 (no memory). */
int fab__map_put(fab__map_t *map, uint64_t key, void *value);

/* Remove key; returns its value, or NULL if absent. */
void *fab__map_remove(fab__map_t *map, uint64_t key);

/* Free the table (not the values). */
void fab__map_free(fab__map_t *map);

/* A set of nonzero 64-bit keys that only grows (the daemon's tombstones: the
 * uuids it freed), at 8 bytes a slot and at most half full. */
typedef struct fab__set {
    uint64_t *slots; /* 0: empty */
    size_t cap;
    size_t count;
} fab__set_t;

int fab__set_has(const fab__set_t *set, uint64_t key);
/* Add key (nonzero; adding one already there is a no-op). 0, or -1 (no memory). */
int fab__set_add(fab__set_t *set, uint64_t key);
void fab__set_free(fab__set_t *set);

#endif /* FABMEM_DAEMON_MAP_H */
