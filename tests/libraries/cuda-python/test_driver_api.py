# cuda-python's driver API on fabmem, through cuda-bindings and cuda-core as
# released: NVRTC-compiled kernels launched by the driver, VMM memory shared with
# another process by a POSIX file descriptor, and legacy IPC. cuda-python's own
# test files are not on PyPI (the wheels carry none, and there is no sdist), so
# these are the project's; run by tests/libraries/cuda-python/run under fabmem.
import os
import subprocess
import sys

import numpy as np
import pytest
from cuda.bindings import driver, nvrtc

SAXPY = b"""
extern "C" __global__ void saxpy(float a, const float *x, float *y, unsigned n)
{
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        y[i] = a * x[i] + y[i];
}
"""


def ok(result):
    """The values of a cuda-bindings call, asserting that it succeeded."""
    err, *rest = result
    assert int(err) == 0, f"{err}"
    return rest[0] if len(rest) == 1 else tuple(rest)


@pytest.fixture
def context():
    ok(driver.cuInit(0))
    dev = ok(driver.cuDeviceGet(0))
    ctx = ok(driver.cuDevicePrimaryCtxRetain(dev))
    ok(driver.cuCtxSetCurrent(ctx))
    yield dev
    ok(driver.cuDevicePrimaryCtxRelease(dev))


def compile_ptx(source, name):
    prog = ok(nvrtc.nvrtcCreateProgram(source, name, 0, [], []))
    err, = nvrtc.nvrtcCompileProgram(prog, 1, [b"--gpu-architecture=compute_90"])
    if int(err) != 0:
        size = ok(nvrtc.nvrtcGetProgramLogSize(prog))
        log = b" " * size
        nvrtc.nvrtcGetProgramLog(prog, log)
        pytest.fail(log.decode())
    size = ok(nvrtc.nvrtcGetPTXSize(prog))
    ptx = b" " * size
    ok((nvrtc.nvrtcGetPTX(prog, ptx)[0], None))
    nvrtc.nvrtcDestroyProgram(prog)
    return ptx


