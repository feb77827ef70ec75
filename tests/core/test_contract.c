/* The C contract this project adds to the seed's behaviour: a NULL pointer is
 * FAB_ERROR_INVALID_VALUE and never a crash; out-parameters are written only on
 * success; values outside an enum are refused; NULL readers read as zero. */
#include "fabtest.h"

#include <string.h>

#include "fabmem.h"

static const fab_uuid_t uuid_b = {{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}};

#define SENTINEL 0xa5

static void assert_untouched(const void *p, size_t n)
{
    const uint8_t *b = p;
    for (size_t i = 0; i < n; i++)
        assert_int_equal(b[i], SENTINEL);
}

static fab_memory_t *make_memory(fab_access_t access)
{
    fab_alloc_props_t props = fab_alloc_props_read_write(0, 4096);
    props.peer_access = access;
    fab_memory_t *mem = NULL;
    assert_int_equal(fab_memory_allocate(9, uuid_b, &props, &mem), FAB_SUCCESS);
    return mem;
}

static void null_arguments_are_invalid_value(void **state)
{
    (void)state;
    fab_alloc_props_t props = fab_alloc_props_read_write(0, 4096);
    fab_memory_t *mem = make_memory(FAB_ACCESS_READ_WRITE);
    fab_importer_t *importer = NULL;
    assert_int_equal(fab_importer_create(0, &importer), FAB_SUCCESS);
    fab_handle_t handle;
    assert_int_equal(fab_memory_export(mem, &handle), FAB_SUCCESS);
    fab_memory_t *m_out = NULL;
    fab_import_t import;

    assert_int_equal(fab_handle_from_bytes(NULL, 64, &handle), FAB_ERROR_INVALID_VALUE);
    assert_int_equal(fab_handle_from_bytes(handle.bytes, 64, NULL), FAB_ERROR_INVALID_VALUE);
    assert_int_equal(fab_memory_allocate(1, uuid_b, NULL, &m_out), FAB_ERROR_INVALID_VALUE);
    assert_int_equal(fab_memory_allocate(1, uuid_b, &props, NULL), FAB_ERROR_INVALID_VALUE);
    assert_int_equal(fab_memory_export(NULL, &handle), FAB_ERROR_INVALID_VALUE);
    assert_int_equal(fab_memory_export(mem, NULL), FAB_ERROR_INVALID_VALUE);
    assert_int_equal(fab_memory_retire_export(NULL), FAB_ERROR_INVALID_VALUE);
    assert_int_equal(fab_memory_release(NULL), FAB_ERROR_INVALID_VALUE);
    assert_int_equal(fab_importer_create(0, NULL), FAB_ERROR_INVALID_VALUE);
    assert_int_equal(fab_importer_import(NULL, &handle, &import), FAB_ERROR_INVALID_VALUE);
    assert_int_equal(fab_importer_import(importer, NULL, &import), FAB_ERROR_INVALID_VALUE);
    assert_int_equal(fab_importer_import(importer, &handle, NULL), FAB_ERROR_INVALID_VALUE);
    assert_int_equal(fab_import_map_readable(NULL), FAB_ERROR_INVALID_VALUE);
    assert_int_equal(fab_import_map_writable(NULL), FAB_ERROR_INVALID_VALUE);
    /* A NULL argument changed no state: the count is still the one export. */
    assert_int_equal(fab_memory_export_count(mem), 1);
    fab_importer_destroy(importer);
    fab_memory_destroy(mem);
}

/* A service that mints its own handles asks the model the same question and
 * gets the same count, with no handle of the model's made and thrown away. */
static void count_export_decides_and_counts_as_export_does(void **state)
{
    (void)state;
    fab_memory_t *mem = make_memory(FAB_ACCESS_READ_WRITE);
    assert_int_equal(fab_memory_count_export(NULL), FAB_ERROR_INVALID_VALUE);
    assert_int_equal(fab_memory_count_export(mem), FAB_SUCCESS);
    fab_handle_t handle;
    assert_int_equal(fab_memory_export(mem, &handle), FAB_SUCCESS);
    assert_int_equal(fab_memory_export_count(mem), 2);
    assert_int_equal(fab_memory_retire_export(mem), FAB_SUCCESS);
    assert_int_equal(fab_memory_retire_export(mem), FAB_SUCCESS);
    assert_int_equal(fab_memory_release(mem), FAB_SUCCESS);
    assert_int_equal(fab_memory_count_export(mem), FAB_ERROR_INVALID_HANDLE);
    fab_memory_destroy(mem);
    mem = make_memory(FAB_ACCESS_NONE);
    assert_int_equal(fab_memory_count_export(mem), FAB_ERROR_NOT_PERMITTED);
    assert_int_equal(fab_memory_export_count(mem), 0);
    fab_memory_destroy(mem);
}

