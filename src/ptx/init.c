/* Variable initializers (front.h): `= value` and nested `{ ... }` lists for
 * arrays of any dimension and vector variables, integers and floats of
 * every form the lexer reads, stored as the variable's initial bytes (little
 * endian, the type's width each, zeros after the last value), and symbol
 * addresses (sym, sym+N, generic(sym)+N) stored as relocations. An array
 * whose first dimension is open ([]) takes its size from the initializer.
 * Braces place values as C's do: a nested list starts the next row. */
#include "src/ptx/front.h"

#include <string.h>

typedef struct fab__ptx_init {
    fab__ptx_ps_t *ps;
    uint32_t var;
    uint8_t type;
    uint32_t width;          /* bytes per element */
    uint64_t stride[10];     /* elements a list at depth k covers */
    uint32_t ndepth;         /* lists may nest this deep */
    uint64_t limit;          /* elements in all; UINT64_MAX when the first dimension is open */
    unsigned char *bytes;
    uint64_t cap, maxpos;    /* bytes allocated; elements written up to */
    fab__ptx_vec_t relocs;
} fab__ptx_init_t;

static bool fab__ptx_init_room(fab__ptx_init_t *in, uint64_t pos)
{
    uint64_t need = (pos + 1) * in->width;
    if (need > FAB__PTX_MAX_INIT)
        return fab__ptx_fail(in->ps, in->ps->tok.line, "an initialized variable larger than %llu MiB",
                             (unsigned long long)(FAB__PTX_MAX_INIT >> 20));
    if (need <= in->cap)
        return true;
    uint64_t cap = in->cap ? in->cap * 2 : 256;
    while (cap < need)
        cap *= 2;
    if (in->limit != UINT64_MAX && cap > in->limit * in->width)
        cap = in->limit * in->width;
    unsigned char *b = fab__ptx_arena_alloc(in->ps->arena, (size_t)cap);
    if (!b)
        return fab__ptx_nomem(in->ps);
    if (in->cap)
        memcpy(b, in->bytes, (size_t)in->cap);
    in->bytes = b;
    in->cap = cap;
    return true;
}

static uint16_t fab__ptx_f32_to_f16(float f)
{
    uint32_t x;
    memcpy(&x, &f, 4);
    uint32_t sign = (x >> 16) & 0x8000u, exp = (x >> 23) & 0xffu, man = x & 0x7fffffu;
    if (exp == 0xff)
        return (uint16_t)(sign | 0x7c00u | (man ? 0x200u : 0));
    int e = (int)exp - 127 + 15;
    if (e >= 31)
        return (uint16_t)(sign | 0x7c00u);
    if (e <= 0) {
        if (e < -10)
            return (uint16_t)sign;
        man |= 0x800000u;
        uint32_t shift = (uint32_t)(14 - e);
        uint32_t h = man >> shift, rem = man & ((1u << shift) - 1), half = 1u << (shift - 1);
        if (rem > half || (rem == half && (h & 1)))
            h++;
        return (uint16_t)(sign | h);
    }
    uint32_t h = ((uint32_t)e << 10) | (man >> 13), rem = man & 0x1fffu;
    if (rem > 0x1000u || (rem == 0x1000u && (h & 1)))
        h++;
    return (uint16_t)(sign | h);
}

static uint16_t fab__ptx_f32_to_bf16(float f)
{
    uint32_t x;
    memcpy(&x, &f, 4);
    if ((x & 0x7fffffffu) > 0x7f800000u)
        return (uint16_t)((x >> 16) | 0x40u);
    x += 0x7fffu + ((x >> 16) & 1u);
    return (uint16_t)(x >> 16);
}

static bool fab__ptx_is_float_type(uint8_t t)
{
    return t == FAB__PTX_T_F16 || t == FAB__PTX_T_BF16 || t == FAB__PTX_T_F32 || t == FAB__PTX_T_F64 ||
           t == FAB__PTX_T_F16X2 || t == FAB__PTX_T_BF16X2;
}

