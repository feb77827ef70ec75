/* What each opcode takes: one instruction as parsed (module.h) -> its
 * decoded form (engine.h), with every type, modifier and operand checked
 * against the subset the interpreter runs. A word an opcode does not give a
 * meaning to here is refused (FAB__PTX_E_UNSUPPORTED names it), so that no
 * instruction runs with a modifier silently dropped; the ones that change
 * nothing on a CPU (cache operators, eviction hints, .aligned, .uni) are
 * accepted and dropped on purpose. */
#include <string.h>

#include "src/ptx/decode.h"

#define T_(x) FAB__PTX_T_##x
#define W_(x) FAB__PTX_W_##x
#define OP_(x) FAB__PTX_OP_##x

static bool fab__ptx_cache_word(unsigned w)
{
    switch (w) {
    case W_(CA): case W_(CG): case W_(CS): case W_(LU): case W_(CV): case W_(WB): case W_(WT): case W_(NC):
    case W_(L1_EVICT_NORMAL): case W_(L1_EVICT_UNCHANGED): case W_(L1_EVICT_FIRST): case W_(L1_EVICT_LAST):
    case W_(L1_NO_ALLOCATE): case W_(L2_EVICT_NORMAL): case W_(L2_EVICT_FIRST): case W_(L2_EVICT_LAST):
    case W_(L2_64B): case W_(L2_128B): case W_(L2_256B): case W_(L1): case W_(L2):
        return true;
    default:
        return false;
    }
}

static bool fab__ptx_rnd_word(unsigned w)
{
    return w == W_(RN) || w == W_(RZ) || w == W_(RM) || w == W_(RP) || w == W_(RNI) || w == W_(RZI) ||
           w == W_(RMI) || w == W_(RPI) || w == W_(RNA);
}

static bool fab__ptx_cmp_word(unsigned w)
{
    switch (w) {
    case W_(EQ): case W_(NE): case W_(LT): case W_(LE): case W_(GT): case W_(GE): case W_(LO): case W_(LS):
    case W_(HI): case W_(HS): case W_(EQU): case W_(NEU): case W_(LTU): case W_(LEU): case W_(GTU):
    case W_(GEU): case W_(NUM): case W_(NAN):
        return true;
    default:
        return false;
    }
}

static int fab__ptx_bad_word(fab__ptx_dc_t *dc, unsigned w)
{
    return fab__ptx_dc_fail(dc, FAB__PTX_E_UNSUPPORTED, "the modifier %s is not supported here",
                            fab__ptx_word_name(w));
}

static int fab__ptx_bad_type(fab__ptx_dc_t *dc, unsigned t)
{
    return fab__ptx_dc_fail(dc, FAB__PTX_E_UNSUPPORTED, "the type %s is not supported here",
                            t ? fab__ptx_type_name(t) : "(none)");
}

/* Memory-model words: semantics and scope (every scope is run as .sys). */
static bool fab__ptx_sem_word(unsigned w, fab__ptx_x_t *x)
{
    switch (w) {
    case W_(WEAK): x->sem = FAB__PTX_SEM_PLAIN; return true;
    case W_(VOLATILE): x->sem = FAB__PTX_SEM_VOLATILE; return true;
    case W_(RELAXED): x->sem = FAB__PTX_SEM_RELAXED; return true;
    case W_(ACQUIRE): x->sem = FAB__PTX_SEM_ACQUIRE; return true;
    case W_(RELEASE): x->sem = FAB__PTX_SEM_RELEASE; return true;
    case W_(ACQ_REL): x->sem = FAB__PTX_SEM_ACQREL; return true;
    case W_(MMIO): x->sem = FAB__PTX_SEM_VOLATILE; return true;
    case W_(CTA): case W_(CLUSTER): case W_(GPU): case W_(SYS): case W_(GL):
        return true;
    default:
        return false;
    }
}

static bool fab__ptx_int_arith(unsigned t)
{
    unsigned b = fab__ptx_type_bits(t);
    return fab__ptx_is_int(t) && b >= 16 && b <= 64;
}

static bool fab__ptx_float_arith(unsigned t)
{
    return fab__ptx_is_float(t);
}

/* Read operands o[first .. first + nd + ns): nd destinations of type dt,
 * then ns sources of type st (T_NONE: each source's own type is t). */
static int fab__ptx_plain_ops(fab__ptx_dc_t *dc, const fab__ptx_insn_t *in, fab__ptx_x_t *x, unsigned nd,
                              unsigned ns, unsigned dt, const unsigned *st)
{
    const fab__ptx_operand_t *o = &dc->f->pool[in->first];
    if (in->nops != nd + ns)
        return fab__ptx_dc_fail(dc, FAB__PTX_E_UNSUPPORTED, "%u operands where %u are taken", in->nops, nd + ns);
    int rc;
    for (unsigned i = 0; i < nd; i++)
        if ((rc = fab__ptx_dc_dst(dc, &o[i], dt, &x->d[i])))
            return rc;
    for (unsigned i = 0; i < ns; i++)
        if ((rc = fab__ptx_dc_src(dc, &o[nd + i], st[i], &x->s[i])))
            return rc;
    return 0;
}

static int fab__ptx_ops_same(fab__ptx_dc_t *dc, const fab__ptx_insn_t *in, fab__ptx_x_t *x, unsigned nd,
                             unsigned ns, unsigned dt, unsigned t)
{
    unsigned st[4] = {t, t, t, t};
    return fab__ptx_plain_ops(dc, in, x, nd, ns, dt, st);
}

