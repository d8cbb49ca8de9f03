#!/usr/bin/env bash
# Nothing rebuilds without a change (issue #59): `cargo ARGS` (a build: `build …`, `test
# --no-run …`) in DIR, which must compile nothing (no `Compiling`, no build script run: the
# PTX's nested build included), optionally after touching files the build does not read.
#
#   scripts/no_rebuild.sh DIR [--touch FILE]... -- CARGO_ARGS...
#
# Exit status 0 when nothing was compiled; 1 with what was, and cargo's reason for each (its
# fingerprint log), when something was; 2 on bad arguments.
set -euo pipefail
say() { echo "no_rebuild: $*" >&2; }
[ $# -ge 1 ] && [ -d "$1" ] || { say "usage: scripts/no_rebuild.sh DIR [--touch FILE]... -- CARGO_ARGS... (DIR: a crate's folder)"; exit 2; }
dir=$1; shift
touched=()
while [ $# -gt 0 ] && [ "$1" != -- ]; do
  case $1 in
    --touch) [ $# -ge 2 ] || { say "--touch takes a file"; exit 2; }; touched+=("$2"); shift 2 ;;
    *) say "unknown argument '$1': expected --touch FILE or -- before cargo's arguments"; exit 2 ;;
  esac
done
[ "${1:-}" = -- ] && shift
[ $# -ge 1 ] || { say "no cargo command after --: e.g. -- build --release"; exit 2; }
cd "$dir"
for f in "${touched[@]}"; do
  [ -e "$f" ] || { say "--touch $f: no such file (in $dir)"; exit 2; }
  touch "$f"
done
start=$(date +%s.%N)
log=$(CARGO_LOG=cargo::core::compiler::fingerprint=info cargo "$@" -v 2>&1) || { echo "$log" >&2; say "cargo $* failed in $dir"; exit 1; }
seconds=$(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
built=$(grep -E '^ +(Compiling|Running) ' <<<"$log" || true)
if [ -n "$built" ]; then
  say "cargo $* in $dir${touched:+ (after touching ${touched[*]})} compiled something without a change:"
  echo "$built" | head -20 >&2
  grep -E 'stale|dirty' <<<"$log" | head -10 >&2 || true
  exit 1
fi
say "cargo $* in $dir${touched:+ after touching ${touched[*]}}: nothing compiled (${seconds} s)"
