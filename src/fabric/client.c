/* The client: one connection to fabmemd, and the regions (references to
 * allocations) made through it. One request is in flight per client at a
 * time: a call takes the client's mutex, sends, and waits for the reply, so
 * threads may share a client and its regions.
 *
 * Lifecycle of a region:
 *   allocate / import (daemon adds a reference, memfd arrives) -> map* ->
 *   unmap* -> release; the RELEASE request goes out once the region is both
 *   released and unmapped, and only then is the fd closed.
 *
 * Restart: when the connection breaks, the next call connects again (starting
 * a daemon if allowed), and ADOPTs every live region back (creators' first)
 * with its handle and fd, then retries once; a daemon that restarted with the
 * same state file thus honours the handles that were live.
 *
 * Autostart: with no daemon answering, connect starts one (double fork, so it
 * is no child of ours) with --autostarted, which makes it exit once idle; it
 * says it is listening over a pipe, or closes the pipe when another daemon
 * won the race, after which connecting again finds that one. */
#include "fabmem/fabric.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "src/fabric/log.h"
#include "src/fabric/proto.h"

struct fab_client {
    pthread_mutex_t lock;
    int sock;
    uint32_t seq;
    int node;
    size_t live_regions;
    unsigned deferred; /* RELEASE replies not read yet */
    fab_region_t *regions; /* live regions, for adoption by a restarted daemon */
    int autostart;
    char node_name[256];
    char path[PATH_MAX];
};

/* RELEASE does not wait for its reply: the reply (which may carry the
 * never-imported warning) is read with the next request's, so a release
 * costs one message instead of a round trip. At most this many stay
 * unread, so that neither side's socket buffer can fill. */
#define FAB__DEFERRED_MAX 8

struct fab_region {
    fab_client_t *client;
    uint64_t id;
    int fd;
    size_t size;
    fab_access_t access; /* what this process may map */
    fab_uuid_t uuid;
    int device;
    bool released;
    bool creator;          /* allocated here, not imported */
    uint32_t handle_type;  /* creator: the types it asked for */
    fab_handle_t handle;   /* proof of the uuid, for ADOPT */
    fab_region_t *prev, *next;
    size_t nmaps, capmaps;
    void **maps;
};

/* ---- connecting ------------------------------------------------------------ */

static int fab__connect_once(const char *path)
{
    int sock = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
    if (sock < 0)
        return -1;
    struct sockaddr_un addr = {.sun_family = AF_UNIX};
    size_t len = strlen(path);
    if (len >= sizeof(addr.sun_path)) {
        close(sock);
        errno = ENAMETOOLONG;
        return -1;
    }
    memcpy(addr.sun_path, path, len + 1);
    while (connect(sock, (struct sockaddr *)&addr, sizeof(addr)) != 0) {
        if (errno == EINTR)
            continue;
        int saved = errno;
        close(sock);
        errno = saved;
        return -1;
    }
    return sock;
}

static int fab__is_executable(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode) && access(path, X_OK) == 0;
}

/* Where fabmemd is: $FABMEM_DAEMON, else next to the library that holds this
 * code (lib/ -> ../bin, lib/fabmem/ -> ../../bin), else $PATH. */
static const char fab__anchor = 0; /* an object of this library, for dladdr */