/* Words of the arithmetic, logic and comparison instructions. */
static int fab__ptx_alu_words(fab__ptx_dc_t *dc, const fab__ptx_insn_t *in, fab__ptx_x_t *x)
{
    bool cmp = in->op == OP_(SETP) || in->op == OP_(SET);
    for (unsigned i = 0; i < in->nwords; i++) {
        unsigned w = in->words[i];
        if (cmp && fab__ptx_cmp_word(w) && !x->k) {
            x->k = (uint8_t)w;
            continue;
        }
        if (cmp && (w == W_(AND) || w == W_(OR) || w == W_(XOR))) {
            x->k2 = (uint8_t)w;
            continue;
        }
        if (fab__ptx_rnd_word(w)) {
            x->rnd = (uint8_t)w;
            continue;
        }
        switch (w) {
        case W_(FTZ): x->f |= FAB__PTX_XF_FTZ; break;
        case W_(SAT): case W_(SATFINITE): x->f |= FAB__PTX_XF_SAT; break;
        case W_(APPROX): x->f |= FAB__PTX_XF_APPROX; break;
        case W_(FULL): x->f |= FAB__PTX_XF_APPROX; break;
        case W_(NAN_): x->f |= FAB__PTX_XF_NAN; break;
        case W_(RELU): x->f |= FAB__PTX_XF_RELU; break;
        case W_(S16X2): case W_(U16X2): /* the packed type, a word: t2 its half's type */
            if (x->t2 || (in->op != OP_(ADD) && in->op != OP_(SUB) && in->op != OP_(MIN) && in->op != OP_(MAX)))
                return fab__ptx_bad_word(dc, w);
            x->t2 = w == W_(S16X2) ? T_(S16) : T_(U16);
            break;
        case W_(LO): if (cmp) return fab__ptx_bad_word(dc, w); break;
        case W_(HI): x->f |= FAB__PTX_XF_HI; break;
        case W_(WIDE): x->f |= FAB__PTX_XF_WIDE; break;
        case W_(CC): x->k2 = 1; break;
        case W_(SHIFTAMT): x->k = 1; break;
        case W_(CLAMP): x->k |= 1; break;
        case W_(WRAP): break;
        case W_(L): break;
        case W_(R): x->k |= 2; break;
        case W_(F4E): case W_(B4E): case W_(RC8): case W_(ECL): case W_(ECR): case W_(RC16):
            x->k = (uint8_t)w;
            break;
        case W_(FINITE): case W_(INFINITE): case W_(NUMBER): case W_(NOTANUMBER): case W_(NORMAL):
        case W_(SUBNORMAL):
            x->k = (uint8_t)w;
            break;
        default:
            return fab__ptx_bad_word(dc, w);
        }
    }
    return 0;
}

