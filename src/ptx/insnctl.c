/* What the control-flow, call, barrier, fence and warp-collective
 * instructions take (the rest of the decoder's per-opcode checks, beside
 * insn.c): branch targets as instruction indices, call sites with the frame
 * offsets their .param arguments and results are copied between, barriers
 * with their id and thread count, collectives with their member masks. */
#include <stdlib.h>
#include <string.h>

#include "src/ptx/decode.h"

#define T_(x) FAB__PTX_T_##x
#define W_(x) FAB__PTX_W_##x
#define OP_(x) FAB__PTX_OP_##x

int fab__ptx_dc_control(fab__ptx_dc_t *dc, const fab__ptx_insn_t *in, fab__ptx_x_t *x);
int fab__ptx_dc_sync(fab__ptx_dc_t *dc, const fab__ptx_insn_t *in, fab__ptx_x_t *x);

static int fab__ptx_only_words(fab__ptx_dc_t *dc, const fab__ptx_insn_t *in, const unsigned *ok, unsigned nok)
{
    for (unsigned i = 0; i < in->nwords; i++) {
        bool found = false;
        for (unsigned j = 0; j < nok; j++)
            found |= in->words[i] == ok[j];
        if (!found)
            return fab__ptx_dc_fail(dc, FAB__PTX_E_UNSUPPORTED, "the modifier %s is not supported here",
                                    fab__ptx_word_name(in->words[i]));
    }
    return 0;
}

static int fab__ptx_nops(fab__ptx_dc_t *dc, const fab__ptx_insn_t *in, unsigned lo, unsigned hi)
{
    if (in->nops < lo || in->nops > hi)
        return fab__ptx_dc_fail(dc, FAB__PTX_E_UNSUPPORTED, "%u operands", in->nops);
    return 0;
}

/* A call's .param argument or result: the caller's frame offset and size. */
static int fab__ptx_call_slot(fab__ptx_dc_t *dc, const fab__ptx_operand_t *o, uint32_t *off_out,
                              uint32_t *size_out)
{
    const fab__ptx_module_t *m = dc->mod;
    if (o->kind != FAB__PTX_OPD_SYM || o->symkind != FAB__PTX_SYM_VAR || o->sym >= m->nvars ||
        m->vars[o->sym].space != FAB__PTX_S_PARAM || dc->p->var_kparam[o->sym])
        return fab__ptx_dc_fail(dc, FAB__PTX_E_UNSUPPORTED, "a call argument that is not a .param variable");
    *off_out = dc->p->var_off[o->sym];
    *size_out = (uint32_t)m->vars[o->sym].size;
    return 0;
}

