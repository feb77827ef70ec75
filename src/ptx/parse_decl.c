/* PTX declarations (front.h): variables in every state space at module or
 * function scope (alignment, vector width, array dimensions, linkage,
 * .attribute(.managed), initializers through init.c), the parameter lists
 * of entries, functions and .callprototypes, and .reg declarations with
 * their <N> ranges and vector registers. Each declared name is bound in the
 * current scope, so that an inner block's names are registers and
 * variables of their own. */
#include "src/ptx/front.h"

#include <stdio.h>
#include <string.h>

#define FAB__PTX_MAX_DIMS 8
/* Registers one function may declare in all. */
#define FAB__PTX_MAX_REGS ((uint32_t)1 << 20)

/* The binding of name made in the current scope, or NULL. */
static fab__ptx_binding_t *fab__ptx_declared_here(fab__ptx_ps_t *ps, const char *name, uint32_t len)
{
    fab__ptx_binding_t *b = fab__ptx_lookup(ps, name, len);
    if (!b)
        return NULL;
    uint32_t mark = 0;
    if (ps->body && ps->body->scopes.n)
        mark = ((fab__ptx_scope_t *)ps->body->scopes.data)[ps->body->scopes.n - 1].bind_mark;
    return b->pos >= mark ? b : NULL;
}

/* Array dimensions after a name: [N][M]..., the first possibly []. */
static bool fab__ptx_parse_dims_of(fab__ptx_ps_t *ps, uint64_t *dims, uint32_t *ndims, bool *open)
{
    *ndims = 0;
    *open = false;
    while (fab__ptx_is_punct(ps, '[')) {
        uint32_t line = ps->tok.line;
        if (!fab__ptx_advance(ps))
            return false;
        if (*ndims == FAB__PTX_MAX_DIMS)
            return fab__ptx_fail(ps, line, "an array of more than %d dimensions", FAB__PTX_MAX_DIMS);
        if (fab__ptx_is_punct(ps, ']')) {
            if (*ndims)
                return fab__ptx_fail(ps, line, "only an array's first dimension may be left open");
            *open = true;
            dims[(*ndims)++] = 0;
        } else {
            uint64_t d;
            if (!fab__ptx_expect_uint(ps, "an array dimension", FAB__PTX_ARENA_MAX, &d))
                return false;
            if (d == 0)
                return fab__ptx_fail(ps, line, "an array dimension of 0");
            dims[(*ndims)++] = d;
        }
        if (!fab__ptx_expect_punct(ps, ']', "after an array dimension"))
            return false;
    }
    return true;
}

/* elems * each, or false when past what a module may hold. */
static bool fab__ptx_mul(uint64_t a, uint64_t b, uint64_t *out)
{
    if (b && a > (uint64_t)FAB__PTX_ARENA_MAX * 16 / b)
        return false;
    *out = a * b;
    return true;
}

static bool fab__ptx_is_vec(fab__ptx_ps_t *ps, uint8_t *vec)
{
    if (fab__ptx_is_dot(ps, ".v2"))
        *vec = 2;
    else if (fab__ptx_is_dot(ps, ".v4"))
        *vec = 4;
    else if (fab__ptx_is_dot(ps, ".v8"))
        *vec = 8;
    else
        return false;
    return true;
}

