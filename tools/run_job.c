/* fabmem run --node-per-rank: what one rank of a launcher's job (mpirun,
 * srun) needs to see the topology as a multi-node job does.
 *
 * Placement: the ranks fill the nodes' GPUs in the config's order, node by
 * node: rank r takes the r-th GPU of the whole topology. The rank's process
 * sees that GPU alone, as device 0 (CUDA_VISIBLE_DEVICES), on its node
 * (FABMEM_NODE), as `srun --gpus-per-task=1` would give it.
 *
 * One daemon per job, because a handle minted by one daemon imports nowhere
 * else. Two ways:
 *  - joined: FABMEM_SOCKET is set (an outer `fabmem run -- mpirun ...` set
 *    it): every rank uses that daemon, whose owner starts and stops it.
 *  - own: the job's directory, $TMPDIR/fabmem-jobs-<uid>/<job id>, named from
 *    the launcher's job id, in a directory of this user's alone (0700, made
 *    once and kept), so that no other user can make or lock a file of the
 *    job: one that could (a lock file of predictable name in /tmp) held
 *    the ranks forever. Each file is still checked after it is opened (a
 *    regular file of ours, writable by nobody else), and every wait on a
 *    lock gives up after FAB__JOB_WAIT_MS, saying which. Its lock file (job.lock, flock) orders the ranks
 *    and holds the count of ranks in the job. The first rank in finds no
 *    daemon, starts one and counts 1; the others count themselves in. Each rank holds a connection to the daemon for as long
 *    as its program runs, so the daemon is never idle while the job lives.
 *    The last rank out (count 0) asks the daemon what it still holds and
 *    stops it (SIGTERM).
 *    The daemon is not the rank's child but a janitor's: a process of its own
 *    group, out of reach of the signals a launcher sends a rank's group when
 *    it tears a failed job down (SIGTERM, then SIGKILL a moment later). The
 *    janitor waits for the daemon, then removes the directory, and exits;
 *    it holds <dir>.lock (flock) all the while and removes it last, so
 *    whoever waits for that lock knows the job has left nothing behind. The
 *    first rank waits for its janitor; if the ranks are killed instead, the
 *    daemon leaves by itself once no client is left (--idle-exit), and the
 *    janitor cleans up after it just the same.
 *
 * A rank joins before its program starts, and an MPI program's ranks cannot
 * all pass MPI_Init before every rank has started, so no rank of an MPI
 * program finds the count at 0 while others of its job are still to come.
 * Programs that never wait for each other can leave before the last rank
 * comes: a rank that finds the count at 0 waits for the stopping daemon's
 * janitor, then starts anew (fab__job_enter). */
#include "run_job.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "src/fabric/fabmemd.h"
#include "src/base/env.h"

/* Seconds a daemon whose ranks were all killed waits before leaving. The
 * ranks hold connections while the job lives, so only the first rank's
 * moment between the daemon's start and its own connection is exposed. */
#define FAB__JOB_IDLE_EXIT "3"

/* The longest a rank waits for a lock of its job: other ranks hold job.lock
 * for a moment (the first one while its daemon starts), and a janitor holds
 * its lock until its daemon has left (at once when stopped, 3 s after its
 * last client when its ranks were killed). */
#define FAB__JOB_WAIT_MS 30000

static const char *const fab__job_files[] = {"fabmemd.sock", "fabmemd.sock.lock",
                                             "fabmemd.sock.key", "job.lock"};

/* FABMEM_RUN_REPORT=1 (or FABMEM_LOG info or debug): the last rank out says
 * what the daemon still held, and the starter that the directory is gone. */
static bool fab__job_verbose(void)
{
    const char *report = getenv(FAB__ENV_RUN_REPORT);
    if (report != NULL && strcmp(report, "1") == 0)
        return true;
    const char *log = getenv(FAB__ENV_LOG);
    return log != NULL && (strcmp(log, "info") == 0 || strcmp(log, "debug") == 0);
}

