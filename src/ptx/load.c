/* Programs: a linked module decoded for the interpreter (fab__ptx_program_*
 * and fab__ptx_kernel_* of ptx.h). It lays out what the engine places
 * itself (module-scope .shared variables in one window per block; each
 * function's frame of .param and .local variables in the lane's local
 * window; each kernel's packed parameter layout), names the built-in
 * functions (vprintf, malloc, free, __assertfail), decodes every defined
 * function (decode.c), sizes each kernel's local window from its static
 * call graph, and fills a register window's constant slots on entry. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "src/ptx/decode.h"

#define FAB__PTX_FUNC_TAG 0xFAB0000000000000ull
#define FAB__PTX_STACK_EXTRA 16384u /* local bytes per lane beyond the static chain when it recurses */

static uint64_t fab__ptx_align_up(uint64_t v, uint64_t a)
{
    if (a < 1)
        a = 1;
    return (v + a - 1) / a * a;
}

static const struct {
    const char *name;
    uint32_t id;
} fab__ptx_builtins[] = {
    {"vprintf", FAB__PTX_BI_VPRINTF},
    {"malloc", FAB__PTX_BI_MALLOC},
    {"free", FAB__PTX_BI_FREE},
    {"__assertfail", FAB__PTX_BI_ASSERTFAIL},
};

/* Frames: a .func's params and results first, then its .local and .param
 * variables; a kernel's params are in the launch's buffer instead. */
static void fab__ptx_layout_frames(fab__ptx_program_t *p)
{
    const fab__ptx_module_t *m = p->module;
    uint64_t *cur = calloc(m->nfuncs ? m->nfuncs : 1, sizeof(*cur));
    for (uint32_t fi = 0; fi < m->nfuncs; fi++) {
        const fab__ptx_func_t *f = &m->funcs[fi];
        fab__ptx_code_t *c = &p->codes[fi];
        uint64_t off = 0;
        for (uint32_t i = 0; i < f->nparams; i++) {
            const fab__ptx_param_t *pa = &f->params[i];
            off = fab__ptx_align_up(off, pa->align);
            if (pa->var != FAB__PTX_NONE && pa->var < m->nvars) {
                p->var_off[pa->var] = (uint32_t)off;
                p->var_kparam[pa->var] = f->entry;
            }
            if (c->param_off)
                c->param_off[i] = (uint32_t)off;
            off += pa->size;
        }
        if (f->entry)
            off = 0;
        for (uint32_t i = 0; i < f->nrets; i++) {
            const fab__ptx_param_t *pa = &f->rets[i];
            off = fab__ptx_align_up(off, pa->align);
            if (pa->var != FAB__PTX_NONE && pa->var < m->nvars)
                p->var_off[pa->var] = (uint32_t)off;
            if (c->ret_off)
                c->ret_off[i] = (uint32_t)off;
            off += pa->size;
        }
        if (cur)
            cur[fi] = off;
    }
    for (uint32_t vi = 0; vi < m->nvars; vi++) {
        const fab__ptx_var_t *v = &m->vars[vi];
        if (v->func == FAB__PTX_NONE || v->func >= m->nfuncs || !cur)
            continue;
        if (v->space != FAB__PTX_S_LOCAL && v->space != FAB__PTX_S_PARAM)
            continue;
        bool own = false;
        const fab__ptx_func_t *f = &m->funcs[v->func];
        for (uint32_t i = 0; i < f->nparams; i++)
            own |= f->params[i].var == vi;
        for (uint32_t i = 0; i < f->nrets; i++)
            own |= f->rets[i].var == vi;
        if (own)
            continue;
        uint64_t off = fab__ptx_align_up(cur[v->func], v->align ? v->align : 1);
        p->var_off[vi] = (uint32_t)off;
        cur[v->func] = off + v->size;
    }
    /* Every frame is a multiple of the largest alignment a frame's variable
     * asks, so that frames stacked by calls, and lanes' windows one after
     * the other, keep each variable on its boundary (a block's local memory
     * starts on it, sched.c). */
    uint64_t la = 16;
    for (uint32_t vi = 0; vi < m->nvars; vi++) {
        const fab__ptx_var_t *v = &m->vars[vi];
        if (v->func != FAB__PTX_NONE && (v->space == FAB__PTX_S_LOCAL || v->space == FAB__PTX_S_PARAM) &&
            v->align > la)
            la = v->align;
    }
    p->local_align = (uint32_t)la;
    for (uint32_t fi = 0; fi < m->nfuncs && cur; fi++)
        p->codes[fi].frame = (uint32_t)fab__ptx_align_up(cur[fi], la);
    free(cur);
}

