/* The decoder: one module function's instructions as the front end parsed
 * them -> the interpreter's compact form (engine.h), checked against what
 * each opcode takes, so that the interpreter never checks what the loader
 * proved. Operands become window slots (immediates, symbol addresses and
 * fixed special registers folded into constant slots), labels become
 * instruction indices, and each conditional branch gets its reconvergence
 * point, the immediate post-dominator of its basic block; then slots.c
 * packs the registers onto as few slots as their live ranges allow. Anything the
 * engine does not run is refused here with FAB__PTX_E_UNSUPPORTED naming
 * the instruction, type or modifier and its line. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "src/ptx/decode.h"

static const bool fab__ptx_runs[FAB__PTX_OP_COUNT] = {
#define FAB__PTX_RUNS_ROW(id, mnemonic, section, runs) [FAB__PTX_OP_##id] = runs,
    FAB__PTX_OPCODES(FAB__PTX_RUNS_ROW)
#undef FAB__PTX_RUNS_ROW
};

bool fab__ptx_op_runs(unsigned op)
{
    return op < FAB__PTX_OP_COUNT && fab__ptx_runs[op];
}

uint32_t fab__ptx_type_bits(unsigned t)
{
    switch (t) {
    case FAB__PTX_T_B8: case FAB__PTX_T_U8: case FAB__PTX_T_S8: case FAB__PTX_T_E4M3: case FAB__PTX_T_E5M2:
        return 8;
    case FAB__PTX_T_B16: case FAB__PTX_T_U16: case FAB__PTX_T_S16: case FAB__PTX_T_F16: case FAB__PTX_T_BF16:
    case FAB__PTX_T_E4M3X2: case FAB__PTX_T_E5M2X2:
        return 16;
    case FAB__PTX_T_B32: case FAB__PTX_T_U32: case FAB__PTX_T_S32: case FAB__PTX_T_F16X2:
    case FAB__PTX_T_BF16X2: case FAB__PTX_T_TF32: case FAB__PTX_T_F32:
        return 32;
    case FAB__PTX_T_B64: case FAB__PTX_T_U64: case FAB__PTX_T_S64: case FAB__PTX_T_F64:
        return 64;
    case FAB__PTX_T_B128:
        return 128;
    case FAB__PTX_T_PRED:
        return 1;
    default:
        return 0;
    }
}

uint32_t fab__ptx_xtype_size(unsigned t)
{
    uint32_t b = fab__ptx_type_bits(t);
    return b == 1 ? 1 : b / 8;
}

bool fab__ptx_is_sint(unsigned t) { return t >= FAB__PTX_T_S8 && t <= FAB__PTX_T_S64; }
bool fab__ptx_is_int(unsigned t) { return t >= FAB__PTX_T_B8 && t <= FAB__PTX_T_S64 && t != FAB__PTX_T_B128; }
bool fab__ptx_is_float(unsigned t)
{
    return t == FAB__PTX_T_F16 || t == FAB__PTX_T_F16X2 || t == FAB__PTX_T_BF16 || t == FAB__PTX_T_BF16X2 ||
           t == FAB__PTX_T_F32 || t == FAB__PTX_T_F64;
}

/* ---- diagnostics -------------------------------------------------------------------- */

/* The message is "<function>: <instruction>: <reason>". Mangled C++ names
 * run to hundreds of characters (CUB's kernels), so the instruction and the
 * reason are written first and the name gets the room left, cut in the
 * middle with "..." when it is longer: the reason is never the part lost. */
