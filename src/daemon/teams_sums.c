/* The daemon's arithmetic over a multicast team's binds: MC_REDUCE's sums
 * (and least and greatest) of the bound ranges into a member's sums, and a
 * ranged MC_SYNC's operation (multimem.red) folded into every bound range;
 * the halves and bfloat16s of the x2 operations in float, rounded once. */
#include "src/daemon/teams_impl.h"
#include "src/daemon/registry_impl.h"

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

/* The x2 sums' halves and bfloat16s, to float and back (round to nearest
 * even, as the PTX ISA's .rn; NaN stays NaN). */
static float fab__mc_bits_f32(uint32_t u)
{
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

static uint32_t fab__mc_f32_bits(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}

static float fab__mc_from16(uint16_t h, bool bf)
{
    if (bf)
        return fab__mc_bits_f32((uint32_t)h << 16);
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16, e = (h >> 10) & 0x1fu, m = h & 0x3ffu;
    if (e == 0x1f)
        return fab__mc_bits_f32(sign | 0x7f800000u | m << 13);
    if (e == 0) { /* zero or subnormal: m * 2^-24 */
        float f = (float)m / 16777216.0f;
        return sign ? -f : f;
    }
    return fab__mc_bits_f32(sign | (e + 112u) << 23 | m << 13);
}

static uint16_t fab__mc_to16(float f, bool bf)
{
    uint32_t u = fab__mc_f32_bits(f);
    if (bf) {
        if ((u & 0x7fffffffu) > 0x7f800000u)
            return (uint16_t)(u >> 16 | 0x40u); /* a quiet NaN */
        return (uint16_t)((u + 0x7fffu + (u >> 16 & 1u)) >> 16);
    }
    uint16_t sign = (uint16_t)(u >> 16 & 0x8000u);
    uint32_t a = u & 0x7fffffffu;
    if (a > 0x7f800000u)
        return sign | 0x7e00u;
    if (a >= 0x477ff000u) /* rounds to 65520 or more: infinity */
        return sign | 0x7c00u;
    if (a < 0x38800000u) { /* below 2^-14: a subnormal half, m * 2^-24 */
        float m = fab__mc_bits_f32(a) * 16777216.0f;
        float r = __builtin_rintf(m); /* the default rounding is to nearest even */
        return sign | (uint16_t)r;
    }
    uint32_t rounded = a + 0xfffu + (a >> 13 & 1u);
    return sign | (uint16_t)((rounded >> 13) - (112u << 10));
}

/* Sum count 32-bit elements at off over every bind into the member's sums
 * at the same offset: floats or integers one to an element, or, for the x2
 * sums, two halves or bfloat16s to an element, each summed in float over the
 * binds and rounded once (multimem.ld_reduce's .acc::f32); or the least or
 * greatest of count 64-bit unsigned elements. */
fab_status_t fab__mc_reduce(fab__mc_member_t *m, const fab__request_t *rq)
{
    fab__mc_team_t *team = m->team;
    uint32_t op = rq->u.mc.types;
    bool wide = op == FAB__MC_OP_MIN_U64 || op == FAB__MC_OP_MAX_U64;
    uint64_t esize = wide ? 8 : 4;
    uint64_t off = rq->u.mc.mc_offset, count = rq->u.mc.count, bytes = count * esize;
    if ((!wide && op != FAB__MC_OP_ADD_F32 && op != FAB__MC_OP_ADD_U32 &&
         op != FAB__MC_OP_ADD_F16X2 && op != FAB__MC_OP_ADD_BF16X2) ||
        off % esize != 0 || bytes > team->size || off > team->size - bytes)
        return FAB_ERROR_INVALID_VALUE;
    uint8_t *out = fab__mc_sums(m) + off;
    memset(out, 0, bytes);
    const fab__mc_bind_t *in[FAB__MC_BINDS];
    unsigned nin = 0;
    for (unsigned k = 0; k < FAB__MC_BINDS; k++) {
        const fab__mc_bind_t *b = team->binds[k];
        if (b && off + bytes > b->mc_offset && off < b->mc_offset + b->size)
            in[nin++] = b;
    }
    if (wide) {
        /* every bind covering an element has its say; one no bind covers is 0 */
        for (uint64_t i = 0; i < count; i++) {
            uint64_t at = off + i * 8, r = 0;
            bool any = false;
            for (unsigned k = 0; k < nin; k++) {
                if (at < in[k]->mc_offset || at >= in[k]->mc_offset + in[k]->size)
                    continue;
                uint64_t v;
                memcpy(&v, in[k]->map + (at - in[k]->mc_offset), sizeof v);
                if (!any || (op == FAB__MC_OP_MIN_U64 ? v < r : v > r))
                    r = v;
                any = true;
            }
            memcpy(out + i * 8, &r, sizeof r);
        }
        return FAB_SUCCESS;
    }
    if (op == FAB__MC_OP_ADD_F16X2 || op == FAB__MC_OP_ADD_BF16X2) {
        bool bf = op == FAB__MC_OP_ADD_BF16X2;
        uint32_t *dst = (uint32_t *)(void *)out;
        for (uint64_t i = 0; i < count; i++) {
            uint64_t at = off + i * 4;
            float lo = 0.0f, hi = 0.0f;
            for (unsigned k = 0; k < nin; k++) {
                if (at < in[k]->mc_offset || at >= in[k]->mc_offset + in[k]->size)
                    continue;
                uint32_t v;
                memcpy(&v, in[k]->map + (at - in[k]->mc_offset), sizeof v);
                lo += fab__mc_from16((uint16_t)v, bf);
                hi += fab__mc_from16((uint16_t)(v >> 16), bf);
            }
            dst[i] = (uint32_t)fab__mc_to16(lo, bf) | (uint32_t)fab__mc_to16(hi, bf) << 16;
        }
        return FAB_SUCCESS;
    }
    for (unsigned k = 0; k < nin; k++) {
        const fab__mc_bind_t *b = in[k];
        uint64_t lo = off > b->mc_offset ? off : b->mc_offset;
        uint64_t hi = off + bytes < b->mc_offset + b->size ? off + bytes : b->mc_offset + b->size;
        /* Both sides are 4-byte aligned: the sums start a page into the
         * shadow, a bind's mapping on a page, and off and lo are multiples
         * of 4. */
        uint64_t n = (hi - lo) / 4;
        if (op == FAB__MC_OP_ADD_F32) {
            float *dst = (float *)(void *)(out + (lo - off));
            const float *src = (const float *)(const void *)(b->map + (lo - b->mc_offset));
            for (uint64_t i = 0; i < n; i++)
                dst[i] += src[i];
        } else {
            uint32_t *dst = (uint32_t *)(void *)(out + (lo - off));
            const uint32_t *src = (const uint32_t *)(const void *)(b->map + (lo - b->mc_offset));
            for (uint64_t i = 0; i < n; i++)
                dst[i] += src[i];
        }
    }
    return FAB_SUCCESS;
}

/* One element of a ranged MC_SYNC's operation: *dst op= *src. */
static void fab__mc_fold(uint32_t op, uint8_t *dst, const uint8_t *src)
{
    if (op == FAB__MC_OP_MIN_U64 || op == FAB__MC_OP_MAX_U64 || op == FAB__MC_OP_ADD_U64) {
        uint64_t a, b;
        memcpy(&a, dst, 8);
        memcpy(&b, src, 8);
        a = op == FAB__MC_OP_ADD_U64 ? a + b : op == FAB__MC_OP_MIN_U64 ? (b < a ? b : a)
                                                                        : (b > a ? b : a);
        memcpy(dst, &a, 8);
        return;
    }
    uint32_t a, b;
    memcpy(&a, dst, 4);
    memcpy(&b, src, 4);
    if (op == FAB__MC_OP_ADD_U32) {
        a += b;
    } else if (op == FAB__MC_OP_ADD_F32) {
        a = fab__mc_f32_bits(fab__mc_bits_f32(a) + fab__mc_bits_f32(b));
    } else {
        bool bf = op == FAB__MC_OP_ADD_BF16X2;
        float lo = fab__mc_from16((uint16_t)a, bf) + fab__mc_from16((uint16_t)b, bf);
        float hi = fab__mc_from16((uint16_t)(a >> 16), bf) + fab__mc_from16((uint16_t)(b >> 16), bf);
        a = (uint32_t)fab__mc_to16(lo, bf) | (uint32_t)fab__mc_to16(hi, bf) << 16;
    }
    memcpy(dst, &a, 4);
}

fab_status_t fab__mc_red(fab__mc_member_t *m, const fab__request_t *rq)
{
    const fab__mc_team_t *team = m->team;
    uint32_t op = rq->u.mc.types;
    uint64_t esize = op == FAB__MC_OP_MIN_U64 || op == FAB__MC_OP_MAX_U64 ||
                             op == FAB__MC_OP_ADD_U64 ? 8 : 4;
    uint64_t off = rq->u.mc.mc_offset, count = rq->u.mc.count, len = rq->u.mc.size;
    /* The length is said twice, as elements and as bytes: they must agree,
     * and lie in the team, on the element's alignment. */
    if (op < FAB__MC_OP_ADD_F32 || op > FAB__MC_OP_ADD_U64 || count == 0 ||
        count > team->size / esize || len != count * esize || off % esize != 0 ||
        off > team->size - len || rq->u.mc.mem_offset != 0) {
        fab__user_log(m->conn->user, FAB__LOG_WARN, "MC_SYNC refused: operation %u on %llu "
                      "elements (%llu bytes) at %llu does not fit the team's %llu bytes",
                      (unsigned)op, (unsigned long long)count, (unsigned long long)len,
                      (unsigned long long)off, (unsigned long long)team->size);
        return FAB_ERROR_INVALID_VALUE;
    }
    const uint8_t *operand = m->staging + off;
    for (unsigned k = 0; k < FAB__MC_BINDS; k++) {
        const fab__mc_bind_t *b = team->binds[k];
        uint64_t lo, hi;
        if (!fab__mc_overlap(b, off, len, &lo, &hi))
            continue;
        for (uint64_t at = lo; at < hi; at += esize)
            fab__mc_fold(op, b->map + (at - b->mc_offset), operand + (at - off));
    }
    /* The operand leaves the staging copy: the member's loads read its own
     * bound memory there, or what the snapshot held. */
    uint8_t *snap = fab__mc_snapshot(m);
    memcpy(m->staging + off, snap + off, len);
    for (unsigned k = 0; k < FAB__MC_BINDS; k++) {
        const fab__mc_bind_t *b = team->binds[k];
        uint64_t lo, hi;
        if (!fab__mc_overlap(b, off, len, &lo, &hi) || b->member != m)
            continue;
        memcpy(m->staging + lo, b->map + (lo - b->mc_offset), hi - lo);
        memcpy(snap + lo, b->map + (lo - b->mc_offset), hi - lo);
    }
    return FAB_SUCCESS;
}