bool fab__ptx_parse_var(fab__ptx_ps_t *ps, uint8_t linkage, uint32_t func)
{
    uint32_t line = ps->tok.line;
    uint8_t space = fab__ptx_space_of(ps->tok.s, ps->tok.len);
    if (space == FAB__PTX_S_REG || space == FAB__PTX_S_SREG)
        return fab__ptx_fail(ps, line, "%.*s declares no variable here", (int)ps->tok.len, ps->tok.s);
    if (!fab__ptx_advance(ps))
        return false;
    uint8_t vec = 1, type = FAB__PTX_T_NONE;
    uint32_t align = 0, tsize = 0;
    bool managed = false;
    for (;;) {
        if (ps->tok.kind != FAB__PTX_TK_DOT)
            return fab__ptx_fail(ps, ps->tok.line, "a variable's type expected");
        if (fab__ptx_is_dot(ps, ".align")) {
            uint64_t a;
            if (!fab__ptx_advance(ps) || !fab__ptx_expect_uint(ps, ".align", 1u << 20, &a))
                return false;
            if (a == 0 || (a & (a - 1)))
                return fab__ptx_fail(ps, line, ".align takes a power of two");
            align = (uint32_t)a;
            continue;
        }
        if (fab__ptx_is_vec(ps, &vec)) {
            if (!fab__ptx_advance(ps))
                return false;
            continue;
        }
        if (fab__ptx_is_dot(ps, ".attribute")) {
            if (!fab__ptx_advance(ps) || !fab__ptx_expect_punct(ps, '(', "after .attribute"))
                return false;
            if (!fab__ptx_is_dot(ps, ".managed") && !fab__ptx_is_dot(ps, ".unified"))
                return fab__ptx_fail(ps, line, ".attribute takes .managed or .unified");
            managed |= fab__ptx_is_dot(ps, ".managed");
            if (!fab__ptx_advance(ps))
                return false;
            while (fab__ptx_is_punct(ps, '(') || fab__ptx_is_punct(ps, ',') ||
                   ps->tok.kind == FAB__PTX_TK_INT) { /* .unified(uuid1, uuid2) */
                if (!fab__ptx_advance(ps))
                    return false;
                if (fab__ptx_is_punct(ps, ')') && !fab__ptx_advance(ps))
                    return false;
            }
            if (!fab__ptx_expect_punct(ps, ')', "to close .attribute"))
                return false;
            continue;
        }
        if (fab__ptx_is_dot(ps, ".texref") || fab__ptx_is_dot(ps, ".samplerref") ||
            fab__ptx_is_dot(ps, ".surfref")) {
            tsize = 8;
            if (!fab__ptx_advance(ps))
                return false;
            break;
        }
        type = fab__ptx_type_of(ps->tok.s, ps->tok.len);
        if (type == FAB__PTX_T_NONE)
            return fab__ptx_fail(ps, ps->tok.line, "'%.*s' is no type of a variable", (int)ps->tok.len,
                                 ps->tok.s);
        tsize = fab__ptx_type_size(type);
        if (!fab__ptx_advance(ps))
            return false;
        break;
    }
    for (;;) {
        if (ps->tok.kind != FAB__PTX_TK_IDENT)
            return fab__ptx_fail(ps, ps->tok.line, "a variable's name expected");
        fab__ptx_tok_t name = ps->tok;
        if (!fab__ptx_advance(ps))
            return false;
        uint64_t dims[FAB__PTX_MAX_DIMS];
        uint32_t ndims;
        bool open;
        if (!fab__ptx_parse_dims_of(ps, dims, &ndims, &open))
            return false;
        uint64_t elems = 1;
        for (uint32_t i = open ? 1 : 0; i < ndims; i++) {
            if (!fab__ptx_mul(elems, dims[i], &elems))
                return fab__ptx_fail(ps, name.line, "%.*s is too large", (int)name.len, name.s);
        }
        uint64_t size;
        if (!fab__ptx_mul(elems, (uint64_t)tsize * vec, &size))
            return fab__ptx_fail(ps, name.line, "%.*s is too large", (int)name.len, name.s);
        fab__ptx_var_t v = {
            .space = space, .type = type, .vec = vec, .linkage = linkage,
            .align = align ? align : tsize * vec, .size = open ? 0 : size, .managed = managed,
            .func = func, .line = name.line,
        };
        /* where the variable goes: a new one, or an .extern one defined now */
        uint32_t vi = ps->vars.n;
        fab__ptx_binding_t *b = fab__ptx_declared_here(ps, name.s, name.len);
        if (b) {
            fab__ptx_var_t *old = b->kind == FAB__PTX_B_VAR ? (fab__ptx_var_t *)ps->vars.data + b->index : NULL;
            if (!old || func != FAB__PTX_NONE ||
                (old->linkage != FAB__PTX_L_EXTERN && linkage != FAB__PTX_L_EXTERN))
                return fab__ptx_fail(ps, name.line, "%.*s is declared twice", (int)name.len, name.s);
            vi = b->index;
            if (linkage == FAB__PTX_L_EXTERN)
                vi = FAB__PTX_NONE; /* declared again: the first stands */
        } else {
            char *nm = fab__ptx_arena_strndup(ps->arena, name.s, name.len);
            if (!nm || !fab__ptx_vec_push(ps->arena, &ps->vars, sizeof(fab__ptx_var_t)) ||
                !fab__ptx_bind(ps, nm, name.len, FAB__PTX_B_VAR, vi, 0))
                return fab__ptx_nomem(ps);
            v.name = nm;
        }
        if (vi != FAB__PTX_NONE) {
            fab__ptx_var_t *slot = (fab__ptx_var_t *)ps->vars.data + vi;
            if (!v.name)
                v.name = slot->name;
            *slot = v;
        }
        if (fab__ptx_is_punct(ps, '=')) {
            if (linkage == FAB__PTX_L_EXTERN)
                return fab__ptx_fail(ps, name.line, ".extern %.*s has an initializer", (int)name.len, name.s);
            if (tsize == 0 || type == FAB__PTX_T_PRED)
                return fab__ptx_fail(ps, name.line, "%.*s's type takes no initializer", (int)name.len, name.s);
            if (space != FAB__PTX_S_GLOBAL && space != FAB__PTX_S_CONST)
                return fab__ptx_fail(ps, name.line, "only .global and .const variables take initializers");
            if (!fab__ptx_advance(ps) || !fab__ptx_parse_init(ps, vi, dims, ndims, open))
                return false;
        } else if (open && vi != FAB__PTX_NONE) {
            ((fab__ptx_var_t *)ps->vars.data)[vi].unsized = true;
        }
        if (fab__ptx_is_punct(ps, ';'))
            return fab__ptx_advance(ps);
        if (!fab__ptx_expect_punct(ps, ',', "or ';' after a variable"))
            return false;
    }
}

