/* The PTX parser's top level (fab__ptx_parse, fab__ptx_module_free): the
 * module directives (.version, .target, .address_size), linkage, entries
 * and functions with their headers and performance directives, the debug
 * directives it skips, and the parser's shared services: the current token,
 * errors with their line, and the scoped name table in which every name of
 * the module resolves to an index. Declarations are read by parse_decl.c,
 * initializers by init.c, bodies by parse_body.c. */
#include "src/ptx/front.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- tokens and errors ---------------------------------------------------------- */

bool fab__ptx_fail(fab__ptx_ps_t *ps, uint32_t line, const char *fmt, ...)
{
    if (ps->failed)
        return false;
    ps->failed = true;
    va_list ap;
    va_start(ap, fmt);
    ps->diag->line = line;
    vsnprintf(ps->diag->msg, sizeof(ps->diag->msg), fmt, ap);
    va_end(ap);
    return false;
}

bool fab__ptx_nomem(fab__ptx_ps_t *ps)
{
    if (!ps->failed) {
        ps->nomem = true;
        ps->failed = true;
        ps->diag->line = ps->tok.line;
        snprintf(ps->diag->msg, sizeof(ps->diag->msg), "out of memory (or past the %zu MiB a module may hold)",
                 FAB__PTX_ARENA_MAX >> 20);
    }
    return false;
}

bool fab__ptx_advance(fab__ptx_ps_t *ps)
{
    ps->tok = fab__ptx_lex_next(&ps->lx);
    if (ps->tok.kind == FAB__PTX_TK_ERROR) {
        ps->failed = true; /* the lexer wrote the diag */
        return false;
    }
    return true;
}

bool fab__ptx_is_punct(const fab__ptx_ps_t *ps, char c)
{
    return ps->tok.kind == FAB__PTX_TK_PUNCT && ps->tok.s[0] == c;
}

bool fab__ptx_is_dot(const fab__ptx_ps_t *ps, const char *word)
{
    size_t n = strlen(word);
    return ps->tok.kind == FAB__PTX_TK_DOT && ps->tok.len == n && memcmp(ps->tok.s, word, n) == 0;
}

static const char *fab__ptx_tok_desc(const fab__ptx_ps_t *ps, char *buf, size_t cap)
{
    if (ps->tok.kind == FAB__PTX_TK_EOF)
        return "the end of the text";
    snprintf(buf, cap, "'%.*s'", (int)(ps->tok.len > 40 ? 40 : ps->tok.len), ps->tok.s);
    return buf;
}

bool fab__ptx_expect_punct(fab__ptx_ps_t *ps, char c, const char *what)
{
    if (!fab__ptx_is_punct(ps, c)) {
        char buf[64];
        return fab__ptx_fail(ps, ps->tok.line, "'%c' expected %s, not %s", c, what,
                             fab__ptx_tok_desc(ps, buf, sizeof(buf)));
    }
    return fab__ptx_advance(ps);
}

bool fab__ptx_expect_uint(fab__ptx_ps_t *ps, const char *what, uint64_t max, uint64_t *v_out)
{
    if (ps->tok.kind != FAB__PTX_TK_INT || ps->tok.ival > max) {
        char buf[64];
        return fab__ptx_fail(ps, ps->tok.line, "%s must be an integer up to %llu, not %s", what,
                             (unsigned long long)max, fab__ptx_tok_desc(ps, buf, sizeof(buf)));
    }
    *v_out = ps->tok.ival;
    return fab__ptx_advance(ps);
}

/* ---- types and spaces ------------------------------------------------------------ */

