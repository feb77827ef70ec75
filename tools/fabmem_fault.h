/* `fabmem fault`: change the emulated fabric's field faults in the running
 * daemon (docs/tools.md). */
#ifndef FABMEM_TOOLS_FABMEM_FAULT_H
#define FABMEM_TOOLS_FABMEM_FAULT_H

/* argv[0] is "fabmem", argv[1] "fault". Returns the exit status: 0 done,
 * 1 the daemon refused or none answers, 2 bad usage. */
int fab__tool_fault(int argc, char **argv);

#endif /* FABMEM_TOOLS_FABMEM_FAULT_H */
