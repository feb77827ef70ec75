/* The PTX engine's interface (src/ptx): the layer below the driver
 * emulation that reads PTX text and runs its kernels on the CPU. It knows no
 * CUDA state, no fabric and no daemon: src/cuda hands it text and launches,
 * and it hands back programs, completion or a fault report. docs/ptx.md has
 * the execution and memory model.
 *
 * The life of a program:
 *   fab__ptx_parse (text -> module, one per PTX input)
 *   -> fab__ptx_link (modules -> one module, .extern resolved)
 *   -> fab__ptx_program_load (decoded and checked for the interpreter)
 *   -> the caller places each variable (fab__ptx_program_var, ..._place),
 *      then fab__ptx_program_init_var writes each one's initial bytes
 *   -> fab__ptx_run, any number of times, from any threads at once
 *   -> fab__ptx_program_free.
 *
 * Threading: a module is immutable once parsed; a program once its
 * variables are placed; fab__ptx_run may be called concurrently. */
#ifndef FAB_PTX_PTX_H
#define FAB_PTX_PTX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "src/ptx/ptx_module.h"

typedef enum fab__ptx_status {
    FAB__PTX_OK = 0,
    FAB__PTX_E_SYNTAX,       /* malformed PTX text (CUDA_ERROR_INVALID_PTX) */
    FAB__PTX_E_UNSUPPORTED,  /* well-formed, but uses what the engine does not run (CUDA_ERROR_INVALID_PTX) */
    FAB__PTX_E_LINK,         /* an unresolved .extern, or a name defined twice (CUDA_ERROR_INVALID_PTX / link errors) */
    FAB__PTX_E_NOMEM,        /* CUDA_ERROR_OUT_OF_MEMORY */
    FAB__PTX_E_INVALID,      /* a launch the kernel cannot take (CUDA_ERROR_INVALID_VALUE) */
    FAB__PTX_E_FAULT,        /* a load or store to memory not accessible so (CUDA_ERROR_ILLEGAL_ADDRESS) */
    FAB__PTX_E_MISALIGNED,   /* a misaligned access (CUDA_ERROR_MISALIGNED_ADDRESS) */
    FAB__PTX_E_TRAP,         /* trap, or an instruction that cannot go on (CUDA_ERROR_LAUNCH_FAILED) */
    FAB__PTX_E_ASSERT,       /* __assertfail (CUDA_ERROR_ASSERT) */
} fab__ptx_status_t;

/* Why a parse, link or load failed: the line (in the text that the failing
 * module came from; 0 when none applies) and a sentence naming the rule. */
typedef struct fab__ptx_diag {
    uint32_t line;
    char msg[256];
} fab__ptx_diag_t;

/* ---- front end --------------------------------------------------------------- */

/* Parse len bytes of PTX text (a NUL ends it early) into *module_out.
 * FAB__PTX_OK; FAB__PTX_E_SYNTAX with diag filled; FAB__PTX_E_NOMEM. Never
 * reads past len, never crashes on any input. */
fab__ptx_status_t fab__ptx_parse(const char *text, size_t len, fab__ptx_module_t **module_out,
                                 fab__ptx_diag_t *diag);

/* Link n modules into one (*module_out, new; the inputs stay the caller's):
 * each .extern variable or function is resolved to the one definition that
 * another module makes .visible (or .weak; a .visible one wins over .weak;
 * .common ones merge to the largest); internal names of different modules
 * stay apart. FAB__PTX_E_LINK names the symbol that is undefined or defined
 * twice. An .extern function with no definition anywhere is kept as a
 * declaration (the loader knows the built-ins: vprintf, malloc, free,
 * __assertfail, ...); an unresolved .extern variable that an instruction or
 * an initializer uses, other than an unsized .shared array, is an error (an
 * unused one stays a declaration). n == 1 returns a copy. */
fab__ptx_status_t fab__ptx_link(const fab__ptx_module_t *const *modules, size_t n,
                                fab__ptx_module_t **module_out, fab__ptx_diag_t *diag);

void fab__ptx_module_free(fab__ptx_module_t *module);