/* A number's bits as an element of the variable's type. */
static uint64_t fab__ptx_init_bits(const fab__ptx_init_t *in, const fab__ptx_tok_t *t, bool neg)
{
    double d;
    bool is_f = t->kind == FAB__PTX_TK_FLOAT;
    if (is_f && t->fwidth == 4) {
        float f;
        uint32_t u = (uint32_t)t->fbits;
        memcpy(&f, &u, 4);
        d = f;
    } else if (is_f) {
        memcpy(&d, &t->fbits, 8);
    } else {
        d = (double)t->ival;
    }
    if (neg)
        d = -d;
    if (!fab__ptx_is_float_type(in->type)) {
        if (!is_f)
            return neg ? (uint64_t)0 - t->ival : t->ival;
        if (!(d > -9.3e18 && d < 1.8e19))
            return 0;
        return d < 0 ? (uint64_t)(int64_t)d : (uint64_t)d;
    }
    if (in->type == FAB__PTX_T_F64) {
        uint64_t u;
        if (is_f && t->fwidth == 8) {
            u = t->fbits ^ (neg ? (uint64_t)1 << 63 : 0);
        } else {
            memcpy(&u, &d, 8);
        }
        return u;
    }
    if (in->type == FAB__PTX_T_F32 || in->width == 4) {
        uint32_t u;
        if (is_f && t->fwidth == 4) {
            u = (uint32_t)t->fbits ^ (neg ? 0x80000000u : 0);
        } else {
            float f = (float)d;
            memcpy(&u, &f, 4);
        }
        return u;
    }
    /* f16, bf16: integers are the bits as written (0x3C00), floats convert */
    if (!is_f)
        return neg ? (uint64_t)0 - t->ival : t->ival;
    return in->type == FAB__PTX_T_BF16 ? fab__ptx_f32_to_bf16((float)d) : fab__ptx_f32_to_f16((float)d);
}

/* An address at element pos; mask_shift is the byte a 0xFF..(sym) mask
 * takes, or -1 for the whole address. */
static bool fab__ptx_init_symbol(fab__ptx_init_t *in, uint64_t pos, int mask_shift)
{
    fab__ptx_ps_t *ps = in->ps;
    uint32_t line = ps->tok.line;
    bool generic = false;
    if (ps->tok.len == 7 && memcmp(ps->tok.s, "generic", 7) == 0) {
        if (!fab__ptx_advance(ps))
            return false;
        if (!fab__ptx_is_punct(ps, '('))
            return fab__ptx_fail(ps, line, "generic takes a symbol in parentheses");
        if (!fab__ptx_advance(ps))
            return false;
        if (ps->tok.kind != FAB__PTX_TK_IDENT)
            return fab__ptx_fail(ps, line, "generic() takes a variable's name");
        generic = true;
    }
    fab__ptx_tok_t name = ps->tok;
    if (!fab__ptx_advance(ps))
        return false;
    if (generic && !fab__ptx_expect_punct(ps, ')', "to close generic("))
        return false;
    int64_t addend = 0;
    if (fab__ptx_is_punct(ps, '+') || fab__ptx_is_punct(ps, '-')) {
        bool minus = fab__ptx_is_punct(ps, '-');
        if (!fab__ptx_advance(ps))
            return false;
        if (ps->tok.kind != FAB__PTX_TK_INT || ps->tok.ival > INT64_MAX)
            return fab__ptx_fail(ps, line, "an address's offset is an integer");
        addend = minus ? -(int64_t)ps->tok.ival : (int64_t)ps->tok.ival;
        if (!fab__ptx_advance(ps))
            return false;
    }
    if (mask_shift < 0 && in->width != 4 && in->width != 8)
        return fab__ptx_fail(ps, line, "the address of %.*s in a %u-byte element (4 or 8 hold one)",
                             (int)name.len, name.s, in->width);
    if (!fab__ptx_init_room(in, pos))
        return false;
    uint32_t ri = in->relocs.n;
    fab__ptx_reloc_t *r = fab__ptx_vec_push(ps->arena, &in->relocs, sizeof(*r));
    if (!r)
        return fab__ptx_nomem(ps);
    r->offset = pos * in->width;
    r->width = mask_shift < 0 ? (uint8_t)in->width : 1;
    r->shift = mask_shift < 0 ? 0 : (uint8_t)mask_shift;
    r->generic = generic;
    r->addend = addend;
    fab__ptx_binding_t *b = fab__ptx_lookup(ps, name.s, name.len);
    if (b && (b->kind == FAB__PTX_B_VAR || b->kind == FAB__PTX_B_FUNC)) {
        r->symkind = b->kind == FAB__PTX_B_VAR ? FAB__PTX_SYM_VAR : FAB__PTX_SYM_FUNC;
        r->sym = b->index;
        return true;
    }
    if (b)
        return fab__ptx_fail(ps, line, "%.*s has no address", (int)name.len, name.s);
    r->sym = FAB__PTX_NONE;
    fab__ptx_pending_t *p = fab__ptx_vec_push(ps->arena, &ps->pending, sizeof(*p));
    if (!p)
        return fab__ptx_nomem(ps);
    p->name = name.s;
    p->len = name.len;
    p->line = line;
    p->func = FAB__PTX_NONE;
    p->var = in->var;
    p->at = ri;
    p->what = 2;
    return true;
}

