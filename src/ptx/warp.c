/* The warp as a whole: its call stack (register windows, local frames and
 * the .param copies of a call and its return), its SIMT stack's growth,
 * and the instructions that look across lanes (vote, match, redux, elect,
 * shfl, activemask) or past the warp (barriers, fences, nanosleep: these
 * end the quantum so that the scheduler, sched.c, can act). */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "src/ptx/exec.h"

int fab__ptx_simt_reserve(fab__ptx_warp_t *w, uint32_t n)
{
    if (w->depth + n <= w->st_cap)
        return 0;
    uint32_t cap = (w->depth + n) * 2;
    fab__ptx_simt_t *st = realloc(w->st, cap * sizeof(*st));
    if (!st)
        return -1;
    w->st = st;
    w->st_cap = cap;
    return 0;
}

int fab__ptx_call(fab__ptx_warp_t *w, const fab__ptx_code_t *g, const fab__ptx_callsite_t *cs, uint32_t m,
                  bool advance)
{
    const fab__ptx_frame_t *cf = &w->fr[w->nfr - 1];
    uint32_t base = cf->base + w->code->nslots, fp = cf->fp + w->code->frame;
    unsigned first = (unsigned)__builtin_ctz(m);
    if ((uint64_t)fp + g->frame > w->lstride)
        return fab__ptx_warp_fail(w, FAB__PTX_E_TRAP, first, 0, "the call stack overflows the local window");
    size_t need = (size_t)(base + g->nslots) * LANES_N;
    if (need > w->regs_cap) {
        /* grown by a quarter: a deep call chain's windows can be megabytes a
         * warp, and the grown file is kept for later runs (stash.c) */
        size_t cap = need + need / 4;
        uint64_t *r = realloc(w->regs, cap * sizeof(*r));
        if (!r)
            return fab__ptx_warp_fail(w, FAB__PTX_E_NOMEM, first, 0, "registers");
        /* defined from the start, as calloc's part is */
        memset(r + w->regs_cap, 0, (cap - w->regs_cap) * sizeof(*r));
        w->regs = r;
        w->regs_cap = cap;
    }
    if (w->nfr == w->fr_cap) {
        uint32_t cap = w->fr_cap * 2 + 4;
        fab__ptx_frame_t *f = realloc(w->fr, cap * sizeof(*f));
        if (!f)
            return fab__ptx_warp_fail(w, FAB__PTX_E_NOMEM, first, 0, "frames");
        w->fr = f;
        w->fr_cap = cap;
        cf = &w->fr[w->nfr - 1];
    }
    if (fab__ptx_simt_reserve(w, 1))
        return fab__ptx_warp_fail(w, FAB__PTX_E_NOMEM, first, 0, "the SIMT stack");
    uint32_t nargs = cs->nargs < g->func->nparams ? cs->nargs : g->func->nparams;
    for (unsigned l = 0; l < LANES_N; l++) {
        if (!(m >> l & 1))
            continue;
        unsigned char *lb = w->local + (size_t)l * w->lstride;
        for (uint32_t i = 0; i < nargs; i++) {
            uint64_t n = cs->arg_size[i] < g->func->params[i].size ? cs->arg_size[i] : g->func->params[i].size;
            memmove(lb + fp + g->param_off[i], lb + cf->fp + cs->arg_off[i], n);
        }
    }
    uint32_t pc = TOP->pc;
    if (advance)
        TOP->pc++;
    w->fr[w->nfr++] = (fab__ptx_frame_t){.code = g, .base = base, .fp = fp, .simt_base = w->depth,
                                         .call_pc = pc, .call_mask = m, .cs = cs};
    w->st[w->depth++] = (fab__ptx_simt_t){0, FAB__PTX_NONE, m};
    w->code = g;
    w->R = w->regs + (size_t)base * LANES_N;
    /* Registers start as an earlier activation left them: PTX leaves them
     * undefined, and zeroing a callee's window on every call (megabytes a
     * warp for NCCL's device functions) was most of a launch's time. */
    fab__ptx_window_init(w, g, w->R, fp);
    return R_JUMP;
}

