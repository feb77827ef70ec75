#!/bin/sh
# The daemon's user-space instructions per import: bench_fabric --imports N
# with fabmemd under callgrind, once with N imports and once with none, so
# that start-up, HELLO and shutdown cancel out.
# Usage: bench/daemon_instructions.sh [BUILD_DIR] [N]   (default build, 20000)
set -eu
build=${1:-build}
n=${2:-20000}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cat > "$work/fabmemd" <<WRAP
#!/bin/sh
exec valgrind --tool=callgrind --callgrind-out-file="$work/out.\$\$" "$(cd "$build" && pwd)/src/daemon/fabmemd" "\$@"
WRAP
chmod +x "$work/fabmemd"
total() {
    rm -f "$work"/out.*
    FABMEM_DAEMON="$work/fabmemd" "$build/bench/bench_fabric" --imports "$1" >/dev/null 2>&1
    sed -n 's/^summary: //p' "$work"/out.*
}
with=$(total "$n")
without=$(total 0)
echo "daemon instructions: $with with $n imports, $without with none:" \
     "$(( (with - without) / n )) per import"
if [ -n "${KEEP:-}" ]; then
    total "$n" >/dev/null
    cp "$work"/out.* "$KEEP"
fi
