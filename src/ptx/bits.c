/* The bit-level integer instructions (popc clz bfind brev bfe bfi bmsk
 * szext dp4a dp2a lop3 shf prmt), the packed 16-bit integer forms of add,
 * sub, min and max (.s16x2 .u16x2) and the carry chain (add.cc addc sub.cc
 * subc mad.cc madc: one carry bit per lane, in the warp), each over the
 * lanes of m as exec.h's handlers are. */
#include "src/ptx/exec.h"

int fab__ptx_x_popc(W_ARGS)
{
    OPS3;
    if (fab__ptx_type_bits(in->t) == 64)
        LANES(D[l] = (uint32_t)__builtin_popcountll(A[l]));
    else
        LANES(D[l] = (uint32_t)__builtin_popcount((uint32_t)A[l]));
    return R_NEXT;
}

int fab__ptx_x_clz(W_ARGS)
{
    OPS3;
    if (fab__ptx_type_bits(in->t) == 64)
        LANES(D[l] = A[l] ? (uint32_t)__builtin_clzll(A[l]) : 64);
    else
        LANES(D[l] = (uint32_t)A[l] ? (uint32_t)__builtin_clz((uint32_t)A[l]) : 32);
    return R_NEXT;
}

int fab__ptx_x_bfind(W_ARGS)
{
    OPS3;
    unsigned n = fab__ptx_type_bits(in->t);
    bool s = fab__ptx_is_sint(in->t), amt = in->k == 1;
    LANES({
        uint64_t v = n == 64 ? A[l] : (uint32_t)A[l];
        if (s && (n == 64 ? (int64_t)v < 0 : (int32_t)v < 0))
            v = n == 64 ? ~v : (uint32_t)~v;
        uint32_t r = v ? (uint32_t)(63 - __builtin_clzll(v)) : 0xffffffffu;
        D[l] = (amt && v) ? n - 1 - r : r;
    });
    return R_NEXT;
}

int fab__ptx_x_brev(W_ARGS)
{
    OPS3;
    bool w64 = fab__ptx_type_bits(in->t) == 64;
    LANES({
        uint64_t v = A[l], r = 0;
        for (unsigned i = 0; i < 64; i++)
            r |= ((v >> i) & 1) << (63 - i);
        D[l] = w64 ? r : r >> 32;
    });
    return R_NEXT;
}

int fab__ptx_x_bfe(W_ARGS)
{
    OPS3;
    unsigned msb = fab__ptx_type_bits(in->t) - 1;
    bool s = fab__ptx_is_sint(in->t);
    LANES({
        unsigned pos = (unsigned)B[l] & 0xff, len = (unsigned)C[l] & 0xff;
        uint64_t a = A[l];
        unsigned top = pos + len - 1 < msb ? pos + len - 1 : msb;
        uint64_t sbit = (s && len) ? (a >> (pos > msb ? msb : top)) & 1 : 0;
        uint64_t r = 0;
        for (unsigned i = 0; i <= msb; i++) {
            uint64_t bit = (i < len && pos + i <= msb) ? (a >> (pos + i)) & 1 : sbit;
            r |= bit << i;
        }
        D[l] = r;
    });
    return R_NEXT;
}

int fab__ptx_x_bfi(W_ARGS)
{
    OPS3;
    const uint64_t *E = w->R + (size_t)in->s[3] * LANES_N;
    unsigned n = fab__ptx_type_bits(in->t);
    LANES({
        unsigned pos = (unsigned)C[l] & 0xff, len = (unsigned)E[l] & 0xff;
        uint64_t r = n == 64 ? B[l] : (uint32_t)B[l];
        for (unsigned i = 0; i < len && pos + i < n; i++)
            r = (r & ~(1ull << (pos + i))) | (((A[l] >> i) & 1) << (pos + i));
        D[l] = r;
    });
    return R_NEXT;
}