static int fab__ptx_dc_alu(fab__ptx_dc_t *dc, const fab__ptx_insn_t *in, fab__ptx_x_t *x)
{
    int rc = fab__ptx_alu_words(dc, in, x);
    if (rc)
        return rc;
    unsigned t = in->ntypes ? in->types[0] : T_(NONE);
    x->t = (uint8_t)t;
    bool fl = fab__ptx_float_arith(t), it = fab__ptx_int_arith(t);
    bool minmax = in->op == OP_(MIN) || in->op == OP_(MAX);
    if (x->t2) { /* add, sub, min, max .s16x2/.u16x2 d, a, b: .b32 operands; .relu on min, max .s16x2 */
        if (in->ntypes)
            return fab__ptx_bad_type(dc, t);
        bool relu = x->f & FAB__PTX_XF_RELU;
        if ((x->f & ~FAB__PTX_XF_RELU) || x->k || x->k2 || x->rnd || (relu && (!minmax || x->t2 != T_(S16))))
            return fab__ptx_dc_fail(dc, FAB__PTX_E_UNSUPPORTED,
                                    "the .s16x2/.u16x2 forms take no modifier but .relu, on min and max .s16x2");
        x->t = T_(B32);
        return fab__ptx_ops_same(dc, in, x, 1, 2, T_(B32), T_(B32));
    }
    if ((x->f & FAB__PTX_XF_RELU) && it && !(minmax && t == T_(S32))) /* integer .relu: min, max .s32 only */
        return fab__ptx_bad_word(dc, W_(RELU));
    unsigned wide = (x->f & FAB__PTX_XF_WIDE) ? t + 1 : t; /* U16 -> U32 ... */
    switch (in->op) {
    case OP_(ADD): case OP_(SUB):
        if (!fl && !it)
            return fab__ptx_bad_type(dc, t);
        return fab__ptx_ops_same(dc, in, x, 1, 2, t, t);
    case OP_(MUL): case OP_(MAD):
        if (!fl && !it)
            return fab__ptx_bad_type(dc, t);
        if ((x->f & FAB__PTX_XF_WIDE) && (fab__ptx_type_bits(t) > 32 || fl))
            return fab__ptx_bad_word(dc, W_(WIDE));
        if (fl && in->op == OP_(MAD) && !x->rnd && t != T_(F32))
            x->rnd = W_(RN);
        if (in->op == OP_(MUL))
            return fab__ptx_ops_same(dc, in, x, 1, 2, wide, t);
        {
            unsigned st[3] = {t, t, wide};
            return fab__ptx_plain_ops(dc, in, x, 1, 3, wide, st);
        }
    case OP_(FMA):
        if (!fl)
            return fab__ptx_bad_type(dc, t);
        return fab__ptx_ops_same(dc, in, x, 1, 3, t, t);
    case OP_(MUL24): case OP_(MAD24):
        if (t != T_(U32) && t != T_(S32))
            return fab__ptx_bad_type(dc, t);
        return fab__ptx_ops_same(dc, in, x, 1, in->op == OP_(MUL24) ? 2 : 3, t, t);
    case OP_(SAD):
        if (!it)
            return fab__ptx_bad_type(dc, t);
        return fab__ptx_ops_same(dc, in, x, 1, 3, t, t);
    case OP_(DIV):
        if (!fl && !it)
            return fab__ptx_bad_type(dc, t);
        return fab__ptx_ops_same(dc, in, x, 1, 2, t, t);
    case OP_(REM):
        if (!it)
            return fab__ptx_bad_type(dc, t);
        return fab__ptx_ops_same(dc, in, x, 1, 2, t, t);
    case OP_(ABS): case OP_(NEG):
        if (!fl && !(it && (fab__ptx_is_sint(t) || in->op == OP_(NEG))))
            return fab__ptx_bad_type(dc, t);
        return fab__ptx_ops_same(dc, in, x, 1, 1, t, t);
    case OP_(MIN): case OP_(MAX):
        if (!fl && !it)
            return fab__ptx_bad_type(dc, t);
        return fab__ptx_ops_same(dc, in, x, 1, 2, t, t);
    case OP_(COPYSIGN):
        if (t != T_(F32) && t != T_(F64))
            return fab__ptx_bad_type(dc, t);
        return fab__ptx_ops_same(dc, in, x, 1, 2, t, t);
    case OP_(RCP): case OP_(SQRT): case OP_(RSQRT): case OP_(SIN): case OP_(COS): case OP_(LG2): case OP_(EX2):
    case OP_(TANH):
        if (t != T_(F32) && t != T_(F64) && !((in->op == OP_(EX2) || in->op == OP_(TANH)) && fl))
            return fab__ptx_bad_type(dc, t);
        return fab__ptx_ops_same(dc, in, x, 1, 1, t, t);
    case OP_(TESTP):
        if (t != T_(F32) && t != T_(F64))
            return fab__ptx_bad_type(dc, t);
        if (!x->k)
            return fab__ptx_dc_fail(dc, FAB__PTX_E_UNSUPPORTED, "testp without a test");
        return fab__ptx_ops_same(dc, in, x, 1, 1, T_(PRED), t);
    case OP_(POPC): case OP_(CLZ): case OP_(BFIND): case OP_(BREV):
        if (!it || fab__ptx_type_bits(t) < 32)
            return fab__ptx_bad_type(dc, t);
        return fab__ptx_ops_same(dc, in, x, 1, 1, in->op == OP_(BREV) ? t : T_(U32), t);
    case OP_(BFE): {
        if (!it || fab__ptx_type_bits(t) < 32)
            return fab__ptx_bad_type(dc, t);
        unsigned st[3] = {t, T_(U32), T_(U32)};
        return fab__ptx_plain_ops(dc, in, x, 1, 3, t, st);
    }
    case OP_(BFI): {
        if (!it || fab__ptx_type_bits(t) < 32)
            return fab__ptx_bad_type(dc, t);
        unsigned st[4] = {t, t, T_(U32), T_(U32)};
        return fab__ptx_plain_ops(dc, in, x, 1, 4, t, st);
    }
    case OP_(BMSK): case OP_(SZEXT):
        if (t != T_(B32) && t != T_(U32) && t != T_(S32))
            return fab__ptx_bad_type(dc, t);
        return fab__ptx_ops_same(dc, in, x, 1, 2, t, T_(U32));
    case OP_(DP4A): case OP_(DP2A): {
        if (in->ntypes != 2)
            return fab__ptx_bad_type(dc, T_(NONE));
        x->t2 = in->types[1];
        unsigned dt = fab__ptx_is_sint(t) || fab__ptx_is_sint(x->t2) ? T_(S32) : T_(U32);
        unsigned st[3] = {T_(U32), T_(U32), dt};
        return fab__ptx_plain_ops(dc, in, x, 1, 3, dt, st);
    }
    case OP_(ADD_CC): case OP_(ADDC): case OP_(SUB_CC): case OP_(SUBC):
        if (t != T_(U32) && t != T_(S32) && t != T_(U64) && t != T_(S64) && t != T_(B32) && t != T_(B64))
            return fab__ptx_bad_type(dc, t);
        if (in->op == OP_(ADD_CC) || in->op == OP_(SUB_CC))
            x->k2 = 1;
        return fab__ptx_ops_same(dc, in, x, 1, 2, t, t);
    case OP_(MAD_CC): case OP_(MADC):
        if (t != T_(U32) && t != T_(S32) && t != T_(U64) && t != T_(S64))
            return fab__ptx_bad_type(dc, t);
        if (in->op == OP_(MAD_CC))
            x->k2 = 1;
        return fab__ptx_ops_same(dc, in, x, 1, 3, t, t);
    case OP_(AND): case OP_(OR): case OP_(XOR):
        if (!(it || t == T_(PRED)))
            return fab__ptx_bad_type(dc, t);
        return fab__ptx_ops_same(dc, in, x, 1, 2, t, t);
    case OP_(NOT): case OP_(CNOT):
        if (!(it || (t == T_(PRED) && in->op == OP_(NOT))))
            return fab__ptx_bad_type(dc, t);
        return fab__ptx_ops_same(dc, in, x, 1, 1, t, t);
    case OP_(LOP3): {
        if (t != T_(B32) && t != T_(B64))
            return fab__ptx_bad_type(dc, t);
        return fab__ptx_ops_same(dc, in, x, 1, 4, t, t);
    }
    case OP_(SHF): {
        if (t != T_(B32))
            return fab__ptx_bad_type(dc, t);
        unsigned st[3] = {t, t, T_(U32)};
        return fab__ptx_plain_ops(dc, in, x, 1, 3, t, st);
    }
    case OP_(SHL): case OP_(SHR): {
        if (!it)
            return fab__ptx_bad_type(dc, t);
        unsigned st[2] = {t, T_(U32)};
        return fab__ptx_plain_ops(dc, in, x, 1, 2, t, st);
    }
    case OP_(PRMT): {
        if (t != T_(B32))
            return fab__ptx_bad_type(dc, t);
        return fab__ptx_ops_same(dc, in, x, 1, 3, t, t);
    }
    case OP_(SELP): {
        if (!(it || fl))
            return fab__ptx_bad_type(dc, t);
        unsigned st[3] = {t, t, T_(PRED)};
        return fab__ptx_plain_ops(dc, in, x, 1, 3, t, st);
    }
    case OP_(SLCT): {
        if (in->ntypes != 2 || !(it || t == T_(F32) || t == T_(F64)))
            return fab__ptx_bad_type(dc, t);
        x->t2 = in->types[1];
        if (x->t2 != T_(S32) && x->t2 != T_(F32))
            return fab__ptx_bad_type(dc, x->t2);
        unsigned st[3] = {t, t, x->t2};
        return fab__ptx_plain_ops(dc, in, x, 1, 3, t, st);
    }
    default:
        return fab__ptx_dc_fail(dc, FAB__PTX_E_UNSUPPORTED, "no decoder");
    }
}

