#!/usr/bin/env bash
# Installs, from Debian's packages, whatever the build and the tests need and
# this machine lacks. Run by scripts/demo.sh and scripts/test.sh; safe to re-run.
# Usage: scripts/deps.sh [fuzz|libraries]
#   fuzz       adds clang for the libFuzzer targets
#   libraries  adds Python's venv, then makes the virtual environment of the library
#              suites (FABMEM_PYENV, default build/pyenv) and installs into it, pinned,
#              every tests/libraries/*/requirements.txt, then CuPy from its sdist
#              against the shared CUDA runtime (tests/libraries/cupy/source.txt;
#              docs/libraries.md)
set -euo pipefail
mode=${1:-}
need=(gcc g++ make cmake pkg-config libc6-dev libcmocka-dev libsodium-dev libinih-dev
      libjansson-dev zlib1g-dev valgrind binutils help2man dpkg-dev
      libzstd1 liblz4-1
      openmpi-bin libopenmpi-dev)
[ "$mode" = fuzz ] && need+=(clang libclang-rt-14-dev)
if [ "$mode" = libraries ] && ! python3 -c 'import venv, ensurepip' 2>/dev/null; then
  need+=(python3 python3-venv)
fi
missing=()
for p in "${need[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "deps: installing ${missing[*]}"
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo=sudo
  export DEBIAN_FRONTEND=noninteractive
  $sudo apt-get update -qq
  $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
[ "$mode" = libraries ] || exit 0

# The library suites' virtual environment: made once, re-installed only when a
# requirements file changed (its stamp is the files' checksum).
cd "$(dirname "$0")/.."
venv=${FABMEM_PYENV:-build/pyenv}
# A requirements file that says "# needs: nvcc" is built from source against the
# toolkit (PyCUDA): its setup finds the toolkit through nvcc on PATH, and without the
# toolkit it is left out (its suite then reports itself skipped).
cuda_home=${CUDA_HOME:-/usr/local/cuda}
reqs=()
for r in tests/libraries/*/requirements.txt; do
  [ -e "$r" ] || continue
  if grep -q '^# needs: nvcc' "$r" && [ ! -x "$cuda_home/bin/nvcc" ]; then
    echo "deps: leaving out $r: it needs nvcc, and $cuda_home/bin/nvcc is absent"
    continue
  fi
  reqs+=("$r")
done
[ ${#reqs[@]} -gt 0 ] || { echo "deps: no tests/libraries/*/requirements.txt to install" >&2; exit 1; }
[ -x "$cuda_home/bin/nvcc" ] && export PATH="$cuda_home/bin:$PATH"
# CuPy, built from its sdist after the rest (its build and run dependencies are
# pinned in tests/libraries/cupy/requirements.txt, so no build isolation): the
# cupy-cuda13x wheels link NVIDIA's static runtime, which runs only on NVIDIA's
# driver. Naming the shared runtime on the link line before CuPy's objects
# (LDFLAGS) resolves every runtime call to libcudart.so.13, so the linker takes
# nothing from libcudart_static.a, which CuPy's build adds after them; without
# an rpath the loader then finds fabmem's libcudart.so.13 under `fabmem run`.
# Kernels of its own .cu files as compute_90 PTX only (CUPY_NVCC_GENERATE_CODE).
cupy_src=tests/libraries/cupy/source.txt
cupy_env=(CUDA_PATH="$cuda_home" CUPY_INSTALL_NO_RPATH=1 CUPY_NUM_BUILD_JOBS=2
          CUPY_NVCC_GENERATE_CODE=arch=compute_90,code=compute_90
          LDFLAGS="-L$cuda_home/lib64 -Wl,--no-as-needed -lcudart -Wl,--as-needed")
build_cupy=0
if [ -e "$cupy_src" ]; then
  if [ -x "$cuda_home/bin/nvcc" ] && [ -e "$cuda_home/lib64/libcudart.so" ]; then
    build_cupy=1
  else
    echo "deps: leaving out $cupy_src: it needs nvcc and libcudart.so under $cuda_home"
  fi
fi
sum=$( (cat "${reqs[@]}"; [ "$build_cupy" = 0 ] || { cat "$cupy_src"; echo "${cupy_env[*]}"; }) |
  sha256sum | cut -d' ' -f1)
if [ -x "$venv/bin/python" ] && [ "$(cat "$venv/.fabmem-requirements" 2>/dev/null)" = "$sum" ]; then
  exit 0
fi
[ -x "$venv/bin/python" ] || python3 -m venv "$venv"
args=()
for r in "${reqs[@]}"; do args+=(-r "$r"); done
echo "deps: installing into $venv: ${reqs[*]}"
"$venv/bin/python" -m pip install --disable-pip-version-check -q "${args[@]}"
if [ "$build_cupy" = 1 ]; then
  echo "deps: building $(grep -v '^#' "$cupy_src" | tr '\n' ' ')from its sdist into $venv (minutes)"
  env "${cupy_env[@]}" "$venv/bin/python" -m pip install --disable-pip-version-check -q \
    --no-deps --no-build-isolation --no-binary cupy -r "$cupy_src"
fi
echo "$sum" > "$venv/.fabmem-requirements"
