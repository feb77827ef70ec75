/* The client's regions: allocations and imports (one, pipelined, or in
 * IMPORT_MANY batches), their handles, maps, unmaps and releases, one count
 * (refs) with get/put as client.c's top comment says. */
#include "fabmem/fabric.h"
#include "src/base/hot.h"
#include "src/fabric/client_fault.h"
#include "src/fabric/client_impl.h"
#include "src/fabric/client_ipc.h"
#include "src/fabric/client_mc.h"
#include "src/fabric/fabmemd.h"

#include <dlfcn.h>
#include <errno.h>
#include <stddef.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "src/common/log.h"
#include "src/common/proto.h"
#include "src/fabric/observe.h"
#include "src/base/env.h"

/* ---- regions --------------------------------------------------------------- */

/* A client keeps the last region record it freed and makes the next one
 * from it, under its lock: an import and its release then call neither
 * malloc nor free, whose code, the thread's cache of freed blocks and the
 * arena's lines were six pages more that every import touched (with many
 * importers each finds them cold). glibc hands a freed block of that size
 * straight back to the next malloc anyway, so a region used after its
 * release aliases the next one either way; what finds such a use is a
 * memory checker's delay before reuse, so under AddressSanitizer or valgrind
 * every record is malloc'd and freed as before. */
#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define FAB__UNDER_ASAN 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__) && !defined(FAB__UNDER_ASAN)
#define FAB__UNDER_ASAN 1
#endif
#if defined(__has_include)
#if __has_include(<valgrind/memcheck.h>)
#include <valgrind/memcheck.h>
#endif
#endif

bool fab__region_keeps_spare(void)
{
#if defined(FAB__UNDER_ASAN)
    return false;
#elif defined(VALGRIND_GET_VBITS)
    /* memcheck answers this request (1); natively and under valgrind's
     * other tools (lackey, callgrind: the footprint and instruction counts
     * of docs/cuda.md) it comes back 0. */
    unsigned char byte = 0, bits;
    return VALGRIND_GET_VBITS(&byte, &bits, 1) != 1;
#else
    return true;
#endif
}

FAB__HOT
static fab_region_t *fab__region_new(fab_client_t *client, const fab__reply_memory_t *reply, int fd,
                                     fab_access_t access)
{
    /* malloc, not calloc: glibc's calloc never takes from the thread's
     * cache of freed blocks, so one per import cost some 300 instructions
     * more; the literal below sets every field. */
    fab_region_t *region = client->spare;
    if (region != NULL)
        client->spare = NULL;
    else if ((region = malloc(sizeof(*region))) == NULL)
        return NULL;
    *region = (fab_region_t){.client = client,
                             .id = reply->region,
                             .fd = fd,
                             .size = (size_t)reply->size,
                             .access = access,
                             .uuid = reply->uuid,
                             .device = reply->device,
                             .refs = 1,
                             .next = client->regions,
                             .capmaps = 2};
    /* Two mappings at once need no array of their own: an import's map
     * and unmap then touch malloc only for the region itself. */
    region->maps = region->map_inline;
    if (client->regions != NULL)
        client->regions->prev = region;
    client->regions = region;
    return region;
}

/* Send a request whose reply hands out memory (ALLOC: creator, IMPORT: not)
 * and wrap the memfd that came with it in a new region. If the reply carries
 * no fd, or there is no memory for the region, the daemon's reference is
 * dropped again so that nothing leaks on either side. Called with the lock
 * held; *region_out is written only on success. */
static fab_status_t fab__region_from_reply(fab_client_t *client, const fab__request_t *request,
                                           const fab__reply_t *reply, int fd, bool creator,
                                           fab_region_t **region_out);

static fab_status_t fab__call_for_region(fab_client_t *client, fab__request_t *request,
                                         bool creator, fab_region_t **region_out)
{
    fab__reply_t reply;
    int fd = -1;
    fab_status_t status = fab__client_call(client, request, NULL, &reply, &fd);
    if (status != FAB_SUCCESS)
        return status;
    return fab__region_from_reply(client, request, &reply, fd, creator, region_out);
}

/* The region a successful ALLOC or IMPORT reply (and its fd) hands out; see
 * fab__call_for_region. */
