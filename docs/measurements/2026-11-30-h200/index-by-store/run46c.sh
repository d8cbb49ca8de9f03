#!/usr/bin/env bash
# Session 46, third call (the device time left: 501 s): the rows of scripts/gpu/select.sh's
# compaction and run-length sets that the second call did not reach, from the branch
# (.gpu/branch/), CUB in every row, one round, no PyTorch (its rows do not run our code); the
# same command per row as select.sh. Stops starting rows at 360 s.
set -u
O=$OUT/c; mkdir -p $O
tar xJf .gpu/pack.tar.xz -C .gpu
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.max.mem --format=csv > $O/device.txt
echo "branch: $(cat .gpu/branch/COMMIT)" >> $O/device.txt
t0=$SECONDS
one() { # csv args...
  local csv=$1; shift; local s=$SECONDS
  line=$(.gpu/branch/reduce "$@" --n 268435456 --repeat 20 --compare-cub --format csv 2>>$O/stderr.log | grep -v '^#')
  [ -s "$csv" ] || printf 'round,%s\n' "$(head -1 <<<"$line")" >> "$csv"
  tail -n +2 <<<"$line" | sed "s/^/1,/" >> "$csv"
  echo "$* : $((SECONDS-s)) s" >> $O/stderr.log
}
rows=(
  "r --op run_length --type i32 --run 16" "s --op unique --type i32 --run 1"
  "s --op partition --type i32 --predicate lt:500" "s --op select --type i32 --predicate flags"
  "r --op run_length --type i32 --run 1" "r --op run_length --type i32 --run 1024"
  "s --op select --type f32 --predicate lt:500" "s --op select --type f32 --predicate lt:10"
  "s --op partition --type f32 --predicate flags" "s --op unique --type i32 --run 16"
  "s --op unique --type i32 --run 1024" "s --op unique --type f32 --run 16"
  "r --op run_length --type f32 --run 16"
)
for row in "${rows[@]}"; do
  [ $((SECONDS-t0)) -gt 360 ] && { echo "stopped: time" >> $O/stderr.log; break; }
  set -- $row; k=$1; shift
  if [ $k = r ]; then one $O/run_length.csv "$@"; else one $O/select.csv "$@"; fi
done
echo "end at $((SECONDS-t0)) s" >> $O/stderr.log
