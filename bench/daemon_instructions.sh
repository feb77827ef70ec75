#!/bin/sh
# The daemon's user-space instructions per import: bench_fabric --imports N
# with fabmemd under callgrind, once with N imports and once with none, so
# that start-up, HELLO and shutdown cancel out. With P importers (at once,
# each making N/P imports), what the daemon's per-connection state costs.
# Usage: bench/daemon_instructions.sh [BUILD_DIR] [N] [P]   (default build, 20000, 1)
set -eu
build=${1:-build}
n=${2:-20000}
p=${3:-1}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cat > "$work/fabmemd" <<WRAP
#!/bin/sh
exec valgrind --tool=callgrind --callgrind-out-file="$work/out.\$\$" "$(cd "$build" && pwd)/src/daemon/fabmemd" "\$@"
WRAP
chmod +x "$work/fabmemd"
total() {
    rm -f "$work"/out.*
    FABMEM_DAEMON="$work/fabmemd" "$build/bench/bench_fabric" --imports "$1" --importers "$2" \
        >/dev/null 2>&1
    sed -n 's/^summary: //p' "$work"/out.*
}
each=$(( n / p ))
with=$(total "$each" "$p")
without=$(total 0 "$p")
echo "daemon instructions: $with with $(( each * p )) imports from $p importers, $without with" \
     "none: $(( (with - without) / (each * p) )) per import"
if [ -n "${KEEP:-}" ]; then
    total "$each" "$p" >/dev/null
    cp "$work"/out.* "$KEEP"
fi
