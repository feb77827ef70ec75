/* fab__log: the one way fabmem's client library and daemon report what they
 * do. The level comes from FABMEM_LOG (error, warn, info, debug; default warn),
 * read once per process; messages go to stderr with a "fabmem[pid]" prefix. */
#ifndef FABMEM_COMMON_LOG_H
#define FABMEM_COMMON_LOG_H

#include <stdarg.h>

#include "fabmem/handle.h"

typedef enum fab__log_level {
    FAB__LOG_ERROR = 0,
    FAB__LOG_WARN = 1,
    FAB__LOG_INFO = 2,
    FAB__LOG_DEBUG = 3,
} fab__log_level_t;

/* True when messages of this level are printed. */
int fab__log_enabled(fab__log_level_t level);

/* Override the level from FABMEM_LOG (the daemon's --log option). */
void fab__log_set_level(fab__log_level_t level);

/* Parse "error" / "warn" / "info" / "debug"; -1 if the text is none of them. */
int fab__log_level_parse(const char *text);

#if defined(__GNUC__) || defined(__clang__)
__attribute__((format(printf, 2, 3)))
#endif
void fab__log(fab__log_level_t level, const char *fmt, ...);

/* A message that a peer can trigger at will (a flood, a limit hit) is
 * printed at most once a second per limiter; the next one printed says how
 * many were held back. A limiter starts zeroed. */
typedef struct fab__log_limit {
    long long last_ms; /* when the current one-second window began */
    unsigned printed;  /* lines printed in it */
    unsigned long suppressed;
} fab__log_limit_t;

#if defined(__GNUC__) || defined(__clang__)
__attribute__((format(printf, 3, 4)))
#endif
void fab__log_limited(fab__log_limit_t *limit, fab__log_level_t level, const char *fmt, ...);

/* The same with up to per_second lines a second (the daemon's per-uid
 * limiter: one user's lines, whatever they say, share one budget). */
#if defined(__GNUC__) || defined(__clang__)
__attribute__((format(printf, 4, 5)))
#endif
void fab__log_rate(fab__log_limit_t *limit, unsigned per_second, fab__log_level_t level,
                   const char *fmt, ...);
#if defined(__GNUC__) || defined(__clang__)
__attribute__((format(printf, 4, 0)))
#endif
void fab__log_rate_v(fab__log_limit_t *limit, unsigned per_second, fab__log_level_t level,
                     const char *fmt, va_list ap);

/* A uuid as 32 lowercase hex digits, the form every message prints. */
void fab__uuid_hex(const fab_uuid_t *uuid, char out[33]);

#endif /* FABMEM_COMMON_LOG_H */
