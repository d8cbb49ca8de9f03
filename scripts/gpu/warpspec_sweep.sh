#!/usr/bin/env bash
# The warp-specialized scan's tile shapes against `lookback` and a device-to-device copy of the
# same input, on a GPU host (issue #37): ROUNDS interleaved rounds (default 3); in each round,
# at every size of SIZES (default 2^16, 2^20, 2^24, 10^8, 2^28 int32), one invocation
#   reduce --op scan --backend gpu --n N --kind inclusive --repeat REPEAT --compare-cub \
#          --variant lookback,lookback_warpspec,lookback_warpspec_8x12x4,…
# runs every variant of VARIANTS on one input (its order rotated from round to round), each
# with one untimed launch and then REPEAT timed launches (default 10), every output checked,
# then CUB's InclusiveSum and the copy (an untimed copy first) on the same input.
#
# Writes to $OUT (else the current folder):
#   warpspec_sweep.csv   every row of every invocation, with leading `round` and `device` columns
#   warpspec_sweep.log   the invocations' stderr (progress, any failure)
#   warpspec_summary.txt the table printed last: per size, the spread of the rounds' medians of
#                        each variant, its ratio to the copy, and the fastest warp-specialized shape
#   warpspec_table_rows.csv  the rows for host/src/scan/plan_by_device.csv that this GPU's
#                        figures give (device, type, size_from, variant; source left empty: the
#                        path the CSV is committed under), for the coordinator to commit: `lookback`
#                        from 1, then, above the largest size where no scan passed and beat
#                        `lookback` in every round, at each size the fastest (by median) of those
#                        that did, a row where it changes
#
# The summary and the rows can be made again from a CSV (rounds of several runs joined under
# distinct round numbers; two rows of one variant, size and round are refused).
#
# TYPE (default i32) and COMBINE (default sum) scan another pair (`--type`, `--combine`): then
# VARIANTS must be generic scans (default `lookback,lookback_warpspec_8x12x6`), no copy is timed,
# and CUB's time is its `DeviceScan::InclusiveScan` of the pair (the rows' cub_time_us).
#
#   scripts/gpu/warpspec_sweep.sh [REDUCE_BINARY]     default: .gpu/bin/reduce
#   ROUNDS=3 REPEAT=10 SIZES="65536 1048576" VARIANTS="lookback,lookback_warpspec" scripts/gpu/warpspec_sweep.sh
#   TYPE=u64 SIZES="33554432 134217728" scripts/gpu/warpspec_sweep.sh
set -uo pipefail
bin=${1:-.gpu/bin/reduce}
if [ ! -x "$bin" ]; then
  echo "warpspec_sweep: no reduce binary at $bin (build the bundle into .gpu/ first)" >&2
  exit 2
fi
out=${OUT:-.}
mkdir -p "$out"
rounds=${ROUNDS:-3}
repeat=${REPEAT:-10}
sizes=${SIZES:-65536 1048576 16777216 100000000 268435456}
shapes="lookback_warpspec_8x12x4,lookback_warpspec_8x12x6,lookback_warpspec_8x28x3,lookback_warpspec_4x20x4"
shapes="$shapes,lookback_warpspec_4x36x4,lookback_warpspec_8x36x3,lookback_warpspec_16x12x4"
shapes="$shapes,lookback_warpspec_8x20x6,lookback_warpspec_8x28x5,lookback_warpspec_8x12x8,lookback_warpspec_8x12x10"
shapes="$shapes,lookback_warpspec_16x12x6,lookback_warpspec_4x12x6,lookback_warpspec_4x12x8,lookback_warpspec_8x4x6"
shapes="$shapes,lookback_warpspec_10x12x4,lookback_warpspec_12x12x4"
type=${TYPE:-i32}
combine=${COMBINE:-sum}
pair=()
if [ "$type,$combine" = "i32,sum" ]; then
  variants=${VARIANTS:-lookback,lookback_warpspec,$shapes}
else
  variants=${VARIANTS:-lookback,lookback_warpspec_8x12x6}
  pair=(--type "$type" --combine "$combine")
fi
case "$rounds$repeat" in *[!0-9]*)
  echo "warpspec_sweep: ROUNDS and REPEAT are whole numbers (got ROUNDS=$rounds REPEAT=$repeat)" >&2; exit 2 ;;
esac
# The table's rule compares every scan with `lookback` in each round.
case ",$variants," in *,lookback,*) ;; *)
  echo "warpspec_sweep: VARIANTS must include lookback, which every other scan is compared with (got $variants)" >&2; exit 2 ;;
esac
# Every name must be a scan variant of this binary: one refusal here, not one per invocation.
if ! "$bin" --op scan "${pair[@]}" --variant "$variants" --list >/dev/null 2>"$out/warpspec_sweep.log"; then
  echo "warpspec_sweep: $bin does not know every variant of: $variants" >&2
  cat "$out/warpspec_sweep.log" >&2
  exit 2
fi
device=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1)
device=${device:-unknown}
echo "warpspec_sweep: $device, $type $combine, $rounds round(s), sizes: $sizes" | tee -a "$out/warpspec_sweep.log"

# $1 = round; the variant list rotated by round - 1 places.
rotated() {
  python3 - "$variants" "$1" <<'PY'
import sys
names = sys.argv[1].split(",")
k = (int(sys.argv[2]) - 1) % len(names)
print(",".join(names[k:] + names[:k]))
PY
}

