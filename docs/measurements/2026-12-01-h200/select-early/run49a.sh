#!/usr/bin/env bash
# Session 49, first call. The two branches session 48 prepared and did not measure, rebased on
# main (cd59a4a): early-lookback2 (select's warp 0 looks back before its own compaction),
# edge-early2 (unique's element before the tile read while the tile's copies are in flight) and
# both2 (the two together), against main, at 2^28, ours only, 2 interleaved rounds (the order of
# the four rotates by round). Then ncu's source page (stall samples per SASS instruction) of
# main's select__i32 at lt:10, and unique i32 run:16 under ncu at boost clocks
# (--clock-control none), main and edge-early2. Stops starting steps past its time guards.
set -u
O=$OUT/r49a; mkdir -p $O
mkdir -p .gpu/ab && tar xJf .gpu/packA.tar.xz -C .gpu/ab
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.max.mem --format=csv > $O/device.txt
for w in main early-lookback2 edge-early2 both2; do echo "$w: $(cat .gpu/ab/$w/COMMIT)" >> $O/device.txt; done
t0=$SECONDS
rows=("--op select --type i32 --predicate lt:500" "--op select --type i32 --predicate lt:10"
      "--op unique --type i32 --run 16" "--op unique --type i32 --run 1"
      "--op run_length --type i32 --run 16" "--op select --type i32 --predicate flags")
.gpu/ab/main/reduce --backend gpu --repeat 1 --format csv --op select --n 64 | grep -v '^#' | head -1 | sed "s/^/variant,round,/" > $O/ab.csv
one() { # which round args...
  local w=$1 r=$2; shift 2; local s=$SECONDS
  .gpu/ab/$w/reduce --backend gpu "$@" --n 268435456 --repeat 20 --format csv 2>>$O/stderr.log | grep -v '^#' | tail -1 | sed "s/^/$w,$r,/" >> $O/ab.csv
  echo "$w $r $* : $((SECONDS-s)) s" >> $O/times.log
}
orders=("main early-lookback2 edge-early2 both2" "both2 edge-early2 early-lookback2 main")
for r in 1 2; do
  for row in "${rows[@]}"; do
    [ $((SECONDS-t0)) -gt 330 ] && { echo "stopped at round $r: time" >> $O/times.log; break 2; }
    for w in ${orders[$((r-1))]}; do one $w $r $row; done
  done
done
echo "A/B done at $((SECONDS-t0)) s" >> $O/times.log
if [ $((SECONDS-t0)) -lt 400 ]; then
  timeout 90 ncu --set full -k regex:select__i32 -c 1 -f -o $O/lt10_main .gpu/ab/main/reduce --backend gpu --op select --type i32 --predicate lt:10 --n 268435456 --repeat 1 > $O/ncu_lt10.log 2>&1
  echo "ncu lt10 exit $? at $((SECONDS-t0)) s" >> $O/times.log
  ncu -i $O/lt10_main.ncu-rep --page source --csv --print-source sass > $O/lt10_source.csv 2>>$O/times.log
  ncu -i $O/lt10_main.ncu-rep --page details --csv > $O/lt10_details.csv 2>>$O/times.log
fi
for w in main edge-early2; do
  [ $((SECONDS-t0)) -gt 480 ] && { echo "skipped boost ncu $w: time" >> $O/times.log; continue; }
  timeout 60 ncu --set full --clock-control none -k regex:select__i32 -c 1 -f -o $O/u16_$w .gpu/ab/$w/reduce --backend gpu --op unique --type i32 --run 16 --n 268435456 --repeat 1 > $O/ncu_u16_$w.log 2>&1
  echo "ncu u16 $w exit $? at $((SECONDS-t0)) s" >> $O/times.log
  ncu -i $O/u16_$w.ncu-rep --page details --csv > $O/u16_${w}_details.csv 2>>$O/times.log
done
rm -f $O/*.ncu-rep
echo "end at $((SECONDS-t0)) s" >> $O/times.log
cd $OUT && tar czf r49a.tgz r49a