/* The deepest chain of frames and windows from code c; recursion or an
 * indirect call marks the kernel recursive. */
static void fab__ptx_chain(const fab__ptx_program_t *p, uint32_t fi, uint8_t *on, uint64_t *frame_out,
                           uint64_t *slots_out, bool *rec)
{
    const fab__ptx_code_t *c = &p->codes[fi];
    uint64_t bf = 0, bs = 0;
    on[fi] = 1;
    for (uint32_t i = 0; i < c->nx; i++) {
        const fab__ptx_x_t *x = &c->x[i];
        if (x->op != FAB__PTX_OP_CALL)
            continue;
        if (x->target == FAB__PTX_NONE) {
            *rec = true;
            continue;
        }
        if (p->codes[x->target].builtin)
            continue;
        if (on[x->target]) {
            *rec = true;
            continue;
        }
        uint64_t f, s;
        fab__ptx_chain(p, x->target, on, &f, &s, rec);
        bf = f > bf ? f : bf;
        bs = s > bs ? s : bs;
    }
    on[fi] = 0;
    *frame_out = c->frame + bf;
    *slots_out = c->nslots + bs;
}

fab__ptx_status_t fab__ptx_program_load(fab__ptx_module_t *module, fab__ptx_program_t **program_out,
                                        fab__ptx_diag_t *diag)
{
    if (diag)
        memset(diag, 0, sizeof(*diag));
    *program_out = NULL;
    if (!module)
        return FAB__PTX_OK; /* nothing parsed (the front end's placeholder): no program */
    fab__ptx_program_t *p = calloc(1, sizeof(*p));
    if (!p)
        return FAB__PTX_E_NOMEM;
    p->module = module;
    const fab__ptx_module_t *m = module;
    int rc = FAB__PTX_E_NOMEM;
    size_t nv = m->nvars ? m->nvars : 1, nf = m->nfuncs ? m->nfuncs : 1;
    p->codes = calloc(nf, sizeof(*p->codes));
    p->var_off = calloc(nv, sizeof(*p->var_off));
    p->var_kparam = calloc(nv, sizeof(*p->var_kparam));
    p->var_placeable = calloc(nv, sizeof(*p->var_placeable));
    p->var_addr = calloc(nv, sizeof(*p->var_addr));
    p->gvars = calloc(nv, sizeof(*p->gvars));
    if (!p->codes || !p->var_off || !p->var_kparam || !p->var_placeable || !p->var_addr || !p->gvars)
        goto fail;
    p->ncodes = m->nfuncs;
    if (m->address_size == 32) {
        rc = FAB__PTX_E_UNSUPPORTED;
        if (diag)
            snprintf(diag->msg, sizeof(diag->msg), ".address_size 32: the engine runs 64-bit PTX only");
        goto fail;
    }
    /* .shared: the module's variables and those of its .funcs first, in one layout every
     * kernel has; then each kernel's own (declared in its body, which no other function can
     * name) after them, the kernels' overlapping: a kernel's window is the first part and
     * its own, not every kernel's (a module of hundreds of CUB kernels). */
    uint64_t sh = 0, sa = 16;
    p->kshared = calloc(nf, sizeof(*p->kshared));
    if (!p->kshared)
        goto fail;
    for (int pass = 0; pass < 2; pass++) {
        for (uint32_t vi = 0; vi < m->nvars; vi++) {
            const fab__ptx_var_t *v = &m->vars[vi];
            bool own = v->func != FAB__PTX_NONE && m->funcs[v->func].entry;
            if (pass == 0 && (v->space == FAB__PTX_S_GLOBAL || v->space == FAB__PTX_S_CONST) &&
                v->linkage != FAB__PTX_L_EXTERN && v->func == FAB__PTX_NONE) {
                p->var_placeable[vi] = true;
                p->gvars[p->ngvars++] = vi;
            }
            if (pass == 0 && v->space == FAB__PTX_S_SHARED && v->align > sa)
                sa = v->align; /* the dynamic array's too */
            if (v->space != FAB__PTX_S_SHARED || v->unsized || !v->size || own != (pass == 1))
                continue;
            uint64_t *at = own ? &p->kshared[v->func] : &sh;
            if (own && *at < p->static_shared)
                *at = p->static_shared;
            *at = fab__ptx_align_up(*at, v->align ? v->align : 1);
            p->var_off[vi] = (uint32_t)*at;
            *at += v->size;
        }
        if (pass == 0)
            p->static_shared = (uint32_t)sh;
    }
    p->shared_align = (uint32_t)sa;
    size_t nk = 0;
    for (uint32_t fi = 0; fi < m->nfuncs; fi++) {
        const fab__ptx_func_t *f = &m->funcs[fi];
        fab__ptx_code_t *c = &p->codes[fi];
        c->func = f;
        c->index = fi;
        uint32_t n = f->nparams + f->nrets;
        c->param_off = calloc(n ? n : 1, sizeof(uint32_t));
        if (!c->param_off)
            goto fail;
        c->ret_off = c->param_off + f->nparams;
        if (!f->defined)
            for (size_t b = 0; b < sizeof(fab__ptx_builtins) / sizeof(fab__ptx_builtins[0]); b++)
                if (strcmp(f->name, fab__ptx_builtins[b].name) == 0)
                    c->builtin = fab__ptx_builtins[b].id;
        nk += f->entry && f->defined;
    }
    fab__ptx_layout_frames(p);
    for (uint32_t fi = 0; fi < m->nfuncs; fi++)
        if (m->funcs[fi].defined && (rc = fab__ptx_decode_func(p, fi, diag)))
            goto fail;
    p->kernels = calloc(nk ? nk : 1, sizeof(*p->kernels));
    uint8_t *on = calloc(nf, 1);
    if (!p->kernels || !on) {
        free(on);
        rc = FAB__PTX_E_NOMEM;
        goto fail;
    }
    for (uint32_t fi = 0; fi < m->nfuncs; fi++) {
        const fab__ptx_func_t *f = &m->funcs[fi];
        if (!f->entry || !f->defined)
            continue;
        struct fab__ptx_kernel *k = &p->kernels[p->nkernels++];
        k->program = p;
        k->code = &p->codes[fi];
        k->param_off = calloc(f->nparams ? 2 * f->nparams : 1, sizeof(size_t));
        if (!k->param_off) {
            free(on);
            rc = FAB__PTX_E_NOMEM;
            goto fail;
        }
        k->param_size = k->param_off + f->nparams;
        uint64_t off = 0;
        for (uint32_t i = 0; i < f->nparams; i++) {
            off = fab__ptx_align_up(off, f->params[i].align);
            k->param_off[i] = off;
            k->param_size[i] = f->params[i].size;
            off += f->params[i].size;
        }
        uint64_t frame, slots;
        bool rec = false;
        fab__ptx_chain(p, fi, on, &frame, &slots, &rec);
        k->recursive = rec;
        k->lstride = (uint32_t)fab__ptx_align_up(frame + (rec ? FAB__PTX_STACK_EXTRA : 0), p->local_align);
        k->max_window = (uint32_t)slots;
        uint64_t kst = p->kshared[fi] > p->static_shared ? p->kshared[fi] : p->static_shared;
        k->shared_dyn_off = (uint32_t)fab__ptx_align_up(kst, p->shared_align);
        k->block_align = p->local_align > p->shared_align ? p->local_align : p->shared_align;
        fab__ptx_kernel_info_t *ki = &k->info;
        ki->name = f->name;
        ki->nparams = f->nparams;
        ki->param_bytes = off;
        ki->static_shared = (size_t)kst;
        ki->local_bytes = k->lstride;
        ki->nregs = k->code->nregs;
        ki->max_threads = 1024;
        if (f->maxntid[0])
            ki->max_threads = f->maxntid[0] * (f->maxntid[1] ? f->maxntid[1] : 1) * (f->maxntid[2] ? f->maxntid[2] : 1);
        if (f->reqntid[0]) {
            memcpy(ki->reqntid, f->reqntid, sizeof(ki->reqntid));
            for (int d = 0; d < 3; d++)
                ki->reqntid[d] = ki->reqntid[d] ? ki->reqntid[d] : 1;
            ki->max_threads = ki->reqntid[0] * ki->reqntid[1] * ki->reqntid[2];
        }
    }
    free(on);
    *program_out = p;
    return FAB__PTX_OK;
fail:
    p->module = NULL; /* a failed load leaves the module the caller's */
    fab__ptx_program_free(p);
    return (fab__ptx_status_t)rc;
}

