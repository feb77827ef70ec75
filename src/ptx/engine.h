/* The loader's and interpreter's shared inner form (decode.c, exec.c,
 * mem.c, sched.c; nothing above src/ptx sees it): a program is a module
 * decoded into one compact instruction array per function, each operand
 * resolved to a slot of the function's register window (registers first,
 * then the constant slots that immediates, symbol addresses and the
 * special registers that never change in a warp's life are folded into),
 * every branch resolved to an instruction index and its reconvergence
 * point (the immediate post-dominator). A warp is the unit of work: 32
 * lanes, a SIMT stack of (pc, reconvergence pc, mask), a call stack of
 * register windows laid out lane-contiguous (slot s of lane l is
 * R[s * 32 + l]) and a per-lane local memory window. Predicates are one
 * 32-bit mask per slot, held in lane 0's word. */
#ifndef FAB_PTX_ENGINE_H
#define FAB_PTX_ENGINE_H

#include <pthread.h>
#include <setjmp.h>
#include <stdatomic.h>

#include "src/ptx/ptx.h"

#define FAB__PTX_LANES 32
#define FAB__PTX_MAXBAR 16
/* an ordered load run again this many times with no store between ends the quantum */
#define FAB__PTX_SPIN_RELOADS 3

/* Where a memory instruction's address points, as the loader resolved it. */
enum {
    FAB__PTX_XS_GENERIC = 0, /* a host address (global, const, and generic ones) */
    FAB__PTX_XS_SHARED,      /* an offset in the block's shared window */
    FAB__PTX_XS_LOCAL,       /* an offset in the lane's local window (.local, a .func's .param) */
    FAB__PTX_XS_KPARAM,      /* an offset in the launch's parameter buffer */
};

/* Memory semantics of ld/st/atom. */
enum { FAB__PTX_SEM_PLAIN = 0, FAB__PTX_SEM_VOLATILE, FAB__PTX_SEM_RELAXED, FAB__PTX_SEM_ACQUIRE,
       FAB__PTX_SEM_RELEASE, FAB__PTX_SEM_ACQREL };

/* Flags of a decoded instruction. */
enum {
    FAB__PTX_XF_FTZ = 1, FAB__PTX_XF_SAT = 2, FAB__PTX_XF_APPROX = 4, FAB__PTX_XF_NAN = 8,
    FAB__PTX_XF_HI = 16, FAB__PTX_XF_WIDE = 32, FAB__PTX_XF_UNI = 64, FAB__PTX_XF_RELU = 128,
};

/* One decoded instruction. d: destinations, s: sources (slots; an absent
 * source is the zero slot, so that handlers read every source without a
 * test). addr + off: a memory operand's base slot and offset. */
typedef struct fab__ptx_x {
    uint16_t op;          /* fab__ptx_op_t */
    uint8_t t, t2;        /* the type, the second type (cvt's source, ...) */
    uint8_t k, k2;        /* what the opcode's words chose: comparison, operation, mode */
    uint8_t rnd;          /* rounding word, FAB__PTX_W_NONE for the default */
    uint8_t f;            /* FAB__PTX_XF_* */
    uint8_t space;        /* FAB__PTX_XS_* */
    uint8_t vec;          /* elements of a vector access */
    uint8_t sem;          /* FAB__PTX_SEM_* */
    uint8_t size;         /* bytes of one element of a memory access */
    bool gneg;
    uint32_t guard;       /* the guard's slot, or FAB__PTX_NONE */
    uint32_t d[4], s[4];
    uint32_t addr;
    int64_t off;
    uint32_t target;      /* branch: the target; call: the callee; else 0 */
    uint32_t reconv;      /* branch: its reconvergence insn, FAB__PTX_NONE for none */
    uint32_t aux;         /* call: index into the function's call table */
    uint32_t line;
} fab__ptx_x_t;

