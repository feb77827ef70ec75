/* The scheduler: fab__ptx_run. A grid's warps are cooperative contexts run
 * by a few worker threads (default: the online CPUs), each taking a warp
 * from one run queue for a quantum of instructions. Blocks start lazily,
 * when the queue runs dry or a warp yields in a spin (a polling load, a
 * failed compare-and-swap, nanosleep), so that every block of the grid is
 * live before any waits for ever on one not started. Barriers park warps
 * until their count arrives. A fault stops the whole grid; the worker that
 * touched a bad page learns of it through its SIGSEGV/SIGBUS handler
 * (installed once, chaining to the one before it for any fault not inside
 * the interpreter). The calling thread waits, and after launch->watch_ms
 * logs once which warps are still running and where. */
#include <errno.h>
#include <sched.h>
#include <fenv.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "src/ptx/exec.h"

/* fab__ptx_worker: spinning quanta in a row before the worker yields its core. */
#define FAB__PTX_SPINS_BEFORE_YIELD 64

#define FAB__PTX_QUANTUM 4096u

/* ---- faults ------------------------------------------------------------------------------ */

static _Thread_local sigjmp_buf *fab__ptx_jb;
static _Thread_local uintptr_t fab__ptx_si_addr;
static struct sigaction fab__ptx_old_segv, fab__ptx_old_bus;
static pthread_once_t fab__ptx_sig_once = PTHREAD_ONCE_INIT;

static void fab__ptx_on_fault(int sig, siginfo_t *info, void *uc)
{
    sigjmp_buf *jb = fab__ptx_jb;
    if (jb) {
        fab__ptx_jb = NULL;
        fab__ptx_si_addr = (uintptr_t)info->si_addr;
        siglongjmp(*jb, 1);
    }
    const struct sigaction *old = sig == SIGBUS ? &fab__ptx_old_bus : &fab__ptx_old_segv;
    if (old->sa_flags & SA_SIGINFO) {
        old->sa_sigaction(sig, info, uc);
    } else if (old->sa_handler != SIG_DFL && old->sa_handler != SIG_IGN) {
        old->sa_handler(sig);
    } else {
        signal(sig, SIG_DFL); /* the access runs again and the process dies of it, as it would have */
    }
}

static void fab__ptx_pool_atfork_child(void);

static void fab__ptx_sig_install(void)
{
    pthread_atfork(NULL, NULL, fab__ptx_pool_atfork_child);
    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_sigaction = fab__ptx_on_fault;
    /* NODEFER: the handler leaves by siglongjmp without restoring a mask */
    sa.sa_flags = SA_SIGINFO | SA_NODEFER;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGSEGV, &sa, &fab__ptx_old_segv);
    sigaction(SIGBUS, &sa, &fab__ptx_old_bus);
}

/* ---- time and logs ---------------------------------------------------------------------- */

uint64_t fab__ptx_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

void fab__ptx_log(const fab__ptx_run_t *run, const char *fmt, ...)
{
    char line[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof(line), fmt, ap);
    va_end(ap);
    const fab__ptx_host_t *h = run->launch->host;
    if (h && h->log)
        h->log(h->ctx, line);
    else
        fprintf(stderr, "fabmem ptx: %s\n", line);
}

/* ---- blocks ------------------------------------------------------------------------------ */

static void fab__ptx_enqueue(fab__ptx_run_t *run, fab__ptx_warp_t *w)
{
    w->next = NULL;
    if (run->qtail)
        run->qtail->next = w;
    else
        run->qhead = w;
    run->qtail = w;
    if (run->waiting)
        pthread_cond_signal(&run->cv);
}

static void fab__ptx_block_unlink(fab__ptx_run_t *run, fab__ptx_block_t *b)
{
    if (b->prev)
        b->prev->next = b->next;
    else
        run->blocks = b->next;
    if (b->next)
        b->next->prev = b->prev;
}

/* A block's memory goes to the stash, for the next run's blocks. */
static void fab__ptx_block_free(fab__ptx_block_t *b)
{
    if (!b)
        return;
    for (uint32_t i = 0; b->warps && i < b->nwarps; i++) {
        fab__ptx_stash_give(b->warps[i].regs, b->warps[i].regs_cap * sizeof(uint64_t));
        free(b->warps[i].st);
        free(b->warps[i].fr);
    }
    free(b->warps);
    fab__ptx_stash_give(b->shared, b->shared_cap);
    fab__ptx_stash_give(b->local, b->local_cap);
    free(b);
}

