/* mbarrier: the split arrive/wait barriers in memory (mbarrier.init inval
 * arrive arrive_drop test_wait try_wait pending_count), decoded and run.
 * The 64-bit object is the engine's own layout: bits 0-30 the arrivals
 * still pending in the current phase, 32-62 the count each phase expects,
 * bit 63 the phase's parity; every change is one compare-and-swap. The
 * state token an arrive returns is the object as it was, so a wait
 * completes once the parity has moved on. The transaction counts of bulk
 * copies (.expect_tx, complete_tx) are refused, with the copies. */
#include <stdatomic.h>

#include "src/ptx/exec.h"

#define T_M(x) FAB__PTX_T_##x
#define PEND_MASK 0x7fffffffull
#define PHASE_BIT (1ull << 63)

int fab__ptx_dc_mbarrier(fab__ptx_dc_t *dc, const fab__ptx_insn_t *in, fab__ptx_x_t *x);
int fab__ptx_dc_mbarrier(fab__ptx_dc_t *dc, const fab__ptx_insn_t *in, fab__ptx_x_t *x)
{
    const fab__ptx_operand_t *o = &dc->f->pool[in->first];
    unsigned op = in->op;
    for (unsigned i = 0; i < in->nwords; i++) {
        unsigned w = in->words[i];
        switch (w) {
        case W_(PARITY): x->k = 1; break;
        case W_(RELEASE): case W_(ACQUIRE): case W_(RELAXED): case W_(CTA): case W_(CLUSTER): case W_(NOCOMPLETE):
            break;
        default:
            return fab__ptx_dc_fail(dc, FAB__PTX_E_UNSUPPORTED, "the modifier %s is not supported here",
                                    fab__ptx_word_name(w));
        }
    }
    if (op == OP_(MBARRIER_EXPECT_TX) || op == OP_(MBARRIER_COMPLETE_TX))
        return fab__ptx_dc_fail(dc, FAB__PTX_E_UNSUPPORTED, "transaction counts (no bulk copies yet)");
    if (in->ntypes != 1 || in->types[0] != T_M(B64))
        return fab__ptx_dc_fail(dc, FAB__PTX_E_UNSUPPORTED, "mbarrier takes .b64");
    x->t = T_M(B64);
    x->size = 8;
    x->vec = 1;
    unsigned space = in->space;
    if (space != FAB__PTX_S_GENERIC && space != FAB__PTX_S_SHARED && space != FAB__PTX_S_SHARED_CLUSTER)
        return fab__ptx_dc_fail(dc, FAB__PTX_E_UNSUPPORTED, "an mbarrier in %s", fab__ptx_space_name(space));
    int rc;
    switch (op) {
    case OP_(MBARRIER_INIT):
        if (in->nops != 2)
            return fab__ptx_dc_fail(dc, FAB__PTX_E_UNSUPPORTED, "%u operands", in->nops);
        if ((rc = fab__ptx_dc_addr(dc, &o[0], space, x)))
            return rc;
        return fab__ptx_dc_src(dc, &o[1], T_M(U32), &x->s[0]);
    case OP_(MBARRIER_INVAL):
        if (in->nops != 1)
            return fab__ptx_dc_fail(dc, FAB__PTX_E_UNSUPPORTED, "%u operands", in->nops);
        return fab__ptx_dc_addr(dc, &o[0], space, x);
    case OP_(MBARRIER_ARRIVE): case OP_(MBARRIER_ARRIVE_DROP):
        if (in->nops != 2 && in->nops != 3)
            return fab__ptx_dc_fail(dc, FAB__PTX_E_UNSUPPORTED, "%u operands", in->nops);
        if ((rc = fab__ptx_dc_dst(dc, &o[0], T_M(B64), &x->d[0])) || (rc = fab__ptx_dc_addr(dc, &o[1], space, x)))
            return rc;
        if (in->nops == 3)
            return fab__ptx_dc_src(dc, &o[2], T_M(U32), &x->s[0]);
        return fab__ptx_dc_imm(dc, 1, &x->s[0]);
    case OP_(MBARRIER_TEST_WAIT): case OP_(MBARRIER_TRY_WAIT):
        if (in->nops != 3 && in->nops != 4)
            return fab__ptx_dc_fail(dc, FAB__PTX_E_UNSUPPORTED, "%u operands", in->nops);
        if ((rc = fab__ptx_dc_dst(dc, &o[0], T_M(PRED), &x->d[0])) || (rc = fab__ptx_dc_addr(dc, &o[1], space, x)))
            return rc;
        return fab__ptx_dc_src(dc, &o[2], x->k ? T_M(U32) : T_M(B64), &x->s[0]);
    default: /* pending_count */
        if (in->nops != 2)
            return fab__ptx_dc_fail(dc, FAB__PTX_E_UNSUPPORTED, "%u operands", in->nops);
        if ((rc = fab__ptx_dc_dst(dc, &o[0], T_M(U32), &x->d[0])))
            return rc;
        return fab__ptx_dc_src(dc, &o[1], T_M(B64), &x->s[0]);
    }
}