static const struct {
    const char *name;
    uint8_t type;
    uint8_t size;
} fab__ptx_types[] = {
    {".b8", FAB__PTX_T_B8, 1},       {".b16", FAB__PTX_T_B16, 2},     {".b32", FAB__PTX_T_B32, 4},
    {".b64", FAB__PTX_T_B64, 8},     {".b128", FAB__PTX_T_B128, 16},  {".u8", FAB__PTX_T_U8, 1},
    {".u16", FAB__PTX_T_U16, 2},     {".u32", FAB__PTX_T_U32, 4},     {".u64", FAB__PTX_T_U64, 8},
    {".s8", FAB__PTX_T_S8, 1},       {".s16", FAB__PTX_T_S16, 2},     {".s32", FAB__PTX_T_S32, 4},
    {".s64", FAB__PTX_T_S64, 8},     {".f16", FAB__PTX_T_F16, 2},     {".f16x2", FAB__PTX_T_F16X2, 4},
    {".bf16", FAB__PTX_T_BF16, 2},   {".bf16x2", FAB__PTX_T_BF16X2, 4}, {".tf32", FAB__PTX_T_TF32, 4},
    {".f32", FAB__PTX_T_F32, 4},     {".f64", FAB__PTX_T_F64, 8},     {".e4m3", FAB__PTX_T_E4M3, 1},
    {".e5m2", FAB__PTX_T_E5M2, 1},   {".e4m3x2", FAB__PTX_T_E4M3X2, 2}, {".e5m2x2", FAB__PTX_T_E5M2X2, 2},
    {".pred", FAB__PTX_T_PRED, 1},
};

uint8_t fab__ptx_type_of(const char *s, uint32_t len)
{
    for (size_t i = 0; i < sizeof(fab__ptx_types) / sizeof(fab__ptx_types[0]); i++) {
        if (strlen(fab__ptx_types[i].name) == len && memcmp(fab__ptx_types[i].name, s, len) == 0)
            return fab__ptx_types[i].type;
    }
    return FAB__PTX_T_NONE;
}

uint32_t fab__ptx_type_size(uint8_t type)
{
    for (size_t i = 0; i < sizeof(fab__ptx_types) / sizeof(fab__ptx_types[0]); i++) {
        if (fab__ptx_types[i].type == type)
            return fab__ptx_types[i].size;
    }
    return 0;
}

uint8_t fab__ptx_space_of(const char *s, uint32_t len)
{
    static const struct {
        const char *name;
        uint8_t space;
    } spaces[] = {
        {".reg", FAB__PTX_S_REG},       {".sreg", FAB__PTX_S_SREG},
        {".const", FAB__PTX_S_CONST},   {".global", FAB__PTX_S_GLOBAL},
        {".local", FAB__PTX_S_LOCAL},   {".param", FAB__PTX_S_PARAM},
        {".param::entry", FAB__PTX_S_PARAM}, {".param::func", FAB__PTX_S_PARAM},
        {".shared", FAB__PTX_S_SHARED}, {".shared::cta", FAB__PTX_S_SHARED},
        {".shared::cluster", FAB__PTX_S_SHARED_CLUSTER}, {".tex", FAB__PTX_S_TEX},
    };
    for (size_t i = 0; i < sizeof(spaces) / sizeof(spaces[0]); i++) {
        if (strlen(spaces[i].name) == len && memcmp(spaces[i].name, s, len) == 0)
            return spaces[i].space;
    }
    return FAB__PTX_S_COUNT;
}

/* ---- the name table ---------------------------------------------------------------- */

static uint32_t fab__ptx_hash(const char *s, uint32_t len)
{
    uint32_t h = 2166136261u;
    for (uint32_t i = 0; i < len; i++)
        h = (h ^ (unsigned char)s[i]) * 16777619u;
    return h;
}

fab__ptx_binding_t *fab__ptx_lookup(const fab__ptx_ps_t *ps, const char *name, uint32_t len)
{
    uint32_t h = fab__ptx_hash(name, len);
    for (fab__ptx_binding_t *b = ps->buckets[h & (ps->nbuckets - 1)]; b; b = b->next) {
        if (b->hash == h && b->len == len && memcmp(b->name, name, len) == 0)
            return b;
    }
    return NULL;
}

/* Double the buckets, keeping each chain's order (inner scopes first). */
static bool fab__ptx_rehash(fab__ptx_ps_t *ps)
{
    uint32_t nb = ps->nbuckets * 2;
    fab__ptx_binding_t **buckets = fab__ptx_arena_alloc(ps->arena, (size_t)nb * sizeof(*buckets));
    if (!buckets)
        return fab__ptx_nomem(ps);
    fab__ptx_binding_t **tails = fab__ptx_arena_alloc(ps->arena, (size_t)nb * sizeof(*tails));
    if (!tails)
        return fab__ptx_nomem(ps);
    for (uint32_t i = 0; i < ps->nbuckets; i++) {
        for (fab__ptx_binding_t *b = ps->buckets[i], *next; b; b = next) {
            next = b->next;
            uint32_t k = b->hash & (nb - 1);
            b->next = NULL;
            if (tails[k])
                tails[k]->next = b;
            else
                buckets[k] = b;
            tails[k] = b;
        }
    }
    ps->buckets = buckets;
    ps->nbuckets = nb;
    return true;
}