/* setp.cmp[.bool].t p[|q], a, b[, {!}c]; set.cmp[.bool].dt.st d, a, b[, {!}c] */
static int fab__ptx_dc_cmp(fab__ptx_dc_t *dc, const fab__ptx_insn_t *in, fab__ptx_x_t *x)
{
    int rc = fab__ptx_alu_words(dc, in, x);
    if (rc)
        return rc;
    bool set = in->op == OP_(SET);
    if (in->ntypes != (set ? 2 : 1))
        return fab__ptx_bad_type(dc, T_(NONE));
    unsigned st = in->types[set ? 1 : 0];
    x->t = (uint8_t)st;
    if (set)
        x->t2 = in->types[0];
    if (!x->k)
        return fab__ptx_dc_fail(dc, FAB__PTX_E_UNSUPPORTED, "a comparison without its operator");
    if (!fab__ptx_int_arith(st) && !fab__ptx_float_arith(st) && fab__ptx_type_bits(st) != 8 && st != T_(PRED))
        return fab__ptx_bad_type(dc, st);
    if (st == T_(F16X2) || st == T_(BF16X2))
        return fab__ptx_bad_type(dc, st);
    const fab__ptx_operand_t *o = &dc->f->pool[in->first];
    unsigned n = in->nops, want = x->k2 ? 4 : 3;
    if (n != want)
        return fab__ptx_dc_fail(dc, FAB__PTX_E_UNSUPPORTED, "%u operands where %u are taken", n, want);
    x->d[1] = FAB__PTX_NONE;
    if (set) {
        if ((rc = fab__ptx_dc_dst(dc, &o[0], x->t2, &x->d[0])))
            return rc;
    } else {
        if ((rc = fab__ptx_dc_dst(dc, &o[0], T_(PRED), &x->d[0])))
            return rc;
        if (o[0].kind == FAB__PTX_OPD_PAIR) {
            fab__ptx_operand_t q = {.kind = FAB__PTX_OPD_REG, .reg = o[0].reg2};
            if ((rc = fab__ptx_dc_dst(dc, &q, T_(PRED), &x->d[1])))
                return rc;
        }
    }
    if ((rc = fab__ptx_dc_src(dc, &o[1], st, &x->s[0])) || (rc = fab__ptx_dc_src(dc, &o[2], st, &x->s[1])))
        return rc;
    if (x->k2) {
        fab__ptx_operand_t c = o[3];
        x->aux = c.neg;
        c.neg = false;
        if ((rc = fab__ptx_dc_src(dc, &c, T_(PRED), &x->s[2])))
            return rc;
    }
    return 0;
}

/* mov: a value, a fixed or a clock special register, a pack or an unpack. */
static int fab__ptx_dc_mov(fab__ptx_dc_t *dc, const fab__ptx_insn_t *in, fab__ptx_x_t *x)
{
    if (in->nwords)
        return fab__ptx_bad_word(dc, in->words[0]);
    if (in->ntypes != 1 || in->nops != 2)
        return fab__ptx_dc_fail(dc, FAB__PTX_E_UNSUPPORTED, "mov takes one type and two operands");
    unsigned t = in->types[0];
    x->t = (uint8_t)t;
    if (!fab__ptx_type_bits(t))
        return fab__ptx_bad_type(dc, t);
    if (t == T_(B128))
        return fab__ptx_dc_mov128(dc, in, x);
    const fab__ptx_operand_t *o = &dc->f->pool[in->first];
    const fab__ptx_operand_t *pool = dc->f->pool;
    int rc;
    if (o[0].kind == FAB__PTX_OPD_VEC || o[1].kind == FAB__PTX_OPD_VEC) {
        bool pack = o[1].kind == FAB__PTX_OPD_VEC;
        const fab__ptx_operand_t *v = pack ? &o[1] : &o[0];
        if (v->elems != 2 && v->elems != 4)
            return fab__ptx_dc_fail(dc, FAB__PTX_E_UNSUPPORTED, "a vector of %u", v->elems);
        if (v->first + v->elems > dc->f->npool)
            return fab__ptx_dc_fail(dc, FAB__PTX_E_UNSUPPORTED, "operands out of range");
        x->k = pack ? 2 : 3;
        x->vec = (uint8_t)v->elems;
        unsigned et = fab__ptx_type_bits(t) / v->elems == 8 ? T_(B8) : fab__ptx_type_bits(t) / v->elems == 16 ? T_(B16) : T_(B32);
        for (unsigned i = 0; i < v->elems; i++) {
            if (pack)
                rc = fab__ptx_dc_src(dc, &pool[v->first + i], et, &x->s[i]);
            else
                rc = fab__ptx_dc_dst(dc, &pool[v->first + i], et, &x->d[i]);
            if (rc)
                return rc;
        }
        if (pack)
            return fab__ptx_dc_dst(dc, &o[0], t, &x->d[0]);
        return fab__ptx_dc_src(dc, &o[1], t, &x->s[0]);
    }
    if ((rc = fab__ptx_dc_dst(dc, &o[0], t, &x->d[0])))
        return rc;
    if (o[1].kind == FAB__PTX_OPD_SREG) {
        switch (o[1].sreg) {
        case FAB__PTX_SR_CLOCK: case FAB__PTX_SR_CLOCK_HI: case FAB__PTX_SR_CLOCK64:
        case FAB__PTX_SR_GLOBALTIMER: case FAB__PTX_SR_GLOBALTIMER_LO: case FAB__PTX_SR_GLOBALTIMER_HI:
            x->k = 1;
            x->aux = o[1].sreg;
            return 0;
        case FAB__PTX_SR_PM: case FAB__PTX_SR_PM64:
            x->k = 1;
            x->aux = FAB__PTX_SR_PM;
            return 0;
        default:
            break;
        }
    }
    return fab__ptx_dc_src(dc, &o[1], t, &x->s[0]);
}