/* bytes of memory starting on an align boundary (a power of two, 16 at
 * least), from the stash where it has some (zeroed if zero; as it was left
 * otherwise), else fresh and zeroed; *cap its size. */
static void *fab__ptx_block_mem(size_t bytes, size_t align, bool zero, size_t *cap)
{
    void *p = fab__ptx_stash_take(bytes, align, cap);
    if (p) {
        if (zero)
            memset(p, 0, bytes);
        return p;
    }
    *cap = bytes;
    if (align <= 16)
        return calloc(bytes, 1);
    if (posix_memalign(&p, align, bytes) != 0)
        return NULL;
    memset(p, 0, bytes);
    return p;
}

/* Start the next block (the lock held). */
static int fab__ptx_block_start(fab__ptx_run_t *run)
{
    const fab__ptx_launch_t *la = run->launch;
    const struct fab__ptx_kernel *k = run->kernel;
    fab__ptx_block_t *b = run->spare;
    bool reuse = b != NULL;
    run->spare = NULL;
    if (!b)
        b = calloc(1, sizeof(*b));
    if (!b)
        return FAB__PTX_E_NOMEM;
    uint64_t lin = run->next_block++;
    b->prev = NULL;
    b->linear = (uint32_t)lin;
    b->ctaid[0] = (uint32_t)(lin % la->grid[0]);
    b->ctaid[1] = (uint32_t)(lin / la->grid[0] % la->grid[1]);
    b->ctaid[2] = (uint32_t)(lin / ((uint64_t)la->grid[0] * la->grid[1]));
    b->next = run->blocks;
    if (b->next)
        b->next->prev = b;
    run->blocks = b;
    b->shared_size = k->shared_dyn_off + la->dynamic_shared;
    uint32_t nt = run->nthreads;
    b->nwarps = (nt + LANES_N - 1) / LANES_N;
    b->live = b->nwarps;
    memset(b->bar, 0, sizeof(b->bar));
    /* Shared memory starts zeroed; local memory and registers as a block
     * before left them (PTX leaves both undefined, and a kernel's local
     * window can be megabytes a block: zeroing it would cost more than the
     * kernel). */
    if (reuse) {
        memset(b->shared, 0, b->shared_size ? b->shared_size : 1);
    } else {
        /* Both start on the largest alignment a variable of theirs asks
         * (.shared or .local .align 256, say: load.c). */
        b->shared = fab__ptx_block_mem(b->shared_size ? b->shared_size : 1, k->block_align, true,
                                       &b->shared_cap);
        b->warps = calloc(b->nwarps, sizeof(*b->warps));
        if (k->lstride) {
            size_t bytes = (size_t)b->nwarps * LANES_N * k->lstride;
            b->local = fab__ptx_block_mem(bytes, k->block_align, false, &b->local_cap);
        }
    }
    if (!b->shared || !b->warps || (k->lstride && !b->local))
        return FAB__PTX_E_NOMEM;
    const fab__ptx_code_t *c = k->code;
    size_t slots = k->max_window > c->nslots ? k->max_window : c->nslots;
    for (uint32_t i = 0; i < b->nwarps; i++) {
        fab__ptx_warp_t *w = &b->warps[i];
        w->run = run;
        w->blk = b;
        w->id = i;
        uint32_t n = nt - i * LANES_N < LANES_N ? nt - i * LANES_N : LANES_N;
        w->lanes = n == LANES_N ? 0xffffffffu : (1u << n) - 1;
        if (!reuse) /* the same in every block of the run */
            for (unsigned l = 0; l < LANES_N; l++) {
                uint32_t t = i * LANES_N + l;
                w->tid[l][0] = t % la->block[0];
                w->tid[l][1] = t / la->block[0] % la->block[1];
                w->tid[l][2] = t / (la->block[0] * la->block[1]);
            }
        if (!reuse) {
            size_t got = 0;
            w->regs = fab__ptx_stash_take(slots * LANES_N * sizeof(uint64_t), 16, &got);
            w->regs_cap = got / sizeof(uint64_t);
            if (!w->regs) {
                w->regs_cap = slots * LANES_N;
                w->regs = calloc(w->regs_cap, sizeof(uint64_t));
            }
            w->st_cap = 8;
            w->st = malloc(w->st_cap * sizeof(*w->st));
            w->fr_cap = 4;
            w->fr = malloc(w->fr_cap * sizeof(*w->fr));
        }
        w->state = FAB__PTX_WS_RUN;
        w->cc = 0;
        w->spins = 0;
        w->stored = false;
        w->yields = 0;
        w->spin_yield = false;
        if (!w->regs || !w->st || !w->fr)
            return FAB__PTX_E_NOMEM;
        w->st[0] = (fab__ptx_simt_t){0, FAB__PTX_NONE, w->lanes};
        w->depth = 1;
        w->fr[0] = (fab__ptx_frame_t){.code = c};
        w->nfr = 1;
        w->code = c;
        w->R = w->regs;
        w->lstride = k->lstride;
        w->local = b->local ? b->local + (size_t)i * LANES_N * k->lstride : NULL;
        w->spin_pc = FAB__PTX_NONE;
        fab__ptx_window_init(w, c, w->R, 0);
        fab__ptx_enqueue(run, w);
    }
    return 0;
}

