#!/usr/bin/env bash
# Session 52, call 1: A/B round 1 (main pfmore cs ballot, nine rows), the CUB harnesses built
# meanwhile (CPU only), then scripts/gpu/select.sh (ours and CUB in the same row) with main.
set -u
R=$OUT/r52a; mkdir -p $R; t0=$SECONDS
mkdir -p .gpu/ab && tar xJf .gpu/ab.tar.xz -C .gpu/ab
xz -dc .gpu/main-tests.xz > .gpu/main-tests && chmod +x .gpu/main-tests
nvidia-smi > $R/nvidia-smi.txt 2>&1; nvidia-smi -q >> $R/nvidia-smi.txt 2>&1
for op in "select --predicate lt:500" "partition --predicate lt:500" "unique --run 16"; do
  ( .gpu/ab/main/reduce --backend gpu --op $op --type i32 --n 1000 --repeat 1 --compare-cub > $R/harness-${op%% *}.log 2>&1
    echo "harness ${op%% *} exit $? at $((SECONDS-t0)) s" >> $R/times.log ) &
done
OUT=$R/ab ROUNDS=1 BUILDS="main pfmore cs ballot" scripts/gpu/builds_ab.sh .gpu/ab scripts/gpu/select_hints_ab_rows.txt
echo "ab exit $? at $((SECONDS-t0)) s" >> $R/times.log
wait
left=$((575-SECONDS+t0)); [ $left -gt 60 ] && {
  OUT=$R/select ROUNDS=1 REDUCE=.gpu/ab/main/reduce timeout $left scripts/gpu/select.sh > $R/select.log 2>&1
  echo "select.sh exit $? at $((SECONDS-t0)) s (limit $left s)" >> $R/times.log; }
cd $OUT && tar czf r52a.tgz r52a
