#!/usr/bin/env bash
# Session 59, call 3: (1) tests/main's 52 GPU tests of argmin and argmax with
# exp/arg-two-chains' test binary (20b940d; .gpu/tests_two.xz), every other GPU test named
# done; (2) exp/arg-chain3 against exp/arg-two-chains (.gpu/ab59c.tar.xz) on
# rows_two_chains.txt, 2 interleaved rounds, CUB in every row. CUB harnesses restored.
set -u
R=$OUT/r59c; mkdir -p $R; t0=$SECONDS
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.max.mem --format=csv > $R/device.txt
scripts/gpu/harness_cache.sh restore .gpu/harness.tgz >> $R/times.log 2>&1
mkdir -p .gpu/ab && tar xJf .gpu/ab59c.tar.xz -C .gpu/ab
for b in arg3 two; do echo "$b: $(cat .gpu/ab/$b/COMMIT)" >> $R/device.txt; done
RUNS=docs/measurements/2026-12-02-h200/session59/runs
xz -d .gpu/tests_two.xz && chmod +x .gpu/tests_two
.gpu/tests_two --list --include-ignored 2>/dev/null | grep '^\[gpu\]' | sed 's/: test$//' | grep -v arg > $R/done.txt
echo "tests skipped as done: $(wc -l < $R/done.txt)" >> $R/times.log
scripts/gpu/gpu_tests.sh .gpu/tests_two $R/done.txt 150 > $R/gpu_tests.log 2>&1
echo "gpu_tests exit $? at $((SECONDS-t0)) s: $(tail -1 $R/gpu_tests.log)" >> $R/times.log
OUT=$R/two ROUNDS=2 N=67108864 GUARD=$((200-SECONDS+t0)) BUILDS="arg3 two" scripts/gpu/builds_ab.sh .gpu/ab $RUNS/rows_two_chains.txt
echo "two A/B exit $? at $((SECONDS-t0)) s" >> $R/times.log
cd $OUT && tar czf r59c.tgz r59c
