/* `fabmem run` (fabmem_run.c), and the tool's usage text it shows on bad
 * usage (fabmem.c). */
#ifndef FABMEM_TOOLS_FABMEM_RUN_H
#define FABMEM_TOOLS_FABMEM_RUN_H

#include <stdio.h>

/* argv[0] is "fabmem", argv[1] "run". Returns the exit status: the
 * program's, or 2 for bad usage and 1 when the run could not start. */
int fab__tool_run(int argc, char **argv);

/* fabmem's usage text, to out. */
void fab__tool_usage(FILE *out);

#endif /* FABMEM_TOOLS_FABMEM_RUN_H */
