#!/usr/bin/env bash
# Session 56, call 3: the landed build (0d2f607; run_length's PTX that of r56b's la16):
# tests/main's select::gpu trials (run_length among them), then scripts/gpu/select.sh run_length
# (CUB and PyTorch, 1 round) and select.sh narrow (u8/u16 with CUB, 1 round) into r56c/.
set -u
R=$OUT/r56c; mkdir -p $R; t0=$SECONDS
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.max.mem --format=csv > $R/device.txt
xz -d .gpu/tests.xz .gpu/reduce.xz && chmod +x .gpu/tests .gpu/reduce
timeout 90 .gpu/tests --include-ignored "select::gpu" > $R/tests_select.log 2>&1
echo "select tests exit $? at $((SECONDS-t0)) s" >> $R/times.log
OUT=$R ROUNDS=1 timeout $((330-SECONDS+t0)) scripts/gpu/select.sh run_length > $R/run_length.log 2>&1
echo "select.sh run_length exit $? at $((SECONDS-t0)) s" >> $R/times.log
OUT=$R ROUNDS=1 timeout $((560-SECONDS+t0)) scripts/gpu/select.sh narrow > $R/narrow.log 2>&1
echo "select.sh narrow exit $? at $((SECONDS-t0)) s" >> $R/times.log
cd $OUT && tar czf r56c.tgz r56c
