#!/usr/bin/env bash
# Time to answer on a GPU host: a loop of synchronous sums as a user calls them, ours
# (examples/time_to_answer.rs, the bundle's .gpu/bin/time_to_answer) against CUB's
# DeviceReduce::Sum followed by cudaMemcpy of its result (cub/wall.cu, built here with nvcc),
# and, when .gpu/bin/time_to_answer_before exists, the same example built at an earlier commit.
# Ours runs four times: `ours` (the library's way: the sum's last block publishes the answer
# into mapped host memory, the host spinning on a flag, and a call that repeats the last one's
# shape is a CUDA graph), `ours_in_kernel` (REDUCE_SCAN_ANSWER=in-kernel: the same without
# graphs), `ours_launch` (REDUCE_SCAN_ANSWER=launch: a second, one-thread launch publishes it)
# and `ours_copy` (REDUCE_SCAN_ANSWER=copy: an asynchronous copy into page-locked memory, then a
# stream synchronisation). Each round also
# runs cub/answer_floor.cu (the same ways with kernels that do nothing, and a CUDA graph) into
# answer_floor.csv.
# ROUNDS rounds (default 5), the implementations alternating within each round, CALLS calls per
# row (default 300), at SIZES (default "20 22 24 26 28"). Writes time_to_answer.csv (and the
# nvcc log) to $OUT, else to the current directory.
set -euo pipefail
out=${OUT:-.}
rounds=${ROUNDS:-5}; calls=${CALLS:-300}; sizes=${SIZES:-20 22 24 26 28}
arch=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader | head -1 | tr -d .)
# The two C++ programs are built into a private folder (mktemp -d: a random name, mode 0700),
# never under a name another user of the host could plant first.
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
nvcc -O3 -std=c++17 -arch="sm_$arch" -o "$tmp/cub_wall" cub/wall.cu >"$out/wall_nvcc.log" 2>&1
nvcc -O3 -std=c++17 -arch="sm_$arch" -o "$tmp/answer_floor" cub/answer_floor.cu >>"$out/wall_nvcc.log" 2>&1
floor=$out/answer_floor.csv
echo "way,round,wall_us_median,wall_us_min" >"$floor"
csv=$out/time_to_answer.csv
echo "impl,round,n,wall_us_median,wall_us_min,enqueue_us_median,device_us_median" >"$csv"
for r in $(seq 1 "$rounds"); do
  "$tmp/answer_floor" "$calls" "$r" | tail -n +2 >>"$floor"
  for impl in ours ours_in_kernel ours_launch ours_copy before cub; do
    export REDUCE_SCAN_ANSWER=graph
    case $impl in
      ours) bin=.gpu/bin/time_to_answer ;;
      ours_in_kernel) bin=.gpu/bin/time_to_answer; export REDUCE_SCAN_ANSWER=in-kernel ;;
      ours_launch) bin=.gpu/bin/time_to_answer; export REDUCE_SCAN_ANSWER=launch ;;
      ours_copy) bin=.gpu/bin/time_to_answer; export REDUCE_SCAN_ANSWER=copy ;;
      before) bin=.gpu/bin/time_to_answer_before ;;
      cub) bin=$tmp/cub_wall ;;
    esac
    [ -x "$bin" ] || continue
    # shellcheck disable=SC2086
    if [ "$impl" = cub ]; then "$bin" "$calls" "$r" $sizes; else "$bin" --calls "$calls" --rounds 1 $sizes | tail -n +2 | sed "s/^1,/$r,/"; fi \
      | sed "s/^/$impl,/" >>"$csv"
  done
done
cat "$csv" "$floor"
