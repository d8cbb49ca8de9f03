#!/usr/bin/env bash
# Session 61, call 1: exp/scan-nan-flag (the look-back scan's float min/max with a NaN flag beside
# PTX min/max). Its test binary (.gpu/tests_flag.xz) runs tests/main's GPU scan tests of the four
# changed types and operators (every other GPU test named done); then main against flag
# (.gpu/ab61.tar.xz from scripts/build_variants.sh) at 2^28, round 1 with CUB in every row, f32
# sum as the control (code unchanged); the CUB harnesses built here are saved for later calls.
set -u
S=docs/measurements/2026-12-02-h200/session61/runs
R=$OUT/r61a; mkdir -p $R; t0=$SECONDS
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.max.mem --format=csv > $R/device.txt
mkdir -p .gpu/ab && tar xJf .gpu/ab61.tar.xz -C .gpu/ab
for b in main flag old; do echo "$b: $(cat .gpu/ab/$b/COMMIT)" >> $R/device.txt; done
xz -d .gpu/tests_flag.xz && chmod +x .gpu/tests_flag
.gpu/tests_flag --list --include-ignored 2>/dev/null | grep '^\[gpu\]' | sed 's/: test$//' \
  | grep -Ev 'scan.*(f32|f64)_m(in|ax)' > $R/done.txt
scripts/gpu/gpu_tests.sh .gpu/tests_flag $R/done.txt 150 > $R/gpu_tests.log 2>&1
echo "gpu_tests (flag) exit $? at $((SECONDS-t0)) s: $(tail -1 $R/gpu_tests.log)" >> $R/times.log
R=$R AB=.gpu/ab BUILDS="main flag" FIRST_ROUND=1 ROUNDS=1 CUB=1 GUARD=$((470 - (SECONDS - t0))) \
  bash $S/scan_ab.sh "--type f32 --combine min" "--type f32 --combine max" "--type f32 --combine sum" \
  "--type f64 --combine min" "--type f64 --combine max"
scripts/gpu/harness_cache.sh save $OUT >> $R/times.log 2>&1
echo "done at $((SECONDS-t0)) s" >> $R/times.log
cd $OUT && tar czf r61a.tgz r61a
