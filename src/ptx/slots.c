/* The register slot allocator: once a function is decoded (decode.c), with
 * each PTX register numbered as its own slot, its registers are packed onto
 * as few window slots as their live ranges allow, so that a warp's window
 * (256 bytes a slot) is the registers live at once, not every register
 * nvcc declared (NCCL's inlined device functions declare about 9,800).
 *
 * Why it is sound. A handler reads the slots of s[], addr and guard and
 * writes the slots of d[], each in the lanes of its mask only (a value slot:
 * each lane's whole 64-bit word; a predicate slot: the mask's bits of lane
 * 0's word), so each lane's registers are its own, and each lane runs one
 * path of the control-flow graph whatever the SIMT stack's order. Liveness
 * over that graph (both sides of every branch, loop back edges, a guarded
 * write that kills nothing) is then liveness for every lane, and two
 * registers may share a slot when no instruction writes one where the other
 * is live. Conservative on purpose:
 *   - live ranges are hulls [first, last] in instruction order, and a
 *     register live into or out of a basic block covers the whole block;
 *   - an instruction's destinations overlap its sources and each other, so
 *     no handler sees a destination alias a source it has yet to read;
 *   - predicates share only with predicates (one mask in lane 0's word, which
 *     a value's lane 0 would overwrite), values only with values;
 *   - a register live at the function's entry (read before written on some
 *     path: it starts as an earlier block or activation left it, docs/ptx.md)
 *     and the source of shfl (which reads lanes that are not active) each
 *     keep a slot of their own;
 *   - a function with an instruction whose handler was not checked against
 *     that contract (FAB__PTX_SLOTS_CHECKED), a slot field the allocator does
 *     not recognise, or liveness sets over 256 MiB keeps one slot per
 *     register.
 * Calls need nothing: a callee's window lies past its caller's, and
 * arguments travel in .param memory. A .b128 register is two registers here,
 * its low half (the PTX register's own number) and its high half (numbered
 * after the function's registers by decode.c): every instruction that names
 * it names both, through s[] or d[], so the two get the same range and each
 * a 64-bit value slot, adjacent or not. */
#include <stdlib.h>
#include <string.h>

#include "src/ptx/decode.h"

#define FAB__PTX_SLOTS_MAX_BYTES ((size_t)256 << 20)
#define NRD 6 /* s[0..3], addr, guard */
#define NWR 4 /* d[0..3] */

static uint32_t *fab__ptx_rd(fab__ptx_x_t *x, unsigned k)
{
    return k < 4 ? &x->s[k] : k == 4 ? &x->addr : &x->guard;
}

static bool fab__ptx_ends(const fab__ptx_x_t *x)
{
    return x->op == FAB__PTX_OP_BRA || x->op == FAB__PTX_OP_RET || x->op == FAB__PTX_OP_EXIT ||
           x->op == FAB__PTX_OP_TRAP || x->op == FAB__PTX_OP_BRKPT;
}

/* The opcodes whose handlers were checked against exec.h's contract (they
 * read registers only through s[], addr and guard, write them only through
 * d[], and only in the lanes of m): every one that ran when this was
 * written (MOV, LD, ST and ATOM with their .b128 forms, wide.c's handlers,
 * which read both halves through s[] and write them through d[]). A
 * function that uses any other keeps one slot per register, and
 * ptx.every_instruction_that_runs_is_checked_for_register_slots fails until
 * its handler is checked and the opcode is listed here. */
