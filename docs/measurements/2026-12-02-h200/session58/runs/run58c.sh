#!/usr/bin/env bash
# Session 58, call 3: the scans' float min/max before and after session 57's PTX min/max
# (old = 13dc665, main = 9246fd6; .gpu/ab58.tar.xz from scripts/build_variants.sh) at 2^28,
# inclusive and exclusive, CUB's DeviceScan::InclusiveScan in every row, 2 interleaved rounds
# (the build order alternating by round); the f32 sum is the control (code unchanged). Every
# line the CLI prints is kept (the inclusive line carries CUB's time).
set -u
R=$OUT/r58c; mkdir -p $R; t0=$SECONDS
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.max.mem --format=csv > $R/device.txt
mkdir -p .gpu/ab && tar xJf .gpu/ab58.tar.xz -C .gpu/ab
for b in old main; do echo "$b: $(cat .gpu/ab/$b/COMMIT)" >> $R/device.txt; done
.gpu/ab/main/reduce --backend gpu --op scan --n 1000 --repeat 1 --format csv 2>/dev/null | grep -v '^#' | head -1 | sed 's/^/build,round,/' > $R/scans.csv
rows=("--type f32 --combine min" "--type f64 --combine min" "--type f32 --combine max" "--type f64 --combine max" "--type f32 --combine sum")
for r in 1 2; do
  if [ $r = 1 ]; then order="old main"; else order="main old"; fi
  for row in "${rows[@]}"; do for b in $order; do
    [ $((SECONDS-t0)) -gt 470 ] && { echo "stopped in round $r at $((SECONDS-t0)) s" >> $R/times.log; break 3; }
    s=$SECONDS
    .gpu/ab/$b/reduce --backend gpu --op scan $row --log2 28 --repeat 10 --compare-cub --format csv 2>>$R/stderr.log | grep -v '^#' | tail -n +2 | sed "s/^/$b,$r,/" >> $R/scans.csv
    echo "$b $r $row: $((SECONDS-s)) s" >> $R/times.log
  done; done
done
echo "done at $((SECONDS-t0)) s" >> $R/times.log
cd $OUT && tar czf r58c.tgz r58c