void fab__ptx_program_free(fab__ptx_program_t *p)
{
    if (!p)
        return;
    for (uint32_t i = 0; i < p->ncodes; i++) {
        fab__ptx_code_t *c = &p->codes[i];
        free(c->x);
        free(c->consts);
        for (uint32_t j = 0; j < c->ncalls; j++)
            free(c->calls[j].arg_off);
        free(c->calls);
        free(c->param_off);
        free(c->prof);
    }
    for (size_t i = 0; i < p->nkernels; i++)
        free(p->kernels[i].param_off);
    free(p->kernels);
    free(p->codes);
    free(p->var_off);
    free(p->kshared);
    free(p->var_kparam);
    free(p->var_placeable);
    free(p->var_addr);
    free(p->gvars);
    fab__ptx_module_free(p->module);
    free(p);
}

size_t fab__ptx_program_nvars(const fab__ptx_program_t *p)
{
    return p->ngvars;
}

void fab__ptx_program_var(const fab__ptx_program_t *p, size_t i, fab__ptx_var_info_t *info_out)
{
    const fab__ptx_var_t *v = &p->module->vars[p->gvars[i]];
    info_out->name = v->name;
    info_out->space = v->space;
    info_out->linkage = v->linkage;
    info_out->size = v->size;
    info_out->align = v->align ? v->align : 1;
    info_out->managed = v->managed;
}

