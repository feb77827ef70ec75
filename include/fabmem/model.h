/* The fabric-handle model: an exporter's allocation (fab_memory_t), an
 * importing process's view of the fabric (fab_importer_t), and what an import
 * yields (fab_import_t). It is a deterministic state machine with no I/O: who
 * may export and import, when a handle stops being valid, how exports are
 * counted. The daemon asks it every question of rule; the driver emulation
 * builds on the daemon.
 *
 * Lifecycle:
 *
 *   fab_memory_allocate ──▶ fab_memory_export ──▶ 64 bytes ──▶ (any channel)
 *          │                  (export_count + 1)                   │
 *          │                                        fab_handle_from_bytes
 *          │                                                       │
 *          │                                        fab_importer_import ──▶ fab_import_t
 *          │                                                       │
 *          │                                        fab_import_map_readable / _writable
 *          ▼
 *   fab_memory_retire_export (export_count - 1) ... fab_memory_release
 *   (the model refuses release while exports are outstanding)
 *
 * Thread safety: not thread-safe. An object may be used from any thread, but
 * calls on the same object must not overlap; distinct objects are independent.
 * There is no global state. */
#ifndef FABMEM_MODEL_H
#define FABMEM_MODEL_H

#include "fabmem/handle.h"

FAB_EXTERN_C_BEGIN

/* An exporter's fabric-exportable physical allocation. Opaque. */
typedef struct fab_memory fab_memory_t;

/* An importing process's device and its fabric reachability. Opaque. */
typedef struct fab_importer fab_importer_t;

/* A successful import. A value the caller owns; read it only through the
 * functions below (the fields are private by convention). */
typedef struct fab_import {
    uint64_t priv_handle;
    fab_uuid_t priv_uuid;
    uint64_t priv_size;
    fab_access_t priv_access;
    int priv_device_ordinal;
    bool priv_mapped;
} fab_import_t;

/* Create the model of an allocation that cuMemCreate would make: the caller
 * supplies the driver's allocation handle and the fabric uuid the fabric
 * manager would assign.
 * Errors:
 *   FAB_ERROR_INVALID_VALUE   props or memory_out is NULL; props->size is 0;
 *                             props->device_ordinal < 0; peer_access is not a
 *                             fab_access_t; handle_type has bits that are not
 *                             handle types
 *   FAB_ERROR_NOT_SUPPORTED   props->handle_type does not include FABRIC
 *                             (checked before size, as in the seed)
 *   FAB_ERROR_OUT_OF_MEMORY   no memory for the object
 * *memory_out is written only on success. */
FAB_API fab_status_t fab_memory_allocate(uint64_t allocation_handle, fab_uuid_t uuid,
                                         const fab_alloc_props_t *props,
                                         fab_memory_t **memory_out);

/* Free the object, whatever its state. NULL is a no-op. */
FAB_API void fab_memory_destroy(fab_memory_t *memory);

/* Readers. A NULL memory reads as zeros / false. */
FAB_API uint64_t fab_memory_allocation_handle(const fab_memory_t *memory);
FAB_API fab_uuid_t fab_memory_uuid(const fab_memory_t *memory);
FAB_API fab_alloc_props_t fab_memory_props(const fab_memory_t *memory);
FAB_API uint32_t fab_memory_export_count(const fab_memory_t *memory);
FAB_API bool fab_memory_is_released(const fab_memory_t *memory);

/* Mint a fabric handle for a peer (cuMemExportToShareableHandle with
 * CU_MEM_HANDLE_TYPE_FABRIC); each success adds one to the export count, which
 * saturates at UINT32_MAX.
 * Errors:
 *   FAB_ERROR_INVALID_VALUE   memory or handle_out is NULL
 *   FAB_ERROR_INVALID_HANDLE  the allocation has been released
 *   FAB_ERROR_NOT_PERMITTED   peer_access is FAB_ACCESS_NONE: nothing to share
 * *handle_out is written only on success. */
FAB_API fab_status_t fab_memory_export(fab_memory_t *memory, fab_handle_t *handle_out);

/* fab_memory_export's decision and count without the handle, for a service
 * that mints handles of its own (fabmemd's carry origin FABRIC, its IMEX
 * domain and a keyed tag): the same errors, but for handle_out. */
FAB_API fab_status_t fab_memory_count_export(fab_memory_t *memory);

