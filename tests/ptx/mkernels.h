/* The kernels that the interpreter's hand-built tests and bench_ptx share,
 * built with mbuild.h: vadd (c[i] = a[i] + b[i], 19 instructions a thread),
 * reduce (a 256-thread shared-memory tree sum per block, then red.add of
 * each block's sum into one total), arith (straight-line integer and
 * float arithmetic in a counted loop). */
#ifndef FAB_TEST_PTX_MKERNELS_H
#define FAB_TEST_PTX_MKERNELS_H

#include "mbuild.h"

#define T(x) FAB__PTX_T_##x
#define W(x) FAB__PTX_W_##x
#define O(x) FAB__PTX_OP_##x
#define S(x) FAB__PTX_S_##x
#define SR(x) FAB__PTX_SR_##x

/* c[i] = a[i] + b[i] for i < n */
static inline void build_vadd(mb_t *b)
{
    mb_init(b);
    mb_func(b, "vadd", true);
    uint32_t pa = mb_param(b, "a", T(U64), 8), pb = mb_param(b, "b", T(U64), 8), pc = mb_param(b, "c", T(U64), 8),
             pn = mb_param(b, "n", T(U32), 4);
    uint32_t rd1 = mb_reg(b, T(U64)), rd2 = mb_reg(b, T(U64)), rd3 = mb_reg(b, T(U64)), r1 = mb_reg(b, T(U32));
    uint32_t r2 = mb_reg(b, T(U32)), r3 = mb_reg(b, T(U32)), r4 = mb_reg(b, T(U32)), r5 = mb_reg(b, T(U32));
    uint32_t p1 = mb_reg(b, T(PRED)), rd4 = mb_reg(b, T(U64)), rd5 = mb_reg(b, T(U64)), f1 = mb_reg(b, T(F32)),
             f2 = mb_reg(b, T(F32)), f3 = mb_reg(b, T(F32));
    mb_ins(b, O(LD), NOG, S(PARAM), 1, TY(T(U64)), NULL, 2, R_(rd1), AS_(pa, 0));
    mb_ins(b, O(LD), NOG, S(PARAM), 1, TY(T(U64)), NULL, 2, R_(rd2), AS_(pb, 0));
    mb_ins(b, O(LD), NOG, S(PARAM), 1, TY(T(U64)), NULL, 2, R_(rd3), AS_(pc, 0));
    mb_ins(b, O(LD), NOG, S(PARAM), 1, TY(T(U32)), NULL, 2, R_(r1), AS_(pn, 0));
    mb_ins(b, O(MOV), NOG, 0, 1, TY(T(U32)), NULL, 2, R_(r2), SR_(SR(CTAID), 0));
    mb_ins(b, O(MOV), NOG, 0, 1, TY(T(U32)), NULL, 2, R_(r3), SR_(SR(NTID), 0));
    mb_ins(b, O(MOV), NOG, 0, 1, TY(T(U32)), NULL, 2, R_(r4), SR_(SR(TID), 0));
    mb_ins(b, O(MAD), NOG, 0, 1, TY(T(S32)), WD(W(LO)), 4, R_(r5), R_(r2), R_(r3), R_(r4));
    mb_ins(b, O(SETP), NOG, 0, 1, TY(T(S32)), WD(W(GE)), 3, R_(p1), R_(r5), R_(r1));
    mb_ins(b, O(BRA), p1, false, 0, 1, NULL, NULL, 1, L_(0));
    mb_ins(b, O(MUL), NOG, 0, 1, TY(T(S32)), WD(W(WIDE)), 3, R_(rd4), R_(r5), I_(4));
    mb_ins(b, O(ADD), NOG, 0, 1, TY(T(S64)), NULL, 3, R_(rd5), R_(rd1), R_(rd4));
    mb_ins(b, O(LD), NOG, S(GLOBAL), 1, TY(T(F32)), NULL, 2, R_(f1), AR_(rd5, 0));
    mb_ins(b, O(ADD), NOG, 0, 1, TY(T(S64)), NULL, 3, R_(rd5), R_(rd2), R_(rd4));
    mb_ins(b, O(LD), NOG, S(GLOBAL), 1, TY(T(F32)), NULL, 2, R_(f2), AR_(rd5, 0));
    mb_ins(b, O(ADD), NOG, 0, 1, TY(T(F32)), NULL, 3, R_(f3), R_(f1), R_(f2));
    mb_ins(b, O(ADD), NOG, 0, 1, TY(T(S64)), NULL, 3, R_(rd5), R_(rd3), R_(rd4));
    mb_ins(b, O(ST), NOG, S(GLOBAL), 1, TY(T(F32)), NULL, 2, AR_(rd5, 0), R_(f3));
    mb_label(b, 0);
    mb_ins(b, O(RET), NOG, 0, 1, NULL, NULL, 0);
}

