/* A parsed PTX module: what the front end (lex.c, parse.c, link.c) hands the
 * loader (decode.c) and nothing more. The front end checks the text's syntax
 * and resolves every name (registers, labels, variables, functions,
 * prototypes) to an index; it does not check that an instruction's operands
 * suit its opcode, which the loader does when it decodes each instruction
 * for the interpreter (so that the one place that knows what an instruction
 * means is also the one that refuses what it cannot run).
 *
 * Everything a module points at lives in its arena and is freed with it
 * (fab__ptx_module_free). Indices are uint32_t; FAB__PTX_NONE means none. */
#ifndef FAB_PTX_PTX_MODULE_H
#define FAB_PTX_PTX_MODULE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "src/ptx/opcodes.h"
#include "src/ptx/words.h"

#define FAB__PTX_NONE UINT32_MAX

/* Fundamental types (PTX ISA 5.2.2) and the packed ones. */
typedef enum fab__ptx_type {
    FAB__PTX_T_NONE = 0,
    FAB__PTX_T_B8, FAB__PTX_T_B16, FAB__PTX_T_B32, FAB__PTX_T_B64, FAB__PTX_T_B128,
    FAB__PTX_T_U8, FAB__PTX_T_U16, FAB__PTX_T_U32, FAB__PTX_T_U64,
    FAB__PTX_T_S8, FAB__PTX_T_S16, FAB__PTX_T_S32, FAB__PTX_T_S64,
    FAB__PTX_T_F16, FAB__PTX_T_F16X2, FAB__PTX_T_BF16, FAB__PTX_T_BF16X2,
    FAB__PTX_T_TF32, FAB__PTX_T_F32, FAB__PTX_T_F64,
    FAB__PTX_T_E4M3, FAB__PTX_T_E5M2, FAB__PTX_T_E4M3X2, FAB__PTX_T_E5M2X2,
    FAB__PTX_T_PRED,
    FAB__PTX_T_COUNT
} fab__ptx_type_t;

/* State spaces (PTX ISA 5.1). GENERIC is "no space named". */
typedef enum fab__ptx_space {
    FAB__PTX_S_GENERIC = 0,
    FAB__PTX_S_REG, FAB__PTX_S_SREG, FAB__PTX_S_CONST, FAB__PTX_S_GLOBAL, FAB__PTX_S_LOCAL,
    FAB__PTX_S_PARAM, FAB__PTX_S_SHARED, FAB__PTX_S_SHARED_CLUSTER, FAB__PTX_S_TEX,
    FAB__PTX_S_COUNT
} fab__ptx_space_t;

typedef enum fab__ptx_linkage {
    FAB__PTX_L_INTERNAL = 0, /* no directive: this module only */
    FAB__PTX_L_VISIBLE,      /* .visible */
    FAB__PTX_L_EXTERN,       /* .extern: declared here, defined elsewhere */
    FAB__PTX_L_WEAK,         /* .weak */
    FAB__PTX_L_COMMON,       /* .common */
} fab__ptx_linkage_t;

/* Special registers (PTX ISA chapter 10); the component (x, y, z) of the
 * vector ones is the operand's sreg_comp. */
#define FAB__PTX_SREGS(X)                                                          \
    X(TID, "%tid") X(NTID, "%ntid") X(LANEID, "%laneid") X(WARPID, "%warpid")      \
    X(NWARPID, "%nwarpid") X(CTAID, "%ctaid") X(NCTAID, "%nctaid") X(SMID, "%smid") \
    X(NSMID, "%nsmid") X(GRIDID, "%gridid") X(IS_EXPLICIT_CLUSTER, "%is_explicit_cluster") \
    X(CLUSTERID, "%clusterid") X(NCLUSTERID, "%nclusterid")                       \
    X(CLUSTER_CTAID, "%cluster_ctaid") X(CLUSTER_NCTAID, "%cluster_nctaid")       \
    X(CLUSTER_CTARANK, "%cluster_ctarank") X(CLUSTER_NCTARANK, "%cluster_nctarank") \
    X(LANEMASK_EQ, "%lanemask_eq") X(LANEMASK_LE, "%lanemask_le")                 \
    X(LANEMASK_LT, "%lanemask_lt") X(LANEMASK_GE, "%lanemask_ge")                 \
    X(LANEMASK_GT, "%lanemask_gt") X(CLOCK, "%clock") X(CLOCK_HI, "%clock_hi")    \
    X(CLOCK64, "%clock64") X(GLOBALTIMER, "%globaltimer")                         \
    X(GLOBALTIMER_LO, "%globaltimer_lo") X(GLOBALTIMER_HI, "%globaltimer_hi")     \
    X(TOTAL_SMEM_SIZE, "%total_smem_size") X(AGGR_SMEM_SIZE, "%aggr_smem_size")   \
    X(DYNAMIC_SMEM_SIZE, "%dynamic_smem_size") X(ENVREG, "%envreg")               \
    X(PM, "%pm") X(PM64, "%pm64") X(RESERVED_SMEM_OFFSET_BEGIN, "%reserved_smem_offset_begin") \
    X(RESERVED_SMEM_OFFSET_END, "%reserved_smem_offset_end")                      \
    X(RESERVED_SMEM_OFFSET_CAP, "%reserved_smem_offset_cap")                      \
    X(RESERVED_SMEM_OFFSET_2, "%reserved_smem_offset_<2>")                        \
    X(CURRENT_GRAPH_EXEC, "%current_graph_exec")

