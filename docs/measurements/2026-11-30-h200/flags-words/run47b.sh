#!/usr/bin/env bash
# Session 47, second call. (1) The first call's ncu reports (carried in .gpu/reps) and a new one
# of our rows 4096 x 4096 f32 sum (the first call's -c 6 profiled only CUB's launches), exported
# as CSV (details page). (2) main with the flags read as words (8633862, .gpu/main/):
# scripts/gpu/select.sh's compaction set (with PyTorch's rows) and narrow set, one round each,
# CUB in every row. Stops starting sets past the time guard.
set -u
O=$OUT/r47b; mkdir -p $O/ncu
tar xJf .gpu/pack.tar.xz -C .gpu
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.max.mem --format=csv > $O/device.txt
echo "main: $(cat .gpu/main/COMMIT)" >> $O/device.txt
t0=$SECONDS
R="--op rows --rows 4096 --cols 4096 --type f32"
timeout 60 ncu --set full -k regex:segmented_tiles -c 1 -f -o .gpu/reps/rows_ours .gpu/main/reduce --backend gpu $R --repeat 1 > $O/ncu/ncu_rows_ours.log 2>&1
for f in .gpu/reps/*.ncu-rep; do
  b=$(basename $f .ncu-rep)
  ncu -i $f --page details --csv > $O/ncu/$b.csv 2>> $O/ncu/export.log
  ncu -i $f --page raw --csv > $O/ncu/${b}_raw.csv 2>> $O/ncu/export.log
done
echo "ncu done at $((SECONDS-t0)) s" >> $O/times.log
export REDUCE=.gpu/main/reduce ROUNDS=1
OUT=$O timeout $((560-(SECONDS-t0))) bash scripts/gpu/select.sh > $O/select.log 2>&1; echo "select set exit $? at $((SECONDS-t0)) s" >> $O/times.log
if [ $((SECONDS-t0)) -lt 380 ]; then
  OUT=$O timeout $((560-(SECONDS-t0))) bash scripts/gpu/select.sh narrow > $O/narrow.log 2>&1; echo "narrow set exit $? at $((SECONDS-t0)) s" >> $O/times.log
fi
echo "end at $((SECONDS-t0)) s" >> $O/times.log
cd $OUT && tar czf r47b.tgz r47b
