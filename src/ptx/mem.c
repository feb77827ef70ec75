/* Memory for the interpreter: ld and st in every state space with their
 * vector forms, the memory model's orderings mapped onto C11 atomics
 * (aligned accesses of up to 8 bytes single-copy atomic, a 16-byte vector
 * as two 8-byte ones; a .b128 access is wide.c's), atom and red, cvta and isspacep, spin detection
 * (an ordered load run again with no store since ends the quantum), the
 * built-in functions (vprintf formatted here, malloc, free, __assertfail),
 * and a fault's first report (fab__ptx_warp_fail). A generic, .global or .const
 * address is a host address; a .shared one an offset in the block's
 * window, a .local one in the lane's window, a kernel's .param one in the
 * launch's buffer. An access outside those windows is a fault found here;
 * one to an unmapped or protected host page is caught by sched.c's signal
 * handler. */
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "src/ptx/exec.h"

#define FAB__PTX_LOW_LIMIT 4096u /* a generic address below this is a null pointer's */

int fab__ptx_warp_fail(fab__ptx_warp_t *w, int status, uint32_t lane, uintptr_t addr, const char *why)
{
    w->status = status;
    w->fault_lane = lane;
    w->fault_addr = addr;
    snprintf(w->msg, sizeof(w->msg), "%s", why);
    return R_FAULT;
}

/* Lane l's host address for an access of n bytes at a (in in's space), or
 * NULL when outside its window. */
static inline unsigned char *fab__ptx_where(const fab__ptx_warp_t *w, unsigned space, unsigned l, uint64_t a,
                                            uint32_t n)
{
    switch (space) {
    case FAB__PTX_XS_SHARED:
        return a + n <= w->blk->shared_size && a + n >= a ? w->blk->shared + a : NULL;
    case FAB__PTX_XS_LOCAL:
        return a + n <= w->lstride && a + n >= a ? w->local + (size_t)l * w->lstride + a : NULL;
    case FAB__PTX_XS_KPARAM:
        return a + n <= w->run->kernel->info.param_bytes && a + n >= a
                   ? (unsigned char *)w->run->launch->params + a : NULL;
    default:
        return a >= FAB__PTX_LOW_LIMIT ? (unsigned char *)(uintptr_t)a : NULL;
    }
}

static int fab__ptx_bad_addr(fab__ptx_warp_t *w, unsigned l, uint64_t a, uint32_t n, unsigned space)
{
    (void)n;
    static const char *const names[] = {"generic", "shared", "local", "param"};
    char why[96];
    snprintf(why, sizeof(why), "an address outside the %s window", names[space & 3]);
    return fab__ptx_warp_fail(w, FAB__PTX_E_FAULT, l, (uintptr_t)a, why);
}

/* The lane whose access by the current instruction covers addr (after a
 * signal), or the first active lane. */
unsigned fab__ptx_fault_lane(const fab__ptx_warp_t *w, uintptr_t addr)
{
    const fab__ptx_simt_t *t = &w->st[w->depth - 1];
    const fab__ptx_x_t *in = &w->code->x[t->pc < w->code->nx ? t->pc : 0];
    uint32_t n = (uint32_t)in->size * in->vec;
    for (unsigned l = 0; l < LANES_N; l++) {
        if (!(t->mask >> l & 1))
            continue;
        uint64_t a = w->R[(size_t)in->addr * LANES_N + l] + (uint64_t)in->off;
        const unsigned char *p = fab__ptx_where(w, in->space, l, a, n ? n : 1);
        if (p && addr >= (uintptr_t)p && addr < (uintptr_t)p + (n ? n : 1))
            return l;
    }
    return t->mask ? (unsigned)__builtin_ctz(t->mask) : 0;
}

static inline uint64_t fab__ptx_load1(const unsigned char *p, unsigned n, unsigned sem, bool sgn)
{
    uint64_t v = 0;
    if (sem == FAB__PTX_SEM_PLAIN) {
        switch (n) {
        case 1: v = *p; break;
        case 2: { uint16_t x; memcpy(&x, p, 2); v = x; break; }
        case 4: { uint32_t x; memcpy(&x, p, 4); v = x; break; }
        default: memcpy(&v, p, 8); break;
        }
    } else {
        int mo = sem == FAB__PTX_SEM_ACQUIRE ? __ATOMIC_ACQUIRE : __ATOMIC_RELAXED;
        switch (n) {
        case 1: v = __atomic_load_n(p, mo); break;
        case 2: v = __atomic_load_n((const uint16_t *)(const void *)p, mo); break;
        case 4: v = __atomic_load_n((const uint32_t *)(const void *)p, mo); break;
        default: v = __atomic_load_n((const uint64_t *)(const void *)p, mo); break;
        }
    }
    if (sgn && n < 8)
        v = (uint64_t)((int64_t)(v << (64 - 8 * n)) >> (64 - 8 * n));
    return v;
}

