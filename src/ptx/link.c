/* fab__ptx_link (ptx.h): several parsed modules into one. Every name with
 * linkage (.visible, .weak, .common, .extern) is one symbol across the
 * modules: an .extern declaration resolves to the definition another
 * module makes; a .visible definition wins over .weak ones, two .visible
 * ones are an error; .common variables merge into the largest. Internal
 * names stay apart, one entry per module. The result is a deep copy in an
 * arena of its own, every index remapped, so that the inputs may go. */
#include "src/ptx/front.h"

#include <stdio.h>
#include <string.h>

typedef struct fab__ptx_lsym {
    const char *name;
    uint8_t kind;          /* FAB__PTX_SYM_VAR or _FUNC */
    uint32_t mod, index;   /* the chosen entry */
    uint32_t out;          /* its index in the result */
    bool used;             /* an instruction or initializer of some module names it */
    struct fab__ptx_lsym *next;
} fab__ptx_lsym_t;

typedef struct fab__ptx_lk {
    fab__ptx_arena_t *tmp, *arena;
    fab__ptx_diag_t *diag;
    const fab__ptx_module_t *const *mods;
    size_t n;
    fab__ptx_lsym_t *buckets[1024];
    uint32_t **varmap, **funcmap, *protobase;
    fab__ptx_lsym_t ***varsym, ***funcsym; /* the linked symbol of each entry, or NULL */
} fab__ptx_lk_t;

static fab__ptx_status_t fab__ptx_link_fail(fab__ptx_lk_t *lk, const char *fmt, const char *name)
{
    lk->diag->line = 0;
    snprintf(lk->diag->msg, sizeof(lk->diag->msg), fmt, name);
    return FAB__PTX_E_LINK;
}

static uint32_t fab__ptx_link_hash(const char *s)
{
    uint32_t h = 2166136261u;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 16777619u;
    return h & 1023u;
}

static fab__ptx_lsym_t *fab__ptx_link_sym(fab__ptx_lk_t *lk, const char *name, uint8_t kind, bool *fresh)
{
    uint32_t h = fab__ptx_link_hash(name);
    for (fab__ptx_lsym_t *s = lk->buckets[h]; s; s = s->next) {
        if (strcmp(s->name, name) == 0) {
            *fresh = false;
            return s->kind == kind ? s : NULL;
        }
    }
    fab__ptx_lsym_t *s = fab__ptx_arena_alloc(lk->tmp, sizeof(*s));
    if (!s)
        return NULL;
    s->name = name;
    s->kind = kind;
    s->mod = UINT32_MAX;
    s->next = lk->buckets[h];
    lk->buckets[h] = s;
    *fresh = true;
    return s;
}

/* Rank of a candidate for a symbol's one entry: higher wins. */
static int fab__ptx_var_rank(const fab__ptx_var_t *v)
{
    switch (v->linkage) {
    case FAB__PTX_L_VISIBLE: return 3;
    case FAB__PTX_L_COMMON: return 2;
    case FAB__PTX_L_WEAK: return 1;
    default: return 0; /* extern */
    }
}

static int fab__ptx_func_rank(const fab__ptx_func_t *f)
{
    if (!f->defined)
        return 0;
    return f->linkage == FAB__PTX_L_WEAK ? 1 : 3;
}

