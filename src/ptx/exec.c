/* The interpreter: fab__ptx_exec runs one warp for a quantum, one decoded
 * instruction at a time, through a handler table built from the opcode
 * list (opcodes.h: an opcode marked `runs` with no handler here does not
 * compile). Each handler does its work over the 32 lanes at once, the
 * register file being lane-contiguous, with a straight loop when every lane
 * is active so that the compiler vectorises it. This file holds the loop,
 * the integer, logic and comparison instructions, mov and cvt's integer
 * cases, and control flow (SIMT divergence and reconvergence, calls);
 * warp.c the collectives and barriers, float.c float arithmetic, mem.c
 * memory. */
#include <stdlib.h>
#include <string.h>

#include "src/ptx/exec.h"

/* ---- integer arithmetic ---------------------------------------------------------------- */

#define ITYPES(T, CASE)                                                  \
    switch (T) {                                                         \
    case T_(U16): case T_(B16): CASE(uint16_t, uint16_t, 16); break;     \
    case T_(S16): CASE(int16_t, uint16_t, 16); break;                    \
    case T_(U32): case T_(B32): CASE(uint32_t, uint32_t, 32); break;     \
    case T_(S32): CASE(int32_t, uint32_t, 32); break;                    \
    case T_(U64): case T_(B64): CASE(uint64_t, uint64_t, 64); break;     \
    case T_(S64): CASE(int64_t, uint64_t, 64); break;                    \
    default: break;                                                      \
    }

FAB__PTX_HOT static int x_ADD(W_ARGS)
{
    OPS3;
    if (in->t2)
        return fab__ptx_x_16x2(w, in, m);
    if (fab__ptx_is_float(in->t)) {
        if (in->t == T_(F32) && !in->f && (!in->rnd || in->rnd == W_(RN)))
            LANES(D[l] = FBN(F(A[l]) + F(B[l])));
        else
            fab__ptx_float_lanes(in, D, A, B, C, m);
        return R_NEXT;
    }
    if (in->t == T_(S32) && (in->f & XF_(SAT))) {
        LANES({
            int64_t v = (int64_t)(int32_t)A[l] + (int32_t)B[l];
            D[l] = (uint32_t)(int32_t)(v > INT32_MAX ? INT32_MAX : v < INT32_MIN ? INT32_MIN : v);
        });
        return R_NEXT;
    }
#define C_(T, UT, N) LANES(D[l] = (UT)((UT)A[l] + (UT)B[l]))
    ITYPES(in->t, C_)
#undef C_
    return R_NEXT;
}

FAB__PTX_HOT static int x_SUB(W_ARGS)
{
    OPS3;
    if (in->t2)
        return fab__ptx_x_16x2(w, in, m);
    if (fab__ptx_is_float(in->t)) {
        if (in->t == T_(F32) && !in->f && (!in->rnd || in->rnd == W_(RN)))
            LANES(D[l] = FBN(F(A[l]) - F(B[l])));
        else
            fab__ptx_float_lanes(in, D, A, B, C, m);
        return R_NEXT;
    }
    if (in->t == T_(S32) && (in->f & XF_(SAT))) {
        LANES({
            int64_t v = (int64_t)(int32_t)A[l] - (int32_t)B[l];
            D[l] = (uint32_t)(int32_t)(v > INT32_MAX ? INT32_MAX : v < INT32_MIN ? INT32_MIN : v);
        });
        return R_NEXT;
    }
#define C_(T, UT, N) LANES(D[l] = (UT)((UT)A[l] - (UT)B[l]))
    ITYPES(in->t, C_)
#undef C_
    return R_NEXT;
}

