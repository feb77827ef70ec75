/* The PTX lexer (front.h): turns text into tokens (names, directives and
 * modifiers with their `::` parts, integer and float literals, strings,
 * punctuation), skipping white space, comments and the `@@DWARF` lines of
 * debug sections, and counting lines for messages. It never reads past the
 * end it was given and refuses bytes that no PTX text holds. */
#include "src/ptx/front.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool fab__ptx_lex_alpha(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

static bool fab__ptx_lex_digit(char c)
{
    return c >= '0' && c <= '9';
}

static bool fab__ptx_lex_xdigit(char c)
{
    return fab__ptx_lex_digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

static bool fab__ptx_lex_follow(char c)
{
    return fab__ptx_lex_alpha(c) || fab__ptx_lex_digit(c) || c == '_' || c == '$';
}

void fab__ptx_lex_init(fab__ptx_lex_t *lx, const char *text, size_t len, fab__ptx_diag_t *diag)
{
    const char *nul = memchr(text, '\0', len);
    lx->p = text;
    lx->end = nul ? nul : text + len;
    lx->line = 1;
    lx->diag = diag;
}

static fab__ptx_tok_t fab__ptx_lex_error(fab__ptx_lex_t *lx, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static fab__ptx_tok_t fab__ptx_lex_error(fab__ptx_lex_t *lx, const char *fmt, ...)
{
    fab__ptx_tok_t t = {.kind = FAB__PTX_TK_ERROR, .line = lx->line, .s = lx->p};
    if (lx->diag) {
        va_list ap;
        va_start(ap, fmt);
        lx->diag->line = lx->line;
        vsnprintf(lx->diag->msg, sizeof(lx->diag->msg), fmt, ap);
        va_end(ap);
    }
    lx->p = lx->end; /* every later call says EOF: the error stands */
    return t;
}

void fab__ptx_lex_skip_line(fab__ptx_lex_t *lx)
{
    while (lx->p < lx->end && *lx->p != '\n')
        lx->p++;
}

/* Skip white space and comments; false on a comment that is not closed. */
static bool fab__ptx_lex_space(fab__ptx_lex_t *lx, bool *spaced)
{
    const char *p = lx->p, *end = lx->end;
    for (;;) {
        if (p >= end)
            break;
        char c = *p;
        if (c == '\n') {
            lx->line++;
            p++;
        } else if (c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v') {
            p++;
        } else if (c == '/' && p + 1 < end && p[1] == '/') {
            while (p < end && *p != '\n')
                p++;
        } else if (c == '/' && p + 1 < end && p[1] == '*') {
            uint32_t opened = lx->line;
            p += 2;
            for (;;) {
                if (p + 1 >= end) {
                    lx->p = end;
                    lx->line = opened; /* the message names where it opens */
                    return false;
                }
                if (p[0] == '*' && p[1] == '/')
                    break;
                if (*p == '\n')
                    lx->line++;
                p++;
            }
            p += 2;
        } else if (c == '@' && end - p >= 7 && memcmp(p, "@@DWARF", 7) == 0) {
            while (p < end && *p != '\n')
                p++;
        } else {
            break;
        }
        *spaced = true;
    }
    lx->p = p;
    return true;
}

bool fab__ptx_lex_skip_block(fab__ptx_lex_t *lx)
{
    int depth = 1;
    bool spaced;
    while (lx->p < lx->end) {
        if (!fab__ptx_lex_space(lx, &spaced))
            return false;
        if (lx->p >= lx->end)
            break;
        char c = *lx->p++;
        if (c == '{') {
            depth++;
        } else if (c == '}') {
            if (--depth == 0)
                return true;
        } else if (c == '"') {
            while (lx->p < lx->end && *lx->p != '"' && *lx->p != '\n')
                lx->p++;
            if (lx->p < lx->end && *lx->p == '"')
                lx->p++;
        }
    }
    return false;
}

/* A number: 0fXXXXXXXX, 0dXXXXXXXXXXXXXXXX, 0x.. 0b.. 0.. decimal, with an
 * optional U, or a decimal float (1.5, 2e-3). */
static fab__ptx_tok_t fab__ptx_lex_number(fab__ptx_lex_t *lx, fab__ptx_tok_t t)
{
    const char *p = lx->p, *end = lx->end;
    if (p[0] == '0' && p + 1 < end && (p[1] == 'f' || p[1] == 'F' || p[1] == 'd' || p[1] == 'D')) {
        unsigned want = (p[1] == 'f' || p[1] == 'F') ? 8 : 16;
        const char *q = p + 2;
        uint64_t v = 0;
        unsigned n = 0;
        while (q < end && fab__ptx_lex_xdigit(*q)) {
            char c = *q++;
            v = (v << 4) | (uint64_t)(fab__ptx_lex_digit(c) ? c - '0' : (c | 0x20) - 'a' + 10);
            n++;
        }
        if (n != want || (q < end && fab__ptx_lex_follow(*q)))
            return fab__ptx_lex_error(lx, "a float literal %s takes exactly %u hex digits",
                                      want == 8 ? "0f" : "0d", want);
        t.kind = FAB__PTX_TK_FLOAT;
        t.fwidth = want == 8 ? 4 : 8;
        t.fbits = v;
        t.len = (uint32_t)(q - p);
        lx->p = q;
        return t;
    }
    const char *q = p;
    bool is_float = false;
    unsigned base = 10;
    if (p[0] == '0' && p + 1 < end && (p[1] == 'x' || p[1] == 'X')) {
        base = 16;
        q = p + 2;
    } else if (p[0] == '0' && p + 1 < end && (p[1] == 'b' || p[1] == 'B')) {
        base = 2;
        q = p + 2;
    } else {
        while (q < end && fab__ptx_lex_digit(*q))
            q++;
        if (q < end && *q == '.') {
            is_float = true;
            q++;
            while (q < end && fab__ptx_lex_digit(*q))
                q++;
        }
        if (q < end && (*q == 'e' || *q == 'E')) {
            const char *r = q + 1;
            if (r < end && (*r == '+' || *r == '-'))
                r++;
            if (r < end && fab__ptx_lex_digit(*r)) {
                is_float = true;
                q = r;
                while (q < end && fab__ptx_lex_digit(*q))
                    q++;
            }
        }
        if (!is_float) {
            q = p;
            if (p[0] == '0' && p + 1 < end && fab__ptx_lex_digit(p[1])) {
                base = 8;
                q = p + 1;
            }
        }
    }
    if (is_float) {
        char buf[80];
        size_t n = (size_t)(q - p);
        if (n >= sizeof(buf) || (q < end && fab__ptx_lex_follow(*q)))
            return fab__ptx_lex_error(lx, "a malformed float literal");
        memcpy(buf, p, n);
        buf[n] = '\0';
        double d = strtod(buf, NULL);
        t.kind = FAB__PTX_TK_FLOAT;
        t.fwidth = 8;
        memcpy(&t.fbits, &d, 8);
        t.len = (uint32_t)n;
        lx->p = q;
        return t;
    }
    uint64_t v = 0;
    const char *digits = q;
    while (q < end) {
        char c = *q;
        unsigned dv;
        if (fab__ptx_lex_digit(c))
            dv = (unsigned)(c - '0');
        else if (base == 16 && fab__ptx_lex_xdigit(c))
            dv = (unsigned)((c | 0x20) - 'a' + 10);
        else
            break;
        if (dv >= base)
            return fab__ptx_lex_error(lx, "the digit '%c' in a base-%u literal", c, base);
        if (v > (UINT64_MAX - dv) / base)
            return fab__ptx_lex_error(lx, "an integer literal does not fit in 64 bits");
        v = v * base + dv;
        q++;
    }
    if (q == digits && base != 8)
        return fab__ptx_lex_error(lx, "a base prefix with no digits after it");
    if (q < end && (*q == 'U' || *q == 'u'))
        q++;
    if (q < end && fab__ptx_lex_follow(*q))
        return fab__ptx_lex_error(lx, "the character '%c' in a number", *q);
    t.kind = FAB__PTX_TK_INT;
    t.ival = v;
    t.len = (uint32_t)(q - p);
    lx->p = q;
    return t;
}

fab__ptx_tok_t fab__ptx_lex_next(fab__ptx_lex_t *lx)
{
    fab__ptx_tok_t t = {0};
    bool spaced = false;
    if (!fab__ptx_lex_space(lx, &spaced))
        return fab__ptx_lex_error(lx, "a comment that is not closed");
    const char *p = lx->p, *end = lx->end;
    t.spaced = spaced;
    t.line = lx->line;
    t.s = p;
    if (p >= end) {
        t.kind = FAB__PTX_TK_EOF;
        return t;
    }
    char c = *p;
    if (fab__ptx_lex_alpha(c) || c == '_' || c == '$' || c == '%') {
        const char *q = p + 1;
        while (q < end && fab__ptx_lex_follow(*q))
            q++;
        if (c == '%' && q == p + 1)
            return fab__ptx_lex_error(lx, "a '%%' with no name after it");
        t.kind = FAB__PTX_TK_IDENT;
        t.len = (uint32_t)(q - p);
        lx->p = q;
        return t;
    }
    if (c == '.' && p + 1 < end && (fab__ptx_lex_alpha(p[1]) || p[1] == '_' || fab__ptx_lex_digit(p[1]))) {
        /* .word, .word::word::word; a digit may start a word (.2d, .3d) */
        const char *q = p + 1;
        for (;;) {
            while (q < end && fab__ptx_lex_follow(*q))
                q++;
            if (q + 2 < end && q[0] == ':' && q[1] == ':' && fab__ptx_lex_follow(q[2])) {
                q += 2;
                continue;
            }
            break;
        }
        t.kind = FAB__PTX_TK_DOT;
        t.len = (uint32_t)(q - p);
        lx->p = q;
        return t;
    }
    if (fab__ptx_lex_digit(c))
        return fab__ptx_lex_number(lx, t);
    if (c == '"') {
        const char *q = p + 1;
        while (q < end && *q != '"' && *q != '\n') {
            if (*q == '\\' && q + 1 < end && q[1] != '\n')
                q++;
            q++;
        }
        if (q >= end || *q != '"')
            return fab__ptx_lex_error(lx, "a string that is not closed on its line");
        t.kind = FAB__PTX_TK_STRING;
        t.len = (uint32_t)(q + 1 - p);
        lx->p = q + 1;
        return t;
    }
    if (strchr(",;:()[]{}<>+-!@|=*/~&^?", c)) {
        t.kind = FAB__PTX_TK_PUNCT;
        t.len = 1;
        lx->p = p + 1;
        return t;
    }
    if ((unsigned char)c < 0x20 || (unsigned char)c >= 0x7f)
        return fab__ptx_lex_error(lx, "the byte 0x%02x, which no PTX text holds", (unsigned char)c);
    return fab__ptx_lex_error(lx, "the character '%c', which starts no PTX token", c);
}