static void destroy_null_is_a_no_op(void **state)
{
    (void)state;
    fab_memory_destroy(NULL);
    fab_importer_destroy(NULL);
    fab_importer_set_reachable(NULL, false);
}

static void memory_readers_read_null_as_zero(void **state)
{
    (void)state;
    assert_int_equal(fab_memory_allocation_handle(NULL), 0);
    assert_int_equal(fab_memory_export_count(NULL), 0);
    assert_false(fab_memory_is_released(NULL));
    fab_alloc_props_t props = fab_memory_props(NULL);
    assert_int_equal(props.size, 0);
    assert_int_equal(props.handle_type, FAB_HANDLE_TYPE_NONE);
    assert_int_equal(fab_importer_device_ordinal(NULL), -1);
    assert_int_equal(fab_import_handle(NULL), 0);
    assert_int_equal(fab_import_size(NULL), 0);
    assert_int_equal(fab_import_access(NULL), FAB_ACCESS_NONE);
    assert_int_equal(fab_import_device_ordinal(NULL), -1);
    assert_false(fab_import_is_mapped(NULL));
}

static void allocate_failure_leaves_out_param_untouched(void **state)
{
    (void)state;
    fab_alloc_props_t props = fab_alloc_props_read_write(0, 0);
    fab_memory_t *out;
    memset(&out, SENTINEL, sizeof(out));
    assert_int_equal(fab_memory_allocate(1, uuid_b, &props, &out), FAB_ERROR_INVALID_VALUE);
    assert_untouched(&out, sizeof(out));
}

static void export_failure_leaves_out_param_untouched(void **state)
{
    (void)state;
    fab_memory_t *mem = make_memory(FAB_ACCESS_NONE);
    fab_handle_t out;
    memset(&out, SENTINEL, sizeof(out));
    assert_int_equal(fab_memory_export(mem, &out), FAB_ERROR_NOT_PERMITTED);
    assert_untouched(&out, sizeof(out));
    assert_int_equal(fab_memory_export_count(mem), 0);
    fab_memory_destroy(mem);
}

static void import_failure_leaves_out_param_untouched(void **state)
{
    (void)state;
    fab_memory_t *mem = make_memory(FAB_ACCESS_READ_WRITE);
    fab_handle_t handle;
    assert_int_equal(fab_memory_export(mem, &handle), FAB_SUCCESS);
    fab_importer_t *importer = NULL;
    assert_int_equal(fab_importer_create(1, &importer), FAB_SUCCESS);
    fab_importer_set_reachable(importer, false);
    fab_import_t out;
    memset(&out, SENTINEL, sizeof(out));
    assert_int_equal(fab_importer_import(importer, &handle, &out), FAB_ERROR_NOT_SUPPORTED);
    assert_untouched(&out, sizeof(out));
    fab_importer_destroy(importer);
    fab_memory_destroy(mem);
}

static void importer_create_failure_leaves_out_param_untouched(void **state)
{
    (void)state;
    fab_importer_t *out;
    memset(&out, SENTINEL, sizeof(out));
    assert_int_equal(fab_importer_create(-1, &out), FAB_ERROR_INVALID_VALUE);
    assert_untouched(&out, sizeof(out));
}

static void negative_device_ordinal_is_invalid_value(void **state)
{
    (void)state;
    fab_alloc_props_t props = fab_alloc_props_read_write(-1, 4096);
    fab_memory_t *mem = NULL;
    assert_int_equal(fab_memory_allocate(1, uuid_b, &props, &mem), FAB_ERROR_INVALID_VALUE);
    assert_null(mem);
}

static void unknown_handle_type_bits_are_invalid_value(void **state)
{
    (void)state;
    fab_alloc_props_t props = fab_alloc_props_read_write(0, 4096);
    props.handle_type = (fab_handle_type_t)(FAB_HANDLE_TYPE_FABRIC | 0x10);
    fab_memory_t *mem = NULL;
    assert_int_equal(fab_memory_allocate(1, uuid_b, &props, &mem), FAB_ERROR_INVALID_VALUE);
    assert_null(mem);
}