/* The product's bits above N of N-bit a and b, signed or not. */
static inline uint64_t fab__ptx_mulhi(uint64_t a, uint64_t b, unsigned n, bool s)
{
    if (n == 64) {
        if (s)
            return (uint64_t)(((fab__ptx_i128)(int64_t)a * (int64_t)b) >> 64);
        return (uint64_t)(((fab__ptx_u128)a * b) >> 64);
    }
    uint64_t mask = (1ull << n) - 1;
    if (s) {
        int64_t sa = (int64_t)(a << (64 - n)) >> (64 - n), sb = (int64_t)(b << (64 - n)) >> (64 - n);
        return ((uint64_t)(sa * sb) >> n) & mask;
    }
    return ((a & mask) * (b & mask) >> n) & mask;
}

static inline uint64_t fab__ptx_mulwide(uint64_t a, uint64_t b, unsigned n, bool s)
{
    if (s) {
        int64_t sa = (int64_t)(a << (64 - n)) >> (64 - n), sb = (int64_t)(b << (64 - n)) >> (64 - n);
        uint64_t r = (uint64_t)(sa * sb);
        return n == 32 ? r : r & 0xffffffffu;
    }
    uint64_t mask = (1ull << n) - 1;
    return (a & mask) * (b & mask);
}

FAB__PTX_HOT static int fab__ptx_muladd(W_ARGS, bool add)
{
    OPS3; /* mul's C is the zero slot */
    (void)add;
    unsigned n = fab__ptx_type_bits(in->t);
    bool s = fab__ptx_is_sint(in->t);
    if (in->f & XF_(WIDE)) {
        uint64_t wm = n == 32 ? ~0ull : 0xffffffffu;
        LANES(D[l] = (fab__ptx_mulwide(A[l], B[l], n, s) + C[l]) & wm);
    } else if (in->f & XF_(HI)) {
        uint64_t nm = n == 64 ? ~0ull : (1ull << n) - 1;
        LANES(D[l] = (fab__ptx_mulhi(A[l], B[l], n, s) + C[l]) & nm);
    } else if (n == 32) {
        LANES(D[l] = (uint32_t)((uint32_t)A[l] * (uint32_t)B[l] + (uint32_t)C[l]));
    } else if (n == 64) {
        LANES(D[l] = A[l] * B[l] + C[l]);
    } else {
        LANES(D[l] = (uint16_t)((uint32_t)(uint16_t)A[l] * (uint16_t)B[l] + (uint16_t)C[l]));
    }
    return R_NEXT;
}

static int x_MUL(W_ARGS)
{
    if (fab__ptx_is_float(in->t)) {
        OPS3;
        if (in->t == T_(F32) && !in->f && (!in->rnd || in->rnd == W_(RN)))
            LANES(D[l] = FBN(F(A[l]) * F(B[l])));
        else
            fab__ptx_float_lanes(in, D, A, B, C, m);
        return R_NEXT;
    }
    return fab__ptx_muladd(w, in, m, false);
}

FAB__PTX_HOT static int x_FMA(W_ARGS)
{
    OPS3;
    if (in->t == T_(F32) && !in->f && (!in->rnd || in->rnd == W_(RN)))
        LANES(D[l] = FBN(__builtin_fmaf(F(A[l]), F(B[l]), F(C[l]))));
    else
        fab__ptx_float_lanes(in, D, A, B, C, m);
    return R_NEXT;
}

static int x_MAD(W_ARGS)
{
    if (fab__ptx_is_float(in->t))
        return x_FMA(w, in, m);
    return fab__ptx_muladd(w, in, m, true);
}

static int x_MUL24(W_ARGS)
{
    OPS3;
    bool s = in->t == T_(S32), add = in->op == OP_(MAD24);
    LANES({
        int64_t a = s ? (int64_t)((int32_t)((uint32_t)A[l] << 8) >> 8) : (int64_t)(A[l] & 0xffffff);
        int64_t b = s ? (int64_t)((int32_t)((uint32_t)B[l] << 8) >> 8) : (int64_t)(B[l] & 0xffffff);
        uint64_t p = (uint64_t)(a * b);
        uint32_t r = (in->f & XF_(HI)) ? (uint32_t)(p >> 16) : (uint32_t)p;
        D[l] = (uint32_t)(r + (add ? (uint32_t)C[l] : 0));
    });
    return R_NEXT;
}
#define x_MAD24 x_MUL24