static void fab__ptx_stop(fab__ptx_run_t *run, fab__ptx_warp_t *w)
{
    if (atomic_load(&run->stop))
        return;
    atomic_store(&run->stop, true);
    fab__ptx_fault_t *f = &run->fault;
    run->status = (fab__ptx_status_t)w->status;
    f->status = run->status;
    f->address = w->fault_addr;
    if (w->blk)
        memcpy(f->block, w->blk->ctaid, sizeof(f->block));
    memcpy(f->thread, w->tid[w->fault_lane & 31], sizeof(f->thread));
    const fab__ptx_simt_t *t = w->depth ? &w->st[w->depth - 1] : NULL;
    const fab__ptx_x_t *in = t && t->pc < w->code->nx ? &w->code->x[t->pc] : NULL;
    f->line = in ? in->line : 0;
    if (in && (f->status == FAB__PTX_E_FAULT || f->status == FAB__PTX_E_MISALIGNED)) {
        f->size = (uint32_t)in->size * (in->vec ? in->vec : 1);
        f->write = in->op == FAB__PTX_OP_ST || in->op == FAB__PTX_OP_RED || in->op == FAB__PTX_OP_ATOM ||
                   in->op == FAB__PTX_OP_MULTIMEM_ST || in->op == FAB__PTX_OP_MULTIMEM_RED;
    }
    snprintf(f->report, sizeof(f->report),
             "kernel %s: block (%u,%u,%u) thread (%u,%u,%u) PTX line %u (%s): %s, address 0x%llx",
             run->kernel->info.name, f->block[0], f->block[1], f->block[2], f->thread[0], f->thread[1],
             f->thread[2], f->line, w->code->func->name, w->msg, (unsigned long long)f->address);
    pthread_cond_broadcast(&run->cv);
    pthread_cond_broadcast(&run->done_cv);
}

/* ---- barriers ---------------------------------------------------------------------------- */

static void fab__ptx_bar_check(fab__ptx_run_t *run, fab__ptx_block_t *b, uint32_t id)
{
    fab__ptx_barrier_t *bar = &b->bar[id];
    if (!bar->arrived || bar->arrived < (bar->expected ? bar->expected : b->live))
        return;
    uint32_t popc = bar->red_popc;
    bool all = bar->red_and, any = bar->red_or;
    memset(bar, 0, sizeof(*bar));
    for (uint32_t i = 0; i < b->nwarps; i++) {
        fab__ptx_warp_t *w = &b->warps[i];
        if (w->state != FAB__PTX_WS_BAR || w->bar_id != id)
            continue;
        if (w->bar_k == 2) {
            uint64_t *D = w->R + (size_t)w->bar_dst * LANES_N;
            if (w->bar_t == W_(POPC)) {
                for (unsigned l = 0; l < LANES_N; l++)
                    if (w->bar_mask >> l & 1)
                        D[l] = popc;
            } else {
                uint32_t v = (w->bar_t == W_(AND) ? all : any) ? ~0u : 0;
                D[0] = ((uint32_t)D[0] & ~w->bar_mask) | (v & w->bar_mask);
            }
        }
        w->state = FAB__PTX_WS_RUN;
        fab__ptx_enqueue(run, w);
    }
}