static void fabric_combined_with_posix_fd_is_accepted(void **state)
{
    (void)state;
    /* NCCL asks for POSIX_FD | FABRIC; the fabric bit is what the model needs. */
    fab_alloc_props_t props = fab_alloc_props_read_write(0, 4096);
    props.handle_type = (fab_handle_type_t)(FAB_HANDLE_TYPE_FABRIC |
                                            FAB_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR);
    fab_memory_t *mem = NULL;
    assert_int_equal(fab_memory_allocate(1, uuid_b, &props, &mem), FAB_SUCCESS);
    assert_int_equal(fab_memory_props(mem).handle_type, props.handle_type);
    fab_memory_destroy(mem);
}

static void handle_type_is_checked_before_size(void **state)
{
    (void)state;
    fab_alloc_props_t props = fab_alloc_props_read_write(0, 0);
    props.handle_type = FAB_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
    fab_memory_t *mem = NULL;
    assert_int_equal(fab_memory_allocate(1, uuid_b, &props, &mem), FAB_ERROR_NOT_SUPPORTED);
}

static void peer_access_outside_the_enum_is_invalid_value(void **state)
{
    (void)state;
    fab_alloc_props_t props = fab_alloc_props_read_write(0, 4096);
    props.peer_access = (fab_access_t)3;
    fab_memory_t *mem = NULL;
    assert_int_equal(fab_memory_allocate(1, uuid_b, &props, &mem), FAB_ERROR_INVALID_VALUE);
    assert_null(mem);
}

static void memory_keeps_what_it_was_given(void **state)
{
    (void)state;
    fab_alloc_props_t props = {3, 6u << 20, FAB_ACCESS_READ_ONLY, FAB_HANDLE_TYPE_FABRIC};
    fab_memory_t *mem = NULL;
    assert_int_equal(fab_memory_allocate(77, uuid_b, &props, &mem), FAB_SUCCESS);
    assert_int_equal(fab_memory_allocation_handle(mem), 77);
    fab_uuid_t uuid = fab_memory_uuid(mem);
    assert_true(fab_uuid_equal(&uuid, &uuid_b));
    fab_alloc_props_t got = fab_memory_props(mem);
    assert_int_equal(got.device_ordinal, 3);
    assert_int_equal(got.size, 6u << 20);
    assert_int_equal(got.peer_access, FAB_ACCESS_READ_ONLY);
    assert_false(fab_memory_is_released(mem));
    fab_memory_destroy(mem);
}

static void read_write_props_helper_fills_every_field(void **state)
{
    (void)state;
    fab_alloc_props_t p = fab_alloc_props_read_write(5, 123);
    assert_int_equal(p.device_ordinal, 5);
    assert_int_equal(p.size, 123);
    assert_int_equal(p.peer_access, FAB_ACCESS_READ_WRITE);
    assert_int_equal(p.handle_type, FAB_HANDLE_TYPE_FABRIC);
}

static void release_twice_is_allowed_as_in_the_seed(void **state)
{
    (void)state;
    fab_memory_t *mem = make_memory(FAB_ACCESS_READ_WRITE);
    assert_int_equal(fab_memory_release(mem), FAB_SUCCESS);
    assert_int_equal(fab_memory_release(mem), FAB_SUCCESS);
    assert_true(fab_memory_is_released(mem));
    fab_memory_destroy(mem);
}

static void import_of_read_only_grant_is_read_only(void **state)
{
    (void)state;
    fab_memory_t *mem = make_memory(FAB_ACCESS_READ_ONLY);
    fab_handle_t handle;
    assert_int_equal(fab_memory_export(mem, &handle), FAB_SUCCESS);
    fab_importer_t *importer = NULL;
    assert_int_equal(fab_importer_create(0, &importer), FAB_SUCCESS);
    fab_import_t import;
    assert_int_equal(fab_importer_import(importer, &handle, &import), FAB_SUCCESS);
    assert_int_equal(fab_import_access(&import), FAB_ACCESS_READ_ONLY);
    assert_false(fab_import_is_mapped(&import));
    fab_importer_destroy(importer);
    fab_memory_destroy(mem);
}

static void import_handles_count_up_from_one(void **state)
{
    (void)state;
    fab_memory_t *mem = make_memory(FAB_ACCESS_READ_WRITE);
    fab_handle_t handle;
    assert_int_equal(fab_memory_export(mem, &handle), FAB_SUCCESS);
    fab_importer_t *importer = NULL;
    assert_int_equal(fab_importer_create(4, &importer), FAB_SUCCESS);
    assert_int_equal(fab_importer_device_ordinal(importer), 4);
    for (uint64_t want = 1; want <= 3; want++) {
        fab_import_t import;
        assert_int_equal(fab_importer_import(importer, &handle, &import), FAB_SUCCESS);
        assert_int_equal(fab_import_handle(&import), want);
    }
    fab_importer_destroy(importer);
    fab_memory_destroy(mem);
}

