#!/usr/bin/env bash
# Chapter 3's nested reduction (dynamic parallelism, issue #23) on a GPU host, from the bundle
# in .gpu/ (run from the repository root).
#
#   scripts/gpu/nested.sh [STEP…]      steps: probe limits tests rows memcheck (default: all)
#
# Writes to $OUT/nested/ (default ./nested/):
# * probe.txt: the device-runtime symbols libcudadevrt.a defines, and the ones nvcc's own PTX
#   calls for a device-side launch (what kernels::device::launch declares must match);
# * limits.txt: the pending-launch limits the driver grants when asked for more (and the free
#   memory after each), which bounds the per-block nested grids;
# * tests.log: the GPU tests of the three nested variants (every block, the emulator's sizes
#   and 2^24);
# * nested.csv: `reduce --compare-c` rows (every run checked, Rust and C) for `interleaved` and
#   the three nested variants (VARIANTS) at each n:block of CONFIGS (default 2^20 + 7 and 2^24,
#   blocks 128 and 512), in ROUNDS rounds (default 3) with the variants alternating in each
#   round, REPEAT runs per row (default 10);
# * memcheck_*.log: compute-sanitizer's memcheck on each nested variant (n = 2^20 + 7, block 512).
# Exit status 0 when every step passed.
set -uo pipefail
cd "$(dirname "$0")/../.."
out=${OUT:-.}/nested; mkdir -p "$out"
bin=.gpu/bin/reduce
rounds=${ROUNDS:-3}; repeat=${REPEAT:-10}
nested=${VARIANTS:-recursive_reduce recursive_reduce_nosync recursive_reduce2}
configs=${CONFIGS:-1048583:128 1048583:512 16777216:128 16777216:512}
cuda=$(dirname "$(dirname "$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)")")
steps=${*:-probe limits tests rows memcheck}
for s in $steps; do
  case $s in probe | limits | tests | rows | memcheck) ;; *) echo "nested.sh: no step \`$s\`; the steps are: probe limits tests rows memcheck"; exit 2 ;; esac
done
want() { [[ " $steps " == *" $1 "* ]]; }
cc=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null | head -1 | tr -d .)
[ -n "$cc" ] || { echo "nested.sh: nvidia-smi gives no compute capability: run this on a GPU host"; exit 2; }
arch=sm_$cc
rc=0
# The probes are built into a private folder (mktemp -d: a random name, mode 0700), never under a
# name another user of the host could plant first.
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT

want probe && {
  echo "== $cuda/lib64/libcudadevrt.a: device-launch symbols"
  if command -v nm >/dev/null; then
    nm -A "$cuda/lib64/libcudadevrt.a" | grep -iE "ParameterBuffer|LaunchDevice" | awk '{print $(NF-1), $NF}' | sort -u
  else
    echo "(no nm on this host)"
  fi
  echo "== nvcc -rdc=true -ptx -arch=$arch: what a device-side launch calls"
  printf '%s\n' '__global__ void child(int* p) { p[threadIdx.x] = 1; }' \
    '__global__ void parent(int* p) { if (threadIdx.x == 0) child<<<1, 32, 0, cudaStreamTailLaunch>>>(p); }' \
    >"$tmp/nested_probe.cu"
  nvcc -rdc=true -ptx -arch="$arch" -o "$tmp/nested_probe.ptx" "$tmp/nested_probe.cu" \
    && grep -E "\.extern|call" "$tmp/nested_probe.ptx"
} >"$out/probe.txt" 2>&1 || rc=1

if want limits; then
  cat >"$tmp/nested_limits.cu" <<'CU'
#include <cstdio>
#include <cuda_runtime.h>
int main() {
  const size_t asks[] = {2048, 32793, 262168, 524312, 786456, 1048600, 2097176, 4194328};
  for (size_t ask : asks) {
    cudaError_t e = cudaDeviceSetLimit(cudaLimitDevRuntimePendingLaunchCount, ask);
    size_t got = 0, free_b = 0, total = 0;
    cudaDeviceGetLimit(&got, cudaLimitDevRuntimePendingLaunchCount);
    cudaMemGetInfo(&free_b, &total);
    std::printf("asked %zu set=%s granted %zu free_mib %zu\n", ask, cudaGetErrorString(e), got, free_b >> 20);
  }
  return 0;
}
CU
  { nvcc -arch="$arch" -o "$tmp/nested_limits" "$tmp/nested_limits.cu" && "$tmp/nested_limits"; } >"$out/limits.txt" 2>&1 || rc=1
  cat "$out/limits.txt"
fi

if want tests; then
  t=$(ls -t .gpu/tests/main-* 2>/dev/null | head -1)
  if [ -z "$t" ]; then
    echo "nested.sh: no test binary in .gpu/tests (build the bundle: ../shared/gpu/bundle)"; rc=1
  else
    timeout 400 "$t" gpu::recursive --include-ignored >"$out/tests.log" 2>&1 || rc=1
  fi
  tail -3 "$out/tests.log"
fi

csv=$out/nested.csv
want rows && : >"$csv" && : >"$out/rows.log"
want rows && for r in $(seq 1 "$rounds"); do
  for c in $configs; do
    n=${c%:*}; b=${c#*:}
    for v in interleaved $nested; do
        timeout 300 "$bin" --backend gpu --variant "$v" --n "$n" --block "$b" --repeat "$repeat" --format csv \
          --compare-c >"$out/row.csv" 2>>"$out/rows.log" || { rc=1; echo "FAILED $v n=$n block=$b" >>"$out/rows.log"; }
        if [ ! -s "$csv" ]; then head -1 "$out/row.csv" | sed 's/^/round,/' >"$csv"; fi
        tail -n +2 "$out/row.csv" | sed "s/^/$r,/" >>"$csv"
    done
  done
done
rm -f "$out/row.csv"

want memcheck && for v in $nested; do
  timeout 200 compute-sanitizer --tool memcheck --error-exitcode 3 "$bin" --backend gpu --variant "$v" \
    --n 1048583 --block 512 --repeat 1 >"$out/memcheck_$v.log" 2>&1 || rc=1
  echo "memcheck $v: $(grep -E 'ERROR SUMMARY' "$out/memcheck_$v.log" | tail -1)"
done
exit $rc