/* The names of the PTX instructions, types and words, for messages. */
const char *fab__ptx_op_name(unsigned op);
const char *fab__ptx_type_name(unsigned type);
const char *fab__ptx_word_name(unsigned word);
const char *fab__ptx_space_name(unsigned space);

/* ---- programs ---------------------------------------------------------------- */

typedef struct fab__ptx_program fab__ptx_program_t;
typedef struct fab__ptx_kernel fab__ptx_kernel_t;

/* Decode a (linked) module for the interpreter, checking every instruction
 * against what its opcode takes: FAB__PTX_E_UNSUPPORTED names the first
 * instruction, type or modifier the engine does not run, and its line;
 * FAB__PTX_E_LINK a call to an undefined function that is no built-in. The
 * program keeps module (it takes ownership) when the load succeeds; a failed
 * load leaves it the caller's. A NULL module gives FAB__PTX_OK and a NULL
 * program. */
fab__ptx_status_t fab__ptx_program_load(fab__ptx_module_t *module, fab__ptx_program_t **program_out,
                                        fab__ptx_diag_t *diag);

void fab__ptx_program_free(fab__ptx_program_t *program);

/* The module-scope variables that need memory of the caller's: .global and
 * .const ones (not .extern, not .shared: the engine places shared memory
 * per block). The caller gives each an address (device memory, so that
 * cuModuleGetGlobal and copies reach it) with fab__ptx_program_place, then,
 * once every one is placed, writes each one's initial bytes with
 * fab__ptx_program_init_var (relocations applied: another variable's or a
 * function's address). */
typedef struct fab__ptx_var_info {
    const char *name;
    uint8_t space;           /* FAB__PTX_S_GLOBAL or FAB__PTX_S_CONST */
    uint8_t linkage;
    uint64_t size;
    uint32_t align;
    bool managed;
} fab__ptx_var_info_t;

size_t fab__ptx_program_nvars(const fab__ptx_program_t *program);
void fab__ptx_program_var(const fab__ptx_program_t *program, size_t i, fab__ptx_var_info_t *info_out);
void fab__ptx_program_place(fab__ptx_program_t *program, size_t i, void *address);
void fab__ptx_program_init_var(const fab__ptx_program_t *program, size_t i);

/* The kernel (.entry) called name, internal linkage included, or NULL. */
const fab__ptx_kernel_t *fab__ptx_program_kernel(const fab__ptx_program_t *program, const char *name);
size_t fab__ptx_program_nkernels(const fab__ptx_program_t *program);
const fab__ptx_kernel_t *fab__ptx_program_kernel_at(const fab__ptx_program_t *program, size_t i);

typedef struct fab__ptx_kernel_info {
    const char *name;
    uint32_t nparams;
    size_t param_bytes;      /* the packed .param layout's size */
    size_t static_shared;    /* bytes of .shared variables it uses */
    size_t local_bytes;      /* bytes of .local per thread */
    uint32_t nregs;          /* registers per thread, as the decoder allocated them */
    uint32_t max_threads;    /* from .maxntid/.reqntid, else 1024 */
    uint32_t reqntid[3];     /* 0 when not required */
} fab__ptx_kernel_info_t;

void fab__ptx_kernel_info(const fab__ptx_kernel_t *kernel, fab__ptx_kernel_info_t *info_out);
/* The register window of the function (a kernel or a .func) defined as
 * name: the PTX registers it declares and the slots the loader packed them
 * onto (docs/ptx.md, "Register slots"). false when none is defined so. */
bool fab__ptx_program_func_slots(const fab__ptx_program_t *program, const char *name, uint32_t *ptx_regs_out,
                                 uint32_t *slots_out);
/* Parameter i: its offset and size in the packed layout. */
void fab__ptx_kernel_param(const fab__ptx_kernel_t *kernel, uint32_t i, size_t *offset_out,
                           size_t *size_out);

/* ---- profiles ---------------------------------------------------------------- */

/* From now on, count what every launch of the program's kernels runs: per
 * instruction, the times a warp ran it (its guard true in at least one
 * lane) and the spin yields it ended (a poll that saw nothing change,
 * docs/ptx.md "Profiles"). Call before the program's first launch; once on,
 * it stays on until the program is freed. FAB__PTX_OK or FAB__PTX_E_NOMEM. */
