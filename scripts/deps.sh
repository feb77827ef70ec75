#!/usr/bin/env bash
# Installs, from Debian's packages, whatever the build and the tests need and
# this machine lacks. Run by scripts/demo.sh and scripts/test.sh; safe to re-run.
# Usage: scripts/deps.sh [fuzz|libraries]
#   fuzz       adds clang for the libFuzzer targets
#   libraries  adds Python's venv, then makes the virtual environment of the library
#              suites (FABMEM_PYENV, default build/pyenv) and installs into it, pinned,
#              every tests/libraries/*/requirements.txt (docs/libraries.md)
set -euo pipefail
mode=${1:-}
need=(gcc g++ make cmake pkg-config libc6-dev libcmocka-dev libsodium-dev libinih-dev
      libjansson-dev zlib1g-dev valgrind binutils help2man dpkg-dev
      libzstd1 liblz4-1
      openmpi-bin libopenmpi-dev)
[ "$mode" = fuzz ] && need+=(clang libclang-rt-14-dev)
if [ "$mode" = libraries ] && ! python3 -c 'import venv, ensurepip' 2>/dev/null; then
  need+=(python3 python3-venv)
fi
missing=()
for p in "${need[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "deps: installing ${missing[*]}"
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo=sudo
  export DEBIAN_FRONTEND=noninteractive
  $sudo apt-get update -qq
  $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
[ "$mode" = libraries ] || exit 0

# The library suites' virtual environment: made once, re-installed only when a
# requirements file changed (its stamp is the files' checksum).
cd "$(dirname "$0")/.."
venv=${FABMEM_PYENV:-build/pyenv}
reqs=(tests/libraries/*/requirements.txt)
[ -e "${reqs[0]}" ] || { echo "deps: no tests/libraries/*/requirements.txt" >&2; exit 1; }
sum=$(cat "${reqs[@]}" | sha256sum | cut -d' ' -f1)
if [ -x "$venv/bin/python" ] && [ "$(cat "$venv/.fabmem-requirements" 2>/dev/null)" = "$sum" ]; then
  exit 0
fi
[ -x "$venv/bin/python" ] || python3 -m venv "$venv"
args=()
for r in "${reqs[@]}"; do args+=(-r "$r"); done
echo "deps: installing into $venv: ${reqs[*]}"
"$venv/bin/python" -m pip install --disable-pip-version-check -q "${args[@]}"
echo "$sum" > "$venv/.fabmem-requirements"