static int fab__ptx_dc_cvt(fab__ptx_dc_t *dc, const fab__ptx_insn_t *in, fab__ptx_x_t *x)
{
    int rc = fab__ptx_alu_words(dc, in, x);
    if (rc)
        return rc;
    if (in->ntypes != 2)
        return fab__ptx_bad_type(dc, T_(NONE));
    unsigned dt = in->types[0], st = in->types[1];
    x->t = (uint8_t)dt;
    x->t2 = (uint8_t)st;
    if ((dt == T_(F16X2) || dt == T_(BF16X2)) && st == T_(F32)) {
        /* cvt.rn.f16x2.f32 d, a, b: a to the upper half, b to the lower */
        unsigned sts[2] = {st, st};
        if (!x->rnd)
            x->rnd = W_(RN);
        return fab__ptx_plain_ops(dc, in, x, 1, 2, T_(B32), sts);
    }
    bool d8 = dt == T_(E4M3X2) || dt == T_(E5M2X2), s8 = st == T_(E4M3X2) || st == T_(E5M2X2);
    if (s8 && dt == T_(F16X2)) {
        /* cvt.rn.f16x2.e4m3x2 d, a: each byte of a to the half of d in its place */
        unsigned sts[1] = {T_(B16)};
        return fab__ptx_plain_ops(dc, in, x, 1, 1, T_(B32), sts);
    }
    if (d8 && (st == T_(F16X2) || st == T_(F32))) {
        /* cvt.rn.satfinite.e4m3x2.f16x2 d, a (half i to byte i); .f32 d, a, b (a to the upper) */
        if (!(x->f & FAB__PTX_XF_SAT))
            return fab__ptx_dc_fail(dc, FAB__PTX_E_UNSUPPORTED, "a conversion to fp8 without .satfinite");
        unsigned sts[2] = {st == T_(F32) ? st : T_(B32), st};
        return fab__ptx_plain_ops(dc, in, x, 1, st == T_(F32) ? 2 : 1, T_(B16), sts);
    }
    bool dok = fab__ptx_is_int(dt) || dt == T_(F16) || dt == T_(BF16) || dt == T_(F32) || dt == T_(F64);
    bool sok = fab__ptx_is_int(st) || st == T_(F16) || st == T_(BF16) || st == T_(F32) || st == T_(F64);
    if (!dok)
        return fab__ptx_bad_type(dc, dt);
    if (!sok)
        return fab__ptx_bad_type(dc, st);
    unsigned sts[1] = {st};
    return fab__ptx_plain_ops(dc, in, x, 1, 1, dt, sts);
}

/* ---- memory --------------------------------------------------------------------- */

static int fab__ptx_dc_ldst(fab__ptx_dc_t *dc, const fab__ptx_insn_t *in, fab__ptx_x_t *x)
{
    bool st = in->op == OP_(ST);
    for (unsigned i = 0; i < in->nwords; i++) {
        unsigned w = in->words[i];
        if (fab__ptx_cache_word(w) || fab__ptx_sem_word(w, x) || w == W_(L2_CACHE_HINT))
            continue;
        return fab__ptx_bad_word(dc, w);
    }
    if (in->ntypes != 1)
        return fab__ptx_bad_type(dc, T_(NONE));
    unsigned t = in->types[0];
    x->t = (uint8_t)t;
    x->size = (uint8_t)fab__ptx_xtype_size(t);
    x->vec = in->vec ? in->vec : 1;
    if (t == T_(PRED) || !x->size)
        return fab__ptx_bad_type(dc, t);
    if (t == T_(B128) && x->vec > 1)
        return fab__ptx_dc_fail(dc, FAB__PTX_E_UNSUPPORTED, "a vector of .b128 (an access over 16 bytes)");
    if (x->vec > 4)
        return fab__ptx_dc_fail(dc, FAB__PTX_E_UNSUPPORTED, "a vector of %u (at most 4)", x->vec);
    if (x->size * x->vec > 16)
        return fab__ptx_dc_fail(dc, FAB__PTX_E_UNSUPPORTED, "an access over 16 bytes");
    if ((x->sem == FAB__PTX_SEM_ACQUIRE && st) || (x->sem == FAB__PTX_SEM_RELEASE && !st) ||
        x->sem == FAB__PTX_SEM_ACQREL)
        return fab__ptx_dc_fail(dc, FAB__PTX_E_UNSUPPORTED, "that ordering on a %s", st ? "store" : "load");
    /* operands: ld d, [a] (+ a cache policy); st [a], v (+ policy) */
    const fab__ptx_operand_t *o = &dc->f->pool[in->first];
    if (in->nops < 2 || in->nops > 3)
        return fab__ptx_dc_fail(dc, FAB__PTX_E_UNSUPPORTED, "%u operands", in->nops);
    const fab__ptx_operand_t *val = st ? &o[1] : &o[0], *adr = st ? &o[0] : &o[1];
    int rc = fab__ptx_dc_addr(dc, adr, in->space, x);
    if (rc)
        return rc;
    if (x->space == FAB__PTX_XS_KPARAM && st)
        return fab__ptx_dc_fail(dc, FAB__PTX_E_UNSUPPORTED, "a store to a kernel parameter");
    /* an address in a constant slot is the same in every lane (unless .local) */
    if (!st && x->addr > dc->c->nregs && x->space != FAB__PTX_XS_LOCAL)
        x->k = 1;
    unsigned et = t;
    if (x->vec == 1) {
        if (val->kind == FAB__PTX_OPD_VEC && val->elems == 1 && val->first < dc->f->npool)
            val = &dc->f->pool[val->first]; /* {%r}: ptxas takes one register in braces */
        if (val->kind == FAB__PTX_OPD_VEC)
            return fab__ptx_dc_fail(dc, FAB__PTX_E_UNSUPPORTED, "a vector operand without .v2/.v4");
        if (t == T_(B128)) /* the two halves: s[0], s[1] or d[0], d[1] (wide.c) */
            return st ? fab__ptx_dc_src128(dc, val, &x->s[0], &x->s[1])
                      : fab__ptx_dc_dst128(dc, val, &x->d[0], &x->d[1]);
        return st ? fab__ptx_dc_src(dc, val, et, &x->s[0]) : fab__ptx_dc_dst(dc, val, et, &x->d[0]);
    }
    if (val->kind != FAB__PTX_OPD_VEC || val->elems != x->vec || val->first + val->elems > dc->f->npool)
        return fab__ptx_dc_fail(dc, FAB__PTX_E_UNSUPPORTED, "a .v%u access needs %u registers", x->vec, x->vec);
    for (unsigned i = 0; i < x->vec; i++) {
        const fab__ptx_operand_t *e = &dc->f->pool[val->first + i];
        rc = st ? fab__ptx_dc_src(dc, e, et, &x->s[i]) : fab__ptx_dc_dst(dc, e, et, &x->d[i]);
        if (rc)
            return rc;
    }
    return 0;
}