static inline void fab__ptx_store1(unsigned char *p, unsigned n, unsigned sem, uint64_t v)
{
    if (sem == FAB__PTX_SEM_PLAIN) {
        switch (n) {
        case 1: *p = (unsigned char)v; break;
        case 2: { uint16_t x = (uint16_t)v; memcpy(p, &x, 2); break; }
        case 4: { uint32_t x = (uint32_t)v; memcpy(p, &x, 4); break; }
        default: memcpy(p, &v, 8); break;
        }
        return;
    }
    int mo = sem == FAB__PTX_SEM_RELEASE ? __ATOMIC_RELEASE : __ATOMIC_RELAXED;
    switch (n) {
    case 1: __atomic_store_n(p, (unsigned char)v, mo); break;
    case 2: __atomic_store_n((uint16_t *)(void *)p, (uint16_t)v, mo); break;
    case 4: __atomic_store_n((uint32_t *)(void *)p, (uint32_t)v, mo); break;
    default: __atomic_store_n((uint64_t *)(void *)p, v, mo); break;
    }
}

/* One aligned word of a vector access, 1, 2, 4 or 8 bytes, single-copy
 * atomic. */
static inline uint64_t fab__ptx_load_word(const unsigned char *p, unsigned n, int mo)
{
    switch (n) {
    case 1: return __atomic_load_n(p, mo);
    case 2: return __atomic_load_n((const uint16_t *)(const void *)p, mo);
    case 4: return __atomic_load_n((const uint32_t *)(const void *)p, mo);
    default: return __atomic_load_n((const uint64_t *)(const void *)p, mo);
    }
}

static inline void fab__ptx_store_word(unsigned char *p, unsigned n, int mo, uint64_t v)
{
    switch (n) {
    case 1: __atomic_store_n(p, (unsigned char)v, mo); break;
    case 2: __atomic_store_n((uint16_t *)(void *)p, (uint16_t)v, mo); break;
    case 4: __atomic_store_n((uint32_t *)(void *)p, (uint32_t)v, mo); break;
    default: __atomic_store_n((uint64_t *)(void *)p, v, mo); break;
    }
}

/* The access of lane l, checked: its window and its alignment. */
/* Whether every lane's address a + off is at or above the null page and
 * aligned to n: one branch-free pass, so that the common full-warp access
 * then needs no test per lane (the per-lane path finds which lane failed). */
static inline bool fab__ptx_lanes_ok(const uint64_t *A, uint64_t off, unsigned n)
{
    uint64_t mis = 0, low = 0;
    for (unsigned l = 0; l < LANES_N; l++) {
        uint64_t a = A[l] + off;
        mis |= a & (n - 1);
        low |= a < FAB__PTX_LOW_LIMIT;
    }
    return !(mis | low);
}

/* For lane l's host address a of an n-byte access: 0, or the fault of a
 * null-page or misaligned one (R_FAULT). */
static inline int fab__ptx_host_bad(fab__ptx_warp_t *w, const fab__ptx_x_t *in, unsigned l, uint64_t a,
                                    unsigned n)
{
    if (a < FAB__PTX_LOW_LIMIT)
        return fab__ptx_bad_addr(w, l, a, n, in->space);
    if (a & (n - 1))
        return fab__ptx_warp_fail(w, FAB__PTX_E_MISALIGNED, l, (uintptr_t)a, "a misaligned access");
    return 0;
}

/* In a loop over lanes l: skip an inactive lane, else set a to its host
 * address and return the fault of a bad one. */
#define FAB__PTX_HOST_LANE(a, l, n)                                                        \
    if (!(m >> (l) & 1))                                                                   \
        continue;                                                                          \
    uint64_t a = A[l] + (uint64_t)in->off;                                                 \
    do {                                                                                   \
        int bad_ = fab__ptx_host_bad(w, in, l, a, n);                                      \
        if (bad_)                                                                          \
            return bad_;                                                                   \
    } while (0)

