#!/usr/bin/env bash
# Session 26: memory-side counters of the scans and a copy kernel at 2^28 int32 (H200).
cd "$(dirname "$0")/.." && source .gpu-extra/common.sh
M=gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,lts__t_sectors_op_read.sum,lts__t_sectors_op_write.sum,lts__t_sector_hit_rate.pct,lts__t_sectors_srcunit_tex_op_read.sum,lts__t_sectors_srcunit_tex_op_write.sum,sm__warps_active.avg.pct_of_peak_sustained_active
for v in lookback_warpspec_8x12x6 lookback lookback_warpspec_8x12x6_early_empty; do
  step 90 mem_$v ncu --metrics $M -k regex:"^$v\$" -c 1 .gpu/bin/reduce --op scan --backend gpu --variant $v --n 268435456 --repeat 1
  grep -E "^\s+(gpu__|dram__|lts__|sm__)" $LOGS/mem_$v.log | sed "s/^/$v /"
done
cat > /tmp/cp.py <<'PY'
import cupy as cp
a = cp.arange(1 << 28, dtype=cp.int32); b = cp.empty_like(a)
for _ in range(2): cp.copyto(b, a)
cp.cuda.runtime.deviceSynchronize(); assert int(b[-1]) == (1 << 28) - 1
PY
step 120 mem_copy ncu --metrics $M -k regex:copy -s 1 -c 1 python3 /tmp/cp.py
grep -E "^\s+(gpu__|dram__|lts__|sm__)|copy" $LOGS/mem_copy.log | head -14 | sed "s/^/cupy_copy /"
finish
