#!/usr/bin/env bash
# Session 56, call 4: the landed build (0d2f607, as r56c): the four select::gpu trials r56c's
# 90 s did not reach (the CUDA C and CUB harnesses are built first on a fresh host).
set -u
R=$OUT/r56d; mkdir -p $R; t0=$SECONDS
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.max.mem --format=csv > $R/device.txt
xz -d .gpu/tests.xz && chmod +x .gpu/tests
timeout 240 .gpu/tests --include-ignored "select::gpu" --skip forms --skip every_outcome_set --skip u8 > $R/tests_select.log 2>&1
echo "select tests exit $? at $((SECONDS-t0)) s" >> $R/times.log
cd $OUT && tar czf r56d.tgz r56d
