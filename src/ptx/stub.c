/* Placeholders for the interpreter, so that the driver emulation builds
 * against ptx.h while it is written: every load says the engine is not
 * there yet, so modules load as before (names only). The front end's
 * functions are parse.c's and link.c's. */
#include "src/ptx/ptx.h"


fab__ptx_status_t fab__ptx_program_load(fab__ptx_module_t *module, fab__ptx_program_t **program_out,
                                        fab__ptx_diag_t *diag)
{
    (void)diag;
    fab__ptx_module_free(module); /* it takes ownership */
    *program_out = NULL;
    return FAB__PTX_OK;
}
void fab__ptx_program_free(fab__ptx_program_t *program) { (void)program; }
size_t fab__ptx_program_nvars(const fab__ptx_program_t *program) { (void)program; return 0; }
void fab__ptx_program_var(const fab__ptx_program_t *program, size_t i, fab__ptx_var_info_t *info_out)
{ (void)program; (void)i; (void)info_out; }
void fab__ptx_program_place(fab__ptx_program_t *program, size_t i, void *address)
{ (void)program; (void)i; (void)address; }
void fab__ptx_program_init_var(const fab__ptx_program_t *program, size_t i) { (void)program; (void)i; }
const fab__ptx_kernel_t *fab__ptx_program_kernel(const fab__ptx_program_t *program, const char *name)
{ (void)program; (void)name; return NULL; }
void fab__ptx_kernel_info(const fab__ptx_kernel_t *kernel, fab__ptx_kernel_info_t *info_out)
{ (void)kernel; (void)info_out; }
void fab__ptx_kernel_param(const fab__ptx_kernel_t *kernel, uint32_t i, size_t *offset_out,
                           size_t *size_out)
{ (void)kernel; (void)i; *offset_out = 0; *size_out = 0; }
fab__ptx_status_t fab__ptx_run(const fab__ptx_launch_t *launch, fab__ptx_fault_t *fault_out)
{ (void)launch; (void)fault_out; return FAB__PTX_E_UNSUPPORTED; }
