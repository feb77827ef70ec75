#!/usr/bin/env bash
# Builds fabmem and runs every test: one CTest case per test.
# Usage: scripts/test.sh [plain|asan|valgrind|tsan|check|libraries]   (default plain)
#   plain     warnings are errors; every test, examples and install checks
#   asan      the same tests built with AddressSanitizer + UndefinedBehaviorSanitizer
#   valgrind  the same tests, each run under valgrind memcheck
#   tsan      the fabric tests (fabric.*: the client library, its lock and
#             fabmemd, threads sharing one client among them) built with
#             ThreadSanitizer; any report fails the test. Only these: libcuda
#             uses atomic_thread_fence, which ThreadSanitizer does not model
#   check     the plain build's cuda and cudart tests with the lifetime
#             checker on (FABMEM_CHECK=1), then a count of its findings per
#             program and kind; fails when a test fails or when a finding is
#             not one that a test makes on purpose (tests/check_expected.txt;
#             docs/cuda.md, "Lifetime checker")
#   libraries the plain build, the virtual environment of scripts/deps.sh
#             libraries, then every tests/libraries/*/run (other people's GPU
#             libraries running their own tests on fabmem; docs/libraries.md);
#             a suite whose toolkit is absent is reported as skipped
# Any failure, sanitizer report or memcheck error exits non-zero.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
mode=${1:-plain}
"$(dirname "$0")"/deps.sh
case $mode in
  plain)    dir=build;          flags=() ;;
  asan)     dir=build-asan;     flags=(-DFABMEM_SANITIZE=address,undefined) ;;
  valgrind) dir=build-valgrind; flags=(-DFABMEM_VALGRIND=ON) ;;
  tsan)     dir=build-tsan;     flags=(-DFABMEM_SANITIZE=thread) ;;
  check)    dir=build;          flags=() ;;
  libraries) dir=build;         flags=() ;;
  *) echo "usage: scripts/test.sh [plain|asan|valgrind|tsan|check|libraries]" >&2; exit 2 ;;
esac
jobs=$(nproc 2>/dev/null || echo 2)
cmake -S . -B "$dir" -DFABMEM_WERROR=ON "${flags[@]}" >/dev/null
if [ "$mode" = tsan ]; then
  cmake --build "$dir" -j"$jobs" --target fabric_tests
  cd "$dir"
  TSAN_OPTIONS=${TSAN_OPTIONS:-halt_on_error=1:exitcode=66} \
    ctest --output-on-failure -j"$jobs" -L '^fabric$'
  exit
fi
cmake --build "$dir" -j"$jobs"
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
if [ "$mode" = libraries ]; then
  "$(dirname "$0")"/deps.sh libraries
  venv=${FABMEM_PYENV:-build/pyenv}
  export VIRTUAL_ENV=$root/$venv PATH=$root/$venv/bin:$PATH
  export FABMEM_BIN=$root/$dir/tools/fabmem
  passed=0 failed=0 skipped=0
  for run in tests/libraries/*/run; do
    lib=$(basename "$(dirname "$run")")
    echo "== library $lib =="
    rc=0
    nice -n 10 "$run" || rc=$?
    case $rc in
      0)  passed=$((passed + 1)) ;;
      77) skipped=$((skipped + 1)); echo "library $lib: skipped (above: why)" ;;
      *)  failed=$((failed + 1)); echo "library $lib: FAILED (exit $rc)" ;;
    esac
  done
  echo "libraries: $passed passed, $failed failed, $skipped skipped"
  [ "$failed" -eq 0 ]
  exit
fi
cd "$dir"
if [ "$mode" = check ]; then
  findings=$PWD/check-suite.jsonl
  rm -f "$findings"
  FABMEM_CHECK=1 FABMEM_CHECK_FILE=$findings ctest --output-on-failure -j"$jobs" -L '^cuda'
  echo "lifetime checker: findings per program and kind"
  grep -v '"process":true' "$findings" 2>/dev/null |
    sed -E 's/.*"program":"([^"]*)".*"finding":"([^"]*)".*/\2  \1/' | sort | uniq -c || true
  # Every finding must be one a test makes on purpose (tests/check_expected.txt).
  unexpected=$(grep -v '"process":true' "$findings" 2>/dev/null |
    sed -E 's/.*"program":"([^"]*)".*"finding":"([^"]*)".*/\2 \1/' |
    awk '{n = split($2, p, "/"); print $1, p[n]}' | sort -u |
    grep -vxF -f <(grep -v '^#' "$root/tests/check_expected.txt" | grep .) || true)
  if [ -n "$unexpected" ]; then
    echo "lifetime checker: findings no test makes on purpose (tests/check_expected.txt):"
    echo "$unexpected"
    exit 1
  fi
  echo "lifetime checker: every finding is one a test makes on purpose"
  exit 0
fi
ctest --output-on-failure -j"$jobs"
