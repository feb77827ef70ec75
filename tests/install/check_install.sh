#!/usr/bin/env bash
# Installs the build into a scratch prefix, checks that every file docs/design.md ("Names")
# places is there, then builds and runs a consumer program with nothing but
# pkg-config, against the shared and against the static library.
# Usage: check_install.sh BUILD_DIR SOURCE_DIR
set -euo pipefail
build=$1
src=$2
prefix=$(mktemp -d "${TMPDIR:-/tmp}/fabmem-install.XXXXXX")
trap 'rm -rf "$prefix"' EXIT

cmake --install "$build" --prefix "$prefix" >/dev/null
libdir=$(sed -n 's/^libdir=\${prefix}\///p' "$prefix"/lib*/pkgconfig/fabmem.pc)
want=(include/fabmem.h include/fabmem/status.h include/fabmem/handle.h include/fabmem/model.h
      include/fabmem/fabric.h "$libdir/libfabmem.so" "$libdir/libfabmem.a"
      "$libdir/pkgconfig/fabmem.pc")
[ -x "$build/src/daemon/fabmemd" ] && want+=(bin/fabmemd)
[ -x "$build/tools/fabmem" ] && want+=(bin/fabmem)
# The emulations are built into lib/fabmem of the build tree.
[ -e "$build/lib/fabmem/libcuda.so.1" ] && want+=("$libdir/fabmem/libcuda.so.1" "$libdir/fabmem/libcuda.so")
[ -e "$build/lib/fabmem/libnvidia-ml.so.1" ] &&
  want+=("$libdir/fabmem/libnvidia-ml.so.1" "$libdir/fabmem/libnvidia-ml.so")
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
echo "check_install: ${#want[@]} files in place; shared and static consumers run"
