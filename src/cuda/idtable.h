/* A hash table from 64-bit ids to pointers: open addressing with linear
 * probing, resized to keep it between 1/8 and 1/2 full, so that a lookup
 * touches one or two slots whatever the number of entries (alloc.c's handle
 * table). Removal shifts the entries after it back (no tombstones), so a
 * table that has seen many removals probes as a fresh one. Id 0 is never an
 * entry (it marks an empty slot). It knows nothing of CUDA and takes no lock:
 * its owner's lock guards it. idtable.c implements it;
 * tests/cuda/test_cuda_containers.c tests it directly. */
#ifndef FAB_CUDA_IDTABLE_H
#define FAB_CUDA_IDTABLE_H

#include <stddef.h>
#include <stdint.h>

#define FAB__CU_IDTABLE_MIN 16 /* slots, from the first insert on */

typedef struct fab__cu_idslot {
    uint64_t id; /* 0: empty */
    void *value;
} fab__cu_idslot_t;

typedef struct fab__cu_idtable {
    fab__cu_idslot_t *slots; /* NULL until the first insert; malloc'd, never
                                freed by the table (its owner may, once empty) */
    size_t mask;             /* slots - 1; the count of slots is a power of two */
    unsigned shift;          /* 64 - log2(slots): the hash's top bits pick the slot */
    size_t count;
} fab__cu_idtable_t;

/* Add id (not 0, not in the table) with value. Returns 0, or -1 when the
 * table had to grow and memory ran out (the table is then as it was). */
int fab__cu_idtable_insert(fab__cu_idtable_t *table, uint64_t id, void *value);
/* The value of id, or NULL. */
void *fab__cu_idtable_find(const fab__cu_idtable_t *table, uint64_t id);
/* Take id out; returns its value, or NULL if it was not there. */
void *fab__cu_idtable_remove(fab__cu_idtable_t *table, uint64_t id);

#endif /* FAB_CUDA_IDTABLE_H */
