#!/usr/bin/env bash
# Builds the Debian package from a build folder and checks it as a user's apt
# would see it: its name, the files it carries, and that its Depends names the
# runtime libraries the programs link (worked out by dpkg-shlibdeps).
# Usage: check_deb.sh BUILD_DIR [OUT_DIR]   (OUT_DIR keeps the .deb; default: a temp dir)
set -euo pipefail
build=$(cd "$1" && pwd)
out=${2:-}
if [ -z "$out" ]; then
  out=$(mktemp -d "${TMPDIR:-/tmp}/fabmem-deb.XXXXXX")
  trap 'rm -rf "$out"' EXIT
fi
mkdir -p "$out"
(cd "$build" && cpack -G DEB -B "$out" >/dev/null)
version=$(sed -n 's/^#define FAB_VERSION_STRING "\(.*\)"/\1/p' "$build/include/fabmem/version.h")
deb="$out/fabmem_${version}_$(dpkg --print-architecture).deb"
[ -f "$deb" ] || { echo "check_deb: $deb was not made" >&2; exit 1; }
files=$(dpkg-deb -c "$deb" | awk '{print $6}')
fail=0
for f in ./usr/bin/fabmem ./usr/bin/fabmemd ./usr/include/fabmem.h ./usr/include/fabmem/version.h \
         ./usr/lib/libfabmem.so.0 ./usr/lib/pkgconfig/fabmem.pc ./usr/lib/cmake/fabmem/fabmemConfig.cmake \
         ./usr/lib/fabmem/libcuda.so.1 ./usr/share/man/man1/fabmem.1 ./usr/share/man/man8/fabmemd.8 \
         ./usr/share/doc/fabmem/README.md ./usr/share/doc/fabmem/examples/nvl72.ini; do
  grep -qx -- "$f" <<<"$files" || { echo "check_deb: the package lacks $f" >&2; fail=1; }
done
# The CUDA runtime, where it was built, beside the driver emulation.
if [ -e "$build/lib/fabmem/libcudart.so.13" ] && ! grep -qx -- ./usr/lib/fabmem/libcudart.so.13 <<<"$files"; then
  echo "check_deb: the package lacks ./usr/lib/fabmem/libcudart.so.13" >&2
  fail=1
fi
# The emulated driver must stay out of the loader's default path.
if grep -E '^\./usr/lib/(x86_64-linux-gnu/)?libcuda\.so' <<<"$files"; then
  echo "check_deb: libcuda is on the default library path" >&2
  fail=1
fi
depends=$(dpkg-deb -f "$deb" Depends)
# zlib is not among them: the core computes its CRC-32 itself (src/core/handle.c).
for lib in libc6 libsodium23 libinih1 libjansson4; do
  grep -q "\b$lib\b" <<<"$depends" || { echo "check_deb: Depends lacks $lib: $depends" >&2; fail=1; }
done
[ $fail -eq 0 ] && echo "check_deb: $(basename "$deb"), $(wc -l <<<"$files") entries, Depends: $depends"
exit $fail
