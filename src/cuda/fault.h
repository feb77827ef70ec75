/* Per-call fault injection (FABMEM_FAULTS): the spec parser, the table of
 * specs, and the check every entry point's prologue makes. fault.c owns it.
 *
 * In the module order (state.h) this sits above state: it knows CUresult
 * names (cuda_abi.h) and the logger, nothing of devices, contexts or memory,
 * so state.h's prologue can call it. It cannot know the entry points' names,
 * which procaddress.c owns at the bottom of the order; procaddress.c passes
 * a name checker down to it (fab__cu_fault_set_names) when the library is
 * loaded, before any call can reach cuInit. */
#ifndef FAB_CUDA_FAULT_H
#define FAB_CUDA_FAULT_H

#include <stdbool.h>

#include "src/cuda/cuda_abi.h"

/* Whether a name is an entry point the table knows, by its base name as
 * cuGetProcAddress takes it. */
typedef bool (*fab__cu_fault_names_fn)(const char *base_name);
void fab__cu_fault_set_names(fab__cu_fault_names_fn known);

/* Read FABMEM_FAULTS and FABMEM_FAULTS_SEED, once for the process; the
 * result is kept and returned again on every later call. A bad spec gives
 * CUDA_ERROR_INVALID_VALUE with one error line naming the item and the
 * problem; then no fault is armed. */
CUresult fab__cu_fault_load(void);
/* Arm the loaded specs: called by cuInit once the driver is up, so that a
 * call before a successful cuInit still says NOT_INITIALIZED. */
void fab__cu_fault_arm(void);

/* Set once (fab__cu_fault_arm) when FABMEM_FAULTS has specs; the prologue's
 * one load and branch. */
extern bool fab__cu_faults_armed;

/* The CUresult a spec injects into this call of func (the entry point's
 * __func__, e.g. cuMemAlloc_v2_ptds, matched by its base name), or
 * CUDA_SUCCESS to let it run. Counts the call for every spec of the name. */
CUresult fab__cu_fault_hit(const char *func);

/* Calls one entry point makes to another (cuMemAllocPitch's cuMemAlloc) are
 * not the user's calls: between mute(1) and mute(-1) this thread's calls
 * are neither counted nor failed. */
void fab__cu_fault_mute(int delta);
/* Whether this thread is inside such a call (the lifetime checker, check.c,
 * leaves the driver's own handles to the driver). */
bool fab__cu_fault_is_muted(void);
static inline CUresult fab__cu_fault_unmute(CUresult r)
{
    fab__cu_fault_mute(-1);
    return r;
}

/* The check, for a prologue or an entry point whose prologue sits in a
 * helper shared by several entry points. */
#define FAB__CU_FAULT_AS(name)                                                  \
    do {                                                                        \
        if (__atomic_load_n(&fab__cu_faults_armed, __ATOMIC_ACQUIRE)) {         \
            CUresult fab__cu_fault_ = fab__cu_fault_hit(name);                  \
            if (fab__cu_fault_ != CUDA_SUCCESS)                                 \
                return fab__cu_fault_;                                          \
        }                                                                       \
    } while (0)
#define FAB__CU_FAULT() FAB__CU_FAULT_AS(__func__)

/* An entry point's call of another entry point, neither counted nor failed:
 * CUresult r = FAB__CU_INNER(cuMemAlloc_v2(...)). */
#define FAB__CU_INNER(call) (fab__cu_fault_mute(1), fab__cu_fault_unmute(call))

#endif /* FAB_CUDA_FAULT_H */
