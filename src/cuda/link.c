/* The JIT linker: cuLinkCreate, cuLinkAddData, cuLinkAddFile, cuLinkComplete
 * and cuLinkDestroy (and their _v2 ABI names).
 *
 * A link state collects PTX: each PTX input as given, and the PTX texts of
 * each fatbin input (those of the highest architecture the current device
 * runs, as a module load would take them). An input is parsed when it is
 * added, so malformed PTX fails its cuLinkAddData with
 * CUDA_ERROR_INVALID_PTX and the line in the error log; cuLinkComplete links
 * the texts (every .extern resolved, or CUDA_ERROR_INVALID_PTX naming the
 * symbol) and answers an image that cuModuleLoadData takes: a fatbin
 * container with one uncompressed PTX entry per input, every entry marked
 * arch 0 (as bare text, eligible on any device), which module.c links again
 * into the module's program. A cubin input carries SASS only, which fabmem
 * never runs: it is accepted and adds nothing, so its kernels are not found.
 * An archive (CU_JIT_INPUT_LIBRARY) is taken member by member, each as an
 * image input (a member that is no device image adds nothing), and adds
 * fabmem's own PTX of the device runtime's grid-sync functions, weak, once
 * per link: NVIDIA's libcudadevrt.a holds them as SASS only, and numba-cuda's
 * grid.sync() calls them. Host objects and NVVM IR are refused
 * (CUDA_ERROR_NOT_SUPPORTED, with a log line).
 *
 * Lifecycle: cuLinkCreate (in the live list) ─▶ add* ─▶ cuLinkComplete (the
 * image, owned by the state; a later complete answers a new one) ─▶
 * cuLinkDestroy (out of the list, image freed). Guarded by fab__cu_links_mu;
 * the parse and link run outside it. */
#include "src/cuda/state.h"
#include "src/cuda/device.h"
#include "src/cuda/image.h"
#include "src/cuda/module.h"
#include "src/cuda/entry.h"
#include "src/ptx/ptx.h"
#include "src/base/le.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "src/common/log.h"

#define FAB__CU_FATBIN_MAGIC 0xBA55ED50u
#define FAB__CU_FATBIN_ENTRY_BYTES 64

struct CUlinkState_st {
    bool devrt;   /* fabmem's device-runtime PTX is among the texts */
    char **texts; /* PTX, NUL-terminated */
    size_t *lens;
    size_t ntexts;
    unsigned char *image; /* cuLinkComplete's answer, or NULL */
    char *error_log;      /* CU_JIT_ERROR_LOG_BUFFER of cuLinkCreate, or NULL */
    size_t error_log_len;
    struct CUlinkState_st *next;
};

static pthread_mutex_t fab__cu_links_mu = PTHREAD_MUTEX_INITIALIZER;
static struct CUlinkState_st *fab__cu_links;

static bool fab__cu_link_live(CUlinkState state)
{
    bool live = false;
    pthread_mutex_lock(&fab__cu_links_mu);
    for (struct CUlinkState_st *s = fab__cu_links; s && !live; s = s->next)
        live = s == state;
    pthread_mutex_unlock(&fab__cu_links_mu);
    return live;
}

static void fab__cu_link_error(CUlinkState state, const char *msg)
{
    fab__log(FAB__LOG_WARN, "cuLink: %s", msg);
    if (state->error_log && state->error_log_len > 0)
        snprintf(state->error_log, state->error_log_len, "%s", msg);
}

CUresult cuLinkCreate_v2(unsigned int numOptions, CUjit_option *options, void **optionValues,
                         CUlinkState *stateOut)
{
    FAB__CU_ENTER();
    if (!stateOut)
        return CUDA_ERROR_INVALID_VALUE;
    FAB__CU_TRY(fab__cu_jit_check(numOptions, options, optionValues));
    struct CUlinkState_st *s = calloc(1, sizeof(*s));
    if (!s)
        return CUDA_ERROR_OUT_OF_MEMORY;
    for (unsigned i = 0; i < numOptions; i++) {
        if (options[i] == CU_JIT_ERROR_LOG_BUFFER)
            s->error_log = optionValues[i];
        else if (options[i] == CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES)
            s->error_log_len = (size_t)(uintptr_t)optionValues[i];
        else if (options[i] == CU_JIT_INFO_LOG_BUFFER && optionValues[i])
            ((char *)optionValues[i])[0] = '\0';
    }
    if (s->error_log && s->error_log_len > 0)
        s->error_log[0] = '\0';
    pthread_mutex_lock(&fab__cu_links_mu);
    s->next = fab__cu_links;
    fab__cu_links = s;
    pthread_mutex_unlock(&fab__cu_links_mu);
    *stateOut = s;
    return CUDA_SUCCESS;
}

