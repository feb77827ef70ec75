/* Operands and scopes of function bodies (front.h): the opcode and word
 * tables, special registers, the scopes of nested { } blocks with their
 * labels, and every operand form of module.h, each name
 * resolved to its index: registers, variables and prototypes from the
 * scopes that enclose the use, labels when their scope closes, module-scope
 * symbols declared later at the module's end. Instructions and statements are
 * parse_insn.c's. */
#include "src/ptx/front.h"

#include <pthread.h>
#include <string.h>

/* ---- the opcode and word tables, hashed once --------------------------------------- */

#define FAB__PTX_HT 2048

static const char *const fab__ptx_mnemonics[] = {
#define FAB__PTX_MN(id, mnemonic, section, runs) mnemonic,
    FAB__PTX_OPCODES(FAB__PTX_MN)
#undef FAB__PTX_MN
};

static const char *const fab__ptx_words_text[] = {
    "",
#define FAB__PTX_WT(id, text) text,
    FAB__PTX_WORDS(FAB__PTX_WT)
#undef FAB__PTX_WT
};

static struct {
    pthread_once_t once;
    uint16_t op[FAB__PTX_HT];   /* opcode + 1, 0 empty */
    uint16_t word[FAB__PTX_HT]; /* word, 0 empty */
} fab__ptx_tables = {PTHREAD_ONCE_INIT, {0}, {0}};

static uint32_t fab__ptx_h(const char *s, size_t len)
{
    uint32_t h = 2166136261u;
    for (size_t i = 0; i < len; i++)
        h = (h ^ (unsigned char)s[i]) * 16777619u;
    return h;
}

static void fab__ptx_tables_build(void)
{
    for (unsigned i = 0; i < FAB__PTX_OP_COUNT; i++) {
        const char *m = fab__ptx_mnemonics[i];
        uint32_t h = fab__ptx_h(m, strlen(m)) & (FAB__PTX_HT - 1);
        while (fab__ptx_tables.op[h])
            h = (h + 1) & (FAB__PTX_HT - 1);
        fab__ptx_tables.op[h] = (uint16_t)(i + 1);
    }
    for (unsigned i = 1; i < FAB__PTX_W_COUNT; i++) {
        const char *w = fab__ptx_words_text[i];
        uint32_t h = fab__ptx_h(w, strlen(w)) & (FAB__PTX_HT - 1);
        while (fab__ptx_tables.word[h])
            h = (h + 1) & (FAB__PTX_HT - 1);
        fab__ptx_tables.word[h] = (uint16_t)i;
    }
}

_Static_assert(FAB__PTX_OP_COUNT < FAB__PTX_HT / 2 && FAB__PTX_W_COUNT < FAB__PTX_HT / 2,
               "the tables stay sparse");

void fab__ptx_tables_init(void)
{
    pthread_once(&fab__ptx_tables.once, fab__ptx_tables_build);
}

int fab__ptx_find_op(const char *s, size_t len)
{
    for (uint32_t h = fab__ptx_h(s, len) & (FAB__PTX_HT - 1); fab__ptx_tables.op[h];
         h = (h + 1) & (FAB__PTX_HT - 1)) {
        const char *m = fab__ptx_mnemonics[fab__ptx_tables.op[h] - 1];
        if (strlen(m) == len && memcmp(m, s, len) == 0)
            return fab__ptx_tables.op[h] - 1;
    }
    return -1;
}

int fab__ptx_find_word(const char *s, size_t len)
{
    for (uint32_t h = fab__ptx_h(s, len) & (FAB__PTX_HT - 1); fab__ptx_tables.word[h];
         h = (h + 1) & (FAB__PTX_HT - 1)) {
        const char *w = fab__ptx_words_text[fab__ptx_tables.word[h]];
        if (strlen(w) == len && memcmp(w, s, len) == 0)
            return fab__ptx_tables.word[h];
    }
    return -1;
}

/* ---- special registers ----------------------------------------------------------- */

static const char *const fab__ptx_sreg_names[] = {
#define FAB__PTX_SRN(id, name) name,
    FAB__PTX_SREGS(FAB__PTX_SRN)
#undef FAB__PTX_SRN
};