int fab__ptx_dc_fail(fab__ptx_dc_t *dc, int status, const char *fmt, ...)
{
    if (dc->diag) {
        const fab__ptx_insn_t *in = dc->in;
        dc->diag->line = in ? in->line : dc->f->line;
        char tail[sizeof(dc->diag->msg)];
        size_t n = 0;
#define FAB__PTX_TAIL(...)                                                                 \
    do {                                                                                   \
        if (n < sizeof(tail)) {                                                            \
            int w_ = snprintf(tail + n, sizeof(tail) - n, __VA_ARGS__);                    \
            n = w_ < 0 ? n : n + (size_t)w_;                                               \
        }                                                                                  \
    } while (0)
        if (in) {
            FAB__PTX_TAIL(": %s", fab__ptx_op_name(in->op));
            if (in->space)
                FAB__PTX_TAIL("%s", fab__ptx_space_name(in->space));
            for (unsigned i = 0; i < in->nwords; i++)
                FAB__PTX_TAIL("%s", fab__ptx_word_name(in->words[i]));
            for (unsigned i = 0; i < in->ntypes; i++)
                FAB__PTX_TAIL("%s", fab__ptx_type_name(in->types[i]));
        }
#undef FAB__PTX_TAIL
        if (n < sizeof(tail) - 3) {
            memcpy(tail + n, ": ", 3);
            n += 2;
            va_list ap;
            va_start(ap, fmt);
            vsnprintf(tail + n, sizeof(tail) - n, fmt, ap);
            va_end(ap);
        }
        tail[sizeof(tail) - 1] = '\0';
        const char *name = dc->f->name;
        size_t len = strlen(name), tlen = strlen(tail);
        size_t room = sizeof(dc->diag->msg) - 1 - tlen; /* the name's share */
        char *o = dc->diag->msg;
        if (len <= room) {
            memcpy(o, name, len);
            o += len;
        } else if (room > 3) {
            /* keep both ends of the name: the namespace and the parameter types */
            size_t keep = room - 3, head = keep - keep / 3;
            memcpy(o, name, head);
            memcpy(o + head, "...", 3);
            memcpy(o + head + 3, name + len - (keep - head), keep - head);
            o += room;
        }
        memcpy(o, tail, tlen + 1);
    }
    return status;
}

/* ---- constant slots ------------------------------------------------------------------ */

static uint64_t fab__ptx_const_hash(const fab__ptx_const_t *k)
{
    uint64_t h = k->value * 0x9E3779B97F4A7C15ull;
    h ^= ((uint64_t)k->kind << 56) ^ ((uint64_t)k->sreg << 40) ^ ((uint64_t)k->comp << 32) ^ k->index;
    return h * 0xBF58476D1CE4E5B9ull;
}

static bool fab__ptx_const_eq(const fab__ptx_const_t *a, const fab__ptx_const_t *b)
{
    return a->kind == b->kind && a->sreg == b->sreg && a->comp == b->comp && a->index == b->index &&
           a->value == b->value;
}

/* The slot of constant k, made once per function. */
int fab__ptx_dc_const(fab__ptx_dc_t *dc, const fab__ptx_const_t *k, uint32_t *slot_out)
{
    fab__ptx_code_t *c = dc->c;
    if (c->nconsts * 2 >= dc->hcap) {
        uint32_t ncap = dc->hcap ? dc->hcap * 2 : 256;
        uint32_t *nh = malloc(ncap * sizeof(*nh));
        if (!nh)
            return FAB__PTX_E_NOMEM;
        memset(nh, 0xff, ncap * sizeof(*nh));
        for (uint32_t i = 0; i < c->nconsts; i++) {
            uint32_t h = (uint32_t)fab__ptx_const_hash(&c->consts[i]) & (ncap - 1);
            while (nh[h] != FAB__PTX_NONE)
                h = (h + 1) & (ncap - 1);
            nh[h] = i;
        }
        free(dc->hash);
        dc->hash = nh;
        dc->hcap = ncap;
    }
    uint32_t h = (uint32_t)fab__ptx_const_hash(k) & (dc->hcap - 1);
    while (dc->hash[h] != FAB__PTX_NONE) {
        if (fab__ptx_const_eq(&c->consts[dc->hash[h]], k)) {
            *slot_out = c->nregs + 1 + dc->hash[h];
            return 0;
        }
        h = (h + 1) & (dc->hcap - 1);
    }
    if (c->nconsts == dc->ccap) {
        uint32_t ncap = dc->ccap ? dc->ccap * 2 : 64;
        fab__ptx_const_t *nc = realloc(c->consts, ncap * sizeof(*nc));
        if (!nc)
            return FAB__PTX_E_NOMEM;
        c->consts = nc;
        dc->ccap = ncap;
    }
    c->consts[c->nconsts] = *k;
    dc->hash[h] = c->nconsts;
    *slot_out = c->nregs + 1 + c->nconsts++;
    return 0;
}

