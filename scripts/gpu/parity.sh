#!/usr/bin/env bash
# Rust kernels beside their CUDA C twins, on a GPU host: times, machine code and profiler counts.
#
#   scripts/gpu/parity.sh            (from the repository root, bundle in .gpu/, PTX in .gpu/ptx/)
#
# Writes to $OUT/parity/ (default ./parity/):
# * twins_2e24.csv, twins_2e28.csv — `reduce --variant all --compare-c` at block 512, median of 20
#   (every Rust and every C run checked), through scripts/gpu/measure.sh's `twins` step;
# * rust.sass, c.sass — the SASS of both: our sm_90 PTX assembled by the host's ptxas, and the
#   twins harness that the first step built (cuobjdump -sass);
# * ncu_global_2e24.csv, ncu_shared_2e24.csv — Nsight Compute's raw CSV for every chapter-3/5 kernel, Rust and C, at 2^24
#   (the metrics of docs/metrics.md that this ncu knows; metrics_missing.txt lists the others).
set -uo pipefail
cd "$(dirname "$0")/../.."
out=${OUT:-.}/parity; mkdir -p "$out"
bin=.gpu/bin/reduce
rc=0

OUT=$out scripts/gpu/measure.sh twins || rc=1
mv "$out"/measurements/twins_2e*.csv "$out"/ 2>/dev/null
cat "$out"/measurements/stderr.log 2>/dev/null | tail -3

cuda=$(dirname "$(dirname "$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)")")
"$cuda/bin/ptxas" -arch=sm_90 -O3 .gpu/ptx/kernels_sm_90.ptx -o "$out/rust.cubin" && \
  "$cuda/bin/cuobjdump" -sass "$out/rust.cubin" >"$out/rust.sass" || rc=1
twin=$(ls -t "${REDUCE_CUB_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/reduce-scan}"/classic* 2>/dev/null | grep -v '\.cu$' | head -1)
[ -n "$twin" ] && "$cuda/bin/cuobjdump" -sass "$twin" >"$out/c.sass" || echo "no twins binary found"

# The metrics of docs/metrics.md; ask ncu which this version knows, by base name.
metrics=(
  gpu__time_duration.sum
  smsp__sass_average_data_bytes_per_sector_mem_global_op_ld.pct
  smsp__thread_inst_executed_per_inst_executed.ratio
  smsp__inst_executed.sum
  smsp__warps_launched.sum
  sm__warps_active.avg.pct_of_peak_sustained_active
  dram__throughput.avg.pct_of_peak_sustained_elapsed
  l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum
  l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum
  smsp__warp_issue_stalled_barrier_per_warp_active.pct
  l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum
  l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum
  l1tex__t_requests_pipe_lsu_mem_global_op_st.sum
  l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum
)
ncu --query-metrics --chip gh100 >"$out/ncu_query.txt" 2>&1
known=(); : >"$out/metrics_missing.txt"
for m in "${metrics[@]}"; do
  base=${m%.*}; base=${base%.pct_of_peak_sustained_active}; base=${base%.avg}
  if grep -q "^${base%%.*}\b" "$out/ncu_query.txt"; then known+=("$m"); else echo "$m" >>"$out/metrics_missing.txt"; fi
done
list=$(IFS=,; echo "${known[*]}")
for fam in global shared; do
  ncu --csv --metrics "$list" --target-processes all --log-file "$out/ncu_${fam}_2e24.csv" \
    -k 'regex:^(neighbored|interleaved|unroll|complete_unroll|gmem|smem|reduce)' \
    "$bin" --backend gpu --family "$fam" --log2 24 --block 512 --repeat 1 --compare-c \
    >"$out/ncu_${fam}_2e24.log" 2>&1 || { rc=1; tail -5 "$out/ncu_${fam}_2e24.log"; }
done
echo "metrics used: ${#known[@]}; missing: $(wc -l <"$out/metrics_missing.txt")"
exit $rc