static int fab__ptx_dc_atom(fab__ptx_dc_t *dc, const fab__ptx_insn_t *in, fab__ptx_x_t *x)
{
    bool red = in->op == OP_(RED);
    x->sem = FAB__PTX_SEM_ACQREL;
    for (unsigned i = 0; i < in->nwords; i++) {
        unsigned w = in->words[i];
        if (fab__ptx_cache_word(w) || fab__ptx_sem_word(w, x) || w == W_(L2_CACHE_HINT) || w == W_(NOFTZ))
            continue;
        switch (w) {
        case W_(AND): case W_(OR): case W_(XOR): case W_(ADD): case W_(MIN): case W_(MAX): case W_(INC):
        case W_(DEC): case W_(EXCH): case W_(CAS):
            if (x->k)
                return fab__ptx_bad_word(dc, w);
            x->k = (uint8_t)w;
            continue;
        default:
            return fab__ptx_bad_word(dc, w);
        }
    }
    if (!x->k)
        return fab__ptx_dc_fail(dc, FAB__PTX_E_UNSUPPORTED, "an atomic without its operation");
    if (red && (x->k == W_(EXCH) || x->k == W_(CAS)))
        return fab__ptx_bad_word(dc, x->k);
    if (in->ntypes != 1 || in->vec > 1)
        return fab__ptx_bad_type(dc, in->ntypes ? in->types[0] : T_(NONE));
    unsigned t = in->types[0];
    x->t = (uint8_t)t;
    x->size = (uint8_t)fab__ptx_xtype_size(t);
    bool ok;
    switch (x->k) {
    case W_(AND): case W_(OR): case W_(XOR):
        ok = t == T_(B32) || t == T_(B64);
        break;
    case W_(EXCH): case W_(CAS):
        ok = t == T_(B32) || t == T_(B64) || t == T_(U32) || t == T_(U64) || t == T_(S32) || t == T_(S64) ||
             (x->k == W_(CAS) && t == T_(B16)) || t == T_(F32) || t == T_(B128);
        break;
    case W_(ADD):
        ok = t == T_(U32) || t == T_(S32) || t == T_(U64) || t == T_(S64) || t == T_(F32) || t == T_(F64) ||
             t == T_(F16) || t == T_(F16X2) || t == T_(BF16) || t == T_(BF16X2);
        break;
    case W_(INC): case W_(DEC):
        ok = t == T_(U32);
        break;
    default: /* min, max */
        ok = t == T_(U32) || t == T_(S32) || t == T_(U64) || t == T_(S64);
        break;
    }
    if (!ok)
        return fab__ptx_bad_type(dc, t);
    const fab__ptx_operand_t *o = &dc->f->pool[in->first];
    unsigned nsrc = x->k == W_(CAS) ? 2 : 1, nd = red ? 0 : 1;
    if (in->nops != nd + 1 + nsrc && in->nops != nd + 2 + nsrc)
        return fab__ptx_dc_fail(dc, FAB__PTX_E_UNSUPPORTED, "%u operands", in->nops);
    int rc;
    if (in->space != FAB__PTX_S_GENERIC && in->space != FAB__PTX_S_GLOBAL && in->space != FAB__PTX_S_SHARED &&
        in->space != FAB__PTX_S_SHARED_CLUSTER)
        return fab__ptx_dc_fail(dc, FAB__PTX_E_UNSUPPORTED, "an atomic in %s", fab__ptx_space_name(in->space));
    if (t == T_(B128))
        return fab__ptx_dc_atom128(dc, in, x, nsrc);
    if (!red && (rc = fab__ptx_dc_dst(dc, &o[0], t, &x->d[0])))
        return rc;
    if (red)
        x->d[0] = dc->c->nregs;
    if ((rc = fab__ptx_dc_addr(dc, &o[nd], in->space, x)))
        return rc;
    for (unsigned i = 0; i < nsrc; i++)
        if ((rc = fab__ptx_dc_src(dc, &o[nd + 1 + i], t, &x->s[i])))
            return rc;
    return 0;
}