int fab__job_rank(fab__job_t *job)
{
    static const char *const vars[] = {"OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK",
                                       "SLURM_PROCID"};
    for (size_t i = 0; i < sizeof(vars) / sizeof(vars[0]); i++) {
        const char *text = getenv(vars[i]);
        if (text == NULL || *text == '\0')
            continue;
        char *end;
        errno = 0;
        long rank = strtol(text, &end, 10);
        if (errno != 0 || *end != '\0' || rank < 0 || rank > INT32_MAX) {
            fprintf(stderr, "fabmem run: --node-per-rank: %s=%s is not a rank\n", vars[i], text);
            return -1;
        }
        job->rank = (int)rank;
        job->rank_from = vars[i];
        return 0;
    }
    fprintf(stderr, "fabmem run: --node-per-rank: no rank in the environment (OMPI_COMM_WORLD_RANK, "
                    "PMIX_RANK, PMI_RANK or SLURM_PROCID); run it under mpirun or srun\n");
    return -1;
}

/* The launcher's job id, made safe for a file name (letters, digits, '.',
 * '-', '_'); a long one is replaced by its hash so the socket path fits. */
static int fab__job_id(fab__job_t *job)
{
    char raw[256] = "";
    const char *text;
    if ((text = getenv("OMPI_MCA_ess_base_jobid")) != NULL && *text)
        snprintf(raw, sizeof(raw), "%s", text);
    else if ((text = getenv("PMIX_NAMESPACE")) != NULL && *text)
        snprintf(raw, sizeof(raw), "%s", text);
    else if ((text = getenv("SLURM_JOB_ID")) != NULL && *text) {
        /* Steps of one allocation are jobs of their own. */
        const char *step = getenv("SLURM_STEP_ID");
        snprintf(raw, sizeof(raw), "%s.%s", text, step && *step ? step : "0");
    } else {
        fprintf(stderr, "fabmem run: --node-per-rank: no job id in the environment "
                        "(OMPI_MCA_ess_base_jobid, PMIX_NAMESPACE or SLURM_JOB_ID), and no "
                        "FABMEM_SOCKET to join\n");
        return -1;
    }
    size_t len = strlen(raw);
    if (len > 32) {
        uint64_t hash = 1469598103934665603ull; /* FNV-1a */
        for (size_t i = 0; i < len; i++)
            hash = (hash ^ (unsigned char)raw[i]) * 1099511628211ull;
        snprintf(job->id, sizeof(job->id), "h%016llx", (unsigned long long)hash);
        return 0;
    }
    for (size_t i = 0; i <= len; i++) {
        char c = raw[i];
        bool ok = c == '\0' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                  (c >= '0' && c <= '9') || c == '.' || c == '-' || c == '_';
        job->id[i] = ok ? c : '_';
    }
    return 0;
}

static fab_client_t *fab__job_connect(const char *socket)
{
    fab_client_options_t options = {.socket_path = socket, .node = NULL, .autostart = 0};
    fab_client_t *client = NULL;
    return fab_client_connect(&options, &client) == FAB_SUCCESS ? client : NULL;
}

static long long fab__job_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* flock(fd, LOCK_EX), given up after FAB__JOB_WAIT_MS: 0, or -1 (said on
 * stderr, naming the file at path). Polled: flock has no timeout. */
static int fab__job_lock(int fd, const char *path)
{
    long long deadline = fab__job_now_ms() + FAB__JOB_WAIT_MS;
    while (flock(fd, LOCK_EX | LOCK_NB) != 0) {
        if (errno != EWOULDBLOCK && errno != EINTR) {
            fprintf(stderr, "fabmem run: %s: %s\n", path, strerror(errno));
            return -1;
        }
        if (fab__job_now_ms() >= deadline) {
            fprintf(stderr, "fabmem run: %s: still locked after %d s; giving up\n", path,
                    FAB__JOB_WAIT_MS / 1000);
            return -1;
        }
        nanosleep(&(struct timespec){.tv_nsec = 10 * 1000 * 1000}, NULL);
    }
    return 0;
}

