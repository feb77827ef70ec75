/* The values the model trades in: access levels, handle types, allocation
 * properties, and the 64-byte fabric handle whose bytes are its wire form.
 *
 * Wire form of a fabric handle (all integers little-endian):
 *
 *   offset  size  field
 *        0     8  magic "OXIFABRC"
 *        8    16  fabric uuid naming the physical allocation
 *       24     8  allocation size in bytes
 *       32     1  access granted to importers: 0 none, 1 read-only, 2 read-write
 *       33     1  format version (FAB_HANDLE_VERSION)
 *       34     1  origin: 0 minted by the model, 1 minted by a fabric daemon
 *       35     1  reserved, zero
 *       36     8  fabric domain id (zero when minted by the model)
 *       44    16  keyed authentication tag over bytes 0..43 (zero from the model)
 *       60     4  CRC-32 of bytes 0..59
 *
 * Bytes 0..32 are laid out as oxicuda-driver's model lays them out. The CRC
 * makes any change to any single byte detectable without a key; the daemon's
 * tag makes a deliberate change detectable even when the CRC is recomputed.
 *
 * Thread safety: these are value types; the functions only read their arguments
 * and are safe from any thread. */
#ifndef FABMEM_HANDLE_H
#define FABMEM_HANDLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "fabmem/common.h"
#include "fabmem/status.h"

FAB_EXTERN_C_BEGIN

#define FAB_HANDLE_BYTES 64
#define FAB_HANDLE_VERSION 1
#define FAB_HANDLE_TAG_BYTES 16
#define FAB_HANDLE_TAG_OFFSET 44 /* the tag sits here and covers bytes [0, 44) */
#define FAB_HANDLE_CRC_OFFSET 60 /* the CRC sits here and covers bytes [0, 60) */

/* What an importing peer may do with shared memory. */
typedef enum fab_access {
    FAB_ACCESS_NONE = 0,       /* nothing: the allocation cannot be shared */
    FAB_ACCESS_READ_ONLY = 1,  /* map for reading */
    FAB_ACCESS_READ_WRITE = 2, /* map for reading and writing */
} fab_access_t;

/* CUmemAllocationHandleType's values; they are bit flags and may be OR-ed. */
typedef enum fab_handle_type {
    FAB_HANDLE_TYPE_NONE = 0,
    FAB_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR = 1,
    FAB_HANDLE_TYPE_WIN32 = 2,
    FAB_HANDLE_TYPE_WIN32_KMT = 4,
    FAB_HANDLE_TYPE_FABRIC = 8,
} fab_handle_type_t;

/* Who minted a handle (byte 34 of the wire form). */
typedef enum fab_handle_origin {
    FAB_HANDLE_ORIGIN_MODEL = 0,  /* fab_memory_export in this process's model */
    FAB_HANDLE_ORIGIN_FABRIC = 1, /* a fabmemd daemon, carrying its domain and tag */
} fab_handle_origin_t;

typedef struct fab_uuid {
    uint8_t bytes[16];
} fab_uuid_t;

/* Properties of a fabric-exportable allocation. handle_type must include
 * FAB_HANDLE_TYPE_FABRIC; size is already rounded to the fabric granularity. */
typedef struct fab_alloc_props {
    int device_ordinal;            /* device that owns the memory, >= 0 */
    size_t size;                   /* bytes, > 0 */
    fab_access_t peer_access;      /* what importers may do */
    fab_handle_type_t handle_type; /* handle types the allocation exports as */
} fab_alloc_props_t;

/* A fabric handle. Its bytes are the wire form: send them anywhere as they are. */
typedef struct fab_handle {
    uint8_t bytes[FAB_HANDLE_BYTES];
} fab_handle_t;

/* True for READ_ONLY and READ_WRITE: the access permits some mapping. */
FAB_API bool fab_access_is_mappable(fab_access_t access);

/* True for READ_WRITE only. */
FAB_API bool fab_access_is_writable(fab_access_t access);

/* Props for the common case: read-write peer access, FABRIC handle type. */
FAB_API fab_alloc_props_t fab_alloc_props_read_write(int device_ordinal, size_t size);

/* Check len raw bytes received from a peer and copy them into *handle_out.
 * Errors:
 *   FAB_ERROR_INVALID_VALUE   raw or handle_out is NULL, or len != FAB_HANDLE_BYTES
 *   FAB_ERROR_INVALID_HANDLE  the bytes are not an intact handle of this format:
 *                             wrong magic, unknown version, origin or access,
 *                             non-zero reserved bytes, or a CRC mismatch (any one
 *                             byte changed, corrupted or truncated-and-padded)
 * *handle_out is written only on success. */
FAB_API fab_status_t fab_handle_from_bytes(const void *raw, size_t len, fab_handle_t *handle_out);

/* Accessors. They read the fields as laid out and do not re-check the CRC; a
 * NULL handle reads as all zeros. */
FAB_API fab_uuid_t fab_handle_uuid(const fab_handle_t *handle);
FAB_API size_t fab_handle_size(const fab_handle_t *handle);
FAB_API fab_access_t fab_handle_access(const fab_handle_t *handle);
FAB_API unsigned fab_handle_version(const fab_handle_t *handle);
FAB_API fab_handle_origin_t fab_handle_origin(const fab_handle_t *handle);
FAB_API uint64_t fab_handle_domain(const fab_handle_t *handle);

/* Lay out a handle with the given fields, tag (NULL: zero) and a valid CRC:
 * how a fabric daemon mints handles (it computes the tag over bytes
 * [0, FAB_HANDLE_TAG_OFFSET) of the handle encoded with no tag, then encodes
 * again with it), and how tests forge them. A MODEL handle has no domain and
 * no tag.
 * Errors:
 *   FAB_ERROR_INVALID_VALUE   handle_out is NULL; access or origin unknown; a
 *                             MODEL handle with a domain or a tag
 * *handle_out is written only on success. */
FAB_API fab_status_t fab_handle_encode(fab_uuid_t uuid, uint64_t size, fab_access_t access,
                                       fab_handle_origin_t origin, uint64_t domain,
                                       const uint8_t *tag, fab_handle_t *handle_out);

/* True when both uuids hold the same bytes. NULL equals nothing. */
FAB_API bool fab_uuid_equal(const fab_uuid_t *a, const fab_uuid_t *b);

/* Whether two handles are the same 64 bytes. Constant time: every byte is
 * looked at whatever differs, so a service comparing a presented handle with
 * the one it minted tells a forger nothing by how long it took. NULL is
 * equal to nothing. */
FAB_API bool fab_handle_equal(const fab_handle_t *a, const fab_handle_t *b);

FAB_EXTERN_C_END

#endif /* FABMEM_HANDLE_H */