/* out[blockIdx] = sum of in[blockIdx*256 .. +256) through shared memory:
 *   s[t] = in[..]; bar.sync; for (k = 128; k > 0; k >>= 1) { if (t < k) s[t] += s[t+k]; bar.sync; }
 *   if (t == 0) out[b] = s[0]; and atom.add.u32 total, s[0] */
static inline void build_reduce(mb_t *b)
{
    mb_init(b);
    uint32_t sh = mb_var(b, "s", S(SHARED), 256 * 4, 4, false);
    mb_func(b, "reduce", true);
    uint32_t pin = mb_param(b, "in", T(U64), 8), pout = mb_param(b, "out", T(U64), 8), ptot = mb_param(b, "tot", T(U64), 8);
    uint32_t rin = mb_reg(b, T(U64)), rout = mb_reg(b, T(U64)), rt = mb_reg(b, T(U32)), rb = mb_reg(b, T(U32));
    uint32_t gi = mb_reg(b, T(U32)), off = mb_reg(b, T(U64)), addr = mb_reg(b, T(U64)), v = mb_reg(b, T(U32));
    uint32_t sa = mb_reg(b, T(U32)), k = mb_reg(b, T(U32)), p = mb_reg(b, T(PRED)), sb = mb_reg(b, T(U32));
    uint32_t v2 = mb_reg(b, T(U32)), q = mb_reg(b, T(PRED)), sbase = mb_reg(b, T(U32)), rtot = mb_reg(b, T(U64));
    mb_ins(b, O(LD), NOG, S(PARAM), 1, TY(T(U64)), NULL, 2, R_(rin), AS_(pin, 0));
    mb_ins(b, O(LD), NOG, S(PARAM), 1, TY(T(U64)), NULL, 2, R_(rout), AS_(pout, 0));
    mb_ins(b, O(LD), NOG, S(PARAM), 1, TY(T(U64)), NULL, 2, R_(rtot), AS_(ptot, 0));
    mb_ins(b, O(MOV), NOG, 0, 1, TY(T(U32)), NULL, 2, R_(rt), SR_(SR(TID), 0));
    mb_ins(b, O(MOV), NOG, 0, 1, TY(T(U32)), NULL, 2, R_(rb), SR_(SR(CTAID), 0));
    mb_ins(b, O(SHL), NOG, 0, 1, TY(T(B32)), NULL, 3, R_(gi), R_(rb), I_(8));
    mb_ins(b, O(ADD), NOG, 0, 1, TY(T(U32)), NULL, 3, R_(gi), R_(gi), R_(rt));
    mb_ins(b, O(MUL), NOG, 0, 1, TY(T(U32)), WD(W(WIDE)), 3, R_(off), R_(gi), I_(4));
    mb_ins(b, O(ADD), NOG, 0, 1, TY(T(U64)), NULL, 3, R_(addr), R_(rin), R_(off));
    mb_ins(b, O(LD), NOG, S(GLOBAL), 1, TY(T(U32)), NULL, 2, R_(v), AR_(addr, 0));
    mb_ins(b, O(MOV), NOG, 0, 1, TY(T(U32)), NULL, 2, R_(sbase), S_(sh));
    mb_ins(b, O(SHL), NOG, 0, 1, TY(T(B32)), NULL, 3, R_(sa), R_(rt), I_(2));
    mb_ins(b, O(ADD), NOG, 0, 1, TY(T(U32)), NULL, 3, R_(sa), R_(sa), R_(sbase));
    mb_ins(b, O(ST), NOG, S(SHARED), 1, TY(T(U32)), NULL, 2, AR_(sa, 0), R_(v));
    mb_ins(b, O(BAR_SYNC), NOG, 0, 1, NULL, NULL, 1, I_(0));
    mb_ins(b, O(MOV), NOG, 0, 1, TY(T(U32)), NULL, 2, R_(k), I_(128));
    mb_label(b, 0); /* loop */
    mb_ins(b, O(SETP), NOG, 0, 1, TY(T(U32)), WD(W(LT)), 3, R_(p), R_(rt), R_(k));
    mb_ins(b, O(BRA), p, true, 0, 1, NULL, NULL, 1, L_(1));
    mb_ins(b, O(SHL), NOG, 0, 1, TY(T(B32)), NULL, 3, R_(sb), R_(k), I_(2));
    mb_ins(b, O(ADD), NOG, 0, 1, TY(T(U32)), NULL, 3, R_(sb), R_(sb), R_(sa));
    mb_ins(b, O(LD), NOG, S(SHARED), 1, TY(T(U32)), NULL, 2, R_(v2), AR_(sb, 0));
    mb_ins(b, O(LD), NOG, S(SHARED), 1, TY(T(U32)), NULL, 2, R_(v), AR_(sa, 0));
    mb_ins(b, O(ADD), NOG, 0, 1, TY(T(U32)), NULL, 3, R_(v), R_(v), R_(v2));
    mb_ins(b, O(ST), NOG, S(SHARED), 1, TY(T(U32)), NULL, 2, AR_(sa, 0), R_(v));
    mb_label(b, 1); /* skip */
    mb_ins(b, O(BAR_SYNC), NOG, 0, 1, NULL, NULL, 1, I_(0));
    mb_ins(b, O(SHR), NOG, 0, 1, TY(T(U32)), NULL, 3, R_(k), R_(k), I_(1));
    mb_ins(b, O(SETP), NOG, 0, 1, TY(T(U32)), WD(W(NE)), 3, R_(q), R_(k), I_(0));
    mb_ins(b, O(BRA), q, false, 0, 1, NULL, NULL, 1, L_(0));
    mb_ins(b, O(SETP), NOG, 0, 1, TY(T(U32)), WD(W(NE)), 3, R_(q), R_(rt), I_(0));
    mb_ins(b, O(BRA), q, false, 0, 1, NULL, NULL, 1, L_(2));
    mb_ins(b, O(LD), NOG, S(SHARED), 1, TY(T(U32)), NULL, 2, R_(v), AS_(sh, 0));
    mb_ins(b, O(MUL), NOG, 0, 1, TY(T(U32)), WD(W(WIDE)), 3, R_(off), R_(rb), I_(4));
    mb_ins(b, O(ADD), NOG, 0, 1, TY(T(U64)), NULL, 3, R_(addr), R_(rout), R_(off));
    mb_ins(b, O(ST), NOG, S(GLOBAL), 1, TY(T(U32)), NULL, 2, AR_(addr, 0), R_(v));
    mb_ins(b, O(RED), NOG, S(GLOBAL), 1, TY(T(U32)), WD(W(ADD)), 2, AR_(rtot, 0), R_(v));
    mb_label(b, 2);
    mb_ins(b, O(RET), NOG, 0, 1, NULL, NULL, 0);
}


