#!/usr/bin/env bash
# Seconds from a kernel edit to the emulator's answer (issue 27): the learner's loop.
#
#   scripts/learner_loop.sh [VARIANT] [EDITS] [COMMAND…]
#
# Appends a comment line to the kernel file of VARIANT (default interleaved), times COMMAND
# (default `./x run --backend emulator --variant VARIANT --log2 16`) until its answer, EDITS
# times (default 5), after one warm-up run, and restores the file, whatever happens. Prints each
# edit's seconds and their median, and a CSV line per edit on stdout when CSV=1.
# FILE=path edits that file instead (an exercise: FILE=learn/exercises/01_neighbored_less.rs
# scripts/learner_loop.sh neighbored_less 5 ./x learn 1). COMMAND may exit with 1 (`./x learn`'s
# "not yet"); 2 or more stops the script.
set -euo pipefail
cd "$(dirname "$0")/.."
variant=${1:-interleaved}
edits=${2:-5}
shift $(( $# > 2 ? 2 : $# ))
cmd=("$@")
[ ${#cmd[@]} -eq 0 ] && cmd=(./x run --backend emulator --variant "$variant" --log2 16)
file=${FILE:-$(ls kernels/src/*/"$variant".rs 2>/dev/null | head -1)}
[ -n "$file" ] && [ -f "$file" ] || { echo "learner_loop: no file to edit (kernels/src/*/$variant.rs, or FILE)" >&2; exit 2; }
# The command's answer: exit status 0 or 1 (a check that says "not yet"); anything else stops.
answer() {
  local rc=0
  "${cmd[@]}" >/dev/null || rc=$?
  [ "$rc" -le 1 ] || { echo "learner_loop: ${cmd[*]} exited with $rc" >&2; exit "$rc"; }
}
backup=$(mktemp)
cp "$file" "$backup"
trap 'cp "$backup" "$file"; rm -f "$backup"' EXIT

echo "learner_loop: warm-up: ${cmd[*]}" >&2
answer
times=()
for i in $(seq 1 "$edits"); do
  echo "// learner_loop.sh: edit $i" >>"$file"
  start=$(date +%s.%N)
  answer
  end=$(date +%s.%N)
  t=$(echo "$end - $start" | bc -l)
  times+=("$t")
  printf 'edit %d: %.2f s\n' "$i" "$t" >&2
  [ "${CSV:-0}" = 1 ] && printf '%s,%d,%.3f\n' "$variant" "$i" "$t"
done
median=$(printf '%s\n' "${times[@]}" | sort -g | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2}')
printf 'median of %d edits: %.2f s (%s)\n' "$edits" "$median" "${cmd[*]}" >&2