#define FAB__PTX_ADDR(p, l, n)                                                             \
    uint64_t a_ = A[l] + (uint64_t)in->off;                                                \
    unsigned char *p = fab__ptx_where(w, in->space, l, a_, n);                             \
    if (!p)                                                                                \
        return fab__ptx_bad_addr(w, l, a_, n, in->space);                                  \
    if ((uintptr_t)p & ((n) - 1))                                                          \
        return fab__ptx_warp_fail(w, FAB__PTX_E_MISALIGNED, l, (uintptr_t)p, "a misaligned access")

int fab__ptx_lane_ptr(fab__ptx_warp_t *w, const fab__ptx_x_t *in, unsigned l, unsigned n, unsigned char **p_out)
{
    const uint64_t *A = SLOT(in->addr);
    FAB__PTX_ADDR(p, l, n);
    *p_out = p;
    return 0;
}

int fab__ptx_x_ld(W_ARGS)
{
    const uint64_t *A = SLOT(in->addr);
    unsigned n = in->size, v = in->vec, tot = n * v;
    bool sgn = fab__ptx_is_sint(in->t);
    unsigned sem = in->sem;
    if (__builtin_expect(n == 16, 0)) /* .b128 */
        return fab__ptx_x_ld128(w, in, m);
    if (in->k == 1 && v == 1) {
        /* one address for every lane: load once */
        unsigned first = (unsigned)__builtin_ctz(m);
        FAB__PTX_ADDR(p, first, n);
        uint64_t x = fab__ptx_load1(p, n, sem, sgn);
        uint64_t *D = SLOT(in->d[0]);
        LANES(D[l] = x);
    } else if (v == 1 && sem == FAB__PTX_SEM_PLAIN && in->space == FAB__PTX_XS_GENERIC && (n == 4 || n == 8) && !sgn) {
        /* the common case, without the per-lane switches */
        uint64_t *D = SLOT(in->d[0]);
        if (m == 0xffffffffu && fab__ptx_lanes_ok(A, (uint64_t)in->off, n)) {
            const uint64_t off = (uint64_t)in->off;
            if (n == 4)
                for (unsigned l = 0; l < LANES_N; l++) {
                    uint32_t x;
                    memcpy(&x, (const void *)(uintptr_t)(A[l] + off), 4);
                    D[l] = x;
                }
            else
                for (unsigned l = 0; l < LANES_N; l++)
                    memcpy(&D[l], (const void *)(uintptr_t)(A[l] + off), 8);
            goto loaded;
        }
        for (unsigned l = 0; l < LANES_N; l++) {
            FAB__PTX_HOST_LANE(a, l, n);
            if (n == 4) {
                uint32_t x;
                memcpy(&x, (const void *)(uintptr_t)a, 4);
                D[l] = x;
            } else {
                memcpy(&D[l], (const void *)(uintptr_t)a, 8);
            }
        }
    } else if (v == 1) {
        uint64_t *D = SLOT(in->d[0]);
        for (unsigned l = 0; l < LANES_N; l++) {
            if (!(m >> l & 1))
                continue;
            FAB__PTX_ADDR(p, l, n);
            D[l] = fab__ptx_load1(p, n, sem, sgn);
        }
    } else if (in->space == FAB__PTX_XS_GENERIC && (tot == 8 || tot == 16) && (n == 4 || n == 8)) {
        /* The vectors LL-style protocols move ({data, flag} as v2.u32,
         * v4.u32, v2.u64) at a host address: one or two 8-byte words a
         * lane, without the general case's per-element arithmetic. */
        int mo = sem == FAB__PTX_SEM_ACQUIRE ? __ATOMIC_ACQUIRE : __ATOMIC_RELAXED;
        unsigned nw = tot / 8;
        for (unsigned l = 0; l < LANES_N; l++) {
            FAB__PTX_HOST_LANE(a, l, tot);
            for (unsigned c = 0; c < nw; c++) {
                uint64_t x = __atomic_load_n((const uint64_t *)(uintptr_t)(a + 8 * c), mo);
                if (n == 8) {
                    w->R[(size_t)in->d[c] * LANES_N + l] = x;
                    continue;
                }
                uint64_t lo = x & 0xffffffffu, hi = x >> 32;
                if (sgn)
                    lo = (uint64_t)(int64_t)(int32_t)lo, hi = (uint64_t)(int64_t)(int32_t)hi;
                w->R[(size_t)in->d[2 * c] * LANES_N + l] = lo;
                w->R[(size_t)in->d[2 * c + 1] * LANES_N + l] = hi;
            }
        }
    } else {
        /* A vector access is single-copy atomic per aligned 8 bytes (the
         * whole of it when smaller), as NCCL's LL protocol needs of a
         * {data, flag} pair: it is read as such words, then split. */
        unsigned cs = tot < 8 ? tot : 8;
        int mo = sem == FAB__PTX_SEM_ACQUIRE ? __ATOMIC_ACQUIRE : __ATOMIC_RELAXED;
        for (unsigned l = 0; l < LANES_N; l++) {
            if (!(m >> l & 1))
                continue;
            FAB__PTX_ADDR(p, l, tot);
            uint64_t words[8];
            for (unsigned c = 0; c < tot / cs; c++)
                words[c] = fab__ptx_load_word(p + c * cs, cs, mo);
            for (unsigned i = 0; i < v; i++) {
                unsigned o = i * n;
                uint64_t x = n == 8 ? words[o / 8] : words[o / cs] >> (8 * (o % cs));
                if (n < 8)
                    x &= ((uint64_t)1 << (8 * n)) - 1;
                if (sgn && n < 8)
                    x = (uint64_t)((int64_t)(x << (64 - 8 * n)) >> (64 - 8 * n));
                w->R[(size_t)in->d[i] * LANES_N + l] = x;
            }
        }
    }
loaded:
    return sem != FAB__PTX_SEM_PLAIN ? fab__ptx_polled(w) : R_NEXT;
}

