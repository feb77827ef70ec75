/* Floating point for the interpreter: every float arithmetic instruction
 * (f16, bf16 and their x2 forms, f32, f64) with its rounding mode, .ftz,
 * .sat and the ISA's NaN rules; cvt's general case; comparisons; and the
 * half and bfloat16 conversions. This file is compiled with
 * -frounding-math: a rounding mode other than .rn is set with fesetround
 * around a whole loop over the lanes, never per lane. The approximate
 * functions are computed with the C library, well inside the ISA's stated
 * error. */
#include <fenv.h>
#include <float.h>
#include <math.h>
#include <stdint.h>

#include "src/ptx/exec.h"

/* ---- half and bfloat16 ------------------------------------------------------------------ */

/* x rounded to a binary format of mbits fraction bits and exponent bias,
 * encoded in 16 bits, with rounding word rnd. */
static uint16_t fab__ptx_to_small(double x, int mbits, int bias, unsigned rnd)
{
    uint16_t sign = signbit(x) ? 0x8000 : 0;
    int emax = bias; /* largest unbiased exponent */
    uint16_t inf = (uint16_t)(((2 * bias + 1) << mbits)), nan = (uint16_t)(inf | (1u << (mbits - 1)) | 0x7fff);
    if (isnan(x))
        return (uint16_t)(mbits == 10 ? 0x7fff : 0x7fff);
    (void)nan;
    double a = fabs(x);
    if (a == 0)
        return sign;
    if (isinf(a))
        return sign | inf;
    int k;
    (void)frexp(a, &k);
    int e = k - 1;
    int qe = (e < 1 - bias ? 1 - bias : e) - mbits;
    double n = ldexp(a, -qe), fl = floor(n), fr = n - fl, r;
    bool up;
    switch (rnd) {
    case W_(RZ): up = false; break;
    case W_(RM): up = sign && fr > 0; break;
    case W_(RP): up = !sign && fr > 0; break;
    case W_(RNA): up = fr >= 0.5; break;
    default: up = fr > 0.5 || (fr == 0.5 && fmod(fl, 2.0) != 0); break;
    }
    r = ldexp(fl + (up ? 1 : 0), qe);
    if (r >= ldexp(1.0, emax + 1)) {
        bool to_inf = rnd == W_(RN) || rnd == W_(RNA) || rnd == 0 || (rnd == W_(RP) && !sign) ||
                      (rnd == W_(RM) && sign);
        return to_inf ? sign | inf : (uint16_t)(sign | (inf - 1));
    }
    if (r == 0)
        return sign;
    if (r < ldexp(1.0, 1 - bias))
        return (uint16_t)(sign | (uint16_t)ldexp(r, bias - 1 + mbits));
    (void)frexp(r, &k);
    int e2 = k - 1;
    uint32_t mant = (uint32_t)(ldexp(r, mbits - e2) - ldexp(1.0, mbits));
    return (uint16_t)(sign | (uint16_t)((uint32_t)(e2 + bias) << mbits) | mant);
}

uint16_t fab__ptx_f32_to_f16(float f, unsigned rnd) { return fab__ptx_to_small(f, 10, 15, rnd); }
uint16_t fab__ptx_f64_to_f16(double d, unsigned rnd) { return fab__ptx_to_small(d, 10, 15, rnd); }
uint16_t fab__ptx_f32_to_bf16(float f, unsigned rnd) { return fab__ptx_to_small(f, 7, 127, rnd); }

float fab__ptx_f16_to_f32(uint16_t h)
{
    int s = h >> 15, e = (h >> 10) & 0x1f, mt = h & 0x3ff;
    float v;
    if (e == 0)
        v = ldexpf((float)mt, -24);
    else if (e == 31)
        v = mt ? NAN : INFINITY;
    else
        v = ldexpf((float)(mt | 0x400), e - 25);
    return s ? -v : v;
}

float fab__ptx_bf16_to_f32(uint16_t h)
{
    return F((uint64_t)h << 16);
}

/* ---- arithmetic ------------------------------------------------------------------------- */

static int fab__ptx_fenv(unsigned rnd)
{
    switch (rnd) {
    case W_(RZ): case W_(RZI): return FE_TOWARDZERO;
    case W_(RM): case W_(RMI): return FE_DOWNWARD;
    case W_(RP): case W_(RPI): return FE_UPWARD;
    default: return FE_TONEAREST;
    }
}