bool fab__ptx_bind(fab__ptx_ps_t *ps, const char *name, uint32_t len, uint8_t kind, uint32_t index,
                   uint32_t count)
{
    if (ps->nbound >= ps->nbuckets * 2 && !fab__ptx_rehash(ps))
        return false;
    fab__ptx_binding_t *b = fab__ptx_arena_alloc(ps->arena, sizeof(*b));
    fab__ptx_binding_t **slot = fab__ptx_vec_push(ps->arena, &ps->bound, sizeof(*slot));
    if (!b || !slot)
        return fab__ptx_nomem(ps);
    b->name = name;
    b->len = len;
    b->hash = fab__ptx_hash(name, len);
    b->kind = kind;
    b->index = index;
    b->count = count;
    b->pos = ps->bound.n - 1;
    fab__ptx_binding_t **head = &ps->buckets[b->hash & (ps->nbuckets - 1)];
    b->next = *head;
    *head = b;
    *slot = b;
    ps->nbound++;
    return true;
}

void fab__ptx_unbind_to(fab__ptx_ps_t *ps, uint32_t mark)
{
    fab__ptx_binding_t **bound = ps->bound.data;
    while (ps->bound.n > mark) {
        fab__ptx_binding_t *b = bound[--ps->bound.n];
        fab__ptx_binding_t **pp = &ps->buckets[b->hash & (ps->nbuckets - 1)];
        while (*pp && *pp != b)
            pp = &(*pp)->next;
        if (*pp)
            *pp = b->next;
        ps->nbound--;
    }
}

/* ---- module directives ---------------------------------------------------------- */

static bool fab__ptx_parse_version(fab__ptx_ps_t *ps)
{
    uint32_t line = ps->tok.line;
    if (!fab__ptx_advance(ps))
        return false;
    const char *s = ps->tok.s, *e = ps->tok.s + ps->tok.len;
    uint32_t major = 0, minor = 0;
    const char *q = s;
    while (q < e && *q >= '0' && *q <= '9' && major < 1000)
        major = major * 10 + (uint32_t)(*q++ - '0');
    bool ok = ps->tok.kind == FAB__PTX_TK_FLOAT && q > s && q < e && *q == '.';
    const char *r = ++q;
    while (ok && q < e && *q >= '0' && *q <= '9' && minor < 1000)
        minor = minor * 10 + (uint32_t)(*q++ - '0');
    if (!ok || q != e || q == r)
        return fab__ptx_fail(ps, line, ".version takes a major.minor number, as .version 9.0");
    ps->m->version_major = major;
    ps->m->version_minor = minor;
    return fab__ptx_advance(ps);
}

static bool fab__ptx_parse_target(fab__ptx_ps_t *ps)
{
    uint32_t line = ps->tok.line;
    if (!fab__ptx_advance(ps))
        return false;
    for (;;) {
        if (ps->tok.kind != FAB__PTX_TK_IDENT)
            return fab__ptx_fail(ps, line, ".target takes a list of names, as .target sm_90");
        const char *s = ps->tok.s;
        uint32_t n = ps->tok.len;
        if (n > 3 && (memcmp(s, "sm_", 3) == 0 || (n > 8 && memcmp(s, "compute_", 8) == 0))) {
            uint32_t i = s[0] == 's' ? 3 : 8, sm = 0;
            while (i < n && s[i] >= '0' && s[i] <= '9' && sm < 100000)
                sm = sm * 10 + (uint32_t)(s[i++] - '0');
            if (i < n && (s[i] == 'a' || s[i] == 'f') && i + 1 == n)
                ps->m->sm_arch_specific = true;
            else if (i != n || sm == 0)
                return fab__ptx_fail(ps, line, "'%.*s' is no target architecture", (int)n, s);
            ps->m->sm = sm;
        } else if (!((n == 15 && memcmp(s, "texmode_unified", 15) == 0) ||
                     (n == 19 && memcmp(s, "texmode_independent", 19) == 0) ||
                     (n == 5 && memcmp(s, "debug", 5) == 0) ||
                     (n == 14 && memcmp(s, "map_f64_to_f32", 14) == 0))) {
            return fab__ptx_fail(ps, line, "'%.*s' is no .target option", (int)n, s);
        }
        if (!fab__ptx_advance(ps))
            return false;
        if (!fab__ptx_is_punct(ps, ','))
            return true;
        if (!fab__ptx_advance(ps))
            return false;
    }
}