/* The region for memory a reply handed out with fd; NULL on no memory. */
static fab_region_t *fab__region_for(fab_client_t *client, const fab__reply_memory_t *memory,
                                     int fd, bool creator)
{
    /* The creator may do anything with its memory; an importer what it was
     * granted. */
    fab_access_t access = creator || memory->access == FAB_ACCESS_READ_WRITE
                              ? FAB_ACCESS_READ_WRITE
                              : FAB_ACCESS_READ_ONLY;
    fab_region_t *region = fab__region_new(client, memory, fd, access);
    if (region != NULL)
        region->creator = creator;
    return region;
}

FAB__HOT
static fab_status_t fab__region_from_reply(fab_client_t *client, const fab__request_t *request,
                                           const fab__reply_t *reply, int fd, bool creator,
                                           fab_region_t **region_out)
{
    const fab__reply_memory_t *memory = creator ? &reply->u.alloc.memory : &reply->u.import;
    fab_region_t *region = fd >= 0 ? fab__region_for(client, memory, fd, creator) : NULL;
    if (region == NULL) {
        if (fd >= 0)
            close(fd);
        if (client->sock >= 0)
            fab__client_release_send(client, memory->region);
        return fd >= 0 ? FAB_ERROR_OUT_OF_MEMORY : FAB_ERROR_SYSTEM_NOT_READY;
    }
    if (creator) {
        region->handle = reply->u.alloc.handle;
        region->handle_type = request->u.alloc.handle_type;
        memcpy(region->token, reply->u.alloc.token, sizeof(region->token));
    } else {
        region->handle = request->u.import.handle;
        region->kind = reply->u.import.kind;
    }
    client->live_regions++;
    *region_out = region;
    return FAB_SUCCESS;
}

fab_status_t fab_client_allocate(fab_client_t *client, const fab_alloc_props_t *props,
                                 fab_region_t **region_out)
{
    if (client == NULL || props == NULL || region_out == NULL)
        return FAB_ERROR_INVALID_VALUE;
    if (!fab__client_owned(client))
        return FAB_ERROR_ILLEGAL_STATE;
    fab__request_t request = {.type = FAB__MSG_ALLOC};
    request.u.alloc.device = props->device_ordinal;
    request.u.alloc.size = props->size;
    request.u.alloc.handle_type = (uint32_t)props->handle_type;
    if ((unsigned)props->peer_access > FAB_ACCESS_READ_WRITE)
        return FAB_ERROR_INVALID_VALUE;
    request.u.alloc.peer_access = (uint8_t)props->peer_access;
    fab__rw_wrlock(&client->lock);
    fab_status_t status = fab__call_for_region(client, &request, true, region_out);
    fab__rw_unlock(&client->lock);
    return status;
}

FAB__HOT
fab_status_t fab_client_import(fab_client_t *client, const fab_handle_t *handle,
                               int device_ordinal, fab_region_t **region_out)
{
    if (client == NULL || handle == NULL || region_out == NULL)
        return FAB_ERROR_INVALID_VALUE;
    if (!fab__client_owned(client))
        return FAB_ERROR_ILLEGAL_STATE;
    /* The header and IMPORT's member of the union, all the encoder reads of
     * an IMPORT (seq, flags and the released ids are the call's to set):
     * not the 1,432 bytes of the whole request, nor HELLO's 264-byte name. */
    fab__request_t request;
    request.type = FAB__MSG_IMPORT;
    request.seq = 0;
    request.flags = 0;
    request.nreleases = 0;
    memset(&request.u.import, 0, sizeof(request.u.import));
    request.u.import.device = device_ordinal;
    request.u.import.handle = *handle;
    fab__rw_wrlock(&client->lock);
    fab_status_t status = fab__call_for_region(client, &request, false, region_out);
    fab__rw_unlock(&client->lock);
    return status;
}

/* IMPORTs in flight at once when fab_client_import_many talks to a
 * version-5 daemon: with the RELEASE replies that may wait unread
 * (FAB__DEFERRED_MAX), about what the daemon's small send buffer holds for
 * one connection. */
#define FAB__IMPORT_BATCH 8

/* k (at most FAB__IMPORT_BATCH) ordinary IMPORTs sent together, for a
 * daemon without IMPORT_MANY; the caller holds the lock and a connection. */