int fab__ptx_x_bmsk(W_ARGS)
{
    OPS3;
    bool clamp = in->k & 1;
    LANES({
        uint32_t pos = (uint32_t)A[l], wd = (uint32_t)B[l];
        if (clamp) {
            pos = pos > 32 ? 32 : pos;
            wd = wd > 32 ? 32 : wd;
        } else {
            pos &= 31;
            wd &= 31;
        }
        uint64_t mk = ((1ull << wd) - 1) << pos;
        D[l] = (uint32_t)mk;
    });
    return R_NEXT;
}

int fab__ptx_x_szext(W_ARGS)
{
    OPS3;
    bool clamp = in->k & 1, s = in->t == T_(S32);
    LANES({
        uint32_t wd = (uint32_t)B[l];
        wd = clamp ? (wd > 32 ? 32 : wd) : wd & 31;
        uint32_t a = (uint32_t)A[l];
        uint32_t r = wd == 0 ? 0 : wd >= 32 ? a
                   : s ? (uint32_t)((int32_t)(a << (32 - wd)) >> (32 - wd)) : a & ((1u << wd) - 1);
        D[l] = r;
    });
    return R_NEXT;
}

int fab__ptx_x_dp4a(W_ARGS)
{
    OPS3;
    bool sa = fab__ptx_is_sint(in->t), sb = fab__ptx_is_sint(in->t2), four = in->op == OP_(DP4A);
    bool hi = in->f & XF_(HI);
    LANES({
        int64_t acc = (int32_t)C[l];
        uint32_t a = (uint32_t)A[l], b = (uint32_t)B[l];
        for (unsigned i = 0; i < (four ? 4u : 2u); i++) {
            int64_t x = four ? (sa ? (int8_t)(a >> 8 * i) : (uint8_t)(a >> 8 * i))
                             : (sa ? (int16_t)(a >> 16 * i) : (uint16_t)(a >> 16 * i));
            unsigned bi = four ? i : i + (hi ? 2 : 0);
            int64_t y = sb ? (int8_t)(b >> 8 * bi) : (uint8_t)(b >> 8 * bi);
            acc += x * y;
        }
        D[l] = (uint32_t)acc;
    });
    return R_NEXT;
}

/* add, sub, min, max .s16x2/.u16x2 (PTX ISA 8.0, sm_90): half 0 is bits
 * 0-15, half 1 bits 16-31, each on its own (add and sub wrap within the
 * half); .relu (min, max .s16x2) makes a negative half 0. */
static inline uint32_t fab__ptx_half2(unsigned op, bool s, bool relu, uint32_t a, uint32_t b)
{
    uint32_t d = 0;
    for (unsigned h = 0; h < 32; h += 16) {
        uint32_t ua = a >> h & 0xffffu, ub = b >> h & 0xffffu, r;
        bool lt = s ? (int16_t)ua < (int16_t)ub : ua < ub;
        switch (op) {
        case OP_(ADD): r = ua + ub; break;
        case OP_(SUB): r = ua - ub; break;
        case OP_(MIN): r = lt ? ua : ub; break;
        default: r = lt ? ub : ua; break; /* max */
        }
        r &= 0xffffu;
        if (relu && (r & 0x8000u))
            r = 0;
        d |= r << h;
    }
    return d;
}

int fab__ptx_x_16x2(W_ARGS)
{
    OPS3;
    bool s = in->t2 == T_(S16), relu = in->f & XF_(RELU);
    unsigned op = in->op;
    LANES(D[l] = fab__ptx_half2(op, s, relu, (uint32_t)A[l], (uint32_t)B[l]));
    return R_NEXT;
}

