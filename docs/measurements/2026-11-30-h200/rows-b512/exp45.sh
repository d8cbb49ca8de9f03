#!/usr/bin/env bash
# Session 45, first call: the rows 4096 x 4096 and 10^4-segment plans at other block sizes with the
# committed last trip (8c471ff), interleaved over 2 rounds, CUB in the same process.
set -u
O=$OUT/b512; mkdir -p $O
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.max.mem --format=csv > $O/device.txt
echo "bundle: $(cat .gpu/COMMIT)" >> $O/device.txt
H=.gpu/bin/reduce
one() { # label args...
  local label=$1; shift
  $H --backend gpu --repeat 20 --format csv --compare-cub "$@" 2>>$O/stderr.log | tail -1 | sed "s/^/$label,$r,/" >> $O/exp.csv
}
$H --backend gpu --repeat 1 --format csv --op rows --rows 4 --cols 4 | head -1 | sed "s/^/label,round,/" > $O/exp.csv
for r in 1 2; do
  for b in 128 256 512; do
    one rows4096_b$b --op rows --rows 4096 --cols 4096 --type f32 --block $b
    one rows4096argmax_b$b --op rows --rows 4096 --cols 4096 --type f32 --combine argmax --block $b
  done
  for b in 256 512; do
    one seg1e4min_b$b --op segmented --segments 10000 --log2 26 --type f32 --combine min --block $b
    one seg1e4max_b$b --op segmented --segments 10000 --log2 26 --type f32 --combine max --block $b
    one seg1e4_b$b --op segmented --segments 10000 --log2 26 --type f32 --block $b
  done
  one rows2048_b256 --op rows --rows 8192 --cols 2048 --type f32 --block 256
  one rows2048_b512 --op rows --rows 8192 --cols 2048 --type f32 --block 512
  one rows8192_b256 --op rows --rows 2048 --cols 8192 --type f32 --block 256
  one rows8192_b512 --op rows --rows 2048 --cols 8192 --type f32 --block 512
done
cd $OUT && tar czf b512.tgz b512
