/* fab_status_t: every outcome a fabmem call can report, numbered exactly as the
 * CUDA driver's CUresult so that the driver emulation passes codes through
 * unchanged. The codes, their names and their messages live in one table,
 * FAB_STATUS_MAP, so that no code can lack a name or a message.
 *
 * Thread safety: every function here is pure and safe from any thread. */
#ifndef FABMEM_STATUS_H
#define FABMEM_STATUS_H

#include "fabmem/common.h"

FAB_EXTERN_C_BEGIN

/* XX(enumerator suffix, CUDA number, CUDA's cuGetErrorString text) */
#define FAB_STATUS_MAP(XX)                                                          \
    XX(SUCCESS, 0, "no error")                                                      \
    XX(ERROR_INVALID_VALUE, 1, "invalid argument")                                  \
    XX(ERROR_OUT_OF_MEMORY, 2, "out of memory")                                     \
    XX(ERROR_NOT_INITIALIZED, 3, "initialization error")                            \
    XX(ERROR_DEINITIALIZED, 4, "driver shutting down")                              \
    XX(ERROR_NO_DEVICE, 100, "no CUDA-capable device is detected")                  \
    XX(ERROR_INVALID_DEVICE, 101, "invalid device ordinal")                         \
    XX(ERROR_INVALID_CONTEXT, 201, "invalid device context")                        \
    XX(ERROR_INVALID_HANDLE, 400, "invalid resource handle")                        \
    XX(ERROR_ILLEGAL_STATE, 401, "the operation cannot be performed in the present state") \
    XX(ERROR_NOT_FOUND, 500, "named symbol not found")                              \
    XX(ERROR_ILLEGAL_ADDRESS, 700, "an illegal memory access was encountered")      \
    XX(ERROR_NOT_PERMITTED, 800, "operation not permitted")                         \
    XX(ERROR_NOT_SUPPORTED, 801, "operation not supported")                         \
    XX(ERROR_SYSTEM_NOT_READY, 802, "system not yet initialized")                   \
    XX(ERROR_UNKNOWN, 999, "unknown error")

typedef enum fab_status {
#define FAB__STATUS_ENUM(name, value, text) FAB_##name = value,
    FAB_STATUS_MAP(FAB__STATUS_ENUM)
#undef FAB__STATUS_ENUM
} fab_status_t;

/* The enumerator's name ("FAB_ERROR_INVALID_HANDLE"). A value that is not a
 * code gives "FAB_ERROR_UNRECOGNIZED". Static storage, never NULL. */
FAB_API const char *fab_status_name(fab_status_t status);

/* CUDA's message for the code ("invalid resource handle"). A value that is not a
 * code gives "unrecognized status code". Static storage, never NULL. */
FAB_API const char *fab_status_string(fab_status_t status);

FAB_EXTERN_C_END

#endif /* FABMEM_STATUS_H */
