/* Multicast objects (multicast.c), as launches need them: publishing the
 * stores made through multicast mappings, and the table of helpers a CPU
 * kernel gets in its fab_launch_t (include/fabmem/kernel.h). multicast.c's
 * top comment has the design. None of these expects a lock held. */
#ifndef FAB_CUDA_MULTICAST_H
#define FAB_CUDA_MULTICAST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "fabmem/kernel.h"

/* Write the bytes this process stored through its multicast mappings since
 * the last call to every bound buffer of their objects, then refresh the
 * mappings from this process's own bound copies. A no-op when the process
 * holds no multicast object. */
void fab__cu_mc_sync(void);

/* Whether addr lies inside a multicast mapping of this process (the PTX
 * engine's multimem instructions take only those). */
bool fab__cu_mc_is(uintptr_t addr);

/* Reduce count elements at mc_addr over every bound buffer into out; op is
 * one of src/fabric/client_mc.h's FAB__CLIENT_MC_* (its elements 4 or 8
 * bytes). A CUresult. */
int fab__cu_mc_reduce(const void *mc_addr, void *out, size_t count, uint32_t op);

/* multimem.st (op 0) and multimem.red (op, a FAB__CLIENT_MC_*, over
 * elements of its size): bytes at addr, inside multicast mappings, reach
 * every bound buffer of their objects, this process's and its peers',
 * before it returns (through the daemon; this process's staging copy
 * holds a store too). A CUresult. */
int fab__cu_mc_write(uintptr_t addr, const void *in, size_t bytes, uint32_t op);

/* The helpers of fab_launch_t.multicast. */
extern const fab_multicast_ops_t fab__cu_mc_ops;

#endif /* FAB_CUDA_MULTICAST_H */
