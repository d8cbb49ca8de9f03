#!/usr/bin/env bash
# Session 47, fourth call: segmented_rows with the unindexed folds' trip in a tree (dfb2731,
# .gpu/tree/) against the same kernel folding in order (92fdd21, .gpu/seq/), CUB's
# DeviceSegmentedReduce in every row, 2 rounds, which build goes first alternating by round;
# then the tree build's segmented::gpu trials and a memcheck.
set -u
O=$OUT/r47d; mkdir -p $O
tar xJf .gpu/pack.tar.xz -C .gpu
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.max.mem --format=csv > $O/device.txt
echo "tree: $(cat .gpu/tree/COMMIT); seq: $(cat .gpu/seq/COMMIT)" >> $O/device.txt
t0=$SECONDS
rows=("--rows 4096 --cols 4096 --type f32" "--rows 2048 --cols 8192 --type f32" "--rows 8192 --cols 2048 --type f32"
      "--rows 4096 --cols 4096 --type i32 --combine max" "--rows 4096 --cols 4096 --type f64")
.gpu/tree/reduce --backend gpu --op rows --rows 4 --cols 4 --repeat 1 --format csv | grep -v '^#' | head -1 | sed "s/^/build,round,/" > $O/ab.csv
one() { # which round args...
  local w=$1 r=$2; shift 2
  .gpu/$w/reduce --backend gpu --op rows "$@" --repeat 20 --compare-cub --format csv 2>>$O/stderr.log | grep -v '^#' | tail -1 | sed "s/^/$w,$r,/" >> $O/ab.csv
}
for r in 1 2; do
  for row in "${rows[@]}"; do
    [ $((SECONDS-t0)) -gt 240 ] && { echo "stopped at round $r: time" >> $O/times.log; break 2; }
    if [ $r = 1 ]; then one seq $r $row; one tree $r $row; else one tree $r $row; one seq $r $row; fi
  done
done
echo "A/B done at $((SECONDS-t0)) s" >> $O/times.log
timeout $((400-(SECONDS-t0))) .gpu/tree/main --include-ignored segmented::gpu > $O/segmented_tests.log 2>&1; echo "tests exit $? at $((SECONDS-t0)) s" >> $O/segmented_tests.log
echo "== --rows 33 --cols 4096 --type f32" >> $O/sanitizer.log
compute-sanitizer --tool memcheck .gpu/tree/reduce --backend gpu --op rows --rows 33 --cols 4096 --type f32 --repeat 2 --format csv >> $O/sanitizer.log 2>&1
echo "exit $?" >> $O/sanitizer.log
echo "end at $((SECONDS-t0)) s" >> $O/times.log
cd $OUT && tar czf r47d.tgz r47d
