#!/usr/bin/env bash
# Runs an MPI job under mpirun and checks what it leaves behind.
# Usage: mpi_job.sh [--outer FABMEM CONFIG] NP pass|fail REGEX... -- COMMAND [ARG...]
#   --outer  run mpirun itself under `FABMEM run --config CONFIG --`, whose
#            daemon the ranks then join
#   NP       the number of ranks (oversubscribed: the host may have 2 cores)
#   pass     mpirun must exit 0; fail: it must exit non-zero
#   REGEX    each must match the job's output (stdout and stderr, grep -E)
# Then, whatever the job's outcome: nothing is left in the job's private
# TMPDIR's fabmem-jobs-<uid> (no job directory, no lock) and no fabmemd serving a socket there still runs.
# Exits 77 (CTest's skip) when mpirun is not installed.
set -uo pipefail
outer=()
if [ "$1" = --outer ]; then outer=("$2" run --config "$3" --); shift 3; fi
np=$1 expect=$2
shift 2
regexes=()
while [ $# -gt 0 ] && [ "$1" != "--" ]; do regexes+=("$1"); shift; done
shift
if ! command -v mpirun >/dev/null 2>&1; then
  echo "SKIP: mpirun not found (Debian's openmpi-bin; scripts/deps.sh installs it)"
  exit 77
fi
tmp=$(mktemp -d "${TMPDIR:-/tmp}/fabmem-mpi.XXXXXX")
out=$tmp.out
# Open MPI as a container allows: oversubscribed, no binding, shared memory
# without ptrace (CMA), root allowed (CI runs as root), quiet about all of it.
flags=(--oversubscribe --bind-to none -np "$np" --mca btl self,vader
       --mca btl_vader_single_copy_mechanism none)
[ "$(id -u)" -eq 0 ] && flags+=(--allow-run-as-root)
export OMPI_MCA_rmaps_base_oversubscribe=1 OMPI_MCA_orte_base_help_aggregate=1
# The last rank out reports what the daemon still held (docs/mpi.md).
export FABMEM_RUN_REPORT=1
unset FABMEM_SOCKET FABMEM_NODE FABMEM_FAULTS CUDA_VISIBLE_DEVICES
start=$(date +%s.%N)
TMPDIR=$tmp "${outer[@]}" mpirun "${flags[@]}" "$@" >"$out" 2>&1
rc=$?
end=$(date +%s.%N)
cat "$out"
echo "mpi_job: mpirun -np $np exited $rc after $(awk "BEGIN { print $end - $start }") s"
bad=0
if [ "$expect" = pass ] && [ $rc -ne 0 ]; then echo "mpi_job: FAIL: want exit 0"; bad=1; fi
if [ "$expect" = fail ] && [ $rc -eq 0 ]; then echo "mpi_job: FAIL: want a non-zero exit"; bad=1; fi
for re in "${regexes[@]}"; do
  grep -Eq -- "$re" "$out" || { echo "mpi_job: FAIL: no line matches: $re"; bad=1; }
done
# A job torn down by mpirun (a rank failed) ends before its daemon: the
# daemon leaves once its last client is gone, then its janitor removes the
# job's directory and last <dir>.lock, which it holds (flock) until it exits.
# Waiting for that lock is waiting for the cleanup itself, not for a time.
for lock in "$tmp"/fabmem-jobs-*/*.lock; do
  [ -e "$lock" ] || continue
  if exec {fd}<"$lock"; then flock "$fd"; exec {fd}<&-; fi
done 2>/dev/null
left=$( (find "$tmp" -maxdepth 1 -name 'fabmem-run.*'
        find "$tmp"/fabmem-jobs-* -mindepth 1 -maxdepth 1) 2>/dev/null)
if [ -n "$left" ]; then echo "mpi_job: FAIL: left behind: $left"; ls -la "$left"; bad=1; fi
# Every fabmemd of this job was started with --socket under $tmp. (/proc
# read directly: procps, which has pgrep, is not on every Debian machine.)
for proc in /proc/[0-9]*; do
  [ "$(cat "$proc/comm" 2>/dev/null)" = fabmemd ] || continue
  pid=${proc#/proc/}
  if tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | grep -qF -- "$tmp/"; then
    echo "mpi_job: FAIL: a daemon still runs: pid $pid: $(tr '\0' ' ' <"/proc/$pid/cmdline")"
    bad=1
  fi
done
rm -rf "$tmp" "$out"
exit $bad
