#!/usr/bin/env bash
# Session 55, call 2: an A/B of main against three builds (rows_55b.txt), 2 rounds.
set -u
D=docs/measurements/2026-12-01-h200/datapath
R=$OUT/r55b; mkdir -p $R; t0=$SECONDS
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.max.mem --format=csv > $R/device.txt
mkdir -p .gpu/ab && tar xJf .gpu/ab55b.tar.xz -C .gpu/ab
OUT=$R/ab ROUNDS=2 GUARD=280 BUILDS="main pf0 s8 pf0s8" timeout 560 scripts/gpu/builds_ab.sh .gpu/ab $D/runs/rows_55b.txt
echo "ab exit $? at $((SECONDS-t0)) s" >> $R/times.log
cd $OUT && tar czf r55b.tgz r55b