static int x_SAD(W_ARGS)
{
    OPS3;
#define C_(T, UT, N) LANES(D[l] = (UT)((UT)C[l] + ((T)A[l] < (T)B[l] ? (UT)((UT)B[l] - (UT)A[l]) : (UT)((UT)A[l] - (UT)B[l]))))
    ITYPES(in->t, C_)
#undef C_
    return R_NEXT;
}

static int x_DIV(W_ARGS)
{
    OPS3;
    if (fab__ptx_is_float(in->t)) {
        fab__ptx_float_lanes(in, D, A, B, C, m);
        return R_NEXT;
    }
    /* x / 0 gives all ones, as the hardware; MIN / -1 gives MIN */
#define C_(T, UT, N)                                                                   \
    LANES({                                                                            \
        T a = (T)A[l], b = (T)B[l];                                                    \
        D[l] = b == 0 ? (UT)~(UT)0 : (fab__ptx_is_sint(in->t) && b == (T)-1) ? (UT)(0 - (UT)a) : (UT)(a / b); \
    })
    ITYPES(in->t, C_)
#undef C_
    return R_NEXT;
}

static int x_REM(W_ARGS)
{
    OPS3;
#define C_(T, UT, N)                                                                   \
    LANES({                                                                            \
        T a = (T)A[l], b = (T)B[l];                                                    \
        D[l] = b == 0 ? (UT)a : (fab__ptx_is_sint(in->t) && b == (T)-1) ? 0 : (UT)(a % b);            \
    })
    ITYPES(in->t, C_)
#undef C_
    return R_NEXT;
}

static int x_ABS(W_ARGS)
{
    OPS3;
    if (fab__ptx_is_float(in->t)) {
        fab__ptx_float_lanes(in, D, A, B, C, m);
        return R_NEXT;
    }
#define C_(T, UT, N) LANES(D[l] = (int64_t)(T)A[l] < 0 ? (UT)(0 - (UT)A[l]) : (UT)A[l])
    ITYPES(in->t, C_)
#undef C_
    return R_NEXT;
}

static int x_NEG(W_ARGS)
{
    OPS3;
    if (fab__ptx_is_float(in->t)) {
        fab__ptx_float_lanes(in, D, A, B, C, m);
        return R_NEXT;
    }
#define C_(T, UT, N) LANES(D[l] = (UT)(0 - (UT)A[l]))
    ITYPES(in->t, C_)
#undef C_
    return R_NEXT;
}

static int x_MIN(W_ARGS)
{
    OPS3;
    if (in->t2)
        return fab__ptx_x_16x2(w, in, m);
    if (fab__ptx_is_float(in->t)) {
        fab__ptx_float_lanes(in, D, A, B, C, m);
        return R_NEXT;
    }
    if (in->f & XF_(RELU)) { /* min.relu.s32: a negative minimum is 0 */
        LANES({
            int32_t r = (int32_t)A[l] < (int32_t)B[l] ? (int32_t)A[l] : (int32_t)B[l];
            D[l] = (uint32_t)(r < 0 ? 0 : r);
        });
        return R_NEXT;
    }
#define C_(T, UT, N) LANES(D[l] = (UT)((T)A[l] < (T)B[l] ? (T)A[l] : (T)B[l]))
    ITYPES(in->t, C_)
#undef C_
    return R_NEXT;
}

