/* PTX text in a code image: whether bytes are PTX, and the kernels and
 * globals it declares (image.h's parse hands PTX here).
 *
 * The text is parsed whole by the PTX front end (src/ptx, the project's one
 * PTX parser): every `.entry` with a body is a kernel; every `.global` or
 * `.const` variable is a global, its size from its type, vector width and
 * array dimensions, its initial value from its initializer (addresses in it
 * read as zeros here: the PTX engine places them). `.visible` and `.weak`
 * change nothing here; `.extern` declares what another module defines, so
 * it adds nothing. The text must start (after comments) with `.version`. */
#include "src/cuda/image_impl.h"
#include "src/ptx/ptx.h"

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

/* Whether the text starts (after white space and comments) with .version:
 * what tells PTX from bytes that are no image at all. */
static bool fab__cu_ptx_looks_like_ptx(const char *p, size_t len)
{
    const char *end = p + len;
    while (p < end) {
        if (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r' || *p == '\f' || *p == '\v') {
            p++;
        } else if (end - p >= 2 && p[0] == '/' && p[1] == '/') {
            while (p < end && *p != '\n')
                p++;
        } else if (end - p >= 2 && p[0] == '/' && p[1] == '*') {
            const char *q = p + 2;
            while (end - q >= 2 && !(q[0] == '*' && q[1] == '/'))
                q++;
            p = end - q >= 2 ? q + 2 : end;
        } else {
            break;
        }
    }
    return end - p >= 8 && memcmp(p, ".version", 8) == 0;
}

CUresult fab__cu_ptx_parse(const char *text, size_t len, fab__cu_image_t *img)
{
    const char *nul = memchr(text, '\0', len);
    if (nul)
        len = (size_t)(nul - text);
    if (!fab__cu_ptx_looks_like_ptx(text, len))
        return fab__cu_image_fail(img, CUDA_ERROR_INVALID_IMAGE,
                                  "neither a cubin, a fatbin nor PTX text (which starts with .version)");
    fab__ptx_module_t *m = NULL;
    fab__ptx_diag_t diag;
    fab__ptx_status_t st = fab__ptx_parse(text, len, &m, &diag);
    if (st == FAB__PTX_E_NOMEM)
        return CUDA_ERROR_OUT_OF_MEMORY;
    if (st != FAB__PTX_OK)
        return fab__cu_image_fail(img, CUDA_ERROR_INVALID_PTX, "PTX line %u: %s", (unsigned)diag.line,
                                  diag.msg);
    CUresult r = CUDA_SUCCESS;
    for (uint32_t i = 0; i < m->nfuncs && r == CUDA_SUCCESS; i++) {
        const fab__ptx_func_t *f = &m->funcs[i];
        if (f->entry && f->defined)
            r = fab__cu_image_add_kernel(img, f->name, strlen(f->name));
    }
    for (uint32_t i = 0; i < m->nvars && r == CUDA_SUCCESS; i++) {
        const fab__ptx_var_t *v = &m->vars[i];
        /* .extern ones another module defines; .texref and the like (no
         * type) hold nothing a copy reaches */
        if (v->func != FAB__PTX_NONE || v->linkage == FAB__PTX_L_EXTERN || v->type == FAB__PTX_T_NONE ||
            (v->space != FAB__PTX_S_GLOBAL && v->space != FAB__PTX_S_CONST))
            continue;
        if (v->size > FAB__CU_IMAGE_MAX_BYTES)
            r = fab__cu_image_fail(img, CUDA_ERROR_INVALID_PTX, "PTX: %s is too large", v->name);
        else
            r = fab__cu_image_add_global(img, v->name, strlen(v->name), (size_t)v->size, v->init);
    }
    fab__ptx_module_free(m);
    return r;
}
