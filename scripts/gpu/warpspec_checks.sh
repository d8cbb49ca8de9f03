#!/usr/bin/env bash
# Issue #37 on a GPU host with the bundle in .gpu/: compute-sanitizer and ncu on the
# warp-specialized scan.
#
#   scripts/gpu/warpspec_checks.sh [sanitizer|stalls|source|all] [REDUCE_BINARY]
#
#   sanitizer  memcheck, racecheck and synccheck of each kernel of VARIANTS (default
#              "lookback_warpspec lookback_warpspec_8x12x4") at odd sizes, whole tiles and a
#              partial last one (each run also checks its output): $OUT/sanitizer_*.log, one
#              summary line per run
#   stalls     scripts/gpu/scan_stalls.sh for lookback and lookback_warpspec at N (default 2^28):
#              sections, occupancy and the stall breakdown before (lookback) and after
#   source     ncu's source counters of one launch of SOURCE_VARIANT (default lookback_warpspec)
#              at N: the SASS with each instruction's warp-stall samples
#              ($OUT/source_{SOURCE_VARIANT}_sass.csv), and the
#              instructions holding most samples, with their role's function where the SASS names
#              one (stdout): where the warps wait (an mbarrier try-wait on *full* is a compute warp
#              waiting for its tile; on *ready*, for the look-ahead warp)
#
# Exit status: 0 when every run exited 0 (the sanitizer's error exit code is 9), else 1.
set -uo pipefail
cd "$(dirname "$0")/../.."
step=${1:-all}
bin=${2:-.gpu/bin/reduce}
[ -x "$bin" ] || { echo "warpspec_checks: no reduce binary at $bin (build the bundle into .gpu/)" >&2; exit 2; }
out=${OUT:-.}; mkdir -p "$out"
n=${N:-268435456}
variants=${VARIANTS:-lookback_warpspec lookback_warpspec_8x12x4}
# TYPE and COMBINE (sanitizer, source): another pair of a generic scan (`--type`, `--combine`).
pair=(); tag=""
if [ -n "${TYPE:-}${COMBINE:-}" ]; then
  pair=(--type "${TYPE:-i32}" --combine "${COMBINE:-sum}"); tag="_${TYPE:-i32}_${COMBINE:-sum}"
fi
rc=0

sanitizer() {
  local tool v size log
  for tool in memcheck racecheck synccheck; do
    for v in $variants; do
      # racecheck and synccheck run ~100x slower: tens of tiles are enough for them.
      sizes="1000003 9217"; [ "$tool" = memcheck ] || sizes="100003 9217"
      for size in $sizes; do
        log=$out/sanitizer_${tool}_${v}${tag}_$size.log
        compute-sanitizer --tool "$tool" --error-exitcode 9 "$bin" --op scan "${pair[@]}" --backend gpu \
          --variant "$v" --n "$size" --repeat 2 >"$log" 2>&1
        local code=$?
        [ $code -eq 0 ] || rc=1
        echo "$tool $v${tag} n=$size: exit $code ($(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$log" | head -1))"
      done
    done
  done
}

stalls() {
  VARIANTS="lookback lookback_warpspec" N=$n OUT=$out scripts/gpu/scan_stalls.sh "$bin" || rc=1
}

source_counters() {
  local v=${SOURCE_VARIANT:-lookback_warpspec}
  local k=$v${tag:+__${tag#_}}
  local rep=$out/source_$k
  ncu --section SourceCounters --section WarpStateStats -k regex:"^$k\$" -c 1 -f -o "$rep" \
    "$bin" --op scan "${pair[@]}" --backend gpu --variant "$v" --n "$n" --repeat 1 >"$out/source.log" 2>&1 || rc=1
  ncu --import "$rep.ncu-rep" --page source --print-source sass --csv >"${rep}_sass.csv" 2>>"$out/source.log" || rc=1
  python3 - "${rep}_sass.csv" <<'PY'
import csv, sys
rows = list(csv.reader(open(sys.argv[1], errors="replace")))
head = next((i for i, r in enumerate(rows) if "Source" in r), None)
if head is None:
    sys.exit("source: no SASS table in the export")
cols = rows[head]
def col(*names):
    for name in names:
        for i, c in enumerate(cols):
            if c.strip().lower() == name.lower():
                return i
    return None
src = col("Source")
samples = col("Warp Stall Sampling (All Samples)", "Warp Stall Sampling (All Cycles)")
if samples is None:
    sys.exit(f"source: no stall-sampling column among {cols}")
def num(s):
    try:
        return float(s.replace(",", ""))
    except ValueError:
        return 0.0
body = [(num(r[samples]), r[src].strip(), i) for i, r in enumerate(rows[head + 1:]) if len(r) > max(src, samples)]
total = sum(s for s, _, _ in body) or 1.0
print(f"source: {len(body)} SASS instructions, {int(total)} stall samples; the 15 holding most:")
for s, text, i in sorted(body, reverse=True)[:15]:
    print(f"  {100 * s / total:5.1f}%  #{i:<5} {text}")
PY
}

case "$step" in
  sanitizer) sanitizer ;;
  stalls) stalls ;;
  source) source_counters ;;
  all) sanitizer; stalls; source_counters ;;
  *) sed -n '2,20p' "$0" | sed 's/^# \{0,1\}//'; exit 2 ;;
esac
exit $rc
