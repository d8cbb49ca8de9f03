#!/usr/bin/env bash
# A/B of builds of the command line on a GPU host: the same rows timed by each build in turn,
# in interleaved rounds (the builds' order rotates by round), ours only; the command line checks
# every row against the CPU itself (its verdict column).
#
#   scripts/gpu/builds_ab.sh DIR ROWS_FILE
#
# DIR holds one folder per build, each with its `reduce` and a COMMIT file naming the build.
# ROWS_FILE: one row of reduce's arguments a line (`--op select --type i32 --predicate
# lt:500`); blank lines and lines starting with # are skipped. A row is given `--n N` unless it
# names its size itself (`--n`, `--log2`, or a matrix's `--rows`/`--cols`).
# Writes $OUT/ab.csv: build, round, row (the row's arguments), then reduce's CSV columns. The
# operations print different columns (a segmented reduction's are not a select's), so the rows
# whose columns differ from the first row's go to ab_2.csv, ab_3.csv, … (one file a set of
# columns, each with its header); a row the command line refused goes to refused.txt (build,
# round, row; its message is in stderr.log). Also $OUT/builds.txt (each build's COMMIT),
# $OUT/times.log, $OUT/stderr.log. Each build first runs one small, untimed row (its first
# launch JIT-compiles the PTX). Summarize with scripts/ab_table.py $OUT/ab*.csv.
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
times=$out/times.log; err=$out/stderr.log
: > "$times"; : > "$err"; : > "$out/builds.txt"; rm -f "$out"/ab.csv "$out"/ab_[0-9]*.csv "$out/refused.txt"
for b in "${builds[@]}"; do
  echo "$b: $(cat "$dir/$b/COMMIT" 2>/dev/null || echo '(no COMMIT file)')" >> "$out/builds.txt"
  "$dir/$b/reduce" --backend gpu --op select --n 1000 --repeat 1 > /dev/null 2>> "$err"
done
headers=()  # the column sets seen, in order: the first one's rows go to ab.csv, the k-th's to ab_k.csv
file_for() { # $1 = reduce's header line; sets `target` to the file its rows go to (header written once)
  local i new
  for i in "${!headers[@]}"; do
    [ "${headers[$i]}" = "$1" ] && break
  done
  if [ "${#headers[@]}" -eq 0 ] || [ "${headers[$i]}" != "$1" ]; then
    headers+=("$1"); i=$((${#headers[@]} - 1)); new=1
  else
    new=0
  fi
  if [ "$i" -eq 0 ]; then target=$out/ab.csv; else target=$out/ab_$((i + 1)).csv; fi
  [ "$new" -eq 1 ] && echo "build,round,row,$1" > "$target"
  return 0
}
status=0; t0=$SECONDS
for ((r = first; r < first + rounds; r++)); do
  if [ "$guard" -gt 0 ] && [ $((SECONDS - t0)) -gt "$guard" ]; then
    echo "stopped before round $r: past the guard of $guard s" >> "$times"; break
  fi
  k=${#builds[@]}; shift_by=$(( (r - 1) % k ))
  order=("${builds[@]:shift_by}" "${builds[@]:0:shift_by}")
  for row in "${rows[@]}"; do
    size=(--n "$n")
    [[ " $row " =~ \ --(n|log2|rows|cols)[\ =] ]] && size=()
    for b in "${order[@]}"; do
      s=$SECONDS
      # shellcheck disable=SC2086 # a row is reduce's arguments, split on purpose
      printed=$("$dir/$b/reduce" --backend gpu $row "${size[@]}" --repeat "$repeat" --format csv 2>> "$err" | grep -v '^#')
      header=$(head -1 <<< "$printed"); line=$(tail -n +2 <<< "$printed" | tail -1)
      if [ -z "$line" ]; then
        echo "$b,$r,\"$row\"" >> "$out/refused.txt"; status=1
      else
        file_for "$header"
        echo "$b,$r,\"$row\",$line" >> "$target"
        [[ $line == *,PASS ]] || status=1
      fi
      echo "$b $r $row: $((SECONDS - s)) s" >> "$times"
    done
  done
done
echo "done at $((SECONDS - t0)) s" >> "$times"
exit $status
