/* `fabmem run`: a program run on the emulation with a daemon of its own,
 * `--node-per-rank` (each rank of an MPI job on its own node of one job
 * daemon, run_job.c) and `--check` (the lifetime checker's findings of
 * every process, collected) (docs/tools.md). */
#include "tools/fabmem_run.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <jansson.h>

#include "fabmem.h"
#include "src/fabric/fabmemd.h"
#include "run_job.h"
#include "run_nccl.h"
#include "src/base/env.h"

/* ---- run ------------------------------------------------------------------ */

/* The folder of the driver emulation, relative to this program: installed,
 * <bindir>/<FABMEM_RUN_EMULATION_REL>; in the build tree, tools/../lib/fabmem.
 * The first that holds libcuda.so.1, into buf; -1 when neither does. */
static int emulation_dir(char *buf, size_t cap)
{
    char self[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
    if (n <= 0)
        return -1;
    self[n] = '\0';
    char *slash = strrchr(self, '/');
    if (slash == NULL)
        return -1;
    *slash = '\0';
    static const char *const rel[] = {FABMEM_RUN_EMULATION_REL, "../lib/fabmem"};
    for (size_t i = 0; i < sizeof(rel) / sizeof(rel[0]); i++) {
        char lib[PATH_MAX + 64];
        snprintf(lib, sizeof(lib), "%s/%s/libcuda.so.1", self, rel[i]);
        char real[PATH_MAX];
        if (realpath(lib, real) != NULL) {
            *strrchr(real, '/') = '\0';
            snprintf(buf, cap, "%s", real);
            return 0;
        }
    }
    return -1;
}

/* Start fabmemd (a child of ours) on socket with config; its pid once it
 * listens, else -1 (its own message on stderr says why). */
static pid_t run_daemon_start(const char *socket, const char *config)
{
    char exe[PATH_MAX];
    if (fab__fabmemd_find(exe, sizeof(exe)) != 0) {
        fprintf(stderr, "fabmem run: no fabmemd found (set FABMEM_DAEMON)\n");
        return -1;
    }
    const char *args[5] = {"--socket", socket};
    if (config != NULL) {
        args[2] = "--config";
        args[3] = config;
    }
    fab__fabmemd_spawn_t spawn = {.exe = exe, .args = args, .ready_fd = -1};
    pid_t pid = 0;
    if (fab__fabmemd_spawn(&spawn, &pid) == 0)
        return pid;
    fprintf(stderr, "fabmem run: fabmemd did not start (%s)\n", exe);
    return -1;
}

static void remove_tree(const char *dir)
{
    char path[PATH_MAX];
    static const char *const files[] = {"fabmemd.sock", "fabmemd.sock.lock", "fabmemd.sock.key"};
    for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
        snprintf(path, sizeof(path), "%s/%s", dir, files[i]);
        unlink(path);
    }
    rmdir(dir);
}

/* ---- run --node-per-rank (the job's side is run_job.c) ----------------------- */

/* The program's pid while it runs, for the SIGTERM handler. */
static volatile sig_atomic_t run_child, run_sigterm;

/* The launcher tears a job down with SIGTERM (mpirun, when a rank fails):
 * the program gets it, and we stay to leave the job cleanly. */
static void run_on_sigterm(int sig)
{
    run_sigterm = 1;
    if (run_child > 0)
        kill((pid_t)run_child, sig);
}

static void run_forward_sigterm(void)
{
    struct sigaction action;
    memset(&action, 0, sizeof(action));
    action.sa_handler = run_on_sigterm;
    sigemptyset(&action.sa_mask);
    sigaction(SIGTERM, &action, NULL); /* no SA_RESTART: waits see EINTR */
}