bool fab__ptx_parse_params(fab__ptx_ps_t *ps, fab__ptx_vec_t *params, bool proto)
{
    uint32_t line = ps->tok.line;
    if (!fab__ptx_advance(ps))
        return false;
    if (fab__ptx_is_punct(ps, ')'))
        return fab__ptx_advance(ps);
    for (;;) {
        bool reg = fab__ptx_is_dot(ps, ".reg");
        if (!reg && !fab__ptx_is_dot(ps, ".param"))
            return fab__ptx_fail(ps, ps->tok.line, "a parameter starts with .param or .reg");
        if (!fab__ptx_advance(ps))
            return false;
        fab__ptx_param_t p = {.var = FAB__PTX_NONE, .reg = FAB__PTX_NONE,
                              .space = reg ? FAB__PTX_S_REG : FAB__PTX_S_PARAM};
        uint8_t vec = 1;
        for (;;) {
            if (ps->tok.kind != FAB__PTX_TK_DOT)
                return fab__ptx_fail(ps, ps->tok.line, "a parameter's type expected");
            uint8_t sp = fab__ptx_space_of(ps->tok.s, ps->tok.len);
            if (fab__ptx_is_dot(ps, ".align")) {
                uint64_t a;
                if (!fab__ptx_advance(ps) || !fab__ptx_expect_uint(ps, ".align", 1u << 20, &a))
                    return false;
                if (a == 0 || (a & (a - 1)))
                    return fab__ptx_fail(ps, line, ".align takes a power of two");
                p.align = (uint32_t)a;
                continue;
            }
            if (fab__ptx_is_dot(ps, ".ptr")) {
                p.ptr = true;
            } else if (p.ptr && sp != FAB__PTX_S_COUNT) {
                p.ptr_space = sp;
            } else if (!fab__ptx_is_vec(ps, &vec)) {
                p.type = fab__ptx_type_of(ps->tok.s, ps->tok.len);
                if (p.type == FAB__PTX_T_NONE)
                    return fab__ptx_fail(ps, ps->tok.line, "'%.*s' is no type of a parameter",
                                         (int)ps->tok.len, ps->tok.s);
                if (!fab__ptx_advance(ps))
                    return false;
                break;
            }
            if (!fab__ptx_advance(ps))
                return false;
        }
        /* .ptr's attributes may follow the type too */
        while (fab__ptx_is_dot(ps, ".ptr") || (p.ptr && ps->tok.kind == FAB__PTX_TK_DOT)) {
            if (fab__ptx_is_dot(ps, ".ptr")) {
                p.ptr = true;
            } else if (fab__ptx_is_dot(ps, ".align")) {
                uint64_t a;
                if (!fab__ptx_advance(ps) || !fab__ptx_expect_uint(ps, ".align", 1u << 20, &a))
                    return false;
                if (a == 0 || (a & (a - 1)))
                    return fab__ptx_fail(ps, line, ".align takes a power of two");
                p.align = (uint32_t)a;
                continue;
            } else {
                uint8_t sp = fab__ptx_space_of(ps->tok.s, ps->tok.len);
                if (sp == FAB__PTX_S_COUNT)
                    return fab__ptx_fail(ps, ps->tok.line, "'%.*s' is no attribute of a .ptr parameter",
                                         (int)ps->tok.len, ps->tok.s);
                p.ptr_space = sp;
            }
            if (!fab__ptx_advance(ps))
                return false;
        }
        if (ps->tok.kind != FAB__PTX_TK_IDENT)
            return fab__ptx_fail(ps, ps->tok.line, "a parameter's name expected");
        if (!(p.name = fab__ptx_arena_strndup(ps->arena, ps->tok.s, ps->tok.len)))
            return fab__ptx_nomem(ps);
        if (!fab__ptx_advance(ps))
            return false;
        uint64_t dims[FAB__PTX_MAX_DIMS], elems = 1;
        uint32_t ndims;
        bool open;
        if (!fab__ptx_parse_dims_of(ps, dims, &ndims, &open))
            return false;
        if (open && !proto)
            return fab__ptx_fail(ps, ps->tok.line, "parameter %s has an open dimension", p.name);
        for (uint32_t i = 0; i < ndims; i++) {
            if (dims[i] && !fab__ptx_mul(elems, dims[i], &elems))
                return fab__ptx_fail(ps, ps->tok.line, "parameter %s is too large", p.name);
        }
        uint32_t ts = fab__ptx_type_size(p.type) * vec;
        if (!fab__ptx_mul(elems, ts, &p.size))
            return fab__ptx_fail(ps, ps->tok.line, "parameter %s is too large", p.name);
        if (!p.align)
            p.align = ts;
        fab__ptx_param_t *slot = fab__ptx_vec_push(ps->arena, params, sizeof(*slot));
        if (!slot)
            return fab__ptx_nomem(ps);
        *slot = p;
        if (fab__ptx_is_punct(ps, ')'))
            return fab__ptx_advance(ps);
        if (!fab__ptx_expect_punct(ps, ',', "or ')' after a parameter"))
            return false;
    }
}

