#!/usr/bin/env bash
# Session 47, third call: segmented_rows (branch exp/segmented-rows, .gpu/new/) against the
# tiles that took those rows before (8633862, .gpu/old/), CUB's DeviceSegmentedReduce in every
# row (--compare-cub), 2 rounds, which build goes first alternating by round; then ncu of the
# new kernel (the rows 4096 x 4096 f32 sum), the branch's segmented::gpu trials and a memcheck.
set -u
O=$OUT/r47c; mkdir -p $O
tar xJf .gpu/pack.tar.xz -C .gpu
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.max.mem --format=csv > $O/device.txt
echo "$(cat .gpu/new/COMMIT); old: $(cat .gpu/old/COMMIT)" >> $O/device.txt
t0=$SECONDS
rows=("--rows 4096 --cols 4096 --type f32" "--rows 4096 --cols 4096 --type f32 --combine argmax"
      "--rows 2048 --cols 8192 --type f32" "--rows 8192 --cols 2048 --type f32"
      "--rows 4096 --cols 4096 --type i32 --combine max" "--rows 4096 --cols 4096 --type f64")
.gpu/new/reduce --backend gpu --op rows --rows 4 --cols 4 --repeat 1 --format csv | grep -v '^#' | head -1 | sed "s/^/build,round,/" > $O/ab.csv
one() { # which round args...
  local w=$1 r=$2; shift 2
  .gpu/$w/reduce --backend gpu --op rows "$@" --repeat 20 --compare-cub --format csv 2>>$O/stderr.log | grep -v '^#' | tail -1 | sed "s/^/$w,$r,/" >> $O/ab.csv
}
for r in 1 2; do
  for row in "${rows[@]}"; do
    [ $((SECONDS-t0)) -gt 300 ] && { echo "stopped at round $r: time" >> $O/times.log; break 2; }
    if [ $r = 1 ]; then one old $r $row; one new $r $row; else one new $r $row; one old $r $row; fi
  done
done
echo "A/B done at $((SECONDS-t0)) s" >> $O/times.log
timeout 60 ncu --set full -k regex:segmented_rows -c 1 -f -o $O/rows_new .gpu/new/reduce --backend gpu --op rows --rows 4096 --cols 4096 --type f32 --repeat 1 > $O/ncu_rows_new.log 2>&1
ncu -i $O/rows_new.ncu-rep --page details --csv > $O/rows_new.csv 2>>$O/ncu_rows_new.log
ncu -i $O/rows_new.ncu-rep --page raw --csv > $O/rows_new_raw.csv 2>>$O/ncu_rows_new.log
echo "ncu done at $((SECONDS-t0)) s" >> $O/times.log
timeout $((540-(SECONDS-t0))) .gpu/new/main --include-ignored segmented::gpu > $O/segmented_tests.log 2>&1; echo "tests exit $? at $((SECONDS-t0)) s" >> $O/segmented_tests.log
for row in "--rows 33 --cols 4096 --type f32 --combine argmax" "--rows 7 --cols 1028 --type f64"; do
  [ $((SECONDS-t0)) -gt 560 ] && break
  echo "== $row" >> $O/sanitizer.log
  compute-sanitizer --tool memcheck .gpu/new/reduce --backend gpu --op rows $row --repeat 2 --format csv >> $O/sanitizer.log 2>&1
  echo "exit $?" >> $O/sanitizer.log
done
echo "end at $((SECONDS-t0)) s" >> $O/times.log
cd $OUT && tar czf r47c.tgz r47c
