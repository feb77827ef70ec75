/* The PTX front end's own parts, shared by arena.c, lex.c, parse*.c and
 * link.c and seen by nothing else: the arena every module lives in, the
 * lexer's tokens, the scoped name table, and the parser's state. ptx.h and
 * module.h are what the rest of the engine sees. */
#ifndef FAB_PTX_FRONT_H
#define FAB_PTX_FRONT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "src/ptx/ptx.h"

/* ---- arena (arena.c) --------------------------------------------------------- */

/* Bytes one module may hold in all: a bound that keeps hostile text (a
 * register range of a billion) from asking for absurd memory. */
#define FAB__PTX_ARENA_MAX ((size_t)1 << 30)
/* The largest initialized variable (its initial bytes are stored). */
#define FAB__PTX_MAX_INIT ((uint64_t)1 << 28)

typedef struct fab__ptx_arena fab__ptx_arena_t;

fab__ptx_arena_t *fab__ptx_arena_new(void);
void fab__ptx_arena_free(fab__ptx_arena_t *a);
/* size bytes, zeroed, 16-aligned; NULL when out of memory or past the bound. */
void *fab__ptx_arena_alloc(fab__ptx_arena_t *a, size_t size);
char *fab__ptx_arena_strndup(fab__ptx_arena_t *a, const char *s, size_t len);

/* A growable array in an arena (its old storage stays in the arena until
 * the arena goes: at most as much again as the array's final size). */
typedef struct fab__ptx_vec {
    void *data;
    uint32_t n, cap;
} fab__ptx_vec_t;

/* A new zeroed element at the end; NULL when out of memory. */
void *fab__ptx_vec_push(fab__ptx_arena_t *a, fab__ptx_vec_t *v, size_t elem);

/* ---- lexer (lex.c) ----------------------------------------------------------- */

typedef enum fab__ptx_tok_kind {
    FAB__PTX_TK_EOF = 0,
    FAB__PTX_TK_IDENT,   /* a name: foo, %r1, $L__BB0_1, _ */
    FAB__PTX_TK_DOT,     /* a directive or modifier: .reg, .shared::cta, .L2::cache_hint */
    FAB__PTX_TK_INT,     /* ival */
    FAB__PTX_TK_FLOAT,   /* fbits, fwidth (4: 0f..., 8: 0d... or decimal) */
    FAB__PTX_TK_STRING,  /* "..." with its quotes */
    FAB__PTX_TK_PUNCT,   /* one character: , ; : ( ) [ ] { } < > + - ! @ | = */
    FAB__PTX_TK_ERROR,   /* the lexer's message is in the diag */
} fab__ptx_tok_kind_t;

typedef struct fab__ptx_tok {
    uint8_t kind;
    bool spaced;         /* white space or a comment came before it */
    uint8_t fwidth;
    const char *s;
    uint32_t len;
    uint32_t line;
    uint64_t ival;
    uint64_t fbits;
} fab__ptx_tok_t;

typedef struct fab__ptx_lex {
    const char *p, *end;
    uint32_t line;
    fab__ptx_diag_t *diag;
} fab__ptx_lex_t;

void fab__ptx_lex_init(fab__ptx_lex_t *lx, const char *text, size_t len, fab__ptx_diag_t *diag);
/* The next token; TK_ERROR once the text is not PTX (diag says why). */
fab__ptx_tok_t fab__ptx_lex_next(fab__ptx_lex_t *lx);
/* Skip the rest of the line the lexer is on (.file, .loc). */
void fab__ptx_lex_skip_line(fab__ptx_lex_t *lx);
/* Skip past the '}' that closes a block whose '{' was just read (.section). */
bool fab__ptx_lex_skip_block(fab__ptx_lex_t *lx);

/* ---- the parser's state (parse*.c) ------------------------------------------- */

typedef enum fab__ptx_bkind {
    FAB__PTX_B_REG = 1,   /* index: a register of the function */
    FAB__PTX_B_VREG,      /* a vector register: index its first element, count elements */
    FAB__PTX_B_VAR,       /* index into vars */
    FAB__PTX_B_FUNC,      /* index into funcs */
    FAB__PTX_B_PROTO,     /* index into protos */
    FAB__PTX_B_LABEL,     /* index into the function's labels */
    FAB__PTX_B_TARGETS,   /* .branchtargets / .calltargets: pool[index .. index + count) */
} fab__ptx_bkind_t;

typedef struct fab__ptx_binding {
    const char *name;
    uint32_t len, hash;
    uint8_t kind;
    uint32_t index, count;
    uint32_t pos;                   /* its place in the parser's bound list: its scope's if at or past the scope's mark */
    struct fab__ptx_binding *next;  /* in its bucket: inner scopes come first */
} fab__ptx_binding_t;

/* A name used before it is known: a label (resolved when its scope closes)
 * or a module-scope symbol (resolved at the end of the module). */
typedef struct fab__ptx_pending {
    const char *name;
    uint32_t len, line;
    uint32_t func, at;   /* pool index (func != NONE) or reloc index of var */
    uint32_t var;
    uint8_t what;        /* 0 a label operand, 1 a symbol operand, 2 a reloc, 3 a call target */
} fab__ptx_pending_t;

typedef struct fab__ptx_scope {
    uint32_t bind_mark;    /* bindings above this belong to the scope */
    uint32_t label_mark;   /* pending labels above this were used in it */
} fab__ptx_scope_t;