static inline float fab__ptx_ftz(float x)
{
    return fpclassify(x) == FP_SUBNORMAL ? copysignf(0.0f, x) : x;
}

static float fab__ptx_fminmax(float a, float b, bool max, bool nan)
{
    if (isnan(a) || isnan(b)) {
        if (nan || (isnan(a) && isnan(b)))
            return NAN;
        return isnan(a) ? b : a;
    }
    if (a == b)
        return (signbit(a) != signbit(b)) == max ? (signbit(a) ? b : a) : (signbit(a) ? a : b);
    return max ? (a > b ? a : b) : (a < b ? a : b);
}

static double fab__ptx_dminmax(double a, double b, bool max)
{
    if (isnan(a) || isnan(b))
        return isnan(a) && isnan(b) ? NAN : isnan(a) ? b : a;
    if (a == b)
        return (signbit(a) != signbit(b)) == max ? (signbit(a) ? b : a) : (signbit(a) ? a : b);
    return max ? (a > b ? a : b) : (a < b ? a : b);
}

static float fab__ptx_f32_op(unsigned op, float a, float b, float c, uint8_t f)
{
    switch (op) {
    case OP_(ADD): return a + b;
    case OP_(SUB): return a - b;
    case OP_(MUL): return a * b;
    case OP_(MAD): case OP_(FMA): return fmaf(a, b, c);
    case OP_(DIV): return a / b;
    case OP_(ABS): return fabsf(a);
    case OP_(NEG): return -a;
    case OP_(MIN): return fab__ptx_fminmax(a, b, false, f & XF_(NAN));
    case OP_(MAX): return fab__ptx_fminmax(a, b, true, f & XF_(NAN));
    case OP_(RCP): return 1.0f / a;
    case OP_(SQRT): return sqrtf(a);
    case OP_(RSQRT): return 1.0f / sqrtf(a);
    case OP_(SIN): return sinf(a);
    case OP_(COS): return cosf(a);
    case OP_(LG2): return log2f(a);
    case OP_(EX2): return exp2f(a);
    case OP_(TANH): return tanhf(a);
    case OP_(COPYSIGN): return copysignf(b, a);
    default: return NAN;
    }
}

static double fab__ptx_f64_op(unsigned op, double a, double b, double c)
{
    switch (op) {
    case OP_(ADD): return a + b;
    case OP_(SUB): return a - b;
    case OP_(MUL): return a * b;
    case OP_(MAD): case OP_(FMA): return fma(a, b, c);
    case OP_(DIV): return a / b;
    case OP_(ABS): return fabs(a);
    case OP_(NEG): return -a;
    case OP_(MIN): return fab__ptx_dminmax(a, b, false);
    case OP_(MAX): return fab__ptx_dminmax(a, b, true);
    case OP_(RCP): return 1.0 / a;
    case OP_(SQRT): return sqrt(a);
    case OP_(RSQRT): return 1.0 / sqrt(a);
    case OP_(SIN): return sin(a);
    case OP_(COS): return cos(a);
    case OP_(LG2): return log2(a);
    case OP_(EX2): return exp2(a);
    case OP_(TANH): return tanh(a);
    case OP_(COPYSIGN): return copysign(b, a);
    default: return NAN;
    }
}

/* One f32 result with the instruction's .ftz, .sat and .relu. */
static uint64_t fab__ptx_f32_lane(const fab__ptx_x_t *in, float a, float b, float c)
{
    bool ftz = in->f & XF_(FTZ);
    if (ftz)
        a = fab__ptx_ftz(a), b = fab__ptx_ftz(b), c = fab__ptx_ftz(c);
    float r = fab__ptx_f32_op(in->op, a, b, c, in->f);
    if (ftz)
        r = fab__ptx_ftz(r);
    if (in->f & XF_(SAT))
        r = isnan(r) ? 0.0f : r < 0.0f ? 0.0f : r > 1.0f ? 1.0f : r;
    if ((in->f & XF_(RELU)) && (r < 0.0f || isnan(r)))
        r = isnan(r) ? r : 0.0f;
    if (in->op == OP_(ABS) || in->op == OP_(NEG) || in->op == OP_(COPYSIGN))
        return FB(r); /* bit operations keep the NaN they are given */
    return FBN(r);
}