static int fab__ptx_dc_cvta(fab__ptx_dc_t *dc, const fab__ptx_insn_t *in, fab__ptx_x_t *x)
{
    for (unsigned i = 0; i < in->nwords; i++) {
        if (in->words[i] == W_(TO))
            x->k = 1;
        else
            return fab__ptx_bad_word(dc, in->words[i]);
    }
    unsigned t = in->ntypes == 1 ? in->types[0] : T_(NONE);
    if (t != T_(U32) && t != T_(U64))
        return fab__ptx_bad_type(dc, t);
    x->t = (uint8_t)t;
    switch (in->space) {
    case FAB__PTX_S_GLOBAL: case FAB__PTX_S_CONST: x->space = FAB__PTX_XS_GENERIC; break;
    case FAB__PTX_S_SHARED: x->space = FAB__PTX_XS_SHARED; break;
    case FAB__PTX_S_LOCAL: x->space = FAB__PTX_XS_LOCAL; break;
    case FAB__PTX_S_PARAM: x->space = dc->f->entry ? FAB__PTX_XS_KPARAM : FAB__PTX_XS_LOCAL; break;
    default:
        return fab__ptx_dc_fail(dc, FAB__PTX_E_UNSUPPORTED, "cvta for %s", fab__ptx_space_name(in->space));
    }
    return fab__ptx_ops_same(dc, in, x, 1, 1, t, t);
}

static int fab__ptx_dc_isspacep(fab__ptx_dc_t *dc, const fab__ptx_insn_t *in, fab__ptx_x_t *x)
{
    if (in->nwords)
        return fab__ptx_bad_word(dc, in->words[0]);
    switch (in->space) {
    case FAB__PTX_S_GLOBAL: case FAB__PTX_S_CONST: case FAB__PTX_S_SHARED: case FAB__PTX_S_LOCAL:
    case FAB__PTX_S_PARAM: case FAB__PTX_S_SHARED_CLUSTER:
        break;
    default:
        return fab__ptx_dc_fail(dc, FAB__PTX_E_UNSUPPORTED, "isspacep for %s", fab__ptx_space_name(in->space));
    }
    x->k = in->space;
    unsigned st[1] = {T_(U64)};
    return fab__ptx_plain_ops(dc, in, x, 1, 1, T_(PRED), st);
}


/* multimem.ld_reduce.op.t d, [a]; multimem.st.t [a], b; multimem.red.op.t [a], b (vectors too) */
static int fab__ptx_dc_multimem(fab__ptx_dc_t *dc, const fab__ptx_insn_t *in, fab__ptx_x_t *x)
{
    bool ld = in->op == OP_(MULTIMEM_LD_REDUCE), st = in->op == OP_(MULTIMEM_ST);
    for (unsigned i = 0; i < in->nwords; i++) {
        unsigned w = in->words[i];
        if (fab__ptx_sem_word(w, x))
            continue;
        if (!st && (w == W_(ADD) || w == W_(MIN) || w == W_(MAX) || w == W_(AND) || w == W_(OR) || w == W_(XOR)) &&
            !x->k) {
            x->k = (uint8_t)w;
            continue;
        }
        if (ld && w == W_(ACC_F32) && in->ntypes == 1 &&
            (in->types[0] == T_(F16X2) || in->types[0] == T_(BF16X2)))
            continue; /* the sum in float: the host's sum of pairs is (program.c) */
        return fab__ptx_bad_word(dc, w);
    }
    if (!st && !x->k)
        return fab__ptx_dc_fail(dc, FAB__PTX_E_UNSUPPORTED, "a reduction without its operation");
    if (in->ntypes != 1)
        return fab__ptx_bad_type(dc, T_(NONE));
    unsigned t = in->types[0];
    x->t = (uint8_t)t;
    x->size = (uint8_t)fab__ptx_xtype_size(t);
    x->vec = in->vec ? in->vec : 1;
    if (!x->size || t == T_(PRED) || t == T_(B128) || x->vec > 4 || x->size * x->vec > 16)
        return fab__ptx_bad_type(dc, t);
    if (in->space != FAB__PTX_S_GENERIC && in->space != FAB__PTX_S_GLOBAL)
        return fab__ptx_dc_fail(dc, FAB__PTX_E_UNSUPPORTED, "multimem on %s", fab__ptx_space_name(in->space));
    if (in->nops != 2)
        return fab__ptx_dc_fail(dc, FAB__PTX_E_UNSUPPORTED, "%u operands", in->nops);
    const fab__ptx_operand_t *o = &dc->f->pool[in->first];
    const fab__ptx_operand_t *val = ld ? &o[0] : &o[1];
    int rc = fab__ptx_dc_addr(dc, ld ? &o[1] : &o[0], in->space, x);
    if (rc)
        return rc;
    if (x->vec == 1)
        return ld ? fab__ptx_dc_dst(dc, val, t, &x->d[0]) : fab__ptx_dc_src(dc, val, t, &x->s[0]);
    if (val->kind != FAB__PTX_OPD_VEC || val->elems != x->vec || val->first + val->elems > dc->f->npool)
        return fab__ptx_dc_fail(dc, FAB__PTX_E_UNSUPPORTED, "a .v%u access needs %u registers", x->vec, x->vec);
    for (unsigned i = 0; i < x->vec; i++) {
        const fab__ptx_operand_t *e = &dc->f->pool[val->first + i];
        rc = ld ? fab__ptx_dc_dst(dc, e, t, &x->d[i]) : fab__ptx_dc_src(dc, e, t, &x->s[i]);
        if (rc)
            return rc;
    }
    return 0;
}

