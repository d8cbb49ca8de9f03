#!/usr/bin/env bash
# Writes the raw CSVs behind every figure in README.md and docs/, on a GPU host, into
# $OUT/measurements/ (default ./measurements/); commit them as docs/measurements/<date>-<gpu>/.
#
#   scripts/gpu/measure.sh [STEP...]    steps: device variants sum_shapes sum_vs_cub scans twins
#                                       types_vs_cub typed_scans (default: all but sum_shapes,
#                                       types_vs_cub and typed_scans)
#
# Run from the repository root with the bundle in .gpu/ (../shared/gpu/bundle writes it; the
# commit it was built from is in .gpu/COMMIT). Every CSV comes straight from the `reduce` CLI
# (--format csv), which checks every timed run's result; this script only adds a `round`
# column where it repeats a measurement.
#
# * device.txt     — commit, date, nvidia-smi's name/driver/clocks/memory, the CLI's device line.
# * variants_2eK.csv — every reduction variant at n = 2^K (K = 24, 28), block 512, median of 20.
# * sum_shapes.csv — the table behind reduce_scan::sum's plan (SUM_PLAN): atomic_accumulate at blocks
#   128/256/512 × grid (blocks per SM: the occupancy calculator's, or 1024 = one block per tile)
#   at 2^20..2^28, ROUNDS rounds with the shapes interleaved in each, median of 30 per row
#   (SHAPE_SIZES, SHAPE_BLOCKS and SHAPE_ROUNDS narrow or widen it).
# * sum_vs_cub.csv — what reduce_scan::sum runs (atomic_accumulate, at the block and grid of SUM_PLAN in
#   host/src/reduce/sum.rs, which plan_args repeats) against CUB's
#   DeviceReduce::Sum on the same values, per call, ROUNDS rounds alternating CUB then ours
#   (each round: CUB's median of 30 calls, then ours), at 2^20, 2^24, 2^26, 2^28.
# * scans.csv      — every scan variant (inclusive and exclusive) and CUB's InclusiveSum at the
#   seed's lengths 1e2..1e9 (1e9 needs 8 GB for input + output).
# * types_vs_cub.csv — every element type × operator: the generic variants (atomic_accumulate
#   at the shape plan_args gives) with --compare-cub (CUB DeviceReduce::Sum/Min/Max on the same
#   values), at 2^20, 2^24, 2^26, 2^28, TYPE_ROUNDS rounds (default 1), median of 30 per row;
#   TYPES (default "i32 u32 i64 u64 f32 f64") picks the types.
# * typed_scans.csv — every element type × operator through the typed look-back scan
#   (inclusive and exclusive) with --compare-cub (CUB DeviceScan::InclusiveSum/InclusiveScan on
#   the same values), at TYPED_SCAN_SIZES (default 2^24 2^28), median of 10 per row; TYPES as
#   for types_vs_cub.
# * twins_2eK.csv  — with --compare-c where nvcc is there: each classic kernel beside its CUDA C
#   twin, same data, same geometry.
set -uo pipefail
cd "$(dirname "$0")/../.."
bin=.gpu/bin/reduce
out=${OUT:-.}/measurements; mkdir -p "$out"
rounds=${ROUNDS:-7}
steps=("$@"); [ ${#steps[@]} -eq 0 ] && steps=(device variants sum_vs_cub scans twins)
rc=0

# Appends one CLI run's CSV to $1 with a leading `round` column ($2); the header once.
rounds_csv() { # $1 = file, $2 = round, rest = CLI args
  local file=$1 round=$2 tmp; shift 2
  tmp=$(mktemp)
  "$bin" "$@" --format csv >"$tmp" 2>>"$out/stderr.log" || rc=1
  [ -s "$file" ] || head -1 "$tmp" | sed 's/^/round,/' >"$file"
  tail -n +2 "$tmp" | sed "s/^/$round,/" >>"$file"
  rm -f "$tmp"
}

# As rounds_csv, with the columns `round,blocks_per_sm` ($2 = "R,K").
tagged_csv() { # $1 = file, $2 = "round,blocks_per_sm", rest = CLI args
  local file=$1 tag=$2 tmp; shift 2
  tmp=$(mktemp)
  "$bin" "$@" --format csv >"$tmp" 2>>"$out/stderr.log" || rc=1
  [ -s "$file" ] || head -1 "$tmp" | sed 's/^/round,blocks_per_sm,/' >"$file"
  tail -n +2 "$tmp" | sed "s/^/$tag,/" >>"$file"
  rm -f "$tmp"
}

# The shape reduce_scan::sum's SUM_PLAN (host/src/reduce/sum.rs) gives n = 2^$1: keep the two in step.
plan_args() {
  if [ "$1" -le 22 ]; then echo "--block 256"
  elif [ "$1" -le 24 ]; then echo "--block 512 --blocks-per-sm 1024"
  else echo "--block 1024 --blocks-per-sm 1024"; fi
}

for s in "${steps[@]}"; do
  case "$s" in
    device)
      { echo "commit: $(cat .gpu/COMMIT 2>/dev/null || echo unknown)"
        echo "measured: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
        nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.max.mem,memory.total --format=csv
        "$bin" --backend gpu --variant interleaved --n 1024 --repeat 1 | head -1
      } >"$out/device.txt" 2>&1
      cat "$out/device.txt"
      ;;
    variants)
      for k in 24 28; do
        echo "variants at 2^$k"
        "$bin" --backend gpu --variant all --log2 "$k" --block 512 --repeat 20 --format csv \
          >"$out/variants_2e$k.csv" 2>>"$out/stderr.log" || rc=1
      done
      ;;
    sum_shapes)
      rm -f "$out/sum_shapes.csv"
      for r in $(seq 1 "${SHAPE_ROUNDS:-3}"); do
        for k in ${SHAPE_SIZES:-20 24 26 28}; do
          echo "sum shapes: round $r, 2^$k"
          for b in ${SHAPE_BLOCKS:-128 256 512}; do
            tagged_csv "$out/sum_shapes.csv" "$r,occupancy" --backend gpu --variant atomic_accumulate --block "$b" \
              --log2 "$k" --repeat 30
            tagged_csv "$out/sum_shapes.csv" "$r,1024" --backend gpu --variant atomic_accumulate --block "$b" \
              --blocks-per-sm 1024 --log2 "$k" --repeat 30
          done
        done
      done
      ;;
    types_vs_cub)
      rm -f "$out/types_vs_cub.csv"
      for r in $(seq 1 "${TYPE_ROUNDS:-1}"); do
        for k in 20 24 26 28; do
          echo "types vs CUB: round $r, 2^$k"
          for t in ${TYPES:-i32 u32 i64 u64 f32 f64}; do
            for o in sum min max; do
              [ "$t$o" = i32sum ] && continue  # the i32 sum is sum_vs_cub's
              # shellcheck disable=SC2046
              rounds_csv "$out/types_vs_cub.csv" "$r" --backend gpu --type "$t" --combine "$o" \
                --variant atomic_accumulate $(plan_args "$k") --log2 "$k" --repeat 30 --compare-cub
            done
          done
        done
      done
      ;;
    typed_scans)
      rm -f "$out/typed_scans.csv"
      for k in ${TYPED_SCAN_SIZES:-24 28}; do
        echo "typed scans vs CUB at 2^$k"
        for t in ${TYPES:-i32 u32 i64 u64 f32 f64}; do
          for o in sum min max; do
            [ "$t$o" = i32sum ] && continue  # the i32 sum is scans.csv's
            rounds_csv "$out/typed_scans.csv" 1 --backend gpu --op scan --type "$t" --combine "$o" \
              --log2 "$k" --repeat 10 --compare-cub
          done
        done
      done
      ;;
    sum_vs_cub)
      rm -f "$out/sum_vs_cub.csv"
      for r in $(seq 1 "$rounds"); do
        for k in 20 24 26 28; do
          echo "sum vs CUB: round $r/$rounds, 2^$k"
          # shellcheck disable=SC2046
          rounds_csv "$out/sum_vs_cub.csv" "$r" --backend gpu --variant atomic_accumulate $(plan_args "$k") \
            --log2 "$k" --repeat 30 --compare-cub
        done
      done
      ;;
    scans)
      rm -f "$out/scans.csv"
      r=${SCAN_ROUND0:-0}
      for n in ${SCAN_SIZES:-100 1000 10000 100000 1000000 10000000 100000000 1000000000 268435456}; do
        r=$((r + 1))
        echo "scans at n = $n"
        rounds_csv "$out/scans.csv" "$r" --backend gpu --op scan --variant all --n "$n" --repeat 10 --compare-cub
      done
      ;;
    twins)
      if "$bin" --help | grep -q -- '--compare-c'; then
        for k in 24 28; do
          echo "CUDA C twins at 2^$k"
          "$bin" --backend gpu --variant all --log2 "$k" --block 512 --repeat 20 --compare-c --format csv \
            >"$out/twins_2e$k.csv" 2>>"$out/stderr.log" || rc=1
        done
      fi
      ;;
    *) echo "unknown step $s"; rc=2 ;;
  esac
done
exit $rc