/* Decide each linked name's entry. */
static fab__ptx_status_t fab__ptx_link_choose(fab__ptx_lk_t *lk)
{
    for (uint32_t m = 0; m < lk->n; m++) {
        const fab__ptx_module_t *mod = lk->mods[m];
        for (uint32_t i = 0; i < mod->nvars; i++) {
            const fab__ptx_var_t *v = &mod->vars[i];
            if (v->func != FAB__PTX_NONE || v->linkage == FAB__PTX_L_INTERNAL)
                continue;
            bool fresh;
            fab__ptx_lsym_t *s = fab__ptx_link_sym(lk, v->name, FAB__PTX_SYM_VAR, &fresh);
            if (!s)
                return fresh ? FAB__PTX_E_NOMEM : fab__ptx_link_fail(lk, "%s is a variable in one module and a function in another", v->name);
            lk->varsym[m][i] = s;
            if (fresh) {
                s->mod = m;
                s->index = i;
                continue;
            }
            const fab__ptx_var_t *w = &lk->mods[s->mod]->vars[s->index];
            int rv = fab__ptx_var_rank(v), rw = fab__ptx_var_rank(w);
            if (rv == 3 && rw == 3)
                return fab__ptx_link_fail(lk, "%s is defined in two modules", v->name);
            if (rv == 2 && rw == 2 && v->size > w->size)
                rw = 1; /* the larger .common one */
            if (rv > rw) {
                s->mod = m;
                s->index = i;
            }
        }
        for (uint32_t i = 0; i < mod->nfuncs; i++) {
            const fab__ptx_func_t *f = &mod->funcs[i];
            if (f->linkage == FAB__PTX_L_INTERNAL)
                continue;
            bool fresh;
            fab__ptx_lsym_t *s = fab__ptx_link_sym(lk, f->name, FAB__PTX_SYM_FUNC, &fresh);
            if (!s)
                return fresh ? FAB__PTX_E_NOMEM : fab__ptx_link_fail(lk, "%s is a variable in one module and a function in another", f->name);
            lk->funcsym[m][i] = s;
            if (fresh) {
                s->mod = m;
                s->index = i;
                continue;
            }
            const fab__ptx_func_t *g = &lk->mods[s->mod]->funcs[s->index];
            int rf = fab__ptx_func_rank(f), rg = fab__ptx_func_rank(g);
            if (rf == 3 && rg == 3)
                return fab__ptx_link_fail(lk, "%s is defined in two modules", f->name);
            if (f->entry != g->entry)
                return fab__ptx_link_fail(lk, "%s is an .entry in one module and a .func in another", f->name);
            if (rf > rg) {
                s->mod = m;
                s->index = i;
            }
        }
    }
    /* an .extern variable nobody defines, that somebody uses (one nobody
     * uses stays a declaration, as a compiler's unused extern does) */
    for (uint32_t m = 0; m < lk->n; m++) {
        const fab__ptx_module_t *mod = lk->mods[m];
        for (uint32_t f = 0; f < mod->nfuncs; f++) {
            for (uint32_t k = 0; k < mod->funcs[f].npool; k++) {
                const fab__ptx_operand_t *o = &mod->funcs[f].pool[k];
                if ((o->kind == FAB__PTX_OPD_SYM || o->kind == FAB__PTX_OPD_ADDR) &&
                    o->symkind == FAB__PTX_SYM_VAR && o->sym < mod->nvars && lk->varsym[m][o->sym])
                    lk->varsym[m][o->sym]->used = true;
            }
        }
        for (uint32_t v = 0; v < mod->nvars; v++) {
            for (uint32_t k = 0; k < mod->vars[v].nrelocs; k++) {
                const fab__ptx_reloc_t *r = &mod->vars[v].relocs[k];
                if (r->symkind == FAB__PTX_SYM_VAR && r->sym < mod->nvars && lk->varsym[m][r->sym])
                    lk->varsym[m][r->sym]->used = true;
            }
        }
    }
    for (uint32_t h = 0; h < 1024; h++) {
        for (fab__ptx_lsym_t *s = lk->buckets[h]; s; s = s->next) {
            if (s->kind != FAB__PTX_SYM_VAR || !s->used)
                continue;
            const fab__ptx_var_t *v = &lk->mods[s->mod]->vars[s->index];
            if (v->linkage == FAB__PTX_L_EXTERN &&
                !(v->space == FAB__PTX_S_SHARED && (v->unsized || v->size == 0)))
                return fab__ptx_link_fail(lk, ".extern variable %s is defined by no module", v->name);
        }
    }
    return FAB__PTX_OK;
}

static char *fab__ptx_link_str(fab__ptx_lk_t *lk, const char *s)
{
    return s ? fab__ptx_arena_strndup(lk->arena, s, strlen(s)) : NULL;
}

static void *fab__ptx_link_dup(fab__ptx_lk_t *lk, const void *p, size_t size)
{
    if (!p || size == 0)
        return NULL;
    void *d = fab__ptx_arena_alloc(lk->arena, size);
    if (d)
        memcpy(d, p, size);
    return d;
}

