/* Statements of function bodies (front.h): the body's scopes, declarations
 * inside it, labels and the .branchtargets/.calltargets/.callprototype they
 * name, and instructions: the guard, the mnemonic (the longest dotted
 * prefix opcodes.h holds, then each remaining word a type, a state space, a
 * vector width or a modifier of words.h), the operands (parse_body.c) laid
 * out in the function's pool, call's one form. Then the names the module
 * used before declaring them, resolved at its end. */
#include "src/ptx/front.h"

#include <stdio.h>
#include <string.h>

#define FAB__PTX_MAX_MODS 32

static fab__ptx_body_t *fab__ptx_b(fab__ptx_ps_t *ps)
{
    return ps->body;
}

static fab__ptx_topd_t *fab__ptx_top(fab__ptx_ps_t *ps, uint32_t i)
{
    return (fab__ptx_topd_t *)ps->tops.data + i;
}

/* Insert an empty LIST at tops[i] (call's rets or args when not written). */
static bool fab__ptx_insert_list(fab__ptx_ps_t *ps, uint32_t i)
{
    if (!fab__ptx_new_opd(ps, false))
        return false;
    fab__ptx_topd_t *t = ps->tops.data;
    memmove(&t[i + 1], &t[i], (size_t)(ps->tops.n - 1 - i) * sizeof(*t));
    memset(&t[i], 0, sizeof(*t));
    t[i].o.kind = FAB__PTX_OPD_LIST;
    t[i].o.reg = t[i].o.reg2 = t[i].o.sym = t[i].o.label = FAB__PTX_NONE;
    return true;
}

/* call [(rets),] target[, (args)][, proto or targets] -> always four or three. */
static bool fab__ptx_call_form(fab__ptx_ps_t *ps, uint32_t line)
{
    if (ps->tops.n == 0)
        return fab__ptx_fail(ps, line, "call takes a function");
    if (fab__ptx_top(ps, 0)->o.kind != FAB__PTX_OPD_LIST && !fab__ptx_insert_list(ps, 0))
        return false;
    if (ps->tops.n < 2)
        return fab__ptx_fail(ps, line, "call takes a function after its return list");
    uint8_t k = fab__ptx_top(ps, 1)->o.kind;
    if (k != FAB__PTX_OPD_SYM && k != FAB__PTX_OPD_REG)
        return fab__ptx_fail(ps, line, "call's target is a function or a register");
    if ((ps->tops.n < 3 || fab__ptx_top(ps, 2)->o.kind != FAB__PTX_OPD_LIST ||
         fab__ptx_top(ps, 2)->kid_first == UINT32_MAX) &&
        !fab__ptx_insert_list(ps, 2))
        return false;
    if (ps->tops.n > 4)
        return fab__ptx_fail(ps, line, "call has operands after its prototype");
    if (ps->tops.n == 4) {
        fab__ptx_topd_t *last = fab__ptx_top(ps, 3);
        if (last->o.kind != FAB__PTX_OPD_PROTO && !(last->o.kind == FAB__PTX_OPD_LIST && last->kid_first == UINT32_MAX) &&
            !(last->o.kind == FAB__PTX_OPD_SYM && last->pend_name))
            return fab__ptx_fail(ps, line, "call's last operand is a .callprototype or a .calltargets list");
    }
    return true;
}

static bool fab__ptx_pend(fab__ptx_ps_t *ps, const fab__ptx_topd_t *t, uint32_t at, uint32_t line)
{
    fab__ptx_vec_t *v = t->pend_what == 0 ? &fab__ptx_b(ps)->pending_labels : &ps->pending;
    fab__ptx_pending_t *p = fab__ptx_vec_push(ps->arena, v, sizeof(*p));
    if (!p)
        return fab__ptx_nomem(ps);
    p->name = t->pend_name;
    p->len = t->pend_len;
    p->line = line;
    p->func = fab__ptx_b(ps)->func;
    p->at = at;
    p->var = FAB__PTX_NONE;
    p->what = t->pend_what;
    return true;
}

