#!/usr/bin/env bash
# Session 49: why `unique i32 run:16` got slower with session 48's select (1147539): the build
# before it (979116a, "old") and main (cd59a4a) in turn, timed at 2^28 (3 interleaved rounds),
# then each under ncu at boost clocks (--clock-control none, --set full) with its source page
# (stall samples per SASS instruction). Stops past its time guard.
set -u
O=$OUT/r49d; mkdir -p $O
mkdir -p .gpu/d && tar xJf .gpu/packD.tar.xz -C .gpu/d
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.max.mem --format=csv > $O/device.txt
for w in old main; do echo "$w: $(cat .gpu/d/$w/COMMIT)" >> $O/device.txt; done
t0=$SECONDS
for w in old main; do .gpu/d/$w/reduce --backend gpu --op select --n 1000 --repeat 1 > /dev/null 2>&1; done
.gpu/d/main/reduce --backend gpu --repeat 1 --format csv --op select --n 64 | grep -v '^#' | head -1 | sed "s/^/variant,round,/" > $O/ab.csv
for r in 1 2 3; do
  for w in old main; do
    [ $r = 2 ] && w=$([ $w = old ] && echo main || echo old)
    .gpu/d/$w/reduce --backend gpu --op unique --type i32 --run 16 --n 268435456 --repeat 20 --format csv 2>>$O/stderr.log | grep -v '^#' | tail -1 | sed "s/^/$w,$r,/" >> $O/ab.csv
  done
done
echo "timed done at $((SECONDS-t0)) s" >> $O/times.log
for w in old main; do
  [ $((SECONDS-t0)) -gt 200 ] && break
  timeout 60 ncu --set full --clock-control none -k regex:select__i32 -c 1 -f -o $O/u16_$w .gpu/d/$w/reduce --backend gpu --op unique --type i32 --run 16 --n 268435456 --repeat 1 > $O/ncu_$w.log 2>&1
  echo "ncu $w exit $? at $((SECONDS-t0)) s" >> $O/times.log
  ncu -i $O/u16_$w.ncu-rep --page source --csv --print-source sass > $O/u16_${w}_source.csv 2>>$O/times.log
  ncu -i $O/u16_$w.ncu-rep --page details --csv > $O/u16_${w}_details.csv 2>>$O/times.log
done
rm -f $O/*.ncu-rep
cd $OUT && tar czf r49d.tgz r49d
