#!/usr/bin/env bash
# Session 58, call 4: round 2 of call 3's f32 min/max scans (main first this time), without
# CUB (round 1 of call 3 has it), within the session's last device time.
set -u
R=$OUT/r58d; mkdir -p $R; t0=$SECONDS
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.max.mem --format=csv > $R/device.txt
mkdir -p .gpu/ab && tar xJf .gpu/ab58.tar.xz -C .gpu/ab
for b in old main; do echo "$b: $(cat .gpu/ab/$b/COMMIT)" >> $R/device.txt; done
.gpu/ab/main/reduce --backend gpu --op scan --n 1000 --repeat 1 --format csv 2>/dev/null | grep -v '^#' | head -1 | sed 's/^/build,round,/' > $R/scans.csv
for row in "--type f32 --combine min" "--type f32 --combine max"; do for b in main old; do
  [ $((SECONDS-t0)) -gt 170 ] && { echo "stopped at $((SECONDS-t0)) s" >> $R/times.log; break 2; }
  s=$SECONDS
  .gpu/ab/$b/reduce --backend gpu --op scan $row --log2 28 --repeat 10 --format csv 2>>$R/stderr.log | grep -v '^#' | tail -n +2 | sed "s/^/$b,2,/" >> $R/scans.csv
  echo "$b 2 $row: $((SECONDS-s)) s" >> $R/times.log
done; done
echo "done at $((SECONDS-t0)) s" >> $R/times.log
cd $OUT && tar czf r58d.tgz r58d
