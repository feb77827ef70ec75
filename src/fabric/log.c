/* Logging for the client library and the daemon (see log.h). The level is the
 * one process-wide value fabmem keeps: it is read from the environment once,
 * under pthread_once, and is only ever read afterwards. */
#include "src/fabric/log.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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
    int level = fab__log_level_parse(getenv("FABMEM_LOG"));
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

void fab__log(fab__log_level_t level, const char *fmt, ...)
{
    static const char *const tags[] = {"error", "warn", "info", "debug"};
    if (!fab__log_enabled(level))
        return;
    /* One write per message so lines of concurrent processes do not interleave. */
    char line[1024];
    int n = snprintf(line, sizeof(line), "fabmem[%ld] %s: ", (long)getpid(), tags[level]);
    va_list ap;
    va_start(ap, fmt);
    if (n > 0 && (size_t)n < sizeof(line))
        n += vsnprintf(line + n, sizeof(line) - (size_t)n, fmt, ap);
    va_end(ap);
    if (n < 0)
        return;
    if ((size_t)n >= sizeof(line) - 1)
        n = (int)sizeof(line) - 2;
    line[n++] = '\n';
    ssize_t w = write(STDERR_FILENO, line, (size_t)n);
    (void)w;
}
