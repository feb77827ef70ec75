/* Shared declarations for every public fabmem header: the export marker and the
 * C/C++ linkage guards. Nothing here has behaviour of its own. */
#ifndef FABMEM_COMMON_H
#define FABMEM_COMMON_H

#if defined(__GNUC__) || defined(__clang__)
#define FAB_API __attribute__((visibility("default")))
#else
#define FAB_API
#endif

#ifdef __cplusplus
#define FAB_EXTERN_C_BEGIN extern "C" {
#define FAB_EXTERN_C_END }
#else
#define FAB_EXTERN_C_BEGIN
#define FAB_EXTERN_C_END
#endif

#endif /* FABMEM_COMMON_H */