/* One 16-bit half (f16 or bf16) computed through f32. */
static uint16_t fab__ptx_h_lane(const fab__ptx_x_t *in, bool bf, uint16_t a, uint16_t b, uint16_t c)
{
    float fa = bf ? fab__ptx_bf16_to_f32(a) : fab__ptx_f16_to_f32(a);
    float fb = bf ? fab__ptx_bf16_to_f32(b) : fab__ptx_f16_to_f32(b);
    float fc = bf ? fab__ptx_bf16_to_f32(c) : fab__ptx_f16_to_f32(c);
    if (in->op == OP_(NEG))
        return a ^ 0x8000;
    if (in->op == OP_(ABS))
        return a & 0x7fff;
    float r = fab__ptx_f32_op(in->op, fa, fb, fc, in->f);
    if (in->f & XF_(SAT))
        r = isnan(r) ? 0.0f : r < 0.0f ? 0.0f : r > 1.0f ? 1.0f : r;
    if ((in->f & XF_(RELU)) && r < 0.0f)
        r = 0.0f;
    unsigned rnd = in->rnd ? in->rnd : W_(RN);
    uint16_t h = bf ? fab__ptx_f32_to_bf16(r, rnd) : fab__ptx_f32_to_f16(r, rnd);
    if ((in->f & XF_(FTZ)) && !bf && (h & 0x7c00) == 0)
        h &= 0x8000;
    return h;
}

void fab__ptx_float_lanes(const fab__ptx_x_t *in, uint64_t *D, const uint64_t *A, const uint64_t *B,
                          const uint64_t *C, uint32_t m)
{
    int mode = fab__ptx_fenv(in->rnd), old = FE_TONEAREST;
    bool half = in->t != T_(F32) && in->t != T_(F64);
    if (mode != FE_TONEAREST && !half) {
        old = fegetround();
        fesetround(mode);
    }
    switch (in->t) {
    case T_(F32):
        LANES(D[l] = fab__ptx_f32_lane(in, F(A[l]), F(B[l]), F(C[l])));
        break;
    case T_(F64):
        LANES(D[l] = GB(fab__ptx_f64_op(in->op, G(A[l]), G(B[l]), G(C[l]))));
        break;
    case T_(F16): case T_(BF16):
        LANES(D[l] = fab__ptx_h_lane(in, in->t == T_(BF16), (uint16_t)A[l], (uint16_t)B[l], (uint16_t)C[l]));
        break;
    default: { /* x2 */
        bool bf = in->t == T_(BF16X2);
        LANES({
            uint32_t lo = fab__ptx_h_lane(in, bf, (uint16_t)A[l], (uint16_t)B[l], (uint16_t)C[l]);
            uint32_t hi = fab__ptx_h_lane(in, bf, (uint16_t)(A[l] >> 16), (uint16_t)(B[l] >> 16),
                                          (uint16_t)(C[l] >> 16));
            D[l] = lo | hi << 16;
        });
        break;
    }
    }
    if (mode != FE_TONEAREST && !half)
        fesetround(old);
}

/* ---- conversions ------------------------------------------------------------------------ */

static double fab__ptx_as_double(unsigned t, uint64_t v)
{
    switch (t) {
    case T_(F16): return fab__ptx_f16_to_f32((uint16_t)v);
    case T_(BF16): return fab__ptx_bf16_to_f32((uint16_t)v);
    case T_(F32): return F(v);
    default: return G(v);
    }
}

static double fab__ptx_round_int(double x, unsigned rnd)
{
    switch (rnd) {
    case W_(RNI): return nearbyint(x); /* the loop runs in round-to-nearest-even */
    case W_(RMI): return floor(x);
    case W_(RPI): return ceil(x);
    default: return trunc(x);
    }
}

