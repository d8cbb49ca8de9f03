#!/usr/bin/env bash
# Session 43 sweep (uncommitted experiment build: RS_EXP_TILE overrides the tiles' TILE).
set -u
B=.gpu/bin/reduce
out=$OUT/exp_seg.csv; log=$OUT/exp_seg.log
nvidia-smi --query-gpu=name,clocks.max.sm,clocks.max.mem --format=csv > $OUT/device.txt
first=1
row() { # label, env, args...
  local label=$1 envs=$2; shift 2
  env $envs $B --backend gpu --repeat 20 --format csv --compare-cub "$@" > /tmp/r.csv 2>>$log || echo "FAILED $label $*" >>$log
  if [ $first = 1 ]; then echo "round,label,$(head -1 /tmp/r.csv)" > $out; first=0; fi
  tail -n +2 /tmp/r.csv | sed "s/^/$round,$label,/" >> $out
}
for round in 1 2; do
  echo "round $round $(date +%T)" >>$log
  S="--op segmented --type f32 --log2 26"
  for l in 4 8 16 32; do row "e1e6_l$l" "" $S --segments 1000000 --lanes $l; done
  row "e1e6_l4_b128" "" $S --segments 1000000 --lanes 4 --block 128
  row "e1e6_l4_b512" "" $S --segments 1000000 --lanes 4 --block 512
  for l in 8 16 32; do row "e1e5_l$l" "" $S --segments 100000 --lanes $l; done
  row "p1e6_auto" "" $S --segments 1000000 --lengths power
  row "p1e6_l32" "" $S --segments 1000000 --lengths power --lanes 32
  for l in 4 8 16 32; do row "r65536x256_l$l" "" --op rows --type f32 --rows 65536 --cols 256 --lanes $l; done
  for t in 4096 8192 16384 32768; do for b in 256 512; do row "e1e3_t${t}_b$b" "RS_EXP_TILE=$t" $S --segments 1000 --block $b; done; done
  row "e1e3_t16384_b1024" "RS_EXP_TILE=16384" $S --segments 1000 --block 1024
  row "e1e3_t32768_b1024" "RS_EXP_TILE=32768" $S --segments 1000 --block 1024
  for b in 128 256 512 1024; do row "r4096_t8192_b$b" "" --op rows --type f32 --rows 4096 --cols 4096 --block $b; done
  for b in 256 512; do row "r4096_t2048_b$b" "RS_EXP_TILE=2048" --op rows --type f32 --rows 4096 --cols 4096 --block $b; done
  row "r4096_t1024_b256" "RS_EXP_TILE=1024" --op rows --type f32 --rows 4096 --cols 4096 --block 256
  row "e10" "" $S --segments 10
  row "p1e3" "" $S --segments 1000 --lengths power
done
echo "done $(date +%T)" >>$log
