#!/usr/bin/env bash
# The static library's objects hold machine code, not only GCC's link-time
# bytecode (FABMEM_LTO builds them fat), so another compiler links it: the
# consumer program built with clang, without -flto, against BUILD_DIR's
# libfabmem.a. Exit 77 (a skip) where clang is not installed.
# Usage: check_static_clang.sh BUILD_DIR SOURCE_DIR
set -euo pipefail
build=$1
src=$2
if ! command -v clang >/dev/null 2>&1; then
  echo "check_static_clang: skipped: clang is not installed"
  exit 77
fi
out=$(mktemp -d "${TMPDIR:-/tmp}/fabmem-clang.XXXXXX")
trap 'rm -rf "$out"' EXIT
clang -std=c11 -fno-lto -I"$src/include" -I"$build/include" -o "$out/consumer" \
    "$src/tests/install/consumer.c" "$build/libfabmem.a" -linih -lz -lpthread
"$out/consumer"
echo "check_static_clang: libfabmem.a links with clang and the consumer runs"
