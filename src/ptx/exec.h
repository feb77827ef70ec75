/* The interpreter's handler conventions (exec.c, warp.c, mem.c, wide.c, float.c):
 * a handler runs one decoded instruction for the lanes in m and says what
 * the loop does next (R_NEXT: the following instruction; R_JUMP: the pc
 * is already set; R_YIELD, R_BAR: end the quantum after this one; R_DONE,
 * R_FAULT: the warp stops). Slot s of lane l is w->R[s * 32 + l]; a
 * predicate slot's 32 lanes are one mask in lane 0's word. Registers share
 * slots (slots.c), which holds only while every handler reads registers
 * through s[], addr and guard alone, writes them through d[] alone, and
 * writes only the lanes of m: a value lane's whole word, a predicate's bits
 * of m (PSET); a register read in a lane that is not active (as shfl does)
 * must be given a slot of its own in slots.c. A .b128 register is two
 * slots, its halves, each named in s[] or d[] like any other register. A
 * new handler is checked against this and its opcode listed in slots.c's
 * FAB__PTX_SLOTS_CHECKED. */
#ifndef FAB_PTX_EXEC_H
#define FAB_PTX_EXEC_H

#include <math.h>
#include <string.h>

#include "src/ptx/decode.h"

#define T_(x) FAB__PTX_T_##x
#define W_(x) FAB__PTX_W_##x
#define OP_(x) FAB__PTX_OP_##x
#define XF_(x) FAB__PTX_XF_##x
#define R_NEXT FAB__PTX_R_NEXT
#define R_JUMP FAB__PTX_R_JUMP
#define R_YIELD FAB__PTX_R_YIELD
#define R_BAR FAB__PTX_R_BAR
#define R_DONE FAB__PTX_R_DONE
#define R_FAULT FAB__PTX_R_FAULT
#define LANES_N FAB__PTX_LANES
#define FAB__PTX_DEAD 0xfffffffeu /* the pc of an entry whose lanes all leave before reconverging */

/* The hottest handlers are built twice, for x86-64-v3 (AVX2, FMA) and for the base
 * instruction set, and the loader picks one for the CPU it runs on. */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define FAB__PTX_HOT __attribute__((target_clones("arch=x86-64-v3", "default")))
#else
#define FAB__PTX_HOT
#endif

#define W_ARGS fab__ptx_warp_t *w, const fab__ptx_x_t *in, uint32_t m
#define TOP (&w->st[w->depth - 1])
#define SLOT(i) (w->R + (size_t)(i) * LANES_N)
#define OPS3                                                                    \
    uint64_t *D = SLOT(in->d[0]);                                               \
    const uint64_t *A = SLOT(in->s[0]), *B = SLOT(in->s[1]), *C = SLOT(in->s[2]); \
    (void)D, (void)A, (void)B, (void)C
/* body for each lane l in m: one straight loop when all are */
#define LANES(...)                                                             \
    do {                                                                        \
        if (m == 0xffffffffu) {                                                 \
            for (unsigned l = 0; l < LANES_N; l++) {                            \
                __VA_ARGS__;                                                    \
            }                                                                   \
        } else {                                                                \
            for (unsigned l = 0; l < LANES_N; l++)                              \
                if (m >> l & 1) {                                               \
                    __VA_ARGS__;                                                       \
                }                                                               \
        }                                                                       \
    } while (0)
#define PGET(s) ((uint32_t)w->R[(size_t)(s) * LANES_N])
#define PSET(s, v, mk)                                                          \
    do {                                                                        \
        uint64_t *p_ = &w->R[(size_t)(s) * LANES_N];                            \
        *p_ = ((uint32_t)*p_ & ~(mk)) | ((uint32_t)(v) & (mk));                 \
    } while (0)

__extension__ typedef __int128 fab__ptx_i128;
__extension__ typedef unsigned __int128 fab__ptx_u128;

static inline float F(uint64_t v)
{
    uint32_t u = (uint32_t)v;
    float f;
    memcpy(&f, &u, 4);
    return f;
}
static inline uint64_t FB(float f)
{
    uint32_t u;
    memcpy(&u, &f, 4);
    return u;
}
/* f32 results: a NaN is the canonical one */
static inline uint64_t FBN(float f)
{
    return f != f ? 0x7fffffffu : FB(f);
}
static inline double G(uint64_t v)
{
    double d;
    memcpy(&d, &v, 8);
    return d;
}
static inline uint64_t GB(double d)
{
    uint64_t u;
    memcpy(&u, &d, 8);
    return u;
}