static uint64_t fab__ptx_cvt1(const fab__ptx_x_t *in, uint64_t v)
{
    unsigned dt = in->t, st = in->t2, sn = fab__ptx_type_bits(st), dn = fab__ptx_type_bits(dt);
    uint64_t dm = dn == 64 ? ~0ull : (1ull << dn) - 1;
    bool sint = fab__ptx_is_sint(st), dint = fab__ptx_is_sint(dt);
    if (fab__ptx_is_int(dt)) {
        double x;
        if (fab__ptx_is_int(st)) {
            /* an integer, saturated (.sat) to the destination's range */
            fab__ptx_i128 s = sint ? (fab__ptx_i128)((int64_t)(v << (64 - sn)) >> (64 - sn))
                              : (fab__ptx_i128)(sn == 64 ? v : v & ((1ull << sn) - 1));
            fab__ptx_i128 lo = dint ? -((fab__ptx_i128)1 << (dn - 1)) : 0;
            fab__ptx_i128 hi = dint ? ((fab__ptx_i128)1 << (dn - 1)) - 1 : (((fab__ptx_i128)1 << dn) - 1);
            s = s < lo ? lo : s > hi ? hi : s;
            return (uint64_t)s & dm;
        }
        x = fab__ptx_as_double(st, v);
        if ((in->f & XF_(FTZ)) && st == T_(F32))
            x = fab__ptx_ftz((float)x);
        if (isnan(x))
            return 0;
        x = fab__ptx_round_int(x, in->rnd);
        double lo = dint ? -ldexp(1.0, (int)dn - 1) : 0, hi = dint ? ldexp(1.0, (int)dn - 1) - 1 : ldexp(1.0, (int)dn) - 1;
        if (x <= lo)
            return dint ? (uint64_t)(-((fab__ptx_i128)1 << (dn - 1))) & dm : 0;
        if (x >= hi)
            return dint ? (((uint64_t)1 << (dn - 1)) - 1) : dm;
        return dint ? (uint64_t)(int64_t)x & dm : (uint64_t)x & dm;
    }
    /* to a float */
    double x;
    float f = 0;
    bool is_f = false;
    if (fab__ptx_is_int(st)) {
        if (sint) {
            int64_t s = (int64_t)(v << (64 - sn)) >> (64 - sn);
            if (dt == T_(F32) || dt == T_(F16) || dt == T_(BF16)) {
                f = (float)s;
                is_f = true;
            }
            x = (double)s;
        } else {
            uint64_t u = sn == 64 ? v : v & ((1ull << sn) - 1);
            if (dt == T_(F32) || dt == T_(F16) || dt == T_(BF16)) {
                f = (float)u;
                is_f = true;
            }
            x = (double)u;
        }
    } else {
        x = fab__ptx_as_double(st, v);
        if ((in->f & XF_(FTZ)) && st == T_(F32))
            x = fab__ptx_ftz((float)x);
        if (in->rnd == W_(RNI) || in->rnd == W_(RZI) || in->rnd == W_(RMI) || in->rnd == W_(RPI))
            x = fab__ptx_round_int(x, in->rnd);
        if (dt == T_(F32)) {
            f = (float)x; /* in the loop's rounding mode */
            is_f = true;
        }
    }
    unsigned rnd = in->rnd ? in->rnd : W_(RN);
    if (rnd == W_(RNI) || rnd == W_(RZI) || rnd == W_(RMI) || rnd == W_(RPI))
        rnd = W_(RN);
    switch (dt) {
    case T_(F16): case T_(BF16): {
        if ((in->f & XF_(RELU)) && (x < 0 || isnan(x)))
            x = isnan(x) ? x : 0;
        if (in->f & XF_(SAT))
            x = isnan(x) ? 0 : x < 0 ? 0 : x > 1 ? 1 : x;
        (void)is_f;
        return dt == T_(F16) ? fab__ptx_f64_to_f16(x, rnd) : fab__ptx_to_small(x, 7, 127, rnd);
    }
    case T_(F32):
        if (in->f & XF_(SAT))
            f = isnan(f) ? 0.0f : f < 0.0f ? 0.0f : f > 1.0f ? 1.0f : f;
        if (in->f & XF_(FTZ))
            f = fab__ptx_ftz(f);
        return fab__ptx_is_float(st) && isnan(f) ? 0x7fffffffu : FB(f);
    default:
        if (in->f & XF_(SAT))
            x = isnan(x) ? 0.0 : x < 0.0 ? 0.0 : x > 1.0 ? 1.0 : x;
        return GB(x);
    }
}

/* The fp8 pairs of cvt: e4m3 (bias 7, no infinity, S.1111.111 NaN, 448 the largest) and
 * e5m2 (bias 15, IEEE's pattern, 57344 the largest). To fp8 always .rn .satfinite: beyond
 * the largest finite (infinity too) is the largest; NaN is 0x7f. */
static float fab__ptx_fp8_to_f32(uint32_t b, bool e5)
{
    int mb = e5 ? 2 : 3, bias = e5 ? 15 : 7;
    uint32_t e = (b & 0x7f) >> mb, mt = b & ((1u << mb) - 1);
    float s = (b & 0x80) ? -1.0f : 1.0f;
    if ((e5 && e == 31) || (!e5 && e == 15 && mt == 7))
        return e5 && !mt ? s * INFINITY : NAN;
    return s * ldexpf((float)(e ? mt | (1u << mb) : mt), (e ? (int)e : 1) - bias - mb);
}

