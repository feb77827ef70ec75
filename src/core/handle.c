/* The fabric handle's wire form: encoding, the integrity check, and readers.
 * The layout is the table in include/fabmem/handle.h. The CRC is zlib's CRC-32:
 * a single changed byte is an error burst of at most 8 bits, which CRC-32 always
 * detects, so every one-byte corruption is refused without any key. */
#include "src/core/handle_format.h"

#include "src/base/le.h"

#include <string.h>
#include <zlib.h>

static const uint8_t fab__magic[8] = {'O', 'X', 'I', 'F', 'A', 'B', 'R', 'C'};

static uint32_t fab__crc(const uint8_t *bytes)
{
    return (uint32_t)crc32(crc32(0L, Z_NULL, 0), bytes, FAB__HANDLE_OFF_CRC);
}

static void fab__handle_seal_crc(fab_handle_t *handle)
{
    uint32_t crc = fab__crc(handle->bytes);
    for (int i = 0; i < 4; i++)
        handle->bytes[FAB__HANDLE_OFF_CRC + i] = (uint8_t)(crc >> (8 * i));
}

void fab__handle_encode(fab_handle_t *handle, fab_uuid_t uuid, uint64_t size, fab_access_t access,
                        fab_handle_origin_t origin, uint64_t domain)
{
    memset(handle->bytes, 0, sizeof(handle->bytes));
    memcpy(handle->bytes + FAB__HANDLE_OFF_MAGIC, fab__magic, sizeof(fab__magic));
    memcpy(handle->bytes + FAB__HANDLE_OFF_UUID, uuid.bytes, sizeof(uuid.bytes));
    fab__le_put64(handle->bytes + FAB__HANDLE_OFF_SIZE, size);
    handle->bytes[FAB__HANDLE_OFF_ACCESS] = (uint8_t)access;
    handle->bytes[FAB__HANDLE_OFF_VERSION] = FAB_HANDLE_VERSION;
    handle->bytes[FAB__HANDLE_OFF_ORIGIN] = (uint8_t)origin;
    fab__le_put64(handle->bytes + FAB__HANDLE_OFF_DOMAIN, domain);
    fab__handle_seal_crc(handle);
}

void fab__handle_set_tag(fab_handle_t *handle, const uint8_t tag[FAB_HANDLE_TAG_BYTES])
{
    memcpy(handle->bytes + FAB__HANDLE_OFF_TAG, tag, FAB_HANDLE_TAG_BYTES);
    fab__handle_seal_crc(handle);
}

static bool fab__all_zero(const uint8_t *p, size_t n);

fab_status_t fab_handle_encode(fab_uuid_t uuid, uint64_t size, fab_access_t access,
                               fab_handle_origin_t origin, uint64_t domain, const uint8_t *tag,
                               fab_handle_t *handle_out)
{
    if (handle_out == NULL || (unsigned)access > FAB_ACCESS_READ_WRITE ||
        (origin != FAB_HANDLE_ORIGIN_MODEL && origin != FAB_HANDLE_ORIGIN_FABRIC))
        return FAB_ERROR_INVALID_VALUE;
    if (origin == FAB_HANDLE_ORIGIN_MODEL &&
        (domain != 0 || (tag != NULL && !fab__all_zero(tag, FAB_HANDLE_TAG_BYTES))))
        return FAB_ERROR_INVALID_VALUE;
    fab_handle_t handle;
    fab__handle_encode(&handle, uuid, size, access, origin, domain);
    if (tag != NULL)
        fab__handle_set_tag(&handle, tag);
    *handle_out = handle;
    return FAB_SUCCESS;
}

static bool fab__all_zero(const uint8_t *p, size_t n)
{
    uint8_t acc = 0;
    for (size_t i = 0; i < n; i++)
        acc |= p[i];
    return acc == 0;
}