/* What a constant slot holds, evaluated when a window is entered. */
enum { FAB__PTX_C_IMM = 0, FAB__PTX_C_VAR, FAB__PTX_C_SHARED, FAB__PTX_C_LOCAL, FAB__PTX_C_KPARAM,
       FAB__PTX_C_FUNC, FAB__PTX_C_SREG, FAB__PTX_C_DYNSHARED };

typedef struct fab__ptx_const {
    uint8_t kind;
    uint16_t sreg, comp;
    uint32_t index;       /* variable, function */
    uint64_t value;       /* IMM: the value; else an offset added */
} fab__ptx_const_t;

/* A call site: the frame offsets to copy arguments from and results to. */
typedef struct fab__ptx_callsite {
    uint32_t nargs, nrets;
    uint32_t *arg_off, *ret_off;     /* caller's local offsets (frame-relative) */
    uint32_t *arg_size, *ret_size;
    uint32_t proto;                  /* indirect: the prototype, else FAB__PTX_NONE */
    uint32_t builtin;                /* FAB__PTX_BI_* for a built-in callee */
} fab__ptx_callsite_t;

enum { FAB__PTX_BI_NONE = 0, FAB__PTX_BI_VPRINTF, FAB__PTX_BI_MALLOC, FAB__PTX_BI_FREE,
       FAB__PTX_BI_ASSERTFAIL };

/* A function decoded. Its window: nregs register slots (its nvregs PTX
 * registers packed by live range, slots.c), the sink slot, then nconsts. */
typedef struct fab__ptx_code {
    const fab__ptx_func_t *func;
    uint32_t index;
    fab__ptx_x_t *x;
    uint32_t nx;
    uint32_t nregs, nconsts, nslots;
    uint32_t nvregs;                 /* PTX registers the function declares */
    fab__ptx_const_t *consts;
    fab__ptx_callsite_t *calls;
    uint32_t ncalls;
    uint32_t frame;                  /* bytes of local frame: params, rets, locals */
    uint32_t *param_off, *ret_off;   /* frame offsets of its own params and rets */
    uint32_t builtin;                /* FAB__PTX_BI_* when it is a built-in declaration */
    bool decoded;
    uint64_t *prof;                  /* profiling: per instruction, runs and spin yields (2 * nx) */
} fab__ptx_code_t;

struct fab__ptx_kernel {
    fab__ptx_program_t *program;
    fab__ptx_code_t *code;
    fab__ptx_kernel_info_t info;
    size_t *param_off, *param_size;
    uint32_t shared_dyn_off;         /* where the unsized extern .shared array starts */
    uint32_t lstride;                /* local bytes per lane */
    uint32_t block_align;            /* a block's shared and local memory start on this */
    uint32_t max_window;             /* register slots of the deepest static call chain */
    bool recursive;
};

struct fab__ptx_program {
    fab__ptx_module_t *module;
    fab__ptx_code_t *codes;          /* one per module function */
    uint32_t ncodes;
    uint32_t *var_off;               /* per module var: .shared: offset in the window; .local and
                                      * a .func's .param: offset in its function's frame; a kernel's
                                      * .param: offset in the packed layout */
    bool *var_kparam;                /* per module var: a kernel's parameter */
    bool *var_placeable;             /* per module var: one the caller places */
    uint32_t *gvars;                 /* the vars the caller places: module var indices */
    size_t ngvars;
    void **var_addr;                 /* per module var: placed address */
    struct fab__ptx_kernel *kernels;
    size_t nkernels;
    uint32_t static_shared;          /* the .shared variables of the module and its .funcs, laid out once */
    uint64_t *kshared;               /* per module function: a kernel's own .shared end (0: none) */
    uint32_t local_align;            /* the largest .align of a frame's variable, 16 at least */
    uint32_t shared_align;           /* the largest .align of a .shared variable, 16 at least */
    bool profiled;                   /* fab__ptx_program_profile: the codes' prof are counted */
};

/* ---- runtime state (sched.c owns it; exec.c and mem.c use it) ---------------------- */

typedef struct fab__ptx_simt {
    uint32_t pc, rpc, mask;
} fab__ptx_simt_t;

