#!/usr/bin/env bash
# Session 59, call 2: (1) tests/main's 52 GPU tests of argmin and argmax with exp/arg-chain3's
# test binary (a84cc4b; .gpu/tests_arg3.xz), through scripts/gpu/gpu_tests.sh with every other
# GPU test named done; (2) main against exp/arg-chain3 (.gpu/ab59b.tar.xz: main cf61a07 and
# arg3) on rows_arg_chain3.txt, 2 interleaved rounds, CUB in every row; (3) the rows of a
# matrix at each block size (main's build; the plan takes 256), f32 and i32 sums, CUB in every
# row, 2 rounds, the order reversed in round 2. The CUB harnesses restored from call 1's.
set -u
R=$OUT/r59b; mkdir -p $R; t0=$SECONDS
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.max.mem --format=csv > $R/device.txt
scripts/gpu/harness_cache.sh restore .gpu/harness.tgz >> $R/times.log 2>&1
mkdir -p .gpu/ab && tar xJf .gpu/ab59b.tar.xz -C .gpu/ab
for b in main arg3; do echo "$b: $(cat .gpu/ab/$b/COMMIT)" >> $R/device.txt; done
RUNS=docs/measurements/2026-12-02-h200/session59/runs
xz -d .gpu/tests_arg3.xz && chmod +x .gpu/tests_arg3
.gpu/tests_arg3 --list --include-ignored 2>/dev/null | grep '^\[gpu\]' | sed 's/: test$//' | grep -v arg > $R/done.txt
echo "tests skipped as done: $(wc -l < $R/done.txt)" >> $R/times.log
scripts/gpu/gpu_tests.sh .gpu/tests_arg3 $R/done.txt 200 > $R/gpu_tests.log 2>&1
echo "gpu_tests exit $? at $((SECONDS-t0)) s: $(tail -1 $R/gpu_tests.log)" >> $R/times.log
OUT=$R/arg3 ROUNDS=2 N=67108864 GUARD=$((330-SECONDS+t0)) BUILDS="main arg3" scripts/gpu/builds_ab.sh .gpu/ab $RUNS/rows_arg_chain3.txt
echo "arg3 A/B exit $? at $((SECONDS-t0)) s" >> $R/times.log
B=.gpu/ab/main/reduce
$B --backend gpu --repeat 1 --format csv --op rows --rows 4 --cols 4 2>/dev/null | grep -v '^#' | head -1 | sed 's/^/round,/' > $R/rows_block.csv
rows=("4096 4096 f32 128" "4096 4096 f32 256" "4096 4096 f32 512" "4096 4096 f32 1024" "4096 4096 i32 128" "4096 4096 i32 256" "4096 4096 i32 512"
      "2048 8192 f32 128" "2048 8192 f32 256" "2048 8192 f32 512" "8192 2048 f32 128" "8192 2048 f32 256" "8192 2048 f32 512")
for r in 1 2; do
  if [ $r = 1 ]; then idx=$(seq 0 12); else idx=$(seq 12 -1 0); fi
  for i in $idx; do
    [ $((SECONDS-t0)) -gt 480 ] && { echo "rows stopped in round $r" >> $R/times.log; break 2; }
    read -r nr nc ty bl <<< "${rows[$i]}"
    $B --backend gpu --op rows --rows $nr --cols $nc --type $ty --block $bl --repeat 20 --compare-cub --format csv 2>>$R/rows_err.log | grep -v '^#' | tail -1 | sed "s/^/$r,/" >> $R/rows_block.csv
  done
done
echo "done at $((SECONDS-t0)) s" >> $R/times.log
cd $OUT && tar czf r59b.tgz r59b
