/* Every rank of an MPI job maps every other rank's GPU memory through CUDA
 * fabric handles: the workspace that multi-node NVLink collectives build
 * (an allreduce's peer buffers, a symmetric heap). Written against cuda.h and
 * mpi.h alone: nothing here knows fabmem.
 *
 *   1. each rank allocates FABRIC-shareable memory (cuMemCreate), one 64-byte
 *      slot per rank, rounded up to the allocation granularity, and exports
 *      its 64-byte CUmemFabricHandle;
 *   2. the handles are exchanged with MPI_Allgather;
 *   3. each rank imports every peer's handle and maps it (cuMemAddressReserve,
 *      cuMemMap, cuMemSetAccess);
 *   4. each rank writes (its rank, the owner's rank) into its own slot of
 *      every buffer, its own included; MPI_Barrier;
 *   5. each rank checks every slot of its own buffer;
 *   6. teardown in the driver's order: unmap, free the address range,
 *      release the handle.
 * Before each phase the ranks agree (MPI_Allreduce) that every rank got
 * there; a rank whose CUDA call failed has printed one line naming its rank,
 * node, the call and its code, and then every rank tears down what it holds
 * and exits 1, so no rank waits forever for a failed one.
 *
 * On fabmem's emulation, an NVL72 rack, one rank per GPU:
 *   mpirun -np 72 fabmem run --node-per-rank --config examples/nvl72.ini -- \
 *       ./mpi_fabric_allgather
 * On a GB200 NVL72 with IMEX channels: mpirun -np 72 ./mpi_fabric_allgather.
 * The rank's GPU is its node-local rank modulo the GPUs it sees. */
#include <cuda.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define SLOT 64 /* bytes per rank in each buffer */

static int rank, nranks;
static char node[MPI_MAX_PROCESSOR_NAME + 1];

/* One line for a failed call: rank, node, call, code and its name. */
static int failed(const char *call, int peer, CUresult r)
{
    const char *name = "?", *text = "?";
    cuGetErrorName(r, &name);
    cuGetErrorString(r, &text);
    if (peer >= 0)
        fprintf(stderr, "mpi_fabric_allgather: rank %d (node %s): %s for rank %d's memory "
                        "failed: %s (%d, %s)\n", rank, node, call, peer, name, (int)r, text);
    else
        fprintf(stderr, "mpi_fabric_allgather: rank %d (node %s): %s failed: %s (%d, %s)\n", rank,
                node, call, name, (int)r, text);
    return 0;
}

#define TRY(call, peer) ((r = (call)) == CUDA_SUCCESS ? 1 : failed(#call, (peer), r))

/* Every rank says whether it got here; 1 when all did. Rank 0 names the
 * phase and how many failed. */
