/* The seed's sixteen tests (oxicuda-driver 0.3.0, fabric_handle.rs), one for
 * one and under the same names: the model must behave as the seed does. */
#include "fabtest.h"

#include <string.h>

#include "fabmem.h"

#define MIB ((size_t)1024 * 1024)

/* The seed's UUID constant, 0x0123456789abcdeffedcba9876543210, as the bytes
 * of its little-endian u128. */
static const fab_uuid_t seed_uuid = {{0x10, 0x32, 0x54, 0x76, 0x98, 0xba, 0xdc, 0xfe,
                                      0xef, 0xcd, 0xab, 0x89, 0x67, 0x45, 0x23, 0x01}};

static fab_memory_t *make_exporter(fab_access_t access)
{
    fab_alloc_props_t props = {
        .device_ordinal = 0,
        .size = 2 * MIB,
        .peer_access = access,
        .handle_type = FAB_HANDLE_TYPE_FABRIC,
    };
    fab_memory_t *mem = NULL;
    assert_int_equal(fab_memory_allocate(42, seed_uuid, &props, &mem), FAB_SUCCESS);
    assert_non_null(mem);
    return mem;
}

static fab_importer_t *make_importer(int ordinal)
{
    fab_importer_t *importer = NULL;
    assert_int_equal(fab_importer_create(ordinal, &importer), FAB_SUCCESS);
    return importer;
}

static void props_require_fabric_handle_type(void **state)
{
    (void)state;
    fab_alloc_props_t props = {
        .device_ordinal = 0,
        .size = 4096,
        .peer_access = FAB_ACCESS_READ_WRITE,
        .handle_type = FAB_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR,
    };
    fab_memory_t *mem = NULL;
    assert_int_equal(fab_memory_allocate(1, seed_uuid, &props, &mem), FAB_ERROR_NOT_SUPPORTED);
    assert_null(mem);
}

static void props_reject_zero_size(void **state)
{
    (void)state;
    fab_alloc_props_t props = fab_alloc_props_read_write(0, 0);
    fab_memory_t *mem = NULL;
    assert_int_equal(fab_memory_allocate(1, seed_uuid, &props, &mem), FAB_ERROR_INVALID_VALUE);
    assert_null(mem);
}

static void handle_round_trips_through_bytes(void **state)
{
    (void)state;
    fab_memory_t *mem = make_exporter(FAB_ACCESS_READ_WRITE);
    fab_handle_t handle;
    assert_int_equal(fab_memory_export(mem, &handle), FAB_SUCCESS);
    uint8_t wire[FAB_HANDLE_BYTES];
    memcpy(wire, handle.bytes, sizeof(wire));
    assert_int_equal(sizeof(wire), FAB_HANDLE_BYTES);

    fab_handle_t restored;
    assert_int_equal(fab_handle_from_bytes(wire, sizeof(wire), &restored), FAB_SUCCESS);
    assert_memory_equal(restored.bytes, handle.bytes, FAB_HANDLE_BYTES);
    fab_uuid_t uuid = fab_handle_uuid(&restored);
    assert_true(fab_uuid_equal(&uuid, &seed_uuid));
    assert_int_equal(fab_handle_size(&restored), 2 * MIB);
    assert_int_equal(fab_handle_access(&restored), FAB_ACCESS_READ_WRITE);
    fab_memory_destroy(mem);
}

static void from_bytes_rejects_wrong_length(void **state)
{
    (void)state;
    uint8_t blob[32] = {0};
    fab_handle_t handle;
    assert_int_equal(fab_handle_from_bytes(blob, sizeof(blob), &handle), FAB_ERROR_INVALID_VALUE);
}

static void from_bytes_rejects_bad_magic(void **state)
{
    (void)state;
    uint8_t blob[FAB_HANDLE_BYTES] = {0};
    blob[0] = 'X';
    fab_handle_t handle;
    assert_int_equal(fab_handle_from_bytes(blob, sizeof(blob), &handle), FAB_ERROR_INVALID_HANDLE);
}