/* Open a file of the job (O_NOFOLLOW; flags may add O_CREAT, mode 0600) and
 * check what was opened: a regular file of this user's that nobody else may
 * write. -1 with errno (EPERM for a file that fails the check, said on
 * stderr). */
static int fab__job_open(const char *path, int flags)
{
    int fd = open(path, flags | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK, 0600);
    if (fd < 0)
        return -1;
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_uid != getuid() ||
        (st.st_mode & 022) != 0) {
        fprintf(stderr, "fabmem run: %s is not a file of this user's alone: refusing it\n", path);
        close(fd);
        errno = EPERM;
        return -1;
    }
    /* Non-blocking only for the open (a FIFO planted there must not hang it). */
    int fl = fcntl(fd, F_GETFL);
    if (fl >= 0)
        (void)fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
    return fd;
}

static void fab__job_remove_dir(const char *dir)
{
    char path[PATH_MAX + 32];
    for (size_t i = 0; i < sizeof(fab__job_files) / sizeof(fab__job_files[0]); i++) {
        snprintf(path, sizeof(path), "%s/%s", dir, fab__job_files[i]);
        unlink(path);
    }
    /* Not empty: a rank that came after the job's last one has begun anew
     * there (it waits for us before it starts a daemon). */
    if (rmdir(dir) != 0 && errno != ENOENT && errno != ENOTEMPTY)
        fprintf(stderr, "fabmem run: %s: %s\n", dir, strerror(errno));
}

/* The janitor: holds <dir>.lock, runs the daemon as its child, and when the
 * daemon has exited removes the directory, then the lock file. Never returns. */
static void fab__job_janitor(void *arg, const char *exe, char *const *argv)
{
    const char *dir = arg;
    setpgid(0, 0);
    signal(SIGTERM, SIG_IGN);
    signal(SIGINT, SIG_IGN);
    signal(SIGHUP, SIG_IGN);
    /* The launcher may be gone, and our stderr's pipe with it. */
    signal(SIGPIPE, SIG_IGN);
    char lock_path[PATH_MAX + 8];
    snprintf(lock_path, sizeof(lock_path), "%s.lock", dir);
    int lock = fab__job_open(lock_path, O_RDWR | O_CREAT);
    if (lock >= 0 && fab__job_lock(lock, lock_path) != 0) {
        close(lock);
        lock = -1;
    }
    pid_t daemon = fork();
    if (daemon == 0) {
        /* An ignored signal stays ignored across exec: the daemon's SIGTERM
         * (the last rank's stop) must reach it. */
        signal(SIGTERM, SIG_DFL);
        signal(SIGINT, SIG_DFL);
        signal(SIGHUP, SIG_DFL);
        execv(exe, argv);
        _exit(127);
    }
    close(3); /* the readiness pipe is the daemon's to write */
    int status = 0;
    while (daemon > 0 && waitpid(daemon, &status, 0) < 0 && errno == EINTR)
        ;
    if (daemon > 0 && (!WIFEXITED(status) || WEXITSTATUS(status) != 0))
        fprintf(stderr, "fabmem run: the job's daemon did not exit cleanly\n");
    fab__job_remove_dir(dir);
    unlink(lock_path);
    if (fab__job_verbose())
        fprintf(stderr, "fabmem run: daemon stopped, %s removed\n", dir);
    _exit(0);
}

/* Start the janitor and, under it, fabmemd on the job's socket; the
 * janitor's pid once the daemon listens, else -1 (the daemon's own message on
 * stderr says why). */
static pid_t fab__job_daemon_start(const char *dir, const char *socket, const char *config)
{
    char exe[PATH_MAX];
    if (fab__fabmemd_find(exe, sizeof(exe)) != 0) {
        fprintf(stderr, "fabmem run: no fabmemd found (set FABMEM_DAEMON)\n");
        return -1;
    }
    /* The janitor keeps only the readiness pipe (as fd 3), stdout, stderr:
     * nothing of the rank's may outlive it there, above all not job.lock's
     * open file, whose flock would then stay held if the rank were killed
     * holding it. */
    const char *args[7] = {"--socket", socket, "--idle-exit", FAB__JOB_IDLE_EXIT};
    if (config != NULL) {
        args[4] = "--config";
        args[5] = config;
    }
    fab__fabmemd_spawn_t spawn = {.exe = exe, .args = args, .ready_fd = 3, .close_others = 1,
                                  .in_child = fab__job_janitor, .in_child_arg = (void *)dir};
    pid_t pid = 0;
    if (fab__fabmemd_spawn(&spawn, &pid) == 0)
        return pid;
    fprintf(stderr, "fabmem run: fabmemd did not start (%s)\n", exe);
    return -1;
}