/* --rank-env RANK NAME=VALUE: a rank number and an assignment. */
static int run_rank_env_check(const char *rank, const char *assignment)
{
    char *end;
    long r = strtol(rank, &end, 10);
    const char *eq = strchr(assignment, '=');
    if (*rank == '\0' || *end != '\0' || r < 0 || r > INT_MAX || eq == NULL || eq == assignment) {
        fprintf(stderr, "fabmem run: --rank-env %s %s: want RANK NAME=VALUE\n", rank, assignment);
        return -1;
    }
    /* --node-per-rank chooses each rank's node and its GPU on it together;
     * another node for one rank would leave it a GPU index of the first. */
    if ((size_t)(eq - assignment) == strlen(FAB__ENV_NODE) &&
        strncmp(assignment, FAB__ENV_NODE, (size_t)(eq - assignment)) == 0) {
        fprintf(stderr, "fabmem run: --rank-env %s %s: --node-per-rank places every rank "
                        "(rank r on the r-th GPU of the topology, nodes in the config's order); "
                        "to put a rank on another node, order the config's nodes so, or run it "
                        "with fabmem run --node NODE\n", rank, assignment);
        return -1;
    }
    return 0;
}

/* The host identity NCCL gives a process (its host hash, from NCCL_HOSTID,
 * else the host name and boot id): each emulated node is a host of its own,
 * as a tray of an NVL72 is, so its ranks get the node's name with the real
 * host's. Only where the user has not set one. */
static void run_node_host_id(const char *node)
{
    const char *set = getenv("NCCL_HOSTID");
    if (set != NULL && *set != '\0')
        return;
    char host[256] = "localhost";
    if (gethostname(host, sizeof(host) - 1) != 0)
        snprintf(host, sizeof(host), "localhost");
    host[sizeof(host) - 1] = '\0';
    char id[sizeof(host) + FAB_NAME_MAX + 16];
    snprintf(id, sizeof(id), "%s/fabmem-node/%s", host, node);
    setenv("NCCL_HOSTID", id, 1);
}

/* ---- run --check ------------------------------------------------------------ */

/* fabmem run --check: the lifetime checker (docs/cuda.md, "Lifetime
 * checker") in every process of the run. Each process's libcuda appends one
 * JSON line per finding, and one "process" line at its end, to the file
 * FABMEM_CHECK_FILE names, in the run's private directory; once the program
 * has exited, every line (its children's too) is gathered here. */
typedef struct run_check {
    bool on;
    int error_exitcode; /* -1: the program's status whatever was found */
    const char *json;   /* --json FILE, or NULL */
    char file[PATH_MAX + 16];
} run_check_t;

/* An option of --check's at argv[*i]: 1 taken (and *i moved past its
 * argument), 0 not one of them, -1 a bad one (said on stderr). */
static int run_check_option(run_check_t *c, int argc, char **argv, int *i)
{
    const char *arg = argv[*i];
    if (strcmp(arg, "--check") == 0) {
        c->on = true;
        return 1;
    }
    if (strcmp(arg, "--error-exitcode") == 0 && *i + 1 < argc) {
        char *end;
        errno = 0;
        long n = strtol(argv[*i + 1], &end, 10);
        if (errno || *end || end == argv[*i + 1] || n < 0 || n > 255) {
            fprintf(stderr, "fabmem run: --error-exitcode %s: not a number from 0 to 255\n",
                    argv[*i + 1]);
            return -1;
        }
        c->error_exitcode = (int)n;
        c->on = true;
        ++*i;
        return 1;
    }
    if (strcmp(arg, "--json") == 0 && *i + 1 < argc) {
        c->json = argv[++*i];
        c->on = true;
        return 1;
    }
    return 0;
}

/* Join the job, then give the program its node and GPU, and the --rank-env
 * settings meant for its rank. 0, or the exit status to give. */