int fab__ptx_dc_imm(fab__ptx_dc_t *dc, uint64_t v, uint32_t *slot_out)
{
    fab__ptx_const_t k = {.kind = FAB__PTX_C_IMM, .value = v};
    return fab__ptx_dc_const(dc, &k, slot_out);
}

/* Bits of a float literal (given as f32 or f64) as type t wants them. */
static uint64_t fab__ptx_fimm_bits(const fab__ptx_operand_t *o, unsigned t)
{
    double d;
    if (o->fwidth == 4) {
        uint32_t u = (uint32_t)o->fbits;
        float f;
        memcpy(&f, &u, 4);
        if (t == FAB__PTX_T_F32 || fab__ptx_type_bits(t) == 32)
            return u;
        d = f;
    } else {
        memcpy(&d, &o->fbits, 8);
    }
    if (t == FAB__PTX_T_F32) {
        float f = (float)d;
        uint32_t u;
        memcpy(&u, &f, 4);
        return u;
    }
    if (t == FAB__PTX_T_F16 || t == FAB__PTX_T_BF16)
        return t == FAB__PTX_T_F16 ? fab__ptx_f32_to_f16((float)d, FAB__PTX_W_RN)
                                   : fab__ptx_f32_to_bf16((float)d, FAB__PTX_W_RN);
    uint64_t u;
    memcpy(&u, &d, 8);
    return u;
}

/* The constant for a symbol's address in its own state space. */
int fab__ptx_dc_sym(fab__ptx_dc_t *dc, uint8_t symkind, uint32_t sym, int64_t off, uint8_t *space_out,
                    uint32_t *slot_out)
{
    const fab__ptx_module_t *m = dc->mod;
    fab__ptx_const_t k = {.value = (uint64_t)off};
    uint8_t xs = FAB__PTX_XS_GENERIC;
    if (symkind == FAB__PTX_SYM_FUNC) {
        if (sym >= m->nfuncs)
            return fab__ptx_dc_fail(dc, FAB__PTX_E_UNSUPPORTED, "a function index out of range");
        k.kind = FAB__PTX_C_FUNC;
        k.index = sym;
    } else {
        if (sym >= m->nvars)
            return fab__ptx_dc_fail(dc, FAB__PTX_E_UNSUPPORTED, "a variable index out of range");
        const fab__ptx_var_t *v = &m->vars[sym];
        k.index = sym;
        switch (v->space) {
        case FAB__PTX_S_GLOBAL: case FAB__PTX_S_CONST:
            if (v->linkage == FAB__PTX_L_EXTERN && !dc->p->var_placeable[sym])
                return fab__ptx_dc_fail(dc, FAB__PTX_E_LINK, "%s is an unresolved .extern", v->name);
            k.kind = FAB__PTX_C_VAR;
            break;
        case FAB__PTX_S_SHARED:
            k.kind = v->unsized || (v->linkage == FAB__PTX_L_EXTERN && v->size == 0) ? FAB__PTX_C_DYNSHARED
                                                                                   : FAB__PTX_C_SHARED;
            xs = FAB__PTX_XS_SHARED;
            break;
        case FAB__PTX_S_LOCAL:
            k.kind = FAB__PTX_C_LOCAL;
            xs = FAB__PTX_XS_LOCAL;
            break;
        case FAB__PTX_S_PARAM:
            if (dc->f->entry && dc->p->var_kparam[sym]) {
                k.kind = FAB__PTX_C_KPARAM;
                xs = FAB__PTX_XS_KPARAM;
            } else {
                k.kind = FAB__PTX_C_LOCAL;
                xs = FAB__PTX_XS_LOCAL;
            }
            break;
        default:
            return fab__ptx_dc_fail(dc, FAB__PTX_E_UNSUPPORTED, "the address of %s (in %s)", v->name,
                                    fab__ptx_space_name(v->space));
        }
    }
    if (space_out)
        *space_out = xs;
    return fab__ptx_dc_const(dc, &k, slot_out);
}