static long fab__job_count_read(int fd)
{
    char text[32] = "";
    ssize_t n = pread(fd, text, sizeof(text) - 1, 0);
    if (n <= 0)
        return 0;
    text[n] = '\0';
    long count = strtol(text, NULL, 10);
    return count > 0 ? count : 0;
}

static void fab__job_count_write(int fd, long count)
{
    char text[32];
    int n = snprintf(text, sizeof(text), "%ld\n", count);
    if (ftruncate(fd, 0) != 0 || pwrite(fd, text, (size_t)n, 0) != n)
        fprintf(stderr, "fabmem run: job.lock: %s\n", strerror(errno));
}

/* path made a directory of mode 0700, or an existing one of ours that no
 * one else can enter (a directory someone else made there is refused: -1).
 * 1 when it vanished between the two looks (the janitor of the job's
 * previous daemon removed it): the caller starts over. */
static int fab__job_private_dir(const char *path)
{
    if (mkdir(path, 0700) != 0 && errno != EEXIST) {
        fprintf(stderr, "fabmem run: %s: %s\n", path, strerror(errno));
        return -1;
    }
    struct stat st;
    if (lstat(path, &st) != 0) {
        if (errno == ENOENT)
            return 1;
        fprintf(stderr, "fabmem run: %s: %s\n", path, strerror(errno));
        return -1;
    }
    if (!S_ISDIR(st.st_mode) || st.st_uid != getuid() || (st.st_mode & 077) != 0) {
        fprintf(stderr, "fabmem run: %s is not a private directory of this user\n", path);
        return -1;
    }
    return 0;
}

/* The job's directory, in this user's own directory of jobs (both made
 * private, or refused: -1; 1: it vanished, start over). */
static int fab__job_dir(fab__job_t *job)
{
    const char *tmp = getenv("TMPDIR");
    char base[PATH_MAX - 80];
    snprintf(base, sizeof(base), "%s/fabmem-jobs-%u", tmp && *tmp ? tmp : "/tmp",
             (unsigned)getuid());
    int n = snprintf(job->dir, sizeof(job->dir), "%s/%s", base, job->id);
    n = snprintf(job->socket, sizeof(job->socket), "%s/fabmemd.sock", job->dir);
    if (n < 0 || n > 107) {
        fprintf(stderr, "fabmem run: %s: too long for a socket (set TMPDIR shorter)\n",
                job->socket);
        return -1;
    }
    int made = fab__job_private_dir(base);
    return made != 0 ? (made > 0 ? 1 : -1) : fab__job_private_dir(job->dir);
}

/* Whether a daemon holds the job's socket (its lock file, which it holds
 * while it lives), answering or not. */
static bool fab__job_daemon_alive(const fab__job_t *job)
{
    char path[PATH_MAX + 32];
    snprintf(path, sizeof(path), "%s.lock", job->socket);
    int fd = fab__job_open(path, O_RDONLY);
    if (fd < 0)
        return false;
    bool alive = flock(fd, LOCK_SH | LOCK_NB) != 0 && errno == EWOULDBLOCK;
    close(fd);
    return alive;
}

/* Wait (at most FAB__JOB_WAIT_MS) for the janitor of a previous daemon of
 * this job, if one still runs: 1 when it has removed the directory (job_fd,
 * our job.lock, is then unlinked), so the caller starts over; 0 when there
 * is none, or it left the directory; -1 when it outlasted the wait (said). */
