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

# docs/ci.md's worked example, copied out of the page and run as written.
if [ -f /usr/local/cuda/include/cuda.h ]; then
  sed -n '/^<!-- ci-example/,/^```$/p' docs/ci.md | sed '1,2d;$d' > "$work/ci-example.sh"
  [ -s "$work/ci-example.sh" ] || { echo "package: no ci-example block in docs/ci.md" >&2; exit 1; }
  (cd "$work" && PATH=/usr/bin:$PATH bash -euo pipefail ci-example.sh)
  echo "package: docs/ci.md's example ran as written"
else
  echo "package: no NVIDIA cuda.h here; docs/ci.md's example was not run"
fi