/* tops, then each vector's or list's elements, into the pool. */
static bool fab__ptx_emit_operands(fab__ptx_ps_t *ps, fab__ptx_insn_t *insn, uint32_t line)
{
    fab__ptx_body_t *body = fab__ptx_b(ps);
    if (ps->tops.n > 255)
        return fab__ptx_fail(ps, line, "an instruction of more than 255 operands");
    insn->first = body->pool.n;
    insn->nops = (uint8_t)ps->tops.n;
    uint32_t pos = body->pool.n + ps->tops.n;
    for (uint32_t i = 0; i < ps->tops.n; i++) {
        fab__ptx_topd_t *t = fab__ptx_top(ps, i);
        if ((t->o.kind == FAB__PTX_OPD_VEC || t->o.kind == FAB__PTX_OPD_LIST) && t->kid_first != UINT32_MAX) {
            t->o.first = pos;
            t->o.elems = t->kids;
            pos += t->kids;
        }
    }
    for (int pass = 0; pass < 2; pass++) {
        for (uint32_t i = 0; i < ps->tops.n; i++) {
            fab__ptx_topd_t *t = fab__ptx_top(ps, i);
            uint32_t from = pass == 0 ? i : t->kid_first;
            uint32_t n = pass == 0 ? 1 : (t->kid_first == UINT32_MAX ? 0 : t->kids);
            for (uint32_t k = 0; k < n; k++) {
                const fab__ptx_topd_t *src = pass == 0 ? t : (fab__ptx_topd_t *)ps->kids.data + from + k;
                uint32_t at = body->pool.n;
                fab__ptx_operand_t *o = fab__ptx_vec_push(ps->arena, &body->pool, sizeof(*o));
                if (!o)
                    return fab__ptx_nomem(ps);
                *o = src->o;
                if (src->pend_name && !fab__ptx_pend(ps, src, at, line))
                    return false;
            }
        }
    }
    return true;
}

