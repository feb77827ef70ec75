/* Kernel plugins (plugin.c): the shared libraries FABMEM_KERNELS names,
 * loaded once, and the lookup of a kernel's CPU implementation by name. No
 * lock of the driver's is needed: the libraries are loaded inside a
 * pthread_once and never change after. */
#ifndef FAB_CUDA_PLUGIN_H
#define FAB_CUDA_PLUGIN_H

#include <stddef.h>

#include "fabmem/kernel.h"

/* Load the libraries of FABMEM_KERNELS, once per process; a library that
 * cannot be loaded is said in the log and skipped. */
void fab__cu_plugins_load(void);

/* fab_kernel_<name> from the first plugin that exports it, or NULL. Loads the
 * plugins first if no call did yet. */
fab_kernel_fn fab__cu_plugin_find(const char *name);

/* name demangled (an Itanium C++ name, through libstdc++'s __cxa_demangle
 * found at run time) into out, or name itself when it is not mangled or no
 * demangler is at hand. */
void fab__cu_plugin_demangle(const char *name, char *out, size_t len);

#endif /* FAB_CUDA_PLUGIN_H */