static void export_bumps_reference_count(void **state)
{
    (void)state;
    fab_memory_t *mem = make_exporter(FAB_ACCESS_READ_WRITE);
    assert_int_equal(fab_memory_export_count(mem), 0);
    fab_handle_t h1, h2;
    assert_int_equal(fab_memory_export(mem, &h1), FAB_SUCCESS);
    assert_int_equal(fab_memory_export(mem, &h2), FAB_SUCCESS);
    assert_int_equal(fab_memory_export_count(mem), 2);
    fab_memory_destroy(mem);
}

static void none_access_cannot_be_exported(void **state)
{
    (void)state;
    fab_memory_t *mem = make_exporter(FAB_ACCESS_NONE);
    fab_handle_t handle;
    assert_int_equal(fab_memory_export(mem, &handle), FAB_ERROR_NOT_PERMITTED);
    fab_memory_destroy(mem);
}

static void release_blocked_while_exports_outstanding(void **state)
{
    (void)state;
    fab_memory_t *mem = make_exporter(FAB_ACCESS_READ_WRITE);
    fab_handle_t handle;
    assert_int_equal(fab_memory_export(mem, &handle), FAB_SUCCESS);
    assert_int_equal(fab_memory_release(mem), FAB_ERROR_ILLEGAL_STATE);
    /* Once the export is retired, release succeeds. */
    assert_int_equal(fab_memory_retire_export(mem), FAB_SUCCESS);
    assert_int_equal(fab_memory_release(mem), FAB_SUCCESS);
    assert_true(fab_memory_is_released(mem));
    fab_memory_destroy(mem);
}

static void retire_export_underflow_is_illegal_state(void **state)
{
    (void)state;
    fab_memory_t *mem = make_exporter(FAB_ACCESS_READ_WRITE);
    assert_int_equal(fab_memory_retire_export(mem), FAB_ERROR_ILLEGAL_STATE);
    fab_memory_destroy(mem);
}

static void export_after_release_fails(void **state)
{
    (void)state;
    fab_memory_t *mem = make_exporter(FAB_ACCESS_READ_WRITE);
    assert_int_equal(fab_memory_release(mem), FAB_SUCCESS);
    fab_handle_t handle;
    assert_int_equal(fab_memory_export(mem, &handle), FAB_ERROR_INVALID_HANDLE);
    fab_memory_destroy(mem);
}

static void import_maps_same_physical_memory(void **state)
{
    (void)state;
    fab_memory_t *mem = make_exporter(FAB_ACCESS_READ_WRITE);
    fab_handle_t handle;
    assert_int_equal(fab_memory_export(mem, &handle), FAB_SUCCESS);
    uint8_t wire[FAB_HANDLE_BYTES];
    memcpy(wire, handle.bytes, sizeof(wire));

    /* The peer process's side. */
    fab_handle_t received;
    assert_int_equal(fab_handle_from_bytes(wire, sizeof(wire), &received), FAB_SUCCESS);
    fab_importer_t *importer = make_importer(1);
    fab_import_t import;
    assert_int_equal(fab_importer_import(importer, &received, &import), FAB_SUCCESS);

    /* The same fabric uuid: the same physical allocation. */
    fab_uuid_t uuid = fab_import_uuid(&import);
    assert_true(fab_uuid_equal(&uuid, &seed_uuid));
    assert_int_equal(fab_import_size(&import), 2 * MIB);
    assert_int_equal(fab_import_device_ordinal(&import), 1);
    assert_int_equal(fab_import_access(&import), FAB_ACCESS_READ_WRITE);
    fab_importer_destroy(importer);
    fab_memory_destroy(mem);
}

static void import_assigns_distinct_handles(void **state)
{
    (void)state;
    fab_memory_t *mem = make_exporter(FAB_ACCESS_READ_WRITE);
    fab_handle_t handle;
    assert_int_equal(fab_memory_export(mem, &handle), FAB_SUCCESS);
    fab_importer_t *importer = make_importer(2);
    fab_import_t a, b;
    assert_int_equal(fab_importer_import(importer, &handle, &a), FAB_SUCCESS);
    assert_int_equal(fab_importer_import(importer, &handle, &b), FAB_SUCCESS);
    assert_int_not_equal(fab_import_handle(&a), fab_import_handle(&b));
    fab_importer_destroy(importer);
    fab_memory_destroy(mem);
}

