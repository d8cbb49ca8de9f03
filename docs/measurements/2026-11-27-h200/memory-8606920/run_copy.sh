#!/usr/bin/env bash
# Session 26: the same memory-side counters for a copy kernel (CuPy elementwise) at 2^28 int32.
cd "$(dirname "$0")/.." && source .gpu-extra/common.sh
M=gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,lts__t_sectors_op_read.sum,lts__t_sectors_op_write.sum,lts__t_sector_hit_rate.pct,lts__t_sectors_srcunit_tex_op_read.sum,lts__t_sectors_srcunit_tex_op_write.sum,sm__warps_active.avg.pct_of_peak_sustained_active
cat > /tmp/cp.py <<'PY'
import cupy as cp
a = cp.arange(1 << 28, dtype=cp.int32); b = cp.empty_like(a)
k = cp.ElementwiseKernel('int32 x', 'int32 y', 'y = x', 'elementwise_copy')
for _ in range(2): k(a, b)
cp.cuda.runtime.deviceSynchronize(); assert int(b[-1]) == (1 << 28) - 1
PY
step 120 mem_copy ncu --metrics $M -k regex:elementwise_copy -s 1 -c 1 python3 /tmp/cp.py
grep -E "^\s+(gpu__|dram__|lts__|sm__)" $LOGS/mem_copy.log | sed "s/^/elementwise_copy /"
tail -3 $LOGS/mem_copy.log
finish