static int x_MAX(W_ARGS)
{
    OPS3;
    if (in->t2)
        return fab__ptx_x_16x2(w, in, m);
    if (fab__ptx_is_float(in->t)) {
        fab__ptx_float_lanes(in, D, A, B, C, m);
        return R_NEXT;
    }
    if (in->f & XF_(RELU)) { /* max.relu.s32: a negative maximum is 0 */
        LANES({
            int32_t r = (int32_t)A[l] > (int32_t)B[l] ? (int32_t)A[l] : (int32_t)B[l];
            D[l] = (uint32_t)(r < 0 ? 0 : r);
        });
        return R_NEXT;
    }
#define C_(T, UT, N) LANES(D[l] = (UT)((T)A[l] > (T)B[l] ? (T)A[l] : (T)B[l]))
    ITYPES(in->t, C_)
#undef C_
    return R_NEXT;
}

static int x_FLOAT(W_ARGS)
{
    OPS3;
    fab__ptx_float_lanes(in, D, A, B, C, m);
    return R_NEXT;
}
#define x_COPYSIGN x_FLOAT
#define x_RCP x_FLOAT
#define x_SQRT x_FLOAT
#define x_RSQRT x_FLOAT
#define x_SIN x_FLOAT
#define x_COS x_FLOAT
#define x_LG2 x_FLOAT
#define x_EX2 x_FLOAT
#define x_TANH x_FLOAT

static int x_TESTP(W_ARGS)
{
    OPS3;
    uint32_t r = 0;
    bool dbl = in->t == T_(F64);
    for (unsigned l = 0; l < LANES_N; l++) {
        double v = dbl ? G(A[l]) : (double)F(A[l]);
        int c = dbl ? fpclassify(G(A[l])) : fpclassify(F(A[l]));
        bool k;
        switch (in->k) {
        case W_(FINITE): k = isfinite(v); break;
        case W_(INFINITE): k = isinf(v); break;
        case W_(NUMBER): k = !isnan(v); break;
        case W_(NOTANUMBER): k = isnan(v); break;
        case W_(NORMAL): k = c == FP_NORMAL; break;
        default: k = c == FP_SUBNORMAL; break;
        }
        r |= (uint32_t)k << l;
    }
    PSET(in->d[0], r, m);
    return R_NEXT;
}

/* ---- logic and shifts ----------------------------------------------------------------- */

FAB__PTX_HOT static int x_AND(W_ARGS)
{
    OPS3;
    if (in->t == T_(PRED)) {
        uint32_t a = PGET(in->s[0]), b = PGET(in->s[1]);
        uint32_t r = in->op == OP_(AND) ? a & b : in->op == OP_(OR) ? a | b : a ^ b;
        PSET(in->d[0], r, m);
        return R_NEXT;
    }
    if (in->op == OP_(AND))
        LANES(D[l] = A[l] & B[l]);
    else if (in->op == OP_(OR))
        LANES(D[l] = A[l] | B[l]);
    else
        LANES(D[l] = A[l] ^ B[l]);
    return R_NEXT;
}
#define x_OR x_AND
#define x_XOR x_AND

static int x_NOT(W_ARGS)
{
    OPS3;
    if (in->t == T_(PRED)) {
        PSET(in->d[0], ~PGET(in->s[0]), m);
        return R_NEXT;
    }
    uint64_t wm = fab__ptx_type_bits(in->t) == 64 ? ~0ull : (1ull << fab__ptx_type_bits(in->t)) - 1;
    if (in->op == OP_(NOT))
        LANES(D[l] = ~A[l] & wm);
    else
        LANES(D[l] = (A[l] & wm) == 0);
    return R_NEXT;
}
#define x_CNOT x_NOT

FAB__PTX_HOT static int x_SHL(W_ARGS)
{
    OPS3;
    unsigned n = fab__ptx_type_bits(in->t);
    uint64_t wm = n == 64 ? ~0ull : (1ull << n) - 1;
    LANES(D[l] = (uint32_t)B[l] >= n ? 0 : (A[l] << (uint32_t)B[l]) & wm);
    return R_NEXT;
}