static uint32_t fab__ptx_to_fp8(double x, bool e5, bool relu)
{
    if (isnan(x))
        return 0x7f;
    if (relu && x < 0)
        return 0;
    int mb = e5 ? 2 : 3, bias = e5 ? 15 : 7, k;
    uint32_t sign = signbit(x) ? 0x80 : 0, top = e5 ? 0x7b : 0x7e;
    double a = fabs(x), max = e5 ? 57344.0 : 448.0;
    if (a >= max)
        return sign | top;
    (void)frexp(a, &k);
    int qe = (k - 1 < 1 - bias ? 1 - bias : k - 1) - mb;
    double r = ldexp(nearbyint(ldexp(a, -qe)), qe); /* the loop runs in round-to-nearest-even */
    if (r > max)
        return sign | top;
    if (r < ldexp(1.0, 1 - bias))
        return sign | (uint32_t)ldexp(r, bias - 1 + mb);
    (void)frexp(r, &k);
    return sign | (uint32_t)(k - 1 + bias) << mb | (uint32_t)(ldexp(r, mb - k + 1) - ldexp(1.0, mb));
}

static void fab__ptx_cvt_fp8_lanes(const fab__ptx_x_t *in, uint64_t *D, const uint64_t *A, uint32_t m)
{
    bool relu = in->f & XF_(RELU);
    if (in->t == T_(F16X2)) {
        bool e5 = in->t2 == T_(E5M2X2);
        LANES({
            uint32_t lo = fab__ptx_f32_to_f16(fab__ptx_fp8_to_f32(A[l] & 0xff, e5), W_(RN));
            uint32_t hi = fab__ptx_f32_to_f16(fab__ptx_fp8_to_f32(A[l] >> 8 & 0xff, e5), W_(RN));
            if (relu)
                lo = lo & 0x8000 && (lo & 0x7fff) <= 0x7c00 ? 0 : lo, hi = hi & 0x8000 && (hi & 0x7fff) <= 0x7c00 ? 0 : hi;
            D[l] = hi << 16 | lo;
        });
        return;
    }
    bool e5 = in->t == T_(E5M2X2);
    if (in->t2 == T_(F32)) {
        const uint64_t *B = A + ((int64_t)in->s[1] - (int64_t)in->s[0]) * LANES_N;
        LANES(D[l] = fab__ptx_to_fp8(F(A[l]), e5, relu) << 8 | fab__ptx_to_fp8(F(B[l]), e5, relu));
        return;
    }
    LANES(D[l] = fab__ptx_to_fp8(fab__ptx_f16_to_f32((uint16_t)(A[l] >> 16)), e5, relu) << 8 |
                 fab__ptx_to_fp8(fab__ptx_f16_to_f32((uint16_t)A[l]), e5, relu));
}

void fab__ptx_cvt_lanes(const fab__ptx_x_t *in, uint64_t *D, const uint64_t *A, uint32_t m)
{
    if (in->t == T_(E4M3X2) || in->t == T_(E5M2X2) || in->t2 == T_(E4M3X2) || in->t2 == T_(E5M2X2)) {
        fab__ptx_cvt_fp8_lanes(in, D, A, m);
        return;
    }
    if (in->t == T_(F16X2) || in->t == T_(BF16X2)) {
        const uint64_t *B = A + ((int64_t)in->s[1] - (int64_t)in->s[0]) * LANES_N;
        bool bf = in->t == T_(BF16X2);
        LANES({
            float a = F(A[l]), b = F(B[l]);
            if (in->f & XF_(RELU))
                a = a < 0 ? 0 : a, b = b < 0 ? 0 : b;
            uint32_t hi = bf ? fab__ptx_f32_to_bf16(a, in->rnd) : fab__ptx_f32_to_f16(a, in->rnd);
            uint32_t lo = bf ? fab__ptx_f32_to_bf16(b, in->rnd) : fab__ptx_f32_to_f16(b, in->rnd);
            D[l] = hi << 16 | lo;
        });
        return;
    }
    int mode = fab__ptx_fenv(in->rnd), old = FE_TONEAREST;
    bool intround = in->rnd == W_(RNI) || in->rnd == W_(RZI) || in->rnd == W_(RMI) || in->rnd == W_(RPI);
    if (mode != FE_TONEAREST && !intround) {
        old = fegetround();
        fesetround(mode);
    }
    LANES(D[l] = fab__ptx_cvt1(in, A[l]));
    if (mode != FE_TONEAREST && !intround)
        fesetround(old);
}

