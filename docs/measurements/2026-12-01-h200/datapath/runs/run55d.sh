#!/usr/bin/env bash
# Session 55, call 4: the landed build (261373a): tests/main's select::gpu trials, then
# scripts/gpu/select.sh (the compaction set with CUB and PyTorch, 1 round) into r55d/.
set -u
R=$OUT/r55d; mkdir -p $R; t0=$SECONDS
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.max.mem --format=csv > $R/device.txt
xz -d .gpu/tests.xz .gpu/reduce.xz && chmod +x .gpu/tests .gpu/reduce
timeout 90 .gpu/tests --include-ignored "select::gpu" > $R/tests_select.log 2>&1
echo "select tests exit $? at $((SECONDS-t0)) s" >> $R/times.log
OUT=$R ROUNDS=1 timeout $((330-SECONDS+t0)) scripts/gpu/select.sh > $R/select.log 2>&1
echo "select.sh exit $? at $((SECONDS-t0)) s" >> $R/times.log
cd $OUT && tar czf r55d.tgz r55d
