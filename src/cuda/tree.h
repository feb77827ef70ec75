/* An address-ordered AVL tree, intrusive: a node sits inside what it orders
 * (vmm.c's reservations and mapped pieces, keyed by address) and the tree
 * allocates nothing, so no operation on it can fail. Search, insert and
 * remove are O(log n); the tree also threads its nodes in key order (prev,
 * next), so walking neighbours is O(1). Keys are unique. It knows nothing of
 * CUDA and takes no lock: its owner's lock guards it. tree.c implements it;
 * tests/cuda/test_cuda_tree.c tests it directly.
 *
 * Why not a library: glibc's tsearch has no floor or neighbour query, and
 * libbsd's <sys/tree.h> would add a dependency to the whole build for a
 * hundred lines. */
#ifndef FAB_CUDA_TREE_H
#define FAB_CUDA_TREE_H

#include <stddef.h>
#include <stdint.h>

typedef struct fab__cu_tnode {
    struct fab__cu_tnode *left, *right; /* the tree */
    struct fab__cu_tnode *prev, *next;  /* every node, in key order; NULL at the ends */
    uintptr_t key;
    int height; /* of the subtree rooted here; a leaf is 1 */
} fab__cu_tnode_t;

typedef struct fab__cu_tree {
    fab__cu_tnode_t *root;
    size_t count;
} fab__cu_tree_t;

/* Insert node, whose key the caller set and the tree does not hold yet. */
void fab__cu_tree_insert(fab__cu_tree_t *tree, fab__cu_tnode_t *node);
/* Remove node, which the tree holds. */
void fab__cu_tree_remove(fab__cu_tree_t *tree, fab__cu_tnode_t *node);
/* The node with the greatest key <= key, or NULL. */
fab__cu_tnode_t *fab__cu_tree_floor(const fab__cu_tree_t *tree, uintptr_t key);
/* The node with the least key >= key, or NULL. */
fab__cu_tnode_t *fab__cu_tree_ceil(const fab__cu_tree_t *tree, uintptr_t key);

#endif /* FAB_CUDA_TREE_H */