static bool fab__ptx_parse_insn(fab__ptx_ps_t *ps, fab__ptx_tok_t mn, uint32_t guard, bool guard_neg)
{
    uint32_t line = mn.line;
    fab__ptx_tok_t w[FAB__PTX_MAX_MODS];
    uint32_t n = 0;
    while (ps->tok.kind == FAB__PTX_TK_DOT) {
        if (n == FAB__PTX_MAX_MODS)
            return fab__ptx_fail(ps, line, "an instruction with more than %d modifiers", FAB__PTX_MAX_MODS);
        w[n++] = ps->tok;
        if (!fab__ptx_advance(ps))
            return false;
    }
    int op = -1;
    uint32_t k = n + 1;
    char buf[256];
    while (op < 0 && k-- > 0) {
        size_t len = mn.len;
        if (len >= sizeof(buf))
            break;
        memcpy(buf, mn.s, len);
        bool fits = true;
        for (uint32_t i = 0; i < k && fits; i++) {
            if (len + w[i].len >= sizeof(buf))
                fits = false;
            else {
                memcpy(buf + len, w[i].s, w[i].len);
                len += w[i].len;
            }
        }
        if (fits)
            op = fab__ptx_find_op(buf, len);
    }
    /* match.any.sync, match.all.sync: the opcode's second word comes after
     * a modifier; take it out of the words */
    for (uint32_t j = 0; op < 0 && j < n; j++) {
        size_t len = mn.len + w[j].len;
        if (len >= sizeof(buf))
            continue;
        memcpy(buf, mn.s, mn.len);
        memcpy(buf + mn.len, w[j].s, w[j].len);
        if ((op = fab__ptx_find_op(buf, len)) >= 0) {
            memmove(&w[j], &w[j + 1], (size_t)(n - j - 1) * sizeof(w[0]));
            n--;
            k = 0;
        }
    }
    if (op < 0)
        return fab__ptx_fail(ps, line, "'%.*s' is no PTX instruction", (int)(mn.len > 40 ? 40 : mn.len), mn.s);
    fab__ptx_insn_t insn = {.op = (uint16_t)op, .vec = 1, .guard = guard, .guard_neg = guard_neg, .line = line};
    const char *opname = fab__ptx_op_name((unsigned)op);
    for (uint32_t i = k; i < n; i++) {
        uint8_t t = fab__ptx_type_of(w[i].s, w[i].len);
        uint8_t sp = fab__ptx_space_of(w[i].s, w[i].len);
        int wd;
        if (t != FAB__PTX_T_NONE) {
            if (insn.ntypes == FAB__PTX_MAX_TYPES)
                return fab__ptx_fail(ps, line, "%s with more than %d types", opname, FAB__PTX_MAX_TYPES);
            insn.types[insn.ntypes++] = t;
        } else if (sp != FAB__PTX_S_COUNT) {
            if (insn.space == FAB__PTX_S_GENERIC)
                insn.space = sp;
            else if (insn.space2 == FAB__PTX_S_GENERIC)
                insn.space2 = sp;
            else
                return fab__ptx_fail(ps, line, "%s with more than two state spaces", opname);
        } else if (w[i].len == 3 && w[i].s[1] == 'v' && (w[i].s[2] == '2' || w[i].s[2] == '4' || w[i].s[2] == '8')) {
            if (insn.vec != 1)
                return fab__ptx_fail(ps, line, "%s with two vector widths", opname);
            insn.vec = (uint8_t)(w[i].s[2] - '0');
        } else if ((wd = fab__ptx_find_word(w[i].s, w[i].len)) > 0) {
            if (insn.nwords == FAB__PTX_MAX_WORDS)
                return fab__ptx_fail(ps, line, "%s with more than %d modifiers", opname, FAB__PTX_MAX_WORDS);
            insn.words[insn.nwords++] = (uint16_t)wd;
        } else {
            return fab__ptx_fail(ps, line, "'%.*s' is no modifier that PTX knows (in %s)",
                                 (int)(w[i].len > 40 ? 40 : w[i].len), w[i].s, opname);
        }
    }
    ps->tops.n = ps->kids.n = 0;
    if (fab__ptx_is_punct(ps, '}') || ps->tok.kind == FAB__PTX_TK_EOF)
        return fab__ptx_fail(ps, ps->tok.line, "';' expected after %s", opname);
    if (!fab__ptx_is_punct(ps, ';')) {
        for (;;) {
            if (!fab__ptx_parse_operand(ps, false, op == FAB__PTX_OP_BRA))
                return false;
            if (fab__ptx_is_punct(ps, ';'))
                break;
            if (!fab__ptx_expect_punct(ps, ',', "or ';' after an operand"))
                return false;
        }
    }
    if (op == FAB__PTX_OP_CALL && !fab__ptx_call_form(ps, line))
        return false;
    if (!fab__ptx_emit_operands(ps, &insn, line))
        return false;
    fab__ptx_insn_t *slot = fab__ptx_vec_push(ps->arena, &fab__ptx_b(ps)->insns, sizeof(*slot));
    if (!slot)
        return fab__ptx_nomem(ps);
    *slot = insn;
    return fab__ptx_advance(ps); /* past ';' */
}

