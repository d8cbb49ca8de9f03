#!/usr/bin/env bash
# The one measurement set behind every figure in README.md and docs/ (issue 28): all of it from
# one bundle (one commit), on one GPU, into $OUT/set/ (commit it as docs/measurements/<date>-<gpu>/).
# The device tool limits one command to 10 minutes, so the set is made in two parts:
#
#   scripts/gpu/one_set.sh a   device.txt, twins_2e24/2e28.csv, sum_vs_cub.csv, scans.csv,
#                              criterion_reduce.txt
#   scripts/gpu/one_set.sh b   types_vs_cub.csv, typed_scans.csv, metrics_{family}_2e24.csv,
#                              cache_levels_2e24.csv
#
# Each step has its own time limit (a step cut short leaves a partial CSV, and the log says so);
# the logs go to $OUT/set/logs/. Needs the bundle in .gpu/ (bin/reduce, benches/reduce-*).
set -uo pipefail
cd "$(dirname "$0")/../.."
set_dir=${OUT:-.}/set; mkdir -p "$set_dir/logs"
rc=0
step() { # $1 = seconds, $2 = name, rest = command
  local limit=$1 name=$2 start; shift 2
  start=$(date +%s)
  timeout "$limit" "$@" >"$set_dir/logs/$name.log" 2>&1
  local status=$?
  [ $status -eq 124 ] && echo "   $name: cut at ${limit}s" >>"$set_dir/logs/$name.log"
  [ $status -ne 0 ] && rc=$status
  printf '%-14s exit %3d  %4ds\n' "$name" "$status" "$(($(date +%s) - start))"
}
export OUT=$set_dir
case "${1:-}" in
  a)
    step 30 device scripts/gpu/measure.sh device
    step 150 twins scripts/gpu/measure.sh twins
    ROUNDS=5 step 150 sum_vs_cub scripts/gpu/measure.sh sum_vs_cub
    SCAN_SIZES="100 10000 1000000 100000000 268435456" step 120 scans scripts/gpu/measure.sh scans
    bench=$(ls .gpu/benches/reduce-* 2>/dev/null | head -1)
    if [ -n "$bench" ]; then
      step 120 criterion bash -c "'$bench' --bench 'reduce/(sum|cub)/' --warm-up-time 1 --measurement-time 4 \
        > '$set_dir/measurements/criterion_reduce.txt'"
    fi
    ;;
  b)
    TYPE_ROUNDS=1 step 240 types_vs_cub scripts/gpu/measure.sh types_vs_cub
    TYPED_SCAN_SIZES="24 28" step 120 typed_scans scripts/gpu/measure.sh typed_scans
    step 150 metrics scripts/gpu/metrics.sh
    step 60 cache_levels scripts/gpu/cache_levels.sh
    ;;
  *) echo "one_set.sh: say which part: a or b"; exit 2 ;;
esac
tail -3 "$set_dir"/logs/*.log | head -60
exit $rc
