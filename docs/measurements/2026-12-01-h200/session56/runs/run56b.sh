#!/usr/bin/env bash
# Session 56, call 2: run_length's A/B (rows_56b.txt, 2 interleaved rounds): main 97b1757
# against la (97a11e7: select's look-ahead warp, the status words 8 apart, step 4b where a tile
# writes a quarter, two elements a run), la16 (a sixteenth), laall (always, as main), nola
# (97a11e7 without the look-ahead warp: spacing and rule alone).
set -u
D=docs/measurements/2026-12-01-h200/session56
R=$OUT/r56b; mkdir -p $R; t0=$SECONDS
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.max.mem --format=csv > $R/device.txt
mkdir -p .gpu/ab && tar xJf .gpu/ab56.tar.xz -C .gpu/ab
OUT=$R/ab ROUNDS=2 GUARD=260 BUILDS="main la la16 laall nola" timeout 540 scripts/gpu/builds_ab.sh .gpu/ab $D/runs/rows_56b.txt
echo "ab exit $? at $((SECONDS-t0)) s" >> $R/times.log
cd $OUT && tar czf r56b.tgz r56b
