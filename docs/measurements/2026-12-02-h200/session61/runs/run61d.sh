#!/usr/bin/env bash
# Session 61, call 4: main against flag at 2^24 (the typed scans' other size in results.md), the
# f32 min/max scans and the f32 sum control, 2 rounds, CUB in every row (harnesses restored).
set -u
S=docs/measurements/2026-12-02-h200/session61/runs
R=$OUT/r61d; mkdir -p $R; t0=$SECONDS
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.max.mem --format=csv > $R/device.txt
scripts/gpu/harness_cache.sh restore .gpu/harness.tgz >> $R/times.log 2>&1
mkdir -p .gpu/ab && tar xJf .gpu/ab61.tar.xz -C .gpu/ab
for b in main flag; do echo "$b: $(cat .gpu/ab/$b/COMMIT)" >> $R/device.txt; done
R=$R AB=.gpu/ab BUILDS="main flag" FIRST_ROUND=1 ROUNDS=2 CUB=1 GUARD=200 LOG2=24 \
  bash $S/scan_ab.sh "--type f32 --combine min" "--type f32 --combine max" "--type f32 --combine sum"
echo "done at $((SECONDS-t0)) s" >> $R/times.log
cd $OUT && tar czf r61d.tgz r61d
