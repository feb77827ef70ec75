/* The wire form: the seed's layout of bytes 0..32, and the rules this project
 * adds in bytes 33..63 (version, origin, reserved, domain, tag, CRC-32): any
 * change to any one byte is refused, and so are well-formed handles that no
 * minter of this format produces. */
#include "fabtest.h"

#include <string.h>
#include <zlib.h>

#include "fabmem.h"

static const fab_uuid_t uuid_a = {{0x10, 0x32, 0x54, 0x76, 0x98, 0xba, 0xdc, 0xfe,
                                   0xef, 0xcd, 0xab, 0x89, 0x67, 0x45, 0x23, 0x01}};

static fab_handle_t exported(fab_access_t access, size_t size)
{
    fab_alloc_props_t props = fab_alloc_props_read_write(0, size);
    props.peer_access = access;
    fab_memory_t *mem = NULL;
    assert_int_equal(fab_memory_allocate(7, uuid_a, &props, &mem), FAB_SUCCESS);
    fab_handle_t handle;
    assert_int_equal(fab_memory_export(mem, &handle), FAB_SUCCESS);
    fab_memory_destroy(mem);
    return handle;
}

/* What a forger would do: change bytes, then make the CRC match again. */
static void recompute_crc(uint8_t *bytes)
{
    uint32_t crc = (uint32_t)crc32(crc32(0L, Z_NULL, 0), bytes, 60);
    for (int i = 0; i < 4; i++)
        bytes[60 + i] = (uint8_t)(crc >> (8 * i));
}

static void handle_layout_matches_the_seed(void **state)
{
    (void)state;
    fab_handle_t h = exported(FAB_ACCESS_READ_ONLY, 0x0102030405060708ull & 0x7fffffffffffull);
    assert_memory_equal(h.bytes, "OXIFABRC", 8);
    assert_memory_equal(h.bytes + 8, uuid_a.bytes, 16);
    const uint8_t size_le[8] = {0x08, 0x07, 0x06, 0x05, 0x04, 0x03, 0x00, 0x00};
    assert_memory_equal(h.bytes + 24, size_le, 8);
    assert_int_equal(h.bytes[32], 1);
}

static void handle_access_byte_follows_the_grant(void **state)
{
    (void)state;
    assert_int_equal(exported(FAB_ACCESS_READ_ONLY, 4096).bytes[32], 1);
    assert_int_equal(exported(FAB_ACCESS_READ_WRITE, 4096).bytes[32], 2);
}

static void handle_tail_carries_version_and_crc(void **state)
{
    (void)state;
    fab_handle_t h = exported(FAB_ACCESS_READ_WRITE, 4096);
    assert_int_equal(h.bytes[33], FAB_HANDLE_VERSION);
    assert_int_equal(fab_handle_version(&h), FAB_HANDLE_VERSION);
    assert_int_equal(h.bytes[34], FAB_HANDLE_ORIGIN_MODEL);
    assert_int_equal(fab_handle_origin(&h), FAB_HANDLE_ORIGIN_MODEL);
    assert_int_equal(fab_handle_domain(&h), 0);
    uint8_t copy[FAB_HANDLE_BYTES];
    memcpy(copy, h.bytes, sizeof(copy));
    recompute_crc(copy);
    assert_memory_equal(copy, h.bytes, FAB_HANDLE_BYTES);
}

static void from_bytes_refuses_every_single_byte_change(void **state)
{
    (void)state;
    fab_handle_t good = exported(FAB_ACCESS_READ_WRITE, 2u << 20);
    for (int pos = 0; pos < FAB_HANDLE_BYTES; pos++) {
        for (int value = 0; value < 256; value++) {
            if (value == good.bytes[pos])
                continue;
            uint8_t bad[FAB_HANDLE_BYTES];
            memcpy(bad, good.bytes, sizeof(bad));
            bad[pos] = (uint8_t)value;
            fab_handle_t out;
            memset(&out, 0xa5, sizeof(out));
            if (fab_handle_from_bytes(bad, sizeof(bad), &out) != FAB_ERROR_INVALID_HANDLE)
                fail_msg("byte %d set to 0x%02x was accepted", pos, value);
            for (size_t i = 0; i < sizeof(out.bytes); i++)
                assert_int_equal(out.bytes[i], 0xa5);
        }
    }
}

/* The CRC is computed in the core (slice-by-8) and must stay zlib's, bit
 * for bit: handles minted before travel to peers built later. */
