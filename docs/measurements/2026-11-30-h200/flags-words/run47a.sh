#!/usr/bin/env bash
# Session 47, first call. (1) branch exp/flags-words (select's FLAGGED step reading a thread's 28
# flags as 7 words; .gpu/branch/) against main (8f20c04, .gpu/main/) at 2^28, ours only,
# interleaved over 2 rounds (which goes first alternates by round), after the branch's
# select::gpu tests and a memcheck of its flags rows. (2) ncu of the rows 4096 x 4096 f32 sum,
# ours and CUB's DeviceSegmentedReduce in one process (--compare-cub), after one timed row.
# (3) ncu of run_length i32 run:16 and select i32 flags from 765f81e (.gpu/old/, before the
# plain 16-bit index stores) and main. Stops starting steps past their time guards.
set -u
O=$OUT/r47a; mkdir -p $O
tar xJf .gpu/pack.tar.xz -C .gpu
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.max.mem --format=csv > $O/device.txt
echo "main: $(cat .gpu/main/COMMIT); branch: $(cat .gpu/branch/COMMIT); old: $(cat .gpu/old/COMMIT)" >> $O/device.txt
t0=$SECONDS
.gpu/branch/main --include-ignored select::gpu > $O/select_tests.log 2>&1; echo "tests exit $? in $((SECONDS-t0)) s" >> $O/select_tests.log
for row in "--op select --type i32 --predicate flags" "--op partition --type u16 --predicate flags"; do
  echo "== $row" >> $O/sanitizer.log
  compute-sanitizer --tool memcheck .gpu/branch/reduce --backend gpu $row --n 1000003 --repeat 2 --format csv >> $O/sanitizer.log 2>&1
  echo "exit $?" >> $O/sanitizer.log
done
echo "checks done at $((SECONDS-t0)) s" >> $O/times.log
rows=("--op select --type i32 --predicate flags" "--op partition --type f32 --predicate flags"
      "--op select --type u8 --predicate flags" "--op partition --type u16 --predicate flags")
.gpu/main/reduce --backend gpu --repeat 1 --format csv --op select --n 64 | grep -v '^#' | head -1 | sed "s/^/variant,round,/" > $O/ab.csv
one() { # which round args...
  local w=$1 r=$2; shift 2; local s=$SECONDS
  .gpu/$w/reduce --backend gpu "$@" --n 268435456 --repeat 20 --format csv 2>>$O/stderr.log | grep -v '^#' | tail -1 | sed "s/^/$w,$r,/" >> $O/ab.csv
  echo "$w $r $* : $((SECONDS-s)) s" >> $O/times.log
}
for r in 1 2; do
  for row in "${rows[@]}"; do
    [ $((SECONDS-t0)) -gt 250 ] && { echo "stopped at round $r: time" >> $O/times.log; break 2; }
    if [ $r = 1 ]; then one main $r $row; one branch $r $row; else one branch $r $row; one main $r $row; fi
  done
done
echo "A/B done at $((SECONDS-t0)) s" >> $O/times.log
R="--op rows --rows 4096 --cols 4096 --type f32"
.gpu/main/reduce --backend gpu $R --repeat 20 --format csv --compare-cub > $O/rows.csv 2>>$O/stderr.log
echo "rows timed at $((SECONDS-t0)) s" >> $O/times.log
if [ $((SECONDS-t0)) -lt 400 ]; then
  timeout 120 ncu --set full -k regex:egmented -c 6 -f -o $O/rows .gpu/main/reduce --backend gpu $R --repeat 1 --compare-cub > $O/ncu_rows.log 2>&1
  echo "ncu rows exit $? at $((SECONDS-t0)) s" >> $O/times.log
fi
for w in old main; do
  [ $((SECONDS-t0)) -gt 500 ] && break
  timeout 45 ncu --set full -k regex:run_length__i32 -c 1 -f -o $O/rl16_$w .gpu/$w/reduce --backend gpu --op run_length --type i32 --run 16 --n 268435456 --repeat 1 > $O/ncu_rl16_$w.log 2>&1
  echo "ncu rl16 $w exit $? at $((SECONDS-t0)) s" >> $O/times.log
  [ $((SECONDS-t0)) -gt 520 ] && break
  timeout 45 ncu --set full -k regex:select__i32 -c 1 -f -o $O/selflags_$w .gpu/$w/reduce --backend gpu --op select --type i32 --predicate flags --n 268435456 --repeat 1 > $O/ncu_selflags_$w.log 2>&1
  echo "ncu selflags $w exit $? at $((SECONDS-t0)) s" >> $O/times.log
done
echo "end at $((SECONDS-t0)) s" >> $O/times.log
cd $OUT && tar czf r47a.tgz r47a
