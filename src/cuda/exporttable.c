/* cuGetExportTable: the driver's answer to NVIDIA's own CUDA runtime.
 *
 * cuda.h declares cuGetExportTable but documents no table: the tables are
 * private interfaces between NVIDIA's runtime and NVIDIA's driver, one of
 * them a check that the driver is NVIDIA's. The emulation does not imitate
 * them. A program that asks is one that carries NVIDIA's runtime (linked
 * statically, nvcc's default, or NVIDIA's libcudart.so first on the library
 * path); fabmem's own runtime (libcudart.so.13 in lib/fabmem) never asks.
 * So every request fails with CUDA_ERROR_NOT_SUPPORTED ("operation not
 * supported": the driver cannot do what is asked, which is the truth; it is
 * not a bad value or a missing device), and the first one logs, once per
 * process and at error level, what happened and how to run the program.
 *
 * No state but the once-flag of the log line. */
#include "src/cuda/entry.h"

#include <pthread.h>

#include "src/common/log.h"

static pthread_once_t fab__cu_export_table_once = PTHREAD_ONCE_INIT;

static void fab__cu_export_table_log(void)
{
    fab__log(FAB__LOG_ERROR,
             "this program carries NVIDIA's CUDA runtime (it asked the driver for "
             "cuGetExportTable), which runs only on NVIDIA's driver; link the runtime shared "
             "(nvcc -cudart shared, or CMake CUDA_RUNTIME_LIBRARY Shared) and run it with "
             "fabmem's lib/fabmem first on the library path (fabmem run does this), so that it "
             "loads fabmem's libcudart.so.13");
}

CUresult cuGetExportTable(const void **ppExportTable, const CUuuid *pExportTableId)
{
    (void)pExportTableId;
    pthread_once(&fab__cu_export_table_once, fab__cu_export_table_log);
    if (ppExportTable)
        *ppExportTable = NULL;
    return CUDA_ERROR_NOT_SUPPORTED;
}
