#!/usr/bin/env bash
# Issue 37's arithmetic of the bound, in CUDA C beside the Rust kernels (scripts/gpu/explore/):
#   loaded_latency.cu  the latency of one DRAM load, alone and while a copy keeps DRAM busy, and
#                      by Little's law the bytes an SM keeps loading at that copy's rate
#   copy_kernels.cu    copy kernels of several shapes (grid-stride loads and stores, and the
#                      bulk-copy engine through a ring in shared memory) against the runtime's
#                      device-to-device cudaMemcpy (the scan's yardstick), at 2^28 int32
#
#   scripts/gpu/copy_bound.sh   -> $OUT/loaded_latency.csv (round,what,value,unit),
#                                  $OUT/copy_kernels.csv, and with SCAN_VARIANTS also
#                                  $OUT/scan_round_<r>/ (scripts/gpu/warpspec_sweep.sh's files)
#
# ROUNDS (default 3) rounds. With SCAN_VARIANTS (a comma list, e.g.
# "lookback,lookback_warpspec_8x12x6"), each round first runs one round of warpspec_sweep.sh at
# 2^28 (those scans, the copy and CUB), then one of copy_kernels: the scans and the copy kernels
# are interleaved on the same machine. Needs nvcc (the GPU machine's CUDA toolkit); the binaries
# are built in a private temporary folder.
set -uo pipefail
cd "$(dirname "$0")/../.."
rounds=${ROUNDS:-3}
case $rounds in ''|*[!0-9]*|0*) echo "copy_bound.sh: ROUNDS must be a whole number ≥ 1, not '$rounds'" >&2; exit 2;; esac
nvcc=$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)
[ -x "$nvcc" ] || { echo "copy_bound.sh: no nvcc (the CUDA toolkit) on this machine" >&2; exit 2; }
out=${OUT:-.}; mkdir -p "$out"
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
for p in loaded_latency copy_kernels; do
  "$nvcc" -O3 -arch=sm_90 -std=c++17 -o "$tmp/$p" "scripts/gpu/explore/$p.cu" || exit 1
done
rc=0
csv=$out/loaded_latency.csv
echo "round,what,value,unit" >"$csv"
for r in $(seq 1 "$rounds"); do
  "$tmp/loaded_latency" >"$tmp/run.csv" || rc=1
  tail -n +2 "$tmp/run.csv" | sed "s/^/$r,/" >>"$csv"
done
grep -E "latency|copy_during|memcpy|in_flight|covered" "$csv"
ck=$out/copy_kernels.csv
: >"$ck"
for r in $(seq 1 "$rounds"); do
  if [ -n "${SCAN_VARIANTS:-}" ]; then
    ROUNDS=1 SIZES=268435456 VARIANTS=$SCAN_VARIANTS OUT=$out/scan_round_$r scripts/gpu/warpspec_sweep.sh \
      >"$out/scan_round_$r.log" 2>&1 || rc=1
  fi
  "$tmp/copy_kernels" 1 >"$tmp/ck.csv" || rc=1
  if [ "$r" = 1 ]; then head -2 "$tmp/ck.csv" >>"$ck"; fi
  tail -n +3 "$tmp/ck.csv" | sed "s/^1,/$r,/" >>"$ck"
done
python3 - "$ck" "$out" <<'PY'
import csv, glob, sys
by = {}
for r in csv.reader(open(sys.argv[1])):
    if r and r[0].isdigit():
        by.setdefault(" ".join(x for x in r[1:4] if x), []).append(float(r[4]))
for f in sorted(glob.glob(sys.argv[2] + "/scan_round_*/warpspec_sweep.csv")):
    for r in csv.DictReader(open(f)):
        by.setdefault("sweep " + r["variant"], []).append(float(r["time_us_median"]))
for k, v in sorted(by.items(), key=lambda kv: min(kv[1])):
    print(f"{k:44s} {min(v):8.1f} {max(v):8.1f} us  ({len(v)} rounds)")
PY
exit $rc