int fab__ptx_x_mbarrier(W_ARGS)
{
    OPS3;
    if (in->op == OP_(MBARRIER_PENDING_COUNT)) {
        LANES(D[l] = A[l] & PEND_MASK);
        return R_NEXT;
    }
    const uint64_t *AD = SLOT(in->addr);
    uint32_t done = 0;
    for (unsigned l = 0; l < LANES_N; l++) {
        if (!(m >> l & 1))
            continue;
        uint64_t a = AD[l] + (uint64_t)in->off;
        uint64_t *p = (uint64_t *)(void *)fab__ptx_addr_of(w, in->space, l, a, 8);
        if (!p)
            return fab__ptx_warp_fail(w, FAB__PTX_E_FAULT, l, (uintptr_t)a, "an mbarrier outside its window");
        if ((uintptr_t)p & 7)
            return fab__ptx_warp_fail(w, FAB__PTX_E_MISALIGNED, l, (uintptr_t)p, "a misaligned mbarrier");
        switch (in->op) {
        case OP_(MBARRIER_INIT): {
            uint64_t c = (uint32_t)A[l] & PEND_MASK;
            __atomic_store_n(p, c << 32 | c, __ATOMIC_RELEASE);
            w->stored = true;
            break;
        }
        case OP_(MBARRIER_INVAL):
            __atomic_store_n(p, 0, __ATOMIC_RELEASE);
            w->stored = true;
            break;
        case OP_(MBARRIER_ARRIVE): case OP_(MBARRIER_ARRIVE_DROP): {
            uint64_t n = (uint32_t)A[l], old = __atomic_load_n(p, __ATOMIC_RELAXED), nw;
            bool drop = in->op == OP_(MBARRIER_ARRIVE_DROP);
            do {
                uint64_t pend = old & PEND_MASK, exp = (old >> 32) & PEND_MASK, ph = old & PHASE_BIT;
                if (drop)
                    exp = exp >= n ? exp - n : 0;
                if (pend <= n)
                    nw = (ph ^ PHASE_BIT) | exp << 32 | exp; /* the phase completes */
                else
                    nw = ph | exp << 32 | (pend - n);
            } while (!__atomic_compare_exchange_n(p, &old, nw, false, __ATOMIC_ACQ_REL, __ATOMIC_RELAXED));
            D[l] = old;
            w->stored = true;
            break;
        }
        default: { /* test_wait, try_wait */
            uint64_t cur = __atomic_load_n(p, __ATOMIC_ACQUIRE);
            uint64_t parity = in->k ? (uint64_t)(A[l] & 1) << 63 : A[l] & PHASE_BIT;
            done |= (uint32_t)((cur & PHASE_BIT) != parity) << l;
            break;
        }
        }
    }
    if (in->op != OP_(MBARRIER_TEST_WAIT) && in->op != OP_(MBARRIER_TRY_WAIT))
        return R_NEXT;
    PSET(in->d[0], done, m);
    if ((done & m) == m)
        return R_NEXT;
    return fab__ptx_polled(w); /* a wait that is not complete polls, as an ordered load does */
}