csv="$out/warpspec_sweep.csv"
rm -f "$csv"
failed=0
for r in $(seq 1 "$rounds"); do
  order=$(rotated "$r")
  for n in $sizes; do
    echo "round $r/$rounds, n = $n" | tee -a "$out/warpspec_sweep.log"
    tmp=$(mktemp)
    if ! "$bin" --format csv --op scan "${pair[@]}" --backend gpu --n "$n" --kind inclusive --repeat "$repeat" \
      --compare-cub --variant "$order" >"$tmp" 2>>"$out/warpspec_sweep.log"; then
      echo "exit $? for round $r, n = $n" | tee -a "$out/warpspec_sweep.log"
      failed=1
    fi
    if [ ! -s "$csv" ] && [ -s "$tmp" ]; then head -1 "$tmp" | sed 's/^/round,device,/' >"$csv"; fi
    tail -n +2 "$tmp" | sed "s/^/$r,\"$device\",/" >>"$csv"
    rm -f "$tmp"
  done
done

python3 - "$csv" "$out/warpspec_summary.txt" "$out/warpspec_table_rows.csv" "$type" "$combine" <<'PY' || failed=1
import csv, statistics, sys
path, summary, table, elem, combine = sys.argv[1:]
# Only rows that passed (every output checked) or are references (CUB, the copy) count.
ok = lambda r: r.get("time_us_median") and r.get("verdict", "").startswith(("PASS", "REFERENCE"))
every = list(csv.DictReader(open(path)))
rows = [r for r in every if ok(r)]
if not any(r["variant"] == "lookback" for r in rows):
    sys.exit(f"warpspec_sweep: {path} has no passed row of lookback, the scan every other is compared with")
# One row per variant, size and round: joined CSVs keep their rounds apart under new numbers.
keys = [(r["n"], r["round"], r["variant"]) for r in every]
if len(set(keys)) != len(keys):
    sys.exit(f"warpspec_sweep: {path} has two rows of one variant at one size in one round")
variants_first = {}
for r in rows:
    variants_first.setdefault((r["round"], r["n"]), r["variant"])
device = rows[0]["device"] if rows else "unknown"
by = {}
for r in rows:
    by.setdefault((int(r["n"]), r["variant"]), []).append(float(r["time_us_median"]))
    # A pair's rows carry CUB's time of the same invocation (no row of its own): once per
    # invocation, from its first variant's row.
    if r.get("type") and r.get("cub_time_us") and r["variant"] == variants_first.get((r["round"], r["n"])):
        by.setdefault((int(r["n"]), "cub"), []).append(float(r["cub_time_us"]))
lines = [f"{device}, {elem} {combine}: the spread of the rounds' medians (inclusive scans; d2d_copy is the copy)",
         f"{'n':>10} {'variant':<28} {'min µs':>9} {'max µs':>9} {'× copy':>7}"]
best = []
for n in sorted({n for n, _ in by}):
    copy = by.get((n, "d2d_copy"))
    floor = statistics.median(copy) if copy else None
    here = sorted(((min(t), max(t), v) for (m, v), t in by.items() if m == n))
    for lo, hi, v in here:
        ratio = f"{statistics.median(by[(n, v)]) / floor:7.3f}" if floor else "      -"
        lines.append(f"{n:>10} {v:<28} {lo:>9.1f} {hi:>9.1f} {ratio}")
    scans = [(statistics.median(by[(n, v)]), v) for _, _, v in here if v.startswith("lookback")]
    if scans:
        best.append((n, min(scans)[1]))
lines.append("fastest scan per size: " + ", ".join(f"{n}: {v}" for n, v in best))
# Faster only where the spread allows it: a scan other than `lookback` is taken at a size only
# if it passed and beat `lookback` in every round that timed `lookback` there (each round's two
# times are of one invocation); of those, the fastest by median.
per_round = {}
for r in rows:
    per_round.setdefault((int(r["n"]), r["round"]), {})[r["variant"]] = float(r["time_us_median"])
failed_at = {(int(r["n"]), r["variant"]) for r in every if not ok(r)}
def every_round(v, n):
    timed = [t for (m, _), t in per_round.items() if m == n and "lookback" in t]
    return (n, v) not in failed_at and bool(timed) and all(v in t and t[v] < t["lookback"] for t in timed)
strict = []
for n, _ in best:
    won = [(statistics.median(by[(n, v)]), v) for (m, v) in by if m == n and v.startswith("lookback_") and every_round(v, n)]
    strict.append((n, min(won)[1] if won else "lookback"))
lines.append("faster than lookback in every round: " + ", ".join(f"{n}: {v}" for n, v in strict))
open(summary, "w").write("\n".join(lines) + "\n")
print("\n".join(lines))
# The table's rows for this device: `lookback` (the plan before any sweep) from 1, and from the
# size above the largest one where `lookback` stays (`strict`) the scan faster in every round,
# a row where that choice changes; the coordinator commits them under the device's name. Sizes
# never timed (below the smallest) keep `lookback`, and so do sizes between two measured ones
# where `lookback` held at the larger: one switch, not a row for each measured size.
with open(table, "w") as f:
    f.write("device,type,size_from,variant,source\n")
    f.write(f"{device},{elem},1,lookback,\n")
    last, kept = "lookback", max((i for i, (_, v) in enumerate(strict) if v == "lookback"), default=-1)
    for n, v in strict[kept + 1:]:
        if v != last:
            f.write(f"{device},{elem},{n},{v},\n")
            last = v
print(f"rows for host/src/scan/plan_by_device.csv (source: the committed warpspec_sweep.csv): {table}")
PY
exit "$failed"
