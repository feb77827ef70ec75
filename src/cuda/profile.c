/* FABMEM_PTX_PROFILE: where the PTX engine's time goes, per instruction of
 * the programs' own PTX (docs/ptx.md, "Profiles"). When the variable names a
 * file, every module's program is profiled from its build
 * (fab__ptx_program_profile), and its report is appended to that file when
 * the module is unloaded, or at exit for a module still loaded: what its
 * functions, opcodes and hottest PTX lines ran, as warp instructions and
 * spin yields; a module none of whose kernels ran has none. Each report is
 * one write() to a file opened with O_APPEND,
 * so that the processes of a job can share one file without their reports
 * mixing.
 *
 * Lifecycle of a profiled program: fab__cu_profile_start at build (on the
 * list) ─▶ launches count ─▶ fab__cu_profile_end before it is freed (its
 * report written, off the list), or the exit handler's report (written, and
 * the program marked so that a later unload adds no second one). */
#include "src/cuda/profile.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "src/base/env.h"
#include "src/common/log.h"

/* How many rows each part of a report has at most. */
#define FAB__CU_PROFILE_FUNCS 20
#define FAB__CU_PROFILE_OPS 20
#define FAB__CU_PROFILE_LINES 40

typedef struct fab__cu_profiled {
    struct fab__cu_profiled *next;
    const fab__ptx_program_t *ptx;
} fab__cu_profiled_t;

static pthread_mutex_t fab__cu_profile_mu = PTHREAD_MUTEX_INITIALIZER;
static fab__cu_profiled_t *fab__cu_profile_list;
static bool fab__cu_profile_exited;
static bool fab__cu_profile_hooked;

static const char *fab__cu_profile_file(void)
{
    const char *f = getenv(FAB__ENV_PTX_PROFILE);
    return f && *f ? f : NULL;
}

typedef struct fab__cu_profile_row {
    const char *name;
    uint64_t runs, spins;
} fab__cu_profile_row_t;

static int fab__cu_profile_row_cmp(const void *a, const void *b)
{
    const fab__cu_profile_row_t *x = a, *y = b;
    if (x->runs != y->runs)
        return x->runs < y->runs ? 1 : -1;
    return strcmp(x->name, y->name);
}

/* Sum lines by a name (the function's or the opcode's) into rows. */
static size_t fab__cu_profile_group(const fab__ptx_profile_line_t *lines, size_t n, bool by_op,
                                    fab__cu_profile_row_t *rows)
{
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        const char *name = by_op ? fab__ptx_op_name(lines[i].op) : lines[i].func;
        size_t j = 0;
        while (j < k && strcmp(rows[j].name, name) != 0)
            j++;
        if (j == k)
            rows[k++] = (fab__cu_profile_row_t){name, 0, 0};
        rows[j].runs += lines[i].runs;
        rows[j].spins += lines[i].spins;
    }
    qsort(rows, k, sizeof(*rows), fab__cu_profile_row_cmp);
    return k;
}

static double fab__cu_profile_share(uint64_t part, uint64_t total)
{
    return total ? 100.0 * (double)part / (double)total : 0.0;
}