/* ---- comparisons ------------------------------------------------------------------------ */

static bool fab__ptx_fcmp(unsigned k, double a, double b)
{
    bool un = isnan(a) || isnan(b);
    switch (k) {
    case W_(EQ): return !un && a == b;
    case W_(NE): return !un && a != b;
    case W_(LT): return !un && a < b;
    case W_(LE): return !un && a <= b;
    case W_(GT): return !un && a > b;
    case W_(GE): return !un && a >= b;
    case W_(EQU): return un || a == b;
    case W_(NEU): return un || a != b;
    case W_(LTU): return un || a < b;
    case W_(LEU): return un || a <= b;
    case W_(GTU): return un || a > b;
    case W_(GEU): return un || a >= b;
    case W_(NUM): return !un;
    case W_(NAN): return un;
    default: return false;
    }
}

FAB__PTX_HOT uint32_t fab__ptx_compare(const fab__ptx_x_t *in, const uint64_t *A, const uint64_t *B)
{
    uint32_t r = 0;
    unsigned t = in->t, k = in->k;
    if (fab__ptx_is_float(t)) {
        bool ftz = (in->f & XF_(FTZ)) && t == T_(F32);
        for (unsigned l = 0; l < LANES_N; l++) {
            double a = fab__ptx_as_double(t, A[l]), b = fab__ptx_as_double(t, B[l]);
            if (ftz)
                a = fab__ptx_ftz((float)a), b = fab__ptx_ftz((float)b);
            r |= (uint32_t)fab__ptx_fcmp(k, a, b) << l;
        }
        return r;
    }
    unsigned n = fab__ptx_type_bits(t);
    n = n < 8 ? 32 : n;
    bool s = fab__ptx_is_sint(t);
    if (n == 32 || n == 64) {
        /* one loop per comparison, so that each vectorises */
#define CMPL(TY, OP)                                                                           \
    do {                                                                                       \
        for (unsigned l = 0; l < LANES_N; l++)                                                 \
            r |= (uint32_t)((TY)A[l] OP (TY)B[l]) << l;                                        \
    } while (0)
#define CMPK(TS, TU)                                                                           \
    switch (k) {                                                                               \
    case W_(EQ): CMPL(TU, ==); return r;                                                       \
    case W_(NE): CMPL(TU, !=); return r;                                                       \
    case W_(LT): if (s) CMPL(TS, <); else CMPL(TU, <); return r;                               \
    case W_(LE): if (s) CMPL(TS, <=); else CMPL(TU, <=); return r;                             \
    case W_(GT): if (s) CMPL(TS, >); else CMPL(TU, >); return r;                               \
    case W_(GE): if (s) CMPL(TS, >=); else CMPL(TU, >=); return r;                             \
    case W_(LO): CMPL(TU, <); return r;                                                        \
    case W_(LS): CMPL(TU, <=); return r;                                                       \
    case W_(HI): CMPL(TU, >); return r;                                                        \
    case W_(HS): CMPL(TU, >=); return r;                                                       \
    default: return 0;                                                                         \
    }
        if (n == 32)
            CMPK(int32_t, uint32_t)
        CMPK(int64_t, uint64_t)
#undef CMPK
#undef CMPL
    }
    uint64_t wm = (1ull << n) - 1;
    for (unsigned l = 0; l < LANES_N; l++) {
        uint64_t ua = A[l] & wm, ub = B[l] & wm;
        int64_t sa = (int64_t)(A[l] << (64 - n)) >> (64 - n), sb = (int64_t)(B[l] << (64 - n)) >> (64 - n);
        bool c;
        switch (k) {
        case W_(EQ): c = ua == ub; break;
        case W_(NE): c = ua != ub; break;
        case W_(LT): c = s ? sa < sb : ua < ub; break;
        case W_(LE): c = s ? sa <= sb : ua <= ub; break;
        case W_(GT): c = s ? sa > sb : ua > ub; break;
        case W_(GE): c = s ? sa >= sb : ua >= ub; break;
        case W_(LO): c = ua < ub; break;
        case W_(LS): c = ua <= ub; break;
        case W_(HI): c = ua > ub; break;
        case W_(HS): c = ua >= ub; break;
        default: c = false; break;
        }
        r |= (uint32_t)c << l;
    }
    return r;
}