CUresult cuLinkCreate(unsigned int numOptions, CUjit_option *options, void **optionValues,
                      CUlinkState *stateOut)
{
    return cuLinkCreate_v2(numOptions, options, optionValues, stateOut);
}

/* Keep one PTX text, after checking that it parses. */
static CUresult fab__cu_link_keep(CUlinkState state, const char *text, size_t len, const char *name)
{
    const char *nul = memchr(text, '\0', len);
    if (nul)
        len = (size_t)(nul - text);
    fab__ptx_module_t *m = NULL;
    fab__ptx_diag_t diag = {0};
    fab__ptx_status_t st = fab__ptx_parse(text, len, &m, &diag);
    fab__ptx_module_free(m);
    if (st == FAB__PTX_E_NOMEM)
        return CUDA_ERROR_OUT_OF_MEMORY;
    if (st != FAB__PTX_OK) {
        char msg[400];
        snprintf(msg, sizeof(msg), "%s: PTX line %u: %s", name ? name : "input",
                 (unsigned)diag.line, diag.msg);
        fab__cu_link_error(state, msg);
        return CUDA_ERROR_INVALID_PTX;
    }
    char *copy = malloc(len + 1);
    if (!copy)
        return CUDA_ERROR_OUT_OF_MEMORY;
    memcpy(copy, text, len);
    copy[len] = '\0';
    pthread_mutex_lock(&fab__cu_links_mu);
    char **t = realloc(state->texts, (state->ntexts + 1) * sizeof(*t));
    size_t *l = t ? realloc(state->lens, (state->ntexts + 1) * sizeof(*l)) : NULL;
    if (t)
        state->texts = t;
    if (l)
        state->lens = l;
    if (t && l) {
        state->texts[state->ntexts] = copy;
        state->lens[state->ntexts] = len;
        state->ntexts++;
    }
    pthread_mutex_unlock(&fab__cu_links_mu);
    if (!t || !l) {
        free(copy);
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
    return CUDA_SUCCESS;
}

/* A fatbin's (or cubin's) PTX of the best architecture for the current
 * device. */
static CUresult fab__cu_link_image(CUlinkState state, const void *data, size_t size,
                                   const char *name)
{
    int dev = 0;
    FAB__CU_TRY(fab__cu_current_device(&dev));
    unsigned cc = (unsigned)(fab__cu.devices[dev].compute_major * 10 +
                             fab__cu.devices[dev].compute_minor);
    fab__cu_image_t img;
    CUresult r = fab__cu_image_parse(fab__cu_image_unwrap(data), size, &img);
    if (r != CUDA_SUCCESS) {
        char msg[FAB__CU_LOAD_ERROR_MAX + 128]; /* the input's name, then why */
        snprintf(msg, sizeof(msg), "%s: %s", name ? name : "input", img.error);
        fab__cu_link_error(state, msg);
        return r;
    }
    bool found = false;
    unsigned best = 0;
    for (size_t i = 0; i < img.nptx; i++) {
        if (img.ptx[i].arch <= cc && (!found || img.ptx[i].arch > best)) {
            best = img.ptx[i].arch;
            found = true;
        }
    }
    for (size_t i = 0; i < img.nptx && r == CUDA_SUCCESS; i++) {
        if (found && img.ptx[i].arch == best)
            r = fab__cu_link_keep(state, img.ptx[i].text, img.ptx[i].len, name);
    }
    fab__cu_image_free(&img);
    return r;
}

/* The device runtime's grid-sync functions, as numba-cuda declares them
 * (cudaCGGetIntrinsicHandle(scope) -> handle, cudaCGSynchronize(handle,
 * flags) -> status), in PTX the engine runs. The handle is the cooperative
 * launch's grid workspace (%envreg1:%envreg2, 0 when the launch is not
 * cooperative); the barrier is the one cooperative_groups' headers use: its
 * word at offset 4, block 0 adds 0x80000000 - (blocks - 1), the others 1,
 * and each block's thread 0 waits for the top bit to flip. A grid sync in a
 * launch that is not cooperative traps, as the device's does. */
static const char fab__cu_devrt_ptx[] =
    ".version 7.0\n"
    ".target sm_70\n"
    ".address_size 64\n"
    ".weak .func (.param .b64 handle) cudaCGGetIntrinsicHandle(.param .b32 scope)\n"
    "{\n"
    "  .reg .pred %p<2>;\n"
    "  .reg .b32 %r<4>;\n"
    "  .reg .b64 %rd<4>;\n"
    "  ld.param.u32 %r3, [scope];\n"
    "  mov.u32 %r1, %envreg1;\n"
    "  mov.u32 %r2, %envreg2;\n"
    "  cvt.u64.u32 %rd1, %r1;\n"
    "  cvt.u64.u32 %rd2, %r2;\n"
    "  shl.b64 %rd1, %rd1, 32;\n"
    "  or.b64 %rd3, %rd1, %rd2;\n"
    "  setp.ne.u32 %p1, %r3, 1;\n" /* cudaCGScopeGrid only */
    "  @%p1 mov.u64 %rd3, 0;\n"
    "  st.param.b64 [handle], %rd3;\n"
    "  ret;\n"
    "}\n"
    ".weak .func (.param .b32 status) cudaCGSynchronize(.param .b64 handle, .param .b32 flags)\n"
    "{\n"
    "  .reg .pred %p<4>;\n"
    "  .reg .b32 %r<12>;\n"
    "  .reg .b64 %rd<3>;\n"
    "  ld.param.u64 %rd1, [handle];\n"
    "  setp.eq.u64 %p1, %rd1, 0;\n"
    "  @%p1 bra NOT_COOPERATIVE;\n"
    "  add.u64 %rd2, %rd1, 4;\n"
    "  bar.sync 0;\n"
    "  mov.u32 %r1, %tid.x;\n"
    "  mov.u32 %r2, %tid.y;\n"
    "  mov.u32 %r3, %tid.z;\n"
    "  or.b32 %r1, %r1, %r2;\n"
    "  or.b32 %r1, %r1, %r3;\n"
    "  setp.ne.u32 %p2, %r1, 0;\n"
    "  @%p2 bra ARRIVED;\n"
    "  mov.u32 %r4, %nctaid.x;\n"
    "  mov.u32 %r5, %nctaid.y;\n"
    "  mov.u32 %r6, %nctaid.z;\n"
    "  mul.lo.u32 %r4, %r4, %r5;\n"
    "  mul.lo.u32 %r4, %r4, %r6;\n"
    "  mov.u32 %r7, %ctaid.x;\n"
    "  mov.u32 %r8, %ctaid.y;\n"
    "  mov.u32 %r9, %ctaid.z;\n"
    "  or.b32 %r7, %r7, %r8;\n"
    "  or.b32 %r7, %r7, %r9;\n"
    "  setp.eq.u32 %p3, %r7, 0;\n"
    "  mov.u32 %r11, -2147483647;\n" /* 0x80000001 */
    "  sub.u32 %r11, %r11, %r4;\n"
    "  selp.u32 %r10, %r11, 1, %p3;\n"
    "  atom.add.release.gpu.u32 %r5, [%rd2], %r10;\n"
    "WAIT:\n"
    "  ld.acquire.gpu.u32 %r6, [%rd2];\n"
    "  xor.b32 %r6, %r6, %r5;\n"
    "  and.b32 %r6, %r6, -2147483648;\n" /* 0x80000000 */
    "  setp.eq.u32 %p3, %r6, 0;\n"
    "  @%p3 bra WAIT;\n"
    "ARRIVED:\n"
    "  bar.sync 0;\n"
    "  mov.u32 %r1, 0;\n"
    "  st.param.b32 [status], %r1;\n"
    "  ret;\n"
    "NOT_COOPERATIVE:\n"
    "  trap;\n"
    "}\n";

/* An ar archive: each regular member as an image input (PTX kept, SASS
 * dropped; a member that is no device image, a host object of it, adds
 * nothing), then fabmem's device-runtime PTX once per link. */
static CUresult fab__cu_link_archive(CUlinkState state, const unsigned char *d, size_t size,
                                     const char *name)
{
    if (size < 8 || memcmp(d, "!<arch>\n", 8) != 0) {
        char msg[300];
        snprintf(msg, sizeof(msg), "%s: a library input is not an ar archive", name ? name : "input");
        fab__cu_link_error(state, msg);
        return CUDA_ERROR_INVALID_IMAGE;
    }
    size_t off = 8;
    while (off + 60 <= size) {
        const unsigned char *h = d + off;
        char digits[11];
        memcpy(digits, h + 48, 10);
        digits[10] = '\0';
        char *end;
        unsigned long long n = strtoull(digits, &end, 10);
        if (end == digits || h[58] != '`' || h[59] != '\n' || n > size - off - 60)
            break; /* a malformed header: what came before stands */
        const unsigned char *m = h + 60;
        /* "/" and "//" (symbol and name tables) and "__.SYMDEF" are no members */
        bool table = h[0] == '/' && (h[1] == ' ' || (h[1] == '/' && h[2] == ' '));
        if (!table && memcmp(h, "__.SYMDEF", 9) != 0) {
            fab__cu_image_t img;
            if (fab__cu_image_parse(m, (size_t)n, &img) == CUDA_SUCCESS) {
                fab__cu_image_free(&img);
                CUresult r = fab__cu_link_image(state, m, (size_t)n, name);
                if (r != CUDA_SUCCESS)
                    return r;
            }
        }
        off += 60 + (size_t)n + (n & 1);
    }
    pthread_mutex_lock(&fab__cu_links_mu);
    bool had = state->devrt;
    state->devrt = true;
    pthread_mutex_unlock(&fab__cu_links_mu);
    return had ? CUDA_SUCCESS
               : fab__cu_link_keep(state, fab__cu_devrt_ptx, sizeof(fab__cu_devrt_ptx) - 1,
                                   "fabmem device runtime");
}

CUresult cuLinkAddData_v2(CUlinkState state, CUjitInputType type, void *data, size_t size,
                          const char *name, unsigned int numOptions, CUjit_option *options,
                          void **optionValues)
{
    FAB__CU_ENTER();
    if (!state || !fab__cu_link_live(state))
        return CUDA_ERROR_INVALID_HANDLE;
    if (!data || size == 0)
        return CUDA_ERROR_INVALID_VALUE;
    FAB__CU_TRY(fab__cu_jit_check(numOptions, options, optionValues));
    switch (type) {
    case CU_JIT_INPUT_PTX: return fab__cu_link_keep(state, data, size, name);
    case CU_JIT_INPUT_CUBIN:
    case CU_JIT_INPUT_FATBINARY: return fab__cu_link_image(state, data, size, name);
    case CU_JIT_INPUT_LIBRARY: return fab__cu_link_archive(state, data, size, name);
    case CU_JIT_INPUT_OBJECT:
    case CU_JIT_INPUT_NVVM:
        fab__cu_link_error(state, "host objects and NVVM IR are not linked by fabmem: "
                                  "give the linker PTX, a fatbin or an archive of them");
        return CUDA_ERROR_NOT_SUPPORTED;
    default: return CUDA_ERROR_INVALID_VALUE;
    }
}

CUresult cuLinkAddData(CUlinkState state, CUjitInputType type, void *data, size_t size,
                       const char *name, unsigned int numOptions, CUjit_option *options,
                       void **optionValues)
{
    return cuLinkAddData_v2(state, type, data, size, name, numOptions, options, optionValues);
}

CUresult cuLinkAddFile_v2(CUlinkState state, CUjitInputType type, const char *path,
                          unsigned int numOptions, CUjit_option *options, void **optionValues)
{
    FAB__CU_ENTER();
    if (!state || !fab__cu_link_live(state))
        return CUDA_ERROR_INVALID_HANDLE;
    if (!path)
        return CUDA_ERROR_INVALID_VALUE;
    unsigned char *data;
    size_t len;
    CUresult rr = fab__cu_image_read_file(path, &data, &len);
    if (rr != CUDA_SUCCESS)
        return rr;
    if (len == 0) {
        free(data);
        return CUDA_ERROR_INVALID_IMAGE;
    }
    CUresult r = cuLinkAddData_v2(state, type, data, len, path, numOptions, options, optionValues);
    free(data);
    return r;
}

CUresult cuLinkAddFile(CUlinkState state, CUjitInputType type, const char *path,
                       unsigned int numOptions, CUjit_option *options, void **optionValues)
{
    return cuLinkAddFile_v2(state, type, path, numOptions, options, optionValues);
}

CUresult cuLinkComplete(CUlinkState state, void **cubinOut, size_t *sizeOut)
{
    FAB__CU_ENTER();
    if (!state || !fab__cu_link_live(state))
        return CUDA_ERROR_INVALID_HANDLE;
    if (!cubinOut)
        return CUDA_ERROR_INVALID_VALUE;
    /* Link now, so that an unresolved name fails here, as the linker fails. */
    fab__ptx_module_t **mods = calloc(state->ntexts ? state->ntexts : 1, sizeof(*mods));
    if (!mods)
        return CUDA_ERROR_OUT_OF_MEMORY;
    fab__ptx_diag_t diag = {0};
    fab__ptx_status_t st = FAB__PTX_OK;
    size_t k = 0;
    for (; k < state->ntexts && st == FAB__PTX_OK; k++)
        st = fab__ptx_parse(state->texts[k], state->lens[k], &mods[k], &diag);
    fab__ptx_module_t *linked = NULL;
    if (st == FAB__PTX_OK && state->ntexts > 0)
        st = fab__ptx_link((const fab__ptx_module_t *const *)mods, state->ntexts, &linked, &diag);
    /* Loading it finds a call to a function no input defines (the linker
     * keeps .extern functions for the built-ins, vprintf and the like). */
    fab__ptx_program_t *program = NULL;
    if (st == FAB__PTX_OK && linked) {
        st = fab__ptx_program_load(linked, &program, &diag);
        if (st == FAB__PTX_OK)
            linked = NULL; /* the program's now */
    }
    fab__ptx_program_free(program);
    fab__ptx_module_free(linked);
    for (size_t i = 0; i < k; i++)
        fab__ptx_module_free(mods[i]);
    free(mods);
    if (st == FAB__PTX_E_NOMEM)
        return CUDA_ERROR_OUT_OF_MEMORY;
    if (st != FAB__PTX_OK) {
        char msg[300];
        snprintf(msg, sizeof(msg), "link: %s", diag.msg);
        fab__cu_link_error(state, msg);
        return CUDA_ERROR_INVALID_PTX;
    }
    /* The container: its 16-byte header, then an entry per text. */
    size_t body = 0;
    for (size_t i = 0; i < state->ntexts; i++)
        body += FAB__CU_FATBIN_ENTRY_BYTES + ((state->lens[i] + 1 + 7) & ~(size_t)7);
    unsigned char *img = calloc(1, 16 + body);
    if (!img)
        return CUDA_ERROR_OUT_OF_MEMORY;
    fab__le_put32(img, FAB__CU_FATBIN_MAGIC);
    fab__le_put16(img + 4, 1);
    fab__le_put16(img + 6, 16);
    fab__le_put64(img + 8, body);
    unsigned char *e = img + 16;
    for (size_t i = 0; i < state->ntexts; i++) {
        size_t payload = (state->lens[i] + 1 + 7) & ~(size_t)7;
        fab__le_put16(e, 1); /* PTX */
        fab__le_put32(e + 4, FAB__CU_FATBIN_ENTRY_BYTES);
        fab__le_put64(e + 8, payload);
        fab__le_put32(e + 28, 0); /* arch: any */
        fab__le_put64(e + 40, 0x11);
        memcpy(e + FAB__CU_FATBIN_ENTRY_BYTES, state->texts[i], state->lens[i]);
        e += FAB__CU_FATBIN_ENTRY_BYTES + payload;
    }
    pthread_mutex_lock(&fab__cu_links_mu);
    free(state->image);
    state->image = img;
    pthread_mutex_unlock(&fab__cu_links_mu);
    *cubinOut = img;
    if (sizeOut)
        *sizeOut = 16 + body;
    return CUDA_SUCCESS;
}

CUresult cuLinkDestroy(CUlinkState state)
{
    FAB__CU_ENTER();
    bool found = false;
    pthread_mutex_lock(&fab__cu_links_mu);
    for (struct CUlinkState_st **p = &fab__cu_links; *p; p = &(*p)->next) {
        if (*p == state) {
            *p = state->next;
            found = true;
            break;
        }
    }
    pthread_mutex_unlock(&fab__cu_links_mu);
    if (!found)
        return CUDA_ERROR_INVALID_HANDLE;
    for (size_t i = 0; i < state->ntexts; i++)
        free(state->texts[i]);
    free(state->texts);
    free(state->lens);
    free(state->image);
    free(state);
    return CUDA_SUCCESS;
}
