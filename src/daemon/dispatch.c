/* One request to one reply: the checks every request passes first (HELLO
 * first, the releases it carries), each type handed to its handler, the
 * fds the reply carries; and a reply undone when it could not be sent. */
#include "src/daemon/registry_impl.h"

#include <stddef.h>
#include <string.h>
#include <unistd.h>

#include "src/base/hot.h"
#include "src/common/log.h"
#include "src/daemon/fieldfaults.h"
#include "src/daemon/teams.h"

static void fab__ref_drop_id(fab__registry_t *daemon, fab__conn_t *conn, uint64_t id)
{
    fab__ref_t *ref = fab__ref_get(conn, id);
    if (ref != NULL)
        fab__ref_drop(daemon, ref);
}

void fab__registry_undo(fab__registry_t *daemon, fab__conn_t *conn, const fab__reply_t *reply)
{
    if (reply->status != FAB_SUCCESS)
        return;
    if (reply->type == FAB__MSG_ALLOC)
        fab__ref_drop_id(daemon, conn, reply->u.alloc.memory.region);
    else if (reply->type == FAB__MSG_IMPORT)
        fab__ref_drop_id(daemon, conn, reply->u.import.region);
    else if (reply->type == FAB__MSG_MC_JOIN) {
        /* Its memfds never reached the member: it leaves again. */
        fab__request_t leave = {.type = FAB__MSG_MC_LEAVE};
        fab__reply_t ignored;
        fab__reply_fds_t none = {0};
        int no_fd = -1;
        leave.u.mc.id = reply->u.mc.id;
        (void)fab__mcs_answer(daemon->mcs, conn, &leave, &no_fd, -1, &ignored, &none);
    }
    else if (reply->type == FAB__MSG_IMPORT_MANY) {
        for (unsigned i = 0; i < reply->u.import_many.count; i++) {
            if (reply->u.import_many.entries[i].status == FAB_SUCCESS)
                fab__ref_drop_id(daemon, conn, reply->u.import_many.entries[i].memory.region);
        }
    }
}

FAB__HOT
void fab__reply_fds_release(fab__reply_fds_t *fds)
{
    for (unsigned i = 0; i < fds->count; i++) {
        if (fds->owned & (1u << i))
            close(fds->fd[i]);
    }
    fds->count = 0;
    fds->owned = 0;
}

/* The released ids a request carries: each dropped as a RELEASE would
 * drop it, before the request itself is answered, with no reply. One the
 * connection does not hold is logged and changes nothing. */
FAB__HOT
static void fab__releases_apply(fab__registry_t *daemon, fab__conn_t *conn,
                                const fab__request_t *request)
{
    for (unsigned i = 0; i < request->nreleases; i++) {
        fab__reply_t ignored;
        if (fab__release_id(daemon, conn, request->releases[i], &ignored) != FAB_SUCCESS)
            fab__user_log(conn->user, FAB__LOG_WARN,
                             "pid %ld released region %llu, which it does not hold",
                             (long)conn->pid, (unsigned long long)request->releases[i]);
    }
}

/* The bytes of a reply that every type but TOPOLOGY uses. A new reply type
 * adds its member to this list (or clears what it leaves unset). */
static size_t fab__reply_small_size(void)
{
    /* One constant expression, folded at compile time (a loop over an
     * array of the sizes was run on every reply). */
#define FAB__MAX_(a, b) ((a) > (b) ? (a) : (b))
#define FAB__MEMBER_(m) sizeof(((const fab__reply_t *)0)->u.m)
    enum {
        most = FAB__MAX_(
            FAB__MAX_(FAB__MAX_(FAB__MAX_(FAB__MEMBER_(hello), FAB__MEMBER_(alloc)),
                                FAB__MAX_(FAB__MEMBER_(exported), FAB__MEMBER_(import))),
                      FAB__MAX_(FAB__MAX_(FAB__MEMBER_(release), FAB__MEMBER_(stats)),
                                FAB__MAX_(FAB__MEMBER_(verify), FAB__MEMBER_(ipc_publish)))),
            FAB__MAX_(FAB__MEMBER_(ipc_open), FAB__MEMBER_(mc)))
    };
#undef FAB__MEMBER_
#undef FAB__MAX_
    return offsetof(fab__reply_t, u) + most;
}

