#!/usr/bin/env bash
# Session 53, call 3: select with no look-back (exp/select-nowait, a decomposition) against
# main, 2 rounds; a copy of main's rows' bytes; then the GPU tests call 2 did not reach
# (.gpu/skip.txt: the 221 it passed).
set -u
D=docs/measurements/2026-12-01-h200/warp-store/runs
R=$OUT/r53c; mkdir -p $R; t0=$SECONDS
mkdir -p .gpu/ab && tar xJf .gpu/ab.tar.xz -C .gpu/ab && tar xJf .gpu/ab4.tar.xz -C .gpu/ab
xz -dc .gpu/main-tests.xz > .gpu/main-tests && chmod +x .gpu/main-tests
OUT=$R/nowait ROUNDS=2 BUILDS="main nowait" timeout 200 scripts/gpu/builds_ab.sh .gpu/ab $D/rows_nowait.txt
echo "nowait exit $? at $((SECONDS-t0)) s" >> $R/times.log
timeout 60 python3 scripts/gpu/select_copy.py $R/nowait/ab.csv 2 20 main > $R/copy.csv 2> $R/copy.err
echo "copy exit $? at $((SECONDS-t0)) s" >> $R/times.log
mapfile -t S < .gpu/skip.txt; args=(); for s in "${S[@]}"; do args+=(--skip "$s"); done
timeout $((555-SECONDS+t0)) .gpu/main-tests --include-ignored "[gpu]" "${args[@]}" > $R/tests_gpu.log 2>&1
echo "tests exit $? at $((SECONDS-t0)) s" >> $R/times.log
cd $OUT && tar czf r53c.tgz r53c
