/* Where the fabmemd program is, for the client's autostart and for the
 * tools that start a daemon of their own (fabmem run): $FABMEM_DAEMON, else
 * next to the library or program that holds this code (installed: bin/ beside
 * lib/ or lib/fabmem/; the build tree: src/daemon/), else the first on $PATH. */
#ifndef FABMEM_FABRIC_FABMEMD_H
#define FABMEM_FABRIC_FABMEMD_H

#include <stddef.h>

/* The path into buf (cap bytes): 0, or -1 when none is found. */
int fab__fabmemd_find(char *buf, size_t cap);

#endif /* FABMEM_FABRIC_FABMEMD_H */
