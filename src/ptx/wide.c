/* 128-bit registers (.b128): what mov, ld, st and atom take with that type,
 * decoded, and how they run. To the rest of the engine a .b128 register is
 * two 64-bit registers, its low half (the PTX register's own number) and its
 * high half (numbered after the function's registers by decode.c; slots.c
 * packs each as a value), and every instruction that names it names both,
 * reading them through s[] and writing them through d[] in the lanes of its
 * mask, as exec.h's contract asks. A 16-byte access must sit on a 16-byte
 * boundary (else FAB__PTX_E_MISALIGNED) and is one single-copy atomic access,
 * whatever its ordering: on x86-64 an aligned SSE move (MOVDQA) where the CPU
 * has AVX (Intel and AMD document 16-byte aligned SSE/AVX loads and stores as
 * atomic on such CPUs), else LOCK CMPXCHG16B; atom.cas.b128 and atom.exch.b128
 * are LOCK CMPXCHG16B. Where neither exists (another architecture, or an
 * x86-64 without CMPXCHG16B) every 16-byte access takes one of 64 spinlocks
 * picked by its address: atomic within the process only. */
#include <sched.h>
#include <string.h>

#if defined(__x86_64__)
#include <cpuid.h>
#include <emmintrin.h>
#endif

#include "src/ptx/exec.h"

/* ---- decoding ------------------------------------------------------------------------ */

/* mov.b128 d, a (k 4: two words copied); d, {a, b} of .b64 (k 4: d's halves
 * from s[0], s[1]); {a, b}, d (k 4); d, {a, b, c, e} of .b32 (k 5: packed in
 * pairs, the first element the lowest); {a, b, c, e}, d (k 6). */
int fab__ptx_dc_mov128(fab__ptx_dc_t *dc, const fab__ptx_insn_t *in, fab__ptx_x_t *x)
{
    const fab__ptx_operand_t *o = &dc->f->pool[in->first], *pool = dc->f->pool;
    int rc;
    x->k = 4;
    if (o[0].kind != FAB__PTX_OPD_VEC && o[1].kind != FAB__PTX_OPD_VEC) {
        if ((rc = fab__ptx_dc_dst128(dc, &o[0], &x->d[0], &x->d[1])))
            return rc;
        return fab__ptx_dc_src128(dc, &o[1], &x->s[0], &x->s[1]);
    }
    if (o[0].kind == FAB__PTX_OPD_VEC && o[1].kind == FAB__PTX_OPD_VEC)
        return fab__ptx_dc_fail(dc, FAB__PTX_E_UNSUPPORTED, "a vector on both sides");
    bool pack = o[1].kind == FAB__PTX_OPD_VEC;
    const fab__ptx_operand_t *v = pack ? &o[1] : &o[0];
    if (v->elems != 2 && v->elems != 4)
        return fab__ptx_dc_fail(dc, FAB__PTX_E_UNSUPPORTED, "a .b128 of %u elements (2 of .b64 or 4 of .b32)",
                                v->elems);
    if (v->first + v->elems > dc->f->npool)
        return fab__ptx_dc_fail(dc, FAB__PTX_E_UNSUPPORTED, "operands out of range");
    unsigned et = v->elems == 2 ? T_(B64) : T_(B32);
    if (v->elems == 4)
        x->k = pack ? 5 : 6;
    x->vec = (uint8_t)v->elems;
    for (unsigned i = 0; i < v->elems; i++) {
        rc = pack ? fab__ptx_dc_src(dc, &pool[v->first + i], et, &x->s[i])
                  : fab__ptx_dc_dst(dc, &pool[v->first + i], et, &x->d[i]);
        if (rc)
            return rc;
    }
    return pack ? fab__ptx_dc_dst128(dc, &o[0], &x->d[0], &x->d[1])
                : fab__ptx_dc_src128(dc, &o[1], &x->s[0], &x->s[1]);
}

/* atom.cas.b128 d, [a], b, c and atom.exch.b128 d, [a], b (insn.c has
 * checked the words, the operand count and the space): d's halves in d[0],
 * d[1], b's in s[0], s[1], c's in s[2], s[3]. */
int fab__ptx_dc_atom128(fab__ptx_dc_t *dc, const fab__ptx_insn_t *in, fab__ptx_x_t *x, unsigned nsrc)
{
    const fab__ptx_operand_t *o = &dc->f->pool[in->first];
    int rc;
    if ((rc = fab__ptx_dc_dst128(dc, &o[0], &x->d[0], &x->d[1])) ||
        (rc = fab__ptx_dc_addr(dc, &o[1], in->space, x)))
        return rc;
    for (unsigned i = 0; i < nsrc; i++)
        if ((rc = fab__ptx_dc_src128(dc, &o[2 + i], &x->s[2 * i], &x->s[2 * i + 1])))
            return rc;
    return 0;
}

/* ---- 16-byte accesses ------------------------------------------------------------------ */

static int fab__ptx_wide_how = -1; /* FAB__PTX_WIDE_*, picked at the first access */