/* An ordered store (.relaxed, .release, .volatile) to a multicast mapping's
 * address goes to every bound buffer at once, as a multimem.st does: a GPU
 * multicasts any store there, and NCCL's NVLS posts its steps so. Weak
 * stores stay in the staging copy until the next synchronisation (the
 * host's, docs/ptx.md); with no multicast callbacks nothing is asked. */
int fab__ptx_st_mc(fab__ptx_warp_t *w, unsigned sem, uintptr_t p, unsigned bytes, unsigned lane)
{
    const fab__ptx_host_t *h = w->run->launch->host;
    if (sem == FAB__PTX_SEM_PLAIN || !h || !h->mc_is || !h->mc_st || !h->mc_is(h->ctx, p))
        return R_NEXT;
    unsigned char buf[16]; /* the widest store the decoder takes */
    if (bytes > sizeof(buf))
        return fab__ptx_warp_fail(w, FAB__PTX_E_TRAP, lane, p, "a store to a multicast address over 16 bytes");
    memcpy(buf, (const void *)p, bytes);
    int rc = h->mc_st(h->ctx, p, T_(B8), buf, bytes);
    return rc ? fab__ptx_warp_fail(w, rc, lane, p, "the multicast object refused the store") : R_NEXT;
}

int fab__ptx_x_st(W_ARGS)
{
    const uint64_t *A = SLOT(in->addr);
    unsigned n = in->size, v = in->vec, tot = n * v;
    unsigned sem = in->sem;
    if (__builtin_expect(n == 16, 0)) /* .b128 */
        return fab__ptx_x_st128(w, in, m);
    w->stored = true;
    if (v == 1 && sem == FAB__PTX_SEM_PLAIN && in->space == FAB__PTX_XS_GENERIC && (n == 4 || n == 8)) {
        const uint64_t *V = SLOT(in->s[0]);
        if (m == 0xffffffffu && fab__ptx_lanes_ok(A, (uint64_t)in->off, n)) {
            const uint64_t off = (uint64_t)in->off;
            if (n == 4)
                for (unsigned l = 0; l < LANES_N; l++) {
                    uint32_t x = (uint32_t)V[l];
                    memcpy((void *)(uintptr_t)(A[l] + off), &x, 4);
                }
            else
                for (unsigned l = 0; l < LANES_N; l++)
                    memcpy((void *)(uintptr_t)(A[l] + off), &V[l], 8);
            return R_NEXT;
        }
        for (unsigned l = 0; l < LANES_N; l++) {
            FAB__PTX_HOST_LANE(a, l, n);
            if (n == 4) {
                uint32_t x = (uint32_t)V[l];
                memcpy((void *)(uintptr_t)a, &x, 4);
            } else {
                memcpy((void *)(uintptr_t)a, &V[l], 8);
            }
        }
        return R_NEXT;
    }
    if (v == 1) {
        for (unsigned l = 0; l < LANES_N; l++) {
            if (!(m >> l & 1))
                continue;
            FAB__PTX_ADDR(p, l, tot);
            fab__ptx_store1(p, n, sem, w->R[(size_t)in->s[0] * LANES_N + l]);
            if (fab__ptx_st_mc(w, sem, (uintptr_t)p, n, l) != R_NEXT)
                return R_FAULT;
        }
        return R_NEXT;
    }
    /* A vector store is packed into aligned 8-byte words (the whole of it
     * when smaller), each stored single-copy atomic (fab__ptx_x_ld). */
    unsigned cs = tot < 8 ? tot : 8;
    int mo = sem == FAB__PTX_SEM_RELEASE ? __ATOMIC_RELEASE : __ATOMIC_RELAXED;
    if (in->space == FAB__PTX_XS_GENERIC && (tot == 8 || tot == 16) && (n == 4 || n == 8)) {
        /* as the load's fast path: one or two whole words a lane */
        unsigned nw = tot / 8;
        for (unsigned l = 0; l < LANES_N; l++) {
            FAB__PTX_HOST_LANE(a, l, tot);
            for (unsigned c = 0; c < nw; c++) {
                uint64_t x;
                if (n == 8)
                    x = w->R[(size_t)in->s[c] * LANES_N + l];
                else
                    x = (w->R[(size_t)in->s[2 * c] * LANES_N + l] & 0xffffffffu) |
                        w->R[(size_t)in->s[2 * c + 1] * LANES_N + l] << 32;
                __atomic_store_n((uint64_t *)(uintptr_t)(a + 8 * c), x, mo);
            }
            if (fab__ptx_st_mc(w, sem, (uintptr_t)a, tot, l) != R_NEXT)
                return R_FAULT;
        }
        return R_NEXT;
    }
    for (unsigned l = 0; l < LANES_N; l++) {
        if (!(m >> l & 1))
            continue;
        FAB__PTX_ADDR(p, l, tot);
        uint64_t words[8] = {0};
        for (unsigned i = 0; i < v; i++) {
            uint64_t x = w->R[(size_t)in->s[i] * LANES_N + l];
            unsigned o = i * n;
            if (n == 8) {
                words[o / 8] = x;
                continue;
            }
            x &= ((uint64_t)1 << (8 * n)) - 1;
            words[o / cs] |= x << (8 * (o % cs));
        }
        for (unsigned c = 0; c < tot / cs; c++)
            fab__ptx_store_word(p + c * cs, cs, mo, words[c]);
        if (fab__ptx_st_mc(w, sem, (uintptr_t)p, tot, l) != R_NEXT)
            return R_FAULT;
    }
    return R_NEXT;
}

