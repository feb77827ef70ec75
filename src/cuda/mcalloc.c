/* Multicast objects as allocations: the hooks through which alloc.c and
 * stream.c, below multicast.c, reach it, installed when the library loads
 * (sharing an object's token, the destroy at the last reference, the wait
 * before a map of an incomplete team, the sync at each synchronisation
 * point; the adopt hook, which joins a team, is multicast.c's), and the
 * lookup of the object a handle names. The team itself and every MC_*
 * message are multicast.c's; its top comment has the design and the
 * lifecycle. */
#include "src/cuda/state.h"
#include "src/cuda/stream.h"
#include "src/cuda/alloc.h"
#include "src/cuda/multicast.h"
#include "src/cuda/mcobject.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

/* ---- the hooks alloc.c calls ---------------------------------------------- */

static int fab__cu_mc_share_fd(const fab__cu_alloc_t *a)
{
    return a->mc->ctl_fd;
}

static void *fab__cu_mc_share_region(const fab__cu_alloc_t *a)
{
    return a->mc->region;
}

/* Drop the references binds held on their memory, and their mappings. */
void fab__cu_mc_put_mems(fab__cu_mc_local_t *list)
{
    if (!list)
        return;
    fab__cu_alloc_t *dead = NULL;
    fab__rw_wrlock(&fab__cu.lock);
    for (fab__cu_mc_local_t *l = list; l; l = l->next)
        fab__cu_alloc_put(l->mem, &dead);
    fab__rw_unlock(&fab__cu.lock);
    fab__cu_alloc_destroy(dead);
    while (list) {
        fab__cu_mc_local_t *next = list->next;
        munmap(list->map, list->size);
        if (list->holes >= 0)
            close(list->holes);
        free(list);
        list = next;
    }
}

static void fab__cu_mc_destroy(fab__cu_alloc_t *a)
{
    struct fab__cu_mc *mc = a->mc;
    a->mc = NULL;
    pthread_mutex_lock(&fab__cu_mc_mu);
    for (struct fab__cu_mc **pp = &fab__cu_mcs; *pp; pp = &(*pp)->next) {
        if (*pp == mc) {
            *pp = mc->next;
            __atomic_sub_fetch(&fab__cu_mc_live, 1, __ATOMIC_RELEASE);
            break;
        }
    }
    fab__cu_mc_local_t *locals = mc->locals;
    mc->locals = NULL;
    pthread_mutex_unlock(&fab__cu_mc_mu);
    fab__cu_mc_free(mc); /* leaving the team undoes its binds in the daemon */
    fab__cu_mc_put_mems(locals);
}

static CUresult fab__cu_mc_wait_handle(CUmemGenericAllocationHandle h);

static const fab__cu_alloc_mc_hooks_t fab__cu_mc_hooks = {
    .share_fd = fab__cu_mc_share_fd,
    .share_region = fab__cu_mc_share_region,
    .adopt = fab__cu_mc_adopt,
    .destroy = fab__cu_mc_destroy,
    .wait_team = fab__cu_mc_wait_handle,
};

__attribute__((constructor)) static void fab__cu_mc_install(void)
{
    fab__cu_alloc_mc_hooks = &fab__cu_mc_hooks;
    fab__cu_stream_sync_hook = fab__cu_mc_sync;
}

/* The multicast object a handle names, with a reference taken (the caller
 * puts it), or NULL. */
fab__cu_alloc_t *fab__cu_mc_get(CUmemGenericAllocationHandle h)
{
    fab__rw_wrlock(&fab__cu.lock);
    fab__cu_alloc_t *a = fab__cu_alloc_find(h);
    if (a && a->mc)
        fab__cu_alloc_get(a);
    else
        a = NULL;
    fab__rw_unlock(&fab__cu.lock);
    return a;
}

void fab__cu_mc_put(fab__cu_alloc_t *a)
{
    fab__cu_alloc_t *dead = NULL;
    fab__rw_wrlock(&fab__cu.lock);
    fab__cu_alloc_put(a, &dead);
    fab__rw_unlock(&fab__cu.lock);
    fab__cu_alloc_destroy(dead);
}

static CUresult fab__cu_mc_wait_handle(CUmemGenericAllocationHandle h)
{
    /* Every cuMemMap asks: a process with no multicast object pays nothing. */
    if (__atomic_load_n(&fab__cu_mc_live, __ATOMIC_ACQUIRE) == 0)
        return CUDA_SUCCESS;
    fab__cu_alloc_t *a = fab__cu_mc_get(h);
    if (!a)
        return CUDA_SUCCESS; /* memory, or no handle: cuMemMap decides */
    CUresult r = fab__cu_mc_wait_team(a->mc);
    fab__cu_mc_put(a);
    return r;
}