static bool fab__ptx_digits(const char *s, uint32_t len, uint32_t max, uint32_t *v)
{
    if (len == 0 || len > 3)
        return false;
    uint32_t x = 0;
    for (uint32_t i = 0; i < len; i++) {
        if (s[i] < '0' || s[i] > '9')
            return false;
        x = x * 10 + (uint32_t)(s[i] - '0');
    }
    *v = x;
    return x <= max;
}

/* A special register's id and index (of %envreg<N>, %pm<N>); false if none. */
static bool fab__ptx_sreg_of(const char *s, uint32_t len, uint16_t *id, uint16_t *index)
{
    *index = 0;
    for (unsigned i = 0; i < FAB__PTX_SR_COUNT; i++) {
        const char *n = fab__ptx_sreg_names[i];
        if (strchr(n, '<'))
            continue;
        if (strlen(n) == len && memcmp(n, s, len) == 0) {
            *id = (uint16_t)i;
            return true;
        }
    }
    uint32_t v;
    if (len > 7 && memcmp(s, "%envreg", 7) == 0 && fab__ptx_digits(s + 7, len - 7, 31, &v)) {
        *id = FAB__PTX_SR_ENVREG;
    } else if (len > 6 && memcmp(s, "%pm", 3) == 0 && memcmp(s + len - 3, "_64", 3) == 0 &&
               fab__ptx_digits(s + 3, len - 6, 7, &v)) {
        *id = FAB__PTX_SR_PM64;
    } else if (len > 3 && memcmp(s, "%pm", 3) == 0 && fab__ptx_digits(s + 3, len - 3, 7, &v)) {
        *id = FAB__PTX_SR_PM;
    } else if (len > 22 && memcmp(s, "%reserved_smem_offset_", 22) == 0 &&
               fab__ptx_digits(s + 22, len - 22, 1, &v)) {
        *id = FAB__PTX_SR_RESERVED_SMEM_OFFSET_2;
    } else {
        return false;
    }
    *index = (uint16_t)v;
    return true;
}

static bool fab__ptx_sreg_is_vector(uint16_t id)
{
    return id == FAB__PTX_SR_TID || id == FAB__PTX_SR_NTID || id == FAB__PTX_SR_CTAID ||
           id == FAB__PTX_SR_NCTAID || id == FAB__PTX_SR_CLUSTERID || id == FAB__PTX_SR_NCLUSTERID ||
           id == FAB__PTX_SR_CLUSTER_CTAID || id == FAB__PTX_SR_CLUSTER_NCTAID;
}

/* .x .y .z .w (or .r .g .b .a) as 0..3, -1 for none. */
static int fab__ptx_comp(const fab__ptx_tok_t *t)
{
    if (t->kind != FAB__PTX_TK_DOT || t->len != 2 || t->spaced)
        return -1;
    const char *c = strchr("xyzw", t->s[1]);
    const char *d = strchr("rgba", t->s[1]);
    if (c && *c)
        return (int)(c - "xyzw");
    if (d && *d)
        return (int)(d - "rgba");
    return -1;
}

/* ---- scopes ------------------------------------------------------------------------ */

bool fab__ptx_open_scope(fab__ptx_ps_t *ps)
{
    fab__ptx_scope_t *s = fab__ptx_vec_push(ps->arena, &ps->body->scopes, sizeof(*s));
    if (!s)
        return fab__ptx_nomem(ps);
    s->bind_mark = ps->bound.n;
    s->label_mark = ps->body->pending_labels.n;
    return true;
}

/* Resolve the labels used in the innermost scope that it declares, pass
 * the rest to the enclosing scope, and forget its names. */