/* ---- atomics -------------------------------------------------------------------------- */

static uint64_t fab__ptx_atom_new(const fab__ptx_x_t *in, uint64_t old, uint64_t b)
{
    unsigned t = in->t;
    switch (in->k) {
    case W_(AND): return old & b;
    case W_(OR): return old | b;
    case W_(XOR): return old ^ b;
    case W_(EXCH): return b;
    case W_(INC): return (uint32_t)old >= (uint32_t)b ? 0 : (uint32_t)old + 1;
    case W_(DEC): return ((uint32_t)old == 0 || (uint32_t)old > (uint32_t)b) ? (uint32_t)b : (uint32_t)old - 1;
    case W_(MIN): case W_(MAX): {
        bool mx = in->k == W_(MAX), lt;
        if (t == T_(S32))
            lt = (int32_t)old < (int32_t)b;
        else if (t == T_(S64))
            lt = (int64_t)old < (int64_t)b;
        else
            lt = old < b;
        return (lt != mx) ? old : b;
    }
    default: /* add */
        switch (t) {
        case T_(F32): return FB(F(old) + F(b));
        case T_(F64): return GB(G(old) + G(b));
        case T_(F16): return fab__ptx_f32_to_f16(fab__ptx_f16_to_f32((uint16_t)old) + fab__ptx_f16_to_f32((uint16_t)b), W_(RN));
        case T_(BF16): return fab__ptx_f32_to_bf16(fab__ptx_bf16_to_f32((uint16_t)old) + fab__ptx_bf16_to_f32((uint16_t)b), W_(RN));
        case T_(F16X2): case T_(BF16X2): {
            bool bf = t == T_(BF16X2);
            uint32_t r = 0;
            for (int h = 0; h < 2; h++) {
                uint16_t x = (uint16_t)(old >> 16 * h), y = (uint16_t)(b >> 16 * h);
                float s = bf ? fab__ptx_bf16_to_f32(x) + fab__ptx_bf16_to_f32(y)
                             : fab__ptx_f16_to_f32(x) + fab__ptx_f16_to_f32(y);
                r |= (uint32_t)(bf ? fab__ptx_f32_to_bf16(s, W_(RN)) : fab__ptx_f32_to_f16(s, W_(RN))) << 16 * h;
            }
            return r;
        }
        default: return old + b;
        }
    }
}

