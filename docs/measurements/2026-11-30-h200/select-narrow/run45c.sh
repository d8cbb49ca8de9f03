#!/usr/bin/env bash
# Session 45, third call (the device time left: 367 s): the narrow rows the second call did not
# reach, ours (29a287e, .gpu/new/) with CUB, one round: round 2 of three rows, round 1 of the six
# rows of scripts/gpu/select.sh narrow the second call did not time.
set -u
O=$OUT/narrow3; mkdir -p $O
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.max.mem --format=csv > $O/device.txt
echo "new: $(cat .gpu/new/COMMIT)" >> $O/device.txt
one() { # round args...
  local r=$1; shift
  .gpu/new/reduce --backend gpu "$@" --n 268435456 --repeat 20 --compare-cub --format csv 2>>$O/stderr.log | grep -v '^#' | tail -1 | sed "s/^/new,$r,/" >> $O/narrow3.csv
}
.gpu/new/reduce --backend gpu --repeat 1 --format csv --op select --type u8 --n 64 | grep -v '^#' | head -1 | sed "s/^/variant,round,/" > $O/narrow3.csv
one 2 --op partition --type u8 --predicate lt:128
one 2 --op run_length --type u16 --run 1
one 2 --op select --type u8 --predicate flags
one 1 --op select --type u8 --predicate lt:3
one 1 --op select --type u16 --predicate lt:10
one 1 --op partition --type u16 --predicate flags
one 1 --op unique --type u16 --run 16
one 1 --op run_length --type u8 --run 16
one 1 --op run_length --type u16 --run 1024