static bool fab__ptx_sreg_fixed(unsigned sreg)
{
    switch (sreg) {
    case FAB__PTX_SR_CLOCK: case FAB__PTX_SR_CLOCK_HI: case FAB__PTX_SR_CLOCK64: case FAB__PTX_SR_GLOBALTIMER:
    case FAB__PTX_SR_GLOBALTIMER_LO: case FAB__PTX_SR_GLOBALTIMER_HI: case FAB__PTX_SR_PM: case FAB__PTX_SR_PM64:
        return false;
    default:
        return true;
    }
}

/* A .b128 register is two slots, which only the .b128 operands of mov, ld,
 * st and atom name (fab__ptx_dc_src128): anywhere else, and a .b128
 * operand through the one-slot path, is refused rather than half read. */
static int fab__ptx_dc_not128(fab__ptx_dc_t *dc, uint32_t reg, unsigned t)
{
    bool wide = dc->f->regs[reg].type == FAB__PTX_T_B128;
    if (t == FAB__PTX_T_B128)
        return fab__ptx_dc_fail(dc, FAB__PTX_E_UNSUPPORTED, "a .b128 operand here");
    if (wide)
        return fab__ptx_dc_fail(dc, FAB__PTX_E_UNSUPPORTED, "%s, a .b128 register, used as %s",
                                dc->f->regs[reg].name, t ? fab__ptx_type_name(t) : "a value");
    return 0;
}

/* A source operand of type t -> its slot. */
int fab__ptx_dc_src(fab__ptx_dc_t *dc, const fab__ptx_operand_t *o, unsigned t, uint32_t *slot_out)
{
    int rc;
    switch (o->kind) {
    case FAB__PTX_OPD_REG:
        if (o->reg >= dc->f->nregs)
            return fab__ptx_dc_fail(dc, FAB__PTX_E_UNSUPPORTED, "a register index out of range");
        if ((t == FAB__PTX_T_PRED) != (dc->f->regs[o->reg].type == FAB__PTX_T_PRED))
            return fab__ptx_dc_fail(dc, FAB__PTX_E_UNSUPPORTED, "%s used as %s", dc->f->regs[o->reg].name,
                                    t == FAB__PTX_T_PRED ? "a predicate" : "a value");
        if ((rc = fab__ptx_dc_not128(dc, o->reg, t)))
            return rc;
        if (o->neg)
            return fab__ptx_dc_fail(dc, FAB__PTX_E_UNSUPPORTED, "a negated operand here");
        *slot_out = o->reg;
        return 0;
    case FAB__PTX_OPD_IMM: {
        uint64_t v = (uint64_t)o->imm;
        if (t == FAB__PTX_T_F32 || t == FAB__PTX_T_F64) {
            /* An integer literal where a float is wanted means its value. */
            fab__ptx_operand_t f = {.kind = FAB__PTX_OPD_FIMM, .fwidth = 8};
            double d = (double)o->imm;
            memcpy(&f.fbits, &d, 8);
            v = fab__ptx_fimm_bits(&f, t);
        } else if (t == FAB__PTX_T_PRED) {
            v = o->imm ? 0xffffffffu : 0;
        }
        return fab__ptx_dc_imm(dc, v, slot_out);
    }
    case FAB__PTX_OPD_FIMM:
        return fab__ptx_dc_imm(dc, fab__ptx_fimm_bits(o, t), slot_out);
    case FAB__PTX_OPD_SYM:
        return fab__ptx_dc_sym(dc, o->symkind, o->sym, o->imm, NULL, slot_out);
    case FAB__PTX_OPD_SREG: {
        if (!fab__ptx_sreg_fixed(o->sreg))
            return fab__ptx_dc_fail(dc, FAB__PTX_E_UNSUPPORTED, "%s outside mov", "a clock register");
        fab__ptx_const_t k = {.kind = FAB__PTX_C_SREG, .sreg = o->sreg, .comp = o->sreg_comp};
        return fab__ptx_dc_const(dc, &k, slot_out);
    }
    default:
        return fab__ptx_dc_fail(dc, FAB__PTX_E_UNSUPPORTED, "an operand of kind %u here", o->kind);
    }
}