/* cp.async.ca/.cg.shared.global [dst], [src], cp-size[, src-size]: run at once */
static int fab__ptx_dc_cp_async(fab__ptx_dc_t *dc, const fab__ptx_insn_t *in, fab__ptx_x_t *x)
{
    if (in->op != OP_(CP_ASYNC)) {
        /* commit_group, wait_group, wait_all: every copy is done when it is issued */
        x->op = OP_(PMEVENT);
        return 0;
    }
    for (unsigned i = 0; i < in->nwords; i++)
        if (!fab__ptx_cache_word(in->words[i]) && in->words[i] != W_(L2_CACHE_HINT))
            return fab__ptx_bad_word(dc, in->words[i]);
    if ((in->space != FAB__PTX_S_SHARED && in->space != FAB__PTX_S_SHARED_CLUSTER) ||
        (in->space2 != FAB__PTX_S_GLOBAL && in->space2 != FAB__PTX_S_GENERIC))
        return fab__ptx_dc_fail(dc, FAB__PTX_E_UNSUPPORTED, "cp.async other than .shared.global");
    if (in->nops < 3 || in->nops > 5)
        return fab__ptx_dc_fail(dc, FAB__PTX_E_UNSUPPORTED, "%u operands", in->nops);
    const fab__ptx_operand_t *o = &dc->f->pool[in->first];
    int rc = fab__ptx_dc_addr(dc, &o[0], in->space, x);
    if (rc)
        return rc;
    fab__ptx_x_t src = *x;
    if ((rc = fab__ptx_dc_addr(dc, &o[1], FAB__PTX_S_GLOBAL, &src)))
        return rc;
    x->s[0] = src.addr;
    if ((rc = fab__ptx_dc_imm(dc, (uint64_t)src.off, &x->s[1])) || (rc = fab__ptx_dc_src(dc, &o[2], T_(U32), &x->s[2])))
        return rc;
    x->s[3] = x->s[2];
    if (in->nops >= 4) {
        /* a 32-bit src-size, unless the fourth operand is the 64-bit cache policy */
        const fab__ptx_operand_t *e = &o[3];
        bool size = e->kind == FAB__PTX_OPD_IMM ||
                    (e->kind == FAB__PTX_OPD_REG && e->reg < dc->f->nregs &&
                     fab__ptx_type_bits(dc->f->regs[e->reg].type) == 32);
        if (size && (rc = fab__ptx_dc_src(dc, e, T_(U32), &x->s[3])))
            return rc;
    }
    return 0;
}

/* ---- the rest ----------------------------------------------------------------------- */

int fab__ptx_dc_control(fab__ptx_dc_t *dc, const fab__ptx_insn_t *in, fab__ptx_x_t *x);
int fab__ptx_dc_mbarrier(fab__ptx_dc_t *dc, const fab__ptx_insn_t *in, fab__ptx_x_t *x);
int fab__ptx_dc_sync(fab__ptx_dc_t *dc, const fab__ptx_insn_t *in, fab__ptx_x_t *x);

int fab__ptx_decode_insn(fab__ptx_dc_t *dc, const fab__ptx_insn_t *in, fab__ptx_x_t *x)
{
    switch (in->op) {
    case OP_(SETP): case OP_(SET):
        return fab__ptx_dc_cmp(dc, in, x);
    case OP_(MOV):
        return fab__ptx_dc_mov(dc, in, x);
    case OP_(CVT):
        return fab__ptx_dc_cvt(dc, in, x);
    case OP_(LD): case OP_(LDU): case OP_(ST):
        x->op = in->op == OP_(LDU) ? OP_(LD) : in->op;
        return fab__ptx_dc_ldst(dc, in, x);
    case OP_(ATOM): case OP_(RED):
        return fab__ptx_dc_atom(dc, in, x);
    case OP_(CVTA):
        return fab__ptx_dc_cvta(dc, in, x);
    case OP_(ISSPACEP):
        return fab__ptx_dc_isspacep(dc, in, x);
    case OP_(MBARRIER_INIT): case OP_(MBARRIER_INVAL): case OP_(MBARRIER_ARRIVE): case OP_(MBARRIER_ARRIVE_DROP):
    case OP_(MBARRIER_TEST_WAIT): case OP_(MBARRIER_TRY_WAIT): case OP_(MBARRIER_PENDING_COUNT):
        return fab__ptx_dc_mbarrier(dc, in, x);
    case OP_(MULTIMEM_LD_REDUCE): case OP_(MULTIMEM_ST): case OP_(MULTIMEM_RED):
        return fab__ptx_dc_multimem(dc, in, x);
    case OP_(CP_ASYNC): case OP_(CP_ASYNC_COMMIT_GROUP): case OP_(CP_ASYNC_WAIT_GROUP): case OP_(CP_ASYNC_WAIT_ALL):
        return fab__ptx_dc_cp_async(dc, in, x);
    case OP_(BRA): case OP_(CALL): case OP_(RET): case OP_(EXIT): case OP_(TRAP): case OP_(BRKPT):
    case OP_(NANOSLEEP): case OP_(PMEVENT): case OP_(SETMAXNREG): case OP_(PREFETCH): case OP_(PREFETCHU):
    case OP_(GRIDDEPCONTROL): case OP_(DISCARD): case OP_(APPLYPRIORITY):
        return fab__ptx_dc_control(dc, in, x);
    case OP_(BAR_SYNC): case OP_(BAR_ARRIVE): case OP_(BAR_RED): case OP_(BAR_CTA_SYNC):
    case OP_(BAR_CTA_ARRIVE): case OP_(BAR_CTA_RED): case OP_(BARRIER_SYNC): case OP_(BARRIER_ARRIVE):
    case OP_(BARRIER_RED): case OP_(BARRIER_CTA_SYNC): case OP_(BARRIER_CTA_ARRIVE): case OP_(BARRIER_CTA_RED):
    case OP_(BAR_WARP_SYNC): case OP_(MEMBAR): case OP_(FENCE): case OP_(VOTE): case OP_(VOTE_SYNC):
    case OP_(MATCH_SYNC): case OP_(ACTIVEMASK): case OP_(REDUX_SYNC): case OP_(ELECT_SYNC): case OP_(SHFL):
    case OP_(SHFL_SYNC):
        return fab__ptx_dc_sync(dc, in, x);
    default:
        return fab__ptx_dc_alu(dc, in, x);
    }
}