static void unreachable_importer_gets_not_supported(void **state)
{
    (void)state;
    fab_memory_t *mem = make_exporter(FAB_ACCESS_READ_WRITE);
    fab_handle_t handle;
    assert_int_equal(fab_memory_export(mem, &handle), FAB_SUCCESS);
    fab_importer_t *importer = make_importer(3);
    fab_importer_set_reachable(importer, false);
    fab_import_t import;
    assert_int_equal(fab_importer_import(importer, &handle, &import), FAB_ERROR_NOT_SUPPORTED);
    fab_importer_destroy(importer);
    fab_memory_destroy(mem);
}

static void read_only_export_blocks_writable_map(void **state)
{
    (void)state;
    fab_memory_t *mem = make_exporter(FAB_ACCESS_READ_ONLY);
    fab_handle_t handle;
    assert_int_equal(fab_memory_export(mem, &handle), FAB_SUCCESS);
    fab_importer_t *importer = make_importer(1);
    fab_import_t import;
    assert_int_equal(fab_importer_import(importer, &handle, &import), FAB_SUCCESS);
    /* A read-only mapping succeeds... */
    assert_int_equal(fab_import_map_readable(&import), FAB_SUCCESS);
    assert_true(fab_import_is_mapped(&import));
    /* ...a writable one is refused. */
    assert_int_equal(fab_import_map_writable(&import), FAB_ERROR_NOT_PERMITTED);
    fab_importer_destroy(importer);
    fab_memory_destroy(mem);
}

static void read_write_export_allows_writable_map(void **state)
{
    (void)state;
    fab_memory_t *mem = make_exporter(FAB_ACCESS_READ_WRITE);
    fab_handle_t handle;
    assert_int_equal(fab_memory_export(mem, &handle), FAB_SUCCESS);
    fab_importer_t *importer = make_importer(1);
    fab_import_t import;
    assert_int_equal(fab_importer_import(importer, &handle, &import), FAB_SUCCESS);
    assert_int_equal(fab_import_map_writable(&import), FAB_SUCCESS);
    assert_true(fab_import_is_mapped(&import));
    fab_importer_destroy(importer);
    fab_memory_destroy(mem);
}

static void fabric_access_predicates(void **state)
{
    (void)state;
    assert_false(fab_access_is_mappable(FAB_ACCESS_NONE));
    assert_true(fab_access_is_mappable(FAB_ACCESS_READ_ONLY));
    assert_false(fab_access_is_writable(FAB_ACCESS_READ_ONLY));
    assert_true(fab_access_is_writable(FAB_ACCESS_READ_WRITE));
}

static const struct CMUnitTest tests[] = {
    cmocka_unit_test(props_require_fabric_handle_type),
    cmocka_unit_test(props_reject_zero_size),
    cmocka_unit_test(handle_round_trips_through_bytes),
    cmocka_unit_test(from_bytes_rejects_wrong_length),
    cmocka_unit_test(from_bytes_rejects_bad_magic),
    cmocka_unit_test(export_bumps_reference_count),
    cmocka_unit_test(none_access_cannot_be_exported),
    cmocka_unit_test(release_blocked_while_exports_outstanding),
    cmocka_unit_test(retire_export_underflow_is_illegal_state),
    cmocka_unit_test(export_after_release_fails),
    cmocka_unit_test(import_maps_same_physical_memory),
    cmocka_unit_test(import_assigns_distinct_handles),
    cmocka_unit_test(unreachable_importer_gets_not_supported),
    cmocka_unit_test(read_only_export_blocks_writable_map),
    cmocka_unit_test(read_write_export_allows_writable_map),
    cmocka_unit_test(fabric_access_predicates),
};
FAB_TEST_MAIN_NO_HELPERS("seed", tests)