static int fab__job_janitor_wait(const fab__job_t *job, int job_fd)
{
    char path[PATH_MAX + 8];
    snprintf(path, sizeof(path), "%s.lock", job->dir);
    int fd = fab__job_open(path, O_RDONLY);
    if (fd < 0)
        return errno == EPERM ? -1 : 0;
    int locked = fab__job_lock(fd, path);
    close(fd);
    if (locked != 0)
        return -1;
    struct stat st;
    return fstat(job_fd, &st) == 0 && st.st_nlink == 0;
}

/* In the job's directory with its lock held: count ourselves in, starting the
 * daemon when none answers. 0, or the exit status to give. */
static int fab__job_enter(fab__job_t *job, const char *config)
{
    for (int attempt = 0; attempt < 100; attempt++) {
        int dir = fab__job_dir(job);
        if (dir < 0)
            return 2;
        if (dir > 0)
            continue; /* removed by the janitor of the job's previous daemon */
        char path[PATH_MAX + 16];
        snprintf(path, sizeof(path), "%s/job.lock", job->dir);
        int fd = fab__job_open(path, O_RDWR | O_CREAT);
        if (fd < 0 && errno == ENOENT)
            continue; /* the last rank of a job before ours removed it */
        if (fd < 0) {
            if (errno != EPERM)
                fprintf(stderr, "fabmem run: %s: %s\n", path, strerror(errno));
            return 1;
        }
        if (fab__job_lock(fd, path) != 0) {
            close(fd);
            return 1;
        }
        struct stat st;
        if (fstat(fd, &st) != 0 || st.st_nlink == 0) {
            close(fd); /* removed while we waited: start over */
            continue;
        }
        /* At 0 the job has no ranks yet, or had some that all left (programs
         * that did not wait for each other): their daemon is stopping. */
        long count = fab__job_count_read(fd);
        job->client = count > 0 ? fab__job_connect(job->socket) : NULL;
        if (job->client == NULL) {
            if (count > 0 && fab__job_daemon_alive(job)) {
                fprintf(stderr, "fabmem run: rank %d: the job's daemon at %s lives but does not "
                                "take this rank\n", job->rank, job->socket);
                close(fd);
                return 1;
            }
            /* A daemon on its way out: wait for its janitor, then start over
             * in a fresh directory. */
            int gone = fab__job_janitor_wait(job, fd);
            if (gone != 0) {
                close(fd);
                if (gone < 0)
                    return 1;
                continue;
            }
            /* The first rank, or a directory left by a killed job. */
            count = 0;
            job->janitor = fab__job_daemon_start(job->dir, job->socket, config);
            if (job->janitor > 0)
                job->client = fab__job_connect(job->socket);
            if (job->client == NULL) {
                fprintf(stderr, "fabmem run: rank %d: no daemon at %s\n", job->rank, job->socket);
                if (job->janitor > 0) {
                    /* Its daemon leaves once idle; then the janitor cleans up. */
                    waitpid(job->janitor, NULL, 0);
                    job->janitor = 0;
                }
                close(fd);
                return 1;
            }
        }
        fab__job_count_write(fd, count + 1);
        flock(fd, LOCK_UN);
        job->lock_fd = fd;
        return 0;
    }
    fprintf(stderr, "fabmem run: %s: kept vanishing\n", job->dir);
    return 1;
}

/* Rank r takes the r-th GPU of the topology, the nodes in config order. */
static int fab__job_place(fab__job_t *job, const fab_topology_t *topology)
{
    int first = 0, total = 0;
    for (int i = 0; i < fab_topology_node_count(topology); i++) {
        fab_node_info_t info;
        if (fab_topology_node(topology, i, &info) != FAB_SUCCESS)
            continue;
        total += info.device_count;
        if (job->rank < first + info.device_count) {
            snprintf(job->node, sizeof(job->node), "%s", info.name);
            job->device = job->rank - first;
            return 0;
        }
        first += info.device_count;
    }
    fprintf(stderr, "fabmem run: --node-per-rank: rank %d (%s) has no GPU: the topology has %d "
                    "GPU(s), one per rank\n", job->rank, job->rank_from, total);
    return -1;
}