static uint32_t fab__ptx_link_remap(const fab__ptx_lk_t *lk, uint32_t m, uint8_t symkind, uint32_t sym)
{
    if (sym == FAB__PTX_NONE)
        return sym;
    return symkind == FAB__PTX_SYM_FUNC ? lk->funcmap[m][sym] : lk->varmap[m][sym];
}

static fab__ptx_param_t *fab__ptx_link_params(fab__ptx_lk_t *lk, uint32_t m, const fab__ptx_param_t *p,
                                              uint32_t n, bool *ok)
{
    if (n == 0)
        return NULL;
    fab__ptx_param_t *d = fab__ptx_link_dup(lk, p, (size_t)n * sizeof(*p));
    if (!d) {
        *ok = false;
        return NULL;
    }
    for (uint32_t i = 0; i < n; i++) {
        if (!(d[i].name = fab__ptx_link_str(lk, p[i].name)))
            *ok = false;
        if (p[i].var != FAB__PTX_NONE)
            d[i].var = lk->varmap[m][p[i].var];
    }
    return d;
}

static bool fab__ptx_link_copy_func(fab__ptx_lk_t *lk, uint32_t m, const fab__ptx_func_t *f, fab__ptx_func_t *d)
{
    bool ok = true;
    *d = *f;
    d->name = fab__ptx_link_str(lk, f->name);
    d->params = fab__ptx_link_params(lk, m, f->params, f->nparams, &ok);
    d->rets = fab__ptx_link_params(lk, m, f->rets, f->nrets, &ok);
    fab__ptx_reg_t *regs = fab__ptx_link_dup(lk, f->regs, (size_t)f->nregs * sizeof(*f->regs));
    for (uint32_t i = 0; regs && i < f->nregs; i++)
        regs[i].name = fab__ptx_link_str(lk, f->regs[i].name);
    d->regs = regs;
    d->insns = fab__ptx_link_dup(lk, f->insns, (size_t)f->ninsns * sizeof(*f->insns));
    fab__ptx_operand_t *pool = fab__ptx_link_dup(lk, f->pool, (size_t)f->npool * sizeof(*f->pool));
    for (uint32_t i = 0; pool && i < f->npool; i++) {
        fab__ptx_operand_t *o = &pool[i];
        if (o->kind == FAB__PTX_OPD_SYM || (o->kind == FAB__PTX_OPD_ADDR && o->sym != FAB__PTX_NONE))
            o->sym = fab__ptx_link_remap(lk, m, o->symkind, o->sym);
        else if (o->kind == FAB__PTX_OPD_PROTO)
            o->sym += lk->protobase[m];
    }
    d->pool = pool;
    d->labels = fab__ptx_link_dup(lk, f->labels, (size_t)f->nlabels * sizeof(*f->labels));
    const char **ln = fab__ptx_link_dup(lk, f->label_names, (size_t)f->nlabels * sizeof(*ln));
    for (uint32_t i = 0; ln && i < f->nlabels; i++)
        ln[i] = fab__ptx_link_str(lk, f->label_names[i]);
    d->label_names = ln;
    return ok && d->name && (regs || !f->nregs) && (d->insns || !f->ninsns) && (pool || !f->npool) &&
           (d->labels || !f->nlabels) && (ln || !f->nlabels);
}

static bool fab__ptx_link_copy_var(fab__ptx_lk_t *lk, uint32_t m, const fab__ptx_var_t *v, fab__ptx_var_t *d)
{
    *d = *v;
    d->name = fab__ptx_link_str(lk, v->name);
    if (v->func != FAB__PTX_NONE)
        d->func = lk->funcmap[m][v->func];
    d->init = fab__ptx_link_dup(lk, v->init, (size_t)v->size);
    fab__ptx_reloc_t *r = fab__ptx_link_dup(lk, v->relocs, (size_t)v->nrelocs * sizeof(*r));
    for (uint32_t i = 0; r && i < v->nrelocs; i++)
        r[i].sym = fab__ptx_link_remap(lk, m, r[i].symkind, r[i].sym);
    d->relocs = r;
    return d->name && (d->init || !v->init) && (r || !v->nrelocs);
}

