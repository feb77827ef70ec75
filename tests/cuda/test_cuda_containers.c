/* The containers libcuda is built on, tested directly, from their sources
 * (they need nothing else of the library): the address-ordered AVL tree that
 * holds reservations and mapped pieces (src/cuda/tree.c), and the id hash
 * table that holds allocations (src/cuda/idtable.c). Every operation is
 * checked against a plain reference: the tree's order and balance, its
 * in-order thread, its count, and floor/ceil for keys present and absent;
 * the table's every entry, present or gone, through growth and shrinking.
 * Like test_cuda_abi.c, and unlike the other cuda tests, this one includes
 * project headers, as it must. */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "src/cuda/idtable.h"
#include "src/cuda/tree.h"

#include "fabtest.h"

#define NKEYS 4096

static uint64_t rng = 0x243F6A8885A308D3ull;

static uint64_t next_rand(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

/* Walk the tree: keys in order within (lo, hi), heights right, balanced.
 * Appends the in-order nodes to out; returns the subtree's height. */
static int check_subtree(const fab__cu_tnode_t *n, uintptr_t lo, uintptr_t hi, bool has_lo,
                         bool has_hi, const fab__cu_tnode_t **out, size_t *nout)
{
    if (!n)
        return 0;
    if (has_lo)
        assert_true(n->key > lo);
    if (has_hi)
        assert_true(n->key < hi);
    int l = check_subtree(n->left, lo, n->key, has_lo, true, out, nout);
    out[(*nout)++] = n;
    int r = check_subtree(n->right, n->key, hi, true, has_hi, out, nout);
    assert_true(l - r <= 1 && r - l <= 1);
    int h = 1 + (l > r ? l : r);
    assert_int_equal(n->height, h);
    return h;
}

/* The tree against present[] (key k*16+16 is in the tree iff present[k]). */
static void check_tree(const fab__cu_tree_t *t, const bool *present)
{
    static const fab__cu_tnode_t *order[NKEYS];
    size_t n = 0;
    int height = check_subtree(t->root, 0, 0, false, false, order, &n);
    assert_int_equal(n, t->count);
    size_t want = 0;
    for (size_t k = 0; k < NKEYS; k++)
        want += present[k];
    assert_int_equal(n, want);
    /* An AVL tree of n nodes is at most 1.44 log2(n + 2) high. */
    int bound = 2;
    for (size_t m = n + 2; m > 1; m >>= 1)
        bound += 2;
    assert_true(height <= bound);
    /* The thread is the in-order walk. */
    for (size_t i = 0; i < n; i++) {
        assert_ptr_equal(order[i]->prev, i > 0 ? order[i - 1] : NULL);
        assert_ptr_equal(order[i]->next, i + 1 < n ? order[i + 1] : NULL);
    }
    /* floor and ceil of every key, present or not, and between keys. */
    for (size_t q = 0; q <= NKEYS; q++) {
        for (uintptr_t delta = 0; delta < 2; delta++) {
            uintptr_t key = q * 16 + 16 - delta * 8; /* a key slot, or between two */
            const fab__cu_tnode_t *fl = fab__cu_tree_floor(t, key);
            const fab__cu_tnode_t *ce = fab__cu_tree_ceil(t, key);
            uintptr_t want_fl = 0, want_ce = 0;
            for (size_t k = 0; k < NKEYS; k++) {
                uintptr_t kk = k * 16 + 16;
                if (present[k] && kk <= key)
                    want_fl = kk;
                if (present[k] && kk >= key && !want_ce)
                    want_ce = kk;
            }
            assert_int_equal(fl ? fl->key : 0, want_fl);
            assert_int_equal(ce ? ce->key : 0, want_ce);
        }
        if (q % 64 != 0) /* every key is costly; a sample of them will do */
            q += 63;
    }
}

static void tree_keeps_order_and_balance_under_random_churn(void **state)
{
    (void)state;
    static fab__cu_tnode_t nodes[NKEYS];
    static bool present[NKEYS];
    fab__cu_tree_t t = {NULL, 0};
    memset(present, 0, sizeof(present));
    for (int step = 0; step < 40000; step++) {
        size_t k = (size_t)(next_rand() % NKEYS);
        if (present[k]) {
            fab__cu_tree_remove(&t, &nodes[k]);
            present[k] = false;
        } else {
            nodes[k].key = k * 16 + 16;
            fab__cu_tree_insert(&t, &nodes[k]);
            present[k] = true;
        }
        if (step % 2000 == 0)
            check_tree(&t, present);
    }
    check_tree(&t, present);
    for (size_t k = 0; k < NKEYS; k++) {
        if (present[k]) {
            fab__cu_tree_remove(&t, &nodes[k]);
            present[k] = false;
        }
    }
    check_tree(&t, present);
    assert_null(t.root);
}

/* Ascending and descending runs are the worst case for an unbalanced tree
 * and the usual one here (pieces are mapped in address order); removing the
 * root over and over moves successors up. */
static void tree_stays_balanced_for_sorted_runs_and_root_removal(void **state)
{
    (void)state;
    static fab__cu_tnode_t nodes[NKEYS];
    static bool present[NKEYS];
    for (int dir = 0; dir < 2; dir++) {
        fab__cu_tree_t t = {NULL, 0};
        memset(present, 0, sizeof(present));
        for (size_t i = 0; i < NKEYS; i++) {
            size_t k = dir == 0 ? i : NKEYS - 1 - i;
            nodes[k].key = k * 16 + 16;
            fab__cu_tree_insert(&t, &nodes[k]);
            present[k] = true;
        }
        check_tree(&t, present);
        for (size_t removed = 0; t.root; removed++) {
            size_t k = (t.root->key - 16) / 16;
            fab__cu_tree_remove(&t, t.root);
            present[k] = false;
            if (removed % 512 == 0)
                check_tree(&t, present);
        }
        assert_int_equal(t.count, 0);
    }
}

static void tree_floor_and_ceil_of_an_empty_tree_are_null(void **state)
{
    (void)state;
    fab__cu_tree_t t = {NULL, 0};
    assert_null(fab__cu_tree_floor(&t, 0));
    assert_null(fab__cu_tree_ceil(&t, UINTPTR_MAX));
    fab__cu_tnode_t one = {.key = 100};
    fab__cu_tree_insert(&t, &one);
    assert_ptr_equal(fab__cu_tree_floor(&t, UINTPTR_MAX), &one);
    assert_ptr_equal(fab__cu_tree_ceil(&t, 0), &one);
    assert_null(fab__cu_tree_floor(&t, 99));
    assert_null(fab__cu_tree_ceil(&t, 101));
    assert_null(one.prev);
    assert_null(one.next);
    fab__cu_tree_remove(&t, &one);
    assert_null(t.root);
}

/* ---- the id table ------------------------------------------------------ */

#define NIDS 20000

/* Every id of ids[] that present[] says is in, is, with its value; every
 * other is not; the count agrees; the table is at most half full. */
static void check_idtable(const fab__cu_idtable_t *t, const uint64_t *ids, const bool *present,
                          size_t n)
{
    size_t in = 0;
    for (size_t i = 0; i < n; i++) {
        void *v = fab__cu_idtable_find(t, ids[i]);
        if (present[i]) {
            assert_ptr_equal(v, &ids[i]);
            in++;
        } else {
            assert_null(v);
        }
    }
    assert_int_equal(t->count, in);
    if (t->slots)
        assert_true(2 * t->count <= t->mask + 1);
    else
        assert_int_equal(t->count, 0);
}

static void idtable_finds_what_it_holds_through_growth_and_removal(void **state)
{
    (void)state;
    static uint64_t ids[NIDS];
    static bool present[NIDS];
    /* Ids as alloc.c makes them (a counter in steps of 16), then random ones:
     * the first cluster in a plain modulo hash, the second do not. */
    for (int kind = 0; kind < 2; kind++) {
        fab__cu_idtable_t t = {NULL, 0, 0, 0};
        for (size_t i = 0; i < NIDS; i++) {
            ids[i] = kind == 0 ? 0x1000 + 16 * i : (next_rand() | 1);
            present[i] = false;
        }
        assert_null(fab__cu_idtable_find(&t, ids[0]));
        assert_null(fab__cu_idtable_remove(&t, ids[0]));
        for (size_t i = 0; i < NIDS; i++) {
            assert_int_equal(fab__cu_idtable_insert(&t, ids[i], &ids[i]), 0);
            present[i] = true;
        }
        check_idtable(&t, ids, present, NIDS);
        /* Random churn: removal's backward shift must keep every other
         * entry reachable, wherever its probe sequence wraps. */
        for (int step = 0; step < 200000; step++) {
            size_t i = (size_t)(next_rand() % NIDS);
            if (present[i]) {
                assert_ptr_equal(fab__cu_idtable_remove(&t, ids[i]), &ids[i]);
                present[i] = false;
            } else {
                assert_int_equal(fab__cu_idtable_insert(&t, ids[i], &ids[i]), 0);
                present[i] = true;
            }
            if (step % 50000 == 0)
                check_idtable(&t, ids, present, NIDS);
        }
        check_idtable(&t, ids, present, NIDS);
        /* Emptying it shrinks it step by step, to the smallest table. */
        size_t most = t.mask + 1;
        for (size_t i = 0; i < NIDS; i++) {
            if (present[i]) {
                assert_ptr_equal(fab__cu_idtable_remove(&t, ids[i]), &ids[i]);
                present[i] = false;
            }
            if (i % 4096 == 0)
                check_idtable(&t, ids, present, NIDS);
        }
        assert_true(most >= 2 * NIDS);
        assert_int_equal(t.mask + 1, FAB__CU_IDTABLE_MIN);
        assert_int_equal(t.count, 0);
        check_idtable(&t, ids, present, NIDS);
        free(t.slots);
    }
}

/* A handful of entries in the smallest table: clusters wrap around its end
 * all the time, the case a backward shift gets wrong most easily. */
static void idtable_removal_keeps_clusters_that_wrap(void **state)
{
    (void)state;
    enum { FEW = 12 };
    uint64_t ids[FEW];
    bool present[FEW] = {false};
    fab__cu_idtable_t t = {NULL, 0, 0, 0};
    for (size_t i = 0; i < FEW; i++)
        ids[i] = next_rand() | 1;
    for (int step = 0; step < 100000; step++) {
        size_t i = (size_t)(next_rand() % FEW);
        if (present[i]) {
            assert_ptr_equal(fab__cu_idtable_remove(&t, ids[i]), &ids[i]);
            present[i] = false;
        } else {
            assert_int_equal(fab__cu_idtable_insert(&t, ids[i], &ids[i]), 0);
            present[i] = true;
        }
        check_idtable(&t, ids, present, FEW);
    }
    free(t.slots);
}

/* Id 0 marks an empty slot: it is never found, never removed. */
static void idtable_never_answers_id_zero(void **state)
{
    (void)state;
    fab__cu_idtable_t t = {NULL, 0, 0, 0};
    int x;
    assert_int_equal(fab__cu_idtable_insert(&t, 0x1000, &x), 0);
    assert_null(fab__cu_idtable_find(&t, 0));
    assert_null(fab__cu_idtable_remove(&t, 0));
    assert_ptr_equal(fab__cu_idtable_remove(&t, 0x1000), &x);
    assert_null(fab__cu_idtable_find(&t, 0x1000));
    free(t.slots);
}

static const struct CMUnitTest tests[] = {
    cmocka_unit_test(tree_keeps_order_and_balance_under_random_churn),
    cmocka_unit_test(tree_stays_balanced_for_sorted_runs_and_root_removal),
    cmocka_unit_test(tree_floor_and_ceil_of_an_empty_tree_are_null),
    cmocka_unit_test(idtable_finds_what_it_holds_through_growth_and_removal),
    cmocka_unit_test(idtable_removal_keeps_clusters_that_wrap),
    cmocka_unit_test(idtable_never_answers_id_zero),
};

FAB_TEST_MAIN_NO_HELPERS("cuda", tests)