/* name: .branchtargets L1, L2;  name: .calltargets f1, f2; */
static bool fab__ptx_parse_targets(fab__ptx_ps_t *ps, const fab__ptx_tok_t *name)
{
    bool labels = fab__ptx_is_dot(ps, ".branchtargets");
    fab__ptx_body_t *body = fab__ptx_b(ps);
    if (!fab__ptx_advance(ps))
        return false;
    uint32_t first = body->pool.n;
    for (;;) {
        if (ps->tok.kind != FAB__PTX_TK_IDENT)
            return fab__ptx_fail(ps, ps->tok.line, "%s lists %s", labels ? ".branchtargets" : ".calltargets",
                                 labels ? "labels" : "functions");
        fab__ptx_topd_t t = {.o = {.reg = FAB__PTX_NONE, .reg2 = FAB__PTX_NONE, .sym = FAB__PTX_NONE,
                                   .label = FAB__PTX_NONE}};
        fab__ptx_binding_t *b = labels ? NULL : fab__ptx_lookup(ps, ps->tok.s, ps->tok.len);
        if (labels) {
            t.o.kind = FAB__PTX_OPD_LABEL;
            t.pend_what = 0;
            t.pend_name = ps->tok.s;
        } else if (b && b->kind == FAB__PTX_B_FUNC) {
            t.o.kind = FAB__PTX_OPD_SYM;
            t.o.symkind = FAB__PTX_SYM_FUNC;
            t.o.sym = b->index;
        } else if (b) {
            return fab__ptx_fail(ps, ps->tok.line, "%.*s is no function", (int)ps->tok.len, ps->tok.s);
        } else {
            t.o.kind = FAB__PTX_OPD_SYM;
            t.pend_what = 1;
            t.pend_name = ps->tok.s;
        }
        t.pend_len = ps->tok.len;
        uint32_t at = body->pool.n;
        fab__ptx_operand_t *o = fab__ptx_vec_push(ps->arena, &body->pool, sizeof(*o));
        if (!o)
            return fab__ptx_nomem(ps);
        *o = t.o;
        if (t.pend_name && !fab__ptx_pend(ps, &t, at, ps->tok.line))
            return false;
        if (!fab__ptx_advance(ps))
            return false;
        if (fab__ptx_is_punct(ps, ';'))
            break;
        if (!fab__ptx_expect_punct(ps, ',', "or ';' in a list of targets"))
            return false;
    }
    char *nm = fab__ptx_arena_strndup(ps->arena, name->s, name->len);
    if (!nm)
        return fab__ptx_nomem(ps);
    if (fab__ptx_lookup(ps, name->s, name->len) &&
        fab__ptx_lookup(ps, name->s, name->len)->kind == FAB__PTX_B_TARGETS)
        return fab__ptx_fail(ps, name->line, "%.*s is declared twice", (int)name->len, name->s);
    if (!fab__ptx_bind(ps, nm, name->len, FAB__PTX_B_TARGETS, first, body->pool.n - first))
        return false;
    return fab__ptx_advance(ps);
}

/* A parameter's (or return value's) variable, bound in the function's scope. */
static bool fab__ptx_param_var(fab__ptx_ps_t *ps, fab__ptx_param_t *p, uint32_t fi, uint32_t line)
{
    uint32_t len = (uint32_t)strlen(p->name);
    if (fab__ptx_lookup(ps, p->name, len) && ps->bound.n > 0) {
        fab__ptx_binding_t *b = fab__ptx_lookup(ps, p->name, len);
        uint32_t mark = ((fab__ptx_scope_t *)ps->body->scopes.data)[0].bind_mark;
        if (b->pos >= mark)
            return fab__ptx_fail(ps, line, "parameter %s is declared twice", p->name);
    }
    if (p->space == FAB__PTX_S_REG) {
        /* a .reg parameter is a register of the function */
        uint32_t ri = ps->body->regs.n;
        fab__ptx_reg_t *r = fab__ptx_vec_push(ps->arena, &ps->body->regs, sizeof(*r));
        if (!r)
            return fab__ptx_nomem(ps);
        r->name = p->name;
        r->type = p->type;
        p->reg = ri;
        return fab__ptx_bind(ps, p->name, len, FAB__PTX_B_REG, ri, 1);
    }
    uint32_t vi = ps->vars.n;
    fab__ptx_var_t *v = fab__ptx_vec_push(ps->arena, &ps->vars, sizeof(*v));
    if (!v)
        return fab__ptx_nomem(ps);
    v->name = p->name;
    v->space = FAB__PTX_S_PARAM;
    v->type = p->type;
    v->vec = 1;
    v->linkage = FAB__PTX_L_INTERNAL;
    v->align = p->align;
    v->size = p->size;
    v->func = fi;
    v->line = line;
    p->var = vi;
    return fab__ptx_bind(ps, p->name, len, FAB__PTX_B_VAR, vi, 0);
}

