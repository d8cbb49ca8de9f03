#!/usr/bin/env bash
# Session 44, third call: the committed form of the last trip (LastTrip: segmented_warp at once,
# segmented_tiles at once but for argmin/argmax) against HEAD 897006c, interleaved; memcheck of
# the partial trips; tests/main.rs's segmented::gpu trials of this tree.
set -u
O=$OUT/final; mkdir -p $O
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.max.mem --format=csv > $O/device.txt
echo "bundle: $(cat .gpu/COMMIT)" >> $O/device.txt
one() { # label args...
  local label=$1; shift
  for v in head final; do
    local bin=.gpu/extra/reduce-$v; [ $v = head ] && bin=.gpu/bin/reduce
    $bin --backend gpu --repeat 20 --format csv --compare-cub "$@" 2>>$O/stderr.log | tail -1 | sed "s/^/${label}_$v,$r,/" >> $O/final.csv
  done
}
.gpu/bin/reduce --backend gpu --repeat 1 --format csv --op rows --rows 4 --cols 4 | head -1 | sed "s/^/label,round,/" > $O/final.csv
for r in 1 2; do
  one seg1e4 --op segmented --segments 10000 --log2 26 --type f32
  one seg1e4min --op segmented --segments 10000 --log2 26 --type f32 --combine min
  one seg1e4max --op segmented --segments 10000 --log2 26 --type f32 --combine max
  one seg1e5 --op segmented --segments 100000 --log2 26 --type f32
  one seg1e6argmax --op segmented --segments 1000000 --log2 26 --type f32 --combine argmax
done
( time timeout 120 .gpu/tests/main segmented::gpu --include-ignored ) > $O/segmented_gpu_tests.log 2>&1; echo "exit $?" >> $O/segmented_gpu_tests.log
X=.gpu/extra/reduce-final
for a in "--segments 10000 --n 1048583" "--segments 10000 --n 1048583 --combine min" "--segments 100000 --n 1048583 --combine argmax" "--segments 3000 --lengths power --n 1048583"; do
  echo "== memcheck $a" >> $O/sanitizer.log
  compute-sanitizer --tool memcheck $X --backend gpu --op segmented --type f32 --repeat 1 $a >> $O/sanitizer.log 2>&1; echo "exit $?" >> $O/sanitizer.log
done