static int fab__ptx_dc_call(fab__ptx_dc_t *dc, const fab__ptx_insn_t *in, fab__ptx_x_t *x)
{
    const fab__ptx_operand_t *o = &dc->f->pool[in->first];
    const fab__ptx_module_t *m = dc->mod;
    unsigned ok[] = {W_(UNI)};
    int rc = fab__ptx_only_words(dc, in, ok, 1);
    if (rc)
        return rc;
    unsigned ci = 0;
    while (ci < in->nops && o[ci].kind == FAB__PTX_OPD_LIST)
        ci++;
    if (ci >= in->nops || ci > 1)
        return fab__ptx_dc_fail(dc, FAB__PTX_E_UNSUPPORTED, "a call without its target");
    const fab__ptx_operand_t *rets = ci ? &o[0] : NULL, *args = NULL;
    if (ci + 1 < in->nops && o[ci + 1].kind == FAB__PTX_OPD_LIST)
        args = &o[ci + 1];
    fab__ptx_code_t *c = dc->c;
    if (c->ncalls == dc->callcap) {
        uint32_t ncap = dc->callcap ? dc->callcap * 2 : 8;
        fab__ptx_callsite_t *n = realloc(c->calls, ncap * sizeof(*n));
        if (!n)
            return FAB__PTX_E_NOMEM;
        c->calls = n;
        dc->callcap = ncap;
    }
    fab__ptx_callsite_t *cs = &c->calls[c->ncalls];
    memset(cs, 0, sizeof(*cs));
    cs->proto = FAB__PTX_NONE;
    x->aux = c->ncalls++;
    if (o[ci].kind == FAB__PTX_OPD_SYM && o[ci].symkind == FAB__PTX_SYM_FUNC) {
        if (o[ci].sym >= m->nfuncs)
            return fab__ptx_dc_fail(dc, FAB__PTX_E_UNSUPPORTED, "a call to a function out of range");
        x->target = o[ci].sym;
        const fab__ptx_func_t *g = &m->funcs[o[ci].sym];
        cs->builtin = dc->p->codes[o[ci].sym].builtin;
        if (!g->defined && !cs->builtin)
            return fab__ptx_dc_fail(dc, FAB__PTX_E_LINK, "a call to %s, defined nowhere and no built-in", g->name);
        if (g->entry)
            return fab__ptx_dc_fail(dc, FAB__PTX_E_UNSUPPORTED, "a call to the kernel %s", g->name);
    } else if (o[ci].kind == FAB__PTX_OPD_REG) {
        x->target = FAB__PTX_NONE;
        if ((rc = fab__ptx_dc_src(dc, &o[ci], T_(U64), &x->s[0])))
            return rc;
        for (unsigned i = ci + 1; i < in->nops; i++)
            if (o[i].kind == FAB__PTX_OPD_PROTO)
                cs->proto = o[i].sym;
    } else {
        return fab__ptx_dc_fail(dc, FAB__PTX_E_UNSUPPORTED, "a call target of kind %u", o[ci].kind);
    }
    cs->nargs = args ? args->elems : 0;
    cs->nrets = rets ? rets->elems : 0;
    uint32_t n = cs->nargs + cs->nrets;
    if (n) {
        cs->arg_off = calloc(4 * (size_t)n, sizeof(uint32_t));
        if (!cs->arg_off)
            return FAB__PTX_E_NOMEM;
        cs->arg_size = cs->arg_off + n;
        cs->ret_off = cs->arg_size + n;
        cs->ret_size = cs->ret_off + n;
    }
    for (uint32_t i = 0; i < cs->nargs; i++) {
        if (args->first + i >= dc->f->npool)
            return fab__ptx_dc_fail(dc, FAB__PTX_E_UNSUPPORTED, "operands out of range");
        if ((rc = fab__ptx_call_slot(dc, &dc->f->pool[args->first + i], &cs->arg_off[i], &cs->arg_size[i])))
            return rc;
    }
    for (uint32_t i = 0; i < cs->nrets; i++) {
        if (rets->first + i >= dc->f->npool)
            return fab__ptx_dc_fail(dc, FAB__PTX_E_UNSUPPORTED, "operands out of range");
        if ((rc = fab__ptx_call_slot(dc, &dc->f->pool[rets->first + i], &cs->ret_off[i], &cs->ret_size[i])))
            return rc;
    }
    /* The arguments must be the function's. The results may differ: a module
     * that declares an .extern function with a result the defining module's
     * function does not return (numba-cuda declares a C function returning
     * void so) links with NVIDIA's linker, which compiles each module alone;
     * a result the function does not return is left as it was, one it
     * returns that the call does not name is dropped (warp.c). */
    if (x->target != FAB__PTX_NONE && !cs->builtin) {
        const fab__ptx_func_t *g = &m->funcs[x->target];
        if (cs->nargs != g->nparams)
            return fab__ptx_dc_fail(dc, FAB__PTX_E_UNSUPPORTED, "a call to %s with %u arguments "
                                    "where it takes %u", g->name, cs->nargs, g->nparams);
    }
    return 0;
}

