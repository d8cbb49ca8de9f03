#!/usr/bin/env bash
# Seconds from a kernel edit to the emulator's answer (issue 27): the learner's loop.
#
#   scripts/learner_loop.sh [VARIANT] [EDITS] [COMMAND…]
#
# Appends a comment line to the kernel file of VARIANT (default interleaved), times COMMAND
# (default `./x run --backend emulator --variant VARIANT --log2 16`) until its answer, EDITS
# times (default 5), after one warm-up run, and restores the file, whatever happens. Prints each
# edit's seconds and their median, and a CSV line per edit on stdout when CSV=1.
set -euo pipefail
cd "$(dirname "$0")/.."
variant=${1:-interleaved}
edits=${2:-5}
shift $(( $# > 2 ? 2 : $# ))
cmd=("$@")
[ ${#cmd[@]} -eq 0 ] && cmd=(./x run --backend emulator --variant "$variant" --log2 16)
file=$(ls kernels/src/*/"$variant".rs 2>/dev/null | head -1)
[ -n "$file" ] || { echo "learner_loop: no kernel file kernels/src/*/$variant.rs" >&2; exit 2; }
backup=$(mktemp)
cp "$file" "$backup"
trap 'cp "$backup" "$file"; rm -f "$backup"' EXIT

echo "learner_loop: warm-up: ${cmd[*]}" >&2
"${cmd[@]}" >/dev/null
times=()
for i in $(seq 1 "$edits"); do
  echo "// learner_loop.sh: edit $i" >>"$file"
  start=$(date +%s.%N)
  "${cmd[@]}" >/dev/null
  end=$(date +%s.%N)
  t=$(echo "$end - $start" | bc -l)
  times+=("$t")
  printf 'edit %d: %.2f s\n' "$i" "$t" >&2
  [ "${CSV:-0}" = 1 ] && printf '%s,%d,%.3f\n' "$variant" "$i" "$t"
done
median=$(printf '%s\n' "${times[@]}" | sort -g | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2}')
printf 'median of %d edits: %.2f s (%s)\n' "$edits" "$median" "${cmd[*]}" >&2