/* The function whose body is being read. */
typedef struct fab__ptx_body {
    uint32_t func;
    fab__ptx_vec_t regs, insns, pool, labels, label_names;
    fab__ptx_vec_t pending_labels;
    fab__ptx_vec_t scopes;
} fab__ptx_body_t;

/* One operand while an instruction is read: its element operands (of a
 * vector or a list) are kept apart, to follow the instruction's own in the
 * pool. */
typedef struct fab__ptx_topd {
    fab__ptx_operand_t o;
    uint32_t kid_first, kids;
    const char *pend_name;     /* a name to resolve later, or NULL */
    uint32_t pend_len;
    uint8_t pend_what;
} fab__ptx_topd_t;

typedef struct fab__ptx_ps {
    fab__ptx_lex_t lx;
    fab__ptx_tok_t tok;        /* the current token */
    fab__ptx_arena_t *arena;
    fab__ptx_diag_t *diag;
    fab__ptx_module_t *m;
    fab__ptx_vec_t vars, funcs, protos;
    fab__ptx_vec_t pending;    /* module-scope names used before they were declared */
    /* the name table */
    fab__ptx_binding_t **buckets;
    uint32_t nbuckets, nbound;
    fab__ptx_vec_t bound;      /* every live binding, in order */
    fab__ptx_body_t *body;     /* NULL outside a function body */
    fab__ptx_vec_t tops, kids; /* scratch for one instruction's operands */
    bool failed;
    bool nomem;
} fab__ptx_ps_t;

/* parse.c: tokens, errors, names */
bool fab__ptx_fail(fab__ptx_ps_t *ps, uint32_t line, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
bool fab__ptx_nomem(fab__ptx_ps_t *ps);
bool fab__ptx_advance(fab__ptx_ps_t *ps);
bool fab__ptx_is_punct(const fab__ptx_ps_t *ps, char c);
bool fab__ptx_is_dot(const fab__ptx_ps_t *ps, const char *word);
bool fab__ptx_expect_punct(fab__ptx_ps_t *ps, char c, const char *what);
bool fab__ptx_expect_uint(fab__ptx_ps_t *ps, const char *what, uint64_t max, uint64_t *v_out);
fab__ptx_binding_t *fab__ptx_lookup(const fab__ptx_ps_t *ps, const char *name, uint32_t len);
bool fab__ptx_bind(fab__ptx_ps_t *ps, const char *name, uint32_t len, uint8_t kind, uint32_t index,
                   uint32_t count);
void fab__ptx_unbind_to(fab__ptx_ps_t *ps, uint32_t mark);
/* A type word's enum (FAB__PTX_T_NONE if it is none) and its size. */
uint8_t fab__ptx_type_of(const char *s, uint32_t len);
uint32_t fab__ptx_type_size(uint8_t type);
/* A state space word's enum, or FAB__PTX_S_COUNT if it is none. */
uint8_t fab__ptx_space_of(const char *s, uint32_t len);

/* parse_decl.c: declarations */
bool fab__ptx_parse_var(fab__ptx_ps_t *ps, uint8_t linkage, uint32_t func);
bool fab__ptx_parse_params(fab__ptx_ps_t *ps, fab__ptx_vec_t *params, bool proto);
bool fab__ptx_parse_reg(fab__ptx_ps_t *ps);
bool fab__ptx_parse_proto(fab__ptx_ps_t *ps, const char *name, uint32_t len, uint32_t line);

/* parse_body.c: operands, scopes, the opcode and word tables */
void fab__ptx_tables_init(void);
int fab__ptx_find_op(const char *s, size_t len);
int fab__ptx_find_word(const char *s, size_t len);
bool fab__ptx_open_scope(fab__ptx_ps_t *ps);
bool fab__ptx_close_scope(fab__ptx_ps_t *ps);
bool fab__ptx_add_label(fab__ptx_ps_t *ps, const fab__ptx_tok_t *name);
fab__ptx_topd_t *fab__ptx_new_opd(fab__ptx_ps_t *ps, bool kid);
/* One operand into tops (or kids, for a vector's or list's element);
 * label_ctx: a name is a label (bra's target). */
bool fab__ptx_parse_operand(fab__ptx_ps_t *ps, bool kid, bool label_ctx);
/* The register the current token names (a declared scalar one) into *reg;
 * what says what it is for, in the message when it is none. */
bool fab__ptx_reg_operand(fab__ptx_ps_t *ps, const char *what, uint32_t *reg);

/* parse_insn.c: statements and instructions */
bool fab__ptx_parse_body(fab__ptx_ps_t *ps, uint32_t func);
bool fab__ptx_resolve_module(fab__ptx_ps_t *ps);

/* init.c: initializers. merge_bytes: eight one-byte relocations in a row
 * (0xFF(sym) .. 0xFF00000000000000(sym): shifts 0..7 at offsets in a row, one
 * symbol and addend) become one 8-byte address, so that the interpreter
 * patches whole addresses; run once every name is resolved. Returns the new
 * count. */
uint32_t fab__ptx_merge_bytes(fab__ptx_reloc_t *r, uint32_t n);
bool fab__ptx_parse_init(fab__ptx_ps_t *ps, uint32_t var, const uint64_t *dims, uint32_t ndims,
                         bool open_first);

#endif /* FAB_PTX_FRONT_H */
