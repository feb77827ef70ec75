#!/usr/bin/env bash
# The man pages say what the programs say: every command that `fabmem --help`
# lists and every option that `fabmemd --help` lists is in the page, and both
# pages carry the version the programs print.
# Usage: check_man.sh MAN_DIR FABMEM FABMEMD
set -euo pipefail
man=$1
tool=$2
daemon=$3
fail=0
# help2man escapes '-' as '\-' in roff; compare on the unescaped text.
page() { sed 's/\\-/-/g; s/\\fB//g; s/\\fR//g; s/\\fI//g' "$1"; }
for cmd in $("$tool" --help | sed -n 's/^\(usage:\)\{0,1\} *fabmem \([a-z-]*\).*/\2/p'); do
  page "$man/fabmem.1" | grep -q "fabmem $cmd" || { echo "fabmem.1 lacks 'fabmem $cmd'" >&2; fail=1; }
done
for opt in $("$daemon" --help | grep -o -- '--[a-z-]*' | sort -u); do
  page "$man/fabmemd.8" | grep -q -- "$opt" || { echo "fabmemd.8 lacks $opt" >&2; fail=1; }
done
version=$("$tool" --version | awk '{print $2}')
grep -q "fabmem $version" "$man/fabmem.1" || { echo "fabmem.1 is not of version $version" >&2; fail=1; }
grep -q "fabmemd $version" "$man/fabmemd.8" || { echo "fabmemd.8 is not of version $version" >&2; fail=1; }
[ $fail -eq 0 ] && echo "check_man: both pages match --help and --version ($version)"
exit $fail
