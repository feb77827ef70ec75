/* The lifetime checker (FABMEM_CHECK=1, `fabmem run --check`): a record of
 * every object whose lifetime the program manages (allocations, imported
 * handles, mappings, reservations, cuMemAlloc memory, legacy IPC opens),
 * with the stack that made it, and the reports: at exit, what was never
 * released; at once, a use or a teardown the driver's rules forbid. check.c
 * owns it (checkreport.c writes its findings, checkfault.c has its fault
 * handler); check.c's top comment has the lifecycle and the rules.
 *
 * In the module order (state.h) this sits just below state: it uses the
 * fabric client that cuInit connected (to ask the daemon whether a refused
 * handle named memory now gone) and knows nothing of devices, contexts,
 * mappings or allocations; the modules that own those call its hooks.
 *
 * Cost when off: every hook is wrapped in FAB__CU_CHECK, one load of a flag
 * set once at load and a branch predicted not taken; no stack is captured
 * and no signal handler is installed.
 *
 * Locking: the checker has a mutex of its own, taken inside fab__cu.lock
 * (hooks are called with it held) and never the other way round; the
 * checker never takes fab__cu.lock. */
#ifndef FAB_CUDA_CHECK_H
#define FAB_CUDA_CHECK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "src/cuda/cuda_abi.h"

/* Set once, before any entry point can run, when FABMEM_CHECK is on. */
extern bool fab__cu_checking;

#define FAB__CU_CHECK(call)                                                  \
    do {                                                                     \
        if (__builtin_expect(__atomic_load_n(&fab__cu_checking, __ATOMIC_RELAXED), 0)) \
            call;                                                            \
    } while (0)

/* What a record is. */
typedef enum fab__cu_check_kind {
    FAB__CU_CHECK_ALLOC,    /* cuMemCreate handle; key: the handle */
    FAB__CU_CHECK_IMPORT,   /* cuMemImportFromShareableHandle handle; key: the handle */
    FAB__CU_CHECK_MAP,      /* cuMemMap mapping; key: its address */
    FAB__CU_CHECK_RESERVE,  /* cuMemAddressReserve range; key: its base */
    FAB__CU_CHECK_MEM,      /* cuMemAlloc / cuMemAllocPitch memory; key: its address */
    FAB__CU_CHECK_HOST,     /* cuMemAllocHost / cuMemHostAlloc memory; key: its address */
    FAB__CU_CHECK_IPC_OPEN, /* cuIpcOpenMemHandle mapping; key: its address */
    FAB__CU_CHECK_POOL,     /* cuMemAllocAsync / FromPoolAsync / cuMemPoolImportPointer
                               memory; key: its address */
    FAB__CU_CHECK_KINDS
} fab__cu_check_kind_t;

/* A new object of kind at key (size bytes of device, handle_types the
 * CU_MEM_HANDLE_TYPE_* bits it may be shared as, call the entry point that
 * made it); the stack is captured here. For a MAP record, other is the
 * allocation handle mapped. A new record at the key of a released one
 * replaces it (addresses are reused). */
void fab__cu_check_add(fab__cu_check_kind_t kind, uint64_t key, size_t size, int device,
                       unsigned handle_types, uint64_t other, const char *call);
/* One more handle reference to a live ALLOC or IMPORT record
 * (cuMemRetainAllocationHandle). */
void fab__cu_check_retain(uint64_t handle);
/* The end of one reference of a record (the object's last for every kind
 * but handles, which end when their references do); call is the entry
 * point. The record is kept, released, so that a later use can name who
 * released it. */
void fab__cu_check_release(fab__cu_check_kind_t kind, uint64_t key, const char *call);
/* cuMemUnmap of [addr, addr+size): the MAP records based inside it end. */
void fab__cu_check_unmap(uintptr_t addr, size_t size, const char *call);
/* A FABRIC export of handle as the 64 bytes fabric_handle: the daemon
 * names the allocation by the uuid in them when it is released with
 * exports never imported, which the checker reports. */
void fab__cu_check_export(uint64_t handle, const void *fabric_handle);
/* The driver itself exported allocation handle's memory (cuMulticastBindMem,
 * for the team's members): discounted from what the daemon later says was
 * never imported. */
void fab__cu_check_driver_export(uint64_t handle, const void *fabric_handle);

/* Reports at once. */
/* A call refused a handle (call's handle argument) the driver no longer
 * knows: a finding when the handle was this process's and is released. */
void fab__cu_check_stale_handle(uint64_t handle, const char *call);
/* A free of memory (kind MEM, HOST, POOL or IPC_OPEN) at addr the driver refused: a finding
 * when it was freed already. */
void fab__cu_check_stale_free(fab__cu_check_kind_t kind, uintptr_t addr, const char *call);
/* cuMemAddressFree of a reservation that still holds mappings. */
void fab__cu_check_free_mapped(uintptr_t base, size_t size, const char *call);
/* A copy or memset refused (result r) because [addr, addr+len) is not
 * wholly inside memory it may touch; write says which side. */
void fab__cu_check_bad_range(uintptr_t addr, size_t len, bool write, CUresult r, const char *call);
/* A FABRIC import the daemon refused as an invalid handle: asks the daemon
 * (no lock may be held) whether the handle named memory now released. */
void fab__cu_check_import_refused(const void *fabric_handle, const char *call);

#endif /* FAB_CUDA_CHECK_H */
