/* The importer's side of the model: a device ordinal, its fabric reachability,
 * and the counter from which import handles are numbered; and the import value
 * with its two ways of being mapped.
 *
 * Order of checks on import: the handle's bytes first (an altered handle is
 * INVALID_HANDLE wherever it is presented), then reachability (NOT_SUPPORTED),
 * then the exporter's grant (NOT_PERMITTED), as in the seed for the last two. */
#include <stdlib.h>
#include <string.h>

#include "fabmem/model.h"
#include "src/base/hot.h"
#include "src/base/le.h"
#include "src/core/handle_format.h"

struct fab_importer {
    int device_ordinal;
    bool reachable;
    uint64_t next_handle;
};

fab_status_t fab_importer_create(int device_ordinal, fab_importer_t **importer_out)
{
    if (importer_out == NULL || device_ordinal < 0)
        return FAB_ERROR_INVALID_VALUE;
    fab_importer_t *importer = malloc(sizeof(*importer));
    if (importer == NULL)
        return FAB_ERROR_OUT_OF_MEMORY;
    importer->device_ordinal = device_ordinal;
    importer->reachable = true;
    importer->next_handle = 1;
    *importer_out = importer;
    return FAB_SUCCESS;
}

void fab_importer_destroy(fab_importer_t *importer)
{
    free(importer);
}

FAB__HOT
int fab_importer_device_ordinal(const fab_importer_t *importer)
{
    return importer ? importer->device_ordinal : -1;
}

FAB__HOT
void fab_importer_set_reachable(fab_importer_t *importer, bool reachable)
{
    if (importer)
        importer->reachable = reachable;
}

FAB__HOT
fab_status_t fab_importer_import(fab_importer_t *importer, const fab_handle_t *handle,
                                 fab_import_t *import_out)
{
    if (importer == NULL || handle == NULL || import_out == NULL)
        return FAB_ERROR_INVALID_VALUE;
    fab_status_t status = fab__handle_check(handle->bytes);
    if (status != FAB_SUCCESS)
        return status;
    if (!importer->reachable)
        return FAB_ERROR_NOT_SUPPORTED;
    fab_access_t access = fab__handle_access(handle->bytes);
    if (!fab_access_is_mappable(access))
        return FAB_ERROR_NOT_PERMITTED;
    /* Field by field, each store as wide as its field: building the value
     * on the stack and copying it out costs a stalled wide load per field. */
    import_out->priv_handle = importer->next_handle++;
    memcpy(import_out->priv_uuid.bytes, handle->bytes + FAB__HANDLE_OFF_UUID,
           sizeof(import_out->priv_uuid.bytes));
    import_out->priv_size = fab__le_get64(handle->bytes + FAB__HANDLE_OFF_SIZE);
    import_out->priv_access = access;
    import_out->priv_device_ordinal = importer->device_ordinal;
    import_out->priv_mapped = false;
    return FAB_SUCCESS;
}

uint64_t fab_import_handle(const fab_import_t *import)
{
    return import ? import->priv_handle : 0;
}

FAB__HOT
fab_uuid_t fab_import_uuid(const fab_import_t *import)
{
    fab_uuid_t none = {{0}};
    return import ? import->priv_uuid : none;
}

FAB__HOT
size_t fab_import_size(const fab_import_t *import)
{
    return import ? (size_t)import->priv_size : 0;
}

FAB__HOT
fab_access_t fab_import_access(const fab_import_t *import)
{
    return import ? import->priv_access : FAB_ACCESS_NONE;
}

int fab_import_device_ordinal(const fab_import_t *import)
{
    return import ? import->priv_device_ordinal : -1;
}

bool fab_import_is_mapped(const fab_import_t *import)
{
    return import ? import->priv_mapped : false;
}

fab_status_t fab_import_map_readable(fab_import_t *import)
{
    if (import == NULL)
        return FAB_ERROR_INVALID_VALUE;
    if (!fab_access_is_mappable(import->priv_access))
        return FAB_ERROR_NOT_PERMITTED;
    import->priv_mapped = true;
    return FAB_SUCCESS;
}

fab_status_t fab_import_map_writable(fab_import_t *import)
{
    if (import == NULL)
        return FAB_ERROR_INVALID_VALUE;
    if (!fab_access_is_writable(import->priv_access))
        return FAB_ERROR_NOT_PERMITTED;
    import->priv_mapped = true;
    return FAB_SUCCESS;
}