static int agree(int ok, const char *phase)
{
    int mine = !ok, bad = 0;
    MPI_Allreduce(&mine, &bad, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (bad != 0 && rank == 0)
        fprintf(stderr, "mpi_fabric_allgather: %d of %d rank(s) failed in %s; every rank tears "
                        "down and exits 1\n", bad, nranks, phase);
    return bad == 0;
}

/* This rank's node: fabmem's emulated node when there is one, else the host. */
static void node_name(void)
{
    const char *emulated = getenv("FABMEM_NODE");
    if (emulated != NULL && *emulated != '\0') {
        snprintf(node, sizeof(node), "%s", emulated);
    } else {
        int len = 0;
        MPI_Get_processor_name(node, &len);
        node[len] = '\0';
    }
}

/* The count of distinct strings among n of width w (rank 0's summary). */
static int distinct(const char *all, int n, size_t w)
{
    int count = 0;
    for (int i = 0; i < n; i++) {
        int seen = 0;
        for (int j = 0; j < i && !seen; j++)
            seen = strncmp(all + (size_t)i * w, all + (size_t)j * w, w) == 0;
        count += !seen;
    }
    return count;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    node_name();
    int local_rank = 0;
    MPI_Comm local;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &local);
    MPI_Comm_rank(local, &local_rank);
    MPI_Comm_free(&local);

    CUresult r = CUDA_SUCCESS;
    CUdevice dev = 0;
    CUcontext ctx = NULL;
    int ndev = 0, ok = 1, status = 1;
    char bus[32] = "";
    CUmemAllocationProp prop;
    memset(&prop, 0, sizeof(prop));
    size_t granularity = 0, size = 0;
    CUmemGenericAllocationHandle mine = 0;
    CUmemFabricHandle handle;
    memset(&handle, 0, sizeof(handle));
    CUmemFabricHandle *handles = calloc((size_t)nranks, sizeof(*handles));
    CUmemGenericAllocationHandle *peers = calloc((size_t)nranks, sizeof(*peers));
    CUdeviceptr *ptrs = calloc((size_t)nranks, sizeof(*ptrs));
    int *mapped = calloc((size_t)nranks, sizeof(*mapped));
    uint64_t *slots = calloc((size_t)nranks, SLOT);
    char *names = calloc((size_t)nranks, sizeof(node));
    char *buses = calloc((size_t)nranks, sizeof(bus));
    if (!handles || !peers || !ptrs || !mapped || !slots || !names || !buses) {
        fprintf(stderr, "mpi_fabric_allgather: rank %d (node %s): out of host memory\n", rank,
                node);
        ok = 0;
    }

    /* 1. The driver, this rank's GPU, its memory and the handle to it. */
    ok = ok && TRY(cuInit(0), -1) && TRY(cuDeviceGetCount(&ndev), -1);
    ok = ok && TRY(cuDeviceGet(&dev, local_rank % (ndev > 0 ? ndev : 1)), -1) &&
         TRY(cuDeviceGetPCIBusId(bus, (int)sizeof(bus), dev), -1) &&
         TRY(cuDevicePrimaryCtxRetain(&ctx, dev), -1) && TRY(cuCtxSetCurrent(ctx), -1);
    prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
    prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    prop.location.id = (int)dev;
    prop.requestedHandleTypes = CU_MEM_HANDLE_TYPE_FABRIC;
    ok = ok && TRY(cuMemGetAllocationGranularity(&granularity, &prop,
                                                 CU_MEM_ALLOC_GRANULARITY_RECOMMENDED), -1);
    if (ok)
        size = ((size_t)nranks * SLOT + granularity - 1) / granularity * granularity;
    ok = ok && TRY(cuMemCreate(&mine, size, &prop, 0), -1) &&
         TRY(cuMemExportToShareableHandle(&handle, mine, CU_MEM_HANDLE_TYPE_FABRIC, 0), -1);
    if (!agree(ok, "allocation and export"))
        goto teardown;

    /* 2. Everyone's handle (and, for the summary, node and GPU). */
    MPI_Allgather(&handle, (int)sizeof(handle), MPI_BYTE, handles, (int)sizeof(handle), MPI_BYTE,
                  MPI_COMM_WORLD);
    MPI_Gather(node, (int)sizeof(node), MPI_CHAR, names, (int)sizeof(node), MPI_CHAR, 0,
               MPI_COMM_WORLD);
    MPI_Gather(bus, (int)sizeof(bus), MPI_CHAR, buses, (int)sizeof(bus), MPI_CHAR, 0,
               MPI_COMM_WORLD);

    /* 3. Every peer's memory mapped here; our own through our own handle. */
    CUmemAccessDesc access;
    memset(&access, 0, sizeof(access));
    access.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    access.location.id = (int)dev;
    access.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
    for (int p = 0; ok && p < nranks; p++) {
        CUmemGenericAllocationHandle h = mine;
        if (p != rank) {
            ok = TRY(cuMemImportFromShareableHandle(&peers[p], &handles[p],
                                                    CU_MEM_HANDLE_TYPE_FABRIC), p);
            h = peers[p];
        }
        ok = ok && TRY(cuMemAddressReserve(&ptrs[p], size, 0, 0, 0), p);
        ok = ok && TRY(cuMemMap(ptrs[p], size, 0, h, 0), p);
        mapped[p] = ok;
        ok = ok && TRY(cuMemSetAccess(ptrs[p], size, &access, 1), p);
    }
    if (!agree(ok, "import and map"))
        goto teardown;

    /* 4. Our slot in every buffer: who wrote it, and whose buffer it is. */
    for (int p = 0; ok && p < nranks; p++) {
        uint64_t value = (uint64_t)rank << 32 | (uint32_t)p;
        ok = TRY(cuMemcpyHtoD(ptrs[p] + (size_t)rank * SLOT, &value, sizeof(value)), p);
    }
    ok = ok && TRY(cuCtxSynchronize(), -1);
    if (!agree(ok, "the writes"))
        goto teardown;
    MPI_Barrier(MPI_COMM_WORLD);

    /* 5. Every slot of our own buffer, written by its rank. */
    ok = TRY(cuMemcpyDtoH(slots, ptrs[rank], (size_t)nranks * SLOT), rank);
    int wrong = 0;
    for (int p = 0; ok && p < nranks; p++) {
        uint64_t want = (uint64_t)p << 32 | (uint32_t)rank;
        uint64_t got = slots[(size_t)p * (SLOT / sizeof(uint64_t))];
        if (got != want && wrong++ < 4)
            fprintf(stderr, "mpi_fabric_allgather: rank %d (node %s): slot %d holds %#llx, "
                            "want %#llx\n", rank, node, p, (unsigned long long)got,
                    (unsigned long long)want);
    }
    ok = ok && wrong == 0;
    if (!agree(ok, "the check"))
        goto teardown;
    status = 0;

teardown:
    /* 6. Unmap, free the range, release: every step even after a failure,
     * so that nothing stays behind. */
    ok = 1;
    for (int p = 0; ptrs != NULL && p < nranks; p++) {
        if (mapped != NULL && mapped[p])
            ok = TRY(cuMemUnmap(ptrs[p], size), p) && ok;
        if (ptrs[p] != 0)
            ok = TRY(cuMemAddressFree(ptrs[p], size), p) && ok;
        if (peers != NULL && peers[p] != 0)
            ok = TRY(cuMemRelease(peers[p]), p) && ok;
    }
    if (mine != 0)
        ok = TRY(cuMemRelease(mine), -1) && ok;
    if (ctx != NULL)
        ok = TRY(cuDevicePrimaryCtxRelease(dev), -1) && ok;
    if (!agree(ok, "teardown"))
        status = 1;
    if (status == 0 && rank == 0)
        printf("mpi_fabric_allgather: %d ranks on %d node(s), %d distinct GPUs: every rank "
               "mapped every rank's memory, every slot checked, all torn down\n",
               nranks, distinct(names, nranks, sizeof(node)), distinct(buses, nranks, sizeof(bus)));
    free(handles);
    free(peers);
    free(ptrs);
    free(mapped);
    free(slots);
    free(names);
    free(buses);
    MPI_Finalize();
    return status;
}