/* float.c */
uint32_t fab__ptx_compare(const fab__ptx_x_t *in, const uint64_t *A, const uint64_t *B);

/* exec.c, warp.c: the SIMT and call stacks */
int fab__ptx_simt_reserve(fab__ptx_warp_t *w, uint32_t n);
int fab__ptx_lanes_leave(fab__ptx_warp_t *w, uint32_t m, uint32_t from);
int fab__ptx_call(fab__ptx_warp_t *w, const fab__ptx_code_t *g, const fab__ptx_callsite_t *cs, uint32_t m,
                  bool advance);
void fab__ptx_return(fab__ptx_warp_t *w);

/* bits.c */
#define x_POPC fab__ptx_x_popc
int fab__ptx_x_popc(W_ARGS);
#define x_CLZ fab__ptx_x_clz
int fab__ptx_x_clz(W_ARGS);
#define x_BFIND fab__ptx_x_bfind
int fab__ptx_x_bfind(W_ARGS);
#define x_BREV fab__ptx_x_brev
int fab__ptx_x_brev(W_ARGS);
#define x_BFE fab__ptx_x_bfe
int fab__ptx_x_bfe(W_ARGS);
#define x_BFI fab__ptx_x_bfi
int fab__ptx_x_bfi(W_ARGS);
#define x_BMSK fab__ptx_x_bmsk
int fab__ptx_x_bmsk(W_ARGS);
#define x_SZEXT fab__ptx_x_szext
int fab__ptx_x_szext(W_ARGS);
#define x_DP4A fab__ptx_x_dp4a
int fab__ptx_x_dp4a(W_ARGS);
/* add sub min max on two 16-bit lanes of a .b32 (in->t2: .s16 or .u16) */
int fab__ptx_x_16x2(W_ARGS);
#define x_ADDC fab__ptx_x_addc
int fab__ptx_x_addc(W_ARGS);
#define x_LOP3 fab__ptx_x_lop3
int fab__ptx_x_lop3(W_ARGS);
#define x_SHF fab__ptx_x_shf
int fab__ptx_x_shf(W_ARGS);
#define x_PRMT fab__ptx_x_prmt
int fab__ptx_x_prmt(W_ARGS);
#define x_DP2A fab__ptx_x_dp4a
#define x_ADD_CC fab__ptx_x_addc
#define x_SUB_CC fab__ptx_x_addc
#define x_SUBC fab__ptx_x_addc
#define x_MAD_CC fab__ptx_x_addc
#define x_MADC fab__ptx_x_addc

/* warp.c */
#define x_VOTE fab__ptx_x_vote
#define x_VOTE_SYNC fab__ptx_x_vote
#define x_MATCH_SYNC fab__ptx_x_match
#define x_ACTIVEMASK fab__ptx_x_activemask
#define x_REDUX_SYNC fab__ptx_x_redux
#define x_ELECT_SYNC fab__ptx_x_elect
#define x_SHFL fab__ptx_x_shfl
#define x_SHFL_SYNC fab__ptx_x_shfl
#define x_BAR_SYNC fab__ptx_x_bar
#define x_BAR_ARRIVE fab__ptx_x_bar
#define x_BAR_RED fab__ptx_x_bar
#define x_BAR_CTA_SYNC fab__ptx_x_bar
#define x_BAR_CTA_ARRIVE fab__ptx_x_bar
#define x_BAR_CTA_RED fab__ptx_x_bar
#define x_BARRIER_SYNC fab__ptx_x_bar
#define x_BARRIER_ARRIVE fab__ptx_x_bar
#define x_BARRIER_RED fab__ptx_x_bar
#define x_BARRIER_CTA_SYNC fab__ptx_x_bar
#define x_BARRIER_CTA_ARRIVE fab__ptx_x_bar
#define x_BARRIER_CTA_RED fab__ptx_x_bar
#define x_BAR_WARP_SYNC fab__ptx_x_nop
#define x_MEMBAR fab__ptx_x_fence
#define x_FENCE fab__ptx_x_fence
#define x_NANOSLEEP fab__ptx_x_nanosleep
#define x_PMEVENT fab__ptx_x_nop
#define x_SETMAXNREG fab__ptx_x_nop
#define x_PREFETCH fab__ptx_x_nop
#define x_PREFETCHU fab__ptx_x_nop
#define x_GRIDDEPCONTROL fab__ptx_x_nop
#define x_DISCARD fab__ptx_x_nop
#define x_APPLYPRIORITY fab__ptx_x_nop
int fab__ptx_x_vote(W_ARGS);
int fab__ptx_x_match(W_ARGS);
int fab__ptx_x_activemask(W_ARGS);
int fab__ptx_x_redux(W_ARGS);
int fab__ptx_x_elect(W_ARGS);
int fab__ptx_x_shfl(W_ARGS);
int fab__ptx_x_bar(W_ARGS);
int fab__ptx_x_nop(W_ARGS);
int fab__ptx_x_fence(W_ARGS);
int fab__ptx_x_nanosleep(W_ARGS);

