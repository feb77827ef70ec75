/* The NCCL settings fabmem run gives a program (run_nccl.c, docs/nccl.md). */
#ifndef FABMEM_TOOLS_RUN_NCCL_H
#define FABMEM_TOOLS_RUN_NCCL_H

/* NCCL_PROTO=^LL128 unless the user set NCCL_PROTO; a warning on stderr when
 * theirs allows LL128. */
void fab__run_nccl_env(void);

#endif
