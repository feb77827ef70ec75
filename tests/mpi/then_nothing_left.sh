#!/usr/bin/env bash
# Runs a command, then says what of the job's own daemon is left in $TMPDIR
# ("left: none" when nothing): fabmem run --node-per-rank removes it all
# before it returns. One line: the command's output, then that. Exits with
# the command's status.
out=$("$@" 2>&1)
rc=$?
printf '%s ' "$out"
left=$(ls -d "${TMPDIR:-/tmp}"/fabmem-job-* 2>/dev/null | tr '\n' ' ')
echo "left: ${left:-none}"
exit $rc