static bool fab__ptx_parse_stmt(fab__ptx_ps_t *ps, uint32_t fi)
{
    if (fab__ptx_is_punct(ps, '@')) {
        if (!fab__ptx_advance(ps))
            return false;
        bool neg = fab__ptx_is_punct(ps, '!');
        if (neg && !fab__ptx_advance(ps))
            return false;
        uint32_t g;
        if (!fab__ptx_reg_operand(ps, "a guard", &g))
            return false;
        if (ps->tok.kind != FAB__PTX_TK_IDENT)
            return fab__ptx_fail(ps, ps->tok.line, "an instruction expected after a guard");
        fab__ptx_tok_t mn = ps->tok;
        return fab__ptx_advance(ps) && fab__ptx_parse_insn(ps, mn, g, neg);
    }
    if (ps->tok.kind == FAB__PTX_TK_IDENT) {
        fab__ptx_tok_t name = ps->tok;
        if (!fab__ptx_advance(ps))
            return false;
        if (!fab__ptx_is_punct(ps, ':'))
            return fab__ptx_parse_insn(ps, name, FAB__PTX_NONE, false);
        if (!fab__ptx_advance(ps))
            return false;
        if (fab__ptx_is_dot(ps, ".callprototype"))
            return fab__ptx_parse_proto(ps, name.s, name.len, name.line);
        if (fab__ptx_is_dot(ps, ".branchtargets") || fab__ptx_is_dot(ps, ".calltargets"))
            return fab__ptx_parse_targets(ps, &name);
        return fab__ptx_add_label(ps, &name);
    }
    if (ps->tok.kind == FAB__PTX_TK_DOT) {
        if (fab__ptx_is_dot(ps, ".reg"))
            return fab__ptx_parse_reg(ps);
        if (fab__ptx_is_dot(ps, ".loc") || fab__ptx_is_dot(ps, ".file")) {
            fab__ptx_lex_skip_line(&ps->lx);
            return fab__ptx_advance(ps);
        }
        if (fab__ptx_is_dot(ps, ".pragma")) {
            if (!fab__ptx_advance(ps))
                return false;
            while (ps->tok.kind == FAB__PTX_TK_STRING || fab__ptx_is_punct(ps, ',')) {
                if (!fab__ptx_advance(ps))
                    return false;
            }
            return fab__ptx_expect_punct(ps, ';', "after .pragma");
        }
        uint8_t sp = fab__ptx_space_of(ps->tok.s, ps->tok.len);
        if (sp != FAB__PTX_S_COUNT && sp != FAB__PTX_S_SREG)
            return fab__ptx_parse_var(ps, FAB__PTX_L_INTERNAL, fi);
        return fab__ptx_fail(ps, ps->tok.line, "'%.*s' is no directive of a function's body",
                             (int)(ps->tok.len > 40 ? 40 : ps->tok.len), ps->tok.s);
    }
    return fab__ptx_fail(ps, ps->tok.line, "a statement expected, not '%.*s'",
                         (int)(ps->tok.len > 40 ? 40 : ps->tok.len), ps->tok.s);
}