/* One value at *pos, advancing it. */
static bool fab__ptx_init_value(fab__ptx_init_t *in, uint64_t *pos, uint64_t end)
{
    fab__ptx_ps_t *ps = in->ps;
    if (*pos >= end)
        return fab__ptx_fail(ps, ps->tok.line, "more initial values than the variable holds");
    if (ps->tok.kind == FAB__PTX_TK_IDENT) {
        if (!fab__ptx_init_symbol(in, *pos, -1))
            return false;
    } else if (ps->tok.kind == FAB__PTX_TK_INT && ps->lx.p < ps->lx.end && *ps->lx.p == '(') {
        /* 0xFF00(sym): one byte of an address (nvcc writes packed structs so) */
        uint64_t mask = ps->tok.ival;
        int shift = -1;
        for (int k = 0; k < 8; k++) {
            if (mask == (uint64_t)0xFF << (8 * k))
                shift = k;
        }
        if (shift < 0)
            return fab__ptx_fail(ps, ps->tok.line, "an address mask is 0xFF shifted by whole bytes");
        if (!fab__ptx_advance(ps) || !fab__ptx_advance(ps)) /* past the mask and '(' */
            return false;
        if (ps->tok.kind != FAB__PTX_TK_IDENT)
            return fab__ptx_fail(ps, ps->tok.line, "an address mask takes a symbol in parentheses");
        if (!fab__ptx_init_symbol(in, *pos, shift) || !fab__ptx_expect_punct(ps, ')', "to close an address mask"))
            return false;
    } else {
        bool neg = false;
        if (fab__ptx_is_punct(ps, '-')) {
            neg = true;
            if (!fab__ptx_advance(ps))
                return false;
        }
        if (ps->tok.kind != FAB__PTX_TK_INT && ps->tok.kind != FAB__PTX_TK_FLOAT)
            return fab__ptx_fail(ps, ps->tok.line, "an initial value is a number or an address");
        if (ps->tok.kind == FAB__PTX_TK_INT && !fab__ptx_is_float_type(in->type) && in->width < 8 &&
            (neg ? ps->tok.ival > (uint64_t)1 << (8 * in->width - 1) : ps->tok.ival >> (8 * in->width) != 0))
            return fab__ptx_fail(ps, ps->tok.line, "the value %s%llu does not fit in %u bytes", neg ? "-" : "",
                                 (unsigned long long)ps->tok.ival, in->width);
        uint64_t bits = fab__ptx_init_bits(in, &ps->tok, neg);
        if (!fab__ptx_init_room(in, *pos))
            return false;
        for (uint32_t b = 0; b < in->width; b++)
            in->bytes[*pos * in->width + b] = b < 8 ? (unsigned char)(bits >> (8 * b)) : 0;
        if (!fab__ptx_advance(ps))
            return false;
    }
    (*pos)++;
    if (*pos > in->maxpos)
        in->maxpos = *pos;
    return true;
}

