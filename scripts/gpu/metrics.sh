#!/usr/bin/env bash
# Nsight Compute counters for every variant (docs/metrics.md), on a GPU host with ncu.
#
#   scripts/gpu/metrics.sh [REDUCE_BINARY]     default: .gpu/bin/reduce, else target/release/reduce
#
# For every reduction family (global, shared, modern, sumsq) at n = 2^24, block $BLOCK, and for
# the scans (--op scan --variant all) at n = 2^24, it runs
#   reduce --backend gpu --metrics --log2 24 --format csv ...
# which profiles each variant's timed run under ncu (a child run of reduce per row) and adds the
# counters as columns. Output: $OUT/metrics/{global,shared,modern,sumsq,scan}_2e24.csv and a
# .log (stderr) next to each, under ./metrics-logs/ when OUT is not set. Exit status 0 when
# every run exits 0, else the last non-zero status (2: no ncu, no counter permission).
#
# Environment: BLOCK (default 512), LOG2 (default 24), N (an n that is no power of two, e.g.
# 5242883: then `--n N` instead of `--log2`, and the files are {family}_nN.csv), FAMILIES
# (default "global shared modern sumsq scan": which of the runs to make), VARIANTS (a variant
# list for the reduction families, e.g. "recursive_reduce recursive_reduce_nosync": one run per
# variant instead of one per family, each into {family}_{variant}_…csv), NCU (the ncu to use;
# else PATH, /usr/local/cuda/bin/ncu, the newest /usr/local/cuda-*/bin/ncu), BACKEND (default
# gpu; `emulator` runs the same selection with the emulator's own counters instead of ncu, into
# emu_{family}_….csv: the other side of the agreement table, scripts/agreement.py; the emulator
# plays the committed GPU's SMs by default, so the grids that fill the device are the GPU's).
set -uo pipefail
cd "$(dirname "$0")/../.."
bin=${1:-}
if [ -z "$bin" ]; then
  if [ -x .gpu/bin/reduce ]; then bin=.gpu/bin/reduce; else bin=target/release/reduce; fi
fi
[ -x "$bin" ] || { echo "no reduce binary at $bin (build the bundle: ../shared/gpu/bundle)"; exit 2; }
out=${OUT:+$OUT/metrics}; out=${out:-metrics-logs}; mkdir -p "$out"
block=${BLOCK:-512}
log2=${LOG2:-24}
size=(--log2 "$log2"); suffix=2e$log2
if [ -n "${N:-}" ]; then size=(--n "$N"); suffix=n$N; fi
backend=${BACKEND:-gpu}
prefix=""; [ "$backend" = emulator ] && prefix=emu_
rc=0

run() {
  local name=$prefix$1; shift
  local file=$out/${name}_$suffix
  echo "== $name: $bin --backend $backend --metrics ${size[*]} --format csv $*"
  local start=$SECONDS
  "$bin" --backend "$backend" --metrics "${size[@]}" --format csv "$@" >"$file.csv" 2>"$file.log"
  local status=$?
  if [ $status -ne 0 ]; then rc=$status; echo "   exit $status: $(tail -1 "$file.log")"; fi
  echo "   $(($(wc -l <"$file.csv") - 1)) rows, $((SECONDS - start)) s"
}

for fam in ${FAMILIES:-global shared modern sumsq scan}; do
  if [ "$fam" = scan ]; then
    run scan --op scan --variant all
  elif [ -n "${VARIANTS:-}" ]; then
    for v in $VARIANTS; do run "${fam}_$v" --family "$fam" --variant "$v" --block "$block"; done
  else
    run "$fam" --family "$fam" --block "$block"
  fi
done
exit $rc
