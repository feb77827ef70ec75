/* The built-in functions a kernel calls as .extern declarations with no
 * definition (load.c names them): vprintf(fmt, argbuf), device printf,
 * formatted here from the argument buffer nvcc lays out (each argument at
 * its own alignment: 4-byte ints, 8-byte long longs, doubles and pointers)
 * and handed whole to host->print (else stdout); malloc and free; and
 * __assertfail(message, file, line, function, charsize), which prints the
 * device's assertion line and stops the kernel with FAB__PTX_E_ASSERT. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "src/ptx/exec.h"

#define FAB__PTX_PRINTF_MAX 4096

static void fab__ptx_emit(fab__ptx_warp_t *w, const char *text, size_t len)
{
    const fab__ptx_host_t *h = w->run->launch->host;
    pthread_mutex_lock(&w->run->print_mu);
    if (h && h->print) {
        h->print(h->ctx, text, len);
    } else {
        fwrite(text, 1, len, stdout);
        fflush(stdout);
    }
    pthread_mutex_unlock(&w->run->print_mu);
}

static size_t fab__ptx_take(const unsigned char *args, size_t *off, size_t n, void *out)
{
    *off = (*off + n - 1) / n * n;
    memcpy(out, args + *off, n);
    *off += n;
    return n;
}

/* fmt formatted from args into out (at most cap - 1 chars); returns its length. */
static size_t fab__ptx_format(char *out, size_t cap, const char *fmt, const unsigned char *args)
{
    size_t n = 0, ao = 0;
#define PUT(...)                                                                        \
    do {                                                                                \
        int k_ = snprintf(out + n, cap - n, __VA_ARGS__);                               \
        if (k_ > 0)                                                                     \
            n += (size_t)k_ < cap - n ? (size_t)k_ : cap - n - 1;                       \
    } while (0)
    for (const char *p = fmt; *p && n + 1 < cap && p - fmt < 65536; p++) {
        if (*p != '%') {
            out[n++] = *p;
            continue;
        }
        if (p[1] == '%') {
            out[n++] = '%';
            p++;
            continue;
        }
        char spec[32];
        size_t sl = 0;
        spec[sl++] = '%';
        const char *q = p + 1;
        while (*q && strchr("-+ #0", *q) && sl < 20)
            spec[sl++] = *q++;
        int star[2] = {0, 0}, nstar = 0;
        for (int part = 0; part < 2; part++) {
            if (part == 1) {
                if (*q != '.')
                    break;
                spec[sl++] = *q++;
            }
            if (*q == '*') {
                int32_t v = 0;
                if (args)
                    fab__ptx_take(args, &ao, 4, &v);
                star[nstar++] = v;
                spec[sl++] = '*';
                q++;
            } else {
                while (*q >= '0' && *q <= '9' && sl < 26)
                    spec[sl++] = *q++;
            }
        }
        int longs = 0;
        while (*q == 'l' || *q == 'h' || *q == 'z' || *q == 'j' || *q == 't' || *q == 'L') {
            if (*q == 'l' || *q == 'z' || *q == 'j' || *q == 't')
                longs++;
            q++;
        }
        char conv = *q;
        if (!conv)
            break;
        p = q;
        bool is_int = strchr("diouxXc", conv) != NULL, is_flt = strchr("fFeEgGaA", conv) != NULL;
        if (is_int && longs) {
            spec[sl++] = 'l';
            spec[sl++] = 'l';
        }
        spec[sl++] = conv;
        spec[sl] = 0;
        if (!args) {
            PUT("%s", "<no args>");
            continue;
        }
        if (is_int) {
            if (longs) {
                long long v;
                fab__ptx_take(args, &ao, 8, &v);
                if (nstar == 2) PUT(spec, star[0], star[1], v);
                else if (nstar == 1) PUT(spec, star[0], v);
                else PUT(spec, v);
            } else {
                int v;
                fab__ptx_take(args, &ao, 4, &v);
                if (nstar == 2) PUT(spec, star[0], star[1], v);
                else if (nstar == 1) PUT(spec, star[0], v);
                else PUT(spec, v);
            }
        } else if (is_flt) {
            double v;
            fab__ptx_take(args, &ao, 8, &v);
            if (nstar == 2) PUT(spec, star[0], star[1], v);
            else if (nstar == 1) PUT(spec, star[0], v);
            else PUT(spec, v);
        } else if (conv == 's') {
            uint64_t v;
            fab__ptx_take(args, &ao, 8, &v);
            const char *s = v >= 4096 ? (const char *)(uintptr_t)v : "(null)";
            if (nstar == 2) PUT(spec, star[0], star[1], s);
            else if (nstar == 1) PUT(spec, star[0], s);
            else PUT(spec, s);
        } else if (conv == 'p') {
            uint64_t v;
            fab__ptx_take(args, &ao, 8, &v);
            PUT("0x%llx", (unsigned long long)v);
        } else {
            PUT("%%%c", conv);
        }
    }
#undef PUT
    out[n] = 0;
    return n;
}