static void reachability_can_be_restored(void **state)
{
    (void)state;
    fab_memory_t *mem = make_memory(FAB_ACCESS_READ_WRITE);
    fab_handle_t handle;
    assert_int_equal(fab_memory_export(mem, &handle), FAB_SUCCESS);
    fab_importer_t *importer = NULL;
    assert_int_equal(fab_importer_create(0, &importer), FAB_SUCCESS);
    fab_import_t import;
    fab_importer_set_reachable(importer, false);
    assert_int_equal(fab_importer_import(importer, &handle, &import), FAB_ERROR_NOT_SUPPORTED);
    fab_importer_set_reachable(importer, true);
    assert_int_equal(fab_importer_import(importer, &handle, &import), FAB_SUCCESS);
    /* A refused import consumed no handle number. */
    assert_int_equal(fab_import_handle(&import), 1);
    fab_importer_destroy(importer);
    fab_memory_destroy(mem);
}

static void import_with_no_grant_cannot_be_mapped(void **state)
{
    (void)state;
    fab_import_t import;
    memset(&import, 0, sizeof(import)); /* access NONE */
    assert_int_equal(fab_import_map_readable(&import), FAB_ERROR_NOT_PERMITTED);
    assert_int_equal(fab_import_map_writable(&import), FAB_ERROR_NOT_PERMITTED);
    assert_false(fab_import_is_mapped(&import));
}

static void retire_after_release_counts_down(void **state)
{
    (void)state;
    /* Release needs a zero count, so the count after release is zero and a
     * retire is a double retire. */
    fab_memory_t *mem = make_memory(FAB_ACCESS_READ_WRITE);
    assert_int_equal(fab_memory_release(mem), FAB_SUCCESS);
    assert_int_equal(fab_memory_retire_export(mem), FAB_ERROR_ILLEGAL_STATE);
    fab_memory_destroy(mem);
}

/* The allocation's handle, as fab_memory_handle shows it, is the one every
 * export copies out. */
static void memory_handle_is_what_export_copies(void **state)
{
    (void)state;
    fab_memory_t *mem = make_memory(FAB_ACCESS_READ_WRITE);
    fab_handle_t out;
    assert_int_equal(fab_memory_export(mem, &out), FAB_SUCCESS);
    assert_non_null(fab_memory_handle(mem));
    assert_memory_equal(fab_memory_handle(mem)->bytes, out.bytes, FAB_HANDLE_BYTES);
    assert_null(fab_memory_handle(NULL));
    fab_memory_destroy(mem);
}

/* A service's own handle for the allocation (another origin, a domain, a
 * tag) becomes the one exported. */
static void kept_handle_is_the_one_exported(void **state)
{
    (void)state;
    fab_memory_t *mem = make_memory(FAB_ACCESS_READ_ONLY);
    const uint8_t tag[FAB_HANDLE_TAG_BYTES] = {7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7};
    fab_handle_t own, out;
    assert_int_equal(fab_handle_encode(uuid_b, 4096, FAB_ACCESS_READ_ONLY, FAB_HANDLE_ORIGIN_FABRIC,
                                       42, tag, &own),
                     FAB_SUCCESS);
    assert_int_equal(fab_memory_keep_handle(mem, &own), FAB_SUCCESS);
    assert_int_equal(fab_memory_export(mem, &out), FAB_SUCCESS);
    assert_true(fab_handle_equal(&out, &own));
    assert_int_equal(fab_handle_domain(&out), 42);
    fab_memory_destroy(mem);
}

/* A handle for another uuid, size or access is refused, and the
 * allocation's handle stays as it was. */
static void keep_handle_refuses_another_allocations_handle(void **state)
{
    (void)state;
    fab_memory_t *mem = make_memory(FAB_ACCESS_READ_ONLY);
    fab_handle_t before = *fab_memory_handle(mem);
    fab_uuid_t other = uuid_b;
    other.bytes[15] ^= 0x80;
    fab_handle_t wrong[3];
    assert_int_equal(fab_handle_encode(other, 4096, FAB_ACCESS_READ_ONLY, FAB_HANDLE_ORIGIN_FABRIC,
                                       1, NULL, &wrong[0]),
                     FAB_SUCCESS);
    assert_int_equal(fab_handle_encode(uuid_b, 8192, FAB_ACCESS_READ_ONLY, FAB_HANDLE_ORIGIN_FABRIC,
                                       1, NULL, &wrong[1]),
                     FAB_SUCCESS);
    assert_int_equal(fab_handle_encode(uuid_b, 4096, FAB_ACCESS_READ_WRITE,
                                       FAB_HANDLE_ORIGIN_FABRIC, 1, NULL, &wrong[2]),
                     FAB_SUCCESS);
    for (int i = 0; i < 3; i++) {
        assert_int_equal(fab_memory_keep_handle(mem, &wrong[i]), FAB_ERROR_INVALID_VALUE);
        assert_true(fab_handle_equal(fab_memory_handle(mem), &before));
    }
    assert_int_equal(fab_memory_keep_handle(mem, NULL), FAB_ERROR_INVALID_VALUE);
    assert_int_equal(fab_memory_keep_handle(NULL, &before), FAB_ERROR_INVALID_VALUE);
    fab_memory_destroy(mem);
}

