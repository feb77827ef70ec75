/* Per-call fault injection: FABMEM_FAULTS, so that a program's own error
 * paths (FABRIC refused, then POSIX_FD; an import that fails; memory that
 * runs out) can be run on purpose, the same way every run.
 *
 *   FABMEM_FAULTS = ITEM{,ITEM}       ITEM = NAME:CODE@WHEN
 *   NAME  an entry point's base name, as cuGetProcAddress takes it; a spec
 *         for cuMemAlloc fails cuMemAlloc_v2 and its _ptds/_ptsz forms too
 *   CODE  a CUresult name, with or without CUDA_ERROR_ (NOT_PERMITTED)
 *   WHEN  N   the Nth call of NAME in the process (from 1) fails
 *         P%  each call fails with probability P (0 to 100, decimals
 *             allowed), drawn from FABMEM_FAULTS_SEED (default 0)
 *
 * Lifecycle: the specs are parsed once, by the first cuInit (the variables
 * are read then and never again), kept for the process's life, and armed
 * when cuInit succeeds. A bad spec makes every cuInit fail with
 * CUDA_ERROR_INVALID_VALUE, so that a typo cannot pass for a run with no
 * fault. The per-spec call counters are atomics: calls from several threads
 * are counted without a lock, and the injected call takes no lock at all.
 *
 * Why here, above state in the module order: the check is in every
 * prologue, so it must be below every module that has entry points. The
 * parser must tell a real entry point from a typo, and only procaddress.c,
 * at the bottom, knows the names; rather than have a low module call up,
 * procaddress.c hands its lookup down (fab__cu_fault_set_names) from a
 * load-time constructor, so the arrows still point one way.
 *
 * The probabilistic draw for a spec's nth call is a hash of (seed, spec,
 * n), not a shared generator's next number: the same calls fail in every
 * run with one seed, however the process's threads interleave other calls. */
#include "src/cuda/fault.h"

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "src/common/log.h"
#include "src/base/env.h"

#define FAB__CU_FAULTS_MAX 64
#define FAB__CU_FAULT_NAME_MAX 64
#define FAB__CU_FAULT_ITEM_MAX 160

typedef struct fab__cu_fault {
    char name[FAB__CU_FAULT_NAME_MAX]; /* base name */
    size_t name_len;
    CUresult code;
    const char *code_name; /* CUDA_ERROR_... */
    bool percent;          /* WHEN is P%, else N */
    uint64_t nth;          /* N */
    double chance;         /* P / 100 */
    uint64_t calls;        /* calls of name so far (atomic) */
    char text[FAB__CU_FAULT_ITEM_MAX]; /* the item as given, for the log */
} fab__cu_fault_t;

bool fab__cu_faults_armed;

static fab__cu_fault_t fab__cu_faults[FAB__CU_FAULTS_MAX];
static int fab__cu_fault_count;
static uint64_t fab__cu_fault_seed;
static fab__cu_fault_names_fn fab__cu_fault_known;
static pthread_once_t fab__cu_fault_once = PTHREAD_ONCE_INIT;
static CUresult fab__cu_fault_result = CUDA_SUCCESS;
static _Thread_local int fab__cu_fault_muted;

/* Entry points no spec may name, and why (docs/cuda.md, "Fault injection"). */
static const struct {
    const char *name;
    const char *why;
} fab__cu_fault_exempt[] = {
    {"cuGetErrorName", "NAME is not injectable: it reports errors, the injected ones too"},
    {"cuGetErrorString", "NAME is not injectable: it reports errors, the injected ones too"},
    {"cuGetProcAddress", "NAME is not injectable: loaders find every call through it; "
                         "name the call they look up instead"},
    {"cuDriverGetVersion", "NAME is not injectable: it is answered before cuInit reads "
                           "FABMEM_FAULTS"},
    {"cuGetExportTable", "NAME is not injectable: it is always refused already"},
};

void fab__cu_fault_set_names(fab__cu_fault_names_fn known)
{
    fab__cu_fault_known = known;
}

void fab__cu_fault_mute(int delta)
{
    fab__cu_fault_muted += delta;
}

bool fab__cu_fault_is_muted(void)
{
    return fab__cu_fault_muted > 0;
}

/* The length of func's base name: func less its _ptds, _ptsz and _vN
 * suffixes (cuStreamGetCtx_v2_ptsz is cuStreamGetCtx). */