/* add.cc, addc, sub.cc, subc, mad.cc, madc: the carry is one bit per lane */
int fab__ptx_x_addc(W_ARGS)
{
    OPS3;
    bool w64 = fab__ptx_type_bits(in->t) == 64, sub = in->op == OP_(SUB_CC) || in->op == OP_(SUBC);
    bool cin = in->op == OP_(ADDC) || in->op == OP_(SUBC) || in->op == OP_(MADC);
    bool mad = in->op == OP_(MAD_CC) || in->op == OP_(MADC);
    uint32_t cc = w->cc, out = 0;
    for (unsigned l = 0; l < LANES_N; l++) {
        if (!(m >> l & 1))
            continue;
        fab__ptx_u128 a = w64 ? A[l] : (uint32_t)A[l], b = w64 ? B[l] : (uint32_t)B[l];
        fab__ptx_u128 c = cin ? (cc >> l & 1) : 0, r;
        if (mad) {
            fab__ptx_u128 p = a * b;
            fab__ptx_u128 lo = w64 ? (uint64_t)p : (uint32_t)p;
            if (in->f & XF_(HI))
                lo = w64 ? (uint64_t)(p >> 64) : (uint32_t)(p >> 32);
            a = lo;
            b = w64 ? C[l] : (uint32_t)C[l];
        }
        if (sub) {
            r = a - b - c;
            out |= (uint32_t)(a < b + c) << l;
        } else {
            r = a + b + c;
            out |= (uint32_t)((r >> (w64 ? 64 : 32)) & 1) << l;
        }
        D[l] = w64 ? (uint64_t)r : (uint32_t)r;
    }
    if (in->k2)
        w->cc = (w->cc & ~m) | (out & m);
    return R_NEXT;
}

int fab__ptx_x_lop3(W_ARGS)
{
    OPS3;
    uint64_t lut = w->R[(size_t)in->s[3] * LANES_N];
    uint64_t wm = in->t == T_(B64) ? ~0ull : 0xffffffffu;
    LANES({
        uint64_t a = A[l], b = B[l], c = C[l], r = 0;
        for (unsigned i = 0; i < 8; i++)
            if (lut >> i & 1)
                r |= ((i & 4) ? a : ~a) & ((i & 2) ? b : ~b) & ((i & 1) ? c : ~c);
        D[l] = r & wm;
    });
    return R_NEXT;
}

int fab__ptx_x_shf(W_ARGS)
{
    OPS3;
    bool clamp = in->k & 1, right = in->k & 2;
    LANES({
        uint32_t n = (uint32_t)C[l];
        n = clamp ? (n > 32 ? 32 : n) : n & 31;
        uint64_t v = ((uint64_t)(uint32_t)B[l] << 32) | (uint32_t)A[l];
        D[l] = right ? (uint32_t)(v >> n) : (uint32_t)((v << n) >> 32);
    });
    return R_NEXT;
}

int fab__ptx_x_prmt(W_ARGS)
{
    OPS3;
    static const uint16_t modes[6][4] = {
        /* d.b3 b2 b1 b0 for c[1:0] = 0..3, as nibbles */
        {0x3210, 0x4321, 0x5432, 0x6543}, /* f4e */
        {0x5670, 0x6701, 0x7012, 0x0123}, /* b4e */
        {0x0000, 0x1111, 0x2222, 0x3333}, /* rc8 */
        {0x3210, 0x3211, 0x3222, 0x3333}, /* ecl */
        {0x0000, 0x1110, 0x2210, 0x3210}, /* ecr */
        {0x1010, 0x3232, 0x1010, 0x3232}, /* rc16 */
    };
    int mode = in->k == W_(F4E) ? 0 : in->k == W_(B4E) ? 1 : in->k == W_(RC8) ? 2 : in->k == W_(ECL) ? 3
             : in->k == W_(ECR) ? 4 : in->k == W_(RC16) ? 5 : -1;
    LANES({
        uint64_t v = ((uint64_t)(uint32_t)B[l] << 32) | (uint32_t)A[l];
        uint32_t c = (uint32_t)C[l], r = 0;
        for (unsigned i = 0; i < 4; i++) {
            unsigned sel = mode < 0 ? (c >> (4 * i)) & 0xf : (modes[mode][c & 3] >> (4 * i)) & 0x7;
            uint32_t byte = (uint32_t)(v >> (8 * (sel & 7))) & 0xff;
            if (sel & 8)
                byte = (byte & 0x80) ? 0xff : 0;
            r |= byte << (8 * i);
        }
        D[l] = r;
    });
    return R_NEXT;
}

