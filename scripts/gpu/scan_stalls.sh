#!/usr/bin/env bash
# Why the look-back scans stay above the copy's time (issues 25 and 37): Nsight Compute's
# sections and the stall breakdown of each scan kernel of VARIANTS (default "lookback
# lookback_bulk") at n = N (default 10^8), each inclusive, then exclusive, one process of the CLI
# per kernel. The full report goes to $OUT/ncu_scan_stalls_1e8.txt (at another N:
# ncu_scan_stalls_N.txt; else ./); a summary per kernel to stdout: time, DRAM throughput, and
# the stall reasons' share of all stall cycles, largest first. (In a warp-specialized kernel the
# stall cycles are those of every role's warps together.)
#
#   VARIANTS="lookback lookback_warpspec" N=268435456 scripts/gpu/scan_stalls.sh [REDUCE_BINARY]
set -uo pipefail
bin=${1:-.gpu/bin/reduce}
out=${OUT:-.}
n=${N:-100000000}
tag=$n; [ "$n" = 100000000 ] && tag=1e8
report=$out/ncu_scan_stalls_$tag.txt
: >"$report"
for v in ${VARIANTS:-lookback lookback_bulk}; do
  ncu --section SpeedOfLight --section MemoryWorkloadAnalysis --section WarpStateStats --section Occupancy \
    --section LaunchStats --metrics 'regex:smsp__average_warps_issue_stalled_.*_per_issue_active\.ratio' \
    -k "regex:^$v\$" --launch-count 2 \
    "$bin" --op scan --backend gpu --variant "$v" --n "$n" --repeat 1 >>"$report" 2>&1
  echo "ncu $v: exit $?"
done
python3 - "$report" <<'PY'
import re, sys
kernels, cur = [], None
for line in open(sys.argv[1]):
    m = re.match(r"\s\s(\w+) \((\d+), 1, 1\)x\((\d+), 1, 1\)", line)
    if m:
        cur = {"name": m.group(1), "grid": m.group(2), "stalls": {}}
        kernels.append(cur)
        continue
    if cur is None:
        continue
    f = line.split()
    if len(f) >= 3 and f[0] == "Duration":
        cur["time"] = f[2] + " " + f[1]
    elif len(f) >= 3 and f[0] == "DRAM" and f[1] == "Throughput":
        cur["dram"] = f[-1] + " %"
    else:
        m = re.match(r"\s*smsp__average_warps_issue_stalled_(\w+)_per_issue_active\.ratio\s+\S+\s+([\d.]+)", line)
        if m:
            cur["stalls"][m.group(1)] = float(m.group(2))
for k in kernels:
    total = sum(k["stalls"].values()) or 1.0
    top = sorted(k["stalls"].items(), key=lambda kv: -kv[1])[:5]
    print(k["name"], "grid", k["grid"], k.get("time"), "DRAM", k.get("dram"),
          " ".join(f"{n} {100 * v / total:.1f}%" for n, v in top))
PY