static int fab__ptx_wide_pick(void)
{
#if defined(__x86_64__)
    unsigned a, b, c, d;
    bool cx16 = __get_cpuid(1, &a, &b, &c, &d) && (c & bit_CMPXCHG16B);
    __builtin_cpu_init();
    if (cx16 && __builtin_cpu_supports("avx"))
        return FAB__PTX_WIDE_SSE;
    if (cx16)
        return FAB__PTX_WIDE_CX16;
#endif
    return FAB__PTX_WIDE_LOCK;
}

int fab__ptx_wide_mode(void)
{
    int how = __atomic_load_n(&fab__ptx_wide_how, __ATOMIC_RELAXED);
    if (how < 0) {
        how = fab__ptx_wide_pick();
        __atomic_store_n(&fab__ptx_wide_how, how, __ATOMIC_RELAXED);
    }
    return how;
}

void fab__ptx_wide_use(int how)
{
    int best = fab__ptx_wide_pick();
    /* never a way the CPU lacks: SSE needs AVX, both need CMPXCHG16B */
    if (how < 0 || how < best)
        how = best;
    __atomic_store_n(&fab__ptx_wide_how, how > FAB__PTX_WIDE_LOCK ? FAB__PTX_WIDE_LOCK : how, __ATOMIC_RELAXED);
}

static unsigned fab__ptx_wide_locks[64];

static unsigned *fab__ptx_wide_lock(const unsigned char *p, bool write)
{
    /* touch the page first, so that a fault is taken with no lock held */
    if (write)
        __atomic_fetch_or((unsigned char *)p, 0, __ATOMIC_RELAXED);
    else
        (void)__atomic_load_n(p, __ATOMIC_RELAXED);
    unsigned *k = &fab__ptx_wide_locks[((uintptr_t)p >> 4) & 63];
    for (unsigned spins = 0; __atomic_exchange_n(k, 1u, __ATOMIC_ACQUIRE); spins++)
        if (spins > 64)
            sched_yield();
    return k;
}

static void fab__ptx_wide_unlock(unsigned *k)
{
    __atomic_store_n(k, 0u, __ATOMIC_RELEASE);
}

#if defined(__x86_64__)
/* LOCK CMPXCHG16B: *p == e ? *p = n : e = *p, atomically; whether it stored. */
static inline bool fab__ptx_cx16(unsigned char *p, uint64_t e[2], const uint64_t n[2])
{
    bool ok;
    __asm__ __volatile__("lock cmpxchg16b %1"
                         : "=@ccz"(ok), "+m"(*(volatile fab__ptx_u128 *)(void *)p), "+a"(e[0]), "+d"(e[1])
                         : "b"(n[0]), "c"(n[1])
                         : "memory");
    return ok;
}
#endif

/* The 16 bytes at p (aligned), as one access. */
static inline void fab__ptx_load16(const unsigned char *p, uint64_t v[2], int how)
{
#if defined(__x86_64__)
    if (how == FAB__PTX_WIDE_SSE) {
        __m128i x;
        __asm__ __volatile__("movdqa %1, %0" : "=x"(x) : "m"(*(const __m128i *)(const void *)p) : "memory");
        v[0] = (uint64_t)_mm_cvtsi128_si64(x);
        v[1] = (uint64_t)_mm_cvtsi128_si64(_mm_unpackhi_epi64(x, x));
        return;
    }
    if (how == FAB__PTX_WIDE_CX16) {
        /* a compare with what it then stores: the old value either way */
        const uint64_t z[2] = {0, 0};
        v[0] = v[1] = 0;
        fab__ptx_cx16((unsigned char *)(uintptr_t)p, v, z);
        return;
    }
#endif
    (void)how;
    unsigned *k = fab__ptx_wide_lock(p, false);
    memcpy(v, p, 16);
    fab__ptx_wide_unlock(k);
}

static inline void fab__ptx_store16(unsigned char *p, const uint64_t v[2], int how)
{
#if defined(__x86_64__)
    if (how == FAB__PTX_WIDE_SSE) {
        __m128i x = _mm_set_epi64x((long long)v[1], (long long)v[0]);
        __asm__ __volatile__("movdqa %1, %0" : "=m"(*(__m128i *)(void *)p) : "x"(x) : "memory");
        return;
    }
    if (how == FAB__PTX_WIDE_CX16) {
        uint64_t e[2] = {__atomic_load_n((uint64_t *)(void *)p, __ATOMIC_RELAXED), /* a guess */
                         __atomic_load_n((uint64_t *)(void *)(p + 8), __ATOMIC_RELAXED)};
        while (!fab__ptx_cx16(p, e, v))
            ;
        return;
    }
#endif
    (void)how;
    unsigned *k = fab__ptx_wide_lock(p, true);
    memcpy(p, v, 16);
    fab__ptx_wide_unlock(k);
}