void fab__ptx_return(fab__ptx_warp_t *w)
{
    const fab__ptx_frame_t *f = &w->fr[w->nfr - 1], *cf = &w->fr[w->nfr - 2];
    const fab__ptx_code_t *g = f->code;
    const fab__ptx_callsite_t *cs = f->cs;
    /* the lanes that called and have not exited: some wait in entries below the top
     * (an indirect call serialised by target) */
    uint32_t alive = 0;
    for (uint32_t i = 0; i < w->depth; i++)
        alive |= w->st[i].mask;
    uint32_t lanes = f->call_mask & alive;
    uint32_t nrets = cs->nrets < g->func->nrets ? cs->nrets : g->func->nrets;
    for (unsigned l = 0; l < LANES_N; l++) {
        if (!(lanes >> l & 1))
            continue;
        unsigned char *lb = w->local + (size_t)l * w->lstride;
        for (uint32_t i = 0; i < nrets; i++) {
            uint64_t n = cs->ret_size[i] < g->func->rets[i].size ? cs->ret_size[i] : g->func->rets[i].size;
            memmove(lb + cf->fp + cs->ret_off[i], lb + f->fp + g->ret_off[i], n);
        }
    }
    w->nfr--;
    w->code = cf->code;
    w->R = w->regs + (size_t)cf->base * LANES_N;
}

/* ---- collectives ---------------------------------------------------------------------- */

int fab__ptx_x_vote(W_ARGS)
{
    OPS3;
    uint32_t p = PGET(in->s[0]);
    if (in->aux & 1)
        p = ~p;
    p &= m;
    switch (in->k) {
    case W_(BALLOT):
        LANES(D[l] = p);
        return R_NEXT;
    case W_(ALL):
        PSET(in->d[0], p == m ? ~0u : 0, m);
        return R_NEXT;
    case W_(ANY):
        PSET(in->d[0], p ? ~0u : 0, m);
        return R_NEXT;
    default:
        PSET(in->d[0], (p == m || !p) ? ~0u : 0, m);
        return R_NEXT;
    }
}

int fab__ptx_x_match(W_ARGS)
{
    OPS3;
    uint64_t wm = in->t == T_(B64) ? ~0ull : 0xffffffffu;
    uint64_t v[LANES_N];
    for (unsigned l = 0; l < LANES_N; l++)
        v[l] = A[l] & wm;
    uint32_t same_all = m;
    unsigned first = (unsigned)__builtin_ctz(m);
    for (unsigned l = 0; l < LANES_N; l++)
        if ((m >> l & 1) && v[l] != v[first])
            same_all = 0;
    if (in->k == W_(ALL)) {
        LANES(D[l] = same_all);
        if (in->d[1] != FAB__PTX_NONE)
            PSET(in->d[1], same_all ? ~0u : 0, m);
        return R_NEXT;
    }
    uint32_t res[LANES_N];
    for (unsigned l = 0; l < LANES_N; l++) {
        res[l] = 0;
        if (!(m >> l & 1))
            continue;
        for (unsigned j = 0; j < LANES_N; j++)
            res[l] |= (uint32_t)((m >> j & 1) && v[j] == v[l]) << j;
    }
    LANES(D[l] = res[l]);
    return R_NEXT;
}

int fab__ptx_x_activemask(W_ARGS)
{
    OPS3;
    LANES(D[l] = m);
    return R_NEXT;
}