static int run_per_rank_join(fab__job_t *job, const char *config, bool config_given,
                             const char *rank_env[][2], int nrank_env)
{
    if (fab__job_rank(job) != 0)
        return 2;
    int rc = fab__job_join(job, config, config_given);
    if (rc != 0)
        return rc;
    char device[16];
    snprintf(device, sizeof(device), "%d", job->device);
    setenv("CUDA_VISIBLE_DEVICES", device, 1);
    run_node_host_id(job->node);
    for (int i = 0; i < nrank_env; i++) {
        if (atoi(rank_env[i][0]) != job->rank)
            continue;
        const char *eq = strchr(rank_env[i][1], '=');
        char name[256];
        snprintf(name, sizeof(name), "%.*s", (int)(eq - rank_env[i][1]), rank_env[i][1]);
        setenv(name, eq + 1, 1);
    }
    return 0;
}

/* Before the program starts: the checker on in every process of the run. */
static void run_check_arm(run_check_t *c, const char *dir)
{
    if (!c->on)
        return;
    snprintf(c->file, sizeof(c->file), "%s/check.jsonl", dir);
    setenv(FAB__ENV_CHECK, "1", 1);
    setenv(FAB__ENV_CHECK_FILE, c->file, 1);
}

/* After it has exited with rc: gather the findings, write --json, say how
 * many there were, and give the run's exit status. The file is removed. */
static int run_check_collect(run_check_t *c, int rc)
{
    if (!c->on)
        return rc;
    json_t *findings = json_array(), *processes = json_array();
    FILE *in = fopen(c->file, "r");
    char *line = NULL;
    size_t cap = 0;
    while (in && getline(&line, &cap, in) > 0) {
        json_t *obj = json_loads(line, 0, NULL);
        if (!obj)
            continue; /* a process killed mid-write leaves no whole line */
        if (json_is_true(json_object_get(obj, "process")))
            json_array_append_new(processes, obj);
        else
            json_array_append_new(findings, obj);
    }
    free(line);
    if (in)
        fclose(in);
    unlink(c->file);
    size_t n = json_array_size(findings);
    fprintf(stderr, "fabmem run --check: %zu finding%s in %zu process%s\n", n, n == 1 ? "" : "s",
            json_array_size(processes), json_array_size(processes) == 1 ? "" : "es");
    if (c->json) {
        json_t *root = json_pack("{s:I, s:o, s:o}", "count", (json_int_t)n, "findings", findings,
                                 "processes", processes);
        if (!root || json_dump_file(root, c->json, JSON_INDENT(2)) != 0) {
            fprintf(stderr, "fabmem run: --json %s: cannot write it\n", c->json);
            if (rc == 0)
                rc = 1;
        }
        json_decref(root);
    } else {
        json_decref(findings);
        json_decref(processes);
    }
    return n > 0 && c->error_exitcode >= 0 ? c->error_exitcode : rc;
}

/* fabmem run: the program runs with FABMEM_SOCKET at a daemon started for it
 * alone (in a fresh private directory), FABMEM_CONFIG and FABMEM_NODE as
 * given, FABMEM_NO_AUTOSTART=1 (so that nothing else starts), and the
 * emulation's folder first on LD_LIBRARY_PATH (where libcuda.so.1 and the
 * runtime, libcudart.so.13, sit), and each --kernels library, as an absolute
 * path, first in FABMEM_KERNELS; the daemon is stopped and its directory
 * removed when the program ends. The exit status is the program's (128 +
 * the signal that ended it). */
