/* Profiles: what a program's kernels ran, counted per instruction
 * (fab__ptx_program_profile* of ptx.h). Turned on once per program, before
 * its first launch; from then on the interpreter's counting loop (exec.c)
 * adds, for each instruction a warp runs with at least one lane's guard
 * true, one to its runs, and one to its spin yields when it ends the
 * quantum polling (an ordered load or a failed compare-and-swap that saw
 * nothing change, or nanosleep). The counters are relaxed atomics shared by
 * every worker and every launch: reading them while kernels run gives a
 * snapshot that each later read only adds to. */
#include <stdlib.h>
#include <string.h>

#include "src/ptx/engine.h"

fab__ptx_status_t fab__ptx_program_profile(fab__ptx_program_t *p)
{
    if (!p || p->profiled)
        return FAB__PTX_OK;
    for (uint32_t i = 0; i < p->ncodes; i++) {
        fab__ptx_code_t *c = &p->codes[i];
        if (!c->decoded || !c->nx)
            continue;
        c->prof = calloc(2 * (size_t)c->nx, sizeof(*c->prof));
        if (!c->prof) {
            for (uint32_t j = 0; j < i; j++) {
                free(p->codes[j].prof);
                p->codes[j].prof = NULL;
            }
            return FAB__PTX_E_NOMEM;
        }
    }
    p->profiled = true;
    return FAB__PTX_OK;
}

size_t fab__ptx_program_ninsns(const fab__ptx_program_t *p)
{
    size_t n = 0;
    for (uint32_t i = 0; p && i < p->ncodes; i++)
        n += p->codes[i].decoded ? p->codes[i].nx : 0;
    return n;
}

static int fab__ptx_profile_cmp(const void *a, const void *b)
{
    const fab__ptx_profile_line_t *x = a, *y = b;
    if (x->runs != y->runs)
        return x->runs < y->runs ? 1 : -1;
    int c = strcmp(x->func, y->func);
    if (c)
        return c;
    return (x->line > y->line) - (x->line < y->line);
}

/* Line a of out (sorted, n long, room for max) or dropped: the max most run. */
static size_t fab__ptx_profile_keep(fab__ptx_profile_line_t *out, size_t n, size_t max,
                                    const fab__ptx_profile_line_t *a)
{
    if (n == max && fab__ptx_profile_cmp(a, &out[n - 1]) >= 0)
        return n;
    size_t i = n < max ? n : max - 1;
    while (i > 0 && fab__ptx_profile_cmp(a, &out[i - 1]) < 0) {
        out[i] = out[i - 1];
        i--;
    }
    out[i] = *a;
    return n < max ? n + 1 : n;
}

size_t fab__ptx_program_profile_read(const fab__ptx_program_t *p, fab__ptx_profile_line_t *out, size_t max,
                                     uint64_t *total_out)
{
    uint64_t total = 0;
    size_t ran = 0;
    for (int pass = 0; pass < 2; pass++) {
        /* pass 0 counts what ran; pass 1 fills out: all of it then one sort
         * when it fits, else the max most run kept in order as it goes */
        size_t n = 0;
        bool all = ran <= max;
        for (uint32_t i = 0; p && p->profiled && i < p->ncodes; i++) {
            const fab__ptx_code_t *c = &p->codes[i];
            for (uint32_t pc = 0; c->prof && pc < c->nx; pc++) {
                uint64_t runs = __atomic_load_n(&c->prof[2 * (size_t)pc], __ATOMIC_RELAXED);
                if (!runs)
                    continue;
                if (pass == 0) {
                    ran++;
                    total += runs;
                    continue;
                }
                fab__ptx_profile_line_t a = {c->func->name, c->x[pc].line, c->x[pc].op, runs,
                                             __atomic_load_n(&c->prof[2 * (size_t)pc + 1], __ATOMIC_RELAXED)};
                if (all && n < max)
                    out[n++] = a;
                else if (!all)
                    n = fab__ptx_profile_keep(out, n, max, &a);
            }
        }
        if (pass == 1) {
            if (all && n)
                qsort(out, n, sizeof(*out), fab__ptx_profile_cmp);
            if (total_out)
                *total_out = total;
            return n;
        }
        if (!out || !max)
            break;
    }
    if (total_out)
        *total_out = total;
    return 0;
}