/* *p == e ? *p = n : nothing, atomically; e becomes the old value. */
static inline bool fab__ptx_cas16(unsigned char *p, uint64_t e[2], const uint64_t n[2], int how)
{
#if defined(__x86_64__)
    if (how != FAB__PTX_WIDE_LOCK)
        return fab__ptx_cx16(p, e, n);
#endif
    (void)how;
    unsigned *k = fab__ptx_wide_lock(p, true);
    uint64_t old[2];
    memcpy(old, p, 16);
    bool ok = old[0] == e[0] && old[1] == e[1];
    if (ok)
        memcpy(p, n, 16);
    memcpy(e, old, 16);
    fab__ptx_wide_unlock(k);
    return ok;
}

/* ---- the handlers ------------------------------------------------------------------------ */

/* In a loop over lanes l: skip an inactive lane, else set p to its host
 * pointer for 16 bytes, or return the fault of a bad address. */
#define FAB__PTX_WIDE_LANE(p, l)                                                           \
    if (!(m >> (l) & 1))                                                                   \
        continue;                                                                          \
    unsigned char *p;                                                                      \
    do {                                                                                   \
        int rc_ = fab__ptx_lane_ptr(w, in, l, 16, &p);                                     \
        if (rc_)                                                                           \
            return rc_;                                                                    \
    } while (0)

int fab__ptx_x_mov128(W_ARGS)
{
    uint64_t *D0 = SLOT(in->d[0]), *D1 = SLOT(in->d[1]), *D2 = SLOT(in->d[2]), *D3 = SLOT(in->d[3]);
    const uint64_t *A = SLOT(in->s[0]), *B = SLOT(in->s[1]), *C = SLOT(in->s[2]), *E = SLOT(in->s[3]);
    const uint64_t lo32 = 0xffffffffu;
    /* every source of a lane read before its destinations are written */
    switch (in->k) {
    case 4:
        LANES({
            uint64_t lo = A[l], hi = B[l];
            D0[l] = lo;
            D1[l] = hi;
        });
        break;
    case 5:
        LANES({
            uint64_t lo = (A[l] & lo32) | B[l] << 32, hi = (C[l] & lo32) | E[l] << 32;
            D0[l] = lo;
            D1[l] = hi;
        });
        break;
    default:
        LANES({
            uint64_t lo = A[l], hi = B[l];
            D0[l] = lo & lo32;
            D1[l] = lo >> 32;
            D2[l] = hi & lo32;
            D3[l] = hi >> 32;
        });
        break;
    }
    return R_NEXT;
}

int fab__ptx_x_ld128(W_ARGS)
{
    uint64_t *L = SLOT(in->d[0]), *H = SLOT(in->d[1]);
    int how = fab__ptx_wide_mode();
    for (unsigned l = 0; l < LANES_N; l++) {
        FAB__PTX_WIDE_LANE(p, l);
        uint64_t v[2];
        fab__ptx_load16(p, v, how);
        L[l] = v[0];
        H[l] = v[1];
    }
    return in->sem != FAB__PTX_SEM_PLAIN ? fab__ptx_polled(w) : R_NEXT;
}

int fab__ptx_x_st128(W_ARGS)
{
    const uint64_t *L = SLOT(in->s[0]), *H = SLOT(in->s[1]);
    int how = fab__ptx_wide_mode();
    w->stored = true;
    for (unsigned l = 0; l < LANES_N; l++) {
        FAB__PTX_WIDE_LANE(p, l);
        const uint64_t v[2] = {L[l], H[l]};
        fab__ptx_store16(p, v, how);
        if (fab__ptx_st_mc(w, in->sem, (uintptr_t)p, 16, l) != R_NEXT)
            return R_FAULT;
    }
    return R_NEXT;
}

int fab__ptx_x_atom128(W_ARGS)
{
    uint64_t *D0 = SLOT(in->d[0]), *D1 = SLOT(in->d[1]);
    const uint64_t *B0 = SLOT(in->s[0]), *B1 = SLOT(in->s[1]), *C0 = SLOT(in->s[2]), *C1 = SLOT(in->s[3]);
    int how = fab__ptx_wide_mode();
    bool changed = false;
    for (unsigned l = 0; l < LANES_N; l++) {
        FAB__PTX_WIDE_LANE(p, l);
        uint64_t e[2] = {B0[l], B1[l]};
        if (in->k == W_(CAS)) {
            const uint64_t n[2] = {C0[l], C1[l]};
            changed |= fab__ptx_cas16(p, e, n, how);
        } else { /* exch */
            const uint64_t n[2] = {e[0], e[1]};
            e[0] = __atomic_load_n((uint64_t *)(void *)p, __ATOMIC_RELAXED); /* a guess the swap checks */
            e[1] = __atomic_load_n((uint64_t *)(void *)(p + 8), __ATOMIC_RELAXED);
            while (!fab__ptx_cas16(p, e, n, how))
                ;
            changed = true;
        }
        D0[l] = e[0];
        D1[l] = e[1];
    }
    if (changed) {
        w->stored = true;
        return R_NEXT;
    }
    return fab__ptx_polled(w); /* a compare-and-swap that failed in every lane polls, as a load does */
}