FAB__PTX_HOT static int x_SHR(W_ARGS)
{
    OPS3;
    unsigned n = fab__ptx_type_bits(in->t);
    if (fab__ptx_is_sint(in->t)) {
        uint64_t wm = n == 64 ? ~0ull : (1ull << n) - 1;
        LANES({
            int64_t a = (int64_t)(A[l] << (64 - n)) >> (64 - n);
            uint32_t s = (uint32_t)B[l] >= n ? n - 1 : (uint32_t)B[l];
            D[l] = (uint64_t)(a >> s) & wm;
        });
    } else {
        uint64_t wm = n == 64 ? ~0ull : (1ull << n) - 1;
        LANES(D[l] = (uint32_t)B[l] >= n ? 0 : (A[l] & wm) >> (uint32_t)B[l]);
    }
    return R_NEXT;
}

/* ---- comparison and selection ---------------------------------------------------------- */

static int x_SETP(W_ARGS)
{
    OPS3;
    uint32_t r = fab__ptx_compare(in, A, B);
    uint32_t nr = ~r;
    if (in->k2) {
        uint32_t c = PGET(in->s[2]);
        if (in->aux & 1)
            c = ~c;
        if (in->k2 == W_(AND))
            r &= c, nr &= c;
        else if (in->k2 == W_(OR))
            r |= c, nr |= c;
        else
            r ^= c, nr ^= c;
    }
    if (in->op == OP_(SET)) {
        uint64_t one = in->t2 == T_(F32) ? 0x3f800000u : 0xffffffffu;
        LANES(D[l] = (r >> l & 1) ? one : 0);
        return R_NEXT;
    }
    PSET(in->d[0], r, m);
    if (in->d[1] != FAB__PTX_NONE)
        PSET(in->d[1], nr, m);
    return R_NEXT;
}
#define x_SET x_SETP

FAB__PTX_HOT static int x_SELP(W_ARGS)
{
    OPS3;
    uint32_t p = PGET(in->s[2]);
    LANES(D[l] = (p >> l & 1) ? A[l] : B[l]);
    return R_NEXT;
}

static int x_SLCT(W_ARGS)
{
    OPS3;
    if (in->t2 == T_(F32))
        LANES(D[l] = F(C[l]) >= 0.0f ? A[l] : B[l]);
    else
        LANES(D[l] = (int32_t)C[l] >= 0 ? A[l] : B[l]);
    return R_NEXT;
}

/* ---- mov and cvt ---------------------------------------------------------------------- */

FAB__PTX_HOT static int x_MOV(W_ARGS)
{
    OPS3;
    unsigned n = fab__ptx_type_bits(in->t);
    uint64_t wm = n >= 64 ? ~0ull : (1ull << n) - 1;
    switch (in->k) {
    case 0:
        if (in->t == T_(PRED))
            PSET(in->d[0], PGET(in->s[0]), m);
        else
            LANES(D[l] = A[l] & wm);
        return R_NEXT;
    case 1: {
        uint64_t now = fab__ptx_now_ns();
        uint64_t v = in->aux == FAB__PTX_SR_CLOCK_HI || in->aux == FAB__PTX_SR_GLOBALTIMER_HI ? now >> 32 : now;
        LANES(D[l] = v & wm);
        return R_NEXT;
    }
    case 2: {
        unsigned eb = n / in->vec;
        uint64_t em = eb >= 64 ? ~0ull : (1ull << eb) - 1;
        LANES({
            uint64_t v = 0;
            for (unsigned i = 0; i < in->vec; i++)
                v |= (w->R[(size_t)in->s[i] * LANES_N + l] & em) << (i * eb);
            D[l] = v;
        });
        return R_NEXT;
    }
    case 4: case 5: case 6: /* .b128 */
        return fab__ptx_x_mov128(w, in, m);
    default: {
        unsigned eb = n / in->vec;
        uint64_t em = eb >= 64 ? ~0ull : (1ull << eb) - 1;
        /* A may be one of the destinations: read it first */
        uint64_t src[LANES_N];
        memcpy(src, A, sizeof(src));
        for (unsigned i = 0; i < in->vec; i++) {
            uint64_t *Di = w->R + (size_t)in->d[i] * LANES_N;
            LANES(Di[l] = (src[l] >> (i * eb)) & em);
        }
        return R_NEXT;
    }
    }
}

