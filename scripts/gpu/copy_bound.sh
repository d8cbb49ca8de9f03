#!/usr/bin/env bash
# Issue 37's arithmetic of the bound, in CUDA C beside the Rust kernels (scripts/gpu/explore/):
#   loaded_latency.cu  the latency of one DRAM load, alone and while a copy keeps DRAM busy, and
#                      by Little's law the bytes an SM keeps loading at that copy's rate
#   copy_kernels.cu    copy kernels of several shapes (grid-stride loads and stores, and the
#                      bulk-copy engine through a ring in shared memory) against the runtime's
#                      device-to-device cudaMemcpy (the scan's yardstick), at 2^28 int32
#   scan_steps.cu      the Rust scan's block in CUDA C, built up from its data path (a copy) a
#                      step at a time to the whole scan: what each step adds to the time
#
#   scripts/gpu/copy_bound.sh   -> $OUT/loaded_latency.csv (round,what,value,unit),
#                                  $OUT/copy_kernels.csv, $OUT/scan_steps.csv, and with
#                                  SCAN_VARIANTS also $OUT/scan_round_<r>/
#                                  (scripts/gpu/warpspec_sweep.sh's files)
#
# ROUNDS (default 3) rounds. PROGRAMS (default "loaded_latency copy_kernels scan_steps") picks
# which of the three run. With SCAN_VARIANTS (a comma list, e.g.
# "lookback,lookback_warpspec_8x12x6"), each round first runs one round of warpspec_sweep.sh at
# 2^28 (those scans, the copy and CUB), then one of copy_kernels and one of scan_steps: the scans
# and the CUDA C kernels are interleaved on the same machine. Needs nvcc (the GPU machine's CUDA
# toolkit); the binaries are built in a private temporary folder.
set -uo pipefail
set -f  # PROGRAMS is split on spaces, never globbed
cd "$(dirname "$0")/../.."
rounds=${ROUNDS:-3}
case $rounds in ''|*[!0-9]*|0*) echo "copy_bound.sh: ROUNDS must be a whole number ≥ 1, not '$rounds'" >&2; exit 2;; esac
programs=${PROGRAMS:-loaded_latency copy_kernels scan_steps}
for p in $programs; do
  case $p in loaded_latency|copy_kernels|scan_steps) ;;
    *) echo "copy_bound.sh: PROGRAMS holds loaded_latency, copy_kernels or scan_steps, not '$p'" >&2; exit 2;; esac
done
[ -n "${programs// /}" ] || { echo "copy_bound.sh: PROGRAMS names none of loaded_latency, copy_kernels, scan_steps" >&2; exit 2; }
has() { case " $programs " in *" $1 "*) return 0;; *) return 1;; esac; }
nvcc=$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)
[ -x "$nvcc" ] || { echo "copy_bound.sh: no nvcc (the CUDA toolkit) on this machine" >&2; exit 2; }
out=${OUT:-.}; mkdir -p "$out"
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
for p in $programs; do
  "$nvcc" -O3 -arch=sm_90 -std=c++17 -o "$tmp/$p" "scripts/gpu/explore/$p.cu" || exit 1
done
rc=0
if has loaded_latency; then
  csv=$out/loaded_latency.csv
  echo "round,what,value,unit" >"$csv"
  for r in $(seq 1 "$rounds"); do
    "$tmp/loaded_latency" >"$tmp/run.csv" || rc=1
    tail -n +2 "$tmp/run.csv" | sed "s/^/$r,/" >>"$csv"
  done
  grep -E "latency|copy_during|memcpy|in_flight|covered" "$csv"
fi
# One round of program $1, its rows renumbered as round $2, appended to $out/$1.csv (whose
# first two lines, device and header, come from round 1).
round_of() {
  "$tmp/$1" 1 >"$tmp/$1.round.csv" || rc=1
  if [ "$2" = 1 ]; then head -2 "$tmp/$1.round.csv" >"$out/$1.csv"; fi
  tail -n +3 "$tmp/$1.round.csv" | sed "s/^1,/$2,/" >>"$out/$1.csv"
}
for r in $(seq 1 "$rounds"); do
  if [ -n "${SCAN_VARIANTS:-}" ]; then
    ROUNDS=1 SIZES=268435456 VARIANTS=$SCAN_VARIANTS OUT=$out/scan_round_$r scripts/gpu/warpspec_sweep.sh \
      >"$out/scan_round_$r.log" 2>&1 || rc=1
  fi
  for p in copy_kernels scan_steps; do
    if has $p; then round_of $p "$r"; fi
  done
done
scripts/gpu/copy_bound_summary.py "$out" || rc=1
exit $rc
