/* Legacy CUDA IPC (ipc.c): cuIpcGetMemHandle, cuIpcOpenMemHandle(_v2),
 * cuIpcCloseMemHandle, cuIpcGetEventHandle, cuIpcOpenEventHandle. No other
 * module calls into it; the header exists so that the module has one, as
 * every module does. */
#ifndef FAB_CUDA_IPC_H
#define FAB_CUDA_IPC_H

#include "src/cuda/cuda_abi.h"

/* Why IPC is refused without a daemon, said once in the log; the code
 * every cuIpc* call returns then. */
CUresult fab__cu_ipc_client_missing(void);

#endif /* FAB_CUDA_IPC_H */