static void fab__import_pipelined(fab_client_t *client, const fab_handle_t *handles, size_t k,
                                  int device, fab_region_t **regions_out, fab_status_t *statuses)
{
    fab__request_t requests[FAB__IMPORT_BATCH];
    size_t sent = 0;
    /* All k go out before the first reply is read; only the last says
     * WAITS, so the daemon answers them all in one wakeup. */
    for (; sent < k; sent++) {
        fab__request_t *request = &requests[sent];
        memset(request, 0, offsetof(fab__request_t, releases));
        request->type = FAB__MSG_IMPORT;
        request->u.import.device = device;
        request->u.import.handle = handles[sent];
        if (fab__client_request_send(client, request, -1, sent + 1 == k ? FAB__REQUEST_WAITS : 0) != 0)
            break;
    }
    for (size_t j = 0; j < k; j++) {
        fab_status_t status = FAB_ERROR_SYSTEM_NOT_READY;
        regions_out[j] = NULL;
        if (j < sent && client->sock >= 0) {
            fab__reply_t reply;
            int fd = -1;
            status = fab__client_reply_await(client, &requests[j], &reply, &fd);
            if (status == FAB_SUCCESS) {
                status = fab__region_from_reply(client, &requests[j], &reply, fd, false,
                                                &regions_out[j]);
            } else if (status == FAB_ERROR_SYSTEM_NOT_READY && client->sock >= 0) {
                /* Timed out: the replies still to come are read and undone
                 * later, as that one's is. */
                for (size_t m = j + 1; m < sent && client->sock >= 0; m++) {
                    if (client->deferred >= FAB__DEFERRED_MAX)
                        fab__client_connection_lost(client);
                    else
                        client->deferred++;
                }
                sent = j + 1;
            }
        }
        statuses[j] = status;
    }
}

/* One IMPORT_MANY of k handles (1..FAB__IMPORT_MANY_MAX): one request, one
 * reply with an entry and, for each import that succeeded, an fd, in order.
 * The caller holds the lock and a connection to a version-6 daemon. A reply
 * that breaks the protocol (another count, more successes than fds with
 * none lost, or more fds than successes) breaks the connection, which drops
 * what it handed out; an import whose fd this process had no room for is
 * OUT_OF_MEMORY and its reference given back, as fab_client_import's. */
static void fab__import_batch(fab_client_t *client, const fab_handle_t *handles, size_t k,
                              int device, fab_region_t **regions_out, fab_status_t *statuses)
{
    fab__request_t request;
    memset(&request, 0, offsetof(fab__request_t, releases));
    request.type = FAB__MSG_IMPORT_MANY;
    request.u.import_many.device = device;
    request.u.import_many.count = (uint8_t)k;
    memcpy(request.handles, handles, k * sizeof(handles[0]));
    fab__reply_t reply;
    fab__fds_t fds = {0};
    fab_status_t status = FAB_ERROR_SYSTEM_NOT_READY;
    if (fab__client_request_send(client, &request, -1, FAB__REQUEST_WAITS) == 0)
        status = fab__client_reply_await_fds(client, &request, &reply, &fds);
    if (status == FAB_SUCCESS) {
        unsigned made = 0;
        for (unsigned i = 0; i < reply.u.import_many.count; i++)
            made += reply.u.import_many.entries[i].status == FAB_SUCCESS;
        if (reply.u.import_many.count != k || made < fds.count || (made > fds.count && !fds.lost)) {
            fab__log(FAB__LOG_WARN, "fabmemd answered %zu imports with %u entries, %u of them "
                     "made, and %u fds: dropping the connection", k, reply.u.import_many.count,
                     made, fds.count);
            fab__client_fds_close(&fds);
            fab__client_connection_lost(client);
            status = FAB_ERROR_SYSTEM_NOT_READY;
        } else if (made > fds.count) {
            fab__log(FAB__LOG_WARN, "out of file descriptors: the daemon's reply lost %u of its "
                     "%u fds", made - fds.count, made);
        }
    }
    unsigned next = 0; /* the next fd to hand to a region */
    for (size_t i = 0; i < k; i++) {
        regions_out[i] = NULL;
        if (status != FAB_SUCCESS) {
            statuses[i] = status;
            continue;
        }
        const fab__reply_memory_t *memory = &reply.u.import_many.entries[i].memory;
        statuses[i] = (fab_status_t)reply.u.import_many.entries[i].status;
        if (statuses[i] != FAB_SUCCESS)
            continue;
        fab_region_t *region = NULL;
        if (next < fds.count) {
            int fd = fds.fd[next++];
            region = fab__region_for(client, memory, fd, false);
            if (region == NULL)
                close(fd);
        }
        if (region == NULL) {
            fab__client_release_later(client, memory->region);
            statuses[i] = FAB_ERROR_OUT_OF_MEMORY;
            continue;
        }
        region->handle = handles[i];
        client->live_regions++;
        regions_out[i] = region;
    }
}