/* A { } list at depth, starting at start (the current token is '{'). */
static bool fab__ptx_init_list(fab__ptx_init_t *in, uint32_t depth, uint64_t start)
{
    fab__ptx_ps_t *ps = in->ps;
    uint32_t line = ps->tok.line;
    if (depth > in->ndepth)
        return fab__ptx_fail(ps, line, "an initializer nested deeper than the variable's dimensions");
    uint64_t end = depth == 0 ? in->limit : start + in->stride[depth];
    if (!fab__ptx_advance(ps))
        return false;
    uint64_t pos = start;
    if (fab__ptx_is_punct(ps, '}'))
        return fab__ptx_advance(ps);
    for (;;) {
        if (fab__ptx_is_punct(ps, '{')) {
            uint64_t s = depth + 1 <= in->ndepth ? in->stride[depth + 1] : 1;
            uint64_t at = (pos + s - 1) / s * s;
            if (at >= end || s > end - at)
                return fab__ptx_fail(ps, ps->tok.line, "more initial values than the variable holds");
            if (!fab__ptx_init_list(in, depth + 1, at))
                return false;
            pos = at + s;
        } else if (!fab__ptx_init_value(in, &pos, end)) {
            return false;
        }
        if (fab__ptx_is_punct(ps, '}'))
            return fab__ptx_advance(ps);
        if (!fab__ptx_expect_punct(ps, ',', "or '}' in an initializer"))
            return false;
    }
}

uint32_t fab__ptx_merge_bytes(fab__ptx_reloc_t *r, uint32_t n)
{
    uint32_t out = 0;
    for (uint32_t i = 0; i < n;) {
        bool run = i + 8 <= n;
        for (uint32_t k = 0; run && k < 8; k++) {
            const fab__ptx_reloc_t *q = &r[i + k];
            run = q->width == 1 && q->shift == k && q->offset == r[i].offset + k && q->sym == r[i].sym &&
                  q->symkind == r[i].symkind && q->addend == r[i].addend && q->generic == r[i].generic;
        }
        r[out] = r[i];
        if (run) {
            r[out].width = 8;
            i += 8;
        } else {
            i++;
        }
        out++;
    }
    return out;
}

bool fab__ptx_parse_init(fab__ptx_ps_t *ps, uint32_t var, const uint64_t *dims, uint32_t ndims,
                         bool open_first)
{
    fab__ptx_var_t *v = (fab__ptx_var_t *)ps->vars.data + var;
    fab__ptx_init_t in = {.ps = ps, .var = var, .type = v->type, .width = fab__ptx_type_size(v->type)};
    /* the dimensions a list can stand for: the array's, then the vector's */
    uint64_t d[10];
    uint32_t nd = 0;
    for (uint32_t i = 0; i < ndims; i++)
        d[nd++] = dims[i];
    if (v->vec > 1)
        d[nd++] = v->vec;
    in.ndepth = nd;
    uint64_t s = 1;
    for (uint32_t k = nd; k > 0; k--) {
        in.stride[k] = s;
        if (k - 1 > 0 || !open_first)
            s *= d[k - 1];
    }
    in.stride[0] = s;
    in.limit = open_first ? UINT64_MAX : s;
    if (!open_first && s * in.width > FAB__PTX_MAX_INIT)
        return fab__ptx_fail(ps, ps->tok.line, "an initialized variable larger than %llu MiB",
                             (unsigned long long)(FAB__PTX_MAX_INIT >> 20));
    /* A list at depth 0 is the variable; a lone value its first element. */
    if (fab__ptx_is_punct(ps, '{')) {
        if (!fab__ptx_init_list(&in, 0, 0))
            return false;
    } else {
        uint64_t pos = 0;
        if (!fab__ptx_init_value(&in, &pos, in.limit))
            return false;
    }
    v = (fab__ptx_var_t *)ps->vars.data + var;
    uint64_t elems = in.limit;
    if (open_first) {
        uint64_t row = in.stride[1] ? in.stride[1] : 1;
        elems = (in.maxpos + row - 1) / row * row;
        if (elems == 0)
            elems = row;
    }
    uint64_t size = elems * in.width;
    if (size > FAB__PTX_MAX_INIT)
        return fab__ptx_fail(ps, ps->tok.line, "an initialized variable larger than %llu MiB",
                             (unsigned long long)(FAB__PTX_MAX_INIT >> 20));
    unsigned char *bytes = in.bytes;
    if (in.cap < size) {
        bytes = fab__ptx_arena_alloc(ps->arena, (size_t)size);
        if (!bytes)
            return fab__ptx_nomem(ps);
        if (in.cap)
            memcpy(bytes, in.bytes, (size_t)in.cap);
    }
    v->init = bytes;
    v->size = size;
    v->relocs = in.relocs.data;
    v->nrelocs = in.relocs.n;
    return true;
}