int fab__ptx_x_redux(W_ARGS)
{
    OPS3;
    bool s = in->t == T_(S32);
    unsigned first = (unsigned)__builtin_ctz(m);
    uint32_t r = (uint32_t)A[first];
    for (unsigned l = first + 1; l < LANES_N; l++) {
        if (!(m >> l & 1))
            continue;
        uint32_t v = (uint32_t)A[l];
        switch (in->k) {
        case W_(ADD): r += v; break;
        case W_(AND): r &= v; break;
        case W_(OR): r |= v; break;
        case W_(XOR): r ^= v; break;
        case W_(MIN): r = s ? ((int32_t)v < (int32_t)r ? v : r) : (v < r ? v : r); break;
        default: r = s ? ((int32_t)v > (int32_t)r ? v : r) : (v > r ? v : r); break;
        }
    }
    LANES(D[l] = r);
    return R_NEXT;
}

int fab__ptx_x_elect(W_ARGS)
{
    OPS3;
    uint32_t mm = m & (uint32_t)A[__builtin_ctz(m)];
    unsigned leader = mm ? (unsigned)__builtin_ctz(mm) : (unsigned)__builtin_ctz(m);
    LANES(D[l] = leader);
    if (in->d[1] != FAB__PTX_NONE)
        PSET(in->d[1], 1u << leader, m);
    return R_NEXT;
}

int fab__ptx_x_shfl(W_ARGS)
{
    OPS3;
    uint64_t src[LANES_N];
    memcpy(src, A, sizeof(src));
    uint32_t pv = 0;
    for (unsigned l = 0; l < LANES_N; l++) {
        if (!(m >> l & 1))
            continue;
        int b = (int)((uint32_t)B[l] & 0x1f);
        uint32_t c = (uint32_t)C[l];
        int clamp = (int)(c & 0x1f), seg = (int)((c >> 8) & 0x1f);
        int maxl = ((int)l & seg) | (clamp & ~seg), minl = (int)l & seg, j;
        bool ok;
        switch (in->k) {
        case W_(UP): j = (int)l - b; ok = j >= maxl; break;
        case W_(DOWN): j = (int)l + b; ok = j <= maxl; break;
        case W_(BFLY): j = (int)l ^ b; ok = j <= maxl; break;
        default: j = minl | (b & ~seg); ok = j <= maxl; break;
        }
        if (!ok)
            j = (int)l;
        D[l] = (uint32_t)src[j & 31];
        pv |= (uint32_t)ok << l;
    }
    if (in->d[1] != FAB__PTX_NONE)
        PSET(in->d[1], pv, m);
    return R_NEXT;
}

/* ---- past the warp -------------------------------------------------------------------- */

int fab__ptx_x_bar(W_ARGS)
{
    OPS3;
    unsigned first = (unsigned)__builtin_ctz(m);
    uint32_t id = (uint32_t)A[first];
    if (id >= FAB__PTX_MAXBAR)
        return fab__ptx_warp_fail(w, FAB__PTX_E_TRAP, first, 0, "a barrier id over 15");
    w->bar_id = id;
    w->bar_count = (in->aux & 1) ? (uint32_t)B[first] : 0;
    if ((in->aux & 1) && (w->bar_count == 0 || w->bar_count % 32))
        return fab__ptx_warp_fail(w, FAB__PTX_E_TRAP, first, 0, "a barrier thread count not a multiple of 32");
    w->bar_k = in->k;
    w->bar_t = in->k2;
    w->bar_mask = m;
    w->bar_dst = in->d[0];
    uint32_t p = in->k == 2 ? PGET(in->s[2]) : 0;
    if (in->aux & 2)
        p = ~p;
    w->bar_pred = p & m;
    return R_BAR;
}

int fab__ptx_x_nop(W_ARGS)
{
    (void)w, (void)in, (void)m;
    return R_NEXT;
}

int fab__ptx_x_fence(W_ARGS)
{
    (void)w, (void)in, (void)m;
    atomic_thread_fence(memory_order_seq_cst);
    return R_NEXT;
}

int fab__ptx_x_nanosleep(W_ARGS)
{
    (void)in, (void)m;
    w->spin_yield = true;
    return R_YIELD;
}
