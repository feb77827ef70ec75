#!/usr/bin/env bash
# Runs a command, then says what of the job's own daemon is left in $TMPDIR
# ("left: none" when nothing): fabmem run --node-per-rank removes it all
# before it returns. One line: the command's output, then that. Exits with
# the command's status.
# --stale ID: first leave the directory a killed job of id ID would have left
# (a count of 5 ranks, a socket no daemon serves), for the command to take over.
if [ "${1:-}" = --stale ]; then
  stale=${TMPDIR:-/tmp}/fabmem-job-$(id -u)-$2
  shift 2
  mkdir -m 0700 "$stale" && echo 5 >"$stale/job.lock" && : >"$stale/fabmemd.sock" || exit 1
fi
out=$("$@" 2>&1)
rc=$?
printf '%s ' "$out"
left=$(ls -d "${TMPDIR:-/tmp}"/fabmem-job-* 2>/dev/null | tr '\n' ' ')
echo "left: ${left:-none}"
exit $rc