void fab__ptx_program_place(fab__ptx_program_t *p, size_t i, void *address)
{
    p->var_addr[p->gvars[i]] = address;
}

static uint64_t fab__ptx_sym_value(const fab__ptx_program_t *p, uint8_t symkind, uint32_t sym)
{
    if (symkind == FAB__PTX_SYM_FUNC)
        return FAB__PTX_FUNC_TAG | sym;
    if (sym >= p->module->nvars)
        return 0;
    const fab__ptx_var_t *v = &p->module->vars[sym];
    if (v->space == FAB__PTX_S_SHARED)
        return p->var_off[sym];
    return (uint64_t)(uintptr_t)p->var_addr[sym];
}

void fab__ptx_program_init_var(const fab__ptx_program_t *p, size_t i)
{
    const fab__ptx_var_t *v = &p->module->vars[p->gvars[i]];
    unsigned char *dst = p->var_addr[p->gvars[i]];
    if (!dst || !v->size)
        return;
    if (v->init)
        memcpy(dst, v->init, v->size);
    else
        memset(dst, 0, v->size);
    for (uint32_t r = 0; r < v->nrelocs; r++) {
        const fab__ptx_reloc_t *rl = &v->relocs[r];
        uint64_t val = fab__ptx_sym_value(p, rl->symkind, rl->sym) + (uint64_t)rl->addend;
        val = rl->shift < 8 ? val >> (8 * rl->shift) : 0;
        if (rl->offset + rl->width <= v->size && rl->width <= 8)
            memcpy(dst + rl->offset, &val, rl->width); /* little-endian, as the device */
    }
}

