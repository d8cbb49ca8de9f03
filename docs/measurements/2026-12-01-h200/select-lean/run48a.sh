#!/usr/bin/env bash
# Session 48, first call. Branch exp/select-lean (select's and run_length's predicate, live mask
# and compaction with fewer instructions; .gpu/branch/) against main (its select__*/run_length__*
# PTX, .gpu/main/, built at 1d3587b) at 2^28, ours only, 2 interleaved rounds (which goes first
# alternates by round), after the branch's select::gpu tests and a memcheck of four rows; then a
# device-to-device copy of each row's bytes (scripts/gpu/select_copy.py) for the branch's rows.
# Stops starting steps past their time guards.
set -u
O=$OUT/r48a; mkdir -p $O
tar xJf .gpu/pack.tar.xz -C .gpu
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.max.mem --format=csv > $O/device.txt
echo "main: $(cat .gpu/main/COMMIT); branch: $(cat .gpu/branch/COMMIT)" >> $O/device.txt
t0=$SECONDS
.gpu/branch/main --include-ignored select::gpu > $O/select_tests.log 2>&1; echo "tests exit $? in $((SECONDS-t0)) s" >> $O/select_tests.log
for row in "--op select --type i32 --predicate lt:500" "--op partition --type f32 --predicate flags" \
           "--op unique --type u16 --run 3" "--op run_length --type i32 --run 3"; do
  echo "== $row" >> $O/sanitizer.log
  compute-sanitizer --tool memcheck .gpu/branch/reduce --backend gpu $row --n 1000003 --repeat 2 --format csv >> $O/sanitizer.log 2>&1
  echo "exit $?" >> $O/sanitizer.log
done
echo "checks done at $((SECONDS-t0)) s" >> $O/times.log
rows=("--op select --type i32 --predicate lt:500" "--op select --type i32 --predicate lt:10"
      "--op select --type f32 --predicate lt:500" "--op select --type f32 --predicate lt:10"
      "--op select --type i32 --predicate flags" "--op partition --type i32 --predicate lt:500"
      "--op partition --type f32 --predicate flags" "--op unique --type i32 --run 1"
      "--op unique --type i32 --run 16" "--op run_length --type i32 --run 16"
      "--op run_length --type u16 --run 1" "--op select --type u8 --predicate lt:128"
      "--op select --type u16 --predicate lt:500" "--op partition --type u8 --predicate lt:128")
.gpu/main/reduce --backend gpu --repeat 1 --format csv --op select --n 64 | grep -v '^#' | head -1 | sed "s/^/variant,round,/" > $O/ab.csv
one() { # which round args...
  local w=$1 r=$2; shift 2; local s=$SECONDS
  .gpu/$w/reduce --backend gpu "$@" --n 268435456 --repeat 20 --format csv 2>>$O/stderr.log | grep -v '^#' | tail -1 | sed "s/^/$w,$r,/" >> $O/ab.csv
  echo "$w $r $* : $((SECONDS-s)) s" >> $O/times.log
}
for r in 1 2; do
  for row in "${rows[@]}"; do
    [ $((SECONDS-t0)) -gt 380 ] && { echo "stopped at round $r: time" >> $O/times.log; break 2; }
    if [ $r = 1 ]; then one main $r $row; one branch $r $row; else one branch $r $row; one main $r $row; fi
  done
done
echo "A/B done at $((SECONDS-t0)) s" >> $O/times.log
if [ $((SECONDS-t0)) -lt 480 ]; then
  timeout 90 python3 scripts/gpu/select_copy.py $O/ab.csv 2 20 branch > $O/copy.csv 2>>$O/stderr.log
  echo "copy exit $? at $((SECONDS-t0)) s" >> $O/times.log
fi
echo "end at $((SECONDS-t0)) s" >> $O/times.log
cd $OUT && tar czf r48a.tgz r48a
