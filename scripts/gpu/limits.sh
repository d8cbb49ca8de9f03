#!/usr/bin/env bash
# Nsight Compute evidence for the limits of the full reduction and the look-back scan (issue 13):
# time, DRAM throughput (% of peak) and DRAM bytes of ours (atomic_accumulate at SUM_PLAN's
# shapes; lookback) and of CUB (DeviceReduce::Sum, DeviceScan::InclusiveSum) at 2^24..2^28.
#
#   scripts/gpu/limits.sh        (repository root, bundle in .gpu/; writes $OUT/m/ncu_*.csv)
#
# Committed output: docs/measurements/<date>-<gpu>/limits/.
set -u
cd "$(dirname "$0")/../.."
L=${OUT:-.}/m; mkdir -p "$L"
t0=$(date +%s)
.gpu/bin/reduce --backend gpu --variant atomic_accumulate --block 512 --blocks-per-sm 1024 --log2 20 --repeat 3 --compare-cub > $L/build.log 2>&1
h=$(ls -t "${REDUCE_CUB_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/reduce-scan}"/cub_bench_sm_90_* | grep -v '\.cu$' | head -1); echo "harness $h t=$(( $(date +%s)-t0 ))"
M=gpu__time_duration.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,dram__bytes_read.sum,dram__bytes_write.sum
for k in 24 26 28; do
  n=$((1<<k))
  b=512; [ $k -gt 24 ] && b=1024  # SUM_PLAN's block (host/src/reduce/sum.rs), one block per tile
  ncu --csv --metrics $M -k regex:'atomic_accumulate' .gpu/bin/reduce --backend gpu --variant atomic_accumulate --block $b --blocks-per-sm 1024 --log2 $k --repeat 1 > $L/ncu_ours_2e$k.csv 2>&1
  ncu --csv --metrics $M $h reduce_sum $n 1 > $L/ncu_cub_2e$k.csv 2>&1
  echo "2^$k t=$(( $(date +%s)-t0 ))"
done
ncu --csv --metrics $M -k regex:'lookback' .gpu/bin/reduce --backend gpu --op scan --variant lookback --log2 28 --repeat 1 > $L/ncu_lookback_2e28.csv 2>&1
ncu --csv --metrics $M $h inclusive_sum 268435456 1 > $L/ncu_cubscan_2e28.csv 2>&1
echo "done t=$(( $(date +%s)-t0 ))"
python3 - <<'PY'
import csv,os,glob,collections
for f in sorted(glob.glob(os.environ['OUT']+'/m/ncu_*.csv')):
    rows=[r for r in csv.reader(open(f)) if len(r)>14 and r[0].isdigit()]
    d=collections.OrderedDict()
    for r in rows:
        d.setdefault((r[0],r[4][:40]),{})[r[12]]=r[14]
    for (i,k),m in list(d.items())[-4:]:
        print(os.path.basename(f), i, k, 'us', m.get('gpu__time_duration.sum'), 'dram%', m.get('dram__throughput.avg.pct_of_peak_sustained_elapsed'), 'rd', m.get('dram__bytes_read.sum'), 'wr', m.get('dram__bytes_write.sum'))
PY
true