static void crc_is_zlibs_for_many_handles(void **state)
{
    (void)state;
    uint64_t x = 0x9e3779b97f4a7c15ull;
    for (int n = 0; n < 2000; n++) {
        fab_uuid_t uuid;
        for (int i = 0; i < 16; i++) {
            x ^= x << 13, x ^= x >> 7, x ^= x << 17;
            uuid.bytes[i] = (uint8_t)x;
        }
        fab_handle_t handle;
        assert_int_equal(fab_handle_encode(uuid, (size_t)(x >> 20), (fab_access_t)(n % 3),
                                           FAB_HANDLE_ORIGIN_MODEL, 0, NULL, &handle),
                         FAB_SUCCESS);
        uint8_t copy[FAB_HANDLE_BYTES];
        memcpy(copy, handle.bytes, sizeof(copy));
        recompute_crc(copy);
        assert_memory_equal(copy, handle.bytes, FAB_HANDLE_BYTES);
    }
}

/* The core remembers the last handle it found intact; a copy of that very
 * handle with one byte changed is still summed, and refused. */
static void a_handle_just_found_intact_is_refused_once_altered(void **state)
{
    (void)state;
    fab_handle_t good = exported(FAB_ACCESS_READ_WRITE, 2u << 20);
    for (int pos = 0; pos < FAB_HANDLE_BYTES; pos++) {
        fab_handle_t out;
        assert_int_equal(fab_handle_from_bytes(good.bytes, sizeof(good.bytes), &out), FAB_SUCCESS);
        uint8_t bad[FAB_HANDLE_BYTES];
        memcpy(bad, good.bytes, sizeof(bad));
        bad[pos] ^= 0x01;
        if (fab_handle_from_bytes(bad, sizeof(bad), &out) != FAB_ERROR_INVALID_HANDLE)
            fail_msg("byte %d changed right after the intact one was accepted", pos);
    }
}

/* An export remembers the handle it hands out as intact; a copy of it with
 * one byte changed, decoded or imported right after the export, is refused. */
static void a_handle_just_exported_is_refused_once_altered(void **state)
{
    (void)state;
    fab_alloc_props_t props = fab_alloc_props_read_write(0, 2u << 20);
    fab_memory_t *mem = NULL;
    fab_importer_t *importer = NULL;
    assert_int_equal(fab_memory_allocate(7, uuid_a, &props, &mem), FAB_SUCCESS);
    assert_int_equal(fab_importer_create(0, &importer), FAB_SUCCESS);
    for (int pos = 0; pos < FAB_HANDLE_BYTES; pos++) {
        fab_handle_t handle, out;
        fab_import_t import;
        assert_int_equal(fab_memory_export(mem, &handle), FAB_SUCCESS);
        handle.bytes[pos] ^= 0x01;
        if (fab_handle_from_bytes(handle.bytes, sizeof(handle.bytes), &out) !=
            FAB_ERROR_INVALID_HANDLE)
            fail_msg("byte %d changed right after the export was decoded", pos);
        assert_int_equal(fab_memory_export(mem, &out), FAB_SUCCESS);
        if (fab_importer_import(importer, &handle, &import) != FAB_ERROR_INVALID_HANDLE)
            fail_msg("byte %d changed right after the export was imported", pos);
    }
    fab_importer_destroy(importer);
    fab_memory_destroy(mem);
}

static void from_bytes_accepts_the_untouched_handle(void **state)
{
    (void)state;
    fab_handle_t good = exported(FAB_ACCESS_READ_WRITE, 2u << 20);
    fab_handle_t out;
    assert_int_equal(fab_handle_from_bytes(good.bytes, sizeof(good.bytes), &out), FAB_SUCCESS);
    assert_memory_equal(out.bytes, good.bytes, FAB_HANDLE_BYTES);
}

static void from_bytes_refuses_unknown_version_even_with_valid_crc(void **state)
{
    (void)state;
    fab_handle_t h = exported(FAB_ACCESS_READ_WRITE, 4096);
    const uint8_t versions[] = {0, 2, 255};
    for (size_t i = 0; i < sizeof(versions); i++) {
        h.bytes[33] = versions[i];
        recompute_crc(h.bytes);
        fab_handle_t out;
        assert_int_equal(fab_handle_from_bytes(h.bytes, 64, &out), FAB_ERROR_INVALID_HANDLE);
    }
}

static void from_bytes_refuses_unknown_access_even_with_valid_crc(void **state)
{
    (void)state;
    fab_handle_t h = exported(FAB_ACCESS_READ_WRITE, 4096);
    h.bytes[32] = 3;
    recompute_crc(h.bytes);
    fab_handle_t out;
    assert_int_equal(fab_handle_from_bytes(h.bytes, 64, &out), FAB_ERROR_INVALID_HANDLE);
}

static void from_bytes_refuses_unknown_origin_even_with_valid_crc(void **state)
{
    (void)state;
    fab_handle_t h = exported(FAB_ACCESS_READ_WRITE, 4096);
    h.bytes[34] = 2;
    recompute_crc(h.bytes);
    fab_handle_t out;
    assert_int_equal(fab_handle_from_bytes(h.bytes, 64, &out), FAB_ERROR_INVALID_HANDLE);
}

