/* The id hash of idtable.h. Ids are hashed by Fibonacci hashing (multiply by
 * 2^64/phi, keep the top bits), which spreads alloc.c's ids (a counter in
 * steps of 16) evenly over the slots. A table grows when an insert would make
 * it more than half full and shrinks when a removal leaves it less than 1/8
 * full (but never below FAB__CU_IDTABLE_MIN slots), so a resize is never
 * followed closely by the opposite one. A failed shrink keeps the larger
 * table, which is still correct. */
#include "src/cuda/idtable.h"

#include <stdlib.h>

static size_t fab__cu_home(const fab__cu_idtable_t *t, uint64_t id)
{
    return (size_t)((id * 0x9E3779B97F4A7C15ull) >> t->shift);
}

/* The slot holding id, or the empty slot where it would go. */
static size_t fab__cu_probe(const fab__cu_idtable_t *t, uint64_t id)
{
    size_t i = fab__cu_home(t, id);
    while (t->slots[i].id != 0 && t->slots[i].id != id)
        i = (i + 1) & t->mask;
    return i;
}

/* Move every entry into a table of nslots slots (a power of two). */
static int fab__cu_resize(fab__cu_idtable_t *t, size_t nslots)
{
    fab__cu_idslot_t *slots = calloc(nslots, sizeof(*slots));
    if (!slots)
        return -1;
    fab__cu_idtable_t grown = {slots, nslots - 1, 64, t->count};
    for (size_t n = nslots; n > 1; n >>= 1)
        grown.shift--;
    for (size_t i = 0; t->slots && i <= t->mask; i++) {
        if (t->slots[i].id != 0)
            slots[fab__cu_probe(&grown, t->slots[i].id)] = t->slots[i];
    }
    free(t->slots);
    *t = grown;
    return 0;
}

int fab__cu_idtable_insert(fab__cu_idtable_t *t, uint64_t id, void *value)
{
    size_t nslots = t->slots ? t->mask + 1 : 0;
    if (2 * (t->count + 1) > nslots &&
        fab__cu_resize(t, nslots ? 2 * nslots : FAB__CU_IDTABLE_MIN) != 0)
        return -1;
    size_t i = fab__cu_probe(t, id);
    t->slots[i].id = id;
    t->slots[i].value = value;
    t->count++;
    return 0;
}

void *fab__cu_idtable_find(const fab__cu_idtable_t *t, uint64_t id)
{
    if (!t->slots || id == 0)
        return NULL;
    return t->slots[fab__cu_probe(t, id)].value; /* an empty slot's is NULL */
}

void *fab__cu_idtable_remove(fab__cu_idtable_t *t, uint64_t id)
{
    if (!t->slots || id == 0)
        return NULL;
    size_t i = fab__cu_probe(t, id);
    void *value = t->slots[i].value;
    if (t->slots[i].id == 0)
        return NULL;
    /* Backward shift: an entry after the hole moves into it unless its home
     * lies cyclically in (hole, its slot], where a probe finds it as it is. */
    for (size_t j = i;;) {
        j = (j + 1) & t->mask;
        if (t->slots[j].id == 0)
            break;
        size_t k = fab__cu_home(t, t->slots[j].id);
        if (i <= j ? (i < k && k <= j) : (i < k || k <= j))
            continue;
        t->slots[i] = t->slots[j];
        i = j;
    }
    t->slots[i].id = 0;
    t->slots[i].value = NULL;
    t->count--;
    /* Never below the smallest table: a table that empties and fills again
     * (one allocation made and released, over and over) allocates nothing. */
    size_t nslots = t->mask + 1;
    if (nslots > FAB__CU_IDTABLE_MIN && 8 * t->count < nslots)
        (void)fab__cu_resize(t, nslots / 2);
    return value;
}