typedef enum fab__ptx_sreg {
#define FAB__PTX_SREG_ENUM(id, name) FAB__PTX_SR_##id,
    FAB__PTX_SREGS(FAB__PTX_SREG_ENUM)
#undef FAB__PTX_SREG_ENUM
    FAB__PTX_SR_COUNT
} fab__ptx_sreg_t;

/* What a symbol operand or a relocation names. */
typedef enum fab__ptx_symkind {
    FAB__PTX_SYM_VAR = 1,   /* index into module->vars */
    FAB__PTX_SYM_FUNC,      /* index into module->funcs */
} fab__ptx_symkind_t;

typedef enum fab__ptx_opdkind {
    FAB__PTX_OPD_REG = 1,   /* reg: index into the function's regs; neg: written !%p */
    FAB__PTX_OPD_SREG,      /* sreg, sreg_comp (0 x, 1 y, 2 z, or an index for %envreg<N>, %pm<N>) */
    FAB__PTX_OPD_IMM,       /* imm: an integer literal, two's complement */
    FAB__PTX_OPD_FIMM,      /* fbits: a float literal's bits; fwidth 4 (0f...) or 8 (0d..., decimal) */
    FAB__PTX_OPD_SYM,       /* symkind, sym, imm (offset): the symbol's address (or a function) */
    FAB__PTX_OPD_ADDR,      /* [base + imm]: base is reg (a register), or sym (a symbol), or neither */
    FAB__PTX_OPD_VEC,       /* {a, b, ...}: elems operands starting at first, in the function's pool */
    FAB__PTX_OPD_SINK,      /* _ */
    FAB__PTX_OPD_LABEL,     /* label: index into the function's labels */
    FAB__PTX_OPD_PAIR,      /* reg|reg2: a destination and its predicate (shfl, setp p|q) */
    FAB__PTX_OPD_LIST,      /* (a, b, ...) of call: elems operands starting at first */
    FAB__PTX_OPD_PROTO,     /* sym: index into module->protos (call's last operand) */
} fab__ptx_opdkind_t;

/* How the front end writes what has more than one form:
 *   call        always (rets), target, (args)[, last]: LISTs, empty when not
 *               written; target a SYM function or a REG (indirect); last a
 *               PROTO, or a LIST of SYM functions (a .calltargets list).
 *   brx.idx     index, then a LIST of LABELs (its .branchtargets list).
 *   %v.x        an element of a vector register is a REG (the declaration
 *               split it); a whole vector register is a VEC of its elements.
 *   tex etc.    [tex, {coords}] is an ADDR of the symbol alone (the loader
 *               refuses texture instructions by their opcode).
 * Parameters of a declaration without a body have var FAB__PTX_NONE. */

typedef struct fab__ptx_operand {
    uint8_t kind;           /* fab__ptx_opdkind_t */
    bool neg;               /* !%p */
    uint8_t symkind;        /* for SYM, and ADDR with a symbol base */
    uint8_t fwidth;         /* FIMM: 4 or 8 */
    uint16_t sreg;          /* fab__ptx_sreg_t */
    uint16_t sreg_comp;
    uint32_t reg;           /* REG, PAIR, ADDR with a register base; else FAB__PTX_NONE */
    uint32_t reg2;          /* PAIR's second register */
    uint32_t sym;           /* SYM, ADDR with a symbol base; else FAB__PTX_NONE */
    uint32_t label;         /* LABEL */
    uint32_t first, elems;  /* VEC, LIST: operands in the function's pool */
    int64_t imm;            /* IMM; the offset of SYM and ADDR */
    uint64_t fbits;         /* FIMM */
} fab__ptx_operand_t;

#define FAB__PTX_MAX_WORDS 12
#define FAB__PTX_MAX_TYPES 4 /* mma.sync names four */

/* One instruction as written: opcode, then its modifiers in three kinds
 * (the state space, the vector width and the types are pulled out, since
 * every instruction that has them means the same by them; every other
 * modifier is a word, in the order written, for the loader to read as the
 * opcode defines it: .lo is a comparison to setp and a half to mul). */
typedef struct fab__ptx_insn {
    uint16_t op;            /* fab__ptx_op_t */
    uint8_t space;          /* fab__ptx_space_t, GENERIC when none is written */
    uint8_t vec;            /* 1, or 2, 4, 8 for .v2/.v4/.v8 */
    uint8_t ntypes, nwords, nops;
    bool guard_neg;         /* @!%p */
    uint8_t types[FAB__PTX_MAX_TYPES];   /* fab__ptx_type_t, in order written */
    uint16_t words[FAB__PTX_MAX_WORDS];  /* fab__ptx_word_t, in order written */
    uint32_t guard;         /* the guard predicate's register, or FAB__PTX_NONE */
    uint32_t first;         /* operands: pool[first .. first + nops) */
    uint32_t line;          /* line in the PTX text (of its module, before linking) */
    uint8_t space2;         /* a second state space (cp.async.ca.shared.global), else GENERIC */
} fab__ptx_insn_t;

