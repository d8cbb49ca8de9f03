#!/usr/bin/env bash
# Session 45, second call: the narrow loads issued together (29a287e, .gpu/new/) against the first
# narrow form (7f1aade, .gpu/bin/), interleaved over 2 rounds at 2^28; tests/main.rs's select::gpu
# trials and a memcheck of the new form.
set -u
O=$OUT/narrow2; mkdir -p $O
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.max.mem --format=csv > $O/device.txt
echo "old: $(cat .gpu/COMMIT); new: $(cat .gpu/new/COMMIT)" >> $O/device.txt
.gpu/new/main --include-ignored select::gpu > $O/select_tests.log 2>&1; echo "tests exit $?" >> $O/select_tests.log
for row in "--op select --type u8" "--op run_length --type u16 --run 3"; do
  echo "== $row" >> $O/sanitizer.log
  compute-sanitizer --tool memcheck .gpu/new/reduce --backend gpu $row --n 1000003 --repeat 2 --format csv >> $O/sanitizer.log 2>&1
  echo "exit $?" >> $O/sanitizer.log
done
rows=("--op select --type u8 --predicate lt:128" "--op select --type u16 --predicate lt:500"
      "--op unique --type u8 --run 1" "--op partition --type u8 --predicate lt:128"
      "--op run_length --type u16 --run 1" "--op select --type u8 --predicate flags")
.gpu/new/reduce --backend gpu --repeat 1 --format csv --op select --type u8 --n 64 | grep -v '^#' | head -1 | sed "s/^/variant,round,/" > $O/narrow2.csv
for r in 1 2; do
  for row in "${rows[@]}"; do
    .gpu/bin/reduce --backend gpu $row --n 268435456 --repeat 20 --format csv 2>>$O/stderr.log | grep -v '^#' | tail -1 | sed "s/^/old,$r,/" >> $O/narrow2.csv
    .gpu/new/reduce --backend gpu $row --n 268435456 --repeat 20 --compare-cub --format csv 2>>$O/stderr.log | grep -v '^#' | tail -1 | sed "s/^/new,$r,/" >> $O/narrow2.csv
  done
done
cd $OUT && tar czf narrow2.tgz narrow2