fab_status_t fab_client_import_many(fab_client_t *client, const fab_handle_t *handles,
                                    size_t count, int device_ordinal, fab_region_t **regions_out,
                                    fab_status_t *statuses_out)
{
    if (client == NULL || (count != 0 && (handles == NULL || regions_out == NULL)))
        return FAB_ERROR_INVALID_VALUE;
    if (!fab__client_owned(client))
        return FAB_ERROR_ILLEGAL_STATE;
    fab_status_t first = FAB_SUCCESS;
    fab__rw_wrlock(&client->lock);
    for (size_t done = 0; done < count;) {
        fab_status_t statuses[FAB__IMPORT_MANY_MAX];
        bool up = client->sock >= 0 || fab__client_reconnect(client) == FAB_SUCCESS;
        bool batch = up && client->proto >= FAB__PROTO_VERSION_IMPORT_MANY;
        size_t most = batch ? FAB__IMPORT_MANY_MAX : FAB__IMPORT_BATCH;
        size_t k = count - done < most ? count - done : most;
        if (batch)
            fab__import_batch(client, handles + done, k, device_ordinal, regions_out + done,
                              statuses);
        else if (up)
            fab__import_pipelined(client, handles + done, k, device_ordinal, regions_out + done,
                                  statuses);
        for (size_t j = 0; j < k; j++) {
            if (!up) {
                regions_out[done + j] = NULL;
                statuses[j] = FAB_ERROR_SYSTEM_NOT_READY;
            }
            if (statuses_out != NULL)
                statuses_out[done + j] = statuses[j];
            if (statuses[j] != FAB_SUCCESS && first == FAB_SUCCESS)
                first = statuses[j];
        }
        done += k;
    }
    fab__rw_unlock(&client->lock);
    return first;
}

fab_status_t fab_region_export(fab_region_t *region, fab_handle_t *handle_out)
{
    if (region == NULL || handle_out == NULL)
        return FAB_ERROR_INVALID_VALUE;
    fab_client_t *client = region->client;
    if (!fab__client_owned(client))
        return FAB_ERROR_ILLEGAL_STATE;
    fab__rw_wrlock(&client->lock);
    fab_status_t status = FAB_ERROR_INVALID_HANDLE;
    if (!region->released) {
        fab__request_t request = {.type = FAB__MSG_EXPORT};
        fab__reply_t reply;
        status = fab__client_call(client, &request, region, &reply, NULL);
        if (status == FAB_SUCCESS)
            *handle_out = reply.u.exported.handle;
    }
    fab__rw_unlock(&client->lock);
    return status;
}

int fab_region_fd(const fab_region_t *region)
{
    return region ? region->fd : -1;
}

size_t fab_region_size(const fab_region_t *region)
{
    return region ? region->size : 0;
}

fab_access_t fab_region_access(const fab_region_t *region)
{
    return region ? region->access : FAB_ACCESS_NONE;
}

fab_uuid_t fab_region_uuid(const fab_region_t *region)
{
    fab_uuid_t none = {{0}};
    return region ? region->uuid : none;
}

int fab_region_device_ordinal(const fab_region_t *region)
{
    return region ? region->device : -1;
}

bool fab__region_maybe_mc_token(const fab_region_t *region)
{
    return region != NULL && region->kind != FAB__MEMORY_PLAIN;
}

