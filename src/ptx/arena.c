/* The arena a parsed module lives in (front.h): chunks of memory handed out
 * in 16-byte steps and freed all at once with the module, so that the parser
 * never frees piecemeal and a failed parse leaks nothing. Also the arena's
 * growable arrays. The arena counts what it holds and refuses more than
 * FAB__PTX_ARENA_MAX. */
#include "src/ptx/front.h"

#include <stdlib.h>
#include <string.h>

#define FAB__PTX_CHUNK ((size_t)64 << 10)

typedef struct fab__ptx_chunk {
    struct fab__ptx_chunk *next;
    size_t size, used;
    _Alignas(16) unsigned char data[];
} fab__ptx_chunk_t;

struct fab__ptx_arena {
    fab__ptx_chunk_t *head;
    size_t total;
};

fab__ptx_arena_t *fab__ptx_arena_new(void)
{
    return calloc(1, sizeof(fab__ptx_arena_t));
}

void fab__ptx_arena_free(fab__ptx_arena_t *a)
{
    if (!a)
        return;
    for (fab__ptx_chunk_t *c = a->head, *next; c; c = next) {
        next = c->next;
        free(c);
    }
    free(a);
}

void *fab__ptx_arena_alloc(fab__ptx_arena_t *a, size_t size)
{
    if (size > FAB__PTX_ARENA_MAX)
        return NULL;
    size = (size + 15) & ~(size_t)15;
    if (size == 0)
        size = 16;
    fab__ptx_chunk_t *c = a->head;
    if (!c || c->size - c->used < size) {
        size_t want = size > FAB__PTX_CHUNK / 4 ? size : FAB__PTX_CHUNK;
        if (a->total + want > FAB__PTX_ARENA_MAX)
            return NULL;
        fab__ptx_chunk_t *n = malloc(sizeof(*n) + want);
        if (!n)
            return NULL;
        n->size = want;
        n->used = 0;
        a->total += want;
        if (c && want != FAB__PTX_CHUNK) {
            /* a large block gets a chunk of its own behind the current one,
             * so that the current one's free space stays usable */
            n->next = c->next;
            c->next = n;
            n->used = size;
            memset(n->data, 0, size);
            return n->data;
        }
        n->next = c;
        a->head = c = n;
    }
    void *p = c->data + c->used;
    c->used += size;
    memset(p, 0, size);
    return p;
}

char *fab__ptx_arena_strndup(fab__ptx_arena_t *a, const char *s, size_t len)
{
    char *d = fab__ptx_arena_alloc(a, len + 1);
    if (d)
        memcpy(d, s, len);
    return d;
}

void *fab__ptx_vec_push(fab__ptx_arena_t *a, fab__ptx_vec_t *v, size_t elem)
{
    if (v->n == v->cap) {
        uint32_t cap = v->cap ? v->cap * 2 : 8;
        if (cap <= v->cap || (size_t)cap > FAB__PTX_ARENA_MAX / elem)
            return NULL;
        void *d = fab__ptx_arena_alloc(a, (size_t)cap * elem);
        if (!d)
            return NULL;
        if (v->n)
            memcpy(d, v->data, (size_t)v->n * elem);
        v->data = d;
        v->cap = cap;
    }
    unsigned char *p = (unsigned char *)v->data + (size_t)v->n * elem;
    memset(p, 0, elem);
    v->n++;
    return p;
}