static void fab__ptx_bar_arrive(fab__ptx_run_t *run, fab__ptx_warp_t *w)
{
    fab__ptx_block_t *b = w->blk;
    fab__ptx_barrier_t *bar = &b->bar[w->bar_id];
    if (!bar->arrived) {
        bar->red_and = true;
        bar->red_or = false;
    }
    bar->arrived++;
    if (w->bar_count)
        bar->expected = w->bar_count / LANES_N;
    bar->red_popc += (uint32_t)__builtin_popcount(w->bar_pred);
    bar->red_and = bar->red_and && w->bar_pred == w->bar_mask;
    bar->red_or = bar->red_or || w->bar_pred;
    if (w->bar_k == 1) {
        fab__ptx_enqueue(run, w); /* arrive: does not wait */
    } else {
        w->state = FAB__PTX_WS_BAR;
    }
    fab__ptx_bar_check(run, b, w->bar_id);
}

/* ---- workers ----------------------------------------------------------------------------- */

static int fab__ptx_quantum(fab__ptx_warp_t *w)
{
    sigjmp_buf jb;
    if (sigsetjmp(jb, 0)) {
        fesetround(FE_TONEAREST);
        uintptr_t a = fab__ptx_si_addr;
        return fab__ptx_warp_fail(w, FAB__PTX_E_FAULT, fab__ptx_fault_lane(w, a), a,
                             "an access to memory not mapped or not accessible so");
    }
    fab__ptx_jb = &jb;
    int r = fab__ptx_exec(w, FAB__PTX_QUANTUM);
    fab__ptx_jb = NULL;
    return r;
}

static void *fab__ptx_worker(void *arg)
{
    fab__ptx_run_t *run = arg;
    /* Quanta in a row that ended spinning: when every warp this worker
     * meets only spins, what they wait for is elsewhere (another worker,
     * another process, the host), so the core is given up for a moment. */
    unsigned spun = 0;
    pthread_mutex_lock(&run->mu);
    while (!atomic_load(&run->stop)) {
        fab__ptx_warp_t *w = run->qhead;
        if (!w) {
            if (run->next_block < run->nblocks) {
                int rc = fab__ptx_block_start(run);
                if (rc) {
                    fab__ptx_warp_t tmp = {.status = rc, .code = run->kernel->code};
                    snprintf(tmp.msg, sizeof(tmp.msg), "out of memory starting a block");
                    fab__ptx_stop(run, &tmp);
                }
                continue;
            }
            if (run->done_blocks == run->nblocks)
                break;
            run->waiting++;
            pthread_cond_wait(&run->cv, &run->mu);
            run->waiting--;
            continue;
        }
        run->qhead = w->next;
        if (!run->qhead)
            run->qtail = NULL;
        pthread_mutex_unlock(&run->mu);
        int r = fab__ptx_quantum(w);
        pthread_mutex_lock(&run->mu);
        switch (r) {
        case R_YIELD: {
            bool spin = w->spin_yield;
            w->spin_yield = false;
            w->yields += spin;
            fab__ptx_enqueue(run, w);
            if (spin && ++spun >= FAB__PTX_SPINS_BEFORE_YIELD) {
                spun = 0;
                pthread_mutex_unlock(&run->mu);
                sched_yield();
                pthread_mutex_lock(&run->mu);
            } else if (!spin) {
                spun = 0;
            }
            if (spin && run->next_block < run->nblocks && fab__ptx_block_start(run)) {
                fab__ptx_warp_t tmp = {.status = FAB__PTX_E_NOMEM, .code = run->kernel->code};
                snprintf(tmp.msg, sizeof(tmp.msg), "out of memory starting a block");
                fab__ptx_stop(run, &tmp);
            }
            break;
        }
        case R_BAR:
            spun = 0;
            fab__ptx_bar_arrive(run, w);
            break;
        case R_DONE: {
            fab__ptx_block_t *b = w->blk;
            w->state = FAB__PTX_WS_DONE;
            if (--b->live == 0) {
                fab__ptx_block_unlink(run, b);
                if (run->spare)
                    fab__ptx_block_free(b);
                else
                    run->spare = b;
                if (++run->done_blocks == run->nblocks) {
                    pthread_cond_broadcast(&run->cv);
                    pthread_cond_broadcast(&run->done_cv);
                }
            } else {
                for (uint32_t id = 0; id < FAB__PTX_MAXBAR; id++)
                    fab__ptx_bar_check(run, b, id);
            }
            break;
        }
        default:
            fab__ptx_stop(run, w);
            break;
        }
    }
    /* the last worker out tells the launching thread, which frees the run */
    if (--run->workers_live == 0)
        pthread_cond_broadcast(&run->done_cv);
    pthread_mutex_unlock(&run->mu);
    return NULL;
}