bool fab__ptx_parse_body(fab__ptx_ps_t *ps, uint32_t fi)
{
    fab__ptx_tables_init();
    fab__ptx_body_t body = {.func = fi};
    ps->body = &body;
    fab__ptx_func_t *f = (fab__ptx_func_t *)ps->funcs.data + fi;
    uint32_t line = ps->tok.line;
    if (!fab__ptx_open_scope(ps))
        goto fail;
    for (int list = 0; list < 2; list++) {
        fab__ptx_param_t *p = (fab__ptx_param_t *)(list ? f->params : f->rets);
        uint32_t np = list ? f->nparams : f->nrets;
        for (uint32_t i = 0; i < np; i++) {
            if (!fab__ptx_param_var(ps, &p[i], fi, f->line))
                goto fail;
            f = (fab__ptx_func_t *)ps->funcs.data + fi;
        }
    }
    if (!fab__ptx_advance(ps)) /* past '{' */
        goto fail;
    for (;;) {
        if (ps->tok.kind == FAB__PTX_TK_EOF) {
            fab__ptx_fail(ps, line, "the body of %s is not closed", f->name);
            goto fail;
        }
        if (fab__ptx_is_punct(ps, '{')) {
            if (!fab__ptx_open_scope(ps) || !fab__ptx_advance(ps))
                goto fail;
        } else if (fab__ptx_is_punct(ps, '}')) {
            if (!fab__ptx_close_scope(ps) || !fab__ptx_advance(ps))
                goto fail;
            if (body.scopes.n == 0)
                break;
        } else if (!fab__ptx_parse_stmt(ps, fi)) {
            goto fail;
        }
    }
    f = (fab__ptx_func_t *)ps->funcs.data + fi;
    f->regs = body.regs.data;
    f->nregs = body.regs.n;
    f->insns = body.insns.data;
    f->ninsns = body.insns.n;
    f->pool = body.pool.data;
    f->npool = body.pool.n;
    f->labels = body.labels.data;
    f->label_names = body.label_names.data;
    f->nlabels = body.labels.n;
    ps->body = NULL;
    return true;
fail:
    ps->body = NULL;
    return false;
}

bool fab__ptx_resolve_module(fab__ptx_ps_t *ps)
{
    fab__ptx_pending_t *pd = ps->pending.data;
    for (uint32_t i = 0; i < ps->pending.n; i++) {
        fab__ptx_binding_t *b = fab__ptx_lookup(ps, pd[i].name, pd[i].len);
        if (!b)
            return fab__ptx_fail(ps, pd[i].line, "%.*s is not declared", (int)pd[i].len, pd[i].name);
        if (pd[i].what == 2) {
            fab__ptx_var_t *v = (fab__ptx_var_t *)ps->vars.data + pd[i].var;
            fab__ptx_reloc_t *r = (fab__ptx_reloc_t *)v->relocs + pd[i].at;
            if (b->kind != FAB__PTX_B_VAR && b->kind != FAB__PTX_B_FUNC)
                return fab__ptx_fail(ps, pd[i].line, "%.*s has no address", (int)pd[i].len, pd[i].name);
            r->symkind = b->kind == FAB__PTX_B_VAR ? FAB__PTX_SYM_VAR : FAB__PTX_SYM_FUNC;
            r->sym = b->index;
            continue;
        }
        fab__ptx_func_t *f = (fab__ptx_func_t *)ps->funcs.data + pd[i].func;
        fab__ptx_operand_t *o = (fab__ptx_operand_t *)f->pool + pd[i].at;
        if (b->kind == FAB__PTX_B_VAR || b->kind == FAB__PTX_B_FUNC) {
            o->symkind = b->kind == FAB__PTX_B_VAR ? FAB__PTX_SYM_VAR : FAB__PTX_SYM_FUNC;
            o->sym = b->index;
        } else if (b->kind == FAB__PTX_B_PROTO && o->kind == FAB__PTX_OPD_SYM) {
            o->kind = FAB__PTX_OPD_PROTO;
            o->sym = b->index;
        } else {
            return fab__ptx_fail(ps, pd[i].line, "%.*s is no variable or function", (int)pd[i].len,
                                 pd[i].name);
        }
    }
    for (uint32_t i = 0; i < ps->vars.n; i++) {
        fab__ptx_var_t *v = (fab__ptx_var_t *)ps->vars.data + i;
        if (v->nrelocs)
            v->nrelocs = fab__ptx_merge_bytes((fab__ptx_reloc_t *)v->relocs, v->nrelocs);
    }
    return true;
}