static int fab__daemon_find(char *buf, size_t cap)
{
    const char *env = getenv("FABMEM_DAEMON");
    if (env != NULL && *env != '\0') {
        snprintf(buf, cap, "%s", env);
        return fab__is_executable(buf) ? 0 : -1;
    }
    Dl_info info;
    if (dladdr(&fab__anchor, &info) != 0 && info.dli_fname != NULL) {
        char dir[PATH_MAX];
        snprintf(dir, sizeof(dir), "%s", info.dli_fname);
        char *slash = strrchr(dir, '/');
        if (slash != NULL) {
            *slash = '\0';
            /* Installed (lib/, lib/fabmem/), side by side, then the build
             * tree (libfabmem.so at its top, libcuda.so.1 in lib/fabmem/). */
            static const char *const rel[] = {"/../bin/fabmemd", "/../../bin/fabmemd",
                                              "/fabmemd", "/src/daemon/fabmemd",
                                              "/../../src/daemon/fabmemd"};
            for (size_t i = 0; i < sizeof(rel) / sizeof(rel[0]); i++) {
                if ((size_t)snprintf(buf, cap, "%s%s", dir, rel[i]) < cap && fab__is_executable(buf))
                    return 0;
            }
        }
    }
    const char *path = getenv("PATH");
    if (path == NULL)
        return -1;
    char copy[4096];
    snprintf(copy, sizeof(copy), "%s", path);
    char *save = NULL;
    for (char *dir = strtok_r(copy, ":", &save); dir != NULL; dir = strtok_r(NULL, ":", &save)) {
        if ((size_t)snprintf(buf, cap, "%s/fabmemd", dir) < cap && fab__is_executable(buf))
            return 0;
    }
    return -1;
}

/* Start a daemon for socket path and wait until it listens or gives way. */
static int fab__daemon_start(const char *socket_path)
{
    char exe[PATH_MAX];
    if (fab__daemon_find(exe, sizeof(exe)) != 0) {
        fab__log(FAB__LOG_WARN, "no fabmemd to start (set FABMEM_DAEMON)");
        return -1;
    }
    int pipefd[2];
    if (pipe2(pipefd, O_CLOEXEC) != 0)
        return -1;
    /* Everything the child needs is prepared before fork: after it, only
     * async-signal-safe calls. */
    char fdtext[16], sockenv[PATH_MAX + 16];
    snprintf(fdtext, sizeof(fdtext), "%d", pipefd[1]);
    snprintf(sockenv, sizeof(sockenv), "FABMEM_SOCKET=%s", socket_path);
    char *const argv[] = {exe, "--foreground", "--autostarted", "--ready-fd", fdtext, NULL};
    pid_t pid = fork();
    if (pid < 0) {
        close(pipefd[0]);
        close(pipefd[1]);
        return -1;
    }
    if (pid == 0) {
        setsid();
        if (fork() != 0)
            _exit(0);
        int null = open("/dev/null", O_RDWR);
        if (null >= 0) {
            dup2(null, 0);
            dup2(null, 1);
            dup2(null, 2);
        }
        fcntl(pipefd[1], F_SETFD, 0);
        putenv(sockenv);
        execv(exe, argv);
        _exit(127);
    }
    close(pipefd[1]);
    while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
        ;
    struct pollfd p = {.fd = pipefd[0], .events = POLLIN};
    int ready = poll(&p, 1, 10000) > 0;
    char byte = 0;
    ready = ready && read(pipefd[0], &byte, 1) == 1;
    close(pipefd[0]);
    fab__log(FAB__LOG_INFO, "started %s for %s: %s", exe, socket_path,
             ready ? "ready" : "it gave way or failed");
    return 0;
}

