#!/usr/bin/env bash
# Installs the build into a scratch prefix, checks that every file docs/design.md ("Names")
# places is there, then builds and runs a consumer program with nothing but
# pkg-config, against the shared and against the static library, and a consumer
# project with CMake's find_package (tests/install/cmake_consumer), whose tests
# run against the installed emulation.
# Usage: check_install.sh BUILD_DIR SOURCE_DIR
set -euo pipefail
build=$1
src=$2
prefix=$(mktemp -d "${TMPDIR:-/tmp}/fabmem-install.XXXXXX")
trap 'rm -rf "$prefix"' EXIT

cmake --install "$build" --prefix "$prefix" >/dev/null
libdir=$(sed -n 's/^libdir=\${prefix}\///p' "$prefix"/lib*/pkgconfig/fabmem.pc)
want=(include/fabmem.h include/fabmem/status.h include/fabmem/handle.h include/fabmem/model.h
      include/fabmem/fabric.h include/fabmem/topology.h "$libdir/libfabmem.so" "$libdir/libfabmem.a"
      "$libdir/pkgconfig/fabmem.pc")
[ -x "$build/src/daemon/fabmemd" ] && want+=(bin/fabmemd)
[ -x "$build/tools/fabmem" ] && want+=(bin/fabmem)
# The emulations are built into lib/fabmem of the build tree.
[ -e "$build/lib/fabmem/libcuda.so.1" ] && want+=("$libdir/fabmem/libcuda.so.1" "$libdir/fabmem/libcuda.so")
[ -e "$build/lib/fabmem/libnvidia-ml.so.1" ] &&
  want+=("$libdir/fabmem/libnvidia-ml.so.1" "$libdir/fabmem/libnvidia-ml.so")
# The CUDA runtime sits beside the driver emulation.
[ -e "$build/lib/fabmem/libcudart.so.13" ] &&
  want+=("$libdir/fabmem/libcudart.so.13" "$libdir/fabmem/libcudart.so")
[ -e "$build/man/fabmem.1" ] && want+=(share/man/man1/fabmem.1 share/man/man8/fabmemd.8)
want+=("$libdir/cmake/fabmem/fabmemConfig.cmake" include/fabmem/version.h)
for f in "${want[@]}"; do
  if [ ! -e "$prefix/$f" ]; then
    echo "check_install: $f is not installed" >&2
    exit 1
  fi
done

export PKG_CONFIG_PATH="$prefix/$libdir/pkgconfig"
cc=${CC:-cc}
# shellcheck disable=SC2046
$cc -std=c11 -Wall -Wextra -Werror -o "$prefix/consumer" "$src/tests/install/consumer.c" \
    $(pkg-config --cflags --libs fabmem)
LD_LIBRARY_PATH="$prefix/$libdir" "$prefix/consumer"
# shellcheck disable=SC2046
$cc -std=c11 -o "$prefix/consumer-static" "$src/tests/install/consumer.c" \
    $(pkg-config --cflags fabmem) "$prefix/$libdir/libfabmem.a" $(pkg-config --static --libs-only-l fabmem | sed 's/-lfabmem//')
"$prefix/consumer-static"
cmake -S "$src/tests/install/cmake_consumer" -B "$prefix/cmake-consumer" \
      -DCMAKE_PREFIX_PATH="$prefix" >/dev/null
cmake --build "$prefix/cmake-consumer" >/dev/null
out=$(cd "$prefix/cmake-consumer" && ctest --output-on-failure -V 2>&1) || { echo "$out" >&2; exit 1; }
if [ -e "$prefix/$libdir/fabmem/libcuda.so.1" ] && ! grep -q "from $prefix/$libdir/fabmem/libcuda.so.1" <<<"$out"; then
  echo "check_install: the CMake consumer's test did not load the installed emulation:" >&2
  echo "$out" >&2
  exit 1
fi
echo "check_install: ${#want[@]} files in place; shared, static and CMake consumers run"