/* .pragma "text"[, "text"...] ; */
static bool fab__ptx_parse_pragma(fab__ptx_ps_t *ps)
{
    uint32_t line = ps->tok.line;
    if (!fab__ptx_advance(ps))
        return false;
    for (;;) {
        if (ps->tok.kind != FAB__PTX_TK_STRING)
            return fab__ptx_fail(ps, line, ".pragma takes a string");
        if (!fab__ptx_advance(ps))
            return false;
        if (!fab__ptx_is_punct(ps, ','))
            break;
        if (!fab__ptx_advance(ps))
            return false;
    }
    return fab__ptx_expect_punct(ps, ';', "after .pragma");
}

/* ---- entries and functions ------------------------------------------------------- */

static fab__ptx_func_t *fab__ptx_func_at(fab__ptx_ps_t *ps, uint32_t i)
{
    return (fab__ptx_func_t *)ps->funcs.data + i;
}

/* n comma-separated integers (1 to 3) into v[0..2]; the rest stay 1 where
 * at least one is written (a .maxntid 256 is 256 x 1 x 1). */
static bool fab__ptx_parse_dims(fab__ptx_ps_t *ps, const char *what, uint32_t *v)
{
    for (int i = 0; i < 3; i++) {
        uint64_t x;
        if (!fab__ptx_expect_uint(ps, what, UINT32_MAX, &x))
            return false;
        v[i] = (uint32_t)x;
        if (!fab__ptx_is_punct(ps, ','))
            break;
        if (i == 2)
            return fab__ptx_fail(ps, ps->tok.line, "%s takes at most 3 numbers", what);
        if (!fab__ptx_advance(ps))
            return false;
    }
    for (int i = 1; i < 3; i++) {
        if (v[i] == 0)
            v[i] = 1;
    }
    return true;
}

static bool fab__ptx_parse_one(fab__ptx_ps_t *ps, const char *what, uint32_t *v)
{
    uint64_t x;
    if (!fab__ptx_expect_uint(ps, what, UINT32_MAX, &x))
        return false;
    *v = (uint32_t)x;
    return true;
}

/* The directives between a function's header and its body. */
static bool fab__ptx_parse_perf(fab__ptx_ps_t *ps, fab__ptx_func_t *f)
{
    for (;;) {
        if (ps->tok.kind != FAB__PTX_TK_DOT)
            return true;
        uint32_t dummy;
        bool ok;
        if (fab__ptx_is_dot(ps, ".pragma")) {
            ok = fab__ptx_parse_pragma(ps);
        } else if (fab__ptx_is_dot(ps, ".noreturn")) {
            f->noreturn = true;
            ok = fab__ptx_advance(ps);
        } else if (fab__ptx_is_dot(ps, ".explicitcluster") || fab__ptx_is_dot(ps, ".blocksareclusters")) {
            ok = fab__ptx_advance(ps);
        } else if (fab__ptx_is_dot(ps, ".maxntid")) {
            ok = fab__ptx_advance(ps) && fab__ptx_parse_dims(ps, ".maxntid", f->maxntid);
        } else if (fab__ptx_is_dot(ps, ".reqntid")) {
            ok = fab__ptx_advance(ps) && fab__ptx_parse_dims(ps, ".reqntid", f->reqntid);
        } else if (fab__ptx_is_dot(ps, ".reqnctapercluster")) {
            ok = fab__ptx_advance(ps) && fab__ptx_parse_dims(ps, ".reqnctapercluster", f->reqnctapercluster);
        } else if (fab__ptx_is_dot(ps, ".minnctapersm")) {
            ok = fab__ptx_advance(ps) && fab__ptx_parse_one(ps, ".minnctapersm", &f->minnctapersm);
        } else if (fab__ptx_is_dot(ps, ".maxnctapersm")) {
            ok = fab__ptx_advance(ps) && fab__ptx_parse_one(ps, ".maxnctapersm", &dummy);
        } else if (fab__ptx_is_dot(ps, ".maxnreg")) {
            ok = fab__ptx_advance(ps) && fab__ptx_parse_one(ps, ".maxnreg", &f->maxnreg);
        } else if (fab__ptx_is_dot(ps, ".maxclusterrank")) {
            ok = fab__ptx_advance(ps) && fab__ptx_parse_one(ps, ".maxclusterrank", &f->maxclusterrank);
        } else if (fab__ptx_is_dot(ps, ".abi_preserve") || fab__ptx_is_dot(ps, ".abi_preserve_control")) {
            ok = fab__ptx_advance(ps) && fab__ptx_parse_one(ps, "an .abi_preserve count", &dummy);
        } else {
            return fab__ptx_fail(ps, ps->tok.line, "'%.*s' is no directive a function's header takes",
                                 (int)ps->tok.len, ps->tok.s);
        }
        if (!ok)
            return false;
    }
}

