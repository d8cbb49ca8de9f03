#!/usr/bin/env bash
# Session 43 sweep 2 (uncommitted experiment build: RS_EXP_TILE, RS_EXP_WARP_MAX).
set -u
B=.gpu/bin/reduce
out=$OUT/exp_seg2.csv; log=$OUT/exp_seg2.log
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
  R="--op rows --type f32 --rows 4096 --cols 4096"
  row r4096_b128 "" $R --block 128
  for l in 16 32; do for b in 128 256; do row "r4096_warp_l${l}_b$b" "RS_EXP_WARP_MAX=4096" $R --lanes $l --block $b; done; done
  row r4096_b64 "" $R --block 64
  row r4096_b32 "" $R --block 32
  for t in 8192 16384; do
    row "e10_t$t" "RS_EXP_TILE=$t" $S --segments 10
    row "p1e3_t$t" "RS_EXP_TILE=$t" $S --segments 1000 --lengths power
    row "e1e3_t$t" "RS_EXP_TILE=$t" $S --segments 1000
    row "e1e4_t$t" "RS_EXP_TILE=$t" $S --segments 10000
    row "p1e5_t$t" "RS_EXP_TILE=$t" $S --segments 100000 --lengths power
    row "p1e6_t$t" "RS_EXP_TILE=$t" $S --segments 1000000 --lengths power
    row "r8x2e6_t$t" "RS_EXP_TILE=$t" --op rows --type f32 --rows 32 --cols 2097152
  done
  row "e1e6_i64_auto" "" --op segmented --type f64 --log2 26 --segments 1000000
done
echo "done $(date +%T)" >>$log
