/* Logging for the client library and the daemon (see log.h). The level is the
 * one process-wide value fabmem keeps: it is read from the environment once,
 * under pthread_once, and is only ever read afterwards. */
#include "src/common/log.h"
#include "src/base/env.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static pthread_once_t fab__log_once = PTHREAD_ONCE_INIT;
static int fab__log_level = FAB__LOG_WARN;
static int fab__log_forced = -1;

int fab__log_level_parse(const char *text)
{
    static const char *const names[] = {"error", "warn", "info", "debug"};
    if (text == NULL)
        return -1;
    for (int i = 0; i < 4; i++) {
        if (strcmp(text, names[i]) == 0)
            return i;
    }
    return -1;
}

static void fab__log_init(void)
{
    int level = fab__log_level_parse(getenv(FAB__ENV_LOG));
    if (level >= 0)
        fab__log_level = level;
}

void fab__log_set_level(fab__log_level_t level)
{
    fab__log_forced = (int)level;
}

int fab__log_enabled(fab__log_level_t level)
{
    pthread_once(&fab__log_once, fab__log_init);
    int current = fab__log_forced >= 0 ? fab__log_forced : fab__log_level;
    return (int)level <= current;
}

__attribute__((format(printf, 3, 0)))
static void fab__log_v(fab__log_level_t level, const char *suffix, const char *fmt, va_list ap)
{
    static const char *const tags[] = {"error", "warn", "info", "debug"};
    /* One write per message so lines of concurrent processes do not interleave. */
    char line[1024];
    int n = snprintf(line, sizeof(line), "fabmem[%ld] %s: ", (long)getpid(), tags[level]);
    if (n > 0 && (size_t)n < sizeof(line))
        n += vsnprintf(line + n, sizeof(line) - (size_t)n, fmt, ap);
    if (n > 0 && (size_t)n < sizeof(line) && suffix[0] != '\0')
        n += snprintf(line + n, sizeof(line) - (size_t)n, "%s", suffix);
    if (n < 0)
        return;
    if ((size_t)n >= sizeof(line) - 1)
        n = (int)sizeof(line) - 2;
    line[n++] = '\n';
    ssize_t w = write(STDERR_FILENO, line, (size_t)n);
    (void)w;
}

void fab__log(fab__log_level_t level, const char *fmt, ...)
{
    if (!fab__log_enabled(level))
        return;
    va_list ap;
    va_start(ap, fmt);
    fab__log_v(level, "", fmt, ap);
    va_end(ap);
}

void fab__log_rate_v(fab__log_limit_t *limit, unsigned per_second, fab__log_level_t level,
                     const char *fmt, va_list ap)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    long long now = (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
    if (limit->last_ms == 0 || now - limit->last_ms >= 1000) {
        limit->last_ms = now;
        limit->printed = 0;
    }
    if (limit->printed >= per_second) {
        limit->suppressed++;
        return;
    }
    char suffix[64] = "";
    if (limit->suppressed != 0)
        snprintf(suffix, sizeof(suffix), " (and %lu more like it in the last second)",
                 limit->suppressed);
    limit->printed++;
    limit->suppressed = 0;
    fab__log_v(level, suffix, fmt, ap);
}

void fab__log_limited(fab__log_limit_t *limit, fab__log_level_t level, const char *fmt, ...)
{
    if (!fab__log_enabled(level))
        return;
    va_list ap;
    va_start(ap, fmt);
    fab__log_rate_v(limit, 1, level, fmt, ap);
    va_end(ap);
}

void fab__log_rate(fab__log_limit_t *limit, unsigned per_second, fab__log_level_t level,
                   const char *fmt, ...)
{
    if (!fab__log_enabled(level))
        return;
    va_list ap;
    va_start(ap, fmt);
    fab__log_rate_v(limit, per_second, level, fmt, ap);
    va_end(ap);
}

void fab__uuid_hex(const fab_uuid_t *uuid, char out[33])
{
    static const char digits[] = "0123456789abcdef";
    for (int i = 0; i < 16; i++) {
        out[2 * i] = digits[uuid->bytes[i] >> 4];
        out[2 * i + 1] = digits[uuid->bytes[i] & 15];
    }
    out[32] = '\0';
}
