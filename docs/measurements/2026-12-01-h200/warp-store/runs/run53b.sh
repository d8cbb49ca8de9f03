#!/usr/bin/env bash
# Session 53, call 2: tests/main on the GPU (main's build, every GPU test, the emulator's left
# out), then the A/B of exp/select-warp-store with the prefetch distance for its blocks in flight.
set -u
D=docs/measurements/2026-12-01-h200/warp-store/runs
R=$OUT/r53b; mkdir -p $R; t0=$SECONDS
mkdir -p .gpu/ab && tar xJf .gpu/ab.tar.xz -C .gpu/ab && tar xJf .gpu/ab3.tar.xz -C .gpu/ab
xz -dc .gpu/main-tests.xz > .gpu/main-tests && chmod +x .gpu/main-tests
timeout 250 .gpu/main-tests --include-ignored "[gpu]" > $R/tests_gpu.log 2>&1
echo "tests exit $? at $((SECONDS-t0)) s" >> $R/times.log
left=$((560-SECONDS+t0))
OUT=$R/ws ROUNDS=2 GUARD=$((left-110)) BUILDS="main ws40p594 ws36p693" timeout $left scripts/gpu/builds_ab.sh .gpu/ab $D/rows_ws_prefetch.txt
echo "ws exit $? at $((SECONDS-t0)) s" >> $R/times.log
cd $OUT && tar czf r53b.tgz r53b
