/* The lifetime checker's output (check.c's top comment has the checker):
 * each finding written out, with its stacks, and the summary at exit.
 *
 * Output: each finding as a block of lines on stderr starting
 * "========= fabmem-check: ", and, when FABMEM_CHECK_FILE names a file, as
 * one JSON line appended to it (one write with O_APPEND, so that the
 * processes of a run may share the file; `fabmem run --check` reads it).
 * At exit a summary line on stderr and a "process" JSON line. */
#include "src/cuda/check.h"
#include "src/cuda/check_impl.h"

#include <errno.h>
#include <execinfo.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define FAB__CU_CHECK_LINE_MAX 65536
#define FAB__CU_CHECK_INDENT "=========     "

static unsigned fab__cu_check_findings;
static char fab__cu_check_line[FAB__CU_CHECK_LINE_MAX];

/* ---- output ------------------------------------------------------------------ */

typedef struct fab__cu_check_buf {
    char *p;
    size_t len, cap;
    bool full;
} fab__cu_check_buf_t;

static void fab__cu_check_put(fab__cu_check_buf_t *b, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static void fab__cu_check_put(fab__cu_check_buf_t *b, const char *fmt, ...)
{
    if (b->full)
        return;
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(b->p + b->len, b->cap - b->len, fmt, ap);
    va_end(ap);
    if (n < 0 || (size_t)n >= b->cap - b->len) {
        b->full = true;
        return;
    }
    b->len += (size_t)n;
}

static void fab__cu_check_put_json_string(fab__cu_check_buf_t *b, const char *s)
{
    fab__cu_check_put(b, "\"");
    for (; s && *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\')
            fab__cu_check_put(b, "\\%c", c);
        else if (c < 0x20)
            fab__cu_check_put(b, "\\u%04x", c);
        else
            fab__cu_check_put(b, "%c", c);
    }
    fab__cu_check_put(b, "\"");
}

static void fab__cu_check_handle_types(unsigned types, char *out, size_t cap)
{
    static const struct {
        unsigned bit;
        const char *name;
    } names[] = {{CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, "POSIX_FILE_DESCRIPTOR"},
                 {CU_MEM_HANDLE_TYPE_WIN32, "WIN32"},
                 {CU_MEM_HANDLE_TYPE_WIN32_KMT, "WIN32_KMT"},
                 {CU_MEM_HANDLE_TYPE_FABRIC, "FABRIC"}};
    out[0] = '\0';
    size_t used = 0;
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
        if (types & names[i].bit)
            used += (size_t)snprintf(out + used, used < cap ? cap - used : 0, "%s%s",
                                     used ? "|" : "", names[i].name);
    if (!out[0])
        snprintf(out, cap, "NONE");
}

/* A stack, its frames named by backtrace_symbols; raw: as addresses only
 * (in the signal handler, where backtrace_symbols's malloc may not run). */
static void fab__cu_check_put_stack(fab__cu_check_buf_t *text, fab__cu_check_buf_t *json,
                                    const char *title, void *const *frames, int n, bool raw_only)
{
    char **names = n > 0 && !raw_only ? backtrace_symbols(frames, n) : NULL;
    fab__cu_check_put(text, FAB__CU_CHECK_INDENT "%s\n", title);
    fab__cu_check_put(json, "[");
    for (int i = 0; i < n; i++) {
        char raw[32];
        snprintf(raw, sizeof(raw), "%p", frames[i]);
        const char *name = names ? names[i] : raw;
        fab__cu_check_put(text, FAB__CU_CHECK_INDENT "  #%d %s\n", i, name);
        if (json->cap - json->len > 1024) {
            fab__cu_check_put(json, "%s", i ? "," : "");
            fab__cu_check_put_json_string(json, name);
        }
    }
    fab__cu_check_put(json, "]");
    free(names);
}

/* Write a finding: the text block to stderr, the JSON line to the file.
 * The mutex is held. */
void fab__cu_check_emit(const fab__cu_check_finding_t *f)
{
    fab__cu_check_findings++;
    static char text_mem[FAB__CU_CHECK_LINE_MAX];
    fab__cu_check_buf_t text = {text_mem, 0, sizeof(text_mem), false};
    fab__cu_check_buf_t json = {fab__cu_check_line, 0, FAB__CU_CHECK_LINE_MAX - 2, false};
    fab__cu_check_put(&text, FAB__CU_CHECK_PREFIX "%s\n", f->message);
    fab__cu_check_put(&json, "{\"pid\":%ld,\"program\":", (long)getpid());
    fab__cu_check_put_json_string(&json, program_invocation_name);
    fab__cu_check_put(&json, ",\"finding\":\"%s\",\"message\":", f->id);
    fab__cu_check_put_json_string(&json, f->message);
    if (f->call) {
        fab__cu_check_put(&json, ",\"call\":\"%s\"", f->call);
    }
    if (f->has_address) {
        fab__cu_check_put(&text, FAB__CU_CHECK_INDENT "address 0x%" PRIxPTR, f->address);
        fab__cu_check_put(&json, ",\"address\":\"0x%" PRIxPTR "\"", f->address);
        if (f->offset >= 0) {
            fab__cu_check_put(&text, ", offset %lld in the %s", f->offset,
                              f->rec ? fab__cu_check_kind_names[f->rec->kind] : "object");
            fab__cu_check_put(&json, ",\"offset\":%lld", f->offset);
        }
        fab__cu_check_put(&text, "\n");
    }
    if (f->access) {
        fab__cu_check_put(&text, FAB__CU_CHECK_INDENT "access of the mapping: %s\n", f->access);
        fab__cu_check_put(&json, ",\"access\":\"%s\"", f->access);
    }
    if (f->nframes > 0) {
        fab__cu_check_put(&json, ",\"stack\":");
        fab__cu_check_put_stack(&text, &json, "found at:", f->frames, f->nframes, f->in_signal);
    }
    const fab__cu_check_rec_t *r = f->rec;
    if (r) {
        char types[96];
        fab__cu_check_handle_types(r->handle_types, types, sizeof(types));
        const char *what = fab__cu_check_kind_names[r->kind];
        bool handle = fab__cu_check_is_handle(r->kind);
        fab__cu_check_put(&text, FAB__CU_CHECK_INDENT "%s %s0x%" PRIx64 ": %zu bytes", what,
                          r->kind == FAB__CU_CHECK_ALLOC ? "handle " : handle ? "" : "at ",
                          r->key, r->size);
        if (r->device >= 0)
            fab__cu_check_put(&text, ", device %d", r->device);
        fab__cu_check_put(&json, ",\"object\":{\"kind\":\"%s\",\"%s\":\"0x%" PRIx64
                                 "\",\"size\":%zu,\"device\":%d",
                          what, handle ? "handle" : "address", r->key, r->size, r->device);
        if (handle || r->kind == FAB__CU_CHECK_MAP || r->kind == FAB__CU_CHECK_POOL) {
            fab__cu_check_put(&text, ", handle types %s", types);
            fab__cu_check_put(&json, ",\"handle_types\":\"%s\"", types);
        }
        if (r->kind == FAB__CU_CHECK_MAP) {
            fab__cu_check_put(&text, ", of allocation handle 0x%" PRIx64, r->other);
            fab__cu_check_put(&json, ",\"allocation\":\"0x%" PRIx64 "\"", r->other);
        }
        if (r->exports) {
            fab__cu_check_put(&text, ", exported %u time%s as a FABRIC handle", r->exports,
                              r->exports == 1 ? "" : "s");
            fab__cu_check_put(&json, ",\"fabric_exports\":%u", r->exports);
        }
        fab__cu_check_put(&text, "\n");
        char title[128];
        snprintf(title, sizeof(title), "made by %s at:", r->made_by);
        fab__cu_check_put(&json, ",\"made_by\":\"%s\",\"stack\":", r->made_by);
        fab__cu_check_put_stack(&text, &json, title, r->frames, r->nframes, f->in_signal);
        if (r->released_by) {
            snprintf(title, sizeof(title), "released by %s at:", r->released_by);
            fab__cu_check_put(&json, ",\"released_by\":\"%s\",\"release_stack\":", r->released_by);
            fab__cu_check_put_stack(&text, &json, title, r->rel_frames, r->rel_nframes,
                                    f->in_signal);
        }
        fab__cu_check_put(&json, "}");
    }
    fab__cu_check_put(&json, "}");
    if (json.full) /* a line too long for the buffer: the finding without its stacks */
        snprintf(fab__cu_check_line, FAB__CU_CHECK_LINE_MAX - 2,
                 "{\"pid\":%ld,\"finding\":\"%s\",\"truncated\":true}", (long)getpid(), f->id);
    size_t len = strlen(fab__cu_check_line);
    fab__cu_check_line[len++] = '\n';
    (void)!write(STDERR_FILENO, text.p, text.len);
    if (fab__cu_check_fd >= 0)
        (void)!write(fab__cu_check_fd, fab__cu_check_line, len);
}

void fab__cu_check_summary(void)
{
    char text[160];
    int n = snprintf(text, sizeof(text), FAB__CU_CHECK_PREFIX "pid %ld: %u finding%s\n",
                     (long)getpid(), fab__cu_check_findings,
                     fab__cu_check_findings == 1 ? "" : "s");
    if (fab__cu_check_findings == 0)
        n = snprintf(text, sizeof(text), FAB__CU_CHECK_PREFIX "pid %ld: no findings\n",
                     (long)getpid());
    (void)!write(STDERR_FILENO, text, (size_t)n);
    if (fab__cu_check_fd >= 0) {
        fab__cu_check_buf_t json = {fab__cu_check_line, 0, FAB__CU_CHECK_LINE_MAX - 2, false};
        fab__cu_check_put(&json, "{\"pid\":%ld,\"program\":", (long)getpid());
        fab__cu_check_put_json_string(&json, program_invocation_name);
        fab__cu_check_put(&json, ",\"process\":true,\"findings\":%u}\n", fab__cu_check_findings);
        (void)!write(fab__cu_check_fd, json.p, json.len);
    }
}