/* A destination: a register (of the right kind), or _ (the sink slot). */
int fab__ptx_dc_dst(fab__ptx_dc_t *dc, const fab__ptx_operand_t *o, unsigned t, uint32_t *slot_out)
{
    if (o->kind == FAB__PTX_OPD_SINK) {
        *slot_out = dc->c->nregs;
        return 0;
    }
    if (o->kind != FAB__PTX_OPD_REG && o->kind != FAB__PTX_OPD_PAIR)
        return fab__ptx_dc_fail(dc, FAB__PTX_E_UNSUPPORTED, "a destination that is not a register");
    if (o->reg >= dc->f->nregs)
        return fab__ptx_dc_fail(dc, FAB__PTX_E_UNSUPPORTED, "a register index out of range");
    if ((t == FAB__PTX_T_PRED) != (dc->f->regs[o->reg].type == FAB__PTX_T_PRED))
        return fab__ptx_dc_fail(dc, FAB__PTX_E_UNSUPPORTED, "%s written as %s", dc->f->regs[o->reg].name,
                                t == FAB__PTX_T_PRED ? "a predicate" : "a value");
    int rc = fab__ptx_dc_not128(dc, o->reg, t);
    if (rc)
        return rc;
    *slot_out = o->reg;
    return 0;
}

static int fab__ptx_dc_reg128(fab__ptx_dc_t *dc, const fab__ptx_operand_t *o, uint32_t *lo, uint32_t *hi)
{
    if (o->kind != FAB__PTX_OPD_REG)
        return fab__ptx_dc_fail(dc, FAB__PTX_E_UNSUPPORTED, "a .b128 operand that is not a .b128 register");
    if (o->reg >= dc->f->nregs)
        return fab__ptx_dc_fail(dc, FAB__PTX_E_UNSUPPORTED, "a register index out of range");
    if (dc->f->regs[o->reg].type != FAB__PTX_T_B128 || !dc->hi || dc->hi[o->reg] == FAB__PTX_NONE)
        return fab__ptx_dc_fail(dc, FAB__PTX_E_UNSUPPORTED, "%s used as .b128 (it is %s)", dc->f->regs[o->reg].name,
                                fab__ptx_type_name(dc->f->regs[o->reg].type));
    *lo = o->reg;
    *hi = dc->hi[o->reg];
    return 0;
}

int fab__ptx_dc_src128(fab__ptx_dc_t *dc, const fab__ptx_operand_t *o, uint32_t *lo, uint32_t *hi)
{
    if (o->kind == FAB__PTX_OPD_REG && o->neg)
        return fab__ptx_dc_fail(dc, FAB__PTX_E_UNSUPPORTED, "a negated operand here");
    return fab__ptx_dc_reg128(dc, o, lo, hi);
}

int fab__ptx_dc_dst128(fab__ptx_dc_t *dc, const fab__ptx_operand_t *o, uint32_t *lo, uint32_t *hi)
{
    if (o->kind == FAB__PTX_OPD_SINK) {
        *lo = *hi = dc->c->nregs;
        return 0;
    }
    return fab__ptx_dc_reg128(dc, o, lo, hi);
}