def test_an_nvrtc_kernel_launched_by_the_driver_computes_saxpy(context):
    ptx = compile_ptx(SAXPY, b"saxpy.cu")
    module = ok(driver.cuModuleLoadData(ptx))
    kernel = ok(driver.cuModuleGetFunction(module, b"saxpy"))
    n = 1000
    x = np.arange(n, dtype=np.float32)
    y = np.full(n, 2.0, dtype=np.float32)
    dx = ok(driver.cuMemAlloc(x.nbytes))
    dy = ok(driver.cuMemAlloc(y.nbytes))
    ok((driver.cuMemcpyHtoD(dx, x, x.nbytes)[0], None))
    ok((driver.cuMemcpyHtoD(dy, y, y.nbytes)[0], None))
    stream = ok(driver.cuStreamCreate(0))
    args = ((3.0, dx, dy, n), (np.ctypeslib.ctypes.c_float, None, None, np.ctypeslib.ctypes.c_uint))
    ok((driver.cuLaunchKernel(kernel, (n + 127) // 128, 1, 1, 128, 1, 1, 0, stream, args, 0)[0], None))
    ok((driver.cuStreamSynchronize(stream)[0], None))
    out = np.empty_like(y)
    ok((driver.cuMemcpyDtoH(out, dy, out.nbytes)[0], None))
    np.testing.assert_array_equal(out, 3.0 * x + 2.0)
    for p in (dx, dy):
        ok((driver.cuMemFree(p)[0], None))
    ok((driver.cuStreamDestroy(stream)[0], None))
    ok((driver.cuModuleUnload(module)[0], None))


def test_a_cuda_core_program_compiles_and_launches(context):
    from cuda.core import Device, LaunchConfig, Program, ProgramOptions, launch

    dev = Device(0)
    dev.set_current()
    prog = Program(SAXPY.decode(), code_type="c++", options=ProgramOptions(arch="compute_90"))
    kernel = prog.compile("ptx").get_kernel("saxpy")
    n = 256
    x = np.arange(n, dtype=np.float32)
    stream = dev.create_stream()
    bx = dev.allocate(x.nbytes, stream=stream)
    by = dev.allocate(x.nbytes, stream=stream)
    ok((driver.cuMemcpyHtoD(int(bx.handle), x, x.nbytes)[0], None))
    ok((driver.cuMemsetD32(int(by.handle), 0x3F800000, n)[0], None))  # 1.0f
    launch(stream, LaunchConfig(grid=2, block=128), kernel, np.float32(2.0), bx, by, np.uint32(n))
    stream.sync()
    out = np.empty_like(x)
    ok((driver.cuMemcpyDtoH(out, int(by.handle), out.nbytes)[0], None))
    np.testing.assert_array_equal(out, 2.0 * x + 1.0)
    bx.close(stream)
    by.close(stream)


CHILD_VMM = """
import os, sys, numpy as np
from cuda.bindings import driver
def ok(r):
    assert int(r[0]) == 0, r[0]
    return r[1] if len(r) == 2 else None
ok(driver.cuInit(0)); dev = ok(driver.cuDeviceGet(0))
ok(driver.cuCtxSetCurrent(ok(driver.cuDevicePrimaryCtxRetain(dev))))
fd, size = int(sys.argv[1]), int(sys.argv[2])
h = ok(driver.cuMemImportFromShareableHandle(
    fd, driver.CUmemAllocationHandleType.CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR))
ptr = ok(driver.cuMemAddressReserve(size, 0, 0, 0))
ok(driver.cuMemMap(ptr, size, 0, h, 0))
acc = driver.CUmemAccessDesc()
acc.location.type = driver.CUmemLocationType.CU_MEM_LOCATION_TYPE_DEVICE
acc.location.id = 0
acc.flags = driver.CUmemAccess_flags.CU_MEM_ACCESS_FLAGS_PROT_READWRITE
ok(driver.cuMemSetAccess(ptr, size, [acc], 1))
got = np.empty(4, dtype=np.uint32)
ok(driver.cuMemcpyDtoH(got, ptr, got.nbytes))
ok(driver.cuMemsetD32(ptr, 0xC0FFEE, 1))
ok(driver.cuMemUnmap(ptr, size)); ok(driver.cuMemRelease(h)); ok(driver.cuMemAddressFree(ptr, size))
print(" ".join(str(int(v)) for v in got))
"""


def test_vmm_memory_exported_as_a_posix_fd_is_the_same_memory_in_a_child(context):
    fd_type = driver.CUmemAllocationHandleType.CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR
    prop = driver.CUmemAllocationProp()
    prop.type = driver.CUmemAllocationType.CU_MEM_ALLOCATION_TYPE_PINNED
    prop.location.type = driver.CUmemLocationType.CU_MEM_LOCATION_TYPE_DEVICE
    prop.location.id = 0
    prop.requestedHandleTypes = fd_type
    gran = ok(driver.cuMemGetAllocationGranularity(
        prop, driver.CUmemAllocationGranularity_flags.CU_MEM_ALLOC_GRANULARITY_MINIMUM))
    size = int(gran)
    h = ok(driver.cuMemCreate(size, prop, 0))
    ptr = ok(driver.cuMemAddressReserve(size, 0, 0, 0))
    ok((driver.cuMemMap(ptr, size, 0, h, 0)[0], None))
    acc = driver.CUmemAccessDesc()
    acc.location.type = driver.CUmemLocationType.CU_MEM_LOCATION_TYPE_DEVICE
    acc.location.id = 0
    acc.flags = driver.CUmemAccess_flags.CU_MEM_ACCESS_FLAGS_PROT_READWRITE
    ok((driver.cuMemSetAccess(ptr, size, [acc], 1)[0], None))
    data = np.array([7, 8, 9, 10], dtype=np.uint32)
    ok((driver.cuMemcpyHtoD(ptr, data, data.nbytes)[0], None))
    fd = ok(driver.cuMemExportToShareableHandle(h, fd_type, 0))
    child = subprocess.run([sys.executable, "-c", CHILD_VMM, str(fd), str(size)],
                           pass_fds=(fd,), capture_output=True, text=True, timeout=120)
    os.close(fd)
    assert child.returncode == 0, child.stderr
    assert child.stdout.split() == ["7", "8", "9", "10"]
    back = np.empty(1, dtype=np.uint32)
    ok((driver.cuMemcpyDtoH(back, ptr, back.nbytes)[0], None))
    assert int(back[0]) == 0xC0FFEE  # the child's write, in our mapping
    ok((driver.cuMemUnmap(ptr, size)[0], None))
    ok((driver.cuMemRelease(h)[0], None))
    ok((driver.cuMemAddressFree(ptr, size)[0], None))


CHILD_IPC = """
import sys, numpy as np
from cuda.bindings import driver
def ok(r):
    assert int(r[0]) == 0, r[0]
    return r[1] if len(r) == 2 else None
ok(driver.cuInit(0)); dev = ok(driver.cuDeviceGet(0))
ok(driver.cuCtxSetCurrent(ok(driver.cuDevicePrimaryCtxRetain(dev))))
handle = driver.CUipcMemHandle()
handle.reserved = bytes.fromhex(sys.argv[1])
ptr = ok(driver.cuIpcOpenMemHandle(handle, 1))
got = np.empty(3, dtype=np.int64)
ok(driver.cuMemcpyDtoH(got, ptr, got.nbytes))
ok(driver.cuIpcCloseMemHandle(ptr))
print(" ".join(str(int(v)) for v in got))
"""


def test_a_legacy_ipc_handle_opens_the_memory_in_another_process(context):
    data = np.array([-1, 2**40, 3], dtype=np.int64)
    ptr = ok(driver.cuMemAlloc(data.nbytes))
    ok((driver.cuMemcpyHtoD(ptr, data, data.nbytes)[0], None))
    handle = ok(driver.cuIpcGetMemHandle(ptr))
    child = subprocess.run([sys.executable, "-c", CHILD_IPC, bytes(handle.reserved).hex()],
                           capture_output=True, text=True, timeout=120)
    assert child.returncode == 0, child.stderr
    assert child.stdout.split() == [str(v) for v in data]
    ok((driver.cuMemFree(ptr)[0], None))