fab__ptx_status_t fab__ptx_program_profile(fab__ptx_program_t *program);

typedef struct fab__ptx_profile_line {
    const char *func;        /* the function (kernel or .func) it is in */
    uint32_t line;           /* its PTX line */
    unsigned op;             /* fab__ptx_op_name */
    uint64_t runs, spins;
} fab__ptx_profile_line_t;

/* How many instructions the program has: enough lines for a whole read. */
size_t fab__ptx_program_ninsns(const fab__ptx_program_t *program);
/* The instructions run at least once so far, the max most run of them into
 * out, most run first (equal runs by function, then line; pass
 * fab__ptx_program_ninsns for all); *total_out, when not NULL, the runs of
 * all of them. Returns how many were written; 0 for a program not profiled.
 * Safe while its kernels run: a snapshot of counters that only grow (a
 * line's runs may have grown between the total and the line's read). */
size_t fab__ptx_program_profile_read(const fab__ptx_program_t *program, fab__ptx_profile_line_t *out,
                                     size_t max, uint64_t *total_out);

/* ---- launches ---------------------------------------------------------------- */

/* What the engine asks of the layer above while a kernel runs. Every
 * member may be NULL: then printf output goes to stdout, and multimem
 * instructions fault. */
typedef struct fab__ptx_host {
    void *ctx;
    /* Device printf's formatted output (whole lines, in order per thread). */
    void (*print)(void *ctx, const char *text, size_t len);
    /* Multicast (multimem.*): is addr inside a multicast mapping; a
     * reduction over every buffer bound there of count elements of type
     * (fab__ptx_type_t) with op (fab__ptx_word_t: ADD MIN MAX AND OR XOR)
     * into out; a store or reduction of count elements to every buffer.
     * Each returns 0 or a fab__ptx_status_t. */
    bool (*mc_is)(void *ctx, uintptr_t addr);
    int (*mc_ld_reduce)(void *ctx, uintptr_t addr, unsigned type, unsigned op, void *out, size_t count);
    int (*mc_st)(void *ctx, uintptr_t addr, unsigned type, const void *in, size_t count);
    int (*mc_red)(void *ctx, uintptr_t addr, unsigned type, unsigned op, const void *in, size_t count);
    /* One line (no newline) the engine wants logged: the watchdog's report
     * of a kernel still running after launch->watch_ms. NULL: stderr. */
    void (*log)(void *ctx, const char *line);
} fab__ptx_host_t;

typedef struct fab__ptx_launch {
    const fab__ptx_kernel_t *kernel;
    uint32_t grid[3], block[3], cluster[3]; /* cluster 0s: none */
    size_t dynamic_shared;
    const void *params;      /* param_bytes bytes, the packed layout; read during the run */
    bool cooperative;        /* grid-wide sync may be used */
    const fab__ptx_host_t *host;
    unsigned workers;        /* worker threads, 0: the engine's default */
    uint32_t watch_ms;       /* after this long, log the kernel's spinning warps (0: never) */
    uint32_t device;         /* for %smid and reports */
} fab__ptx_launch_t;

/* Where a kernel stopped when it did not complete. */
typedef struct fab__ptx_fault {
    fab__ptx_status_t status;
    uintptr_t address;       /* the address a FAULT or MISALIGNED access used */
    uint32_t size;           /* bytes that access covers (0: not a memory access) */
    bool write;              /* whether it stores (st, red, atom, multimem.st/red) */
    uint32_t block[3], thread[3];
    uint32_t line;           /* PTX line of the instruction */
    char report[512];        /* one line: kernel, block, thread, line, address, why */
} fab__ptx_fault_t;

/* Run a whole grid, returning when every thread has exited or the first
 * fault has stopped the rest. FAB__PTX_OK; FAB__PTX_E_INVALID (dimensions
 * or shared memory the kernel cannot take); FAB__PTX_E_NOMEM; or the fault's
 * status with *fault_out filled. Never crashes the process on a bad
 * address. */
fab__ptx_status_t fab__ptx_run(const fab__ptx_launch_t *launch, fab__ptx_fault_t *fault_out);

#endif /* FAB_PTX_PTX_H */