static const char *const fab__ptx_comp_names[] = {".x", ".y", ".z", ".w"};

bool fab__ptx_parse_reg(fab__ptx_ps_t *ps)
{
    uint32_t line = ps->tok.line;
    fab__ptx_body_t *body = ps->body;
    if (!fab__ptx_advance(ps))
        return false;
    uint8_t vec = 1, type;
    if (fab__ptx_is_vec(ps, &vec) && !fab__ptx_advance(ps))
        return false;
    if (ps->tok.kind != FAB__PTX_TK_DOT ||
        (type = fab__ptx_type_of(ps->tok.s, ps->tok.len)) == FAB__PTX_T_NONE)
        return fab__ptx_fail(ps, line, ".reg takes a type, as .reg .b32 %%r<4>");
    if (!fab__ptx_advance(ps))
        return false;
    for (;;) {
        if (ps->tok.kind != FAB__PTX_TK_IDENT)
            return fab__ptx_fail(ps, ps->tok.line, "a register's name expected");
        fab__ptx_tok_t name = ps->tok;
        if (!fab__ptx_advance(ps))
            return false;
        uint64_t n = 0;
        bool range = false;
        if (fab__ptx_is_punct(ps, '<')) {
            range = true;
            if (!fab__ptx_advance(ps) ||
                !fab__ptx_expect_uint(ps, "a register range's count", FAB__PTX_MAX_REGS, &n) ||
                !fab__ptx_expect_punct(ps, '>', "after a register range's count"))
                return false;
        }
        uint64_t count = range ? n : 1;
        if (body->regs.n + count * vec > FAB__PTX_MAX_REGS)
            return fab__ptx_fail(ps, line, "a function of more than %u registers", FAB__PTX_MAX_REGS);
        for (uint64_t i = 0; i < count; i++) {
            char num[24];
            int nl = range ? snprintf(num, sizeof(num), "%llu", (unsigned long long)i) : 0;
            uint32_t blen = name.len + (uint32_t)nl;
            char *nm = fab__ptx_arena_alloc(ps->arena, (size_t)blen + 1);
            if (!nm)
                return fab__ptx_nomem(ps);
            memcpy(nm, name.s, name.len);
            memcpy(nm + name.len, num, (size_t)nl);
            if (fab__ptx_declared_here(ps, nm, blen))
                return fab__ptx_fail(ps, name.line, "register %s is declared twice", nm);
            uint32_t first = body->regs.n;
            for (uint8_t k = 0; k < vec; k++) {
                fab__ptx_reg_t *r = fab__ptx_vec_push(ps->arena, &body->regs, sizeof(*r));
                if (!r)
                    return fab__ptx_nomem(ps);
                r->type = type;
                r->name = nm;
                if (vec > 1) {
                    /* %v.x .. %v.w, then %v.4 .. for an eight-wide one */
                    char comp[8];
                    int cl = k < 4 ? snprintf(comp, sizeof(comp), "%s", fab__ptx_comp_names[k])
                                   : snprintf(comp, sizeof(comp), ".%u", (unsigned)k);
                    char *en = fab__ptx_arena_alloc(ps->arena, (size_t)blen + (size_t)cl + 1);
                    if (!en)
                        return fab__ptx_nomem(ps);
                    memcpy(en, nm, blen);
                    memcpy(en + blen, comp, (size_t)cl);
                    r->name = en;
                }
            }
            if (!fab__ptx_bind(ps, nm, blen, vec > 1 ? FAB__PTX_B_VREG : FAB__PTX_B_REG, first, vec))
                return false;
        }
        if (fab__ptx_is_punct(ps, ';'))
            return fab__ptx_advance(ps);
        if (!fab__ptx_expect_punct(ps, ',', "or ';' after a register"))
            return false;
    }
}

