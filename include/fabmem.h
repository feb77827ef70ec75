/* fabmem: GPU memory-sharing code, testable without GPUs. The umbrella header:
 * include this one. Usable from C11 and C++. */
#ifndef FABMEM_H
#define FABMEM_H

#include "fabmem/version.h"
#include "fabmem/status.h"
#include "fabmem/handle.h"
#include "fabmem/model.h"
#include "fabmem/topology.h"
#include "fabmem/fabric.h"

#endif /* FABMEM_H */