const fab__ptx_kernel_t *fab__ptx_program_kernel(const fab__ptx_program_t *p, const char *name)
{
    for (size_t i = 0; i < p->nkernels; i++)
        if (strcmp(p->kernels[i].info.name, name) == 0)
            return &p->kernels[i];
    return NULL;
}

size_t fab__ptx_program_nkernels(const fab__ptx_program_t *p)
{
    return p->nkernels;
}

const fab__ptx_kernel_t *fab__ptx_program_kernel_at(const fab__ptx_program_t *p, size_t i)
{
    return i < p->nkernels ? &p->kernels[i] : NULL;
}

void fab__ptx_kernel_info(const fab__ptx_kernel_t *k, fab__ptx_kernel_info_t *info_out)
{
    *info_out = k->info;
}

bool fab__ptx_program_func_slots(const fab__ptx_program_t *p, const char *name, uint32_t *ptx_regs_out,
                                 uint32_t *slots_out)
{
    for (uint32_t i = 0; i < p->ncodes; i++) {
        const fab__ptx_code_t *c = &p->codes[i];
        if (!c->decoded || strcmp(c->func->name, name) != 0)
            continue;
        *ptx_regs_out = c->nvregs;
        *slots_out = c->nregs;
        return true;
    }
    return false;
}

void fab__ptx_kernel_param(const fab__ptx_kernel_t *k, uint32_t i, size_t *offset_out, size_t *size_out)
{
    *offset_out = i < k->info.nparams ? k->param_off[i] : 0;
    *size_out = i < k->info.nparams ? k->param_size[i] : 0;
}

/* ---- windows ------------------------------------------------------------------------ */

bool fab__ptx_func_value(const fab__ptx_program_t *p, uint64_t v, uint32_t *index_out)
{
    if ((v & 0xFFFF000000000000ull) != FAB__PTX_FUNC_TAG || (uint32_t)v >= p->ncodes)
        return false;
    *index_out = (uint32_t)v;
    return true;
}