static bool fab__ptx_parse_function(fab__ptx_ps_t *ps, uint8_t linkage)
{
    uint32_t line = ps->tok.line;
    bool entry = fab__ptx_is_dot(ps, ".entry");
    if (!fab__ptx_advance(ps))
        return false;
    fab__ptx_vec_t rets = {0}, params = {0};
    if (!entry && fab__ptx_is_punct(ps, '(') && !fab__ptx_parse_params(ps, &rets, false))
        return false;
    if (ps->tok.kind != FAB__PTX_TK_IDENT)
        return fab__ptx_fail(ps, ps->tok.line, "%s takes a name", entry ? ".entry" : ".func");
    const char *name = ps->tok.s;
    uint32_t len = ps->tok.len;
    if (!fab__ptx_advance(ps))
        return false;
    if (fab__ptx_is_punct(ps, '(') && !fab__ptx_parse_params(ps, &params, false))
        return false;
    fab__ptx_func_t hdr = {0};
    if (!fab__ptx_parse_perf(ps, &hdr))
        return false;
    bool body = fab__ptx_is_punct(ps, '{');
    if (!body && !fab__ptx_is_punct(ps, ';'))
        return fab__ptx_fail(ps, ps->tok.line, "'{' or ';' expected after the header of %.*s",
                             (int)len, name);
    if (body && linkage == FAB__PTX_L_EXTERN)
        return fab__ptx_fail(ps, line, ".extern %.*s has a body", (int)len, name);
    fab__ptx_binding_t *b = fab__ptx_lookup(ps, name, len);
    uint32_t fi;
    if (b && b->kind == FAB__PTX_B_FUNC) {
        fi = b->index;
        fab__ptx_func_t *f = fab__ptx_func_at(ps, fi);
        if (f->entry != entry)
            return fab__ptx_fail(ps, line, "%.*s is declared both as .entry and as .func", (int)len, name);
        if (body && f->defined)
            return fab__ptx_fail(ps, line, "%.*s is defined twice", (int)len, name);
        if (f->nparams != params.n || f->nrets != rets.n)
            return fab__ptx_fail(ps, line, "%.*s is declared again with other parameters", (int)len, name);
    } else if (b) {
        return fab__ptx_fail(ps, line, "%.*s is declared twice", (int)len, name);
    } else {
        fi = ps->funcs.n;
        if (!fab__ptx_vec_push(ps->arena, &ps->funcs, sizeof(fab__ptx_func_t)))
            return fab__ptx_nomem(ps);
        char *nm = fab__ptx_arena_strndup(ps->arena, name, len);
        if (!nm || !fab__ptx_bind(ps, nm, len, FAB__PTX_B_FUNC, fi, 0))
            return fab__ptx_nomem(ps);
        fab__ptx_func_t *f = fab__ptx_func_at(ps, fi);
        f->name = nm;
        f->entry = entry;
        f->linkage = linkage;
        f->line = line;
    }
    fab__ptx_func_t *f = fab__ptx_func_at(ps, fi);
    if (body || !f->defined) {
        f->params = params.data;
        f->nparams = params.n;
        f->rets = rets.data;
        f->nrets = rets.n;
    }
    if (body || !f->defined)
        f->linkage = linkage;
    f->noreturn |= hdr.noreturn;
    for (int i = 0; i < 3; i++) {
        if (hdr.maxntid[0])
            f->maxntid[i] = hdr.maxntid[i];
        if (hdr.reqntid[0])
            f->reqntid[i] = hdr.reqntid[i];
        if (hdr.reqnctapercluster[0])
            f->reqnctapercluster[i] = hdr.reqnctapercluster[i];
    }
    if (hdr.minnctapersm)
        f->minnctapersm = hdr.minnctapersm;
    if (hdr.maxnreg)
        f->maxnreg = hdr.maxnreg;
    if (hdr.maxclusterrank)
        f->maxclusterrank = hdr.maxclusterrank;
    if (!body)
        return fab__ptx_advance(ps);
    f->defined = true;
    f->line = line;
    return fab__ptx_parse_body(ps, fi);
}