FAB__HOT
fab_status_t fab_region_map(fab_region_t *region, fab_access_t access, void **addr_out)
{
    if (region == NULL || addr_out == NULL || !fab_access_is_mappable(access))
        return FAB_ERROR_INVALID_VALUE;
    if (access == FAB_ACCESS_READ_WRITE && region->access != FAB_ACCESS_READ_WRITE)
        return FAB_ERROR_NOT_PERMITTED;
    fab_client_t *client = region->client;
    if (!fab__client_owned(client))
        return FAB_ERROR_ILLEGAL_STATE;
    fab__rw_wrlock(&client->lock);
    fab_status_t status = FAB_ERROR_INVALID_VALUE;
    if (region->released)
        goto out;
    status = FAB_ERROR_OUT_OF_MEMORY;
    if (region->nmaps == region->capmaps) {
        size_t cap = region->capmaps * 2;
        void **grown = realloc(region->maps == region->map_inline ? NULL : region->maps,
                               cap * sizeof(*grown));
        if (grown == NULL)
            goto out;
        if (region->maps == region->map_inline)
            memcpy(grown, region->map_inline, sizeof(region->map_inline));
        region->maps = grown;
        region->capmaps = cap;
    }
    int prot = access == FAB_ACCESS_READ_WRITE ? PROT_READ | PROT_WRITE : PROT_READ;
    void *addr = mmap(NULL, region->size, prot, MAP_SHARED, region->fd, 0);
    if (addr == MAP_FAILED) {
        fab__log(FAB__LOG_WARN, "mmap of %zu bytes: %s", region->size, strerror(errno));
        goto out;
    }
    region->maps[region->nmaps++] = addr;
    region->refs++;
    *addr_out = addr;
    status = FAB_SUCCESS;
out:
    fab__rw_unlock(&client->lock);
    return status;
}

/* The last put: drop the daemon's reference and free the region; the caller
 * holds the lock. */
FAB__HOT
static void fab__region_free(fab_region_t *region)
{
    fab_client_t *client = region->client;
    if (client->deferred >= FAB__DEFERRED_MAX)
        fab__client_drain(client);
    if (region->prev != NULL)
        region->prev->next = region->next;
    else
        client->regions = region->next;
    if (region->next != NULL)
        region->next->prev = region->prev;
    /* A broken connection is not mended here: the daemon that broke it
     * holds nothing of ours, and a new one learns of live regions only (so
     * no stale id is ever sent to it). */
    bool queued = false;
    if (client->sock >= 0 && region->id != 0) {
        if (region->creator || client->nreleases == FAB__PROTO_RELEASES_MAX) {
            fab__client_release_send(client, region->id);
        } else {
            client->releases[client->nreleases++] = region->id;
            queued = true;
        }
    }
    /* A queued id's fd is closed when the id goes out (client_impl.h). */
    if (queued)
        client->closing[client->nclosing++] = region->fd;
    else
        close(region->fd);
    client->live_regions--;
    if (region->maps != region->map_inline)
        free(region->maps);
    if (client->keeps_spare && client->spare == NULL)
        client->spare = region;
    else
        free(region);
}

static void fab__region_put(fab_region_t *region)
{
    if (--region->refs == 0)
        fab__region_free(region);
}

FAB__HOT
fab_status_t fab_region_unmap(fab_region_t *region, void *addr)
{
    if (region == NULL || addr == NULL)
        return FAB_ERROR_INVALID_VALUE;
    fab_client_t *client = region->client;
    if (!fab__client_owned(client))
        return FAB_ERROR_ILLEGAL_STATE;
    fab__rw_wrlock(&client->lock);
    fab_status_t status = FAB_ERROR_INVALID_VALUE;
    for (size_t i = 0; i < region->nmaps; i++) {
        if (region->maps[i] != addr)
            continue;
        munmap(addr, region->size);
        region->maps[i] = region->maps[--region->nmaps];
        status = FAB_SUCCESS;
        fab__region_put(region);
        break;
    }
    fab__rw_unlock(&client->lock);
    return status;
}

FAB__HOT
fab_status_t fab_region_release(fab_region_t *region)
{
    if (region == NULL)
        return FAB_ERROR_INVALID_VALUE;
    fab_client_t *client = region->client;
    if (!fab__client_owned(client))
        return FAB_ERROR_ILLEGAL_STATE;
    fab__rw_wrlock(&client->lock);
    fab_status_t status = FAB_SUCCESS;
    if (region->released) {
        status = FAB_ERROR_INVALID_VALUE;
    } else {
        region->released = true;
        fab__region_put(region);
    }
    fab__rw_unlock(&client->lock);
    return status;
}

