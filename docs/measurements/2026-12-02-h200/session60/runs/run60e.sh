#!/usr/bin/env bash
# Session 60, call 4 (a call with an A/B of rows_arg_more.txt found no machine three times,
# and then too little device time was left for it): tests/main's argmin/argmax GPU tests
# alone, with main's test binary (the commit in device.txt; .gpu/tests_main.xz), every other
# GPU test named done, at most 120 s.
set -u
R=$OUT/r60e; mkdir -p $R
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.max.mem --format=csv > $R/device.txt
echo "tests: main $(cat .gpu/TESTS_COMMIT)" >> $R/device.txt
xz -d .gpu/tests_main.xz && chmod +x .gpu/tests_main
.gpu/tests_main --list --include-ignored 2>/dev/null | grep '^\[gpu\]' | sed 's/: test$//' | grep -v arg > $R/done.txt
scripts/gpu/gpu_tests.sh .gpu/tests_main $R/done.txt 120 > $R/gpu_tests.log 2>&1
echo "gpu_tests (main) exit $? at $SECONDS s: $(tail -1 $R/gpu_tests.log)" > $R/times.log
