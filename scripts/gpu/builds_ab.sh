#!/usr/bin/env bash
# A/B of builds of the command line on a GPU host: the same rows timed by each build in turn,
# in interleaved rounds (the builds' order rotates by round), ours only; the command line checks
# every row against the CPU itself (its verdict column).
#
#   scripts/gpu/builds_ab.sh DIR ROWS_FILE
#
# DIR holds one folder per build, each with its `reduce` and a COMMIT file naming the build.
# ROWS_FILE: one row of reduce's arguments a line (`--op select --type i32 --predicate
# lt:500`); blank lines and lines starting with # are skipped.
# Writes $OUT/ab.csv (variant, round, then reduce's CSV columns), $OUT/builds.txt (each build's
# COMMIT), $OUT/times.log, $OUT/stderr.log. Each build first runs one small, untimed row (its
# first launch JIT-compiles the PTX). Summarize with scripts/ab_table.py.
#
# Environment: OUT (.), BUILDS (the folders to compare, the base first; default: DIR's folders
# sorted), ROUNDS (2), N (2^28), REPEAT (20 timed calls a row), GUARD (seconds after which no
# further round starts; 0 for none), FIRST_ROUND (1: the number of the first round, so that a
# second call, FIRST_ROUND=2 with another OUT, goes on with the rotation where the first
# stopped). Exit status 0 when every row passed, 1 when one did not, 2 on bad arguments.
set -uo pipefail
usage="usage: builds_ab.sh DIR ROWS_FILE (DIR: a folder per build with its reduce and COMMIT)"
[ $# -eq 2 ] || { echo "builds_ab: two arguments expected, $# given; $usage" >&2; exit 2; }
dir=$1; rows_file=$2
[ -d "$dir" ] || { echo "builds_ab: no folder $dir; $usage" >&2; exit 2; }
[ -r "$rows_file" ] || { echo "builds_ab: cannot read the rows file $rows_file; $usage" >&2; exit 2; }
builds=${BUILDS:-$(cd "$dir" && ls -d -- */ 2>/dev/null | tr -d / | sort | tr '\n' ' ')}
read -r -a builds <<< "$builds"
[ ${#builds[@]} -ge 1 ] || { echo "builds_ab: no build folders in $dir; $usage" >&2; exit 2; }
for b in "${builds[@]}"; do
  [ -x "$dir/$b/reduce" ] || { echo "builds_ab: no executable $dir/$b/reduce; $usage" >&2; exit 2; }
done
mapfile -t rows < <(grep -v -e '^[[:space:]]*#' -e '^[[:space:]]*$' "$rows_file")
[ ${#rows[@]} -ge 1 ] || { echo "builds_ab: no rows in $rows_file; $usage" >&2; exit 2; }
rounds=${ROUNDS:-2}; n=${N:-268435456}; repeat=${REPEAT:-20}; guard=${GUARD:-0}; first=${FIRST_ROUND:-1}
for v in "$rounds" "$n" "$repeat" "$guard" "$first"; do
  [[ $v =~ ^[0-9]+$ ]] || { echo "builds_ab: ROUNDS, N, REPEAT, GUARD and FIRST_ROUND take whole numbers, not '$v'" >&2; exit 2; }
done
[ "$first" -ge 1 ] || { echo "builds_ab: FIRST_ROUND counts from 1, not '$first'" >&2; exit 2; }
out=${OUT:-.}; mkdir -p "$out"
csv=$out/ab.csv; times=$out/times.log; err=$out/stderr.log
: > "$times"; : > "$err"; : > "$out/builds.txt"
for b in "${builds[@]}"; do
  echo "$b: $(cat "$dir/$b/COMMIT" 2>/dev/null || echo '(no COMMIT file)')" >> "$out/builds.txt"
  "$dir/$b/reduce" --backend gpu --op select --n 1000 --repeat 1 > /dev/null 2>> "$err"
done
"$dir/${builds[0]}/reduce" --backend gpu --repeat 1 --format csv --op select --n 64 2>> "$err" \
  | grep -v '^#' | head -1 | sed 's/^/variant,round,/' > "$csv"
status=0; t0=$SECONDS
for ((r = first; r < first + rounds; r++)); do
  if [ "$guard" -gt 0 ] && [ $((SECONDS - t0)) -gt "$guard" ]; then
    echo "stopped before round $r: past the guard of $guard s" >> "$times"; break
  fi
  k=${#builds[@]}; shift_by=$(( (r - 1) % k ))
  order=("${builds[@]:shift_by}" "${builds[@]:0:shift_by}")
  for row in "${rows[@]}"; do
    for b in "${order[@]}"; do
      s=$SECONDS
      # shellcheck disable=SC2086 # a row is reduce's arguments, split on purpose
      line=$("$dir/$b/reduce" --backend gpu $row --n "$n" --repeat "$repeat" --format csv 2>> "$err" | grep -v '^#' | tail -1)
      echo "$b,$r,$line" >> "$csv"
      [[ $line == *,PASS ]] || status=1
      echo "$b $r $row: $((SECONDS - s)) s" >> "$times"
    done
  done
done
echo "done at $((SECONDS - t0)) s" >> "$times"
exit $status
