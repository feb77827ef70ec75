#!/usr/bin/env bash
# Builds fabmem and runs every test: one CTest case per test.
# Usage: scripts/test.sh [plain|asan|valgrind]   (default plain)
#   plain     warnings are errors; every test, examples and install checks
#   asan      the same tests built with AddressSanitizer + UndefinedBehaviorSanitizer
#   valgrind  the same tests, each run under valgrind memcheck
# Any failure, sanitizer report or memcheck error exits non-zero.
set -euo pipefail
cd "$(dirname "$0")/.."
mode=${1:-plain}
"$(dirname "$0")"/deps.sh
case $mode in
  plain)    dir=build;          flags=() ;;
  asan)     dir=build-asan;     flags=(-DFABMEM_SANITIZE=address,undefined) ;;
  valgrind) dir=build-valgrind; flags=(-DFABMEM_VALGRIND=ON) ;;
  *) echo "usage: scripts/test.sh [plain|asan|valgrind]" >&2; exit 2 ;;
esac
jobs=$(nproc 2>/dev/null || echo 2)
cmake -S . -B "$dir" -DFABMEM_WERROR=ON "${flags[@]}" >/dev/null
cmake --build "$dir" -j"$jobs"
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
cd "$dir"
ctest --output-on-failure -j"$jobs"
