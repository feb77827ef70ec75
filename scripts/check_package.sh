#!/usr/bin/env bash
# CI's check of the Debian package as a user meets it: build it from the plain
# build (tests/install/check_deb.sh), install it with apt-get, and use what it
# installed: both programs, `fabmem run` with the installed nvl72.ini, and (where
# NVIDIA's cuda.h is on the machine) the installed cuda.h example built against
# the installed emulation and run through `fabmem run`. The package is removed
# again at the end.
# Usage: scripts/check_package.sh [BUILD_DIR]   (default build)
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
sudo=""
[ "$(id -u)" -eq 0 ] || sudo=sudo
work=$(mktemp -d "${TMPDIR:-/tmp}/fabmem-package.XXXXXX")
cleanup() {
  $sudo apt-get remove -y -qq fabmem >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT

tests/install/check_deb.sh "$build" "$work/deb"
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get install -y -qq "$work"/deb/fabmem_*.deb >/dev/null
echo "package: installed $(dpkg-query -W -f='${Package} ${Version}' fabmem)"

/usr/bin/fabmem --version
/usr/bin/fabmemd --version
man -w fabmem >/dev/null 2>&1 || [ -f /usr/share/man/man1/fabmem.1 ]

# fabmem run: a daemon of its own serving the installed nvl72.ini, the program on tray07.
/usr/bin/fabmem run --config /usr/share/doc/fabmem/examples/nvl72.ini --node tray07 -- \
  /usr/bin/fabmem nodes | grep -q "IMEX domain  nvl72-rack0, 18 node(s), this process on tray07"
echo "package: fabmem run gave an installed program the installed nvl72.ini"

if [ -f /usr/local/cuda/include/cuda.h ]; then
  cc -o "$work/exchange" /usr/share/doc/fabmem/examples/cuda_fabric_exchange.c \
     -I/usr/local/cuda/include -L/usr/lib/fabmem -lcuda
  /usr/bin/fabmem run -- "$work/exchange"
  echo "package: the installed example ran through fabmem run on the installed emulation"
else
  echo "package: no NVIDIA cuda.h here; the cuda.h example was not built"
fi