typedef struct fab__ptx_frame {
    const fab__ptx_code_t *code;
    uint32_t base;                   /* window base slot */
    uint32_t fp;                     /* local frame offset */
    uint32_t simt_base;              /* SIMT depth when it was entered */
    uint32_t call_pc;                /* the caller's call insn */
    uint32_t call_mask;              /* the lanes that called */
    const fab__ptx_callsite_t *cs;   /* the caller's call site */
} fab__ptx_frame_t;

struct fab__ptx_run;
struct fab__ptx_block;

enum { FAB__PTX_WS_RUN = 0, FAB__PTX_WS_BAR, FAB__PTX_WS_DONE };

typedef struct fab__ptx_warp {
    struct fab__ptx_run *run;
    struct fab__ptx_block *blk;
    struct fab__ptx_warp *next;      /* run queue link */
    uint32_t id;                     /* warp index in its block */
    uint32_t lanes;                  /* the lanes that exist (a partial last warp) */
    uint32_t tid[FAB__PTX_LANES][3];
    fab__ptx_simt_t *st;
    uint32_t depth, st_cap;
    fab__ptx_frame_t *fr;
    uint32_t nfr, fr_cap;
    uint64_t *regs;
    size_t regs_cap;                 /* slots */
    uint64_t *R;                     /* regs + the current frame's base * 32 */
    const fab__ptx_code_t *code;     /* the current frame's */
    unsigned char *local;            /* 32 * lstride bytes */
    uint32_t lstride;
    int state;
    /* spin detection: the last volatile/acquire load and whether a store came since */
    uint32_t cc;                     /* the carry flag of each lane (add.cc ...) */
    uint32_t spin_pc, spins;
    bool stored;
    uint64_t yields;
    /* a barrier wait */
    uint32_t bar_id, bar_dst, bar_k, bar_t;
    uint32_t bar_pred;               /* bar.red: the lanes whose predicate held */
    uint32_t bar_mask;               /* the lanes that arrived */
    uint32_t bar_count;              /* threads expected, 0 for every live one */
    bool spin_yield;                 /* the quantum ended in a spin or a sleep */
    /* the fault that ended it */
    int status;
    uintptr_t fault_addr;
    uint32_t fault_lane;
    char msg[200];
} fab__ptx_warp_t;

typedef struct fab__ptx_barrier {
    uint32_t arrived;                /* warps */
    uint32_t expected;               /* warps; 0: every live warp */
    uint32_t red_or, red_and, red_popc;
    bool red_any;
} fab__ptx_barrier_t;

typedef struct fab__ptx_block {
    uint32_t ctaid[3];
    uint32_t linear;
    unsigned char *shared;
    size_t shared_size, shared_cap; /* cap: the buffer's bytes (stash.c) */
    fab__ptx_warp_t *warps;
    uint32_t nwarps, live;
    fab__ptx_barrier_t bar[FAB__PTX_MAXBAR];
    unsigned char *local;
    size_t local_cap;
    struct fab__ptx_block *next, *prev; /* the run's live blocks */
} fab__ptx_block_t;

typedef struct fab__ptx_run {
    const fab__ptx_launch_t *launch;
    const struct fab__ptx_kernel *kernel;
    const fab__ptx_program_t *program;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    pthread_cond_t done_cv;
    fab__ptx_warp_t *qhead, *qtail;
    fab__ptx_block_t *blocks;        /* live ones */
    fab__ptx_block_t *spare;         /* a finished one, kept for the next to start */
    unsigned waiting;                /* workers asleep on cv */
    unsigned workers_live;           /* workers that have not left the run */
    uint64_t nblocks, next_block, done_blocks;
    uint32_t nthreads;               /* per block */
    atomic_bool stop;
    fab__ptx_status_t status;
    fab__ptx_fault_t fault;
    uint64_t t0_ns;
    pthread_mutex_t print_mu;
    /* a cooperative launch's grid-sync workspace, which %envreg1:%envreg2 point at */
    _Alignas(64) uint32_t grid_ws[16];
} fab__ptx_run_t;