static void from_bytes_refuses_nonzero_reserved_byte(void **state)
{
    (void)state;
    fab_handle_t h = exported(FAB_ACCESS_READ_WRITE, 4096);
    h.bytes[35] = 1;
    recompute_crc(h.bytes);
    fab_handle_t out;
    assert_int_equal(fab_handle_from_bytes(h.bytes, 64, &out), FAB_ERROR_INVALID_HANDLE);
}

static void from_bytes_refuses_model_handle_with_domain_or_tag(void **state)
{
    (void)state;
    for (int pos = 36; pos < 60; pos++) {
        fab_handle_t h = exported(FAB_ACCESS_READ_WRITE, 4096);
        h.bytes[pos] = 0x5a;
        recompute_crc(h.bytes);
        fab_handle_t out;
        assert_int_equal(fab_handle_from_bytes(h.bytes, 64, &out), FAB_ERROR_INVALID_HANDLE);
    }
}

static void from_bytes_accepts_fabric_origin_for_the_daemon_to_judge(void **state)
{
    (void)state;
    /* The model cannot check a daemon's tag (it holds no key); it checks the
     * format and leaves authenticity to the daemon that minted the handle. */
    fab_handle_t h = exported(FAB_ACCESS_READ_WRITE, 4096);
    h.bytes[34] = FAB_HANDLE_ORIGIN_FABRIC;
    h.bytes[36] = 0x2a;
    memset(h.bytes + 44, 0x77, 16);
    recompute_crc(h.bytes);
    fab_handle_t out;
    assert_int_equal(fab_handle_from_bytes(h.bytes, 64, &out), FAB_SUCCESS);
    assert_int_equal(fab_handle_origin(&out), FAB_HANDLE_ORIGIN_FABRIC);
    assert_int_equal(fab_handle_domain(&out), 0x2a);
}

static void from_bytes_refuses_truncated_and_padded_blob(void **state)
{
    (void)state;
    fab_handle_t h = exported(FAB_ACCESS_READ_WRITE, 4096);
    for (int keep = 8; keep < FAB_HANDLE_BYTES; keep += 4) {
        uint8_t blob[FAB_HANDLE_BYTES] = {0};
        memcpy(blob, h.bytes, (size_t)keep);
        fab_handle_t out;
        assert_int_equal(fab_handle_from_bytes(blob, sizeof(blob), &out), FAB_ERROR_INVALID_HANDLE);
    }
}

static void from_bytes_wrong_length_is_invalid_value(void **state)
{
    (void)state;
    fab_handle_t h = exported(FAB_ACCESS_READ_WRITE, 4096);
    uint8_t longer[FAB_HANDLE_BYTES + 1];
    memcpy(longer, h.bytes, FAB_HANDLE_BYTES);
    longer[FAB_HANDLE_BYTES] = 0;
    fab_handle_t out;
    memset(&out, 0xa5, sizeof(out));
    const size_t lengths[] = {0, 1, 63, 65};
    for (size_t i = 0; i < sizeof(lengths) / sizeof(lengths[0]); i++)
        assert_int_equal(fab_handle_from_bytes(longer, lengths[i], &out), FAB_ERROR_INVALID_VALUE);
    for (size_t i = 0; i < sizeof(out.bytes); i++)
        assert_int_equal(out.bytes[i], 0xa5);
}

static void importer_refuses_a_handle_altered_in_memory(void **state)
{
    (void)state;
    /* A fab_handle_t need not come from fab_handle_from_bytes; import checks
     * the bytes again. */
    fab_handle_t h = exported(FAB_ACCESS_READ_WRITE, 4096);
    h.bytes[24] ^= 0x01;
    fab_importer_t *importer = NULL;
    assert_int_equal(fab_importer_create(0, &importer), FAB_SUCCESS);
    fab_import_t import;
    memset(&import, 0xa5, sizeof(import));
    assert_int_equal(fab_importer_import(importer, &h, &import), FAB_ERROR_INVALID_HANDLE);
    const uint8_t *raw = (const uint8_t *)&import;
    for (size_t i = 0; i < sizeof(import); i++)
        assert_int_equal(raw[i], 0xa5);
    fab_importer_destroy(importer);
}

static void handle_accessors_read_null_as_zero(void **state)
{
    (void)state;
    fab_uuid_t zero = {{0}};
    fab_uuid_t uuid = fab_handle_uuid(NULL);
    assert_true(fab_uuid_equal(&uuid, &zero));
    assert_int_equal(fab_handle_size(NULL), 0);
    assert_int_equal(fab_handle_access(NULL), FAB_ACCESS_NONE);
    assert_int_equal(fab_handle_version(NULL), 0);
    assert_int_equal(fab_handle_origin(NULL), FAB_HANDLE_ORIGIN_MODEL);
    assert_int_equal(fab_handle_domain(NULL), 0);
    assert_false(fab_uuid_equal(NULL, &zero));
    assert_false(fab_uuid_equal(&zero, NULL));
}