/* The allocation's handle: the one fab_memory_export copies out. The model
 * mints it (origin MODEL) when the object is made; a service that mints its
 * own hands it over with fab_memory_keep_handle, so that one place holds it.
 * NULL for a NULL memory. */
FAB_API const fab_handle_t *fab_memory_handle(const fab_memory_t *memory);

/* Make handle the allocation's handle (fabmemd's, once the allocation is
 * live): fab_memory_handle returns it and fab_memory_export copies it from
 * then on.
 * Errors:
 *   FAB_ERROR_INVALID_VALUE   memory or handle is NULL, or the handle names
 *                             another uuid, size or peer access than the
 *                             allocation's
 *   FAB_ERROR_INVALID_HANDLE  the handle's bytes are not an intact handle
 * Nothing changes on error. */
FAB_API fab_status_t fab_memory_keep_handle(fab_memory_t *memory, const fab_handle_t *handle);

/* Record that one exported handle was retired by all its consumers.
 * Errors:
 *   FAB_ERROR_INVALID_VALUE   memory is NULL
 *   FAB_ERROR_ILLEGAL_STATE   the export count is already zero (a double retire) */
FAB_API fab_status_t fab_memory_retire_export(fab_memory_t *memory);

/* Release the allocation (cuMemRelease). Releasing again is allowed and changes
 * nothing, as in the seed.
 * Errors:
 *   FAB_ERROR_INVALID_VALUE   memory is NULL
 *   FAB_ERROR_ILLEGAL_STATE   exported handles are still outstanding (the
 *                             model's rule; the driver emulation only warns) */
FAB_API fab_status_t fab_memory_release(fab_memory_t *memory);

/* An importer on device_ordinal, fabric-reachable until told otherwise. Its
 * import handles count up from 1.
 * Errors:
 *   FAB_ERROR_INVALID_VALUE   importer_out is NULL, or device_ordinal < 0
 *   FAB_ERROR_OUT_OF_MEMORY   no memory for the object
 * *importer_out is written only on success. */
FAB_API fab_status_t fab_importer_create(int device_ordinal, fab_importer_t **importer_out);

/* Free the importer. Imports it made stay valid values. NULL is a no-op. */
FAB_API void fab_importer_destroy(fab_importer_t *importer);

/* The importer's device ordinal; -1 for NULL. */
FAB_API int fab_importer_device_ordinal(const fab_importer_t *importer);

/* Whether the importer's device has a fabric path to exporters. NULL: no-op. */
FAB_API void fab_importer_set_reachable(fab_importer_t *importer, bool reachable);

/* Import a peer's handle (cuMemImportFromShareableHandle with
 * CU_MEM_HANDLE_TYPE_FABRIC).
 * Errors:
 *   FAB_ERROR_INVALID_VALUE   importer, handle or import_out is NULL
 *   FAB_ERROR_INVALID_HANDLE  the handle's bytes are not an intact handle (the
 *                             same checks as fab_handle_from_bytes)
 *   FAB_ERROR_NOT_SUPPORTED   the importer's device is not fabric-reachable
 *   FAB_ERROR_NOT_PERMITTED   the exporter granted no access
 * *import_out is written only on success. */
FAB_API fab_status_t fab_importer_import(fab_importer_t *importer, const fab_handle_t *handle,
                                         fab_import_t *import_out);

/* Readers. A NULL import reads as zeros / false. */
FAB_API uint64_t fab_import_handle(const fab_import_t *import);
FAB_API fab_uuid_t fab_import_uuid(const fab_import_t *import);
FAB_API size_t fab_import_size(const fab_import_t *import);
FAB_API fab_access_t fab_import_access(const fab_import_t *import);
FAB_API int fab_import_device_ordinal(const fab_import_t *import);
FAB_API bool fab_import_is_mapped(const fab_import_t *import);

/* Map the import for reading.
 * Errors:
 *   FAB_ERROR_INVALID_VALUE   import is NULL
 *   FAB_ERROR_NOT_PERMITTED   the exporter granted no access */
FAB_API fab_status_t fab_import_map_readable(fab_import_t *import);

/* Map the import for reading and writing.
 * Errors:
 *   FAB_ERROR_INVALID_VALUE   import is NULL
 *   FAB_ERROR_NOT_PERMITTED   the exporter granted read-only or no access */
FAB_API fab_status_t fab_import_map_writable(fab_import_t *import);

FAB_EXTERN_C_END

#endif /* FABMEM_MODEL_H */
