#!/usr/bin/env bash
# Session 49: select's look-back reading 2 or 4 windows of 32 predecessors a round trip
# (exp/select-windows, SELECT_LOOKBACK_WINDOWS = 2 and 4: w2, w4) against main (one window),
# after ncu's source page of main's select__i32 (r49a) put 47 % of the warps' stall samples at
# the barrier after warp 0's look-back, whose 37,449 look-backs read 67,988 windows. At 2^28,
# ours only, interleaved rounds (the order rotates by round). Stops starting rounds past its
# time guard; then a memcheck of w2 on two rows.
set -u
O=$OUT/r49c; mkdir -p $O
mkdir -p .gpu/c && tar xJf .gpu/packC.tar.xz -C .gpu/c
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.max.mem --format=csv > $O/device.txt
for w in main w2 w4; do echo "$w: $(cat .gpu/c/$w/COMMIT)" >> $O/device.txt; done
t0=$SECONDS
rows=("--op select --type i32 --predicate lt:500" "--op select --type i32 --predicate lt:10"
      "--op select --type f32 --predicate lt:500" "--op unique --type i32 --run 16"
      "--op unique --type i32 --run 1" "--op select --type i32 --predicate flags"
      "--op partition --type i32 --predicate lt:500")
.gpu/c/main/reduce --backend gpu --repeat 1 --format csv --op select --n 64 | grep -v '^#' | head -1 | sed "s/^/variant,round,/" > $O/ab.csv
# the first launch of each build JIT-compiles its PTX: one small run each, untimed
for w in main w2 w4; do .gpu/c/$w/reduce --backend gpu --op select --n 1000 --repeat 1 > /dev/null 2>&1; done
echo "warm at $((SECONDS-t0)) s" >> $O/times.log
one() { # which round args...
  local w=$1 r=$2; shift 2; local s=$SECONDS
  .gpu/c/$w/reduce --backend gpu "$@" --n 268435456 --repeat 20 --format csv 2>>$O/stderr.log | grep -v '^#' | tail -1 | sed "s/^/$w,$r,/" >> $O/ab.csv
  echo "$w $r $* : $((SECONDS-s)) s" >> $O/times.log
}
orders=("main w2 w4" "w4 w2 main" "w2 main w4")
for r in 1 2 3; do
  [ $((SECONDS-t0)) -gt 330 ] && { echo "stopped before round $r: time" >> $O/times.log; break; }
  for row in "${rows[@]}"; do
    for w in ${orders[$((r-1))]}; do one $w $r $row; done
  done
done
echo "A/B done at $((SECONDS-t0)) s" >> $O/times.log
for row in "--op select --type i32 --predicate lt:10" "--op partition --type f32 --predicate flags"; do
  [ $((SECONDS-t0)) -gt 520 ] && break
  echo "== $row" >> $O/sanitizer.log
  timeout 60 compute-sanitizer --tool memcheck .gpu/c/w2/reduce --backend gpu $row --n 1000003 --repeat 2 --format csv >> $O/sanitizer.log 2>&1
  echo "exit $?" >> $O/sanitizer.log
done
echo "end at $((SECONDS-t0)) s" >> $O/times.log
cd $OUT && tar czf r49c.tgz r49c