static void encode_mints_what_from_bytes_accepts_and_refuses_what_it_cannot(void **state)
{
    (void)state;
    fab_uuid_t uuid = {{9, 8, 7, 6, 5, 4, 3, 2, 1, 0, 1, 2, 3, 4, 5, 6}};
    uint8_t tag[FAB_HANDLE_TAG_BYTES] = {0xab, 0xcd};
    fab_handle_t handle, back;
    assert_int_equal(fab_handle_encode(uuid, 4096, FAB_ACCESS_READ_ONLY, FAB_HANDLE_ORIGIN_FABRIC,
                                       0x1122334455667788ull, tag, &handle), FAB_SUCCESS);
    assert_int_equal(fab_handle_from_bytes(handle.bytes, FAB_HANDLE_BYTES, &back), FAB_SUCCESS);
    fab_uuid_t got = fab_handle_uuid(&back);
    assert_true(fab_uuid_equal(&got, &uuid));
    assert_int_equal(fab_handle_size(&back), 4096);
    assert_int_equal(fab_handle_access(&back), FAB_ACCESS_READ_ONLY);
    assert_int_equal(fab_handle_domain(&back), 0x1122334455667788ull);
    assert_memory_equal(back.bytes + FAB_HANDLE_TAG_OFFSET, tag, FAB_HANDLE_TAG_BYTES);
    fab_handle_t untouched = handle;
    assert_int_equal(fab_handle_encode(uuid, 4096, FAB_ACCESS_READ_ONLY, FAB_HANDLE_ORIGIN_MODEL, 1,
                                       NULL, &handle), FAB_ERROR_INVALID_VALUE);
    assert_int_equal(fab_handle_encode(uuid, 4096, FAB_ACCESS_READ_ONLY, FAB_HANDLE_ORIGIN_MODEL, 0,
                                       tag, &handle), FAB_ERROR_INVALID_VALUE);
    assert_int_equal(fab_handle_encode(uuid, 4096, (fab_access_t)3, FAB_HANDLE_ORIGIN_FABRIC, 0,
                                       NULL, &handle), FAB_ERROR_INVALID_VALUE);
    assert_int_equal(fab_handle_encode(uuid, 4096, FAB_ACCESS_READ_ONLY, (fab_handle_origin_t)2, 0,
                                       NULL, &handle), FAB_ERROR_INVALID_VALUE);
    assert_int_equal(fab_handle_encode(uuid, 4096, FAB_ACCESS_READ_ONLY, FAB_HANDLE_ORIGIN_FABRIC, 0,
                                       NULL, NULL), FAB_ERROR_INVALID_VALUE);
    assert_memory_equal(handle.bytes, untouched.bytes, FAB_HANDLE_BYTES); /* untouched on error */
}

static const struct CMUnitTest tests[] = {
    cmocka_unit_test(handle_layout_matches_the_seed),
    cmocka_unit_test(encode_mints_what_from_bytes_accepts_and_refuses_what_it_cannot),
    cmocka_unit_test(handle_access_byte_follows_the_grant),
    cmocka_unit_test(handle_tail_carries_version_and_crc),
    cmocka_unit_test(from_bytes_refuses_every_single_byte_change),
    cmocka_unit_test(from_bytes_accepts_the_untouched_handle),
    cmocka_unit_test(crc_is_zlibs_for_many_handles),
    cmocka_unit_test(a_handle_just_found_intact_is_refused_once_altered),
    cmocka_unit_test(a_handle_just_exported_is_refused_once_altered),
    cmocka_unit_test(from_bytes_refuses_unknown_version_even_with_valid_crc),
    cmocka_unit_test(from_bytes_refuses_unknown_access_even_with_valid_crc),
    cmocka_unit_test(from_bytes_refuses_unknown_origin_even_with_valid_crc),
    cmocka_unit_test(from_bytes_refuses_nonzero_reserved_byte),
    cmocka_unit_test(from_bytes_refuses_model_handle_with_domain_or_tag),
    cmocka_unit_test(from_bytes_accepts_fabric_origin_for_the_daemon_to_judge),
    cmocka_unit_test(from_bytes_refuses_truncated_and_padded_blob),
    cmocka_unit_test(from_bytes_wrong_length_is_invalid_value),
    cmocka_unit_test(importer_refuses_a_handle_altered_in_memory),
    cmocka_unit_test(handle_accessors_read_null_as_zero),
};
FAB_TEST_MAIN_NO_HELPERS("handle", tests)
