/* What fabmem run tells NCCL about the emulation, through the environment
 * NCCL documents, where the user has not said otherwise.
 *
 * LL128: NCCL's LL128 protocol trusts that a warp's 128-byte store lands
 * whole, its flag with its data, which NVLink gives and a CPU does not (the
 * PTX engine stores a vector as 8-byte words, docs/ptx.md). NCCL enables it
 * by default between NVLink-connected GPUs of compute capability 9.0 and up,
 * which is what the emulated trays are, so a run sets NCCL_PROTO=^LL128
 * (every protocol but LL128). A NCCL_PROTO the user set is kept; one that
 * names LL128 without excluding it is warned of. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "run_nccl.h"

void fab__run_nccl_env(void)
{
    const char *proto = getenv("NCCL_PROTO");
    if (proto == NULL || *proto == '\0') {
        setenv("NCCL_PROTO", "^LL128", 1);
        return;
    }
    if (proto[0] != '^' && strstr(proto, "LL128") != NULL)
        fprintf(stderr,
                "fabmem run: warning: NCCL_PROTO=%s allows LL128, which needs 128-byte stores "
                "to land whole and can corrupt data on the emulation; use Simple or LL "
                "(docs/nccl.md)\n",
                proto);
}
