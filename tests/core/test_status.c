/* fab_status_t: numbers, names and messages come from one table. */
#include "fabtest.h"

#include <string.h>

#include "fabmem.h"

static void status_codes_have_cuda_numbers(void **state)
{
    (void)state;
    assert_int_equal(FAB_SUCCESS, 0);
    assert_int_equal(FAB_ERROR_INVALID_VALUE, 1);
    assert_int_equal(FAB_ERROR_OUT_OF_MEMORY, 2);
    assert_int_equal(FAB_ERROR_NOT_INITIALIZED, 3);
    assert_int_equal(FAB_ERROR_DEINITIALIZED, 4);
    assert_int_equal(FAB_ERROR_NO_DEVICE, 100);
    assert_int_equal(FAB_ERROR_INVALID_DEVICE, 101);
    assert_int_equal(FAB_ERROR_INVALID_CONTEXT, 201);
    assert_int_equal(FAB_ERROR_INVALID_HANDLE, 400);
    assert_int_equal(FAB_ERROR_ILLEGAL_STATE, 401);
    assert_int_equal(FAB_ERROR_NOT_FOUND, 500);
    assert_int_equal(FAB_ERROR_ILLEGAL_ADDRESS, 700);
    assert_int_equal(FAB_ERROR_NOT_PERMITTED, 800);
    assert_int_equal(FAB_ERROR_NOT_SUPPORTED, 801);
    assert_int_equal(FAB_ERROR_SYSTEM_NOT_READY, 802);
    assert_int_equal(FAB_ERROR_UNKNOWN, 999);
}

static void status_name_is_the_enumerator(void **state)
{
    (void)state;
    assert_string_equal(fab_status_name(FAB_SUCCESS), "FAB_SUCCESS");
    assert_string_equal(fab_status_name(FAB_ERROR_INVALID_HANDLE), "FAB_ERROR_INVALID_HANDLE");
    assert_string_equal(fab_status_name(FAB_ERROR_NOT_PERMITTED), "FAB_ERROR_NOT_PERMITTED");
}

static void status_string_is_cudas_message(void **state)
{
    (void)state;
    assert_string_equal(fab_status_string(FAB_ERROR_INVALID_VALUE), "invalid argument");
    assert_string_equal(fab_status_string(FAB_ERROR_INVALID_HANDLE), "invalid resource handle");
    assert_string_equal(fab_status_string(FAB_ERROR_ILLEGAL_STATE),
                        "the operation cannot be performed in the present state");
    assert_string_equal(fab_status_string(FAB_ERROR_NOT_PERMITTED), "operation not permitted");
    assert_string_equal(fab_status_string(FAB_ERROR_NOT_SUPPORTED), "operation not supported");
}

static void status_unrecognized_value_is_never_null(void **state)
{
    (void)state;
    const int odd[] = {-1, 5, 99, 402, 1000, 0x7fffffff};
    for (size_t i = 0; i < sizeof(odd) / sizeof(odd[0]); i++) {
        const char *name = fab_status_name((fab_status_t)odd[i]);
        const char *text = fab_status_string((fab_status_t)odd[i]);
        assert_non_null(name);
        assert_non_null(text);
        assert_string_equal(name, "FAB_ERROR_UNRECOGNIZED");
        assert_string_equal(text, "unrecognized status code");
    }
}

static void status_every_code_has_distinct_name_and_text(void **state)
{
    (void)state;
    const fab_status_t all[] = {
#define XX(name, value, text) FAB_##name,
        FAB_STATUS_MAP(XX)
#undef XX
    };
    size_t n = sizeof(all) / sizeof(all[0]);
    for (size_t i = 0; i < n; i++) {
        assert_string_not_equal(fab_status_name(all[i]), "FAB_ERROR_UNRECOGNIZED");
        assert_true(strlen(fab_status_string(all[i])) > 0);
        for (size_t j = i + 1; j < n; j++) {
            assert_string_not_equal(fab_status_name(all[i]), fab_status_name(all[j]));
            assert_string_not_equal(fab_status_string(all[i]), fab_status_string(all[j]));
        }
    }
}

static const struct CMUnitTest tests[] = {
    cmocka_unit_test(status_codes_have_cuda_numbers),
    cmocka_unit_test(status_name_is_the_enumerator),
    cmocka_unit_test(status_string_is_cudas_message),
    cmocka_unit_test(status_unrecognized_value_is_never_null),
    cmocka_unit_test(status_every_code_has_distinct_name_and_text),
};
FAB_TEST_MAIN_NO_HELPERS("status", tests)
