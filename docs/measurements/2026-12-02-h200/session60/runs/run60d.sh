#!/usr/bin/env bash
# Session 60, call 4: tests/main's argmin/argmax GPU tests with main's test binary (the commit
# in device.txt; .gpu/tests_main.xz: the 52 of before and the 12 identity_values, the segmented
# ones with the identity layouts), every other GPU test named done; then main (a396eda) against
# mix (36bdf26: main's PTX) on rows_arg_more.txt, 2 rounds, the second only before 150 s.
set -u
R=$OUT/r60d; mkdir -p $R; t0=$SECONDS
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.max.mem --format=csv > $R/device.txt
echo "tests: main $(cat .gpu/TESTS_COMMIT)" >> $R/device.txt
scripts/gpu/harness_cache.sh restore .gpu/harness.tgz >> $R/times.log 2>&1
mkdir -p .gpu/ab && tar xJf .gpu/ab60b.tar.xz -C .gpu/ab
for b in main mix; do echo "$b: $(cat .gpu/ab/$b/COMMIT)" >> $R/device.txt; done
xz -d .gpu/tests_main.xz && chmod +x .gpu/tests_main
.gpu/tests_main --list --include-ignored 2>/dev/null | grep '^\[gpu\]' | sed 's/: test$//' | grep -v arg > $R/done.txt
scripts/gpu/gpu_tests.sh .gpu/tests_main $R/done.txt 200 > $R/gpu_tests.log 2>&1
echo "gpu_tests (main) exit $? at $((SECONDS-t0)) s: $(tail -1 $R/gpu_tests.log)" >> $R/times.log
OUT=$R/more ROUNDS=2 N=67108864 GUARD=$((150-SECONDS+t0)) BUILDS="main mix" scripts/gpu/builds_ab.sh .gpu/ab docs/measurements/2026-12-02-h200/session60/runs/rows_arg_more.txt
echo "more A/B exit $? at $((SECONDS-t0)) s" >> $R/times.log
cd $OUT && tar czf r60d.tgz r60d
