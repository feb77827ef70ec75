/* The AVL tree of tree.h: a node's subtrees differ in height by at most one,
 * so a tree of n nodes is at most 1.44 log2(n) deep (25 levels at 100k) and
 * the recursive insert and remove below recurse no deeper. Insert and remove
 * rebalance on the way back up; both also keep the in-order thread (prev,
 * next), insert from the last left and right turns of its descent, which are
 * the new node's neighbours. */
#include "src/cuda/tree.h"

static int fab__cu_height(const fab__cu_tnode_t *n)
{
    return n ? n->height : 0;
}

static void fab__cu_fix_height(fab__cu_tnode_t *n)
{
    int l = fab__cu_height(n->left), r = fab__cu_height(n->right);
    n->height = 1 + (l > r ? l : r);
}

static fab__cu_tnode_t *fab__cu_rotate_right(fab__cu_tnode_t *y)
{
    fab__cu_tnode_t *x = y->left;
    y->left = x->right;
    x->right = y;
    fab__cu_fix_height(y);
    fab__cu_fix_height(x);
    return x;
}

static fab__cu_tnode_t *fab__cu_rotate_left(fab__cu_tnode_t *x)
{
    fab__cu_tnode_t *y = x->right;
    x->right = y->left;
    y->left = x;
    fab__cu_fix_height(x);
    fab__cu_fix_height(y);
    return y;
}

/* n's subtrees are AVL trees whose heights differ by at most two: make n's
 * subtree one, and return its new root. */
static fab__cu_tnode_t *fab__cu_balance(fab__cu_tnode_t *n)
{
    int b = fab__cu_height(n->left) - fab__cu_height(n->right);
    if (b > 1) {
        if (fab__cu_height(n->left->left) < fab__cu_height(n->left->right))
            n->left = fab__cu_rotate_left(n->left);
        return fab__cu_rotate_right(n);
    }
    if (b < -1) {
        if (fab__cu_height(n->right->right) < fab__cu_height(n->right->left))
            n->right = fab__cu_rotate_right(n->right);
        return fab__cu_rotate_left(n);
    }
    fab__cu_fix_height(n);
    return n;
}

static fab__cu_tnode_t *fab__cu_insert_at(fab__cu_tnode_t *root, fab__cu_tnode_t *node,
                                          fab__cu_tnode_t **prev, fab__cu_tnode_t **next)
{
    if (!root)
        return node;
    if (node->key < root->key) {
        *next = root;
        root->left = fab__cu_insert_at(root->left, node, prev, next);
    } else {
        *prev = root;
        root->right = fab__cu_insert_at(root->right, node, prev, next);
    }
    return fab__cu_balance(root);
}

void fab__cu_tree_insert(fab__cu_tree_t *tree, fab__cu_tnode_t *node)
{
    fab__cu_tnode_t *prev = NULL, *next = NULL;
    node->left = node->right = NULL;
    node->height = 1;
    tree->root = fab__cu_insert_at(tree->root, node, &prev, &next);
    node->prev = prev;
    node->next = next;
    if (prev)
        prev->next = node;
    if (next)
        next->prev = node;
    tree->count++;
}

/* Detach the least node of root's subtree into *min; return the new root. */
static fab__cu_tnode_t *fab__cu_remove_min(fab__cu_tnode_t *root, fab__cu_tnode_t **min)
{
    if (!root->left) {
        *min = root;
        return root->right;
    }
    root->left = fab__cu_remove_min(root->left, min);
    return fab__cu_balance(root);
}

static fab__cu_tnode_t *fab__cu_remove_at(fab__cu_tnode_t *root, fab__cu_tnode_t *node)
{
    if (node->key < root->key) {
        root->left = fab__cu_remove_at(root->left, node);
    } else if (node->key > root->key) {
        root->right = fab__cu_remove_at(root->right, node);
    } else {
        /* root is node: its successor, the least of its right subtree, takes
         * its place (nodes are the caller's, so they move, not their keys). */
        if (!node->right)
            return node->left;
        fab__cu_tnode_t *min;
        fab__cu_tnode_t *right = fab__cu_remove_min(node->right, &min);
        min->left = node->left;
        min->right = right;
        return fab__cu_balance(min);
    }
    return fab__cu_balance(root);
}

void fab__cu_tree_remove(fab__cu_tree_t *tree, fab__cu_tnode_t *node)
{
    tree->root = fab__cu_remove_at(tree->root, node);
    if (node->prev)
        node->prev->next = node->next;
    if (node->next)
        node->next->prev = node->prev;
    node->left = node->right = node->prev = node->next = NULL;
    tree->count--;
}

fab__cu_tnode_t *fab__cu_tree_floor(const fab__cu_tree_t *tree, uintptr_t key)
{
    fab__cu_tnode_t *best = NULL;
    for (fab__cu_tnode_t *n = tree->root; n;) {
        if (n->key <= key) {
            best = n;
            n = n->right;
        } else {
            n = n->left;
        }
    }
    return best;
}

fab__cu_tnode_t *fab__cu_tree_ceil(const fab__cu_tree_t *tree, uintptr_t key)
{
    fab__cu_tnode_t *best = NULL;
    for (fab__cu_tnode_t *n = tree->root; n;) {
        if (n->key >= key) {
            best = n;
            n = n->left;
        } else {
            n = n->right;
        }
    }
    return best;
}