static int x_CVT(W_ARGS)
{
    OPS3;
    unsigned dt = in->t, st = in->t2;
    if (fab__ptx_is_int(dt) && fab__ptx_is_int(st) && !(in->f & XF_(SAT))) {
        unsigned sn = fab__ptx_type_bits(st), dn = fab__ptx_type_bits(dt);
        uint64_t dm = dn == 64 ? ~0ull : (1ull << dn) - 1;
        if (fab__ptx_is_sint(st) && sn < 64)
            LANES(D[l] = (uint64_t)((int64_t)(A[l] << (64 - sn)) >> (64 - sn)) & dm);
        else if (sn < 64)
            LANES(D[l] = (A[l] & ((1ull << sn) - 1)) & dm);
        else
            LANES(D[l] = A[l] & dm);
        return R_NEXT;
    }
    fab__ptx_cvt_lanes(in, D, A, m);
    return R_NEXT;
}

/* ---- control flow --------------------------------------------------------------------- */

static int x_BRA(W_ARGS)
{
    fab__ptx_simt_t *t = TOP;
    uint32_t all = t->mask, nt = all & ~m, pc = t->pc, r = in->reconv;
    if (nt == 0) {
        t->pc = in->target;
        return R_JUMP;
    }
    if (fab__ptx_simt_reserve(w, 2))
        return fab__ptx_warp_fail(w, FAB__PTX_E_NOMEM, 0, 0, "the SIMT stack");
    t = TOP;
    if (r != FAB__PTX_NONE && t->rpc == r) {
        t->pc = in->target;
        t->mask = m;
    } else {
        t->pc = r == FAB__PTX_NONE ? FAB__PTX_DEAD : r;
        if (in->target != r)
            w->st[w->depth++] = (fab__ptx_simt_t){in->target, r, m};
    }
    if (pc + 1 != r)
        w->st[w->depth++] = (fab__ptx_simt_t){pc + 1, r, nt};
    return R_JUMP;
}

/* Lanes m leave the SIMT entries from `from` up; empty entries are popped
 * and so are the frames of functions left with none. */
int fab__ptx_lanes_leave(fab__ptx_warp_t *w, uint32_t m, uint32_t from)
{
    fab__ptx_simt_t *t = TOP;
    if (t->mask & ~m)
        t->pc++; /* the lanes that stay go on past it */
    for (uint32_t i = from; i < w->depth; i++)
        w->st[i].mask &= ~m;
    while (w->depth && !w->st[w->depth - 1].mask)
        w->depth--;
    while (w->nfr > 1 && w->depth <= w->fr[w->nfr - 1].simt_base)
        fab__ptx_return(w);
    return w->depth ? R_JUMP : R_DONE;
}

static int x_EXIT(W_ARGS)
{
    (void)in;
    return fab__ptx_lanes_leave(w, m, 0);
}

static int x_RET(W_ARGS)
{
    (void)in;
    return fab__ptx_lanes_leave(w, m, w->fr[w->nfr - 1].simt_base);
}

