/* The fabric handle's wire layout (documented in include/fabmem/handle.h) and
 * the internal calls that write it: the model mints handles of origin MODEL,
 * the daemon mints handles of origin FABRIC through fab_handle_encode. Private
 * to the core. */
#ifndef FABMEM_CORE_HANDLE_FORMAT_H
#define FABMEM_CORE_HANDLE_FORMAT_H

#include "fabmem/handle.h"

enum {
    FAB__HANDLE_OFF_MAGIC = 0,
    FAB__HANDLE_OFF_UUID = 8,
    FAB__HANDLE_OFF_SIZE = 24,
    FAB__HANDLE_OFF_ACCESS = 32,
    FAB__HANDLE_OFF_VERSION = 33,
    FAB__HANDLE_OFF_ORIGIN = 34,
    FAB__HANDLE_OFF_RESERVED = 35,
    FAB__HANDLE_OFF_DOMAIN = 36,
    FAB__HANDLE_OFF_TAG = FAB_HANDLE_TAG_OFFSET,
    FAB__HANDLE_OFF_CRC = FAB_HANDLE_CRC_OFFSET,
};

/* Lay out a handle of the given origin and domain with a zero tag and a valid
 * CRC. A MODEL handle must have domain 0. */
void fab__handle_encode(fab_handle_t *handle, fab_uuid_t uuid, uint64_t size, fab_access_t access,
                        fab_handle_origin_t origin, uint64_t domain);

/* Store a FABRIC handle's tag (computed over bytes [0, FAB__HANDLE_OFF_TAG))
 * and recompute the CRC. */
void fab__handle_set_tag(fab_handle_t *handle, const uint8_t tag[FAB_HANDLE_TAG_BYTES]);

/* The access byte of an intact handle (fab_handle_access without the call). */
static inline fab_access_t fab__handle_access(const uint8_t bytes[FAB_HANDLE_BYTES])
{
    switch (bytes[FAB__HANDLE_OFF_ACCESS]) {
    case FAB_ACCESS_READ_ONLY:
        return FAB_ACCESS_READ_ONLY;
    case FAB_ACCESS_READ_WRITE:
        return FAB_ACCESS_READ_WRITE;
    default:
        return FAB_ACCESS_NONE;
    }
}

/* Note that bytes are an intact handle just made (a copy of one encoded
 * here), so that checking them next compares instead of summing. */
void fab__handle_made(const uint8_t bytes[FAB_HANDLE_BYTES]);

/* FAB_SUCCESS if the bytes are an intact handle; FAB_ERROR_INVALID_HANDLE
 * otherwise. Checks everything but a FABRIC handle's tag. */
fab_status_t fab__handle_check(const uint8_t bytes[FAB_HANDLE_BYTES]);

#endif /* FABMEM_CORE_HANDLE_FORMAT_H */
