/* The containers libcuda is built on, tested directly, from their sources
 * (they need nothing else of the library): the address-ordered AVL tree that
 * holds reservations and mapped pieces (src/cuda/tree.c). Every operation is
 * checked against a plain sorted reference: the tree's order and balance, its
 * in-order thread, its count, and floor/ceil for keys present and absent.
 * Like test_cuda_abi.c, and unlike the other cuda tests, this one includes
 * project headers, as it must. */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

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

static const struct CMUnitTest tests[] = {
    cmocka_unit_test(tree_keeps_order_and_balance_under_random_churn),
    cmocka_unit_test(tree_stays_balanced_for_sorted_runs_and_root_removal),
    cmocka_unit_test(tree_floor_and_ceil_of_an_empty_tree_are_null),
};

FAB_TEST_MAIN_NO_HELPERS("cuda", tests)
