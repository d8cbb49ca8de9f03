#!/usr/bin/env bash
# Session 58, call 2 (main 9246fd6's test binary): tests/main's GPU suite, the tests call 1 did
# not reach (its done.txt carried as .gpu/done58a.txt), for at most 560 s.
set -u
R=$OUT/r58b; mkdir -p $R; t0=$SECONDS
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.max.mem --format=csv > $R/device.txt
echo "main $(cat .gpu/COMMIT)" >> $R/device.txt
xz -d .gpu/tests.xz && chmod +x .gpu/tests
cp .gpu/done58a.txt $R/done.txt
scripts/gpu/gpu_tests.sh .gpu/tests $R/done.txt 560 > $R/gpu_tests.log 2>&1
echo "gpu_tests exit $? at $((SECONDS-t0)) s: $(tail -1 $R/gpu_tests.log)" >> $R/times.log
cd $OUT && tar czf r58b.tgz r58b