bool fab__ptx_close_scope(fab__ptx_ps_t *ps)
{
    fab__ptx_body_t *body = ps->body;
    fab__ptx_scope_t s = ((fab__ptx_scope_t *)body->scopes.data)[--body->scopes.n];
    fab__ptx_pending_t *pl = body->pending_labels.data;
    fab__ptx_operand_t *pool = body->pool.data;
    uint32_t keep = s.label_mark;
    for (uint32_t i = s.label_mark; i < body->pending_labels.n; i++) {
        fab__ptx_binding_t *b = fab__ptx_lookup(ps, pl[i].name, pl[i].len);
        if (b && b->kind == FAB__PTX_B_LABEL)
            pool[pl[i].at].label = b->index;
        else
            pl[keep++] = pl[i];
    }
    body->pending_labels.n = keep;
    if (body->scopes.n == 0 && keep > 0)
        return fab__ptx_fail(ps, pl[0].line, "label %.*s is not declared", (int)pl[0].len, pl[0].name);
    fab__ptx_unbind_to(ps, s.bind_mark);
    return true;
}

bool fab__ptx_add_label(fab__ptx_ps_t *ps, const fab__ptx_tok_t *name)
{
    fab__ptx_body_t *body = ps->body;
    fab__ptx_binding_t *b = fab__ptx_lookup(ps, name->s, name->len);
    if (b) {
        uint32_t mark = ((fab__ptx_scope_t *)body->scopes.data)[body->scopes.n - 1].bind_mark;
        if (b->pos >= mark)
            return fab__ptx_fail(ps, name->line, "%.*s is declared twice in one scope", (int)name->len,
                                 name->s);
    }
    uint32_t li = body->labels.n;
    uint32_t *at = fab__ptx_vec_push(ps->arena, &body->labels, sizeof(*at));
    const char **nm = fab__ptx_vec_push(ps->arena, &body->label_names, sizeof(*nm));
    if (!at || !nm || !(*nm = fab__ptx_arena_strndup(ps->arena, name->s, name->len)))
        return fab__ptx_nomem(ps);
    *at = body->insns.n;
    return fab__ptx_bind(ps, *nm, name->len, FAB__PTX_B_LABEL, li, 0);
}

/* ---- operands ---------------------------------------------------------------------- */

fab__ptx_topd_t *fab__ptx_new_opd(fab__ptx_ps_t *ps, bool kid)
{
    fab__ptx_topd_t *t = fab__ptx_vec_push(ps->arena, kid ? &ps->kids : &ps->tops, sizeof(*t));
    if (!t) {
        fab__ptx_nomem(ps);
        return NULL;
    }
    t->o.reg = t->o.reg2 = t->o.sym = t->o.label = FAB__PTX_NONE;
    return t;
}

#define FAB__PTX_OPD(ps, kid, i) (&((fab__ptx_topd_t *)((kid) ? (ps)->kids.data : (ps)->tops.data))[i])

/* An optional +N / -N / +-N after a register or symbol. */
static bool fab__ptx_offset(fab__ptx_ps_t *ps, int64_t *off)
{
    *off = 0;
    if (!fab__ptx_is_punct(ps, '+') && !fab__ptx_is_punct(ps, '-'))
        return true;
    bool neg = fab__ptx_is_punct(ps, '-');
    if (!fab__ptx_advance(ps))
        return false;
    if (fab__ptx_is_punct(ps, '-')) {
        neg = !neg;
        if (!fab__ptx_advance(ps))
            return false;
    }
    if (ps->tok.kind != FAB__PTX_TK_INT || ps->tok.ival > (uint64_t)INT64_MAX + (neg ? 1 : 0))
        return fab__ptx_fail(ps, ps->tok.line, "an offset is an integer");
    *off = neg ? (int64_t)(0 - ps->tok.ival) : (int64_t)ps->tok.ival;
    return fab__ptx_advance(ps);
}

bool fab__ptx_reg_operand(fab__ptx_ps_t *ps, const char *what, uint32_t *reg)
{
    if (ps->tok.kind != FAB__PTX_TK_IDENT)
        return fab__ptx_fail(ps, ps->tok.line, "%s is a register", what);
    fab__ptx_binding_t *b = fab__ptx_lookup(ps, ps->tok.s, ps->tok.len);
    if (!b || b->kind != FAB__PTX_B_REG)
        return fab__ptx_fail(ps, ps->tok.line, "%s: %.*s is not a declared register", what,
                             (int)ps->tok.len, ps->tok.s);
    *reg = b->index;
    return fab__ptx_advance(ps);
}


