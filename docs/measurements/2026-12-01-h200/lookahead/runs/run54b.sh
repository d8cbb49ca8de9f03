#!/usr/bin/env bash
# Session 54, call 2: exp/select-lookahead again (434a396: the look-ahead warp branching off
# after the tile's copies; call 1's la builds met ptxas's LDGSTS miscompile) against main, the
# spacing alone (s2, from call 1's build) and both, 2 rounds; a copy of main's rows' bytes; the
# branch's select GPU tests; then the 13 GPU tests session 53 did not reach (.gpu/done54b.txt).
set -u
D=docs/measurements/2026-12-01-h200/lookahead/runs
R=$OUT/r54b; mkdir -p $R; t0=$SECONDS
mkdir -p .gpu/ab && tar xJf .gpu/ab54.tar.xz -C .gpu/ab && rm -rf .gpu/ab/la .gpu/ab/la_s2 && tar xJf .gpu/ab54b.tar.xz -C .gpu/ab
OUT=$R/la ROUNDS=2 GUARD=300 BUILDS="main la la_s2 s2" timeout 420 scripts/gpu/builds_ab.sh .gpu/ab $D/rows_la.txt
echo "la exit $? at $((SECONDS-t0)) s" >> $R/times.log
timeout 60 python3 scripts/gpu/select_copy.py $R/la/ab.csv 2 20 main > $R/copy.csv 2> $R/copy.err
echo "copy exit $? at $((SECONDS-t0)) s" >> $R/times.log
xz -dc .gpu/la-tests.xz > .gpu/la-tests && chmod +x .gpu/la-tests
timeout 90 .gpu/la-tests --include-ignored "select::gpu" > $R/tests_select.log 2>&1
echo "select tests exit $? at $((SECONDS-t0)) s" >> $R/times.log
left=$((560-SECONDS+t0)); [ $left -gt 30 ] && scripts/gpu/gpu_tests.sh .gpu/la-tests .gpu/done54b.txt $((left-10)) > $R/tests_gpu.log 2>&1
echo "tests exit $? at $((SECONDS-t0)) s" >> $R/times.log
cd $OUT && tar czf r54b.tgz r54b
