#!/usr/bin/env bash
# Installs, from Debian's packages, whatever the build and the tests need and
# this machine lacks. Run by scripts/demo.sh and scripts/test.sh; safe to re-run.
# Usage: scripts/deps.sh [fuzz]   (fuzz adds clang for the libFuzzer targets)
set -euo pipefail
need=(gcc g++ make cmake pkg-config libc6-dev libcmocka-dev libsodium-dev libinih-dev
      libjansson-dev zlib1g-dev valgrind binutils help2man dpkg-dev
      libzstd1 liblz4-1
      openmpi-bin libopenmpi-dev)
[ "${1:-}" = fuzz ] && need+=(clang libclang-rt-14-dev)
missing=()
for p in "${need[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0
echo "deps: installing ${missing[*]}"
sudo=""
[ "$(id -u)" -eq 0 ] || sudo=sudo
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
