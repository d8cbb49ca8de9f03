#!/usr/bin/env bash
# Session 60, call 2: (1) main (a396eda) against exp/arg-int64, exp/arg-minidx and exp/arg-mix
# (.gpu/ab60b.tar.xz) on rows_arg_lean64.txt, interleaved rounds, CUB in every row, a round
# started only before 320 s; (2) with the time left, tests/main's argmin/argmax GPU tests with
# exp/arg-minidx's test binary (.gpu/tests_minidx.xz), every other GPU test named done.
set -u
R=$OUT/r60b; mkdir -p $R; t0=$SECONDS
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.max.mem --format=csv > $R/device.txt
scripts/gpu/harness_cache.sh restore .gpu/harness.tgz >> $R/times.log 2>&1
mkdir -p .gpu/ab && tar xJf .gpu/ab60b.tar.xz -C .gpu/ab
for b in main int64 minidx mix; do echo "$b: $(cat .gpu/ab/$b/COMMIT)" >> $R/device.txt; done
RUNS=docs/measurements/2026-12-02-h200/session60/runs
OUT=$R/lean ROUNDS=2 N=67108864 GUARD=$((320-SECONDS+t0)) BUILDS="main int64 minidx mix" scripts/gpu/builds_ab.sh .gpu/ab $RUNS/rows_arg_lean64.txt
echo "lean A/B exit $? at $((SECONDS-t0)) s" >> $R/times.log
left=$((570-SECONDS+t0))
if [ $left -gt 60 ]; then
  xz -d .gpu/tests_minidx.xz && chmod +x .gpu/tests_minidx
  .gpu/tests_minidx --list --include-ignored 2>/dev/null | grep '^\[gpu\]' | sed 's/: test$//' | grep -v arg > $R/done.txt
  scripts/gpu/gpu_tests.sh .gpu/tests_minidx $R/done.txt $left > $R/gpu_tests.log 2>&1
  echo "gpu_tests (minidx) exit $? at $((SECONDS-t0)) s: $(tail -1 $R/gpu_tests.log)" >> $R/times.log
fi
cd $OUT && tar czf r60b.tgz r60b
