#!/usr/bin/env bash
# Usage: then_nothing_left.sh [--stale] ID COMMAND [ARG...]
# Runs COMMAND, then says what of job ID's own daemon is left in
# $TMPDIR/fabmem-jobs-<uid> ("left: none" when nothing): fabmem run --node-per-rank removes it all
# before it returns. One line: the command's output, then that. Exits with
# the command's status.
# --stale: first leave the directory a killed job of id ID would have left
# (a count of 5 ranks, a socket no daemon serves), for the command to take over.
stale=0
if [ "${1:-}" = --stale ]; then stale=1; shift; fi
base=${TMPDIR:-/tmp}/fabmem-jobs-$(id -u)
dir=$base/$1
shift
if [ $stale -eq 1 ]; then
  rm -rf "$dir" "$dir.lock"
  # Another test's fabmem run may make $base at the same moment: losing
  # that race is no failure.
  { mkdir -m 0700 "$base" 2>/dev/null || [ -d "$base" ]; } && mkdir -m 0700 "$dir" &&
    echo 5 >"$dir/job.lock" && : >"$dir/fabmemd.sock" || exit 1
fi
out=$("$@" 2>&1)
rc=$?
printf '%s ' "$out"
left=$(ls -d "$dir" "$dir.lock" 2>/dev/null | tr '\n' ' ')
echo "left: ${left:-none}"
exit $rc
