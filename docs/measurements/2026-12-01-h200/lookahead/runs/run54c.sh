#!/usr/bin/env bash
# Session 54, call 3: the landing candidate (land, df6f29a) and its spacing 4 (land_s4) against
# main and the spacing alone (s2, call 1's build), 2 rounds of seven rows; a copy of main's
# rows' bytes; the candidate's select GPU tests; then GPU tests left (.gpu/done54c.txt).
set -u
D=docs/measurements/2026-12-01-h200/lookahead/runs
R=$OUT/r54c; mkdir -p $R; t0=$SECONDS
mkdir -p .gpu/ab && tar xJf .gpu/ab54.tar.xz -C .gpu/ab && rm -rf .gpu/ab/la .gpu/ab/la_s2 && tar xJf .gpu/ab54c.tar.xz -C .gpu/ab
OUT=$R/land ROUNDS=2 GUARD=250 BUILDS="main land s2 land_s4" timeout 420 scripts/gpu/builds_ab.sh .gpu/ab $D/rows_land.txt
echo "land exit $? at $((SECONDS-t0)) s" >> $R/times.log
timeout 60 python3 scripts/gpu/select_copy.py $R/land/ab.csv 2 20 main > $R/copy.csv 2> $R/copy.err
echo "copy exit $? at $((SECONDS-t0)) s" >> $R/times.log
xz -dc .gpu/land-tests.xz > .gpu/land-tests && chmod +x .gpu/land-tests
timeout 100 .gpu/land-tests --include-ignored "select::gpu" > $R/tests_select.log 2>&1
echo "select tests exit $? at $((SECONDS-t0)) s" >> $R/times.log
left=$((550-SECONDS+t0)); [ $left -gt 30 ] && scripts/gpu/gpu_tests.sh .gpu/land-tests .gpu/done54c.txt $((left-5)) > $R/tests_gpu.log 2>&1
echo "tests exit $? at $((SECONDS-t0)) s" >> $R/times.log
cp .gpu/done54c.txt $R/ 2>/dev/null
cd $OUT && tar czf r54c.tgz r54c