static size_t fab__cu_fault_base_len(const char *func)
{
    size_t len = strlen(func);
    for (;;) {
        if (len > 5 && (memcmp(func + len - 5, "_ptds", 5) == 0 ||
                        memcmp(func + len - 5, "_ptsz", 5) == 0)) {
            len -= 5;
            continue;
        }
        size_t d = len;
        while (d > 0 && func[d - 1] >= '0' && func[d - 1] <= '9')
            d--;
        if (d < len && d > 2 && func[d - 1] == 'v' && func[d - 2] == '_') {
            len = d - 2;
            continue;
        }
        return len;
    }
}

/* SplitMix64's finaliser: a well-mixed 64-bit value from any input. */
static uint64_t fab__cu_fault_mix(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

static bool fab__cu_fault_fires(const fab__cu_fault_t *f, int index, uint64_t n)
{
    if (!f->percent)
        return n == f->nth;
    uint64_t h = fab__cu_fault_mix(fab__cu_fault_seed ^ fab__cu_fault_mix(((uint64_t)index << 48) ^ n));
    double u = (double)(h >> 11) * (1.0 / 9007199254740992.0); /* [0, 1) */
    return u < f->chance;
}

CUresult fab__cu_fault_hit(const char *func)
{
    if (fab__cu_fault_muted > 0)
        return CUDA_SUCCESS;
    size_t len = fab__cu_fault_base_len(func);
    CUresult r = CUDA_SUCCESS;
    for (int i = 0; i < fab__cu_fault_count; i++) {
        fab__cu_fault_t *f = &fab__cu_faults[i];
        if (f->name_len != len || memcmp(f->name, func, len) != 0)
            continue;
        uint64_t n = __atomic_add_fetch(&f->calls, 1, __ATOMIC_RELAXED);
        if (r == CUDA_SUCCESS && fab__cu_fault_fires(f, i, n)) {
            r = f->code;
            fab__log(FAB__LOG_INFO, "FABMEM_FAULTS: %s (call %llu of %s) returns %s, injected by \"%s\"",
                     func, (unsigned long long)n, f->name, f->code_name, f->text);
        }
    }
    return r;
}

/* The CUresult a CODE names, with or without CUDA_ERROR_ (any case); *name
 * gets its full name. CUDA_SUCCESS is not a fault: 0 for it and unknowns. */
static CUresult fab__cu_fault_code(const char *code, const char **name)
{
#define FAB__CU_FAULT_CODE(n, value, text)                                         \
    if (strcasecmp(code, "CUDA_" #n) == 0 ||                                       \
        (strncmp(#n, "ERROR_", 6) == 0 && strcasecmp(code, &#n[6]) == 0)) {        \
        *name = "CUDA_" #n;                                                        \
        return CUDA_##n;                                                           \
    }
    FAB_CU_RESULT_LIST(FAB__CU_FAULT_CODE)
#undef FAB__CU_FAULT_CODE
    return CUDA_SUCCESS;
}

/* WHEN: N (1 or more) or P% (0 to 100, digits with at most one point). */
static const char *fab__cu_fault_when(const char *when, fab__cu_fault_t *f)
{
    size_t len = strlen(when);
    if (len == 0)
        return "no WHEN after '@' (give N or P%)";
    if (when[len - 1] == '%') {
        double v = 0, scale = 0;
        size_t digits = 0;
        for (size_t i = 0; i + 1 < len; i++) {
            char c = when[i];
            if (c == '.' && scale == 0) {
                scale = 1;
            } else if (c >= '0' && c <= '9') {
                digits++;
                if (scale > 0) {
                    scale /= 10;
                    v += (c - '0') * scale;
                } else {
                    v = v * 10 + (c - '0');
                }
            } else {
                return "WHEN P% must be a number from 0 to 100 followed by %";
            }
            if (v > 100)
                return "WHEN P% is over 100%";
        }
        if (digits == 0)
            return "WHEN P% must be a number from 0 to 100 followed by %";
        f->percent = true;
        f->chance = v / 100;
        return NULL;
    }
    uint64_t n = 0;
    for (size_t i = 0; i < len; i++) {
        if (when[i] < '0' || when[i] > '9')
            return "WHEN must be N (a call number) or P% (a probability)";
        if (n > (UINT64_MAX - 9) / 10)
            return "WHEN N is too large";
        n = n * 10 + (uint64_t)(when[i] - '0');
    }
    if (n == 0)
        return "WHEN N counts calls from 1";
    f->nth = n;
    return NULL;
}

/* Parse one item (trimmed, NUL-terminated) into f; NULL, or what is wrong. */
static const char *fab__cu_fault_item(char *item, fab__cu_fault_t *f)
{
    if (item[0] == '\0')
        return "empty item";
    snprintf(f->text, sizeof(f->text), "%s", item);
    char *colon = strchr(item, ':');
    char *at = strrchr(item, '@');
    if (!colon || !at || at < colon)
        return "not NAME:CODE@WHEN";
    *colon = '\0';
    *at = '\0';
    const char *name = item, *code = colon + 1, *when = at + 1;
    if (name[0] == '\0')
        return "no NAME before ':'";
    if (strlen(name) >= sizeof(f->name))
        return "NAME is too long";
    for (size_t i = 0; i < sizeof(fab__cu_fault_exempt) / sizeof(fab__cu_fault_exempt[0]); i++) {
        if (strcmp(name, fab__cu_fault_exempt[i].name) == 0)
            return fab__cu_fault_exempt[i].why;
    }
    if (strncmp(name, "cu", 2) != 0 || (fab__cu_fault_known && !fab__cu_fault_known(name)))
        return fab__cu_fault_base_len(name) != strlen(name)
                   ? "NAME is not an entry point's base name (give it as cuGetProcAddress "
                     "takes it, without _vN/_ptds/_ptsz)"
                   : "NAME is no driver entry point";
    snprintf(f->name, sizeof(f->name), "%s", name);
    f->name_len = strlen(name);
    if (code[0] == '\0')
        return "no CODE between ':' and '@'";
    f->code = fab__cu_fault_code(code, &f->code_name);
    if (f->code == CUDA_SUCCESS)
        return strcasecmp(code, "CUDA_SUCCESS") == 0 || strcasecmp(code, "SUCCESS") == 0
                   ? "CODE CUDA_SUCCESS is no fault"
                   : "CODE is no CUresult name";
    return fab__cu_fault_when(when, f);
}

static CUresult fab__cu_fault_parse(const char *spec)
{
    const char *seed = getenv(FAB__ENV_FAULTS_SEED);
    if (seed && seed[0] != '\0') {
        char *end = NULL;
        unsigned long long v = strtoull(seed, &end, 0);
        if (seed[0] == '-' || *end != '\0') {
            fab__log(FAB__LOG_ERROR, "FABMEM_FAULTS_SEED=%s: not an unsigned number", seed);
            return CUDA_ERROR_INVALID_VALUE;
        }
        fab__cu_fault_seed = v;
    }
    int count = 0;
    for (const char *at = spec;;) {
        const char *comma = strchr(at, ',');
        size_t len = comma ? (size_t)(comma - at) : strlen(at);
        char item[FAB__CU_FAULT_ITEM_MAX];
        while (len > 0 && (*at == ' ' || *at == '\t')) {
            at++;
            len--;
        }
        while (len > 0 && (at[len - 1] == ' ' || at[len - 1] == '\t'))
            len--;
        const char *why = NULL;
        fab__cu_fault_t *f = &fab__cu_faults[count < FAB__CU_FAULTS_MAX ? count : 0];
        if (count == FAB__CU_FAULTS_MAX) {
            why = "more items than the 64 FABMEM_FAULTS takes";
        } else if (len >= sizeof(item)) {
            why = "item too long";
        } else {
            memset(f, 0, sizeof(*f));
            memcpy(item, at, len);
            item[len] = '\0';
            why = fab__cu_fault_item(item, f);
        }
        if (why) {
            fab__log(FAB__LOG_ERROR, "FABMEM_FAULTS: item %d \"%.*s\": %s; cuInit refuses to start",
                     count + 1, (int)(len > 100 ? 100 : len), at, why);
            fab__cu_fault_count = 0;
            return CUDA_ERROR_INVALID_VALUE;
        }
        count++;
        if (!comma)
            break;
        at = comma + 1;
    }
    fab__cu_fault_count = count;
    fab__log(FAB__LOG_INFO, "FABMEM_FAULTS: %d fault spec%s, seed %llu", count,
             count == 1 ? "" : "s", (unsigned long long)fab__cu_fault_seed);
    return CUDA_SUCCESS;
}

static void fab__cu_fault_load_once(void)
{
    const char *spec = getenv(FAB__ENV_FAULTS);
    if (spec && spec[0] != '\0')
        fab__cu_fault_result = fab__cu_fault_parse(spec);
}

CUresult fab__cu_fault_load(void)
{
    pthread_once(&fab__cu_fault_once, fab__cu_fault_load_once);
    return fab__cu_fault_result;
}

void fab__cu_fault_arm(void)
{
    if (fab__cu_fault_result == CUDA_SUCCESS && fab__cu_fault_count > 0)
        __atomic_store_n(&fab__cu_faults_armed, true, __ATOMIC_RELEASE);
}