int fab__ptx_x_atom(W_ARGS)
{
    const uint64_t *A = SLOT(in->addr), *B = SLOT(in->s[0]), *C = SLOT(in->s[1]);
    uint64_t *D = SLOT(in->d[0]);
    unsigned n = in->size;
    if (n == 16) /* .b128 */
        return fab__ptx_x_atom128(w, in, m);
    int mo = in->sem == FAB__PTX_SEM_RELAXED ? __ATOMIC_RELAXED : in->sem == FAB__PTX_SEM_ACQUIRE ? __ATOMIC_ACQUIRE
           : in->sem == FAB__PTX_SEM_RELEASE ? __ATOMIC_RELEASE : __ATOMIC_SEQ_CST;
    int fmo = mo == __ATOMIC_RELEASE || mo == __ATOMIC_ACQ_REL ? __ATOMIC_RELAXED : mo;
    bool changed = false;
    for (unsigned l = 0; l < LANES_N; l++) {
        if (!(m >> l & 1))
            continue;
        FAB__PTX_ADDR(p, l, n);
        uint64_t b = B[l], old;
        if (in->k == W_(CAS)) {
            if (n == 2) {
                uint16_t e = (uint16_t)b;
                changed |= __atomic_compare_exchange_n((uint16_t *)(void *)p, &e, (uint16_t)C[l], false, mo, fmo);
                old = e;
            } else if (n == 4) {
                uint32_t e = (uint32_t)b;
                changed |= __atomic_compare_exchange_n((uint32_t *)(void *)p, &e, (uint32_t)C[l], false, mo, fmo);
                old = e;
            } else {
                uint64_t e = b;
                changed |= __atomic_compare_exchange_n((uint64_t *)(void *)p, &e, C[l], false, mo, fmo);
                old = e;
            }
        } else if (n == 4 && in->k == W_(ADD) && fab__ptx_is_int(in->t)) {
            old = __atomic_fetch_add((uint32_t *)(void *)p, (uint32_t)b, mo);
            changed = true;
        } else if (n == 8 && in->k == W_(ADD) && fab__ptx_is_int(in->t)) {
            old = __atomic_fetch_add((uint64_t *)(void *)p, b, mo);
            changed = true;
        } else if (n == 2) {
            uint16_t e = __atomic_load_n((uint16_t *)(void *)p, __ATOMIC_RELAXED);
            while (!__atomic_compare_exchange_n((uint16_t *)(void *)p, &e, (uint16_t)fab__ptx_atom_new(in, e, b),
                                                false, mo, __ATOMIC_RELAXED))
                ;
            old = e;
            changed = true;
        } else if (n == 4) {
            uint32_t e = __atomic_load_n((uint32_t *)(void *)p, __ATOMIC_RELAXED);
            while (!__atomic_compare_exchange_n((uint32_t *)(void *)p, &e, (uint32_t)fab__ptx_atom_new(in, e, b),
                                                false, mo, __ATOMIC_RELAXED))
                ;
            old = e;
            changed = true;
        } else {
            uint64_t e = __atomic_load_n((uint64_t *)(void *)p, __ATOMIC_RELAXED);
            while (!__atomic_compare_exchange_n((uint64_t *)(void *)p, &e, fab__ptx_atom_new(in, e, b), false, mo,
                                                __ATOMIC_RELAXED))
                ;
            old = e;
            changed = true;
        }
        D[l] = old;
    }
    if (changed) {
        w->stored = true;
        return R_NEXT;
    }
    return fab__ptx_polled(w); /* a compare-and-swap that failed in every lane polls, as a load does */
}