/* .alias a, b; : a names the function b. */
static bool fab__ptx_parse_alias(fab__ptx_ps_t *ps)
{
    uint32_t line = ps->tok.line;
    if (!fab__ptx_advance(ps))
        return false;
    if (ps->tok.kind != FAB__PTX_TK_IDENT)
        return fab__ptx_fail(ps, line, ".alias takes two function names");
    fab__ptx_tok_t a = ps->tok;
    if (!fab__ptx_advance(ps) || !fab__ptx_expect_punct(ps, ',', "between .alias's names"))
        return false;
    fab__ptx_binding_t *b = ps->tok.kind == FAB__PTX_TK_IDENT ? fab__ptx_lookup(ps, ps->tok.s, ps->tok.len) : NULL;
    if (!b || b->kind != FAB__PTX_B_FUNC)
        return fab__ptx_fail(ps, line, ".alias names a function that is not declared");
    if (fab__ptx_lookup(ps, a.s, a.len))
        return fab__ptx_fail(ps, line, "%.*s is declared twice", (int)a.len, a.s);
    if (!fab__ptx_bind(ps, a.s, a.len, FAB__PTX_B_FUNC, b->index, 0))
        return false;
    return fab__ptx_advance(ps) && fab__ptx_expect_punct(ps, ';', "after .alias");
}

static bool fab__ptx_parse_top(fab__ptx_ps_t *ps)
{
    if (!fab__ptx_advance(ps))
        return false;
    if (!fab__ptx_is_dot(ps, ".version"))
        return fab__ptx_fail(ps, ps->tok.line, "PTX text starts with .version");
    while (ps->tok.kind != FAB__PTX_TK_EOF) {
        bool ok;
        if (fab__ptx_is_dot(ps, ".version")) {
            ok = fab__ptx_parse_version(ps);
        } else if (fab__ptx_is_dot(ps, ".target")) {
            ok = fab__ptx_parse_target(ps);
        } else if (fab__ptx_is_dot(ps, ".address_size")) {
            uint64_t v = 64;
            uint32_t line = ps->tok.line;
            ok = fab__ptx_advance(ps) && fab__ptx_expect_uint(ps, ".address_size", 64, &v);
            if (ok && v != 32 && v != 64)
                return fab__ptx_fail(ps, line, ".address_size is 32 or 64");
            ps->m->address_size = (uint32_t)v;
        } else if (fab__ptx_is_dot(ps, ".file") || fab__ptx_is_dot(ps, ".loc")) {
            fab__ptx_lex_skip_line(&ps->lx);
            ok = fab__ptx_advance(ps);
        } else if (fab__ptx_is_dot(ps, ".section")) {
            uint32_t line = ps->tok.line;
            ok = fab__ptx_advance(ps);
            if (ok && ps->tok.kind != FAB__PTX_TK_DOT && ps->tok.kind != FAB__PTX_TK_IDENT)
                return fab__ptx_fail(ps, line, ".section takes a name");
            ok = ok && fab__ptx_advance(ps);
            if (ok && !fab__ptx_is_punct(ps, '{'))
                return fab__ptx_fail(ps, line, ".section's name is followed by '{'");
            if (ok && !fab__ptx_lex_skip_block(&ps->lx))
                return fab__ptx_fail(ps, line, "the .section's '{' is never closed");
            ok = ok && fab__ptx_advance(ps);
        } else if (fab__ptx_is_dot(ps, ".pragma")) {
            ok = fab__ptx_parse_pragma(ps);
        } else if (fab__ptx_is_dot(ps, ".alias")) {
            ok = fab__ptx_parse_alias(ps);
        } else if (ps->tok.kind == FAB__PTX_TK_IDENT) {
            fab__ptx_tok_t name = ps->tok;
            ok = fab__ptx_advance(ps) && fab__ptx_expect_punct(ps, ':', "after a name at module scope");
            if (ok && !fab__ptx_is_dot(ps, ".callprototype"))
                return fab__ptx_fail(ps, name.line, "only a .callprototype may be named at module scope");
            ok = ok && fab__ptx_parse_proto(ps, name.s, name.len, name.line);
        } else if (ps->tok.kind == FAB__PTX_TK_DOT) {
            uint8_t linkage = FAB__PTX_L_INTERNAL;
            bool any = false;
            for (;;) {
                uint8_t l;
                if (fab__ptx_is_dot(ps, ".visible"))
                    l = FAB__PTX_L_VISIBLE;
                else if (fab__ptx_is_dot(ps, ".extern"))
                    l = FAB__PTX_L_EXTERN;
                else if (fab__ptx_is_dot(ps, ".weak"))
                    l = FAB__PTX_L_WEAK;
                else if (fab__ptx_is_dot(ps, ".common"))
                    l = FAB__PTX_L_COMMON;
                else
                    break;
                if (any)
                    return fab__ptx_fail(ps, ps->tok.line, "a declaration with two linkage directives");
                any = true;
                linkage = l;
                if (!fab__ptx_advance(ps))
                    return false;
            }
            if (fab__ptx_is_dot(ps, ".entry") || fab__ptx_is_dot(ps, ".func")) {
                if (linkage == FAB__PTX_L_COMMON)
                    return fab__ptx_fail(ps, ps->tok.line, ".common is for variables only");
                ok = fab__ptx_parse_function(ps, linkage);
            } else if (ps->tok.kind == FAB__PTX_TK_DOT &&
                       fab__ptx_space_of(ps->tok.s, ps->tok.len) != FAB__PTX_S_COUNT) {
                ok = fab__ptx_parse_var(ps, linkage, FAB__PTX_NONE);
            } else {
                return fab__ptx_fail(ps, ps->tok.line, "'%.*s' is no directive of a module's scope",
                                     (int)(ps->tok.len > 40 ? 40 : ps->tok.len), ps->tok.s);
            }
        } else {
            return fab__ptx_fail(ps, ps->tok.line, "'%.*s' is out of place at module scope",
                                 (int)(ps->tok.len > 40 ? 40 : ps->tok.len), ps->tok.s);
        }
        if (!ok)
            return false;
    }
    return fab__ptx_resolve_module(ps);
}