/* Outcomes of a handler or a quantum. */
enum { FAB__PTX_R_NEXT = 0, FAB__PTX_R_JUMP, FAB__PTX_R_YIELD, FAB__PTX_R_BAR, FAB__PTX_R_DONE,
       FAB__PTX_R_FAULT };

/* decode.c */
uint32_t fab__ptx_xtype_size(unsigned type);
void fab__ptx_window_init(fab__ptx_warp_t *w, const fab__ptx_code_t *code, uint64_t *R, uint32_t fp);

bool fab__ptx_func_value(const fab__ptx_program_t *p, uint64_t v, uint32_t *index_out);

/* float.c: every float arithmetic instruction over the lanes of m, and
 * cvt's general case (rounding modes set around the loop). */
void fab__ptx_float_lanes(const fab__ptx_x_t *in, uint64_t *D, const uint64_t *A, const uint64_t *B,
                          const uint64_t *C, uint32_t m);
void fab__ptx_cvt_lanes(const fab__ptx_x_t *in, uint64_t *D, const uint64_t *A, uint32_t m);

/* exec.c: run w for at most n instructions. */
int fab__ptx_exec(fab__ptx_warp_t *w, uint32_t n);

/* mem.c */
typedef int (*fab__ptx_xfn)(fab__ptx_warp_t *w, const fab__ptx_x_t *in, uint32_t m);
int fab__ptx_x_ld(fab__ptx_warp_t *w, const fab__ptx_x_t *in, uint32_t m);
int fab__ptx_x_st(fab__ptx_warp_t *w, const fab__ptx_x_t *in, uint32_t m);
int fab__ptx_x_atom(fab__ptx_warp_t *w, const fab__ptx_x_t *in, uint32_t m);
int fab__ptx_x_cvta(fab__ptx_warp_t *w, const fab__ptx_x_t *in, uint32_t m);
int fab__ptx_x_isspacep(fab__ptx_warp_t *w, const fab__ptx_x_t *in, uint32_t m);
int fab__ptx_x_multimem(fab__ptx_warp_t *w, const fab__ptx_x_t *in, uint32_t m);
/* After an ordered store of bytes at host address p by lane: publish it if
 * p lies in a multicast mapping (mem.c). R_NEXT, or R_FAULT. */
int fab__ptx_st_mc(fab__ptx_warp_t *w, unsigned sem, uintptr_t p, unsigned bytes, unsigned lane);
int fab__ptx_builtin(fab__ptx_warp_t *w, const fab__ptx_x_t *in, const fab__ptx_callsite_t *cs,
                     uint32_t m);
int fab__ptx_warp_fail(fab__ptx_warp_t *w, int status, uint32_t lane, uintptr_t addr, const char *why);

/* mem.c */
unsigned fab__ptx_fault_lane(const fab__ptx_warp_t *w, uintptr_t addr);

/* wide.c: how a 16-byte access is made single-copy atomic (docs/ptx.md): an
 * aligned SSE move on an x86-64 with AVX, else LOCK CMPXCHG16B, else a lock.
 * fab__ptx_wide_mode picks the first the CPU has; fab__ptx_wide_use makes
 * the engine use a later one (or, with -1, the first again), for tests. */
enum { FAB__PTX_WIDE_SSE = 0, FAB__PTX_WIDE_CX16, FAB__PTX_WIDE_LOCK };
int fab__ptx_wide_mode(void);
void fab__ptx_wide_use(int how);

/* stash.c: block memory kept between runs */
void *fab__ptx_stash_take(size_t bytes, size_t align, size_t *got);
void fab__ptx_stash_give(void *p, size_t bytes);
void fab__ptx_stash_atfork_child(void);

/* sched.c */
uint64_t fab__ptx_now_ns(void);
void fab__ptx_log(const fab__ptx_run_t *run, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

#endif /* FAB_PTX_ENGINE_H */