/* ---- generic addresses ------------------------------------------------------------------ */

int fab__ptx_x_cvta(W_ARGS)
{
    OPS3;
    uint64_t wm = in->t == T_(U32) ? 0xffffffffu : ~0ull;
    uintptr_t base = 0;
    switch (in->space) {
    case FAB__PTX_XS_SHARED: base = (uintptr_t)w->blk->shared; break;
    case FAB__PTX_XS_KPARAM: base = (uintptr_t)w->run->launch->params; break;
    case FAB__PTX_XS_LOCAL: break;
    default:
        LANES(D[l] = A[l] & wm);
        return R_NEXT;
    }
    bool to = in->k;
    if (in->space == FAB__PTX_XS_LOCAL)
        LANES({
            uintptr_t lb = (uintptr_t)w->local + (size_t)l * w->lstride;
            D[l] = (to ? A[l] - lb : A[l] + lb) & wm;
        });
    else
        LANES(D[l] = (to ? A[l] - base : A[l] + base) & wm);
    return R_NEXT;
}

int fab__ptx_x_isspacep(W_ARGS)
{
    OPS3;
    uint32_t r = 0;
    const fab__ptx_program_t *p = w->run->program;
    for (unsigned l = 0; l < LANES_N; l++) {
        uintptr_t a = (uintptr_t)A[l];
        bool sh = a >= (uintptr_t)w->blk->shared && a < (uintptr_t)w->blk->shared + w->blk->shared_size;
        uintptr_t lb = (uintptr_t)w->local + (size_t)l * w->lstride;
        bool lo = a >= lb && a < lb + w->lstride;
        uintptr_t pb = (uintptr_t)w->run->launch->params;
        bool pa = a >= pb && a < pb + w->run->kernel->info.param_bytes;
        bool cn = false;
        for (size_t i = 0; i < p->ngvars && !cn; i++) {
            const fab__ptx_var_t *v = &p->module->vars[p->gvars[i]];
            uintptr_t vb = (uintptr_t)p->var_addr[p->gvars[i]];
            cn = v->space == FAB__PTX_S_CONST && a >= vb && a < vb + v->size;
        }
        bool k;
        switch (in->k) {
        case FAB__PTX_S_SHARED: case FAB__PTX_S_SHARED_CLUSTER: k = sh; break;
        case FAB__PTX_S_LOCAL: k = lo; break;
        case FAB__PTX_S_PARAM: k = pa; break;
        case FAB__PTX_S_CONST: k = cn; break;
        default: k = !sh && !lo && a >= FAB__PTX_LOW_LIMIT; break;
        }
        r |= (uint32_t)k << l;
    }
    PSET(in->d[0], r, m);
    return R_NEXT;
}

/* ---- multimem and cp.async ------------------------------------------------------------ */

/* A store or reduction of the lanes whose addresses follow each other goes
 * to the host in one call (a warp's stores to consecutive elements, one
 * round trip to the daemon); a gap or an earlier address starts another. */
typedef struct fab__ptx_mc_run {
    uintptr_t addr;
    unsigned len, lane;
    unsigned char buf[LANES_N * 16];
} fab__ptx_mc_run_t;

/* Hand the run to the host: R_NEXT, or the grid stops at its first lane. */
static int fab__ptx_mc_flush(fab__ptx_warp_t *w, const fab__ptx_host_t *h, const fab__ptx_x_t *in,
                             fab__ptx_mc_run_t *run)
{
    if (run->len == 0)
        return R_NEXT;
    size_t count = run->len / in->size;
    int rc;
    if (in->op == OP_(MULTIMEM_ST))
        rc = h->mc_st ? h->mc_st(h->ctx, run->addr, in->t, run->buf, count) : FAB__PTX_E_FAULT;
    else
        rc = h->mc_red ? h->mc_red(h->ctx, run->addr, in->t, in->k, run->buf, count) : FAB__PTX_E_FAULT;
    run->len = 0;
    return rc ? fab__ptx_warp_fail(w, rc, run->lane, run->addr, "the multicast object refused the access")
              : R_NEXT;
}