int fab__job_join(fab__job_t *job, const char *config, bool config_given)
{
    job->lock_fd = -1;
    job->janitor = 0;
    job->client = NULL;
    const char *env_socket = getenv(FAB__ENV_SOCKET);
    if (env_socket != NULL && *env_socket != '\0') {
        /* Inside an outer fabmem run (or a daemon the user named). */
        if (config_given) {
            fprintf(stderr, "fabmem run: --node-per-rank: --config conflicts with the daemon at "
                            "FABMEM_SOCKET=%s, whose topology the ranks use\n", env_socket);
            return 2;
        }
        job->own = false;
        snprintf(job->socket, sizeof(job->socket), "%s", env_socket);
        job->client = fab__job_connect(job->socket);
        if (job->client == NULL) {
            fprintf(stderr, "fabmem run: rank %d: no daemon answers at FABMEM_SOCKET=%s\n",
                    job->rank, env_socket);
            return 1;
        }
    } else {
        job->own = true;
        if (fab__job_id(job) != 0)
            return 2;
        int rc = fab__job_enter(job, config);
        if (rc != 0)
            return rc;
    }
    const fab_topology_t *topology = NULL;
    if (fab_client_topology(job->client, &topology) != FAB_SUCCESS) {
        fprintf(stderr, "fabmem run: rank %d: the daemon did not answer\n", job->rank);
        fab__job_leave(job, false);
        return 1;
    }
    if (fab__job_place(job, topology) != 0) {
        fab__job_leave(job, false);
        return 2;
    }
    return 0;
}

/* The last rank out: what the daemon still holds once every other client's
 * hang-up has reached it (ours is the only connection left). */
static void fab__job_report(fab__job_t *job)
{
    fab_daemon_stats_t stats = {0};
    for (int i = 0; i < 500; i++) {
        if (fab_client_stats(job->client, &stats) != FAB_SUCCESS)
            return;
        if (stats.clients <= 1)
            break;
        /* Hang-ups already happened; the daemon has yet to read them. */
        nanosleep(&(struct timespec){.tv_nsec = 10 * 1000 * 1000}, NULL);
    }
    bool leftover = stats.allocations != 0 || stats.references != 0;
    if (leftover || fab__job_verbose())
        fprintf(stderr, "fabmem run: job %s: last rank out (rank %d); daemon %llu held %llu "
                        "allocation(s), %llu reference(s), %llu other client(s); stopping it\n",
                job->id, job->rank, (unsigned long long)stats.pid,
                (unsigned long long)stats.allocations, (unsigned long long)stats.references,
                (unsigned long long)(stats.clients ? stats.clients - 1 : 0));
    if (stats.pid > 0)
        kill((pid_t)stats.pid, SIGTERM);
}

void fab__job_leave(fab__job_t *job, bool aborting)
{
    if (!job->own) {
        fab_client_close(job->client);
        job->client = NULL;
        return;
    }
    char path[PATH_MAX + 16];
    snprintf(path, sizeof(path), "%s/job.lock", job->dir);
    if (fab__job_lock(job->lock_fd, path) != 0) {
        /* Not counted out: the daemon leaves once its last client has. */
        fab_client_close(job->client);
        job->client = NULL;
        close(job->lock_fd);
        job->lock_fd = -1;
        job->janitor = 0;
        return;
    }
    long count = fab__job_count_read(job->lock_fd) - 1;
    fab__job_count_write(job->lock_fd, count < 0 ? 0 : count);
    if (count <= 0)
        fab__job_report(job);
    fab_client_close(job->client);
    job->client = NULL;
    flock(job->lock_fd, LOCK_UN);
    close(job->lock_fd);
    job->lock_fd = -1;
    if (job->janitor > 0 && !aborting) {
        /* We started the janitor: wait until the last rank has stopped the
         * daemon and the directory is gone, so that the launcher's end is
         * the job's. A SIGTERM (the launcher tearing the job down) ends the
         * wait; the janitor then finishes alone. */
        waitpid(job->janitor, NULL, 0);
    }
    job->janitor = 0;
}
