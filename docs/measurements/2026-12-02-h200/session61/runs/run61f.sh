#!/usr/bin/env bash
# Session 61, call 6: the rows' f32 and i32 sums at four shapes of 2^24 elements (rows_tail.txt),
# main alone, 3 rounds, CUB in every row: does the f32 rows' gap grow with the number of rows?
set -u
S=docs/measurements/2026-12-02-h200/session61/runs
R=$OUT/r61f; mkdir -p $R; t0=$SECONDS
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.max.mem --format=csv > $R/device.txt
scripts/gpu/harness_cache.sh restore .gpu/harness.tgz >> $R/times.log 2>&1
mkdir -p .gpu/ab && tar xJf .gpu/ab61.tar.xz -C .gpu/ab
echo "main: $(cat .gpu/ab/main/COMMIT)" >> $R/device.txt
OUT=$R/tail ROUNDS=3 GUARD=150 BUILDS="main" scripts/gpu/builds_ab.sh .gpu/ab $S/rows_tail.txt
echo "rows exit $? at $((SECONDS-t0)) s" >> $R/times.log
cd $OUT && tar czf r61f.tgz r61f
