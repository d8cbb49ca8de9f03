#!/usr/bin/env bash
# Session 47, fifth call: the typed scans' rows through the library's kept check targets
# (4b35b05, d928502: first run on a GPU), at 2^28 (2^27 for 64-bit types), from the final build
# (.gpu/main/); every timed run checked. Stops starting rows at 200 s.
set -u
O=$OUT/r47e; mkdir -p $O
tar xJf .gpu/pack.tar.xz -C .gpu
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.max.mem --format=csv > $O/device.txt
cat .gpu/main/COMMIT >> $O/device.txt
t0=$SECONDS
for row in "--type i32 --combine sum --n 268435456" "--type f32 --combine sum --n 268435456" \
           "--type i64 --combine min --n 134217728" "--type f64 --combine max --n 134217728" \
           "--type f64 --combine sum --n 134217728" "--type u32 --combine max --n 268435456"; do
  [ $((SECONDS-t0)) -gt 200 ] && break
  s=$SECONDS
  .gpu/main/reduce --backend gpu --op scan --variant lookback $row --format csv >> $O/scan.csv 2>>$O/stderr.log
  echo "exit $? $row: $((SECONDS-s)) s" >> $O/times.log
done
cd $OUT && tar czf r47e.tgz r47e