/* [base + off] in the instruction's state space. */
int fab__ptx_dc_addr(fab__ptx_dc_t *dc, const fab__ptx_operand_t *o, unsigned space, fab__ptx_x_t *x)
{
    uint8_t xs = FAB__PTX_XS_GENERIC;
    if (o->kind == FAB__PTX_OPD_SYM) {
        /* a bare symbol where an address is wanted, as in [sym] */
        fab__ptx_operand_t a = *o;
        a.kind = FAB__PTX_OPD_ADDR;
        a.reg = FAB__PTX_NONE;
        return fab__ptx_dc_addr(dc, &a, space, x);
    }
    if (o->kind != FAB__PTX_OPD_ADDR)
        return fab__ptx_dc_fail(dc, FAB__PTX_E_UNSUPPORTED, "an address operand of kind %u", o->kind);
    x->off = o->imm;
    if (o->reg != FAB__PTX_NONE && o->sym == FAB__PTX_NONE) {
        if (o->reg >= dc->f->nregs || dc->f->regs[o->reg].type == FAB__PTX_T_PRED ||
            dc->f->regs[o->reg].type == FAB__PTX_T_B128)
            return fab__ptx_dc_fail(dc, FAB__PTX_E_UNSUPPORTED, "an address register that is not one");
        x->addr = o->reg;
    } else if (o->sym != FAB__PTX_NONE) {
        int rc = fab__ptx_dc_sym(dc, o->symkind, o->sym, 0, &xs, &x->addr);
        if (rc)
            return rc;
        if (space == FAB__PTX_S_GENERIC && xs != FAB__PTX_XS_GENERIC)
            return fab__ptx_dc_fail(dc, FAB__PTX_E_UNSUPPORTED, "a generic access to a %s symbol",
                                    xs == FAB__PTX_XS_SHARED ? ".shared" : ".local/.param");
    } else {
        x->addr = dc->c->nregs + 1; /* the zero constant */
    }
    switch (space) {
    case FAB__PTX_S_GENERIC: case FAB__PTX_S_GLOBAL: case FAB__PTX_S_CONST:
        x->space = FAB__PTX_XS_GENERIC;
        break;
    case FAB__PTX_S_SHARED: case FAB__PTX_S_SHARED_CLUSTER:
        x->space = FAB__PTX_XS_SHARED;
        break;
    case FAB__PTX_S_LOCAL:
        x->space = FAB__PTX_XS_LOCAL;
        break;
    case FAB__PTX_S_PARAM:
        if (o->sym != FAB__PTX_NONE)
            x->space = xs;
        else
            x->space = dc->f->entry ? FAB__PTX_XS_KPARAM : FAB__PTX_XS_LOCAL;
        break;
    default:
        return fab__ptx_dc_fail(dc, FAB__PTX_E_UNSUPPORTED, "the state space %s", fab__ptx_space_name(space));
    }
    return 0;
}

/* ---- reconvergence: immediate post-dominators over basic blocks --------------------- */

static bool fab__ptx_ends_block(const fab__ptx_x_t *x)
{
    return x->op == FAB__PTX_OP_BRA || x->op == FAB__PTX_OP_RET || x->op == FAB__PTX_OP_EXIT ||
           x->op == FAB__PTX_OP_TRAP || x->op == FAB__PTX_OP_BRKPT;
}

/* Every conditional branch's reconv: the first instruction of its block's
 * immediate post-dominator (Cooper, Harvey and Kennedy's iteration over the
 * reverse graph), FAB__PTX_NONE when only the function's end post-dominates. */
