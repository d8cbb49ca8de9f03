#!/usr/bin/env bash
# Session 61, call 3: a second round of main against flag for the f64 min/max scans at 2^28 (round
# 1, in call 1, had flag 0.3-0.7 % slower), no CUB.
set -u
S=docs/measurements/2026-12-02-h200/session61/runs
R=$OUT/r61c; mkdir -p $R; t0=$SECONDS
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.max.mem --format=csv > $R/device.txt
mkdir -p .gpu/ab && tar xJf .gpu/ab61.tar.xz -C .gpu/ab
for b in main flag; do echo "$b: $(cat .gpu/ab/$b/COMMIT)" >> $R/device.txt; done
R=$R AB=.gpu/ab BUILDS="main flag" FIRST_ROUND=2 ROUNDS=1 CUB=0 GUARD=300 \
  bash $S/scan_ab.sh "--type f64 --combine min" "--type f64 --combine max"
echo "done at $((SECONDS-t0)) s" >> $R/times.log
cd $OUT && tar czf r61c.tgz r61c
