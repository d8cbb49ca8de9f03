#!/usr/bin/env bash
# Our best full reduction against CUB's DeviceReduce::Sum, on a GPU host, in the same runs.
#
#   scripts/gpu/compare.sh [REDUCE_BINARY]     default: .gpu/bin/reduce, else target/release/reduce
#
# Run from the repository root (cub/bench.cu is compiled by the binary itself with the host's
# nvcc; see cli/src/cub.rs). For n = 2^20, 2^24, 2^26, 2^28 and every block in $BLOCKS it runs
#   reduce --backend gpu --family modern --log2 K --block B --repeat $REPEAT --format csv --compare-cub
# which times every modern variant and CUB in the same run (a child process: the harness, cub/bench.cu) (median of $REPEAT runs each,
# CUDA events around each launch or CUB call). It then prints one table: per n, the fastest
# full reduction (one launch leaves the scalar on the device: $FULL, at its best block), its
# median, CUB's median from the same run, the ratio (our throughput / CUB's, > 1 = faster) and
# the target. Details (every CSV and log) go to $OUT/compare/ when OUT is set, else
# ./compare-logs/. Exit status 0 when every target is met, 1 when one is not, 2 when nothing
# could be compared.
#
# Environment: REPEAT (default 30), BLOCKS (default "128 256 512 1024"),
# FULL (default "single_pass atomic_accumulate": the variants that count as full reductions).
set -uo pipefail
bin=${1:-}
if [ -z "$bin" ]; then
  if [ -x .gpu/bin/reduce ]; then bin=.gpu/bin/reduce; else bin=target/release/reduce; fi
fi
[ -x "$bin" ] || { echo "no reduce binary at $bin (build the bundle: ../shared/gpu/bundle)"; exit 2; }
logs=${OUT:+$OUT/compare}; logs=${logs:-compare-logs}; mkdir -p "$logs"
repeat=${REPEAT:-30}
blocks=${BLOCKS:-128 256 512 1024}
full=${FULL:-single_pass atomic_accumulate}

for k in 20 24 26 28; do
  for b in $blocks; do
    "$bin" --backend gpu --family modern --log2 "$k" --block "$b" --repeat "$repeat" --format csv --compare-cub \
      >"$logs/k${k}_b${b}.csv" 2>"$logs/k${k}_b${b}.log"
    echo "exit $?" >>"$logs/k${k}_b${b}.log"
  done
done
"$bin" --backend gpu --list >"$logs/variants.txt" 2>&1

python3 - "$logs" "$full" $blocks <<'PY'
import csv, glob, os, sys
logs, full, blocks = sys.argv[1], set(sys.argv[2].split()), sys.argv[3:]
targets = {20: 1.30, 24: 1.00, 26: 1.00, 28: 1.00}
print(f"{'n':<6} {'best full reduction':<22} {'ours µs':>9} {'CUB µs':>9} {'× CUB':>7} {'target':>7}  verdict   (runs: {', '.join('block ' + b for b in blocks)})")
status, problems = 0, []
for k, target in targets.items():
    best = None  # (our median, variant, block, cub median)
    cubs = []
    per_block = []  # every full reduction at every block, with the CUB median of its run
    for b in blocks:
        path = os.path.join(logs, f"k{k}_b{b}.csv")
        try:
            rows = list(csv.DictReader(open(path)))
        except OSError:
            rows = []
        if not rows or "x_cub" not in rows[0]:
            log = open(os.path.join(logs, f"k{k}_b{b}.log")).read().strip().splitlines()
            why = next((l for l in log if "compare-cub" in l or l.startswith("error")), log[-1] if log else "no output")
            problems.append(f"2^{k} block {b}: no CUB comparison: {why}")
            continue
        for r in rows:
            if r["verdict"] not in ("PASS", ""):
                if not r["verdict"].startswith("SKIP"):
                    problems.append(f"2^{k} block {b}: {r['variant']}: {r['verdict']}")
                continue
            if not r["time_us_median"]:
                continue
            cub = float(r["cub_median_us"])
            cubs.append(cub)
            if r["variant"] in full:
                t = float(r["time_us_median"])
                per_block.append((t, r["variant"], b, cub))
                if best is None or t < best[0]:
                    best = (t, r["variant"], b, cub)
    if best is None:
        print(f"2^{k:<4} {'—':<22} {'—':>9} {'—':>9} {'—':>7} {target:>7.2f}  NO DATA")
        status = max(status, 2)
        continue
    t, v, b, cub = best
    ratio = cub / t
    ok = ratio >= target
    status = max(status, 0 if ok else 1)
    spread = f"  (CUB over the runs: {min(cubs):.1f}–{max(cubs):.1f} µs)" if len(cubs) > 1 else ""
    print(f"2^{k:<4} {v + '/' + b:<22} {t:>9.2f} {cub:>9.2f} {ratio:>7.2f} {target:>7.2f}  {'MET' if ok else 'MISSED'}{spread}")
    print("       " + "  ".join(f"{fv}/{fb}: {ft:.2f} µs (×{fc / ft:.2f})" for ft, fv, fb, fc in sorted(per_block)))
for p in problems:
    print("note:", p)
print(f"details: {logs}/ (one CSV per size and block, with every modern variant)")
sys.exit(status)
PY
