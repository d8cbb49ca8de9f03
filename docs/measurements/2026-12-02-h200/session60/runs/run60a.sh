#!/usr/bin/env bash
# Session 60, call 1: (1) tests/main's 64 GPU tests of argmin and argmax with exp/arg-seeded's
# test binary (3127b6f; .gpu/tests_seeded.xz: session 59's 52 and the 12 new identity_values),
# every other GPU test named done; (2) main (5ef38ab, whose kernels are main's) against
# exp/arg-seeded (.gpu/ab60.tar.xz) on session 59's rows_arg_seeded.txt, interleaved rounds,
# CUB in every row; a round starts only before 330 s. CUB harnesses restored from the cache.
set -u
R=$OUT/r60a; mkdir -p $R; t0=$SECONDS
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.max.mem --format=csv > $R/device.txt
scripts/gpu/harness_cache.sh restore .gpu/harness.tgz >> $R/times.log 2>&1
mkdir -p .gpu/ab && tar xJf .gpu/ab60.tar.xz -C .gpu/ab
for b in main seeded; do echo "$b: $(cat .gpu/ab/$b/COMMIT)" >> $R/device.txt; done
RUNS=docs/measurements/2026-12-02-h200/session59/runs
xz -d .gpu/tests_seeded.xz && chmod +x .gpu/tests_seeded
.gpu/tests_seeded --list --include-ignored 2>/dev/null | grep '^\[gpu\]' | sed 's/: test$//' | grep -v arg > $R/done.txt
echo "tests skipped as done: $(wc -l < $R/done.txt)" >> $R/times.log
scripts/gpu/gpu_tests.sh .gpu/tests_seeded $R/done.txt 150 > $R/gpu_tests.log 2>&1
echo "gpu_tests exit $? at $((SECONDS-t0)) s: $(tail -1 $R/gpu_tests.log)" >> $R/times.log
OUT=$R/seeded ROUNDS=2 N=67108864 GUARD=$((330-SECONDS+t0)) BUILDS="main seeded" scripts/gpu/builds_ab.sh .gpu/ab $RUNS/rows_arg_seeded.txt
echo "seeded A/B exit $? at $((SECONDS-t0)) s" >> $R/times.log
cd $OUT && tar czf r60a.tgz r60a