/* Clear what the reply to request uses, and fill its header. */
FAB__HOT
static void fab__reply_start(const fab__request_t *request, fab__reply_t *reply,
                             fab__reply_fds_t *fds)
{
    /* A TOPOLOGY reply carries a whole node record, an IMPORT_MANY reply up
     * to sixteen entries; the others fit in the first bytes of the union,
     * and clearing only those keeps a 1.5 KB memset off every import. An
     * IMPORT, the most common, clears its own member alone, not the
     * largest member's bytes. */
    if (request->type == FAB__MSG_IMPORT)
        memset(reply, 0, offsetof(fab__reply_t, u) + sizeof(reply->u.import));
    else if (request->type == FAB__MSG_TOPOLOGY)
        memset(reply, 0, sizeof(*reply));
    else if (request->type == FAB__MSG_IMPORT_MANY)
        memset(reply, 0, offsetof(fab__reply_t, u) + sizeof(reply->u.import_many));
    else
        memset(reply, 0, fab__reply_small_size());
    reply->type = request->type;
    reply->seq = request->seq;
    fds->count = 0;
    fds->owned = 0;
}

void fab__registry_answer_expired(fab__registry_t *daemon, fab__conn_t *conn,
                                  const fab__request_t *request, fab__reply_t *reply,
                                  fab__reply_fds_t *fds_out)
{
    fab__reply_start(request, reply, fds_out);
    if (request->type == FAB__MSG_IMPORT_MANY && conn->node >= 0)
        reply->status = (uint32_t)fab__reg_import_many(daemon, conn, request, reply, fds_out,
                                                       true);
    else
        reply->status = FAB__FAULT_HUNG_STATUS;
}

/* ---- each type to its handler ------------------------------------------------- */

/* What a handler is given: the request, its fd (the handler's to take:
 * it sets fd_in to -1; one left is closed after it), and where its answer
 * goes (the reply, and at most one fd in fd_out, owned or lent). */
typedef struct {
    fab__registry_t *daemon;
    fab__conn_t *conn;
    const fab__request_t *request;
    fab__reply_t *reply;
    fab__reply_fds_t *fds_out;
    int fd_in;
    int fd_out;
    int fd_owned;
} fab__call_t;

static fab_status_t fab__answer_HELLO(fab__call_t *c)
{
    return fab__reg_hello(c->daemon, c->conn, c->request, c->reply);
}

static fab_status_t fab__answer_ALLOC(fab__call_t *c)
{
    return fab__reg_alloc(c->daemon, c->conn, c->request, c->reply, &c->fd_out);
}

static fab_status_t fab__answer_EXPORT(fab__call_t *c)
{
    return fab__reg_export(c->daemon, c->conn, c->request, c->reply);
}

FAB__HOT
static fab_status_t fab__answer_IMPORT(fab__call_t *c)
{
    return fab__reg_import(c->daemon, c->conn, c->request, c->reply, c->fds_out);
}

static fab_status_t fab__answer_IMPORT_MANY(fab__call_t *c)
{
    return fab__reg_import_many(c->daemon, c->conn, c->request, c->reply, c->fds_out, false);
}

static fab_status_t fab__answer_RELEASE(fab__call_t *c)
{
    return fab__reg_release(c->daemon, c->conn, c->request, c->reply);
}

static fab_status_t fab__answer_STATS(fab__call_t *c)
{
    fab__reg_stats(c->daemon, c->conn, c->reply);
    return FAB_SUCCESS;
}

static fab_status_t fab__answer_VERIFY(fab__call_t *c)
{
    return fab__reg_verify(c->daemon, c->conn, c->request, c->reply);
}

static fab_status_t fab__answer_ADOPT(fab__call_t *c)
{
    return fab__reg_adopt(c->daemon, c->conn, c->request, &c->fd_in, c->reply);
}

static fab_status_t fab__answer_TOPOLOGY(fab__call_t *c)
{
    return fab__reg_topology(c->daemon, c->request, c->reply);
}

static fab_status_t fab__answer_IPC_PUBLISH(fab__call_t *c)
{
    return fab__reg_ipc_publish(c->daemon, c->conn, c->request, &c->fd_in, c->reply);
}

