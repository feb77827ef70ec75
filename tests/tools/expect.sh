#!/usr/bin/env bash
# Runs a command and checks its exit status and that its output (stdout and
# stderr together) matches a regular expression.
# Usage: expect.sh STATUS REGEX [--stdin FILE] COMMAND [ARGS...]
set -u
want=$1 regex=$2
shift 2
input=/dev/null
if [ "$1" = --stdin ]; then input=$2; shift 2; fi
out=$("$@" < "$input" 2>&1)
got=$?
if [ "$got" -ne "$want" ]; then
  printf 'expect: exit status %s, wanted %s; output:\n%s\n' "$got" "$want" "$out" >&2
  exit 1
fi
if ! printf '%s\n' "$out" | grep -Eq -- "$regex"; then
  printf 'expect: output does not match /%s/:\n%s\n' "$regex" "$out" >&2
  exit 1
fi
printf '%s\n' "$out"
