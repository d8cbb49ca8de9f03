#!/usr/bin/env bash
# The seed's scan table on a GPU host: milliseconds by length for bit (Fenwick tree), blelloch
# (reduce-then-scan with bank-conflict-free padding), lookback (single pass, decoupled
# look-back) and CUB's DeviceScan::InclusiveSum, all timed in the same runs; then the tuning
# sweep of lookback's tile shapes at 1e8 and 2^28, and the target check.
#
#   scripts/gpu/scan_table.sh [REDUCE_BINARY]     default: .gpu/bin/reduce, else target/release/reduce
#
# Run from the repository root (the binary compiles cub/bench.cu with the host's nvcc; see
# cli/src/cub.rs). For each length it runs
#   reduce --op scan --backend gpu --n N --variant all --repeat $REPEAT --format csv --compare-cub
# (every variant, inclusive and exclusive, each output checked element by element against the
# CPU scan; median of $REPEAT runs, CUDA events around all launches of a run), and for 1e8 and
# 2^28 the same with --variant tuning. The tables use the inclusive rows (CUB's InclusiveSum
# is inclusive). Every CSV and log goes to $OUT/scan_table/ when OUT is set, else
# ./scan-table-logs/. Exit status 0 when lookback is at least 1.10x CUB at 1e8 and 2^28, 1
# when not (or a row failed), 2 when nothing could be compared.
#
# Environment: REPEAT (default 20), LENGTHS (default "100 1000 10000 100000 1000000 10000000
# 100000000 1000000000").
set -uo pipefail
bin=${1:-}
if [ -z "$bin" ]; then
  if [ -x .gpu/bin/reduce ]; then bin=.gpu/bin/reduce; else bin=target/release/reduce; fi
fi
[ -x "$bin" ] || { echo "no reduce binary at $bin (build the bundle: ../shared/gpu/bundle)"; exit 2; }
logs=${OUT:+$OUT/scan_table}; logs=${logs:-scan-table-logs}; mkdir -p "$logs"
repeat=${REPEAT:-20}
lengths=${LENGTHS:-100 1000 10000 100000 1000000 10000000 100000000 1000000000}

for n in $lengths; do
  "$bin" --op scan --backend gpu --n "$n" --variant all --repeat "$repeat" --format csv --compare-cub \
    >"$logs/all_$n.csv" 2>"$logs/all_$n.log"
  echo "exit $?" >>"$logs/all_$n.log"
done
for n in 100000000 268435456; do
  "$bin" --op scan --backend gpu --n "$n" --variant tuning --repeat "$repeat" --format csv --compare-cub \
    >"$logs/tuning_$n.csv" 2>"$logs/tuning_$n.log"
  echo "exit $?" >>"$logs/tuning_$n.log"
done
"$bin" --op scan --list >"$logs/variants.txt" 2>&1

python3 - "$logs" $lengths <<'PY'
import csv, os, sys
logs, lengths = sys.argv[1], [int(x) for x in sys.argv[2:]]

def load(path):
    try:
        return list(csv.DictReader(open(path)))
    except OSError:
        return []

def why(path):
    try:
        lines = [l for l in open(path).read().splitlines() if l.strip()]
    except OSError:
        return "no log"
    return next((l for l in lines if l.startswith("error")), lines[-1] if lines else "no output")

failed, problems = [], []
def times(rows):
    """variant -> median µs (inclusive rows and CUB); failing rows are remembered."""
    out = {}
    for r in rows:
        v = r["verdict"]
        if v not in ("PASS", "REFERENCE") and not v.startswith("SKIP"):
            failed.append(f"{r['variant']} {r['kind']} n={r['n']}: {v}")
        if r["kind"] == "inclusive" and r["time_us_median"]:
            out[r["variant"]] = float(r["time_us_median"])
    return out

def ms(t):
    return f"{t / 1e3:.4f}" if t is not None else "—"

cols = ["bit", "blelloch", "lookback", "cub"]
print("Inclusive scan of int32, milliseconds (median, CUDA events; each output checked against the CPU scan)")
print(f"{'length':>12} " + " ".join(f"{c + ' (ms)':>15}" for c in cols) + f" {'lookback × CUB':>15} {'lookback GB/s':>14} {'CUB GB/s':>9}")
for n in lengths:
    rows = load(os.path.join(logs, f"all_{n}.csv"))
    if not rows:
        problems.append(f"n={n}: no rows ({why(os.path.join(logs, f'all_{n}.log'))})")
        continue
    t = times(rows)
    lb, cub = t.get("lookback"), t.get("cub")
    ratio = f"{cub / lb:.2f}×" if lb and cub else "—"
    gbs = lambda x: f"{n * 8 / (x * 1e-6) / 1e9:.0f}" if x else "—"
    print(f"{n:>12} " + " ".join(f"{ms(t.get(c)):>15}" for c in cols) + f" {ratio:>15} {gbs(lb):>14} {gbs(cub):>9}")
    if cub is None:
        skip = next((r["verdict"] for r in rows if r["variant"] == "cub"), "no cub row")
        problems.append(f"n={n}: no CUB time ({skip})")

print()
print("Tuning: lookback tile shapes (threads x items per thread), inclusive, µs and speed-up over CUB InclusiveSum")
sweep = {}
for n in (100000000, 268435456):
    rows = load(os.path.join(logs, f"tuning_{n}.csv"))
    if not rows:
        problems.append(f"tuning n={n}: no rows ({why(os.path.join(logs, f'tuning_{n}.log'))})")
    sweep[n] = times(rows)
shapes = sorted({v for s in sweep.values() for v in s if v != "cub"}, key=lambda v: (v != "lookback", v))
print(f"{'variant':<18} {'1e8 µs':>10} {'× CUB':>7} {'2^28 µs':>10} {'× CUB':>7}")
for v in shapes + ["cub"]:
    cells = []
    for n in (100000000, 268435456):
        t, c = sweep[n].get(v), sweep[n].get("cub")
        cells += [f"{t:.1f}" if t else "—", f"{c / t:.2f}×" if t and c else "—"]
    print(f"{v:<18} {cells[0]:>10} {cells[1]:>7} {cells[2]:>10} {cells[3]:>7}")

print()
status = 0
verdicts = []
for n, label in ((100000000, "1e8"), (268435456, "2^28")):
    t, c = sweep.get(n, {}).get("lookback"), sweep.get(n, {}).get("cub")
    if t is None or c is None:
        verdicts.append(f"{label}: no comparison")
        status = max(status, 2)
        continue
    r = c / t
    ok = r >= 1.10
    verdicts.append(f"{label}: lookback {t:.1f} µs vs CUB {c:.1f} µs = {r:.3f}× ({'met' if ok else 'NOT met'}, target ≥ 1.10×)")
    if not ok:
        status = max(status, 1)
best = {n: min(((t, v) for v, t in s.items() if v != "cub"), default=None) for n, s in sweep.items()}
print("target (lookback ≥ 1.10× CUB InclusiveSum at 1e8 and 2^28):")
for v in verdicts:
    print("  " + v)
for n, b in best.items():
    if b:
        print(f"  fastest shape at n={n}: {b[1]} ({b[0]:.1f} µs)")
for p in problems:
    print("problem: " + p)
for f in failed:
    print("FAILED ROW: " + f)
if failed:
    status = max(status, 1)
sys.exit(status)
PY
