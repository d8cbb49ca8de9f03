#!/usr/bin/env bash
# Session 55, call 3: an A/B of main against four builds (rows_55c.txt), 2 rounds, then a
# device-to-device copy of each row's bytes (select_copy.py, 2 rounds of 20).
set -u
D=docs/measurements/2026-12-01-h200/datapath
R=$OUT/r55c; mkdir -p $R; t0=$SECONDS
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.max.mem --format=csv > $R/device.txt
mkdir -p .gpu/ab && tar xJf .gpu/ab55b.tar.xz -C .gpu/ab && tar xJf .gpu/ab55d.tar.xz -C .gpu/ab
OUT=$R/ab ROUNDS=2 GUARD=200 BUILDS="main ad8 ad4 s8 pf0s8" timeout 420 scripts/gpu/builds_ab.sh .gpu/ab $D/runs/rows_55c.txt
echo "ab exit $? at $((SECONDS-t0)) s" >> $R/times.log
timeout 60 python3 scripts/gpu/select_copy.py $R/ab/ab.csv 2 20 ad8 > $R/copy.csv 2> $R/copy.err
echo "copy exit $? at $((SECONDS-t0)) s" >> $R/times.log
cd $OUT && tar czf r55c.tgz r55c
