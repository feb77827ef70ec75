# CuPy's legacy IPC on fabmem (cupy.cuda.runtime.ipc*), through CuPy built
# against the shared runtime (docs/libraries.md, "CuPy"): memory and an event
# shared with a child process by their handles, each side seeing the other's
# work. CuPy's own tests have none for these calls, so these are the project's;
# run by tests/libraries/cupy/run under fabmem, which gives the child the same
# emulated node.
import subprocess
import sys

import cupy
import pytest
from cupy.cuda import runtime

N = 1 << 16


def own_array(n, dtype):
    """An array on an allocation of its own (cudaMalloc through cupy.cuda.Memory), so
    that the handle's open maps the array itself."""
    dtype = cupy.dtype(dtype)
    mem = cupy.cuda.Memory(n * dtype.itemsize)
    return cupy.ndarray((n,), dtype, cupy.cuda.MemoryPointer(mem, 0))

CHILD_MEM = """
import sys
import cupy
from cupy.cuda import runtime
n = int(sys.argv[2])
ptr = runtime.ipcOpenMemHandle(bytes.fromhex(sys.argv[1]))
mem = cupy.cuda.UnownedMemory(ptr, n * 4, None)
a = cupy.ndarray((n,), cupy.float32, cupy.cuda.MemoryPointer(mem, 0))
want = cupy.arange(n, dtype=cupy.float32) * 3
assert bool((a == want).all()), "the child does not see the parent's values"
print(float(a.sum()))
a *= 2
runtime.deviceSynchronize()
runtime.ipcCloseMemHandle(ptr)
"""


def test_a_memory_handle_opens_the_parents_array_in_a_child():
    a = own_array(N, cupy.float32)
    a[...] = cupy.arange(N, dtype=cupy.float32) * 3
    runtime.deviceSynchronize()
    handle = runtime.ipcGetMemHandle(a.data.ptr)
    assert len(handle) == 64
    child = subprocess.run([sys.executable, "-c", CHILD_MEM, handle.hex(), str(N)],
                           capture_output=True, text=True, timeout=300)
    assert child.returncode == 0, child.stderr
    assert float(child.stdout) == float((cupy.arange(N, dtype=cupy.float64) * 3).sum())
    assert bool((a == cupy.arange(N, dtype=cupy.float32) * 6).all())


CHILD_OFFSET = """
import sys
import cupy
from cupy.cuda import runtime
offset, n = int(sys.argv[2]), int(sys.argv[3])
base = runtime.ipcOpenMemHandle(bytes.fromhex(sys.argv[1]))
mem = cupy.cuda.UnownedMemory(base, offset + n * 4, None)
a = cupy.ndarray((n,), cupy.int32, cupy.cuda.MemoryPointer(mem, offset))
assert bool((a == cupy.arange(n, dtype=cupy.int32)).all()), "not the parent's values"
a += 100
runtime.deviceSynchronize()
runtime.ipcCloseMemHandle(base)
"""


def test_an_array_inside_a_pool_block_is_shared_by_its_blocks_handle():
    # cudaIpcGetMemHandle of a pointer inside an allocation answers the allocation's
    # handle, whose open maps the allocation's base: the child adds the offset.
    block = cupy.cuda.Memory(N * 8)
    offset = N * 2
    a = cupy.ndarray((N,), cupy.int32, cupy.cuda.MemoryPointer(block, offset))
    a[...] = cupy.arange(N, dtype=cupy.int32)
    runtime.deviceSynchronize()
    handle = runtime.ipcGetMemHandle(a.data.ptr)
    assert handle == runtime.ipcGetMemHandle(block.ptr)
    child = subprocess.run([sys.executable, "-c", CHILD_OFFSET, handle.hex(), str(offset),
                            str(N)], capture_output=True, text=True, timeout=300)
    assert child.returncode == 0, child.stderr
    assert bool((a == cupy.arange(N, dtype=cupy.int32) + 100).all())


CHILD_EVENT = """
import sys
import cupy
from cupy.cuda import runtime
n = int(sys.argv[3])
ptr = runtime.ipcOpenMemHandle(bytes.fromhex(sys.argv[1]))
event = runtime.ipcOpenEventHandle(bytes.fromhex(sys.argv[2]))
runtime.eventSynchronize(event)
mem = cupy.cuda.UnownedMemory(ptr, n * 4, None)
a = cupy.ndarray((n,), cupy.int32, cupy.cuda.MemoryPointer(mem, 0))
print(int(a.sum()))
runtime.eventDestroy(event)
runtime.ipcCloseMemHandle(ptr)
"""


def test_an_event_handle_orders_the_childs_read_after_the_parents_kernel():
    a = own_array(N, cupy.int32)
    a.fill(0)
    runtime.deviceSynchronize()
    event = cupy.cuda.Event(block=False, disable_timing=True, interprocess=True)
    stream = cupy.cuda.Stream(non_blocking=True)
    with stream:
        a += 5
        event.record(stream)
    mem_handle = runtime.ipcGetMemHandle(a.data.ptr)
    event_handle = runtime.ipcGetEventHandle(event.ptr)
    child = subprocess.run([sys.executable, "-c", CHILD_EVENT, mem_handle.hex(),
                            event_handle.hex(), str(N)],
                           capture_output=True, text=True, timeout=300)
    assert child.returncode == 0, child.stderr
    assert int(child.stdout) == 5 * N


def test_opening_a_handle_in_the_process_that_made_it_is_refused():
    a = own_array(16, cupy.float32)
    handle = runtime.ipcGetMemHandle(a.data.ptr)
    with pytest.raises(runtime.CUDARuntimeError) as raised:
        runtime.ipcOpenMemHandle(handle)
    # cudaErrorDeviceUninitialized (201), NVIDIA's answer to a self-open too
    assert raised.value.status == 201, str(raised.value)


def test_an_event_without_the_interprocess_flag_has_no_handle():
    event = cupy.cuda.Event(block=False, disable_timing=True, interprocess=False)
    with pytest.raises(runtime.CUDARuntimeError) as raised:
        runtime.ipcGetEventHandle(event.ptr)
    assert "cudaErrorInvalidValue" in str(raised.value)
