/* Contexts (device.c), as the other modules need them: the calling thread's
 * current context, which decides the device of a copy, an import and an
 * access query, and the check that a context handle is a live one; and the
 * devices' topology refresh (deviceinfo.c). */
#ifndef FAB_CUDA_DEVICE_H
#define FAB_CUDA_DEVICE_H

#include "src/cuda/cuda_abi.h"

/* The device of the calling thread's current context in *dev_out, or
 * CUDA_ERROR_INVALID_CONTEXT and *dev_out left as it was when the thread has
 * none. */
CUresult fab__cu_current_device(int *dev_out);

/* The calling thread's current context in *ctx_out, or
 * CUDA_ERROR_INVALID_CONTEXT when it has none. */
CUresult fab__cu_current_ctx(CUcontext *ctx_out);

/* CUDA_SUCCESS for a live context (a primary one, or a cuCtxCreate one not
 * destroyed), else CUDA_ERROR_INVALID_CONTEXT. Takes fab__cu.lock for
 * reading: the caller must not hold it for writing. */
CUresult fab__cu_ctx_check(CUcontext ctx);

/* Ask the daemon for this node's record again and, when a field fault
 * changed it (`fabmem fault`), make fab__cu.topology the new topology (the
 * old one stays readable: the client keeps it until it closes). The callers
 * are the queries that report the fabric's state: the MULTICAST_SUPPORTED
 * attribute, cuDeviceCanAccessPeer and multicast's Fabric Manager check.
 * One round trip; nothing without a daemon. Takes fab__cu.lock for writing
 * only to store the pointer, and calls the client without it: the caller
 * must not hold it. */
void fab__cu_topology_refresh(void);

/* Sticky errors. A kernel that stopped on an illegal address, a trap or an
 * assert leaves the context it was launched in unusable, as the driver does:
 * every later synchronisation and launch in that context returns the error
 * (the first one stands). A context made afterwards starts clean, and so does
 * the primary context once it is reset (cuDevicePrimaryCtxReset) or released
 * by its last holder. Lock-free; any thread. fab__cu_sticky answers
 * CUDA_SUCCESS for a context with none, and for NULL. */
void fab__cu_sticky_set(CUcontext ctx, CUresult r);
CUresult fab__cu_sticky(CUcontext ctx);

#endif /* FAB_CUDA_DEVICE_H */
