/* Placeholders for the front end, so that the driver emulation and the
 * interpreter build against ptx.h while it is written: every parse says
 * the engine is not there yet, so modules load as before (names only). */
#include "src/ptx/ptx.h"


fab__ptx_status_t fab__ptx_parse(const char *text, size_t len, fab__ptx_module_t **module_out,
                                 fab__ptx_diag_t *diag)
{
    (void)text;
    (void)len;
    (void)diag;
    *module_out = NULL;
    return FAB__PTX_OK; /* nothing to run: launches without a plugin find no kernel */
}
fab__ptx_status_t fab__ptx_link(const fab__ptx_module_t *const *modules, size_t n,
                                fab__ptx_module_t **module_out, fab__ptx_diag_t *diag)
{
    (void)modules; (void)n; (void)diag;
    *module_out = NULL;
    return FAB__PTX_OK;
}
void fab__ptx_module_free(fab__ptx_module_t *module) { (void)module; }
