#!/usr/bin/env bash
# Session 53, call 1: A/B of exp/select-warp-store (ws40: .maxnreg 40, ws36: 36) against main,
# 2 rounds; then run_length's rows, main before step 4b reached run_length (0fa6650) against main.
set -u
D=docs/measurements/2026-12-01-h200/warp-store/runs
R=$OUT/r53a; mkdir -p $R; t0=$SECONDS
mkdir -p .gpu/ab && tar xJf .gpu/ab.tar.xz -C .gpu/ab && tar xJf .gpu/ab2.tar.xz -C .gpu/ab
nvidia-smi > $R/nvidia-smi.txt 2>&1
OUT=$R/ws ROUNDS=2 GUARD=200 BUILDS="main ws40 ws36" timeout 330 scripts/gpu/builds_ab.sh .gpu/ab $D/rows_ws.txt
echo "ws exit $? at $((SECONDS-t0)) s" >> $R/times.log
left=$((570-SECONDS+t0))
OUT=$R/rl ROUNDS=2 GUARD=$((left-130)) BUILDS="before main" timeout $left scripts/gpu/builds_ab.sh .gpu/ab scripts/gpu/run_length_ab_rows.txt
echo "rl exit $? at $((SECONDS-t0)) s" >> $R/times.log
cd $OUT && tar czf r53a.tgz r53a
