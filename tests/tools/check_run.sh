#!/usr/bin/env bash
# fabmem run --check over a program whose two processes have lifetime bugs:
# the run exits with --error-exitcode, and --json holds every finding of
# both processes as one JSON document.
# Usage: check_run.sh FABMEM TEST_CUDA_CHECK
set -u
tool=$1 helper=$2
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
out=$("$tool" run --check --error-exitcode 3 --json "$dir/run.json" -- \
  sh -c '"$0" --helper leaks /dev/null; "$0" --helper double_free /dev/null' "$helper" 2>&1)
got=$?
fail() { printf 'check_run: %s\n%s\n' "$1" "$out" >&2; [ -f "$dir/run.json" ] && cat "$dir/run.json" >&2; exit 1; }
[ "$got" -eq 3 ] || fail "exit status $got, wanted 3"
printf '%s\n' "$out" | grep -q 'fabmem run --check: 6 findings in 2 processes' || fail "no summary line"
[ -f "$dir/run.json" ] || fail "no --json file"
for want in '"count": 6' '"finding": "leaked-allocation"' '"finding": "leaked-import"' \
            '"finding": "leaked-memory"' '"finding": "double-free"' '"process": true'; do
  grep -q -- "$want" "$dir/run.json" || fail "--json lacks $want"
done
# The same program without bugs: the program's own status, nothing found.
out=$("$tool" run --check --error-exitcode 3 -- "$helper" --helper clean /dev/null 2>&1)
got=$?
[ "$got" -eq 0 ] || fail "clean run: exit status $got, wanted 0"
printf '%s\n' "$out" | grep -q 'fabmem run --check: 0 findings in 1 process$' || fail "clean run: no summary"
printf '%s\n' "$out"
