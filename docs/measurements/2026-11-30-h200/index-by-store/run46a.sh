#!/usr/bin/env bash
# Session 46, first call: branch exp/index-by-store-2 (the compaction's indices as plain 16-bit
# shared stores, no zeroing; .gpu/branch/) against main (765f81e, .gpu/main/), interleaved at
# 2^28, ours only (CUB's figures come from the rows' own calls later): tests/main.rs's
# select::gpu on the branch, a memcheck of two branch rows, then per round every row from main
# and from the branch in turn (which goes first alternates by round); then the two scans whose
# PTX the branch's device-layer change moves. Stops starting rows at 480 s.
set -u
O=$OUT/ab; mkdir -p $O
tar xJf .gpu/pack.tar.xz -C .gpu
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.max.mem --format=csv > $O/device.txt
echo "main: $(cat .gpu/main/COMMIT); branch: $(cat .gpu/branch/COMMIT)" >> $O/device.txt
t0=$SECONDS
.gpu/branch/main --include-ignored select::gpu > $O/select_tests.log 2>&1; echo "tests exit $? in $((SECONDS-t0)) s" >> $O/select_tests.log
for row in "--op select --type i32 --predicate lt:500" "--op run_length --type u16 --run 3"; do
  echo "== $row" >> $O/sanitizer.log
  compute-sanitizer --tool memcheck .gpu/branch/reduce --backend gpu $row --n 1000003 --repeat 2 --format csv >> $O/sanitizer.log 2>&1
  echo "exit $?" >> $O/sanitizer.log
done
echo "checks done at $((SECONDS-t0)) s" >> $O/times.log
rows=("--op select --type i32 --predicate lt:500" "--op select --type f32 --predicate lt:10"
      "--op select --type i32 --predicate flags" "--op partition --type i32 --predicate lt:500"
      "--op unique --type i32 --run 1" "--op run_length --type i32 --run 16"
      "--op select --type u8 --predicate lt:128" "--op select --type u16 --predicate lt:500"
      "--op partition --type u8 --predicate lt:128" "--op run_length --type u16 --run 1")
.gpu/main/reduce --backend gpu --repeat 1 --format csv --op select --n 64 | grep -v '^#' | head -1 | sed "s/^/variant,round,/" > $O/ab.csv
one() { # which round args...
  local w=$1 r=$2; shift 2; local s=$SECONDS
  .gpu/$w/reduce --backend gpu "$@" --n 268435456 --repeat 20 --format csv 2>>$O/stderr.log | grep -v '^#' | tail -1 | sed "s/^/$w,$r,/" >> $O/ab.csv
  echo "$w $r $* : $((SECONDS-s)) s" >> $O/times.log
}
for r in 1 2; do
  for row in "${rows[@]}"; do
    [ $((SECONDS-t0)) -gt 480 ] && { echo "stopped at round $r: time" >> $O/times.log; break 2; }
    if [ $r = 1 ]; then one main $r $row; one branch $r $row; else one branch $r $row; one main $r $row; fi
  done
done
for w in main branch branch main; do
  [ $((SECONDS-t0)) -gt 540 ] && break
  .gpu/$w/reduce --backend gpu --op scan --variant lookback_persistent --n 268435456 --format csv 2>>$O/stderr.log | grep -v '^#' | sed "s/^/$w,/" >> $O/scan.csv
  .gpu/$w/reduce --backend gpu --op scan --type i64 --variant lookback_warpspec_8x12x6 --n 134217728 --format csv 2>>$O/stderr.log | grep -v '^#' | sed "s/^/$w,/" >> $O/scan.csv
done
echo "end at $((SECONDS-t0)) s" >> $O/times.log
cd $OUT && tar czf ab.tgz ab
