#!/usr/bin/env bash
# Session 46, second call: the branch (indices by 16-bit stores, .gpu/branch/) with CUB in every
# row, one round of scripts/gpu/select.sh's three sets (narrow first: the rows nearest CUB), and
# the two scans the branch's device-layer change moves, main and the branch interleaved.
set -u
O=$OUT/b; mkdir -p $O
tar xJf .gpu/pack.tar.xz -C .gpu
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.max.mem --format=csv > $O/device.txt
echo "main: $(cat .gpu/main/COMMIT); branch: $(cat .gpu/branch/COMMIT)" >> $O/device.txt
t0=$SECONDS
for w in branch main branch; do
  .gpu/$w/reduce --backend gpu --op scan --variant lookback_persistent --n 268435456 --format csv 2>>$O/stderr.log | grep -v '^#' | sed "s/^/$w,/" >> $O/scan.csv
  .gpu/$w/reduce --backend gpu --op scan --type i64 --variant lookback_warpspec_8x12x6 --n 134217728 --format csv 2>>$O/stderr.log | grep -v '^#' | sed "s/^/$w,/" >> $O/scan.csv
done
echo "scans done at $((SECONDS-t0)) s" >> $O/times.log
for set in narrow select run_length; do
  ROUNDS=1 REDUCE=.gpu/branch/reduce OUT=$O bash scripts/gpu/select.sh $set > $O/$set.log 2>&1
  echo "$set exit $? at $((SECONDS-t0)) s" >> $O/times.log
done
cd $OUT && tar czf b.tgz b
