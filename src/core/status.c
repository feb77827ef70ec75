/* Names and messages of fab_status_t, generated from FAB_STATUS_MAP so that the
 * three can never drift apart. */
#include "fabmem/status.h"

const char *fab_status_name(fab_status_t status)
{
    switch (status) {
#define FAB__STATUS_NAME(name, value, text) \
    case FAB_##name:                        \
        return "FAB_" #name;
        FAB_STATUS_MAP(FAB__STATUS_NAME)
#undef FAB__STATUS_NAME
    }
    return "FAB_ERROR_UNRECOGNIZED";
}

const char *fab_status_string(fab_status_t status)
{
    switch (status) {
#define FAB__STATUS_TEXT(name, value, text) \
    case FAB_##name:                        \
        return text;
        FAB_STATUS_MAP(FAB__STATUS_TEXT)
#undef FAB__STATUS_TEXT
    }
    return "unrecognized status code";
}