int fab__tool_run(int argc, char **argv)
{
    const char *config = NULL, *node = NULL;
    char kernels[8192] = "";
    bool per_rank = false;
    const char *rank_env[16][2]; /* --rank-env RANK NAME=VALUE */
    int nrank_env = 0;
    run_check_t check = {.error_exitcode = -1};
    int i = 2;
    for (; i < argc && strcmp(argv[i], "--") != 0; i++) {
        int taken = run_check_option(&check, argc, argv, &i);
        if (taken < 0)
            return 2;
        if (taken > 0)
            continue;
        if (strcmp(argv[i], "--config") == 0 && i + 1 < argc)
            config = argv[++i];
        else if (strcmp(argv[i], "--node-per-rank") == 0)
            per_rank = true;
        else if (strcmp(argv[i], "--rank-env") == 0 && i + 2 < argc) {
            if (nrank_env == 16 || run_rank_env_check(argv[i + 1], argv[i + 2]) != 0)
                return 2;
            rank_env[nrank_env][0] = argv[++i];
            rank_env[nrank_env++][1] = argv[++i];
        }
        else if (strcmp(argv[i], "--node") == 0 && i + 1 < argc)
            node = argv[++i];
        else if (strcmp(argv[i], "--kernels") == 0 && i + 1 < argc) {
            char lib[PATH_MAX];
            if (realpath(argv[++i], lib) == NULL) {
                fprintf(stderr, "fabmem run: --kernels %s: %s\n", argv[i], strerror(errno));
                return 2;
            }
            size_t used = strlen(kernels);
            if (used + strlen(lib) + 2 > sizeof(kernels)) {
                fprintf(stderr, "fabmem run: too many --kernels\n");
                return 2;
            }
            snprintf(kernels + used, sizeof(kernels) - used, "%s%s", used ? ":" : "", lib);
        } else {
            fprintf(stderr, "fabmem run: unknown option %s\n", argv[i]);
            fab__tool_usage(stderr);
            return 2;
        }
    }
    if (i + 1 >= argc) {
        fprintf(stderr, "fabmem run: no program after --\n");
        fab__tool_usage(stderr);
        return 2;
    }
    char **program = argv + i + 1;
    if (per_rank && node != NULL) {
        fprintf(stderr, "fabmem run: --node and --node-per-rank conflict\n");
        return 2;
    }
    if (!per_rank && nrank_env > 0) {
        fprintf(stderr, "fabmem run: --rank-env needs --node-per-rank\n");
        return 2;
    }
    char config_path[PATH_MAX];
    bool config_given = config != NULL;
    if (config != NULL) {
        if (realpath(config, config_path) == NULL) {
            fprintf(stderr, "fabmem run: --config %s: %s\n", config, strerror(errno));
            return 2;
        }
        config = config_path;
    } else {
        config = getenv(FAB__ENV_CONFIG); /* the daemon's default rule */
    }
    char emu[PATH_MAX];
    if (emulation_dir(emu, sizeof(emu)) != 0) {
        fprintf(stderr, "fabmem run: the driver emulation (libcuda.so.1) is not next to "
                        "this program\n");
        return 2;
    }
    /* --node-per-rank: the job's daemon, shared with the other ranks. */
    fab__job_t job = {0};
    char dir[PATH_MAX] = "";
    char socket[PATH_MAX + 16];
    pid_t daemon = -1;
    if (per_rank) {
        int rc = run_per_rank_join(&job, config, config_given, rank_env, nrank_env);
        if (rc != 0)
            return rc;
        snprintf(socket, sizeof(socket), "%s", job.socket);
        node = job.node;
    } else {
        const char *tmp = getenv("TMPDIR");
        snprintf(dir, sizeof(dir), "%s/fabmem-run.XXXXXX", tmp && *tmp ? tmp : "/tmp");
        if (mkdtemp(dir) == NULL) {
            fprintf(stderr, "fabmem run: %s: %s\n", dir, strerror(errno));
            return 1;
        }
        snprintf(socket, sizeof(socket), "%s/fabmemd.sock", dir);
        daemon = run_daemon_start(socket, config);
        if (daemon < 0) {
            remove_tree(dir);
            return 1;
        }
    }
    setenv(FAB__ENV_SOCKET, socket, 1);
    setenv(FAB__ENV_NO_AUTOSTART, "1", 1);
    fab__run_nccl_env();
    /* A rank's findings are its own: each rank gathers its program's in a
     * directory of its own, and --json FILE becomes FILE.<rank>. */
    char check_dir[PATH_MAX] = "", json_rank[PATH_MAX + 16];
    if (per_rank && check.on) {
        const char *tmp = getenv("TMPDIR");
        snprintf(check_dir, sizeof(check_dir), "%s/fabmem-check.XXXXXX",
                 tmp && *tmp ? tmp : "/tmp");
        if (mkdtemp(check_dir) == NULL) {
            fprintf(stderr, "fabmem run: %s: %s\n", check_dir, strerror(errno));
            fab__job_leave(&job, false);
            return 1;
        }
        if (check.json != NULL) {
            snprintf(json_rank, sizeof(json_rank), "%s.%d", check.json, job.rank);
            check.json = json_rank;
        }
    }
    run_check_arm(&check, per_rank ? check_dir : dir);
    if (config != NULL)
        setenv(FAB__ENV_CONFIG, config, 1);
    if (node != NULL)
        setenv(FAB__ENV_NODE, node, 1);
    if (kernels[0] != '\0') {
        const char *old_kernels = getenv(FAB__ENV_KERNELS);
        char all[sizeof(kernels) + PATH_MAX];
        snprintf(all, sizeof(all), "%s%s%s", kernels, old_kernels && *old_kernels ? ":" : "",
                 old_kernels ? old_kernels : "");
        setenv(FAB__ENV_KERNELS, all, 1);
    }
    /* The emulation's folder first, unless it is first already. */
    const char *old = getenv("LD_LIBRARY_PATH");
    size_t emu_len = strlen(emu);
    if (!old || strncmp(old, emu, emu_len) != 0 || (old[emu_len] != '\0' && old[emu_len] != ':')) {
        char libpath[2 * PATH_MAX + 2];
        snprintf(libpath, sizeof(libpath), "%s%s%s", emu, old && *old ? ":" : "", old ? old : "");
        setenv("LD_LIBRARY_PATH", libpath, 1);
    }

    /* The program gets the terminal's signals; we wait for it and clean up. */
    signal(SIGINT, SIG_IGN);
    signal(SIGQUIT, SIG_IGN);
    /* A rank passes the launcher's SIGTERM on; held back until the child's
     * pid is known, so that none comes in between and is lost. */
    sigset_t term, old_mask;
    sigemptyset(&old_mask);
    sigemptyset(&term);
    sigaddset(&term, SIGTERM);
    if (per_rank) {
        run_forward_sigterm();
        sigprocmask(SIG_BLOCK, &term, &old_mask);
    }
    fflush(NULL);
    pid_t child = fork();
    if (child == 0) {
        signal(SIGINT, SIG_DFL);
        signal(SIGQUIT, SIG_DFL);
        if (per_rank) {
            signal(SIGTERM, SIG_DFL);
            sigprocmask(SIG_SETMASK, &old_mask, NULL);
        }
        execvp(program[0], program);
        fprintf(stderr, "fabmem run: %s: %s\n", program[0], strerror(errno));
        _exit(127);
    }
    run_child = child;
    if (per_rank)
        sigprocmask(SIG_SETMASK, &old_mask, NULL);
    int status = 0, rc = 1;
    if (child > 0) {
        while (waitpid(child, &status, 0) < 0 && errno == EINTR)
            ;
        rc = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    }
    run_child = 0;
    if (per_rank) {
        fab__job_leave(&job, run_sigterm != 0);
        if (check.on) {
            rc = run_check_collect(&check, rc);
            rmdir(check_dir);
        }
        return rc;
    }
    kill(daemon, SIGTERM);
    int daemon_status = 0;
    while (waitpid(daemon, &daemon_status, 0) < 0 && errno == EINTR)
        ;
    rc = run_check_collect(&check, rc);
    remove_tree(dir);
    if (!WIFEXITED(daemon_status) || WEXITSTATUS(daemon_status) != 0)
        fprintf(stderr, "fabmem run: the daemon did not exit cleanly\n");
    return rc;
}