#define FAB__PTX_SLOTS_CHECKED(X) \
    X(ADD) X(SUB) X(MUL) X(MAD) X(MUL24) X(MAD24) X(SAD) X(DIV) X(REM) X(ABS) X(NEG) X(MIN) \
    X(MAX) X(POPC) X(CLZ) X(BFIND) X(BREV) X(BFE) X(BFI) X(SZEXT) X(BMSK) X(DP4A) X(DP2A) \
    X(ADD_CC) X(ADDC) X(SUB_CC) X(SUBC) X(MAD_CC) X(MADC) X(TESTP) X(COPYSIGN) X(FMA) X(RCP) \
    X(SQRT) X(RSQRT) X(SIN) X(COS) X(LG2) X(EX2) X(TANH) X(SET) X(SETP) X(SELP) X(SLCT) \
    X(AND) X(OR) X(XOR) X(NOT) X(CNOT) X(LOP3) X(SHF) X(SHL) X(SHR) X(MOV) X(SHFL) \
    X(SHFL_SYNC) X(PRMT) X(LD) X(LDU) X(ST) X(MULTIMEM_LD_REDUCE) X(MULTIMEM_ST) \
    X(MULTIMEM_RED) X(PREFETCH) X(PREFETCHU) X(APPLYPRIORITY) X(DISCARD) X(ISSPACEP) X(CVTA) \
    X(CVT) X(CP_ASYNC) X(CP_ASYNC_COMMIT_GROUP) X(CP_ASYNC_WAIT_GROUP) X(CP_ASYNC_WAIT_ALL) \
    X(BRA) X(CALL) X(RET) X(EXIT) X(BAR_SYNC) X(BAR_ARRIVE) X(BAR_RED) X(BAR_CTA_SYNC) \
    X(BAR_CTA_ARRIVE) X(BAR_CTA_RED) X(BARRIER_SYNC) X(BARRIER_ARRIVE) X(BARRIER_RED) \
    X(BARRIER_CTA_SYNC) X(BARRIER_CTA_ARRIVE) X(BARRIER_CTA_RED) X(BAR_WARP_SYNC) X(MEMBAR) \
    X(FENCE) X(ATOM) X(RED) X(VOTE) X(VOTE_SYNC) X(MATCH_SYNC) X(ACTIVEMASK) X(REDUX_SYNC) \
    X(GRIDDEPCONTROL) X(ELECT_SYNC) X(MBARRIER_INIT) X(MBARRIER_INVAL) X(MBARRIER_ARRIVE) \
    X(MBARRIER_ARRIVE_DROP) X(MBARRIER_TEST_WAIT) X(MBARRIER_TRY_WAIT) \
    X(MBARRIER_PENDING_COUNT) X(BRKPT) X(NANOSLEEP) X(PMEVENT) X(TRAP) X(SETMAXNREG)

static const bool fab__ptx_checked[FAB__PTX_OP_COUNT] = {
#define FAB__PTX_CHECKED_ROW(id) [FAB__PTX_OP_##id] = true,
    FAB__PTX_SLOTS_CHECKED(FAB__PTX_CHECKED_ROW)
#undef FAB__PTX_CHECKED_ROW
};

bool fab__ptx_slots_checked(unsigned op)
{
    return op < FAB__PTX_OP_COUNT && fab__ptx_checked[op];
}

typedef struct fab__ptx_iv {
    uint32_t lo, hi, reg;
} fab__ptx_iv_t;

/* A min-heap of (end, slot): the slots in use, the one that frees first on top. */
typedef struct fab__ptx_heap {
    uint64_t *v;
    uint32_t n;
} fab__ptx_heap_t;

static void fab__ptx_heap_push(fab__ptx_heap_t *h, uint64_t e)
{
    uint32_t i = h->n++;
    while (i && h->v[(i - 1) / 2] > e) {
        h->v[i] = h->v[(i - 1) / 2];
        i = (i - 1) / 2;
    }
    h->v[i] = e;
}

static uint64_t fab__ptx_heap_pop(fab__ptx_heap_t *h)
{
    uint64_t top = h->v[0], last = h->v[--h->n];
    uint32_t i = 0;
    for (;;) {
        uint32_t c = 2 * i + 1;
        if (c >= h->n)
            break;
        if (c + 1 < h->n && h->v[c + 1] < h->v[c])
            c++;
        if (h->v[c] >= last)
            break;
        h->v[i] = h->v[c];
        i = c;
    }
    if (h->n)
        h->v[i] = last;
    return top;
}

/* Linear scan over one class's intervals (sorted by start): each gets the
 * slot freed earliest, or a new one; intervals that share an instruction
 * never share a slot. Returns the class's slot count. */
