#!/usr/bin/env bash
# A library exports only its API: every defined dynamic symbol must match the
# given pattern (fab_ for libfabmem.so, cu for libcuda.so.1).
# Usage: check_exports.sh LIBRARY REGEX
set -euo pipefail
lib=$1
pattern=$2
syms=$(nm -D --defined-only "$lib" | awk '{print $3}')
count=$(printf '%s\n' "$syms" | grep -c . || true)
stray=$(printf '%s\n' "$syms" | grep -Ev "$pattern" || true)
if [ -n "$stray" ]; then
  echo "check_exports: $lib exports symbols outside its API:" >&2
  printf '  %s\n' $stray >&2
  exit 1
fi
if [ "$count" -eq 0 ]; then
  echo "check_exports: $lib exports nothing" >&2
  exit 1
fi
echo "check_exports: $lib exports $count symbols, all matching $pattern"