static fab_status_t fab__answer_IPC_OPEN(fab__call_t *c)
{
    return fab__reg_ipc_open(c->daemon, c->conn, c->request, c->reply, &c->fd_out,
                             &c->fd_owned);
}

static fab_status_t fab__answer_IPC_WITHDRAW(fab__call_t *c)
{
    return fab__reg_ipc_withdraw(c->daemon, c->conn, c->request);
}

static fab_status_t fab__answer_FAULT(fab__call_t *c)
{
    /* The fabric is the owner's to break: nobody else's job may be made to
     * fail by another user. */
    if (c->conn->uid != c->daemon->uid)
        return FAB_ERROR_NOT_PERMITTED;
    return fab__faults_apply(c->daemon->faults, c->request);
}

/* Every MC_* message: the teams (teams.c) answer it, and fill the reply's fds. */
static fab_status_t fab__answer_mc(fab__call_t *c)
{
    /* MC_CREATE names its token by the sender's reference: one it
     * allocated, that nobody else holds, live. */
    int token_fd = -1;
    fab__alloc_t *token = NULL;
    if (c->request->type == FAB__MSG_MC_CREATE) {
        fab__ref_t *ref = fab__ref_get(c->conn, c->request->u.mc.id);
        if (ref != NULL && ref->creator && !ref->parked && ref->alloc->refs == 1 &&
            fab__alloc_live(ref->alloc)) {
            token = ref->alloc;
            token_fd = token->fd;
        }
    }
    fab_status_t status = fab__mcs_answer(c->daemon->mcs, c->conn, c->request, &c->fd_in,
                                          token_fd, c->reply, c->fds_out);
    if (token != NULL && status == FAB_SUCCESS)
        token->mc_token = true; /* its imports say so (FAB__MEMORY_MC_TOKEN) */
    return status;
}
#define fab__answer_MC_CREATE fab__answer_mc
#define fab__answer_MC_JOIN fab__answer_mc
#define fab__answer_MC_ADD fab__answer_mc
#define fab__answer_MC_BIND fab__answer_mc
#define fab__answer_MC_UNBIND fab__answer_mc
#define fab__answer_MC_SYNC fab__answer_mc
#define fab__answer_MC_REDUCE fab__answer_mc
#define fab__answer_MC_LEAVE fab__answer_mc

/* The handlers, one a message, made from the one list of messages
 * (FAB__MSG_LIST): a message added there without its fab__answer_<NAME>
 * here does not build. */
#define FAB__ANSWER_ROW_(name, num, body, fds_in, fds_out, rq, rp) \
    [FAB__MSG_##name] = fab__answer_##name,
static fab_status_t (*const fab__answers[FAB__MSG_TYPE_MAX + 1])(fab__call_t *) = {
    FAB__MSG_LIST(FAB__ANSWER_ROW_)};
#undef FAB__ANSWER_ROW_

FAB__HOT
void fab__registry_answer(fab__registry_t *daemon, fab__conn_t *conn, const fab__request_t *request,
                        int fd_in, fab__reply_t *reply, fab__reply_fds_t *fds_out)
{
    fab__reply_start(request, reply, fds_out);
    if (request->type != FAB__MSG_HELLO && conn->node < 0) {
        if (fd_in >= 0)
            close(fd_in);
        reply->status = FAB_ERROR_ILLEGAL_STATE; /* out of order: hello first */
        return;
    }
    fab__releases_apply(daemon, conn, request);
    fab__call_t call = {.daemon = daemon,
                        .conn = conn,
                        .request = request,
                        .reply = reply,
                        .fds_out = fds_out,
                        .fd_in = fd_in,
                        .fd_out = -1,
                        .fd_owned = 0};
    fab_status_t status = FAB_ERROR_INVALID_VALUE;
    if (request->type <= FAB__MSG_TYPE_MAX && fab__answers[request->type] != NULL)
        status = fab__answers[request->type](&call);
    if (call.fd_in >= 0)
        close(call.fd_in); /* a handler that takes none leaves it */
    if (call.fd_out >= 0) {
        fds_out->fd[0] = call.fd_out;
        fds_out->owned = call.fd_owned ? 1u : 0u;
        fds_out->count = 1;
    }
    reply->status = (uint32_t)status;
}
