#!/usr/bin/env bash
# Session 60, call 3: tests/main's argmin/argmax GPU tests with exp/arg-mix's test binary
# (.gpu/tests_mix.xz), every other GPU test named done; then a third round (FIRST_ROUND=3) of
# main against mix on rows_arg_lean64.txt (builds of .gpu/ab60b.tar.xz).
set -u
R=$OUT/r60c; mkdir -p $R; t0=$SECONDS
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.max.mem --format=csv > $R/device.txt
scripts/gpu/harness_cache.sh restore .gpu/harness.tgz >> $R/times.log 2>&1
mkdir -p .gpu/ab && tar xJf .gpu/ab60b.tar.xz -C .gpu/ab
for b in main mix; do echo "$b: $(cat .gpu/ab/$b/COMMIT)" >> $R/device.txt; done
xz -d .gpu/tests_mix.xz && chmod +x .gpu/tests_mix
.gpu/tests_mix --list --include-ignored 2>/dev/null | grep '^\[gpu\]' | sed 's/: test$//' | grep -v arg > $R/done.txt
scripts/gpu/gpu_tests.sh .gpu/tests_mix $R/done.txt 200 > $R/gpu_tests.log 2>&1
echo "gpu_tests (mix) exit $? at $((SECONDS-t0)) s: $(tail -1 $R/gpu_tests.log)" >> $R/times.log
OUT=$R/lean ROUNDS=1 FIRST_ROUND=3 N=67108864 BUILDS="main mix" scripts/gpu/builds_ab.sh .gpu/ab docs/measurements/2026-12-02-h200/session60/runs/rows_arg_lean64.txt
echo "lean round 3 exit $? at $((SECONDS-t0)) s" >> $R/times.log
cd $OUT && tar czf r60c.tgz r60c
