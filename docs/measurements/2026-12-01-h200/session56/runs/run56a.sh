#!/usr/bin/env bash
# Session 56, call 1 (main 22c4375's build): tests/main's segmented::gpu and histogram::gpu
# trials (not reached by the bundle runs of sessions 53-55), then scripts/gpu/select.sh narrow
# (u8/u16 with CUB, 1 round) into r56a/.
set -u
R=$OUT/r56a; mkdir -p $R; t0=$SECONDS
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.max.mem --format=csv > $R/device.txt
xz -d .gpu/tests.xz .gpu/reduce.xz && chmod +x .gpu/tests .gpu/reduce
for f in segmented::gpu histogram::gpu; do
  timeout 150 .gpu/tests --include-ignored "$f" > $R/tests_${f%%::*}.log 2>&1
  echo "$f tests exit $? at $((SECONDS-t0)) s" >> $R/times.log
done
OUT=$R ROUNDS=1 timeout $((540-SECONDS+t0)) scripts/gpu/select.sh narrow > $R/narrow.log 2>&1
echo "select.sh narrow exit $? at $((SECONDS-t0)) s" >> $R/times.log
cd $OUT && tar czf r56a.tgz r56a