int fab__ptx_dc_control(fab__ptx_dc_t *dc, const fab__ptx_insn_t *in, fab__ptx_x_t *x)
{
    const fab__ptx_operand_t *o = &dc->f->pool[in->first];
    unsigned uni[] = {W_(UNI)};
    int rc;
    switch (in->op) {
    case OP_(BRA):
        if ((rc = fab__ptx_only_words(dc, in, uni, 1)) || (rc = fab__ptx_nops(dc, in, 1, 1)))
            return rc;
        if (o[0].kind != FAB__PTX_OPD_LABEL || o[0].label >= dc->f->nlabels)
            return fab__ptx_dc_fail(dc, FAB__PTX_E_UNSUPPORTED, "a branch to something not a label");
        x->target = dc->f->labels[o[0].label];
        return 0;
    case OP_(CALL):
        return fab__ptx_dc_call(dc, in, x);
    case OP_(RET): case OP_(EXIT):
        if ((rc = fab__ptx_only_words(dc, in, uni, 1)) || (rc = fab__ptx_nops(dc, in, 0, 0)))
            return rc;
        if (in->op == OP_(RET) && dc->f->entry)
            x->op = OP_(EXIT);
        return 0;
    case OP_(TRAP): case OP_(BRKPT):
        return fab__ptx_nops(dc, in, 0, 0) ? fab__ptx_nops(dc, in, 0, 0) : fab__ptx_only_words(dc, in, NULL, 0);
    case OP_(NANOSLEEP):
        if ((rc = fab__ptx_only_words(dc, in, NULL, 0)) || (rc = fab__ptx_nops(dc, in, 1, 1)))
            return rc;
        return fab__ptx_dc_src(dc, &o[0], T_(U32), &x->s[0]);
    default: /* hints and performance counters: nothing to do on a CPU */
        x->op = OP_(PMEVENT);
        return 0;
    }
}

/* bar{.cta}.sync/arrive/red, barrier{.cta}.sync/arrive/red: a = id, b = count */
static int fab__ptx_dc_bar(fab__ptx_dc_t *dc, const fab__ptx_insn_t *in, fab__ptx_x_t *x)
{
    const fab__ptx_operand_t *o = &dc->f->pool[in->first];
    unsigned op = in->op;
    x->k = op == OP_(BAR_ARRIVE) || op == OP_(BAR_CTA_ARRIVE) || op == OP_(BARRIER_ARRIVE) ||
                   op == OP_(BARRIER_CTA_ARRIVE) ? 1
           : op == OP_(BAR_RED) || op == OP_(BAR_CTA_RED) || op == OP_(BARRIER_RED) || op == OP_(BARRIER_CTA_RED)
               ? 2 : 0;
    x->op = OP_(BAR_SYNC);
    int rc;
    for (unsigned i = 0; i < in->nwords; i++) {
        unsigned w = in->words[i];
        if (w == W_(ALIGNED) || w == W_(SYNC))
            continue;
        if (x->k == 2 && (w == W_(POPC) || w == W_(AND) || w == W_(OR)) && !x->k2) {
            x->k2 = (uint8_t)w;
            continue;
        }
        return fab__ptx_dc_fail(dc, FAB__PTX_E_UNSUPPORTED, "the modifier %s is not supported here",
                                fab__ptx_word_name(w));
    }
    unsigned base = 0;
    if (x->k == 2) {
        if (!x->k2 || in->ntypes != 1)
            return fab__ptx_dc_fail(dc, FAB__PTX_E_UNSUPPORTED, "bar.red needs .popc/.and/.or and a type");
        x->t = in->types[0];
        if ((x->k2 == W_(POPC)) != (x->t == T_(U32)) || (x->k2 != W_(POPC) && x->t != T_(PRED)))
            return fab__ptx_dc_fail(dc, FAB__PTX_E_UNSUPPORTED, "the type %s here", fab__ptx_type_name(x->t));
        if ((rc = fab__ptx_nops(dc, in, 3, 4)) || (rc = fab__ptx_dc_dst(dc, &o[0], x->t, &x->d[0])))
            return rc;
        base = 1;
        fab__ptx_operand_t c = o[in->nops - 1];
        x->aux = c.neg ? 2 : 0;
        c.neg = false;
        if ((rc = fab__ptx_dc_src(dc, &c, T_(PRED), &x->s[2])))
            return rc;
    } else if (in->ntypes || (rc = fab__ptx_nops(dc, in, 0, 2))) {
        return in->ntypes ? fab__ptx_dc_fail(dc, FAB__PTX_E_UNSUPPORTED, "a type on a barrier") : rc;
    }
    unsigned nid = in->nops - base - (x->k == 2);
    if (nid >= 1 && (rc = fab__ptx_dc_src(dc, &o[base], T_(U32), &x->s[0])))
        return rc;
    if (nid >= 2) {
        if ((rc = fab__ptx_dc_src(dc, &o[base + 1], T_(U32), &x->s[1])))
            return rc;
        x->aux |= 1;
    }
    if (nid > 2)
        return fab__ptx_dc_fail(dc, FAB__PTX_E_UNSUPPORTED, "%u operands", in->nops);
    return 0;
}