typedef struct fab__ptx_reg {
    const char *name;       /* as written, with the index of a %r<N> range: "%r3" */
    uint8_t type;           /* fab__ptx_type_t; .v2/.v4 register declarations are split */
} fab__ptx_reg_t;

/* A parameter of an entry or a function, or a function's return value. */
typedef struct fab__ptx_param {
    const char *name;
    uint8_t type;           /* fab__ptx_type_t of one element */
    uint32_t align;         /* bytes; the type's size when not written */
    uint64_t size;          /* bytes in all (an array: elements * size) */
    uint32_t var;           /* the PARAM variable in module->vars that names it */
    bool ptr;               /* .ptr */
    uint8_t ptr_space;      /* .ptr .global etc. */
    uint8_t space;          /* FAB__PTX_S_PARAM, or FAB__PTX_S_REG for a .reg parameter */
    uint32_t reg;           /* a .reg parameter's register in a definition, else FAB__PTX_NONE */
} fab__ptx_param_t;

/* A relocation in a variable's initial value: the address of a symbol
 * (plus addend) stored at offset, width bytes wide; generic: written as
 * generic(sym), else the symbol's address in its own state space. */
typedef struct fab__ptx_reloc {
    uint64_t offset;
    uint8_t symkind;
    uint8_t width;
    bool generic;
    uint32_t sym;
    int64_t addend;
    uint8_t shift;          /* a byte of the address: (address + addend) >> (8 * shift), its low
                             * width bytes stored (0xFF00(sym) in a .b8 array: width 1, shift 1;
                             * eight such bytes in a row are merged into one 8-byte relocation) */
} fab__ptx_reloc_t;

/* A variable in any state space, module-scope or declared inside a function
 * (func names it then); a function's parameters are PARAM variables too. */
typedef struct fab__ptx_var {
    const char *name;
    uint8_t space;          /* fab__ptx_space_t */
    uint8_t type;           /* fab__ptx_type_t of one element */
    uint8_t vec;            /* 1, 2, 4 */
    uint8_t linkage;        /* fab__ptx_linkage_t */
    uint32_t align;         /* bytes */
    uint64_t size;          /* bytes; 0 for an unsized extern array ([]) */
    bool unsized;           /* declared name[] with no initializer: dynamic shared memory */
    bool managed;           /* .attribute(.managed) */
    uint32_t func;          /* the function it is declared in, or FAB__PTX_NONE */
    const unsigned char *init;     /* size bytes, or NULL for zeros */
    const fab__ptx_reloc_t *relocs; /* patched into init at load */
    uint32_t nrelocs;
    uint32_t line;
} fab__ptx_var_t;

/* A .callprototype: the parameter and return layouts an indirect call
 * through it passes. */
typedef struct fab__ptx_proto {
    const char *name;
    const fab__ptx_param_t *params, *rets;
    uint32_t nparams, nrets;
} fab__ptx_proto_t;

typedef struct fab__ptx_func {
    const char *name;
    bool entry;             /* .entry (a kernel); else .func */
    bool defined;           /* has a body (else a declaration: .extern, or a prototype) */
    bool noreturn;
    uint8_t linkage;
    const fab__ptx_param_t *params, *rets;
    uint32_t nparams, nrets;
    const fab__ptx_reg_t *regs;
    uint32_t nregs;
    const fab__ptx_insn_t *insns;
    uint32_t ninsns;
    const fab__ptx_operand_t *pool;  /* every operand of insns, and VEC/LIST elements */
    uint32_t npool;
    const uint32_t *labels;          /* label index -> the index of the insn it precedes (ninsns at the end) */
    const char *const *label_names;
    uint32_t nlabels;
    uint32_t maxntid[3], reqntid[3]; /* 0 when not given */
    uint32_t minnctapersm, maxnreg, reqnctapercluster[3], maxclusterrank;
    uint32_t line;
} fab__ptx_func_t;

typedef struct fab__ptx_module {
    uint32_t version_major, version_minor;   /* .version */
    uint32_t sm;             /* .target sm_NN: NN (90 for sm_90, sm_90a), 0 when none */
    bool sm_arch_specific;   /* sm_90a, sm_100f ... */
    uint32_t address_size;   /* 32 or 64 (64 when not written) */
    const fab__ptx_var_t *vars;
    uint32_t nvars;
    const fab__ptx_func_t *funcs;
    uint32_t nfuncs;
    const fab__ptx_proto_t *protos;
    uint32_t nprotos;
    struct fab__ptx_arena *arena;  /* owns all of the above */
} fab__ptx_module_t;

#endif /* FAB_PTX_PTX_MODULE_H */