static int x_CALL(W_ARGS)
{
    const fab__ptx_callsite_t *cs = &w->code->calls[in->aux];
    uint32_t callee = in->target;
    if (cs->builtin) {
        int r = fab__ptx_builtin(w, in, cs, m);
        return r;
    }
    if (callee == FAB__PTX_NONE) {
        const uint64_t *A = w->R + (size_t)in->s[0] * LANES_N;
        unsigned first = (unsigned)__builtin_ctz(m);
        uint32_t same = 0;
        for (unsigned l = 0; l < LANES_N; l++)
            same |= (uint32_t)((m >> l & 1) && A[l] == A[first]) << l;
        if (!fab__ptx_func_value(w->run->program, A[first], &callee) ||
            !w->run->program->codes[callee].decoded)
            return fab__ptx_warp_fail(w, FAB__PTX_E_FAULT, first, (uintptr_t)A[first],
                                 "an indirect call to no function");
        if (same != m) {
            /* lanes with another target call again once these return */
            if (fab__ptx_simt_reserve(w, 1))
                return fab__ptx_warp_fail(w, FAB__PTX_E_NOMEM, 0, 0, "the SIMT stack");
            fab__ptx_simt_t *t = TOP;
            uint32_t pc = t->pc, all = t->mask;
            t->pc = pc + 1;
            w->st[w->depth++] = (fab__ptx_simt_t){pc, pc + 1, all & ~same};
            return fab__ptx_call(w, &w->run->program->codes[callee], cs, same, false);
        }
    }
    return fab__ptx_call(w, &w->run->program->codes[callee], cs, m, true);
}

static int x_TRAP(W_ARGS)
{
    (void)in;
    return fab__ptx_warp_fail(w, FAB__PTX_E_TRAP, (unsigned)__builtin_ctz(m), 0,
                         in->op == OP_(BRKPT) ? "brkpt" : "trap");
}
#define x_BRKPT x_TRAP

/* ---- the loop ------------------------------------------------------------------------- */

#define FAB__PTX_RUNS_1(id) x_##id
#define FAB__PTX_RUNS_0(id) NULL
#define FAB__PTX_HANDLER(id, mnemonic, section, runs) [OP_(id)] = FAB__PTX_RUNS_##runs(id),
static const fab__ptx_xfn fab__ptx_handlers[FAB__PTX_OP_COUNT] = {FAB__PTX_OPCODES(FAB__PTX_HANDLER)};
#undef FAB__PTX_HANDLER

/* The loop, in two copies: prof counts each instruction run and each spin
 * yield into the program's profile (fab__ptx_program_profile), and is a
 * constant, so that the copy without it has not one instruction more. */
static inline __attribute__((always_inline)) int fab__ptx_exec_loop(fab__ptx_warp_t *w, uint32_t n,
                                                                    const bool prof)
{
    while (n--) {
        fab__ptx_simt_t *t = TOP;
        if (t->pc == t->rpc) {
            w->depth--; /* reconverged: the entry below goes on from here */
            continue;
        }
        if (t->pc >= w->code->nx) {
            /* past the end (or a path with nothing after it): the lanes leave */
            int r = fab__ptx_lanes_leave(w, t->mask, w->nfr > 1 ? w->fr[w->nfr - 1].simt_base : 0);
            if (r == R_DONE)
                return r;
            continue;
        }
        const fab__ptx_x_t *in = &w->code->x[t->pc];
        uint32_t m = t->mask;
        if (in->guard != FAB__PTX_NONE) {
            uint32_t g = (uint32_t)w->R[(size_t)in->guard * LANES_N];
            m &= in->gneg ? ~g : g;
            if (!m) {
                t->pc++;
                continue;
            }
        }
        uint64_t *count = prof ? &w->code->prof[2 * (size_t)t->pc] : NULL;
        if (prof)
            __atomic_fetch_add(&count[0], 1, __ATOMIC_RELAXED);
        int r = fab__ptx_handlers[in->op](w, in, m);
        if (r == R_JUMP)
            continue;
        if (r == R_DONE || r == R_FAULT)
            return r;
        if (prof && r == R_YIELD && w->spin_yield)
            __atomic_fetch_add(&count[1], 1, __ATOMIC_RELAXED);
        TOP->pc++;
        if (r != R_NEXT)
            return r;
    }
    return R_YIELD;
}

int fab__ptx_exec(fab__ptx_warp_t *w, uint32_t n)
{
    if (__builtin_expect(w->run->program->profiled, 0))
        return fab__ptx_exec_loop(w, n, true);
    return fab__ptx_exec_loop(w, n, false);
}
