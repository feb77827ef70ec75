# Prints the test modules of numba-cuda's whole suite that load in a unittest run, one a
# line, for `python -m numba.runtests -m 2 $(...)` (docs/libraries.md, "The whole suite").
# `numba.runtests numba.cuda.tests` itself stops while loading: a module that calls
# pytest.importorskip at import raises pytest's Skipped, which unittest's loader does not
# take. Such modules, and those whose imports fail, are named on stderr instead.
# Run inside the venv, under `fabmem run` (numba-cuda lists its CUDA tests only where a
# device answers).
import importlib
import os
import sys

import numba.cuda.tests as suite

base = os.path.dirname(suite.__file__)
# The folders numba.cuda.tests' load_tests takes, in its order.
for sub in ("nocuda", "cudasim", "cudadrv", "cudapy", "nrt", "doc_examples"):
    for folder, dirs, files in sorted(os.walk(os.path.join(base, sub))):
        dirs.sort()
        if not os.path.isfile(os.path.join(folder, "__init__.py")):
            continue
        for f in sorted(files):
            if not (f.startswith("test_") and f.endswith(".py")):
                continue
            rel = os.path.relpath(os.path.join(folder, f[:-3]), base)
            name = "numba.cuda.tests." + rel.replace(os.sep, ".")
            try:
                importlib.import_module(name)
            except BaseException as e:  # pytest's Skipped is not an Exception
                print(f"not loaded: {name}: {type(e).__name__}: {e}", file=sys.stderr)
                continue
            print(name)
