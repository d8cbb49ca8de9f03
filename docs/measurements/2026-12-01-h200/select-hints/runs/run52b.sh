#!/usr/bin/env bash
# Session 52, call 2: A/B rounds 2-3 of main against pfmore on the rows it changes, the CUB
# harness built meanwhile, then select.sh run_length and narrow with pfmore's build.
set -u
R=$OUT/r52b; mkdir -p $R; t0=$SECONDS
mkdir -p .gpu/ab && tar xJf .gpu/ab.tar.xz -C .gpu/ab
( .gpu/ab/pfmore/reduce --backend gpu --op run_length --type i32 --n 1000 --repeat 1 --compare-cub > $R/harness.log 2>&1
  echo "harness exit $? at $((SECONDS-t0)) s" >> $R/times.log ) &
OUT=$R/ab FIRST_ROUND=2 ROUNDS=2 BUILDS="main pfmore" scripts/gpu/builds_ab.sh .gpu/ab .gpu/rows_pfmore.txt
echo "ab exit $? at $((SECONDS-t0)) s" >> $R/times.log
wait
left=$((575-SECONDS+t0)); [ $left -gt 40 ] && {
  OUT=$R/sel ROUNDS=1 REDUCE=.gpu/ab/pfmore/reduce timeout $left scripts/gpu/select.sh run_length > $R/run_length.log 2>&1
  echo "select.sh run_length exit $? at $((SECONDS-t0)) s (limit $left s)" >> $R/times.log; }
left=$((575-SECONDS+t0)); [ $left -gt 40 ] && {
  OUT=$R/sel ROUNDS=1 REDUCE=.gpu/ab/pfmore/reduce timeout $left scripts/gpu/select.sh narrow > $R/narrow.log 2>&1
  echo "select.sh narrow exit $? at $((SECONDS-t0)) s (limit $left s)" >> $R/times.log; }
cd $OUT && tar czf r52b.tgz r52b