/* ---- the thread cache ------------------------------------------------------------------ */

/* Worker threads outlive their run: an idle one waits up to 10 s for another
 * run to join, so a launch costs no thread creation. A run still gets
 * workers of its own (an idle one, else a new one): runs may wait on each
 * other, so none may wait for another's worker. */
typedef struct fab__ptx_idle {
    pthread_cond_t cv;
    fab__ptx_run_t *run;
    struct fab__ptx_idle *next;
} fab__ptx_idle_t;

static pthread_mutex_t fab__ptx_pool_mu = PTHREAD_MUTEX_INITIALIZER;
static fab__ptx_idle_t *fab__ptx_idle_list;

static void fab__ptx_pool_atfork_child(void)
{
    fab__ptx_stash_atfork_child();
    /* the idle threads are the parent's: the child has none */
    pthread_mutex_t fresh = PTHREAD_MUTEX_INITIALIZER;
    fab__ptx_pool_mu = fresh;
    fab__ptx_idle_list = NULL;
}

static void *fab__ptx_pool_thread(void *arg)
{
    fab__ptx_run_t *run = arg;
    fab__ptx_idle_t me = {.run = NULL};
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&me.cv, &ca);
    pthread_condattr_destroy(&ca);
    for (;;) {
        fab__ptx_worker(run);
        pthread_mutex_lock(&fab__ptx_pool_mu);
        me.run = NULL;
        me.next = fab__ptx_idle_list;
        fab__ptx_idle_list = &me;
        struct timespec dl;
        clock_gettime(CLOCK_MONOTONIC, &dl);
        dl.tv_sec += 10;
        while (!me.run) {
            if (pthread_cond_timedwait(&me.cv, &fab__ptx_pool_mu, &dl) == ETIMEDOUT && !me.run) {
                for (fab__ptx_idle_t **pp = &fab__ptx_idle_list; *pp; pp = &(*pp)->next)
                    if (*pp == &me) {
                        *pp = me.next;
                        break;
                    }
                pthread_mutex_unlock(&fab__ptx_pool_mu);
                pthread_cond_destroy(&me.cv);
                return NULL;
            }
        }
        run = me.run;
        pthread_mutex_unlock(&fab__ptx_pool_mu);
    }
}

/* One more worker for run: an idle thread, else a new one. */
static int fab__ptx_pool_start(fab__ptx_run_t *run)
{
    pthread_mutex_lock(&fab__ptx_pool_mu);
    fab__ptx_idle_t *t = fab__ptx_idle_list;
    if (t) {
        fab__ptx_idle_list = t->next;
        t->run = run;
        pthread_cond_signal(&t->cv);
        pthread_mutex_unlock(&fab__ptx_pool_mu);
        return 0;
    }
    pthread_mutex_unlock(&fab__ptx_pool_mu);
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    pthread_t th;
    int rc = pthread_create(&th, &attr, fab__ptx_pool_thread, run);
    pthread_attr_destroy(&attr);
    return rc;
}

/* The watchdog's one report: the kernel and where each live warp is. */
static void fab__ptx_watch_report(fab__ptx_run_t *run)
{
    fab__ptx_log(run, "kernel %s still running after %u ms: %llu of %llu blocks done, %llu started",
                 run->kernel->info.name, run->launch->watch_ms, (unsigned long long)run->done_blocks,
                 (unsigned long long)run->nblocks, (unsigned long long)run->next_block);
    unsigned shown = 0;
    for (fab__ptx_block_t *b = run->blocks; b && shown < 16; b = b->next)
        for (uint32_t i = 0; i < b->nwarps && shown < 16; i++) {
            const fab__ptx_warp_t *w = &b->warps[i];
            if (w->state == FAB__PTX_WS_DONE || !w->depth)
                continue;
            const fab__ptx_simt_t *t = &w->st[w->depth - 1];
            shown++;
            fab__ptx_log(run, "  block (%u,%u,%u) warp %u: %s at PTX line %u in %s, %llu spin yields",
                         b->ctaid[0], b->ctaid[1], b->ctaid[2], i,
                         w->state == FAB__PTX_WS_BAR ? "waiting at a barrier" : "running",
                         t->pc < w->code->nx ? w->code->x[t->pc].line : 0, w->code->func->name,
                         (unsigned long long)w->yields);
        }
}