/* { a, b, ... } or ( a, b, ... ): the elements go to kids. */
static bool fab__ptx_parse_group(fab__ptx_ps_t *ps, uint32_t ti, char close, uint8_t kind)
{
    uint32_t line = ps->tok.line;
    if (!fab__ptx_advance(ps))
        return false;
    uint32_t first = ps->kids.n;
    if (!fab__ptx_is_punct(ps, close)) {
        for (;;) {
            if (!fab__ptx_parse_operand(ps, true, false))
                return false;
            if (fab__ptx_is_punct(ps, close))
                break;
            if (!fab__ptx_expect_punct(ps, ',', kind == FAB__PTX_OPD_VEC ? "or '}' in a vector" : "or ')' in a list"))
                return false;
        }
    }
    if (kind == FAB__PTX_OPD_VEC && ps->kids.n == first)
        return fab__ptx_fail(ps, line, "an empty vector operand");
    fab__ptx_topd_t *t = FAB__PTX_OPD(ps, false, ti);
    t->o.kind = kind;
    t->kid_first = first;
    t->kids = ps->kids.n - first;
    return fab__ptx_advance(ps);
}

/* [reg+N], [sym+N], [N], and texture's [sym, ...]. */
static bool fab__ptx_parse_addr(fab__ptx_ps_t *ps, bool kid, uint32_t ti)
{
    uint32_t line = ps->tok.line;
    if (!fab__ptx_advance(ps))
        return false;
    fab__ptx_topd_t *t = FAB__PTX_OPD(ps, kid, ti);
    t->o.kind = FAB__PTX_OPD_ADDR;
    if (ps->tok.kind == FAB__PTX_TK_IDENT) {
        fab__ptx_binding_t *b = fab__ptx_lookup(ps, ps->tok.s, ps->tok.len);
        if (b && b->kind == FAB__PTX_B_REG) {
            t->o.reg = b->index;
        } else if (b && (b->kind == FAB__PTX_B_VAR || b->kind == FAB__PTX_B_FUNC)) {
            t->o.sym = b->index;
            t->o.symkind = b->kind == FAB__PTX_B_VAR ? FAB__PTX_SYM_VAR : FAB__PTX_SYM_FUNC;
        } else if (b && b->kind == FAB__PTX_B_VREG) {
            return fab__ptx_fail(ps, line, "an address takes a scalar register, not the vector %.*s",
                                 (int)ps->tok.len, ps->tok.s);
        } else if (b || ps->tok.s[0] == '%') {
            return fab__ptx_fail(ps, line, "%.*s in an address is not a declared register or variable",
                                 (int)ps->tok.len, ps->tok.s);
        } else {
            t->pend_name = ps->tok.s;
            t->pend_len = ps->tok.len;
            t->pend_what = 1;
        }
        if (!fab__ptx_advance(ps))
            return false;
        int64_t off;
        if (!fab__ptx_offset(ps, &off))
            return false;
        t = FAB__PTX_OPD(ps, kid, ti);
        t->o.imm = off;
    } else {
        bool neg = fab__ptx_is_punct(ps, '-');
        if (neg && !fab__ptx_advance(ps))
            return false;
        if (ps->tok.kind != FAB__PTX_TK_INT)
            return fab__ptx_fail(ps, line, "an address is [register+offset], [variable+offset] or [integer]");
        t->o.imm = neg ? (int64_t)(0 - ps->tok.ival) : (int64_t)ps->tok.ival;
        if (!fab__ptx_advance(ps))
            return false;
    }
    if (fab__ptx_is_punct(ps, ',')) {
        /* a texture or surface operand: [tex, {coords}] / [tex, sampler, {coords}] */
        int depth = 0;
        while (depth > 0 || !fab__ptx_is_punct(ps, ']')) {
            if (ps->tok.kind == FAB__PTX_TK_EOF || fab__ptx_is_punct(ps, ';'))
                return fab__ptx_fail(ps, line, "an address's ']' is missing");
            if (fab__ptx_is_punct(ps, '{'))
                depth++;
            else if (fab__ptx_is_punct(ps, '}'))
                depth--;
            if (!fab__ptx_advance(ps))
                return false;
        }
    }
    return fab__ptx_expect_punct(ps, ']', "to close an address");
}

