#!/usr/bin/env bash
# Session 48, fourth call. (1) b2 fixed (exp/select-warp-part: the edge read after the copies;
# .gpu/b2/): its select::gpu tests, then b2 against branch (exp/select-lean, .gpu/branch/) at
# 2^28, ours only, one round of six rows, b2 first. (2) The branch's figures with CUB in every
# row: scripts/gpu/select.sh's three sets, one round, no PyTorch (its rows do not change with
# ours). (3) One typed scan row with the branch's command line (which carries 350bbc1's kept
# download buffer), its wall time. Stops starting steps past their time guards.
set -u
O=$OUT/r48d; mkdir -p $O
tar xJf .gpu/pack.tar.xz -C .gpu
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.max.mem --format=csv > $O/device.txt
echo "branch: $(cat .gpu/branch/COMMIT); b2: $(cat .gpu/b2/COMMIT)" >> $O/device.txt
t0=$SECONDS
.gpu/b2/main --include-ignored select::gpu > $O/b2_tests.log 2>&1; echo "tests exit $? in $((SECONDS-t0)) s" >> $O/b2_tests.log
.gpu/branch/reduce --backend gpu --repeat 1 --format csv --op select --n 64 | grep -v '^#' | head -1 | sed "s/^/variant,round,/" > $O/ab.csv
one() { # which args...
  local w=$1; shift; local s=$SECONDS
  .gpu/$w/reduce --backend gpu "$@" --n 268435456 --repeat 20 --format csv 2>>$O/stderr.log | grep -v '^#' | tail -1 | sed "s/^/$w,1,/" >> $O/ab.csv
  echo "$w $* : $((SECONDS-s)) s" >> $O/times.log
}
if grep -q "6 passed" $O/b2_tests.log; then
  for row in "--op select --type i32 --predicate lt:500" "--op select --type i32 --predicate lt:10" \
             "--op select --type u16 --predicate lt:500" "--op unique --type i32 --run 16" \
             "--op select --type i32 --predicate flags" "--op partition --type i32 --predicate lt:500"; do
    [ $((SECONDS-t0)) -gt 160 ] && break
    one b2 $row; one branch $row
  done
fi
echo "A/B done at $((SECONDS-t0)) s" >> $O/times.log
for set in select narrow run_length; do
  [ $((SECONDS-t0)) -gt 330 ] && { echo "skipped $set: time" >> $O/times.log; continue; }
  s=$SECONDS
  OUT=$O ROUNDS=1 PYTHON=true REDUCE=.gpu/branch/reduce bash scripts/gpu/select.sh $set > $O/$set.log 2>&1
  echo "set $set exit $? in $((SECONDS-s)) s" >> $O/times.log
done
if [ $((SECONDS-t0)) -lt 470 ]; then
  s=$SECONDS
  .gpu/branch/reduce --backend gpu --op scan --variant lookback --type i32 --combine sum --n 268435456 --format csv > $O/scan.csv 2>>$O/stderr.log
  echo "scan exit $? in $((SECONDS-s)) s" >> $O/times.log
fi
echo "end at $((SECONDS-t0)) s" >> $O/times.log
rm -f $O/select_torch.csv $O/run_length_torch.csv
cd $OUT && tar czf r48d.tgz r48d