static uint64_t fab__ptx_arg(const fab__ptx_warp_t *w, const fab__ptx_callsite_t *cs, uint32_t i, unsigned l)
{
    uint64_t v = 0;
    if (i >= cs->nargs)
        return 0;
    const unsigned char *lb = w->local + (size_t)l * w->lstride + w->fr[w->nfr - 1].fp;
    memcpy(&v, lb + cs->arg_off[i], cs->arg_size[i] < 8 ? cs->arg_size[i] : 8);
    return v;
}

static void fab__ptx_ret(fab__ptx_warp_t *w, const fab__ptx_callsite_t *cs, unsigned l, uint64_t v)
{
    if (!cs->nrets)
        return;
    unsigned char *lb = w->local + (size_t)l * w->lstride + w->fr[w->nfr - 1].fp;
    memcpy(lb + cs->ret_off[0], &v, cs->ret_size[0] < 8 ? cs->ret_size[0] : 8);
}

int fab__ptx_builtin(fab__ptx_warp_t *w, const fab__ptx_x_t *in, const fab__ptx_callsite_t *cs, uint32_t m)
{
    (void)in;
    for (unsigned l = 0; l < LANES_N; l++) {
        if (!(m >> l & 1))
            continue;
        switch (cs->builtin) {
        case FAB__PTX_BI_VPRINTF: {
            uint64_t fmt = fab__ptx_arg(w, cs, 0, l), args = fab__ptx_arg(w, cs, 1, l);
            if (fmt < 4096)
                return fab__ptx_warp_fail(w, FAB__PTX_E_FAULT, l, (uintptr_t)fmt, "printf with a null format");
            char buf[FAB__PTX_PRINTF_MAX];
            size_t n = fab__ptx_format(buf, sizeof(buf), (const char *)(uintptr_t)fmt,
                                       args >= 4096 ? (const unsigned char *)(uintptr_t)args : NULL);
            fab__ptx_emit(w, buf, n);
            fab__ptx_ret(w, cs, l, (uint32_t)n);
            break;
        }
        case FAB__PTX_BI_MALLOC:
            fab__ptx_ret(w, cs, l, (uint64_t)(uintptr_t)malloc(fab__ptx_arg(w, cs, 0, l)));
            break;
        case FAB__PTX_BI_FREE:
            free((void *)(uintptr_t)fab__ptx_arg(w, cs, 0, l));
            break;
        default: { /* __assertfail */
            uint64_t msg = fab__ptx_arg(w, cs, 0, l), file = fab__ptx_arg(w, cs, 1, l);
            uint32_t line = (uint32_t)fab__ptx_arg(w, cs, 2, l);
            uint64_t fn = fab__ptx_arg(w, cs, 3, l);
            char buf[1024];
            int n = snprintf(buf, sizeof(buf), "%s:%u: %s: block: [%u,%u,%u], thread: [%u,%u,%u] Assertion `%s` failed.\n",
                             file >= 4096 ? (const char *)(uintptr_t)file : "?", line,
                             fn >= 4096 ? (const char *)(uintptr_t)fn : "?", w->blk->ctaid[0], w->blk->ctaid[1],
                             w->blk->ctaid[2], w->tid[l][0], w->tid[l][1], w->tid[l][2],
                             msg >= 4096 ? (const char *)(uintptr_t)msg : "?");
            if (n > 0)
                fab__ptx_emit(w, buf, (size_t)n < sizeof(buf) ? (size_t)n : sizeof(buf) - 1);
            char why[200];
            snprintf(why, sizeof(why), "assertion `%.150s` failed", msg >= 4096 ? (const char *)(uintptr_t)msg : "?");
            return fab__ptx_warp_fail(w, FAB__PTX_E_ASSERT, l, 0, why);
        }
        }
    }
    return R_NEXT;
}
