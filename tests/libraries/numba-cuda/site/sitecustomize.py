# Loaded by every Python process of a library run (tests/libraries/*/run put this
# folder on PYTHONPATH). fabmem executes PTX, never SASS, and nvJitLink's output
# is SASS alone; so the run hides nvJitLink from the process, as on a machine
# without it. numba-cuda then compiles without LTO and cuda.core links through
# the driver's cuLink* calls, whose image keeps the PTX (docs/libraries.md).
try:
    import cuda.pathfinder as _pathfinder
except ImportError:  # a library run that does not use cuda-python
    _pathfinder = None

if _pathfinder is not None:
    _load = _pathfinder.load_nvidia_dynamic_lib

    def _load_without_nvjitlink(libname):
        if libname == "nvJitLink":
            raise _pathfinder.DynamicLibNotFoundError(
                "nvJitLink is hidden on fabmem: it links to SASS, which fabmem does not run")
        return _load(libname)

    _pathfinder.load_nvidia_dynamic_lib = _load_without_nvjitlink
