#!/usr/bin/env bash
# The bulk-copy look-back scan against lookback, CUB's InclusiveSum and a device-to-device copy
# of the same input, on a GPU host: ROUNDS rounds (default 3), each running, at 1e8 and 2^28,
#   reduce --op scan --backend gpu --n N --variant V --repeat 10 --compare-cub
# for V = lookback, lookback_bulk, lookback_bulk_load_only, lookback_persistent (VARIANTS;
# inclusive and exclusive, every output checked; CUB and the copy timed again in each
# invocation, on the same input): interleaved rounds. Then once
# `--variant tuning` at both sizes (every look-back shape and ablation), and `--variant all` at
# SMALL (default "10000 1000000 10000000"). Writes bulk_scan.csv (with a leading round column),
# bulk_tuning.csv and bulk_small.csv to $OUT, else to the current directory.
#
#   scripts/gpu/bulk_scan.sh [REDUCE_BINARY]     default: .gpu/bin/reduce
set -uo pipefail
bin=${1:-.gpu/bin/reduce}
[ -x "$bin" ] || { echo "no reduce binary at $bin (build the bundle: ../shared/gpu/bundle)"; exit 2; }
out=${OUT:-.}
rounds=${ROUNDS:-3}
append() { # $1 = file, $2 = round, rest = CLI args
  local file=$1 round=$2 tmp; shift 2
  tmp=$(mktemp)
  "$bin" --format csv "$@" >"$tmp" 2>>"$out/bulk_scan.log" || echo "exit $? for: $*" >>"$out/bulk_scan.log"
  if [ ! -s "$file" ]; then head -1 "$tmp" | sed 's/^/round,/' >"$file"; fi
  tail -n +2 "$tmp" | sed "s/^/$round,/" >>"$file"
  rm -f "$tmp"
}
rm -f "$out/bulk_scan.csv" "$out/bulk_tuning.csv" "$out/bulk_small.csv"
for r in $(seq 1 "$rounds"); do
  for n in 100000000 268435456; do
    for v in ${VARIANTS:-lookback lookback_bulk lookback_bulk_load_only lookback_persistent}; do
      echo "round $r/$rounds, n = $n, $v"
      append "$out/bulk_scan.csv" "$r" --op scan --backend gpu --n "$n" --variant "$v" --repeat 10 --compare-cub
    done
  done
done
for n in 100000000 268435456; do
  append "$out/bulk_tuning.csv" 1 --op scan --backend gpu --n "$n" --variant tuning --repeat 10 --compare-cub
done
for n in ${SMALL:-10000 1000000 10000000}; do
  append "$out/bulk_small.csv" 1 --op scan --backend gpu --n "$n" --variant all --repeat 20 --compare-cub
done
python3 - "$out/bulk_scan.csv" <<'PY'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
by = {}
for r in rows:
    if r["kind"] in ("inclusive", "copy") and r["time_us_median"]:
        by.setdefault((r["variant"], int(r["n"])), []).append(float(r["time_us_median"]))
print(f"{'variant':<26} {'n':>10} {'min µs':>9} {'max µs':>9}   (inclusive; the spread of the rounds' medians)")
for (v, n), ts in sorted(by.items(), key=lambda kv: (kv[0][1], min(kv[1]))):
    print(f"{v:<26} {n:>10} {min(ts):>9.1f} {max(ts):>9.1f}")
PY