static uint32_t fab__ptx_scan(const fab__ptx_iv_t *iv, uint32_t niv, const uint8_t *cls, uint8_t want,
                              uint32_t *slot, fab__ptx_heap_t *h, uint32_t *freel)
{
    uint32_t nslots = 0, nfree = 0;
    h->n = 0;
    for (uint32_t i = 0; i < niv; i++) {
        if (cls[iv[i].reg] != want)
            continue;
        while (h->n && (uint32_t)(h->v[0] >> 32) < iv[i].lo)
            freel[nfree++] = (uint32_t)fab__ptx_heap_pop(h);
        uint32_t s = nfree ? freel[--nfree] : nslots++;
        slot[iv[i].reg] = s;
        fab__ptx_heap_push(h, (uint64_t)iv[i].hi << 32 | s);
    }
    return nslots;
}

int fab__ptx_dc_slots(fab__ptx_code_t *c, const fab__ptx_func_t *f)
{
    /* the registers as decode.c numbered them: the PTX ones, then the high
     * halves of the .b128 ones, each a 64-bit value of its own here */
    const uint32_t nv = c->nregs, n = c->nx, top = nv + 1 + c->nconsts, NONE = FAB__PTX_NONE;
    c->nvregs = f->nregs;
    if (!nv || !n)
        return 0;
    for (uint32_t i = 0; i < n; i++) {
        fab__ptx_x_t *x = &c->x[i];
        if (!fab__ptx_slots_checked(x->op))
            return 0; /* a handler not checked against exec.h's contract: one slot per register */
        for (unsigned k = 0; k < NRD; k++)
            if (*fab__ptx_rd(x, k) != NONE && *fab__ptx_rd(x, k) >= top)
                return 0; /* not a slot as decode.c numbers them: one slot per register */
        for (unsigned k = 0; k < NWR; k++)
            if (x->d[k] != NONE && x->d[k] >= top)
                return 0;
    }
    int rc = FAB__PTX_E_NOMEM;
    uint32_t *start = NULL, *succ = NULL, *bof = NULL, *stamp = NULL, *ustamp = NULL, *gid = NULL, *greg = NULL;
    uint32_t *ue = NULL, *ueoff = NULL, *kl = NULL, *kloff = NULL, *lo = NULL, *hi = NULL, *slot = NULL;
    uint32_t *freel = NULL, *cnt = NULL;
    uint64_t *in = NULL, *tmp = NULL;
    uint8_t *lead = NULL, *cls = NULL;
    fab__ptx_iv_t *iv = NULL;
    fab__ptx_heap_t h = {0};

    /* basic blocks and their successors (none past the end, as at exit) */
    lead = calloc((size_t)n + 1, 1);
    bof = malloc((size_t)n * sizeof(*bof));
    if (!lead || !bof)
        goto out;
    lead[0] = 1;
    for (uint32_t i = 0; i < n; i++) {
        if (c->x[i].op == FAB__PTX_OP_BRA && c->x[i].target < n)
            lead[c->x[i].target] = 1;
        if (fab__ptx_ends(&c->x[i]))
            lead[i + 1] = 1;
    }
    uint32_t nb = 0;
    for (uint32_t i = 0; i < n; i++)
        nb += lead[i];
    start = malloc(((size_t)nb + 1) * sizeof(*start));
    succ = malloc((size_t)nb * 2 * sizeof(*succ));
    if (!start || !succ)
        goto out;
    nb = 0;
    for (uint32_t i = 0; i < n; i++) {
        if (lead[i])
            start[nb++] = i;
        bof[i] = nb - 1;
    }
    start[nb] = n;
    for (uint32_t b = 0; b < nb; b++) {
        const fab__ptx_x_t *x = &c->x[start[b + 1] - 1];
        uint32_t s0 = start[b + 1] < n ? b + 1 : NONE, s1 = NONE;
        if (x->op == FAB__PTX_OP_BRA) {
            uint32_t t = x->target < n ? bof[x->target] : NONE;
            if (x->guard == NONE)
                s0 = t;
            else
                s1 = t;
        } else if (fab__ptx_ends(x) && x->guard == NONE) {
            s0 = NONE;
        }
        succ[2 * b] = s0;
        succ[2 * b + 1] = s1;
    }

    /* each block's upward-exposed reads and killing writes; a register read
     * before a write in some block is global, any other lives in one block */
    stamp = calloc(nv, sizeof(*stamp));
    ustamp = calloc(nv, sizeof(*ustamp));
    gid = malloc((size_t)nv * sizeof(*gid));
    ue = malloc((size_t)n * NRD * sizeof(*ue));
    kl = malloc((size_t)n * NWR * sizeof(*kl));
    ueoff = malloc(((size_t)nb + 1) * sizeof(*ueoff));
    kloff = malloc(((size_t)nb + 1) * sizeof(*kloff));
    if (!stamp || !ustamp || !gid || !ue || !kl || !ueoff || !kloff)
        goto out;
    memset(gid, 0xff, (size_t)nv * sizeof(*gid));
    uint32_t nue = 0, nkl = 0, ng = 0;
    for (uint32_t b = 0; b < nb; b++) {
        ueoff[b] = nue;
        kloff[b] = nkl;
        for (uint32_t i = start[b]; i < start[b + 1]; i++) {
            fab__ptx_x_t *x = &c->x[i];
            for (unsigned k = 0; k < NRD; k++) {
                uint32_t v = *fab__ptx_rd(x, k);
                if (v >= nv || stamp[v] == b + 1 || ustamp[v] == b + 1)
                    continue;
                ustamp[v] = b + 1;
                ue[nue++] = v;
                if (gid[v] == NONE)
                    gid[v] = ng++;
            }
            if (x->guard != NONE)
                continue; /* a guarded write leaves the other lanes' values: it kills nothing */
            for (unsigned k = 0; k < NWR; k++) {
                uint32_t v = x->d[k];
                if (v >= nv || stamp[v] == b + 1)
                    continue;
                stamp[v] = b + 1;
                kl[nkl++] = v;
            }
        }
    }
    ueoff[nb] = nue;
    kloff[nb] = nkl;

    /* liveness of the global registers: in = ue | (out & ~kill), to a fixed point */
    size_t W = ((size_t)ng + 63) / 64;
    if (W && (size_t)nb * W > FAB__PTX_SLOTS_MAX_BYTES / 8) {
        rc = 0; /* too big to analyse: one slot per register */
        goto out;
    }
    greg = malloc(((size_t)ng + 1) * sizeof(*greg));
    in = calloc((size_t)nb * W + 1, sizeof(*in));
    tmp = malloc((W + 1) * sizeof(*tmp));
    if (!greg || !in || !tmp)
        goto out;
    for (uint32_t v = 0; v < nv; v++)
        if (gid[v] != NONE)
            greg[gid[v]] = v;
    for (bool changed = W != 0; changed;) {
        changed = false;
        for (uint32_t b = nb; b-- > 0;) {
            memset(tmp, 0, W * sizeof(*tmp));
            for (int j = 0; j < 2; j++) {
                uint32_t s = succ[2 * b + j];
                if (s != NONE)
                    for (size_t w = 0; w < W; w++)
                        tmp[w] |= in[(size_t)s * W + w];
            }
            for (uint32_t k = kloff[b]; k < kloff[b + 1]; k++) {
                uint32_t g = gid[kl[k]];
                if (g != NONE)
                    tmp[g / 64] &= ~(1ull << (g % 64));
            }
            for (uint32_t k = ueoff[b]; k < ueoff[b + 1]; k++) {
                uint32_t g = gid[ue[k]];
                tmp[g / 64] |= 1ull << (g % 64);
            }
            uint64_t *ib = &in[(size_t)b * W];
            if (memcmp(ib, tmp, W * sizeof(*tmp))) {
                memcpy(ib, tmp, W * sizeof(*tmp));
                changed = true;
            }
        }
    }

    /* live ranges: every instruction that names a register, and the whole of
     * every block it is live into or out of */
    lo = malloc((size_t)nv * sizeof(*lo));
    hi = calloc(nv, sizeof(*hi));
    cls = calloc(nv, 1);
    if (!lo || !hi || !cls)
        goto out;
    memset(lo, 0xff, (size_t)nv * sizeof(*lo));
    for (uint32_t i = 0; i < n; i++) {
        fab__ptx_x_t *x = &c->x[i];
        for (unsigned k = 0; k < NRD + NWR; k++) {
            uint32_t v = k < NRD ? *fab__ptx_rd(x, k) : x->d[k - NRD];
            if (v >= nv)
                continue;
            lo[v] = i < lo[v] ? i : lo[v];
            hi[v] = i > hi[v] ? i : hi[v];
        }
    }
    for (uint32_t b = 0; b < nb && W; b++) {
        memcpy(tmp, &in[(size_t)b * W], W * sizeof(*tmp));
        for (int j = 0; j < 2; j++) {
            uint32_t s = succ[2 * b + j];
            if (s != NONE)
                for (size_t w = 0; w < W; w++)
                    tmp[w] |= in[(size_t)s * W + w];
        }
        for (size_t w = 0; w < W; w++)
            for (uint64_t bits = tmp[w]; bits; bits &= bits - 1) {
                uint32_t v = greg[w * 64 + (unsigned)__builtin_ctzll(bits)];
                lo[v] = start[b] < lo[v] ? start[b] : lo[v];
                hi[v] = start[b + 1] - 1 > hi[v] ? start[b + 1] - 1 : hi[v];
            }
    }

    /* classes: 1 values, 2 predicates, 3 a slot of its own; 0 never named */
    for (uint32_t v = 0; v < nv; v++)
        if (lo[v] != NONE)
            cls[v] = v < f->nregs && f->regs[v].type == FAB__PTX_T_PRED ? 2 : 1;
    for (size_t w = 0; w < W; w++)
        for (uint64_t bits = in[w]; bits; bits &= bits - 1)
            cls[greg[w * 64 + (unsigned)__builtin_ctzll(bits)]] = 3; /* live at the entry */
    for (uint32_t i = 0; i < n; i++)
        if ((c->x[i].op == FAB__PTX_OP_SHFL || c->x[i].op == FAB__PTX_OP_SHFL_SYNC) && c->x[i].s[0] < nv)
            cls[c->x[i].s[0]] = 3;

    /* the shared ones' ranges by start (a counting sort: starts are instruction indices) */
    uint32_t niv = 0;
    iv = malloc((size_t)nv * sizeof(*iv));
    slot = calloc(nv, sizeof(*slot));
    freel = malloc((size_t)nv * sizeof(*freel));
    h.v = malloc((size_t)nv * sizeof(*h.v));
    cnt = calloc((size_t)n + 1, sizeof(*cnt));
    if (!iv || !slot || !freel || !h.v || !cnt)
        goto out;
    for (uint32_t v = 0; v < nv; v++)
        if (cls[v] == 1 || cls[v] == 2)
            cnt[lo[v] + 1]++, niv++;
    for (uint32_t i = 0; i < n; i++)
        cnt[i + 1] += cnt[i];
    for (uint32_t v = 0; v < nv; v++)
        if (cls[v] == 1 || cls[v] == 2)
            iv[cnt[lo[v]]++] = (fab__ptx_iv_t){lo[v], hi[v], v};
    uint32_t own = 0;
    for (uint32_t v = 0; v < nv; v++)
        if (cls[v] == 3)
            slot[v] = own++;
    uint32_t nval = fab__ptx_scan(iv, niv, cls, 1, slot, &h, freel);
    uint32_t npred = fab__ptx_scan(iv, niv, cls, 2, slot, &h, freel);
    uint32_t K = own + nval + npred;
    rc = 0;
    if (K >= nv)
        goto out; /* nothing saved: keep one slot per register */
    for (uint32_t v = 0; v < nv; v++)
        slot[v] += cls[v] == 1 ? own : cls[v] == 2 ? own + nval : 0;

    /* renumber: registers to their slots, then the sink and the constants */
    for (uint32_t i = 0; i < n; i++) {
        fab__ptx_x_t *x = &c->x[i];
        for (unsigned k = 0; k < NRD + NWR; k++) {
            uint32_t *p = k < NRD ? fab__ptx_rd(x, k) : &x->d[k - NRD];
            if (*p == NONE)
                continue;
            *p = *p < nv ? slot[*p] : *p - nv + K;
        }
    }
    c->nregs = K;
out:
    free(start);
    free(succ);
    free(bof);
    free(lead);
    free(stamp);
    free(ustamp);
    free(gid);
    free(greg);
    free(ue);
    free(ueoff);
    free(kl);
    free(kloff);
    free(in);
    free(tmp);
    free(lo);
    free(hi);
    free(cls);
    free(iv);
    free(slot);
    free(freel);
    free(h.v);
    free(cnt);
    return rc;
}
