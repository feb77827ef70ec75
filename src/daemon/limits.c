/* Each uid's record and what bounds it: the user a connection is charged
 * to, made at its first connection and forgotten when it holds nothing and
 * never logged; the [daemon] limits on what one uid may hold (allocations,
 * bytes; connections, references and IPC entries are checked where they
 * are made) and on the fds sent to it not read yet; and the budgets of the
 * log lines its peers trigger (see struct fab__user in registry_impl.h). */
#include "src/daemon/registry_impl.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "src/base/hot.h"
#include "src/common/log.h"
#include "src/common/topology_impl.h"

#define FAB__USER_LOG_WARN_PER_SECOND 5
#define FAB__USER_LOG_INFO_PER_SECOND 100

/* The limiter of user's lines of format fmt (by address: each call site's
 * literal), made at its first line. */
static fab__log_limit_t *fab__user_log_kind(fab__user_t *user, const char *fmt)
{
    for (size_t i = 0; i < user->nlog_kinds; i++) {
        if (user->log_kinds[i].fmt == fmt)
            return &user->log_kinds[i].limit;
    }
    if (user->nlog_kinds == user->log_kinds_cap) {
        size_t cap = user->log_kinds_cap ? 2 * user->log_kinds_cap : 16;
        fab__log_kind_t *kinds = realloc(user->log_kinds, cap * sizeof(*kinds));
        if (kinds == NULL)
            return &user->log_spill;
        user->log_kinds = kinds;
        user->log_kinds_cap = cap;
    }
    fab__log_kind_t *kind = &user->log_kinds[user->nlog_kinds++];
    kind->fmt = fmt;
    memset(&kind->limit, 0, sizeof(kind->limit));
    return &kind->limit;
}

/* One line a peer of user triggered, under the uid's budget for its kind. */
#if defined(__GNUC__) || defined(__clang__)
__attribute__((format(printf, 3, 0)))
#endif
static void fab__user_vlog(fab__user_t *user, fab__log_level_t level, const char *fmt, va_list ap)
{
    if (!fab__log_enabled(level))
        return;
    user->logged = true;
    fab__log_limit_t *limit = fab__user_log_kind(user, fmt);
    fab__log_rate_v(limit, level <= FAB__LOG_WARN ? FAB__USER_LOG_WARN_PER_SECOND
                                                  : FAB__USER_LOG_INFO_PER_SECOND,
                    level, fmt, ap);
}

#if defined(__GNUC__) || defined(__clang__)
__attribute__((format(printf, 3, 4)))
#endif
void fab__user_log(fab__user_t *user, fab__log_level_t level, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fab__user_vlog(user, level, fmt, ap);
    va_end(ap);
}

/* ---- users ------------------------------------------------------------------ */

void fab__user_free(fab__user_t *user)
{
    free(user->log_kinds);
    free(user);
}

fab__user_t *fab__user_get(fab__registry_t *daemon, uid_t uid)
{
    uint64_t key = (uint64_t)uid + 1;
    fab__user_t *user = fab__map_get(&daemon->users, key);
    if (user != NULL)
        return user;
    user = calloc(1, sizeof(*user));
    if (user == NULL)
        return NULL;
    user->uid = uid;
    if (fab__map_put(&daemon->users, key, user) != 0) {
        free(user);
        return NULL;
    }
    return user;
}

/* Forget a user that holds nothing any more. */
void fab__user_put(fab__registry_t *daemon, fab__user_t *user)
{
    if (user->connections != 0 || user->allocations != 0 || user->references != 0 ||
        user->logged)
        return;
    fab__map_remove(&daemon->users, (uint64_t)user->uid + 1);
    fab__user_free(user);
}

FAB__HOT
uint64_t *fab__registry_conn_fds_in_flight(fab__conn_t *conn)
{
    return &conn->user->fds_in_flight;
}

FAB__HOT
uint64_t fab__registry_fds_in_flight_limit(const fab__registry_t *daemon)
{
    return daemon->topology->limits.fds_in_flight;
}

void fab__registry_conn_log(fab__conn_t *conn, fab__log_level_t level, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fab__user_vlog(conn->user, level, fmt, ap);
    va_end(ap);
}

/* Whether user may hold one more live allocation of size bytes; says why
 * not in the log. */
bool fab__user_may_allocate(fab__registry_t *daemon, fab__user_t *user, uint64_t size)
{
    const fab__limits_t *limits = &daemon->topology->limits;
    if (limits->allocations != 0 && user->allocations >= limits->allocations) {
        fab__user_log_refusal(user,
                         "uid %lu refused an allocation: it holds %llu, "
                         "max_allocations_per_uid is %llu", (unsigned long)user->uid,
                         (unsigned long long)user->allocations,
                         (unsigned long long)limits->allocations);
        return false;
    }
    if (limits->bytes != 0 && size > limits->bytes - user->bytes) {
        fab__user_log_refusal(user,
                         "uid %lu refused %llu bytes: it holds %llu, max_bytes_per_uid is %llu",
                         (unsigned long)user->uid, (unsigned long long)size,
                         (unsigned long long)user->bytes, (unsigned long long)limits->bytes);
        return false;
    }
    return true;
}
