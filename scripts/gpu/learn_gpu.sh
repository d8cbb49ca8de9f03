#!/usr/bin/env bash
# `./x learn N --gpu` on a GPU host (issue #27): the learner's kernel timed on the GPU beside the
# project's figure and, where ncu is, Nsight Compute's counters beside the emulator's.
#
#   scripts/gpu/learn_gpu.sh [N…]      (default: 1 2 8 13 14 19 20 21 22 23 24 25 26 27)
#
# Needs .gpu/bin/learn built here with the learner's PTX (the bundle's `learn` has none):
#   REDUCE_SCAN_NO_PTX=1 LEARN_GPU=1 cargo build --release -p reduce-scan-learn && cp target/release/learn .gpu/bin/
# Writes $OUT/learn/learn-gpu.txt (default ./learn/). Exit status 0 when every run gave its
# answer (0 passed, 1 not yet); 2 or more is a failure.
set -uo pipefail
cd "$(dirname "$0")/../.."
out=${OUT:-.}/learn; mkdir -p "$out"
bin=.gpu/bin/learn
[ -x "$bin" ] || { echo "learn_gpu.sh: no $bin (see the comment at the top)"; exit 2; }
ncu=$(command -v ncu || ls /usr/local/cuda/bin/ncu 2>/dev/null || true)
[ -n "$ncu" ] && export NCU=$ncu
rc=0
{
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  echo "ncu: ${NCU:-none}"
  for n in ${*:-1 2 8 13 14 19 20 21 22 23 24 25 26 27}; do
    echo "=== learn $n --gpu"
    timeout 120 "$bin" "$n" --gpu
    code=$?
    echo "rc=$code"
    [ "$code" -le 1 ] || rc=1
  done
} >"$out/learn-gpu.txt" 2>&1
tail -40 "$out/learn-gpu.txt"
exit $rc