bool fab__ptx_parse_proto(fab__ptx_ps_t *ps, const char *name, uint32_t len, uint32_t line)
{
    if (!fab__ptx_advance(ps)) /* past .callprototype */
        return false;
    fab__ptx_vec_t rets = {0}, params = {0};
    if (fab__ptx_is_punct(ps, '(') && !fab__ptx_parse_params(ps, &rets, true))
        return false;
    if (ps->tok.kind != FAB__PTX_TK_IDENT || ps->tok.len != 1 || ps->tok.s[0] != '_')
        return fab__ptx_fail(ps, ps->tok.line, "a .callprototype names its function '_'");
    if (!fab__ptx_advance(ps))
        return false;
    if (fab__ptx_is_punct(ps, '(') && !fab__ptx_parse_params(ps, &params, true))
        return false;
    if (fab__ptx_is_dot(ps, ".noreturn") && !fab__ptx_advance(ps))
        return false;
    if (!fab__ptx_expect_punct(ps, ';', "after a .callprototype"))
        return false;
    if (fab__ptx_declared_here(ps, name, len))
        return fab__ptx_fail(ps, line, "%.*s is declared twice", (int)len, name);
    uint32_t pi = ps->protos.n;
    fab__ptx_proto_t *p = fab__ptx_vec_push(ps->arena, &ps->protos, sizeof(*p));
    char *nm = fab__ptx_arena_strndup(ps->arena, name, len);
    if (!p || !nm)
        return fab__ptx_nomem(ps);
    p->name = nm;
    p->params = params.data;
    p->nparams = params.n;
    p->rets = rets.data;
    p->nrets = rets.n;
    return fab__ptx_bind(ps, nm, len, FAB__PTX_B_PROTO, pi, 0);
}