int fab__ptx_x_multimem(W_ARGS)
{
    const uint64_t *A = SLOT(in->addr);
    const fab__ptx_host_t *h = w->run->launch->host;
    unsigned n = in->size, v = in->vec;
    bool ld = in->op == OP_(MULTIMEM_LD_REDUCE);
    fab__ptx_mc_run_t run;
    run.len = 0;
    for (unsigned l = 0; l < LANES_N; l++) {
        if (!(m >> l & 1))
            continue;
        uintptr_t a = (uintptr_t)(A[l] + (uint64_t)in->off);
        int bad = !h || !h->mc_is || !h->mc_is(h->ctx, a) ? FAB__PTX_E_FAULT
                  : (a & (n * v - 1))                      ? FAB__PTX_E_MISALIGNED
                                                           : 0;
        /* the lanes before this one, or the lanes of a run it does not continue */
        if ((bad || (run.len != 0 && a != run.addr + run.len)) &&
            fab__ptx_mc_flush(w, h, in, &run) != R_NEXT)
            return R_FAULT;
        if (bad)
            return fab__ptx_warp_fail(w, bad, l, a, bad == FAB__PTX_E_FAULT
                                                        ? "multimem on an address no multicast object maps"
                                                        : "a misaligned access");
        if (ld) {
            unsigned char buf[16];
            int rc = h->mc_ld_reduce ? h->mc_ld_reduce(h->ctx, a, in->t, in->k, buf, v) : FAB__PTX_E_FAULT;
            if (rc)
                return fab__ptx_warp_fail(w, rc, l, a, "the multicast object refused the access");
            for (unsigned i = 0; i < v; i++) {
                uint64_t x = 0;
                memcpy(&x, buf + i * n, n);
                w->R[(size_t)in->d[i] * LANES_N + l] = x;
            }
            continue;
        }
        if (run.len == 0) {
            run.addr = a;
            run.lane = l;
        }
        for (unsigned i = 0; i < v; i++)
            memcpy(run.buf + run.len + i * n, &w->R[(size_t)in->s[i] * LANES_N + l], n);
        run.len += n * v;
        w->stored = true;
    }
    return fab__ptx_mc_flush(w, h, in, &run);
}

int fab__ptx_x_cp_async(W_ARGS)
{
    const uint64_t *A = SLOT(in->addr), *S = SLOT(in->s[0]), *O = SLOT(in->s[1]), *N = SLOT(in->s[2]),
                   *SN = SLOT(in->s[3]);
    w->stored = true;
    for (unsigned l = 0; l < LANES_N; l++) {
        if (!(m >> l & 1))
            continue;
        uint32_t n = (uint32_t)N[l], sn = (uint32_t)SN[l];
        if (n != 4 && n != 8 && n != 16)
            return fab__ptx_warp_fail(w, FAB__PTX_E_TRAP, l, 0, "cp.async of a size not 4, 8 or 16");
        sn = sn < n ? sn : n;
        uint64_t a_ = A[l] + (uint64_t)in->off;
        unsigned char *dst = fab__ptx_where(w, in->space, l, a_, n);
        if (!dst)
            return fab__ptx_bad_addr(w, l, a_, n, in->space);
        uint64_t sa = S[l] + O[l];
        if (sn && sa < FAB__PTX_LOW_LIMIT)
            return fab__ptx_bad_addr(w, l, sa, sn, FAB__PTX_XS_GENERIC);
        if (((uintptr_t)dst | (sn ? sa : 0)) & (n - 1))
            return fab__ptx_warp_fail(w, FAB__PTX_E_MISALIGNED, l, (uintptr_t)dst, "a misaligned access");
        if (sn)
            memcpy(dst, (const void *)(uintptr_t)sa, sn);
        memset(dst + sn, 0, n - sn);
    }
    return R_NEXT;
}

/* Lane l's host address for n bytes at a in space (mbar.c), or NULL. */
unsigned char *fab__ptx_addr_of(const fab__ptx_warp_t *w, unsigned space, unsigned l, uint64_t a, uint32_t n)
{
    return fab__ptx_where(w, space, l, a, n);
}
