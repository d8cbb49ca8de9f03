#!/usr/bin/env bash
# Issue #61 on a GPU host: the library's histogram (reduce_scan::Histogram, through
# examples/histogram_even) against CUB's DeviceHistogram::HistogramEven (cub/histogram_even.cu,
# built here with nvcc) and torch.histc (scripts/gpu/histc.py, f32 only), on the same samples
# (SplitMix64 of the index: uniform, 90 % in one bin, a range with no shift, a range CUB holds in
# an int, f32 in [0, 1)), 256 bins, interleaved rounds: each round runs ours, then CUB's, then
# PyTorch's, every one's counters checked against its own CPU count (ours and CUB's also by
# their hash: the same samples must give the same counters).
#
#   scripts/gpu/histogram.sh      writes $OUT/histogram.csv (default ./histogram.csv)
#
# Run from the repository root with the example at .gpu/histogram_even (built from this commit).
# Columns: round, impl (ours, cub, torch), then each program's own CSV columns
# (distribution, n, bins, median_us, gb_per_s, …). Exit status 0 when every row passed, 1
# otherwise, 2 when the example or nvcc is missing.
#
# Environment: ROUNDS (3), N (2^28), RUNS (20 timed calls per row), EXAMPLE
# (.gpu/histogram_even), NVCC (nvcc), ARCH (sm_90), PYTHON (python3).
set -uo pipefail
example=${EXAMPLE:-.gpu/histogram_even}
[ -x "$example" ] || { echo "histogram: no example binary at $example (cargo build --release --example histogram_even)" >&2; exit 2; }
nvcc=${NVCC:-nvcc}
command -v "$nvcc" >/dev/null || { echo "histogram: no nvcc ($nvcc) to build cub/histogram_even.cu" >&2; exit 2; }
out=${OUT:-.}; mkdir -p "$out"
rounds=${ROUNDS:-3}; n=${N:-268435456}; runs=${RUNS:-20}; python=${PYTHON:-python3}
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
"$nvcc" -O3 -arch="${ARCH:-sm_90}" -o "$tmp/cub_hist" cub/histogram_even.cu || exit 2
csv=$out/histogram.csv; : > "$csv"
status=0
for r in $(seq 1 "$rounds"); do
  "$example" --n "$n" --runs "$runs" --format csv | grep -v '^#' | sed "s/^/$r,ours,/" >> "$csv" || status=1
  "$tmp/cub_hist" "$n" "$runs" | sed "s/^/$r,cub,/" >> "$csv" || status=1
  "$python" scripts/gpu/histc.py "$n" "$runs" | sed "s/^/$r,torch,/" >> "$csv" || echo "histogram: torch.histc did not run (round $r)" >&2
done
grep -q ',FAIL' "$csv" && status=1
cat "$csv"
exit $status
