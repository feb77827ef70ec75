/* Fuzz target for the PTX front end (src/ptx: lex.c, parse*.c, init.c,
 * link.c): any bytes as PTX text. A parse must succeed or refuse with
 * FAB__PTX_E_SYNTAX and a message, read nothing outside the input, and
 * leave nothing allocated once its module is freed (the leak checker sees to
 * that). A module that parses must hold only indices in range, and link
 * alone into a copy that holds the same.
 *
 * The input is copied to a buffer of exactly its size, so that a read past
 * the end is caught even when the fuzzer's own buffer is larger. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "src/ptx/ptx.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void fuzz_ptx_check_operand(const fab__ptx_module_t *m, const fab__ptx_func_t *f,
                                   const fab__ptx_operand_t *o)
{
    switch (o->kind) {
    case FAB__PTX_OPD_REG:
        if (o->reg >= f->nregs)
            abort();
        break;
    case FAB__PTX_OPD_PAIR:
        if (o->reg >= f->nregs || o->reg2 >= f->nregs)
            abort();
        break;
    case FAB__PTX_OPD_SYM:
        if (o->symkind == FAB__PTX_SYM_VAR ? o->sym >= m->nvars : o->sym >= m->nfuncs)
            abort();
        break;
    case FAB__PTX_OPD_ADDR:
        if (o->reg != FAB__PTX_NONE && o->reg >= f->nregs)
            abort();
        if (o->sym != FAB__PTX_NONE && (o->symkind == FAB__PTX_SYM_VAR ? o->sym >= m->nvars : o->sym >= m->nfuncs))
            abort();
        break;
    case FAB__PTX_OPD_VEC:
    case FAB__PTX_OPD_LIST:
        if (o->first > f->npool || o->elems > f->npool - o->first)
            abort();
        break;
    case FAB__PTX_OPD_LABEL:
        if (o->label >= f->nlabels)
            abort();
        break;
    case FAB__PTX_OPD_PROTO:
        if (o->sym >= m->nprotos)
            abort();
        break;
    case FAB__PTX_OPD_SREG:
        if (o->sreg >= FAB__PTX_SR_COUNT)
            abort();
        break;
    case FAB__PTX_OPD_IMM:
    case FAB__PTX_OPD_FIMM:
    case FAB__PTX_OPD_SINK:
        break;
    default:
        abort();
    }
}

static void fuzz_ptx_check(const fab__ptx_module_t *m)
{
    for (uint32_t i = 0; i < m->nvars; i++) {
        const fab__ptx_var_t *v = &m->vars[i];
        if (!v->name || (v->func != FAB__PTX_NONE && v->func >= m->nfuncs))
            abort();
        if (v->init && v->size)
            (void)(volatile uint8_t)v->init[v->size - 1];
        for (uint32_t k = 0; k < v->nrelocs; k++) {
            const fab__ptx_reloc_t *r = &v->relocs[k];
            if (r->offset + r->width > v->size ||
                (r->symkind == FAB__PTX_SYM_VAR ? r->sym >= m->nvars : r->sym >= m->nfuncs))
                abort();
        }
    }
    for (uint32_t i = 0; i < m->nfuncs; i++) {
        const fab__ptx_func_t *f = &m->funcs[i];
        if (!f->name)
            abort();
        for (uint32_t k = 0; k < f->ninsns; k++) {
            const fab__ptx_insn_t *in = &f->insns[k];
            if (in->op >= FAB__PTX_OP_COUNT || in->first > f->npool || in->nops > f->npool - in->first ||
                (in->guard != FAB__PTX_NONE && in->guard >= f->nregs) || in->ntypes > FAB__PTX_MAX_TYPES ||
                in->nwords > FAB__PTX_MAX_WORDS)
                abort();
        }
        for (uint32_t k = 0; k < f->npool; k++)
            fuzz_ptx_check_operand(m, f, &f->pool[k]);
        for (uint32_t k = 0; k < f->nlabels; k++) {
            if (f->labels[k] > f->ninsns || !f->label_names[k])
                abort();
        }
        for (uint32_t k = 0; k < f->nparams; k++) {
            if (f->params[k].var != FAB__PTX_NONE && f->params[k].var >= m->nvars)
                abort();
        }
    }
}

/* Parse each half of the input and link the two. */
static void fuzz_ptx_link_two(const char *copy, size_t size, const char *cut)
{
    size_t first = (size_t)(cut - copy), skip = 5; /* "//--\n" */
    fab__ptx_module_t *a = NULL, *b = NULL, *out = NULL;
    fab__ptx_diag_t diag;
    if (fab__ptx_parse(copy, first, &a, &diag) == FAB__PTX_OK &&
        fab__ptx_parse(cut + skip, size - first - skip, &b, &diag) == FAB__PTX_OK) {
        const fab__ptx_module_t *two[2] = {a, b};
        fab__ptx_status_t st = fab__ptx_link(two, 2, &out, &diag);
        if (st == FAB__PTX_OK)
            fuzz_ptx_check(out);
        else if (st != FAB__PTX_E_LINK || !diag.msg[0] || out)
            abort();
    }
    fab__ptx_module_free(out);
    fab__ptx_module_free(a);
    fab__ptx_module_free(b);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *copy = malloc(size ? size : 1);
    if (!copy)
        return 0;
    if (size)
        memcpy(copy, data, size);
    fab__ptx_module_t *m = NULL;
    fab__ptx_diag_t diag;
    fab__ptx_status_t st = fab__ptx_parse(copy, size, &m, &diag);
    if (st == FAB__PTX_OK) {
        if (!m)
            abort();
        fuzz_ptx_check(m);
        fab__ptx_module_t *linked = NULL;
        const fab__ptx_module_t *one[1] = {m};
        fab__ptx_status_t ls = fab__ptx_link(one, 1, &linked, &diag);
        if (ls == FAB__PTX_OK) {
            fuzz_ptx_check(linked);
            fab__ptx_module_free(linked);
        } else if (ls != FAB__PTX_E_LINK || !diag.msg[0] || linked) {
            abort();
        }
        fab__ptx_module_free(m);
    } else if ((st != FAB__PTX_E_SYNTAX && st != FAB__PTX_E_NOMEM) || m || !diag.msg[0]) {
        abort();
    }
    for (size_t i = 0; i + 5 <= size; i++) {
        if (memcmp(copy + i, "//--\n", 5) == 0 && (i == 0 || copy[i - 1] == '\n')) {
            fuzz_ptx_link_two(copy, size, copy + i);
            break;
        }
    }
    free(copy);
    return 0;
}