static fab__ptx_status_t fab__ptx_link_run(fab__ptx_lk_t *lk, fab__ptx_module_t *out)
{
    size_t nv = 0, nf = 0, np = 0;
    lk->varmap = fab__ptx_arena_alloc(lk->tmp, lk->n * sizeof(uint32_t *));
    lk->funcmap = fab__ptx_arena_alloc(lk->tmp, lk->n * sizeof(uint32_t *));
    lk->varsym = fab__ptx_arena_alloc(lk->tmp, lk->n * sizeof(fab__ptx_lsym_t **));
    lk->funcsym = fab__ptx_arena_alloc(lk->tmp, lk->n * sizeof(fab__ptx_lsym_t **));
    lk->protobase = fab__ptx_arena_alloc(lk->tmp, lk->n * sizeof(uint32_t));
    if (!lk->varmap || !lk->funcmap || !lk->varsym || !lk->funcsym || !lk->protobase)
        return FAB__PTX_E_NOMEM;
    for (uint32_t m = 0; m < lk->n; m++) {
        const fab__ptx_module_t *mod = lk->mods[m];
        lk->varmap[m] = fab__ptx_arena_alloc(lk->tmp, (mod->nvars + 1) * sizeof(uint32_t));
        lk->funcmap[m] = fab__ptx_arena_alloc(lk->tmp, (mod->nfuncs + 1) * sizeof(uint32_t));
        lk->varsym[m] = fab__ptx_arena_alloc(lk->tmp, (mod->nvars + 1) * sizeof(fab__ptx_lsym_t *));
        lk->funcsym[m] = fab__ptx_arena_alloc(lk->tmp, (mod->nfuncs + 1) * sizeof(fab__ptx_lsym_t *));
        if (!lk->varmap[m] || !lk->funcmap[m] || !lk->varsym[m] || !lk->funcsym[m])
            return FAB__PTX_E_NOMEM;
        lk->protobase[m] = (uint32_t)np;
        np += mod->nprotos;
        if (mod->address_size != lk->mods[0]->address_size)
            return fab__ptx_link_fail(lk, "modules of .address_size 32 and 64 cannot be linked%s", "");
    }
    fab__ptx_status_t st = fab__ptx_link_choose(lk);
    if (st != FAB__PTX_OK)
        return st;
    /* indices: each entry its own, a linked name its first appearance's */
    for (uint32_t m = 0; m < lk->n; m++) {
        const fab__ptx_module_t *mod = lk->mods[m];
        for (uint32_t i = 0; i < mod->nvars; i++) {
            fab__ptx_lsym_t *s = lk->varsym[m][i];
            if (s && s->out) {
                lk->varmap[m][i] = s->out - 1;
                continue;
            }
            if (s)
                s->out = (uint32_t)nv + 1;
            lk->varmap[m][i] = (uint32_t)nv++;
        }
        for (uint32_t i = 0; i < mod->nfuncs; i++) {
            fab__ptx_lsym_t *s = lk->funcsym[m][i];
            if (s && s->out) {
                lk->funcmap[m][i] = s->out - 1;
                continue;
            }
            if (s)
                s->out = (uint32_t)nf + 1;
            lk->funcmap[m][i] = (uint32_t)nf++;
        }
    }
    fab__ptx_var_t *vars = fab__ptx_arena_alloc(lk->arena, (nv + 1) * sizeof(*vars));
    fab__ptx_func_t *funcs = fab__ptx_arena_alloc(lk->arena, (nf + 1) * sizeof(*funcs));
    fab__ptx_proto_t *protos = fab__ptx_arena_alloc(lk->arena, (np + 1) * sizeof(*protos));
    if (!vars || !funcs || !protos)
        return FAB__PTX_E_NOMEM;
    for (uint32_t m = 0; m < lk->n; m++) {
        const fab__ptx_module_t *mod = lk->mods[m];
        for (uint32_t i = 0; i < mod->nvars; i++) {
            fab__ptx_lsym_t *s = lk->varsym[m][i];
            if (s && (s->mod != m || s->index != i))
                continue; /* another module's entry stands for it */
            const fab__ptx_var_t *v = &mod->vars[i];
            if (!fab__ptx_link_copy_var(lk, m, v, &vars[lk->varmap[m][i]]))
                return FAB__PTX_E_NOMEM;
            if (s && v->linkage == FAB__PTX_L_COMMON) {
                /* the largest .common one stands; its alignment is the strictest */
                for (uint32_t k = 0; k < lk->n; k++) {
                    for (uint32_t j = 0; j < lk->mods[k]->nvars; j++) {
                        if (lk->varsym[k][j] == s && lk->mods[k]->vars[j].align > vars[lk->varmap[m][i]].align)
                            vars[lk->varmap[m][i]].align = lk->mods[k]->vars[j].align;
                    }
                }
            }
        }
        for (uint32_t i = 0; i < mod->nfuncs; i++) {
            fab__ptx_lsym_t *s = lk->funcsym[m][i];
            if (s && (s->mod != m || s->index != i))
                continue;
            if (!fab__ptx_link_copy_func(lk, m, &mod->funcs[i], &funcs[lk->funcmap[m][i]]))
                return FAB__PTX_E_NOMEM;
        }
        for (uint32_t i = 0; i < mod->nprotos; i++) {
            const fab__ptx_proto_t *p = &mod->protos[i];
            fab__ptx_proto_t *d = &protos[lk->protobase[m] + i];
            bool ok = true;
            d->name = fab__ptx_link_str(lk, p->name);
            d->params = fab__ptx_link_params(lk, m, p->params, p->nparams, &ok);
            d->rets = fab__ptx_link_params(lk, m, p->rets, p->nrets, &ok);
            d->nparams = p->nparams;
            d->nrets = p->nrets;
            if (!ok || !d->name)
                return FAB__PTX_E_NOMEM;
        }
    }
    out->vars = vars;
    out->nvars = (uint32_t)nv;
    out->funcs = funcs;
    out->nfuncs = (uint32_t)nf;
    out->protos = protos;
    out->nprotos = (uint32_t)np;
    for (uint32_t m = 0; m < lk->n; m++) {
        const fab__ptx_module_t *mod = lk->mods[m];
        if (mod->version_major > out->version_major ||
            (mod->version_major == out->version_major && mod->version_minor > out->version_minor)) {
            out->version_major = mod->version_major;
            out->version_minor = mod->version_minor;
        }
        if (mod->sm > out->sm) {
            out->sm = mod->sm;
            out->sm_arch_specific = mod->sm_arch_specific;
        }
    }
    out->address_size = lk->mods[0]->address_size;
    return FAB__PTX_OK;
}