fab_status_t fab__handle_check(const uint8_t bytes[FAB_HANDLE_BYTES])
{
    if (memcmp(bytes + FAB__HANDLE_OFF_MAGIC, fab__magic, sizeof(fab__magic)) != 0)
        return FAB_ERROR_INVALID_HANDLE;
    if (bytes[FAB__HANDLE_OFF_VERSION] != FAB_HANDLE_VERSION)
        return FAB_ERROR_INVALID_HANDLE;
    if (bytes[FAB__HANDLE_OFF_ACCESS] > FAB_ACCESS_READ_WRITE)
        return FAB_ERROR_INVALID_HANDLE;
    if (bytes[FAB__HANDLE_OFF_RESERVED] != 0)
        return FAB_ERROR_INVALID_HANDLE;
    switch (bytes[FAB__HANDLE_OFF_ORIGIN]) {
    case FAB_HANDLE_ORIGIN_MODEL:
        /* The model has no domain and no key: those bytes stay zero. */
        if (!fab__all_zero(bytes + FAB__HANDLE_OFF_DOMAIN, FAB__HANDLE_OFF_CRC - FAB__HANDLE_OFF_DOMAIN))
            return FAB_ERROR_INVALID_HANDLE;
        break;
    case FAB_HANDLE_ORIGIN_FABRIC:
        break;
    default:
        return FAB_ERROR_INVALID_HANDLE;
    }
    uint32_t stored = 0;
    for (int i = 0; i < 4; i++)
        stored |= (uint32_t)bytes[FAB__HANDLE_OFF_CRC + i] << (8 * i);
    if (stored != fab__crc(bytes))
        return FAB_ERROR_INVALID_HANDLE;
    return FAB_SUCCESS;
}

fab_status_t fab_handle_from_bytes(const void *raw, size_t len, fab_handle_t *handle_out)
{
    if (raw == NULL || handle_out == NULL || len != FAB_HANDLE_BYTES)
        return FAB_ERROR_INVALID_VALUE;
    fab_status_t status = fab__handle_check(raw);
    if (status != FAB_SUCCESS)
        return status;
    memcpy(handle_out->bytes, raw, FAB_HANDLE_BYTES);
    return FAB_SUCCESS;
}

fab_uuid_t fab_handle_uuid(const fab_handle_t *handle)
{
    fab_uuid_t uuid = {{0}};
    if (handle)
        memcpy(uuid.bytes, handle->bytes + FAB__HANDLE_OFF_UUID, sizeof(uuid.bytes));
    return uuid;
}

size_t fab_handle_size(const fab_handle_t *handle)
{
    return handle ? (size_t)fab__le_get64(handle->bytes + FAB__HANDLE_OFF_SIZE) : 0;
}

fab_access_t fab_handle_access(const fab_handle_t *handle)
{
    if (!handle)
        return FAB_ACCESS_NONE;
    switch (handle->bytes[FAB__HANDLE_OFF_ACCESS]) {
    case 1:
        return FAB_ACCESS_READ_ONLY;
    case 2:
        return FAB_ACCESS_READ_WRITE;
    default:
        return FAB_ACCESS_NONE;
    }
}

unsigned fab_handle_version(const fab_handle_t *handle)
{
    return handle ? handle->bytes[FAB__HANDLE_OFF_VERSION] : 0;
}

fab_handle_origin_t fab_handle_origin(const fab_handle_t *handle)
{
    if (handle && handle->bytes[FAB__HANDLE_OFF_ORIGIN] == FAB_HANDLE_ORIGIN_FABRIC)
        return FAB_HANDLE_ORIGIN_FABRIC;
    return FAB_HANDLE_ORIGIN_MODEL;
}

uint64_t fab_handle_domain(const fab_handle_t *handle)
{
    return handle ? fab__le_get64(handle->bytes + FAB__HANDLE_OFF_DOMAIN) : 0;
}

bool fab_uuid_equal(const fab_uuid_t *a, const fab_uuid_t *b)
{
    return a && b && memcmp(a->bytes, b->bytes, sizeof(a->bytes)) == 0;
}

bool fab_access_is_mappable(fab_access_t access)
{
    return access == FAB_ACCESS_READ_ONLY || access == FAB_ACCESS_READ_WRITE;
}

bool fab_access_is_writable(fab_access_t access)
{
    return access == FAB_ACCESS_READ_WRITE;
}

fab_alloc_props_t fab_alloc_props_read_write(int device_ordinal, size_t size)
{
    fab_alloc_props_t props = {
        .device_ordinal = device_ordinal,
        .size = size,
        .peer_access = FAB_ACCESS_READ_WRITE,
        .handle_type = FAB_HANDLE_TYPE_FABRIC,
    };
    return props;
}
