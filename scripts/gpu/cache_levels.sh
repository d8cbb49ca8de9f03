#!/usr/bin/env bash
# Where a lesson's wasted sectors go, and what bounds the kernel instead (issue 28): Nsight
# Compute's counters per cache level and its stall reasons, for the chapter-3 lessons whose cards
# ask "why only that much faster?" (the coalescing card: 3.84x fewer sectors, 1.18x the speed).
#
#   scripts/gpu/cache_levels.sh [VARIANT...]   default: neighbored neighbored_less interleaved unroll2
#
# For each variant, one launch at n = 2^$LOG2 (default 24), block $BLOCK (default 512), profiled by
# ncu (raw page, CSV). Output: $OUT/cache_levels_2e$LOG2.csv (one row per variant, ncu's names as
# the header) and its log. Read by scripts/docs_from_csv.py (the coalescing card and
# interleaved.rs's # Measured); the metrics are listed below with what each answers.
set -uo pipefail
cd "$(dirname "$0")/../.."
bin=${BIN:-.gpu/bin/reduce}
[ -x "$bin" ] || bin=target/release/reduce
ncu=${NCU:-$(command -v ncu || ls -d /usr/local/cuda*/bin/ncu 2>/dev/null | tail -1)}
[ -x "$ncu" ] || { echo "cache_levels.sh: no ncu (set NCU)"; exit 2; }
out=${OUT:-.}; mkdir -p "$out"
log2=${LOG2:-24}
block=${BLOCK:-512}
variants=("$@"); [ ${#variants[@]} -eq 0 ] && variants=(neighbored neighbored_less interleaved unroll2)
metrics=(
  gpu__time_duration.sum                                     # the kernel's time under ncu
  smsp__inst_executed.sum                                    # warp instructions
  smsp__thread_inst_executed_per_inst_executed.ratio         # active threads per warp instruction
  smsp__sass_average_branch_targets_threads_uniform.pct      # branch efficiency
  smsp__sass_inst_executed_op_global_ld.sum                  # global load requests
  l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum             # sectors the loads ask L1 for
  l1tex__t_sector_pipe_lsu_mem_global_op_ld_hit_rate.pct     # ... of which L1 already holds
  lts__t_sectors_srcunit_tex_op_read.sum                     # sectors L1 asks L2 for (its misses)
  lts__t_sector_op_read_hit_rate.pct                         # ... of which L2 holds
  dram__bytes_read.sum                                       # bytes L2 reads from DRAM
  dram__throughput.avg.pct_of_peak_sustained_elapsed
  l1tex__throughput.avg.pct_of_peak_sustained_elapsed
  lts__throughput.avg.pct_of_peak_sustained_elapsed
  smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio
  smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio
  smsp__average_warps_issue_stalled_lg_throttle_per_issue_active.ratio
  smsp__average_warps_issue_stalled_short_scoreboard_per_issue_active.ratio
  smsp__average_warps_issue_stalled_wait_per_issue_active.ratio
  smsp__average_warps_issue_stalled_math_pipe_throttle_per_issue_active.ratio
  smsp__average_warps_issue_stalled_not_selected_per_issue_active.ratio
  smsp__average_warps_issue_stalled_selected_per_issue_active.ratio
  smsp__average_warps_issue_stalled_branch_resolving_per_issue_active.ratio
  smsp__average_warps_issue_stalled_no_instruction_per_issue_active.ratio
  smsp__average_warps_issue_stalled_mio_throttle_per_issue_active.ratio
  smsp__average_warps_issue_stalled_drain_per_issue_active.ratio
)
list=$(printf '%s\n' "${metrics[@]}" | sed 's/ *#.*//' | paste -sd,)
csv=$out/cache_levels_2e$log2.csv
log=$out/cache_levels_2e$log2.log
: >"$log"
rm -f "$csv"
rc=0
for v in "${variants[@]}"; do
  echo "== $v at 2^$log2, block $block" | tee -a "$log"
  raw=$(mktemp)
  "$ncu" --csv --page raw --metrics "$list" -k "$v" -c 1 --target-processes application-only --log-file "$raw" \
    "$bin" --backend gpu --variant "$v" --log2 "$log2" --block "$block" --repeat 1 >>"$log" 2>&1 || rc=1
  # ncu's raw CSV: a header line, a units line, then one line per profiled kernel.
  hdr=$(grep -m1 '^"ID"' "$raw")
  row=$(grep -A2 '^"ID"' "$raw" | sed -n 3p)
  if [ -z "$row" ]; then echo "   no profile for $v" | tee -a "$log"; rc=1; rm -f "$raw"; continue; fi
  [ -s "$csv" ] || echo "$hdr" >"$csv"
  echo "$row" >>"$csv"
  rm -f "$raw"
done
echo "$(($(wc -l <"$csv") - 1)) rows in $csv"
exit $rc
