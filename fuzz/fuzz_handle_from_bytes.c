/* Fuzzes fab_handle_from_bytes, the one decoder every received handle passes
 * through. Beyond "no crash, no leak": an accepted handle must keep its bytes
 * exactly, satisfy every format rule, import as the model says it should, and,
 * when it came from the model, be exactly what the model would mint again for
 * the same uuid, size and access (the wire form has one spelling). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fabmem.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(cond)         \
    do {                    \
        if (!(cond))        \
            abort();        \
    } while (0)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fab_handle_t handle;
    memset(&handle, 0x5a, sizeof(handle));
    fab_status_t status = fab_handle_from_bytes(data, size, &handle);
    if (status != FAB_SUCCESS) {
        CHECK(status == (size == FAB_HANDLE_BYTES ? FAB_ERROR_INVALID_HANDLE : FAB_ERROR_INVALID_VALUE));
        for (size_t i = 0; i < sizeof(handle.bytes); i++)
            CHECK(handle.bytes[i] == 0x5a);
        return 0;
    }
    CHECK(size == FAB_HANDLE_BYTES);
    CHECK(memcmp(handle.bytes, data, FAB_HANDLE_BYTES) == 0);
    CHECK(memcmp(handle.bytes, "OXIFABRC", 8) == 0);
    CHECK(fab_handle_version(&handle) == FAB_HANDLE_VERSION);
    CHECK(handle.bytes[32] <= 2 && handle.bytes[35] == 0);

    fab_importer_t *importer = NULL;
    CHECK(fab_importer_create(0, &importer) == FAB_SUCCESS);
    fab_import_t import;
    status = fab_importer_import(importer, &handle, &import);
    if (fab_access_is_mappable(fab_handle_access(&handle))) {
        CHECK(status == FAB_SUCCESS);
        CHECK(fab_import_size(&import) == fab_handle_size(&handle));
        CHECK(fab_import_access(&import) == fab_handle_access(&handle));
    } else {
        CHECK(status == FAB_ERROR_NOT_PERMITTED);
    }
    fab_importer_destroy(importer);

    if (fab_handle_origin(&handle) == FAB_HANDLE_ORIGIN_MODEL && fab_handle_size(&handle) > 0 &&
        fab_access_is_mappable(fab_handle_access(&handle))) {
        fab_alloc_props_t props = fab_alloc_props_read_write(0, fab_handle_size(&handle));
        props.peer_access = fab_handle_access(&handle);
        fab_memory_t *mem = NULL;
        CHECK(fab_memory_allocate(1, fab_handle_uuid(&handle), &props, &mem) == FAB_SUCCESS);
        fab_handle_t again;
        CHECK(fab_memory_export(mem, &again) == FAB_SUCCESS);
        CHECK(memcmp(again.bytes, handle.bytes, FAB_HANDLE_BYTES) == 0);
        fab_memory_destroy(mem);
    }
    return 0;
}
