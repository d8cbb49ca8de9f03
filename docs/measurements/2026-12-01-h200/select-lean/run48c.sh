#!/usr/bin/env bash
# Session 48, third call. b2 (select without the index array: the elements compacted in
# registers into each warp's part of the tile; .gpu/b2/) after its select::gpu tests and a
# memcheck of three rows, against branch (the first step's leaner predicate and compaction
# loop, .gpu/branch/) and main (.gpu/main/) at 2^28, ours only, 2 interleaved rounds (the
# order rotating by round); then a copy of each b2 row's bytes (scripts/gpu/select_copy.py).
set -u
O=$OUT/r48c; mkdir -p $O
tar xJf .gpu/pack.tar.xz -C .gpu
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.max.mem --format=csv > $O/device.txt
echo "main: $(cat .gpu/main/COMMIT); branch: $(cat .gpu/branch/COMMIT); b2: $(cat .gpu/b2/COMMIT)" >> $O/device.txt
t0=$SECONDS
.gpu/b2/main --include-ignored select::gpu > $O/select_tests.log 2>&1; echo "tests exit $? in $((SECONDS-t0)) s" >> $O/select_tests.log
for row in "--op partition --type i32 --predicate lt:500" "--op unique --type u16 --run 3" "--op select --type f32 --predicate flags"; do
  echo "== $row" >> $O/sanitizer.log
  compute-sanitizer --tool memcheck .gpu/b2/reduce --backend gpu $row --n 1000003 --repeat 2 --format csv >> $O/sanitizer.log 2>&1
  echo "exit $?" >> $O/sanitizer.log
done
echo "checks done at $((SECONDS-t0)) s" >> $O/times.log
rows=("--op select --type i32 --predicate lt:500" "--op select --type i32 --predicate lt:10"
      "--op select --type i32 --predicate flags" "--op partition --type i32 --predicate lt:500"
      "--op partition --type f32 --predicate flags" "--op unique --type i32 --run 1"
      "--op unique --type i32 --run 16" "--op select --type u16 --predicate lt:500")
.gpu/main/reduce --backend gpu --repeat 1 --format csv --op select --n 64 | grep -v '^#' | head -1 | sed "s/^/variant,round,/" > $O/ab.csv
one() { # which round args...
  local w=$1 r=$2; shift 2; local s=$SECONDS
  .gpu/$w/reduce --backend gpu "$@" --n 268435456 --repeat 20 --format csv 2>>$O/stderr.log | grep -v '^#' | tail -1 | sed "s/^/$w,$r,/" >> $O/ab.csv
  echo "$w $r $* : $((SECONDS-s)) s" >> $O/times.log
}
for r in 1 2; do
  for row in "${rows[@]}"; do
    [ $((SECONDS-t0)) -gt 400 ] && { echo "stopped at round $r: time" >> $O/times.log; break 2; }
    case $r in
      1) one main $r $row; one branch $r $row; one b2 $r $row ;;
      2) one b2 $r $row; one main $r $row; one branch $r $row ;;
    esac
  done
done
echo "A/B done at $((SECONDS-t0)) s" >> $O/times.log
if [ $((SECONDS-t0)) -lt 470 ]; then
  timeout 60 python3 scripts/gpu/select_copy.py $O/ab.csv 2 20 b2 > $O/copy.csv 2>>$O/stderr.log
  echo "copy exit $? at $((SECONDS-t0)) s" >> $O/times.log
fi
echo "end at $((SECONDS-t0)) s" >> $O/times.log
cd $OUT && tar czf r48c.tgz r48c
