#!/usr/bin/env bash
# Session 44 experiments: thread_fold_v128's partial trip loaded at once (reduce-exp) against
# HEAD (.gpu/bin/reduce), and a persistent loop over rows (RS_EXP_ROWS_GRID, reduce-exp only).
set -u
O=$OUT/exp; mkdir -p $O
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.max.mem --format=csv > $O/device.txt
echo "bundle commit: $(cat .gpu/COMMIT)" >> $O/device.txt
H=.gpu/bin/reduce; X=.gpu/extra/reduce-exp
one() { # label bin args...
  local label=$1 bin=$2; shift 2
  $bin --backend gpu --repeat 20 --format csv --compare-cub "$@" 2>>$O/stderr.log | tail -1 | sed "s/^/$label,$r,/" >> $O/exp.csv
}
$H --backend gpu --repeat 1 --format csv --op rows --rows 4 --cols 4 | head -1 | sed "s/^/label,round,/" > $O/exp.csv
for r in 1 2; do
  for b in 128 256 512 1024; do
    one rows4096_head_b$b $H --op rows --rows 4096 --cols 4096 --type f32 --block $b
    one rows4096_exp_b$b $X --op rows --rows 4096 --cols 4096 --type f32 --block $b
  done
  for b in 128 256; do for g in 528 1056 2112; do
    RS_EXP_ROWS_GRID=$g one rows4096_exp_b${b}_g$g $X --op rows --rows 4096 --cols 4096 --type f32 --block $b
  done; done
  for b in 256 512; do
    one seg1e4_head_b$b $H --op segmented --segments 10000 --log2 26 --type f32 --block $b
    one seg1e4_exp_b$b $X --op segmented --segments 10000 --log2 26 --type f32 --block $b
  done
  for s in 10 1000 100000 1000000; do
    one seg$s\_head $H --op segmented --segments $s --log2 26 --type f32
    one seg$s\_exp $X --op segmented --segments $s --log2 26 --type f32
  done
  for s in 1000 1000000; do
    one pow$s\_head $H --op segmented --segments $s --lengths power --log2 26 --type f32
    one pow$s\_exp $X --op segmented --segments $s --lengths power --log2 26 --type f32
  done
  one rows256_head $H --op rows --rows 65536 --cols 256 --type f32
  one rows256_exp $X --op rows --rows 65536 --cols 256 --type f32
  one rows4096argmax_head $H --op rows --rows 4096 --cols 4096 --type f32 --combine argmax
  one rows4096argmax_exp $X --op rows --rows 4096 --cols 4096 --type f32 --combine argmax
done