/* mem.c */
#define x_LD fab__ptx_x_ld
#define x_LDU fab__ptx_x_ld
#define x_ST fab__ptx_x_st
#define x_ATOM fab__ptx_x_atom
#define x_RED fab__ptx_x_atom
#define x_CVTA fab__ptx_x_cvta
#define x_ISSPACEP fab__ptx_x_isspacep
#define x_MULTIMEM_LD_REDUCE fab__ptx_x_multimem
#define x_MULTIMEM_ST fab__ptx_x_multimem
#define x_MULTIMEM_RED fab__ptx_x_multimem
#define x_CP_ASYNC fab__ptx_x_cp_async
#define x_MBARRIER_INIT fab__ptx_x_mbarrier
#define x_MBARRIER_INVAL fab__ptx_x_mbarrier
#define x_MBARRIER_ARRIVE fab__ptx_x_mbarrier
#define x_MBARRIER_ARRIVE_DROP fab__ptx_x_mbarrier
#define x_MBARRIER_TEST_WAIT fab__ptx_x_mbarrier
#define x_MBARRIER_TRY_WAIT fab__ptx_x_mbarrier
#define x_MBARRIER_PENDING_COUNT fab__ptx_x_mbarrier
int fab__ptx_x_mbarrier(W_ARGS);
unsigned char *fab__ptx_addr_of(const fab__ptx_warp_t *w, unsigned space, unsigned l, uint64_t a, uint32_t n);
#define x_CP_ASYNC_COMMIT_GROUP fab__ptx_x_nop
#define x_CP_ASYNC_WAIT_GROUP fab__ptx_x_nop
#define x_CP_ASYNC_WAIT_ALL fab__ptx_x_nop
int fab__ptx_x_cp_async(W_ARGS);
/* Lane l's host pointer for an n-byte access by in: 0, or the fault of an
 * address outside its window, in the null page or not aligned to n. */
int fab__ptx_lane_ptr(fab__ptx_warp_t *w, const fab__ptx_x_t *in, unsigned l, unsigned n, unsigned char **p_out);

/* After an ordered load, or a compare-and-swap that failed in every lane:
 * the same instruction run again with no store since, FAB__PTX_SPIN_RELOADS
 * times, ends the quantum (R_YIELD), so that a spin lets the writer run. */
static inline int fab__ptx_polled(fab__ptx_warp_t *w)
{
    uint32_t pc = TOP->pc;
    if (w->spin_pc == pc && !w->stored) {
        if (++w->spins >= FAB__PTX_SPIN_RELOADS) {
            w->spins = 0;
            w->spin_yield = true;
            return R_YIELD;
        }
    } else {
        w->spin_pc = pc;
        w->spins = 0;
    }
    w->stored = false;
    return R_NEXT;
}

/* wide.c: the .b128 forms of mov (k 4-6), ld, st and atom */
int fab__ptx_x_mov128(W_ARGS);
int fab__ptx_x_ld128(W_ARGS);
int fab__ptx_x_st128(W_ARGS);
int fab__ptx_x_atom128(W_ARGS);

#endif /* FAB_PTX_EXEC_H */
