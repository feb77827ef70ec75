/* The exporter's side of the model: one fabric-exportable allocation, its
 * export count and its released flag.
 *
 * The allocation's handle is encoded once, when it is made: the fields it
 * carries (uuid, size, peer access) never change, so every export is a copy
 * of those 64 bytes. The object keeps them in place of the uuid, size and
 * access it would otherwise hold (88 bytes instead of 56). A service that
 * mints its own handle hands it over (fab_memory_keep_handle) rather than
 * keeping a copy beside the object: fabmemd, one object per live
 * allocation, so keeps one 64-byte handle per allocation, not two.
 *
 * Lifecycle: allocate (props checked) -> export* (count up, handle minted) ->
 * retire_export* (count down) -> release (only at count zero) -> destroy.
 * The object holds no memory of its own beyond itself: it is the bookkeeping
 * that cuMemCreate's allocation would carry, kept small because the daemon
 * keeps one per live allocation. */
#include <stdlib.h>
#include <string.h>

#include "fabmem/model.h"
#include "src/base/hot.h"
#include "src/base/le.h"
#include "src/core/handle_format.h"

struct fab_memory {
    fab_handle_t handle; /* uuid, size and peer access live here */
    uint64_t allocation_handle;
    int device_ordinal;
    fab_handle_type_t handle_type;
    uint32_t export_count;
    bool released;
};

#define FAB__HANDLE_TYPE_ALL                                                         \
    (FAB_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR | FAB_HANDLE_TYPE_WIN32 |                 \
     FAB_HANDLE_TYPE_WIN32_KMT | FAB_HANDLE_TYPE_FABRIC)

/* The seed checks the handle type before the size; so do we, so that a props
 * wrong in both ways reports the same error as there. */
static fab_status_t fab__props_check(const fab_alloc_props_t *props)
{
    unsigned type = (unsigned)props->handle_type;
    if ((type & ~(unsigned)FAB__HANDLE_TYPE_ALL) != 0)
        return FAB_ERROR_INVALID_VALUE;
    if ((type & FAB_HANDLE_TYPE_FABRIC) == 0)
        return FAB_ERROR_NOT_SUPPORTED;
    if (props->size == 0)
        return FAB_ERROR_INVALID_VALUE;
    if (props->device_ordinal < 0)
        return FAB_ERROR_INVALID_VALUE;
    switch (props->peer_access) {
    case FAB_ACCESS_NONE:
    case FAB_ACCESS_READ_ONLY:
    case FAB_ACCESS_READ_WRITE:
        return FAB_SUCCESS;
    }
    return FAB_ERROR_INVALID_VALUE;
}

fab_status_t fab_memory_allocate(uint64_t allocation_handle, fab_uuid_t uuid,
                                 const fab_alloc_props_t *props, fab_memory_t **memory_out)
{
    if (props == NULL || memory_out == NULL)
        return FAB_ERROR_INVALID_VALUE;
    fab_status_t status = fab__props_check(props);
    if (status != FAB_SUCCESS)
        return status;
    fab_memory_t *memory = calloc(1, sizeof(*memory));
    if (memory == NULL)
        return FAB_ERROR_OUT_OF_MEMORY;
    fab__handle_encode(&memory->handle, uuid, props->size, props->peer_access,
                       FAB_HANDLE_ORIGIN_MODEL, 0);
    memory->allocation_handle = allocation_handle;
    memory->device_ordinal = props->device_ordinal;
    memory->handle_type = props->handle_type;
    *memory_out = memory;
    return FAB_SUCCESS;
}

void fab_memory_destroy(fab_memory_t *memory)
{
    free(memory);
}

uint64_t fab_memory_allocation_handle(const fab_memory_t *memory)
{
    return memory ? memory->allocation_handle : 0;
}

FAB__HOT
fab_uuid_t fab_memory_uuid(const fab_memory_t *memory)
{
    return fab_handle_uuid(memory ? &memory->handle : NULL);
}

FAB__HOT
fab_alloc_props_t fab_memory_props(const fab_memory_t *memory)
{
    fab_alloc_props_t props = {0, 0, FAB_ACCESS_NONE, FAB_HANDLE_TYPE_NONE};
    if (memory != NULL) {
        props.device_ordinal = memory->device_ordinal;
        /* The handle's bytes read here, not through two calls: the daemon
         * asks on every import. */
        props.size = (size_t)fab__le_get64(memory->handle.bytes + FAB__HANDLE_OFF_SIZE);
        props.peer_access = fab__handle_access(memory->handle.bytes);
        props.handle_type = memory->handle_type;
    }
    return props;
}

FAB__HOT
uint32_t fab_memory_export_count(const fab_memory_t *memory)
{
    return memory ? memory->export_count : 0;
}

bool fab_memory_is_released(const fab_memory_t *memory)
{
    return memory ? memory->released : false;
}

fab_status_t fab_memory_count_export(fab_memory_t *memory)
{
    if (memory == NULL)
        return FAB_ERROR_INVALID_VALUE;
    if (memory->released)
        return FAB_ERROR_INVALID_HANDLE;
    if (!fab_access_is_mappable(fab_handle_access(&memory->handle)))
        return FAB_ERROR_NOT_PERMITTED;
    if (memory->export_count != UINT32_MAX)
        memory->export_count++;
    return FAB_SUCCESS;
}

fab_status_t fab_memory_export(fab_memory_t *memory, fab_handle_t *handle_out)
{
    if (memory == NULL || handle_out == NULL)
        return FAB_ERROR_INVALID_VALUE;
    fab_status_t status = fab_memory_count_export(memory);
    if (status != FAB_SUCCESS)
        return status;
    *handle_out = memory->handle;
    fab__handle_made(handle_out->bytes);
    return FAB_SUCCESS;
}

const fab_handle_t *fab_memory_handle(const fab_memory_t *memory)
{
    return memory ? &memory->handle : NULL;
}

fab_status_t fab_memory_keep_handle(fab_memory_t *memory, const fab_handle_t *handle)
{
    if (memory == NULL || handle == NULL)
        return FAB_ERROR_INVALID_VALUE;
    if (fab__handle_check(handle->bytes) != FAB_SUCCESS)
        return FAB_ERROR_INVALID_HANDLE;
    /* The bytes the two share: uuid, size, access. */
    if (memcmp(handle->bytes + FAB__HANDLE_OFF_UUID, memory->handle.bytes + FAB__HANDLE_OFF_UUID,
               FAB__HANDLE_OFF_ACCESS + 1 - FAB__HANDLE_OFF_UUID) != 0)
        return FAB_ERROR_INVALID_VALUE;
    memory->handle = *handle;
    return FAB_SUCCESS;
}

fab_status_t fab_memory_retire_export(fab_memory_t *memory)
{
    if (memory == NULL)
        return FAB_ERROR_INVALID_VALUE;
    if (memory->export_count == 0)
        return FAB_ERROR_ILLEGAL_STATE;
    memory->export_count--;
    return FAB_SUCCESS;
}

fab_status_t fab_memory_release(fab_memory_t *memory)
{
    if (memory == NULL)
        return FAB_ERROR_INVALID_VALUE;
    if (memory->export_count != 0)
        return FAB_ERROR_ILLEGAL_STATE;
    memory->released = true;
    return FAB_SUCCESS;
}