fab__ptx_status_t fab__ptx_parse(const char *text, size_t len, fab__ptx_module_t **module_out,
                                 fab__ptx_diag_t *diag)
{
    fab__ptx_diag_t scratch;
    if (!diag)
        diag = &scratch;
    memset(diag, 0, sizeof(*diag));
    *module_out = NULL;
    if (!text)
        len = 0;
    fab__ptx_ps_t ps = {.diag = diag};
    ps.arena = fab__ptx_arena_new();
    if (!ps.arena)
        goto nomem;
    ps.m = fab__ptx_arena_alloc(ps.arena, sizeof(*ps.m));
    ps.nbuckets = 256;
    ps.buckets = fab__ptx_arena_alloc(ps.arena, ps.nbuckets * sizeof(*ps.buckets));
    if (!ps.m || !ps.buckets)
        goto nomem;
    ps.m->address_size = 64;
    ps.m->arena = ps.arena;
    fab__ptx_lex_init(&ps.lx, text ? text : "", len, diag);
    if (!fab__ptx_parse_top(&ps)) {
        if (ps.nomem)
            goto nomem;
        fab__ptx_arena_free(ps.arena);
        if (!diag->msg[0])
            snprintf(diag->msg, sizeof(diag->msg), "malformed PTX");
        return FAB__PTX_E_SYNTAX;
    }
    ps.m->vars = ps.vars.data;
    ps.m->nvars = ps.vars.n;
    ps.m->funcs = ps.funcs.data;
    ps.m->nfuncs = ps.funcs.n;
    ps.m->protos = ps.protos.data;
    ps.m->nprotos = ps.protos.n;
    *module_out = ps.m;
    return FAB__PTX_OK;
nomem:
    fab__ptx_arena_free(ps.arena);
    snprintf(diag->msg, sizeof(diag->msg), "out of memory");
    return FAB__PTX_E_NOMEM;
}

void fab__ptx_module_free(fab__ptx_module_t *module)
{
    if (module)
        fab__ptx_arena_free(module->arena);
}