fab__ptx_status_t fab__ptx_link(const fab__ptx_module_t *const *modules, size_t n,
                                fab__ptx_module_t **module_out, fab__ptx_diag_t *diag)
{
    fab__ptx_diag_t scratch;
    if (!diag)
        diag = &scratch;
    memset(diag, 0, sizeof(*diag));
    *module_out = NULL;
    if (n == 0 || !modules) {
        snprintf(diag->msg, sizeof(diag->msg), "nothing to link");
        return FAB__PTX_E_LINK;
    }
    for (size_t i = 0; i < n; i++) {
        if (!modules[i]) {
            snprintf(diag->msg, sizeof(diag->msg), "module %zu to link is missing", i);
            return FAB__PTX_E_LINK;
        }
    }
    fab__ptx_lk_t lk = {.diag = diag, .mods = modules, .n = n};
    fab__ptx_status_t st = FAB__PTX_E_NOMEM;
    fab__ptx_module_t *out = NULL;
    lk.tmp = fab__ptx_arena_new();
    lk.arena = fab__ptx_arena_new();
    if (!lk.tmp || !lk.arena || !(out = fab__ptx_arena_alloc(lk.arena, sizeof(*out))))
        goto done;
    out->arena = lk.arena;
    st = fab__ptx_link_run(&lk, out);
done:
    fab__ptx_arena_free(lk.tmp);
    if (st != FAB__PTX_OK) {
        fab__ptx_arena_free(lk.arena);
        if (st == FAB__PTX_E_NOMEM)
            snprintf(diag->msg, sizeof(diag->msg), "out of memory");
        return st;
    }
    *module_out = out;
    return FAB__PTX_OK;
}
