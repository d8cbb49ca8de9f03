#!/usr/bin/env bash
# Session 58, call 1 (main 9246fd6's build): the rows of 4096 x 4096 by type and operator, to
# tell whether the f32 sums' 2 % behind the i32 maxima is the data or the fold (ours and CUB's
# DeviceSegmentedReduce in every row, 2 rounds, the order of the rows reversed in round 2);
# then tests/main's GPU suite in parts (scripts/gpu/gpu_tests.sh) for the rest of the call.
set -u
R=$OUT/r58a; mkdir -p $R; t0=$SECONDS
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.max.mem --format=csv > $R/device.txt
echo "main $(cat .gpu/COMMIT)" >> $R/device.txt
xz -d .gpu/tests.xz && chmod +x .gpu/tests
B=.gpu/bin/reduce
$B --backend gpu --repeat 1 --format csv --op rows --rows 4 --cols 4 2>/dev/null | grep -v '^#' | head -1 | sed 's/^/round,/' > $R/rows.csv
rows=("--type f32" "--type i32" "--type f32 --combine max" "--type i32 --combine max" "--type u32" "--type f32 --combine min" "--type i32 --combine min" "--type f64")
for r in 1 2; do
  if [ $r = 1 ]; then idx="0 1 2 3 4 5 6 7"; else idx="7 6 5 4 3 2 1 0"; fi
  for i in $idx; do
    [ $((SECONDS-t0)) -gt 260 ] && break 2
    $B --backend gpu --op rows --rows 4096 --cols 4096 ${rows[$i]} --repeat 20 --compare-cub --format csv 2>>$R/rows_err.log | grep -v '^#' | tail -1 | sed "s/^/$r,/" >> $R/rows.csv
  done
done
echo "rows done at $((SECONDS-t0)) s" >> $R/times.log
cp /dev/null $R/done.txt
scripts/gpu/gpu_tests.sh .gpu/tests $R/done.txt $((570-SECONDS+t0)) > $R/gpu_tests.log 2>&1
echo "gpu_tests exit $? at $((SECONDS-t0)) s: $(tail -1 $R/gpu_tests.log)" >> $R/times.log
cd $OUT && tar czf r58a.tgz r58a