int fab__ptx_dc_reconv(fab__ptx_code_t *c)
{
    uint32_t n = c->nx;
    if (!n)
        return 0;
    int rc = FAB__PTX_E_NOMEM;
    uint32_t *bof = malloc(n * sizeof(*bof));     /* insn -> block */
    bool *lead = calloc(n + 1, 1);
    uint32_t *start = NULL, *succ = NULL, *order = NULL, *num = NULL, *ipd = NULL, *predoff = NULL,
             *preds = NULL, *stack = NULL;
    if (!bof || !lead)
        goto out;
    lead[0] = true;
    for (uint32_t i = 0; i < n; i++) {
        const fab__ptx_x_t *x = &c->x[i];
        if (x->op == FAB__PTX_OP_BRA && x->target < n)
            lead[x->target] = true;
        if (fab__ptx_ends_block(x))
            lead[i + 1] = true;
    }
    uint32_t nb = 0;
    for (uint32_t i = 0; i < n; i++)
        nb += lead[i];
    start = malloc((nb + 1) * sizeof(*start));
    succ = malloc(nb * 2 * sizeof(*succ));
    if (!start || !succ)
        goto out;
    nb = 0;
    for (uint32_t i = 0; i < n; i++) {
        if (lead[i])
            start[nb++] = i;
        bof[i] = nb - 1;
    }
    start[nb] = n;
    const uint32_t EXIT = nb;
    for (uint32_t b = 0; b < nb; b++) {
        const fab__ptx_x_t *x = &c->x[start[b + 1] - 1];
        uint32_t s0 = start[b + 1] < n ? bof[start[b + 1]] : EXIT, s1 = FAB__PTX_NONE;
        if (x->op == FAB__PTX_OP_BRA) {
            uint32_t t = x->target < n ? bof[x->target] : EXIT;
            if (x->guard == FAB__PTX_NONE)
                s0 = t;
            else
                s1 = t;
        } else if (x->op == FAB__PTX_OP_RET || x->op == FAB__PTX_OP_EXIT || x->op == FAB__PTX_OP_TRAP ||
                   x->op == FAB__PTX_OP_BRKPT) {
            s0 = x->guard == FAB__PTX_NONE ? EXIT : s0;
            if (x->guard != FAB__PTX_NONE)
                s1 = EXIT;
        }
        succ[2 * b] = s0;
        succ[2 * b + 1] = s1;
    }
    /* predecessors in the forward graph = successors in the reverse one */
    predoff = calloc(nb + 2, sizeof(*predoff));
    preds = malloc((2 * nb + 1) * sizeof(*preds));
    order = malloc((nb + 1) * sizeof(*order));
    num = malloc((nb + 1) * sizeof(*num));
    ipd = malloc((nb + 1) * sizeof(*ipd));
    stack = malloc((2 * nb + 2) * sizeof(*stack));
    if (!predoff || !preds || !order || !num || !ipd || !stack)
        goto out;
    for (uint32_t b = 0; b < nb; b++)
        for (int k = 0; k < 2; k++)
            if (succ[2 * b + k] != FAB__PTX_NONE)
                predoff[succ[2 * b + k] + 1]++;
    for (uint32_t b = 0; b <= nb; b++)
        predoff[b + 1] += predoff[b];
    {
        uint32_t *fill = calloc(nb + 1, sizeof(*fill));
        if (!fill)
            goto out;
        for (uint32_t b = 0; b < nb; b++)
            for (int k = 0; k < 2; k++) {
                uint32_t s = succ[2 * b + k];
                if (s != FAB__PTX_NONE)
                    preds[predoff[s] + fill[s]++] = b;
            }
        free(fill);
    }
    /* postorder of the reverse graph from EXIT (iterative DFS) */
    for (uint32_t b = 0; b <= nb; b++)
        num[b] = FAB__PTX_NONE, ipd[b] = FAB__PTX_NONE;
    uint32_t npo = 0, sp = 0;
    bool *seen = calloc(nb + 1, 1);
    if (!seen)
        goto out;
    stack[sp++] = EXIT;
    seen[EXIT] = true;
    uint32_t *it = calloc(nb + 1, sizeof(*it));
    if (!it) {
        free(seen);
        goto out;
    }
    while (sp) {
        uint32_t v = stack[sp - 1];
        if (predoff[v] + it[v] < predoff[v + 1]) {
            uint32_t u = preds[predoff[v] + it[v]++];
            if (!seen[u]) {
                seen[u] = true;
                stack[sp++] = u;
            }
        } else {
            num[v] = npo;
            order[npo++] = v;
            sp--;
        }
    }
    free(it);
    free(seen);
    ipd[EXIT] = EXIT;
    for (bool changed = true; changed;) {
        changed = false;
        for (uint32_t k = npo; k-- > 0;) {
            uint32_t b = order[k];
            if (b == EXIT)
                continue;
            uint32_t nd = FAB__PTX_NONE;
            for (int j = 0; j < 2; j++) {
                uint32_t s = succ[2 * b + j];
                if (s == FAB__PTX_NONE || ipd[s] == FAB__PTX_NONE)
                    continue;
                if (nd == FAB__PTX_NONE) {
                    nd = s;
                    continue;
                }
                uint32_t a = s, bb = nd;
                while (a != bb) {
                    while (num[a] < num[bb])
                        a = ipd[a];
                    while (num[bb] < num[a])
                        bb = ipd[bb];
                }
                nd = a;
            }
            if (nd != ipd[b]) {
                ipd[b] = nd;
                changed = true;
            }
        }
    }
    for (uint32_t b = 0; b < nb; b++) {
        fab__ptx_x_t *x = &c->x[start[b + 1] - 1];
        if (x->op != FAB__PTX_OP_BRA)
            continue;
        uint32_t p = ipd[b];
        x->reconv = p == FAB__PTX_NONE || p == EXIT ? FAB__PTX_NONE : start[p];
    }
    rc = 0;
out:
    free(bof);
    free(lead);
    free(start);
    free(succ);
    free(order);
    free(num);
    free(ipd);
    free(predoff);
    free(preds);
    free(stack);
    return rc;
}