static int fab__connect(const char *path, int autostart)
{
    int sock = fab__connect_once(path);
    if (sock >= 0 || !autostart)
        return sock;
    if (errno != ENOENT && errno != ECONNREFUSED)
        return -1;
    if (fab__socket_dir_make(path) != 0)
        return -1;
    if (fab__daemon_start(path) != 0)
        return -1;
    /* The daemon that won a start race may still be binding: retry briefly. */
    for (int i = 0; i < 500; i++) {
        sock = fab__connect_once(path);
        if (sock >= 0 || (errno != ENOENT && errno != ECONNREFUSED))
            return sock;
        struct timespec ts = {0, 10 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    return -1;
}

static void fab__connection_lost(fab_client_t *client)
{
    fab__log(FAB__LOG_WARN, "lost the connection to fabmemd");
    close(client->sock);
    client->sock = -1;
    client->deferred = 0;
}

static void fab__warn_unimported(const fab__reply_t *reply)
{
    char hex[33];
    for (int i = 0; i < 16; i++)
        snprintf(hex + 2 * i, 3, "%02x", reply->uuid.bytes[i]);
    fab__log(FAB__LOG_WARN,
             "allocation %s released with %u exported handles never imported: "
             "a late import will fail", hex, reply->count);
}

/* Read the replies of releases sent earlier; the caller holds the lock. */
static void fab__drain(fab_client_t *client)
{
    while (client->deferred > 0 && client->sock >= 0) {
        uint8_t buf[FAB__PROTO_MAX];
        ssize_t n = fab__proto_recv(client->sock, buf, NULL, 0);
        fab__reply_t reply;
        if (n <= 0 || fab__reply_decode(buf, (size_t)n, &reply) != FAB_SUCCESS ||
            reply.type != FAB__MSG_RELEASE) {
            fab__connection_lost(client);
            return;
        }
        client->deferred--;
        if (reply.status == FAB_SUCCESS && reply.count != 0)
            fab__warn_unimported(&reply);
    }
}

/* Send a request and wait for its reply; the caller holds client->lock. A
 * broken connection reads as SYSTEM_NOT_READY. fd_out (may be NULL) takes
 * the fd the reply carried. */
static fab_status_t fab__call_raw(fab_client_t *client, fab__request_t *request, int fd_in,
                                  fab__reply_t *reply_out, int *fd_out)
{
    uint8_t buf[FAB__PROTO_MAX];
    if (client->sock < 0)
        return FAB_ERROR_SYSTEM_NOT_READY;
    request->seq = ++client->seq;
    size_t len = fab__request_encode(request, buf);
    if (fab__proto_send(client->sock, buf, len, fd_in) != 0)
        goto broken;
    /* The daemon answers in order: replies to earlier releases come first. */
    for (;;) {
        int fd = -1;
        ssize_t n = fab__proto_recv(client->sock, buf, &fd, 0);
        if (n <= 0)
            goto broken;
        fab__reply_t reply;
        if (fab__reply_decode(buf, (size_t)n, &reply) != FAB_SUCCESS) {
            if (fd >= 0)
                close(fd);
            goto broken;
        }
        if (reply.type == FAB__MSG_RELEASE && client->deferred > 0 && reply.seq != request->seq) {
            if (fd >= 0)
                close(fd);
            client->deferred--;
            if (reply.status == FAB_SUCCESS && reply.count != 0)
                fab__warn_unimported(&reply);
            continue;
        }
        if (reply.seq != request->seq || reply.type != request->type) {
            if (fd >= 0)
                close(fd);
            goto broken;
        }
        if (fd_out != NULL)
            *fd_out = fd;
        else if (fd >= 0)
            close(fd);
        *reply_out = reply;
        return (fab_status_t)reply.status;
    }

broken:
    fab__connection_lost(client);
    return FAB_ERROR_SYSTEM_NOT_READY;
}

static fab_status_t fab__hello(fab_client_t *client)
{
    fab__request_t hello = {.type = FAB__MSG_HELLO};
    hello.u.hello.version = FAB__PROTO_VERSION;
    hello.u.hello.name_len = (uint8_t)strlen(client->node_name);
    memcpy(hello.u.hello.name, client->node_name, hello.u.hello.name_len);
    fab__reply_t reply;
    fab_status_t status = fab__call_raw(client, &hello, -1, &reply, NULL);
    if (status == FAB_SUCCESS)
        client->node = reply.node;
    return status;
}

/* Connect again and hand every live region to the (new) daemon. A region it
 * will not take (its creator is gone, say) keeps working here but has no
 * daemon reference any more (id 0). */
static fab_status_t fab__reconnect(fab_client_t *client)
{
    client->sock = fab__connect(client->path, client->autostart);
    if (client->sock < 0)
        return FAB_ERROR_SYSTEM_NOT_READY;
    fab_status_t status = fab__hello(client);
    if (status != FAB_SUCCESS) {
        if (client->sock >= 0)
            close(client->sock);
        client->sock = -1;
        return FAB_ERROR_SYSTEM_NOT_READY;
    }
    for (int pass = 1; pass >= 0; pass--) {
        for (fab_region_t *r = client->regions; r != NULL; r = r->next) {
            if ((int)r->creator != pass)
                continue;
            fab__request_t adopt = {.type = FAB__MSG_ADOPT};
            adopt.u.import.device = r->device;
            adopt.u.import.handle = r->handle;
            adopt.u.import.handle_type = r->handle_type;
            adopt.u.import.creator = r->creator;
            fab__reply_t reply;
            status = fab__call_raw(client, &adopt, r->fd, &reply, NULL);
            if (client->sock < 0)
                return FAB_ERROR_SYSTEM_NOT_READY;
            r->id = status == FAB_SUCCESS ? reply.region : 0;
            if (status != FAB_SUCCESS)
                fab__log(FAB__LOG_WARN, "the restarted fabmemd did not take a region back: %s",
                         fab_status_name(status));
        }
    }
    fab__log(FAB__LOG_INFO, "reconnected to fabmemd at %s", client->path);
    return FAB_SUCCESS;
}

/* A request with reconnection: a broken connection is replaced (once) and
 * the request sent again; the daemon that broke it kept no state of ours. */
static fab_status_t fab__call(fab_client_t *client, fab__request_t *request, fab__reply_t *reply_out,
                              int *fd_out)
{
    int fresh = 0;
    if (client->sock < 0) {
        if (fab__reconnect(client) != FAB_SUCCESS)
            return FAB_ERROR_SYSTEM_NOT_READY;
        fresh = 1;
    }
    fab_status_t status = fab__call_raw(client, request, -1, reply_out, fd_out);
    if (client->sock >= 0 || fresh)
        return status;
    if (fab__reconnect(client) != FAB_SUCCESS)
        return FAB_ERROR_SYSTEM_NOT_READY;
    return fab__call_raw(client, request, -1, reply_out, fd_out);
}

fab_status_t fab_client_connect(const fab_client_options_t *options, fab_client_t **client_out)
{
    if (client_out == NULL)
        return FAB_ERROR_INVALID_VALUE;
    fab_client_options_t none = {NULL, NULL, -1};
    if (options == NULL)
        options = &none;
    char path[PATH_MAX];
    if (fab__socket_path(options->socket_path, path, sizeof(path)) != 0)
        return FAB_ERROR_INVALID_VALUE;
    int autostart = options->autostart;
    if (autostart < 0) {
        const char *no = getenv("FABMEM_NO_AUTOSTART");
        autostart = !(no != NULL && strcmp(no, "1") == 0);
    }
    const char *node = options->node;
    if (node == NULL)
        node = getenv("FABMEM_NODE");
    if (node == NULL)
        node = "";
    if (strlen(node) > 255)
        return FAB_ERROR_NOT_FOUND;

    fab_client_t *client = calloc(1, sizeof(*client));
    if (client == NULL)
        return FAB_ERROR_OUT_OF_MEMORY;
    fab_status_t status = FAB_ERROR_SYSTEM_NOT_READY;
    if (pthread_mutex_init(&client->lock, NULL) != 0) {
        status = FAB_ERROR_OUT_OF_MEMORY;
        goto fail_client;
    }
    client->autostart = autostart;
    snprintf(client->node_name, sizeof(client->node_name), "%s", node);
    snprintf(client->path, sizeof(client->path), "%s", path);
    client->sock = fab__connect(path, autostart);
    if (client->sock < 0) {
        fab__log(FAB__LOG_INFO, "no fabmemd answers at %s: %s", path, strerror(errno));
        goto fail_lock;
    }
    status = fab__hello(client);
    if (status != FAB_SUCCESS)
        goto fail_sock;
    *client_out = client;
    return FAB_SUCCESS;

fail_sock:
    if (client->sock >= 0)
        close(client->sock);
fail_lock:
    pthread_mutex_destroy(&client->lock);
fail_client:
    free(client);
    return status;
}

fab_status_t fab_client_close(fab_client_t *client)
{
    if (client == NULL)
        return FAB_SUCCESS;
    pthread_mutex_lock(&client->lock);
    size_t live = client->live_regions;
    pthread_mutex_unlock(&client->lock);
    if (live != 0)
        return FAB_ERROR_ILLEGAL_STATE;
    fab__drain(client); /* for the warnings they may carry */
    if (client->sock >= 0)
        close(client->sock);
    pthread_mutex_destroy(&client->lock);
    free(client);
    return FAB_SUCCESS;
}

int fab_client_node_index(const fab_client_t *client)
{
    return client ? client->node : -1;
}

/* ---- regions --------------------------------------------------------------- */

static fab_region_t *fab__region_new(fab_client_t *client, const fab__reply_t *reply, int fd,
                                     fab_access_t access)
{
    fab_region_t *region = calloc(1, sizeof(*region));
    if (region == NULL)
        return NULL;
    region->next = client->regions;
    if (client->regions != NULL)
        client->regions->prev = region;
    client->regions = region;
    region->client = client;
    region->id = reply->region;
    region->fd = fd;
    region->size = (size_t)reply->size;
    region->access = access;
    region->uuid = reply->uuid;
    region->device = reply->node;
    return region;
}

/* Tell the daemon to drop a reference it handed out but we cannot keep. */
static void fab__region_drop(fab_client_t *client, uint64_t id)
{
    fab__request_t request = {.type = FAB__MSG_RELEASE};
    request.u.region.region = id;
    fab__reply_t reply;
    (void)fab__call(client, &request, &reply, NULL);
}

/* Send a request whose reply hands out memory (ALLOC: creator, IMPORT: not)
 * and wrap the memfd that came with it in a new region. If the reply carries
 * no fd, or there is no memory for the region, the daemon's reference is
 * dropped again so that nothing leaks on either side. Called with the lock
 * held; *region_out is written only on success. */
static fab_status_t fab__call_for_region(fab_client_t *client, fab__request_t *request,
                                         bool creator, fab_region_t **region_out)
{
    fab__reply_t reply;
    int fd = -1;
    fab_status_t status = fab__call(client, request, &reply, &fd);
    if (status != FAB_SUCCESS)
        return status;
    /* The creator may do anything with its memory; an importer what it was
     * granted. */
    fab_access_t access = creator || reply.access == FAB_ACCESS_READ_WRITE
                              ? FAB_ACCESS_READ_WRITE
                              : FAB_ACCESS_READ_ONLY;
    fab_region_t *region = fd >= 0 ? fab__region_new(client, &reply, fd, access) : NULL;
    if (region == NULL) {
        if (fd >= 0)
            close(fd);
        fab__region_drop(client, reply.region);
        return fd >= 0 ? FAB_ERROR_OUT_OF_MEMORY : FAB_ERROR_SYSTEM_NOT_READY;
    }
    region->creator = creator;
    if (creator) {
        region->handle = reply.handle;
        region->handle_type = request->u.alloc.handle_type;
    } else {
        region->handle = request->u.import.handle;
    }
    client->live_regions++;
    *region_out = region;
    return FAB_SUCCESS;
}

fab_status_t fab_client_allocate(fab_client_t *client, const fab_alloc_props_t *props,
                                 fab_region_t **region_out)
{
    if (client == NULL || props == NULL || region_out == NULL)
        return FAB_ERROR_INVALID_VALUE;
    fab__request_t request = {.type = FAB__MSG_ALLOC};
    request.u.alloc.device = props->device_ordinal;
    request.u.alloc.size = props->size;
    request.u.alloc.handle_type = (uint32_t)props->handle_type;
    if ((unsigned)props->peer_access > FAB_ACCESS_READ_WRITE)
        return FAB_ERROR_INVALID_VALUE;
    request.u.alloc.peer_access = (uint8_t)props->peer_access;
    pthread_mutex_lock(&client->lock);
    fab_status_t status = fab__call_for_region(client, &request, true, region_out);
    pthread_mutex_unlock(&client->lock);
    return status;
}

fab_status_t fab_client_import(fab_client_t *client, const fab_handle_t *handle,
                               int device_ordinal, fab_region_t **region_out)
{
    if (client == NULL || handle == NULL || region_out == NULL)
        return FAB_ERROR_INVALID_VALUE;
    fab__request_t request = {.type = FAB__MSG_IMPORT};
    request.u.import.device = device_ordinal;
    request.u.import.handle = *handle;
    pthread_mutex_lock(&client->lock);
    fab_status_t status = fab__call_for_region(client, &request, false, region_out);
    pthread_mutex_unlock(&client->lock);
    return status;
}

fab_status_t fab_client_stats(fab_client_t *client, fab_daemon_stats_t *stats_out)
{
    if (client == NULL || stats_out == NULL)
        return FAB_ERROR_INVALID_VALUE;
    fab__request_t request = {.type = FAB__MSG_STATS};
    fab__reply_t reply;
    pthread_mutex_lock(&client->lock);
    fab_status_t status = fab__call(client, &request, &reply, NULL);
    pthread_mutex_unlock(&client->lock);
    if (status != FAB_SUCCESS)
        return status;
    fab_daemon_stats_t stats = {reply.stats[0], reply.stats[1], reply.stats[2],
                                reply.stats[3], reply.stats[4], reply.stats[5]};
    *stats_out = stats;
    return FAB_SUCCESS;
}

fab_status_t fab_client_verify(fab_client_t *client, const fab_handle_t *handle, bool *live_out)
{
    if (client == NULL || handle == NULL || live_out == NULL)
        return FAB_ERROR_INVALID_VALUE;
    fab__request_t request = {.type = FAB__MSG_VERIFY};
    request.u.import.handle = *handle;
    fab__reply_t reply;
    pthread_mutex_lock(&client->lock);
    fab_status_t status = fab__call(client, &request, &reply, NULL);
    pthread_mutex_unlock(&client->lock);
    if (status != FAB_SUCCESS)
        return status;
    *live_out = reply.access != 0;
    return FAB_SUCCESS;
}

fab_status_t fab_region_export(fab_region_t *region, fab_handle_t *handle_out)
{
    if (region == NULL || handle_out == NULL)
        return FAB_ERROR_INVALID_VALUE;
    fab_client_t *client = region->client;
    pthread_mutex_lock(&client->lock);
    fab_status_t status = FAB_ERROR_INVALID_HANDLE;
    if (!region->released) {
        fab__request_t request = {.type = FAB__MSG_EXPORT};
        request.u.region.region = region->id;
        fab__reply_t reply;
        status = fab__call(client, &request, &reply, NULL);
        if (status == FAB_SUCCESS)
            *handle_out = reply.handle;
    }
    pthread_mutex_unlock(&client->lock);
    return status;
}

int fab_region_fd(const fab_region_t *region)
{
    return region ? region->fd : -1;
}

size_t fab_region_size(const fab_region_t *region)
{
    return region ? region->size : 0;
}

fab_access_t fab_region_access(const fab_region_t *region)
{
    return region ? region->access : FAB_ACCESS_NONE;
}

fab_uuid_t fab_region_uuid(const fab_region_t *region)
{
    fab_uuid_t none = {{0}};
    return region ? region->uuid : none;
}

int fab_region_device_ordinal(const fab_region_t *region)
{
    return region ? region->device : -1;
}

fab_status_t fab_region_map(fab_region_t *region, fab_access_t access, void **addr_out)
{
    if (region == NULL || addr_out == NULL || !fab_access_is_mappable(access))
        return FAB_ERROR_INVALID_VALUE;
    if (access == FAB_ACCESS_READ_WRITE && region->access != FAB_ACCESS_READ_WRITE)
        return FAB_ERROR_NOT_PERMITTED;
    fab_client_t *client = region->client;
    pthread_mutex_lock(&client->lock);
    fab_status_t status = FAB_ERROR_INVALID_VALUE;
    if (region->released)
        goto out;
    status = FAB_ERROR_OUT_OF_MEMORY;
    if (region->nmaps == region->capmaps) {
        size_t cap = region->capmaps ? region->capmaps * 2 : 2;
        void **grown = realloc(region->maps, cap * sizeof(*grown));
        if (grown == NULL)
            goto out;
        region->maps = grown;
        region->capmaps = cap;
    }
    int prot = access == FAB_ACCESS_READ_WRITE ? PROT_READ | PROT_WRITE : PROT_READ;
    void *addr = mmap(NULL, region->size, prot, MAP_SHARED, region->fd, 0);
    if (addr == MAP_FAILED) {
        fab__log(FAB__LOG_WARN, "mmap of %zu bytes: %s", region->size, strerror(errno));
        goto out;
    }
    region->maps[region->nmaps++] = addr;
    *addr_out = addr;
    status = FAB_SUCCESS;
out:
    pthread_mutex_unlock(&client->lock);
    return status;
}

/* Drop the daemon's reference and free the region; the caller holds the lock
 * and has checked that it is released and unmapped. */
static void fab__region_finish(fab_region_t *region)
{
    fab_client_t *client = region->client;
    if (client->deferred >= FAB__DEFERRED_MAX)
        fab__drain(client);
    if (region->prev != NULL)
        region->prev->next = region->next;
    else
        client->regions = region->next;
    if (region->next != NULL)
        region->next->prev = region->prev;
    /* A broken connection is not mended here: the daemon that broke it
     * holds nothing of ours, and a new one learns of live regions only. */
    if (client->sock >= 0 && region->id != 0) {
        fab__request_t request = {.type = FAB__MSG_RELEASE, .seq = ++client->seq};
        request.u.region.region = region->id;
        uint8_t buf[FAB__PROTO_MAX];
        size_t len = fab__request_encode(&request, buf);
        if (fab__proto_send(client->sock, buf, len, -1) == 0)
            client->deferred++;
        else
            fab__connection_lost(client);
    }
    close(region->fd);
    client->live_regions--;
    free(region->maps);
    free(region);
}

fab_status_t fab_region_unmap(fab_region_t *region, void *addr)
{
    if (region == NULL || addr == NULL)
        return FAB_ERROR_INVALID_VALUE;
    fab_client_t *client = region->client;
    pthread_mutex_lock(&client->lock);
    fab_status_t status = FAB_ERROR_INVALID_VALUE;
    for (size_t i = 0; i < region->nmaps; i++) {
        if (region->maps[i] != addr)
            continue;
        munmap(addr, region->size);
        region->maps[i] = region->maps[--region->nmaps];
        status = FAB_SUCCESS;
        if (region->released && region->nmaps == 0)
            fab__region_finish(region);
        break;
    }
    pthread_mutex_unlock(&client->lock);
    return status;
}

fab_status_t fab_region_release(fab_region_t *region)
{
    if (region == NULL)
        return FAB_ERROR_INVALID_VALUE;
    fab_client_t *client = region->client;
    pthread_mutex_lock(&client->lock);
    fab_status_t status = FAB_SUCCESS;
    if (region->released)
        status = FAB_ERROR_INVALID_VALUE;
    else if (region->nmaps == 0)
        fab__region_finish(region);
    else
        region->released = true;
    pthread_mutex_unlock(&client->lock);
    return status;
}