int fab__ptx_dc_sync(fab__ptx_dc_t *dc, const fab__ptx_insn_t *in, fab__ptx_x_t *x)
{
    const fab__ptx_operand_t *o = &dc->f->pool[in->first];
    int rc;
    unsigned t = in->ntypes ? in->types[0] : T_(NONE);
    x->t = (uint8_t)t;
    switch (in->op) {
    case OP_(BAR_WARP_SYNC): {
        if ((rc = fab__ptx_only_words(dc, in, NULL, 0)) || (rc = fab__ptx_nops(dc, in, 1, 1)))
            return rc;
        return fab__ptx_dc_src(dc, &o[0], T_(U32), &x->s[0]);
    }
    case OP_(MEMBAR): case OP_(FENCE): {
        unsigned ok[] = {W_(CTA), W_(GL), W_(SYS), W_(GPU), W_(CLUSTER), W_(SC), W_(ACQ_REL), W_(ACQUIRE),
                         W_(RELEASE), W_(PROXY), W_(ASYNC), W_(ALIAS)};
        x->op = OP_(FENCE);
        if (in->space != FAB__PTX_S_GENERIC && in->space != FAB__PTX_S_GLOBAL && in->space != FAB__PTX_S_SHARED &&
            in->space != FAB__PTX_S_SHARED_CLUSTER)
            return fab__ptx_dc_fail(dc, FAB__PTX_E_UNSUPPORTED, "a fence on %s", fab__ptx_space_name(in->space));
        return fab__ptx_only_words(dc, in, ok, sizeof(ok) / sizeof(ok[0]));
    }
    case OP_(VOTE): case OP_(VOTE_SYNC): {
        /* vote.sync with .sync after the mode (vote.ballot.sync.b32, as CUB's PTX has it) */
        bool sync = in->op == OP_(VOTE_SYNC);
        for (unsigned i = 0; i < in->nwords; i++) {
            unsigned w = in->words[i];
            if (w == W_(ALL) || w == W_(ANY) || w == W_(UNI) || w == W_(BALLOT))
                x->k = (uint8_t)w;
            else if (w == W_(SYNC) && !sync)
                sync = true;
            else
                return fab__ptx_dc_fail(dc, FAB__PTX_E_UNSUPPORTED, "the modifier %s", fab__ptx_word_name(w));
        }
        if (!x->k || (x->k == W_(BALLOT) ? t != T_(B32) : t != T_(PRED)))
            return fab__ptx_dc_fail(dc, FAB__PTX_E_UNSUPPORTED, "vote needs .all/.any/.uni.pred or .ballot.b32");
        unsigned n = sync ? 3 : 2;
        if ((rc = fab__ptx_nops(dc, in, n, n)) || (rc = fab__ptx_dc_dst(dc, &o[0], t, &x->d[0])))
            return rc;
        fab__ptx_operand_t p = o[1];
        x->aux = p.neg;
        p.neg = false;
        if ((rc = fab__ptx_dc_src(dc, &p, T_(PRED), &x->s[0])))
            return rc;
        if (n == 3 && (rc = fab__ptx_dc_src(dc, &o[2], T_(U32), &x->s[1])))
            return rc;
        x->op = OP_(VOTE);
        return 0;
    }
    case OP_(MATCH_SYNC): {
        for (unsigned i = 0; i < in->nwords; i++) {
            unsigned w = in->words[i];
            if (w == W_(ALL) || w == W_(ANY))
                x->k = (uint8_t)w;
            else if (w != W_(SYNC))
                return fab__ptx_dc_fail(dc, FAB__PTX_E_UNSUPPORTED, "the modifier %s", fab__ptx_word_name(w));
        }
        if (!x->k || (t != T_(B32) && t != T_(B64)))
            return fab__ptx_dc_fail(dc, FAB__PTX_E_UNSUPPORTED, "match needs .any/.all and .b32/.b64");
        if ((rc = fab__ptx_nops(dc, in, 3, 3)) || (rc = fab__ptx_dc_dst(dc, &o[0], T_(B32), &x->d[0])))
            return rc;
        x->d[1] = FAB__PTX_NONE;
        if (o[0].kind == FAB__PTX_OPD_PAIR) {
            fab__ptx_operand_t q = {.kind = FAB__PTX_OPD_REG, .reg = o[0].reg2};
            if ((rc = fab__ptx_dc_dst(dc, &q, T_(PRED), &x->d[1])))
                return rc;
        }
        if ((rc = fab__ptx_dc_src(dc, &o[1], t, &x->s[0])) || (rc = fab__ptx_dc_src(dc, &o[2], T_(U32), &x->s[1])))
            return rc;
        return 0;
    }
    case OP_(ACTIVEMASK):
        if ((rc = fab__ptx_only_words(dc, in, NULL, 0)) || (rc = fab__ptx_nops(dc, in, 1, 1)))
            return rc;
        return fab__ptx_dc_dst(dc, &o[0], T_(B32), &x->d[0]);
    case OP_(REDUX_SYNC): {
        for (unsigned i = 0; i < in->nwords; i++) {
            unsigned w = in->words[i];
            if (w == W_(ADD) || w == W_(MIN) || w == W_(MAX) || w == W_(AND) || w == W_(OR) || w == W_(XOR))
                x->k = (uint8_t)w;
            else
                return fab__ptx_dc_fail(dc, FAB__PTX_E_UNSUPPORTED, "the modifier %s", fab__ptx_word_name(w));
        }
        bool bit = x->k == W_(AND) || x->k == W_(OR) || x->k == W_(XOR);
        if (!x->k || (bit ? t != T_(B32) : (t != T_(U32) && t != T_(S32))))
            return fab__ptx_dc_fail(dc, FAB__PTX_E_UNSUPPORTED, "redux of that operation and type");
        if ((rc = fab__ptx_nops(dc, in, 3, 3)) || (rc = fab__ptx_dc_dst(dc, &o[0], t, &x->d[0])) ||
            (rc = fab__ptx_dc_src(dc, &o[1], t, &x->s[0])) || (rc = fab__ptx_dc_src(dc, &o[2], T_(U32), &x->s[1])))
            return rc;
        return 0;
    }
    case OP_(ELECT_SYNC):
        if ((rc = fab__ptx_only_words(dc, in, NULL, 0)) || (rc = fab__ptx_nops(dc, in, 2, 2)))
            return rc;
        if ((rc = fab__ptx_dc_dst(dc, &o[0], T_(U32), &x->d[0])))
            return rc;
        x->d[1] = FAB__PTX_NONE;
        if (o[0].kind == FAB__PTX_OPD_PAIR) {
            fab__ptx_operand_t q = {.kind = FAB__PTX_OPD_REG, .reg = o[0].reg2};
            if ((rc = fab__ptx_dc_dst(dc, &q, T_(PRED), &x->d[1])))
                return rc;
        }
        return fab__ptx_dc_src(dc, &o[1], T_(U32), &x->s[0]);
    case OP_(SHFL): case OP_(SHFL_SYNC): {
        for (unsigned i = 0; i < in->nwords; i++) {
            unsigned w = in->words[i];
            if (w == W_(UP) || w == W_(DOWN) || w == W_(BFLY) || w == W_(IDX))
                x->k = (uint8_t)w;
            else
                return fab__ptx_dc_fail(dc, FAB__PTX_E_UNSUPPORTED, "the modifier %s", fab__ptx_word_name(w));
        }
        if (!x->k || t != T_(B32))
            return fab__ptx_dc_fail(dc, FAB__PTX_E_UNSUPPORTED, "shfl needs a mode and .b32");
        unsigned n = in->op == OP_(SHFL_SYNC) ? 5 : 4;
        if ((rc = fab__ptx_nops(dc, in, n, n)) || (rc = fab__ptx_dc_dst(dc, &o[0], t, &x->d[0])))
            return rc;
        x->d[1] = FAB__PTX_NONE;
        if (o[0].kind == FAB__PTX_OPD_PAIR) {
            fab__ptx_operand_t q = {.kind = FAB__PTX_OPD_REG, .reg = o[0].reg2};
            if ((rc = fab__ptx_dc_dst(dc, &q, T_(PRED), &x->d[1])))
                return rc;
        }
        for (unsigned i = 1; i < n; i++)
            if ((rc = fab__ptx_dc_src(dc, &o[i], T_(B32), &x->s[i - 1])))
                return rc;
        x->op = OP_(SHFL_SYNC);
        return 0;
    }
    default:
        return fab__ptx_dc_bar(dc, in, x);
    }
}