/* out[tid] = f(tid) after iters rounds of 16 arithmetic instructions and 3
 * of loop control (19 lane-instructions a round). */
static inline void build_arith(mb_t *b)
{
    mb_init(b);
    mb_func(b, "arith", true);
    uint32_t pout = mb_param(b, "out", T(U64), 8), pit = mb_param(b, "iters", T(U32), 4);
    uint32_t ro = mb_reg(b, T(U64)), n = mb_reg(b, T(U32)), a = mb_reg(b, T(U32)), bb = mb_reg(b, T(U32));
    uint32_t c = mb_reg(b, T(U32)), d = mb_reg(b, T(U32)), x = mb_reg(b, T(F32)), y = mb_reg(b, T(F32));
    uint32_t z = mb_reg(b, T(F32)), p = mb_reg(b, T(PRED)), off = mb_reg(b, T(U64)), e = mb_reg(b, T(U32));
    mb_ins(b, O(LD), NOG, S(PARAM), 1, TY(T(U64)), NULL, 2, R_(ro), AS_(pout, 0));
    mb_ins(b, O(LD), NOG, S(PARAM), 1, TY(T(U32)), NULL, 2, R_(n), AS_(pit, 0));
    mb_ins(b, O(MOV), NOG, 0, 1, TY(T(U32)), NULL, 2, R_(a), SR_(SR(TID), 0));
    mb_ins(b, O(MOV), NOG, 0, 1, TY(T(U32)), NULL, 2, R_(bb), I_(1));
    mb_ins(b, O(CVT), NOG, 0, 1, TY(T(F32), T(U32)), WD(W(RN)), 2, R_(x), R_(a));
    mb_ins(b, O(MOV), NOG, 0, 1, TY(T(F32)), NULL, 2, R_(y), I_(0));
    mb_ins(b, O(MOV), NOG, 0, 1, TY(T(F32)), NULL, 2, R_(z), I_(1));
    mb_label(b, 0);
    opd_t k1 = {.kind = FAB__PTX_OPD_FIMM, .fwidth = 4, .fbits = 0x3f7ff972u, .reg = FAB__PTX_NONE, .sym = FAB__PTX_NONE};
    opd_t k2 = {.kind = FAB__PTX_OPD_FIMM, .fwidth = 4, .fbits = 0x3a83126fu, .reg = FAB__PTX_NONE, .sym = FAB__PTX_NONE};
    for (int r = 0; r < 2; r++) {
        mb_ins(b, O(ADD), NOG, 0, 1, TY(T(U32)), NULL, 3, R_(a), R_(a), R_(bb));
        mb_ins(b, O(XOR), NOG, 0, 1, TY(T(B32)), NULL, 3, R_(bb), R_(bb), R_(a));
        mb_ins(b, O(MUL), NOG, 0, 1, TY(T(U32)), WD(W(LO)), 3, R_(c), R_(a), I_(3));
        mb_ins(b, O(ADD), NOG, 0, 1, TY(T(U32)), NULL, 3, R_(bb), R_(bb), R_(c));
        mb_ins(b, O(SHL), NOG, 0, 1, TY(T(B32)), NULL, 3, R_(d), R_(a), I_(1));
        mb_ins(b, O(AND), NOG, 0, 1, TY(T(B32)), NULL, 3, R_(e), R_(d), R_(bb));
        mb_ins(b, O(FMA), NOG, 0, 1, TY(T(F32)), WD(W(RN)), 4, R_(x), R_(x), k1, k2);
        mb_ins(b, O(ADD), NOG, 0, 1, TY(T(F32)), NULL, 3, R_(y), R_(y), R_(x));
    }
    mb_ins(b, O(SUB), NOG, 0, 1, TY(T(U32)), NULL, 3, R_(n), R_(n), I_(1));
    mb_ins(b, O(SETP), NOG, 0, 1, TY(T(U32)), WD(W(NE)), 3, R_(p), R_(n), I_(0));
    mb_ins(b, O(BRA), p, false, 0, 1, NULL, NULL, 1, L_(0));
    mb_ins(b, O(MUL), NOG, 0, 1, TY(T(U32)), WD(W(WIDE)), 3, R_(off), R_(e), I_(0));
    mb_ins(b, O(MOV), NOG, 0, 1, TY(T(U32)), NULL, 2, R_(c), SR_(SR(TID), 0));
    mb_ins(b, O(MUL), NOG, 0, 1, TY(T(U32)), WD(W(WIDE)), 3, R_(off), R_(c), I_(8));
    mb_ins(b, O(ADD), NOG, 0, 1, TY(T(U64)), NULL, 3, R_(ro), R_(ro), R_(off));
    mb_ins(b, O(ADD), NOG, 0, 1, TY(T(U32)), NULL, 3, R_(a), R_(a), R_(bb));
    mb_ins(b, O(ST), NOG, S(GLOBAL), 1, TY(T(U32)), NULL, 2, AR_(ro, 0), R_(a));
    mb_ins(b, O(ST), NOG, S(GLOBAL), 1, TY(T(F32)), NULL, 2, AR_(ro, 4), R_(y));
    mb_ins(b, O(RET), NOG, 0, 1, NULL, NULL, 0);
}

#endif
