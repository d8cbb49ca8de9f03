#!/usr/bin/env bash
# Session 59, call 1: the two A/Bs session 58 prepared (.gpu/ab59.tar.xz from
# scripts/build_variants.sh: main cf61a07, arg = exp/arg-chain 0fe8e7e, rake = exp/rows-raking
# 1f7cdf5, rakeall = the same with ROWS_RAKE_REDUX=true), each through scripts/gpu/builds_ab.sh
# (interleaved rounds, the build order rotating, CUB in every row, every row checked against the
# CPU); then the CUB harnesses saved for the next call (scripts/gpu/harness_cache.sh).
set -u
R=$OUT/r59a; mkdir -p $R; t0=$SECONDS
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.max.mem --format=csv > $R/device.txt
mkdir -p .gpu/ab && tar xJf .gpu/ab59.tar.xz -C .gpu/ab
for b in main arg rake rakeall; do echo "$b: $(cat .gpu/ab/$b/COMMIT)" >> $R/device.txt; done
RUNS=docs/measurements/2026-12-02-h200/session59/runs
OUT=$R/rake ROUNDS=2 GUARD=200 BUILDS="main rake rakeall" scripts/gpu/builds_ab.sh .gpu/ab $RUNS/rows_rows_raking.txt
echo "rake A/B exit $? at $((SECONDS-t0)) s" >> $R/times.log
OUT=$R/arg ROUNDS=2 N=67108864 GUARD=$((480-SECONDS+t0)) BUILDS="main arg" scripts/gpu/builds_ab.sh .gpu/ab $RUNS/rows_arg_chain.txt
echo "arg A/B exit $? at $((SECONDS-t0)) s" >> $R/times.log
scripts/gpu/harness_cache.sh save $OUT >> $R/times.log 2>&1
echo "done at $((SECONDS-t0)) s" >> $R/times.log
cd $OUT && tar czf r59a.tgz r59a
