/* A module built by hand, as the front end would hand it over (module.h),
 * for the interpreter's tests that must not depend on the parser: a
 * fixed-capacity builder of one module with a few functions. */
#ifndef FAB_TEST_PTX_MBUILD_H
#define FAB_TEST_PTX_MBUILD_H

#include <stdarg.h>
#include <string.h>

#include "src/ptx/ptx.h"

typedef struct mb {
    fab__ptx_module_t m;
    fab__ptx_func_t f[4];
    fab__ptx_var_t v[32];
    fab__ptx_param_t p[16];
    fab__ptx_reg_t r[4][64];
    fab__ptx_insn_t in[4][128];
    fab__ptx_operand_t o[4][512];
    uint32_t lab[4][16];
    uint32_t np;
    fab__ptx_func_t *cur;
    uint32_t ci;
} mb_t;

typedef fab__ptx_operand_t opd_t;

static inline opd_t R_(uint32_t r) { opd_t o = {.kind = FAB__PTX_OPD_REG, .reg = r, .sym = FAB__PTX_NONE}; return o; }
static inline opd_t I_(int64_t v) { opd_t o = {.kind = FAB__PTX_OPD_IMM, .imm = v, .reg = FAB__PTX_NONE, .sym = FAB__PTX_NONE}; return o; }
static inline opd_t SR_(unsigned s, unsigned c) { opd_t o = {.kind = FAB__PTX_OPD_SREG, .sreg = (uint16_t)s, .sreg_comp = (uint16_t)c, .reg = FAB__PTX_NONE, .sym = FAB__PTX_NONE}; return o; }
static inline opd_t AR_(uint32_t r, int64_t off) { opd_t o = {.kind = FAB__PTX_OPD_ADDR, .reg = r, .sym = FAB__PTX_NONE, .imm = off}; return o; }
static inline opd_t AS_(uint32_t var, int64_t off) { opd_t o = {.kind = FAB__PTX_OPD_ADDR, .reg = FAB__PTX_NONE, .symkind = FAB__PTX_SYM_VAR, .sym = var, .imm = off}; return o; }
static inline opd_t S_(uint32_t var) { opd_t o = {.kind = FAB__PTX_OPD_SYM, .reg = FAB__PTX_NONE, .symkind = FAB__PTX_SYM_VAR, .sym = var}; return o; }
static inline opd_t L_(uint32_t l) { opd_t o = {.kind = FAB__PTX_OPD_LABEL, .label = l, .reg = FAB__PTX_NONE, .sym = FAB__PTX_NONE}; return o; }

static inline void mb_init(mb_t *b)
{
    memset(b, 0, sizeof(*b));
    b->m.version_major = 9;
    b->m.sm = 90;
    b->m.address_size = 64;
    b->m.vars = b->v;
    b->m.funcs = b->f;
}

/* A new function; its registers are declared with mb_reg. */
static inline uint32_t mb_func(mb_t *b, const char *name, bool entry)
{
    uint32_t i = b->m.nfuncs++;
    fab__ptx_func_t *f = &b->f[i];
    f->name = name;
    f->entry = entry;
    f->defined = true;
    f->linkage = FAB__PTX_L_VISIBLE;
    f->regs = b->r[i];
    f->insns = b->in[i];
    f->pool = b->o[i];
    f->labels = b->lab[i];
    f->params = &b->p[b->np];
    b->cur = f;
    b->ci = i;
    return i;
}

static inline uint32_t mb_param(mb_t *b, const char *name, unsigned type, uint32_t size)
{
    fab__ptx_func_t *f = b->cur;
    uint32_t vi = b->m.nvars++;
    b->v[vi] = (fab__ptx_var_t){.name = name, .space = FAB__PTX_S_PARAM, .type = (uint8_t)type, .vec = 1,
                               .align = size, .size = size, .func = b->ci};
    b->p[b->np++] = (fab__ptx_param_t){.name = name, .type = (uint8_t)type, .align = size, .size = size, .var = vi};
    f->nparams++;
    return vi;
}

static inline uint32_t mb_var(mb_t *b, const char *name, unsigned space, uint32_t size, uint32_t align, bool in_func)
{
    uint32_t vi = b->m.nvars++;
    b->v[vi] = (fab__ptx_var_t){.name = name, .space = (uint8_t)space, .type = FAB__PTX_T_B8, .vec = 1,
                               .align = align, .size = size, .func = in_func ? b->ci : FAB__PTX_NONE,
                               .linkage = FAB__PTX_L_INTERNAL};
    return vi;
}

static inline uint32_t mb_reg(mb_t *b, unsigned type)
{
    fab__ptx_func_t *f = b->cur;
    uint32_t r = f->nregs++;
    b->r[b->ci][r] = (fab__ptx_reg_t){.name = "%r", .type = (uint8_t)type};
    return r;
}

static inline void mb_label(mb_t *b, uint32_t l)
{
    fab__ptx_func_t *f = b->cur;
    b->lab[b->ci][l] = f->ninsns;
    if (f->nlabels <= l)
        f->nlabels = l + 1;
}

/* op, guard (FAB__PTX_NONE or a pred reg; neg), space, vec, types (0-ended),
 * words (0-ended), then nops operands */
static inline void mb_ins(mb_t *b, unsigned op, uint32_t guard, bool gneg, unsigned space, unsigned vec,
                          const unsigned *types, const unsigned *words, unsigned nops, ...)
{
    fab__ptx_func_t *f = b->cur;
    fab__ptx_insn_t *in = &b->in[b->ci][f->ninsns++];
    memset(in, 0, sizeof(*in));
    in->op = (uint16_t)op;
    in->guard = guard;
    in->guard_neg = gneg;
    in->space = (uint8_t)space;
    in->vec = (uint8_t)(vec ? vec : 1);
    for (; types && types[in->ntypes]; in->ntypes++)
        in->types[in->ntypes] = (uint8_t)types[in->ntypes];
    for (; words && words[in->nwords]; in->nwords++)
        in->words[in->nwords] = (uint16_t)words[in->nwords];
    in->first = f->npool;
    in->nops = (uint8_t)nops;
    in->line = f->ninsns;
    va_list ap;
    va_start(ap, nops);
    for (unsigned i = 0; i < nops; i++)
        b->o[b->ci][f->npool++] = va_arg(ap, opd_t);
    va_end(ap);
}

#define TY(...) ((const unsigned[]){__VA_ARGS__, 0})
#define WD(...) ((const unsigned[]){__VA_ARGS__, 0})
#define NOG FAB__PTX_NONE, false

#endif