static uint64_t fab__ptx_sreg(const fab__ptx_warp_t *w, unsigned sreg, unsigned comp, unsigned l)
{
    const fab__ptx_launch_t *la = w->run->launch;
    const fab__ptx_block_t *b = w->blk;
    unsigned c = comp < 3 ? comp : 0;
    uint32_t cl = la->cluster[c] ? la->cluster[c] : 1;
    switch (sreg) {
    case FAB__PTX_SR_TID: return w->tid[l][c];
    case FAB__PTX_SR_NTID: return la->block[c];
    case FAB__PTX_SR_LANEID: return l;
    case FAB__PTX_SR_WARPID: return w->id;
    case FAB__PTX_SR_NWARPID: return b->nwarps;
    case FAB__PTX_SR_CTAID: return b->ctaid[c];
    case FAB__PTX_SR_NCTAID: return la->grid[c];
    case FAB__PTX_SR_SMID: return b->linear % 132;
    case FAB__PTX_SR_NSMID: return 132;
    case FAB__PTX_SR_GRIDID: return 1;
    case FAB__PTX_SR_IS_EXPLICIT_CLUSTER: return la->cluster[0] != 0;
    case FAB__PTX_SR_CLUSTERID: return b->ctaid[c] / cl;
    case FAB__PTX_SR_NCLUSTERID: return la->grid[c] / cl;
    case FAB__PTX_SR_CLUSTER_CTAID: return b->ctaid[c] % cl;
    case FAB__PTX_SR_CLUSTER_NCTAID: return cl;
    case FAB__PTX_SR_CLUSTER_CTARANK: {
        uint32_t c0 = la->cluster[0] ? la->cluster[0] : 1, c1 = la->cluster[1] ? la->cluster[1] : 1;
        return b->ctaid[0] % c0 + c0 * (b->ctaid[1] % c1 + c1 * (b->ctaid[2] % (la->cluster[2] ? la->cluster[2] : 1)));
    }
    case FAB__PTX_SR_CLUSTER_NCTARANK:
        return (uint64_t)(la->cluster[0] ? la->cluster[0] : 1) * (la->cluster[1] ? la->cluster[1] : 1) *
               (la->cluster[2] ? la->cluster[2] : 1);
    case FAB__PTX_SR_LANEMASK_EQ: return 1u << l;
    case FAB__PTX_SR_LANEMASK_LE: return (uint32_t)((2ull << l) - 1);
    case FAB__PTX_SR_LANEMASK_LT: return (1u << l) - 1;
    case FAB__PTX_SR_LANEMASK_GE: return ~((1u << l) - 1);
    case FAB__PTX_SR_LANEMASK_GT: return ~(uint32_t)((2ull << l) - 1);
    case FAB__PTX_SR_DYNAMIC_SMEM_SIZE: return la->dynamic_shared;
    case FAB__PTX_SR_TOTAL_SMEM_SIZE: case FAB__PTX_SR_AGGR_SMEM_SIZE: return b->shared_size;
    case FAB__PTX_SR_ENVREG: {
        /* a cooperative launch: %envreg1 and %envreg2 are the high and low halves of
         * its grid-sync workspace's address, as nvcc's grid.sync() reads them */
        uint64_t ws = la->cooperative ? (uint64_t)(uintptr_t)w->run->grid_ws : 0;
        return comp == 1 ? ws >> 32 : comp == 2 ? (uint32_t)ws : 0;
    }
    default: return 0;
    }
}

void fab__ptx_window_init(fab__ptx_warp_t *w, const fab__ptx_code_t *c, uint64_t *R, uint32_t fp)
{
    const fab__ptx_program_t *p = w->run->program;
    uint64_t *K = R + (size_t)(c->nregs + 1) * FAB__PTX_LANES;
    for (uint32_t j = 0; j < c->nconsts; j++, K += FAB__PTX_LANES) {
        const fab__ptx_const_t *k = &c->consts[j];
        uint64_t v = k->value;
        switch (k->kind) {
        case FAB__PTX_C_VAR: v += (uint64_t)(uintptr_t)p->var_addr[k->index]; break;
        case FAB__PTX_C_SHARED: case FAB__PTX_C_KPARAM: v += p->var_off[k->index]; break;
        case FAB__PTX_C_DYNSHARED: v += w->run->kernel->shared_dyn_off; break;
        case FAB__PTX_C_LOCAL: v += fp + p->var_off[k->index]; break;
        case FAB__PTX_C_FUNC: v = FAB__PTX_FUNC_TAG | k->index; break;
        case FAB__PTX_C_SREG:
            if (k->sreg == FAB__PTX_SR_TID || k->sreg == FAB__PTX_SR_LANEID || (k->sreg >= FAB__PTX_SR_LANEMASK_EQ &&
                                                                               k->sreg <= FAB__PTX_SR_LANEMASK_GT)) {
                for (unsigned l = 0; l < FAB__PTX_LANES; l++)
                    K[l] = fab__ptx_sreg(w, k->sreg, k->comp, l);
                continue;
            }
            v = fab__ptx_sreg(w, k->sreg, k->comp, 0); /* the same in every lane */
            break;
        default: break;
        }
        for (unsigned l = 0; l < FAB__PTX_LANES; l++)
            K[l] = v;
    }
}
