#!/usr/bin/env bash
# Session 61, call 2: rounds 2 and 3 of main against flag (the f32 min/max scans and the f32 sum
# control, no CUB); then old (a396eda) against main on rows_arg_more.txt (session 60's argmin/argmax
# rows not timed yet), 2 rounds at 2^26, CUB in every row (harnesses restored from call 1).
set -u
S=docs/measurements/2026-12-02-h200/session61/runs
R=$OUT/r61b; mkdir -p $R; t0=$SECONDS
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.max.mem --format=csv > $R/device.txt
scripts/gpu/harness_cache.sh restore .gpu/harness.tgz >> $R/times.log 2>&1
mkdir -p .gpu/ab && tar xJf .gpu/ab61.tar.xz -C .gpu/ab
for b in main flag old; do echo "$b: $(cat .gpu/ab/$b/COMMIT)" >> $R/device.txt; done
R=$R AB=.gpu/ab BUILDS="main flag" FIRST_ROUND=2 ROUNDS=2 CUB=0 GUARD=280 \
  bash $S/scan_ab.sh "--type f32 --combine min" "--type f32 --combine max" "--type f32 --combine sum"
echo "scans at $((SECONDS-t0)) s" >> $R/times.log
OUT=$R/arg ROUNDS=2 N=67108864 GUARD=$((520 - (SECONDS - t0))) BUILDS="old main" scripts/gpu/builds_ab.sh .gpu/ab $S/rows_arg_more.txt
echo "arg rows exit $? at $((SECONDS-t0)) s" >> $R/times.log
cd $OUT && tar czf r61b.tgz r61b