bool fab__ptx_parse_operand(fab__ptx_ps_t *ps, bool kid, bool label_ctx)
{
    uint32_t ti = kid ? ps->kids.n : ps->tops.n;
    fab__ptx_topd_t *t = fab__ptx_new_opd(ps, kid);
    if (!t)
        return false;
    uint32_t line = ps->tok.line;
    if (fab__ptx_is_punct(ps, '{') || fab__ptx_is_punct(ps, '(')) {
        if (kid)
            return fab__ptx_fail(ps, line, "a vector or list inside another");
        bool vec = fab__ptx_is_punct(ps, '{');
        return fab__ptx_parse_group(ps, ti, vec ? '}' : ')', vec ? FAB__PTX_OPD_VEC : FAB__PTX_OPD_LIST);
    }
    if (fab__ptx_is_punct(ps, '['))
        return fab__ptx_parse_addr(ps, kid, ti);
    bool neg = false, bang = false;
    if (fab__ptx_is_punct(ps, '!') || fab__ptx_is_punct(ps, '-')) {
        bang = fab__ptx_is_punct(ps, '!');
        neg = !bang;
        if (!fab__ptx_advance(ps))
            return false;
        t = FAB__PTX_OPD(ps, kid, ti);
    }
    if (ps->tok.kind == FAB__PTX_TK_INT && !bang) {
        t->o.kind = FAB__PTX_OPD_IMM;
        t->o.imm = neg ? (int64_t)(0 - ps->tok.ival) : (int64_t)ps->tok.ival;
        return fab__ptx_advance(ps);
    }
    if (ps->tok.kind == FAB__PTX_TK_FLOAT && !bang) {
        t->o.kind = FAB__PTX_OPD_FIMM;
        t->o.fwidth = ps->tok.fwidth;
        t->o.fbits = ps->tok.fbits ^ (neg ? (ps->tok.fwidth == 4 ? 0x80000000u : (uint64_t)1 << 63) : 0);
        return fab__ptx_advance(ps);
    }
    if (ps->tok.kind != FAB__PTX_TK_IDENT)
        return fab__ptx_fail(ps, line, "an operand expected, not '%.*s'", (int)(ps->tok.len > 40 ? 40 : ps->tok.len),
                             ps->tok.s);
    fab__ptx_tok_t name = ps->tok;
    if (name.len == 1 && name.s[0] == '_' && !bang && !neg) {
        t->o.kind = FAB__PTX_OPD_SINK;
        return fab__ptx_advance(ps);
    }
    if (name.len == 7 && memcmp(name.s, "WARP_SZ", 7) == 0 && !bang) {
        t->o.kind = FAB__PTX_OPD_IMM;
        t->o.imm = neg ? -32 : 32;
        return fab__ptx_advance(ps);
    }
    if (neg)
        return fab__ptx_fail(ps, line, "'-' before %.*s: only numbers take a sign", (int)name.len, name.s);
    if (!fab__ptx_advance(ps))
        return false;
    t = FAB__PTX_OPD(ps, kid, ti);
    if (label_ctx) {
        t->o.kind = FAB__PTX_OPD_LABEL;
        t->pend_name = name.s;
        t->pend_len = name.len;
        t->pend_what = 0;
        return true;
    }
    fab__ptx_binding_t *b = fab__ptx_lookup(ps, name.s, name.len);
    if (bang && (!b || b->kind != FAB__PTX_B_REG))
        return fab__ptx_fail(ps, line, "'!' takes a predicate register, not %.*s", (int)name.len, name.s);
    if (b && b->kind == FAB__PTX_B_REG) {
        t->o.kind = FAB__PTX_OPD_REG;
        t->o.reg = b->index;
        t->o.neg = bang;
        if (fab__ptx_is_punct(ps, '|')) {
            if (!fab__ptx_advance(ps))
                return false;
            uint32_t r2;
            if (!fab__ptx_reg_operand(ps, "the second of a pair", &r2))
                return false;
            t = FAB__PTX_OPD(ps, kid, ti);
            t->o.kind = FAB__PTX_OPD_PAIR;
            t->o.reg2 = r2;
        }
        return true;
    }
    if (b && b->kind == FAB__PTX_B_VREG) {
        int c = fab__ptx_comp(&ps->tok);
        if (c >= 0) {
            if ((uint32_t)c >= b->count)
                return fab__ptx_fail(ps, line, "%.*s has no element %.*s", (int)name.len, name.s,
                                     (int)ps->tok.len, ps->tok.s);
            t->o.kind = FAB__PTX_OPD_REG;
            t->o.reg = b->index + (uint32_t)c;
            return fab__ptx_advance(ps);
        }
        if (kid)
            return fab__ptx_fail(ps, line, "the vector register %.*s inside a vector", (int)name.len, name.s);
        uint32_t first = ps->kids.n;
        for (uint32_t k = 0; k < b->count; k++) {
            fab__ptx_topd_t *e = fab__ptx_new_opd(ps, true);
            if (!e)
                return false;
            e->o.kind = FAB__PTX_OPD_REG;
            e->o.reg = b->index + k;
        }
        t = FAB__PTX_OPD(ps, kid, ti);
        t->o.kind = FAB__PTX_OPD_VEC;
        t->kid_first = first;
        t->kids = b->count;
        return true;
    }
    if (b && (b->kind == FAB__PTX_B_VAR || b->kind == FAB__PTX_B_FUNC)) {
        t->o.kind = FAB__PTX_OPD_SYM;
        t->o.symkind = b->kind == FAB__PTX_B_VAR ? FAB__PTX_SYM_VAR : FAB__PTX_SYM_FUNC;
        t->o.sym = b->index;
        int64_t off;
        if (!fab__ptx_offset(ps, &off))
            return false;
        FAB__PTX_OPD(ps, kid, ti)->o.imm = off;
        return true;
    }
    if (b && b->kind == FAB__PTX_B_PROTO) {
        t->o.kind = FAB__PTX_OPD_PROTO;
        t->o.sym = b->index;
        return true;
    }
    if (b && b->kind == FAB__PTX_B_TARGETS) {
        t->o.kind = FAB__PTX_OPD_LIST;
        t->o.first = b->index;
        t->o.elems = b->count;
        t->kid_first = UINT32_MAX; /* already in the pool */
        return true;
    }
    if (b && b->kind == FAB__PTX_B_LABEL) {
        t->o.kind = FAB__PTX_OPD_LABEL;
        t->o.label = b->index;
        return true;
    }
    if (name.s[0] == '%') {
        uint16_t id, index;
        if (!fab__ptx_sreg_of(name.s, name.len, &id, &index))
            return fab__ptx_fail(ps, line, "register %.*s is not declared", (int)name.len, name.s);
        t->o.kind = FAB__PTX_OPD_SREG;
        t->o.sreg = id;
        t->o.sreg_comp = index;
        int c = fab__ptx_comp(&ps->tok);
        if (c >= 0) {
            if (!fab__ptx_sreg_is_vector(id) || c > 2)
                return fab__ptx_fail(ps, line, "%.*s has no component %.*s", (int)name.len, name.s,
                                     (int)ps->tok.len, ps->tok.s);
            t->o.sreg_comp = (uint16_t)c;
            return fab__ptx_advance(ps);
        }
        return true;
    }
    /* a module-scope name declared further on */
    t->o.kind = FAB__PTX_OPD_SYM;
    t->pend_name = name.s;
    t->pend_len = name.len;
    t->pend_what = 1;
    int64_t off;
    if (!fab__ptx_offset(ps, &off))
        return false;
    FAB__PTX_OPD(ps, kid, ti)->o.imm = off;
    return true;
}