/* Bytes that are not an intact handle are refused, whatever they name. */
static void keep_handle_refuses_altered_bytes(void **state)
{
    (void)state;
    fab_memory_t *mem = make_memory(FAB_ACCESS_READ_WRITE);
    fab_handle_t before = *fab_memory_handle(mem);
    fab_handle_t own;
    assert_int_equal(fab_handle_encode(uuid_b, 4096, FAB_ACCESS_READ_WRITE,
                                       FAB_HANDLE_ORIGIN_FABRIC, 3, NULL, &own),
                     FAB_SUCCESS);
    own.bytes[40] ^= 0x01; /* the domain: uuid, size and access still match */
    assert_int_equal(fab_memory_keep_handle(mem, &own), FAB_ERROR_INVALID_HANDLE);
    assert_true(fab_handle_equal(fab_memory_handle(mem), &before));
    fab_memory_destroy(mem);
}

/* Handles are equal when all 64 bytes are; any one byte differing, or a
 * NULL, is not equal. */
static void handle_equal_looks_at_every_byte(void **state)
{
    (void)state;
    fab_memory_t *mem = make_memory(FAB_ACCESS_READ_WRITE);
    fab_handle_t a = *fab_memory_handle(mem), b = a;
    assert_true(fab_handle_equal(&a, &b));
    for (int pos = 0; pos < FAB_HANDLE_BYTES; pos++) {
        b = a;
        b.bytes[pos] ^= 0x10;
        if (fab_handle_equal(&a, &b))
            fail_msg("byte %d differs, yet the handles are equal", pos);
    }
    assert_false(fab_handle_equal(&a, NULL));
    assert_false(fab_handle_equal(NULL, &a));
    assert_false(fab_handle_equal(NULL, NULL));
    fab_memory_destroy(mem);
}

static const struct CMUnitTest tests[] = {
    cmocka_unit_test(null_arguments_are_invalid_value),
    cmocka_unit_test(count_export_decides_and_counts_as_export_does),
    cmocka_unit_test(destroy_null_is_a_no_op),
    cmocka_unit_test(memory_readers_read_null_as_zero),
    cmocka_unit_test(allocate_failure_leaves_out_param_untouched),
    cmocka_unit_test(export_failure_leaves_out_param_untouched),
    cmocka_unit_test(import_failure_leaves_out_param_untouched),
    cmocka_unit_test(importer_create_failure_leaves_out_param_untouched),
    cmocka_unit_test(negative_device_ordinal_is_invalid_value),
    cmocka_unit_test(unknown_handle_type_bits_are_invalid_value),
    cmocka_unit_test(fabric_combined_with_posix_fd_is_accepted),
    cmocka_unit_test(handle_type_is_checked_before_size),
    cmocka_unit_test(peer_access_outside_the_enum_is_invalid_value),
    cmocka_unit_test(memory_keeps_what_it_was_given),
    cmocka_unit_test(read_write_props_helper_fills_every_field),
    cmocka_unit_test(release_twice_is_allowed_as_in_the_seed),
    cmocka_unit_test(import_of_read_only_grant_is_read_only),
    cmocka_unit_test(import_handles_count_up_from_one),
    cmocka_unit_test(reachability_can_be_restored),
    cmocka_unit_test(import_with_no_grant_cannot_be_mapped),
    cmocka_unit_test(retire_after_release_counts_down),
    cmocka_unit_test(memory_handle_is_what_export_copies),
    cmocka_unit_test(kept_handle_is_the_one_exported),
    cmocka_unit_test(keep_handle_refuses_another_allocations_handle),
    cmocka_unit_test(keep_handle_refuses_altered_bytes),
    cmocka_unit_test(handle_equal_looks_at_every_byte),
};
FAB_TEST_MAIN_NO_HELPERS("contract", tests)