/* ---- one function ------------------------------------------------------------------- */

int fab__ptx_decode_func(fab__ptx_program_t *p, uint32_t fi, fab__ptx_diag_t *diag)
{
    fab__ptx_code_t *c = &p->codes[fi];
    const fab__ptx_func_t *f = &p->module->funcs[fi];
    fab__ptx_dc_t dc = {.p = p, .mod = p->module, .f = f, .c = c, .diag = diag};
    int rc = 0;
    /* a .b128 register's high half is a slot after the function's registers */
    c->nregs = f->nregs;
    for (uint32_t r = 0; r < f->nregs; r++) {
        if (f->regs[r].type != FAB__PTX_T_B128)
            continue;
        if (!dc.hi) {
            dc.hi = malloc((size_t)f->nregs * sizeof(*dc.hi));
            if (!dc.hi)
                return FAB__PTX_E_NOMEM;
            memset(dc.hi, 0xff, (size_t)f->nregs * sizeof(*dc.hi));
        }
        dc.hi[r] = c->nregs++;
    }
    uint32_t zero;
    if ((rc = fab__ptx_dc_imm(&dc, 0, &zero)))
        goto out;
    c->x = calloc(f->ninsns ? f->ninsns : 1, sizeof(*c->x));
    if (!c->x) {
        rc = FAB__PTX_E_NOMEM;
        goto out;
    }
    c->nx = f->ninsns;
    for (uint32_t i = 0; i < f->ninsns; i++) {
        const fab__ptx_insn_t *in = &f->insns[i];
        fab__ptx_x_t *x = &c->x[i];
        dc.in = in;
        x->op = in->op;
        x->line = in->line;
        x->guard = FAB__PTX_NONE;
        x->reconv = FAB__PTX_NONE;
        for (int k = 0; k < 4; k++)
            x->d[k] = c->nregs, x->s[k] = zero;
        x->addr = zero;
        if (!fab__ptx_op_runs(in->op)) {
            rc = fab__ptx_dc_fail(&dc, FAB__PTX_E_UNSUPPORTED, "the engine does not run %s yet",
                                  fab__ptx_op_name(in->op));
            goto out;
        }
        if (in->first + in->nops > f->npool) {
            rc = fab__ptx_dc_fail(&dc, FAB__PTX_E_UNSUPPORTED, "operands out of range");
            goto out;
        }
        if (in->guard != FAB__PTX_NONE) {
            fab__ptx_operand_t g = {.kind = FAB__PTX_OPD_REG, .reg = in->guard};
            if ((rc = fab__ptx_dc_src(&dc, &g, FAB__PTX_T_PRED, &x->guard)))
                goto out;
            x->gneg = in->guard_neg;
        }
        if ((rc = fab__ptx_decode_insn(&dc, in, x)))
            goto out;
    }
    dc.in = NULL;
    for (uint32_t i = 0; i < c->nx; i++)
        if (c->x[i].op == FAB__PTX_OP_BRA && c->x[i].target > c->nx) {
            rc = fab__ptx_dc_fail(&dc, FAB__PTX_E_UNSUPPORTED, "a branch target out of range");
            goto out;
        }
    if ((rc = fab__ptx_dc_reconv(c)) || (rc = fab__ptx_dc_slots(c, f)))
        goto out;
    c->nslots = c->nregs + 1 + c->nconsts;
    c->decoded = true;
out:
    free(dc.hash);
    free(dc.hi);
    return rc;
}
