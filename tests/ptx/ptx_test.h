/* Helpers the PTX front end's tests share: parse text that must parse (or
 * must not, with the line it names), and find a module's functions,
 * variables and an instruction's operands by what the test wrote; and the
 * interpreter's: text parsed and loaded into a program. */
#ifndef FAB_TEST_PTX_H
#define FAB_TEST_PTX_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fabtest.h"
#include "src/ptx/ptx.h"

#define PTX_HEAD ".version 9.0\n.target sm_90\n.address_size 64\n"

static inline fab__ptx_module_t *ptx_ok(const char *text)
{
    fab__ptx_module_t *m = NULL;
    fab__ptx_diag_t d;
    fab__ptx_status_t st = fab__ptx_parse(text, strlen(text), &m, &d);
    if (st != FAB__PTX_OK)
        fail_msg("parse: %d at line %u: %s", (int)st, d.line, d.msg);
    assert_non_null(m);
    return m;
}

/* The parse fails on line with a message holding want. */
static inline void ptx_bad(const char *text, uint32_t line, const char *want)
{
    fab__ptx_module_t *m = NULL;
    fab__ptx_diag_t d;
    fab__ptx_status_t st = fab__ptx_parse(text, strlen(text), &m, &d);
    if (st != FAB__PTX_E_SYNTAX)
        fail_msg("%d, not a syntax error, for:\n%s", (int)st, text);
    assert_null(m);
    if (d.line != line || !strstr(d.msg, want))
        fail_msg("line %u '%s', not line %u with '%s', for:\n%s", d.line, d.msg, line, want, text);
}

static inline const fab__ptx_func_t *ptx_func(const fab__ptx_module_t *m, const char *name)
{
    for (uint32_t i = 0; i < m->nfuncs; i++) {
        if (strcmp(m->funcs[i].name, name) == 0)
            return &m->funcs[i];
    }
    fail_msg("no function %s", name);
    return NULL;
}

static inline uint32_t ptx_func_index(const fab__ptx_module_t *m, const char *name)
{
    return (uint32_t)(ptx_func(m, name) - m->funcs);
}

/* The variable called name declared in function func (FAB__PTX_NONE: at module scope). */
static inline const fab__ptx_var_t *ptx_var(const fab__ptx_module_t *m, const char *name, uint32_t func)
{
    for (uint32_t i = 0; i < m->nvars; i++) {
        if (strcmp(m->vars[i].name, name) == 0 && m->vars[i].func == func)
            return &m->vars[i];
    }
    fail_msg("no variable %s", name);
    return NULL;
}

static inline uint32_t ptx_var_index(const fab__ptx_module_t *m, const char *name, uint32_t func)
{
    return (uint32_t)(ptx_var(m, name, func) - m->vars);
}

/* Operand k of instruction i of f. */
static inline const fab__ptx_operand_t *ptx_opd(const fab__ptx_func_t *f, uint32_t i, uint32_t k)
{
    assert_true(i < f->ninsns);
    assert_true(k < f->insns[i].nops);
    return &f->pool[f->insns[i].first + k];
}

/* Element e of a VEC or LIST operand. */
static inline const fab__ptx_operand_t *ptx_elem(const fab__ptx_func_t *f, const fab__ptx_operand_t *o, uint32_t e)
{
    assert_true(o->kind == FAB__PTX_OPD_VEC || o->kind == FAB__PTX_OPD_LIST);
    assert_true(e < o->elems);
    return &f->pool[o->first + e];
}

static inline const char *ptx_reg_name(const fab__ptx_func_t *f, const fab__ptx_operand_t *o)
{
    assert_true(o->kind == FAB__PTX_OPD_REG || o->kind == FAB__PTX_OPD_PAIR || o->kind == FAB__PTX_OPD_ADDR);
    assert_true(o->reg < f->nregs);
    return f->regs[o->reg].name;
}

/* Text parsed and loaded into *prog: the status, with d naming the line (a
 * module that does not load is freed). */
static inline fab__ptx_status_t ptx_try_load(const char *text, fab__ptx_program_t **prog, fab__ptx_diag_t *d)
{
    fab__ptx_module_t *m = NULL;
    fab__ptx_status_t st = fab__ptx_parse(text, strlen(text), &m, d);
    if (st) {
        print_message("parse: line %u: %s\n", d->line, d->msg);
        return st;
    }
    st = fab__ptx_program_load(m, prog, d);
    if (st)
        fab__ptx_module_free(m);
    return st;
}

/* Text that must parse and load: its program. */
static inline fab__ptx_program_t *ptx_load(const char *text)
{
    fab__ptx_program_t *p = NULL;
    fab__ptx_diag_t d;
    fab__ptx_status_t st = ptx_try_load(text, &p, &d);
    if (st)
        fail_msg("load: line %u: %s", d.line, d.msg);
    return p;
}

#endif /* FAB_TEST_PTX_H */