/* Format the report of one program into out (a memstream). */
static void fab__cu_profile_format(FILE *out, const fab__ptx_program_t *ptx, const char *when)
{
    size_t cap = fab__ptx_program_ninsns(ptx);
    fab__ptx_profile_line_t *lines = calloc(cap ? cap : 1, sizeof(*lines));
    fab__cu_profile_row_t *rows = calloc(cap ? cap : 1, sizeof(*rows));
    if (!lines || !rows) {
        fprintf(out, "# fabmem PTX profile: pid %ld: out of memory for the report\n", (long)getpid());
        free(lines);
        free(rows);
        return;
    }
    uint64_t total = 0, spins = 0;
    size_t n = fab__ptx_program_profile_read(ptx, lines, cap, &total);
    for (size_t i = 0; i < n; i++)
        spins += lines[i].spins;
    size_t nk = fab__ptx_program_nkernels(ptx);
    fab__ptx_kernel_info_t first = {0};
    if (nk)
        fab__ptx_kernel_info(fab__ptx_program_kernel_at(ptx, 0), &first);
    fprintf(out, "# fabmem PTX profile: pid %ld (%s), a module of %zu kernel%s (the first %s), %s\n",
            (long)getpid(), program_invocation_name, nk, nk == 1 ? "" : "s",
            first.name ? first.name : "-", when);
    fprintf(out, "# %llu warp instructions run, %llu spin yields, %zu of %zu instructions ever run\n",
            (unsigned long long)total, (unsigned long long)spins, n, cap);
    if (n) {
        size_t k = fab__cu_profile_group(lines, n, false, rows);
        fprintf(out, "# by function: share, runs, spin yields, function\n");
        for (size_t i = 0; i < k && i < FAB__CU_PROFILE_FUNCS; i++)
            fprintf(out, "%6.2f%% %14llu %10llu  %s\n", fab__cu_profile_share(rows[i].runs, total),
                    (unsigned long long)rows[i].runs, (unsigned long long)rows[i].spins, rows[i].name);
        k = fab__cu_profile_group(lines, n, true, rows);
        fprintf(out, "# by opcode: share, runs, spin yields, opcode\n");
        for (size_t i = 0; i < k && i < FAB__CU_PROFILE_OPS; i++)
            fprintf(out, "%6.2f%% %14llu %10llu  %s\n", fab__cu_profile_share(rows[i].runs, total),
                    (unsigned long long)rows[i].runs, (unsigned long long)rows[i].spins, rows[i].name);
        fprintf(out, "# hottest lines: share, runs, spin yields, PTX line, opcode, function\n");
        for (size_t i = 0; i < n && i < FAB__CU_PROFILE_LINES; i++)
            fprintf(out, "%6.2f%% %14llu %10llu  %7u  %-12s %s\n", fab__cu_profile_share(lines[i].runs, total),
                    (unsigned long long)lines[i].runs, (unsigned long long)lines[i].spins, lines[i].line,
                    fab__ptx_op_name(lines[i].op), lines[i].func);
    }
    free(lines);
    free(rows);
}

/* Append the report of one program to the file, in one write. */
static void fab__cu_profile_write(const fab__ptx_program_t *ptx, const char *when)
{
    const char *file = fab__cu_profile_file();
    if (!file)
        return;
    uint64_t total = 0;
    (void)fab__ptx_program_profile_read(ptx, NULL, 0, &total);
    if (!total)
        return; /* none of its kernels ran: nothing to say */
    char *buf = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&buf, &len);
    if (!out)
        return;
    fab__cu_profile_format(out, ptx, when);
    if (fclose(out) != 0) {
        free(buf);
        return;
    }
    int fd = open(file, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
    if (fd < 0) {
        fab__log(FAB__LOG_WARN, "%s %s: %s: no PTX profile written", FAB__ENV_PTX_PROFILE, file,
                 strerror(errno));
    } else {
        ssize_t w = write(fd, buf, len);
        if (w < 0 || (size_t)w != len)
            fab__log(FAB__LOG_WARN, "%s %s: %s: the PTX profile is cut short", FAB__ENV_PTX_PROFILE,
                     file, w < 0 ? strerror(errno) : "a short write");
        close(fd);
    }
    free(buf);
}

static void fab__cu_profile_at_exit(void)
{
    pthread_mutex_lock(&fab__cu_profile_mu);
    fab__cu_profile_exited = true;
    for (fab__cu_profiled_t *e = fab__cu_profile_list; e; e = e->next)
        fab__cu_profile_write(e->ptx, "at exit");
    pthread_mutex_unlock(&fab__cu_profile_mu);
}

CUresult fab__cu_profile_start(fab__ptx_program_t *ptx)
{
    if (!ptx || !fab__cu_profile_file())
        return CUDA_SUCCESS;
    fab__cu_profiled_t *e = calloc(1, sizeof(*e));
    if (!e || fab__ptx_program_profile(ptx) != FAB__PTX_OK) {
        free(e);
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
    e->ptx = ptx;
    pthread_mutex_lock(&fab__cu_profile_mu);
    e->next = fab__cu_profile_list;
    fab__cu_profile_list = e;
    if (!fab__cu_profile_hooked) {
        fab__cu_profile_hooked = true;
        atexit(fab__cu_profile_at_exit);
    }
    pthread_mutex_unlock(&fab__cu_profile_mu);
    return CUDA_SUCCESS;
}

void fab__cu_profile_end(const fab__ptx_program_t *ptx)
{
    if (!ptx)
        return;
    pthread_mutex_lock(&fab__cu_profile_mu);
    for (fab__cu_profiled_t **pe = &fab__cu_profile_list; *pe; pe = &(*pe)->next) {
        if ((*pe)->ptx != ptx)
            continue;
        fab__cu_profiled_t *e = *pe;
        *pe = e->next;
        if (!fab__cu_profile_exited)
            fab__cu_profile_write(ptx, "at unload");
        free(e);
        break;
    }
    pthread_mutex_unlock(&fab__cu_profile_mu);
}