fab__ptx_status_t fab__ptx_run(const fab__ptx_launch_t *la, fab__ptx_fault_t *fault_out)
{
    if (fault_out)
        memset(fault_out, 0, sizeof(*fault_out));
    if (!la || !la->kernel)
        return FAB__PTX_E_INVALID;
    const struct fab__ptx_kernel *k = la->kernel;
    uint64_t nt = (uint64_t)la->block[0] * la->block[1] * la->block[2];
    uint64_t nb = (uint64_t)la->grid[0] * la->grid[1] * la->grid[2];
    if (!nt || !nb || nt > 1024 || nt > k->info.max_threads)
        return FAB__PTX_E_INVALID;
    if (k->info.reqntid[0] && (la->block[0] != k->info.reqntid[0] || la->block[1] != k->info.reqntid[1] ||
                               la->block[2] != k->info.reqntid[2]))
        return FAB__PTX_E_INVALID;
    if (k->info.param_bytes && !la->params)
        return FAB__PTX_E_INVALID;
    if (k->shared_dyn_off + la->dynamic_shared > (1u << 20))
        return FAB__PTX_E_INVALID;
    pthread_once(&fab__ptx_sig_once, fab__ptx_sig_install);
    fab__ptx_run_t *run = calloc(1, sizeof(*run));
    if (!run)
        return FAB__PTX_E_NOMEM;
    run->launch = la;
    run->kernel = k;
    run->program = k->program;
    run->nblocks = nb;
    run->nthreads = (uint32_t)nt;
    run->t0_ns = fab__ptx_now_ns();
    pthread_mutex_init(&run->mu, NULL);
    pthread_mutex_init(&run->print_mu, NULL);
    pthread_cond_init(&run->cv, NULL);
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&run->done_cv, &ca);
    pthread_condattr_destroy(&ca);
    unsigned nw = la->workers;
    if (!nw) {
        long c = sysconf(_SC_NPROCESSORS_ONLN);
        nw = c > 0 ? (unsigned)c : 1;
    }
    uint64_t warps = nb * ((nt + LANES_N - 1) / LANES_N);
    if (nw > warps)
        nw = (unsigned)warps;
    if (nw > 256)
        nw = 256;
    /* With no watchdog to keep, the launching thread is one of the workers. */
    bool inline_worker = !la->watch_ms;
    unsigned started = 0, others = nw - inline_worker;
    pthread_mutex_lock(&run->mu);
    run->workers_live = nw;
    pthread_mutex_unlock(&run->mu);
    for (; started < others; started++)
        if (fab__ptx_pool_start(run) != 0)
            break;
    if (started < others) {
        pthread_mutex_lock(&run->mu);
        run->workers_live -= others - started;
        pthread_mutex_unlock(&run->mu);
    }
    started += inline_worker;
    fab__ptx_status_t st = FAB__PTX_OK;
    if (!started) {
        st = FAB__PTX_E_NOMEM;
        atomic_store(&run->stop, true);
    }
    if (inline_worker)
        fab__ptx_worker(run);
    struct timespec t0;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    bool watched = false;
    pthread_mutex_lock(&run->mu);
    while (started && !atomic_load(&run->stop) && run->done_blocks < run->nblocks) {
        if (la->watch_ms && !watched) {
            struct timespec dl = t0;
            dl.tv_sec += la->watch_ms / 1000;
            dl.tv_nsec += (long)(la->watch_ms % 1000) * 1000000L;
            if (dl.tv_nsec >= 1000000000L)
                dl.tv_sec++, dl.tv_nsec -= 1000000000L;
            if (pthread_cond_timedwait(&run->done_cv, &run->mu, &dl) == ETIMEDOUT) {
                watched = true;
                fab__ptx_watch_report(run);
            }
        } else {
            pthread_cond_wait(&run->done_cv, &run->mu);
        }
    }
    while (run->workers_live)
        pthread_cond_wait(&run->done_cv, &run->mu);
    pthread_mutex_unlock(&run->mu);
    if (started && atomic_load(&run->stop)) {
        st = run->status;
        if (fault_out)
            *fault_out = run->fault;
    }
    while (run->blocks) {
        fab__ptx_block_t *b = run->blocks;
        fab__ptx_block_unlink(run, b);
        fab__ptx_block_free(b);
    }
    fab__ptx_block_free(run->spare);
    pthread_cond_destroy(&run->cv);
    pthread_cond_destroy(&run->done_cv);
    pthread_mutex_destroy(&run->mu);
    pthread_mutex_destroy(&run->print_mu);
    free(run);
    return st;
}
