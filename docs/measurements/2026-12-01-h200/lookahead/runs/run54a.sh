#!/usr/bin/env bash
# Session 54, call 1: A/B of exp/select-lookahead against main, 2 rounds — la: a look-ahead
# warp (block 288); la_s2: and the status words 2 apart; s2: the spacing alone — then a copy
# of main's rows' bytes (select_copy.py); then, with the branch's test binary, the GPU tests
# not yet passed (.gpu/done54.txt: session 53's passes less select::, whose kernel moved).
set -u
D=docs/measurements/2026-12-01-h200/lookahead/runs
R=$OUT/r54a; mkdir -p $R; t0=$SECONDS
mkdir -p .gpu/ab && tar xJf .gpu/ab54.tar.xz -C .gpu/ab
nvidia-smi > $R/nvidia-smi.txt 2>&1
OUT=$R/la ROUNDS=2 GUARD=330 BUILDS="main la la_s2 s2" timeout 480 scripts/gpu/builds_ab.sh .gpu/ab $D/rows_la.txt
echo "la exit $? at $((SECONDS-t0)) s" >> $R/times.log
timeout $((560-SECONDS+t0)) python3 scripts/gpu/select_copy.py $R/la/ab.csv 2 20 main > $R/copy.csv 2> $R/copy.err
echo "copy exit $? at $((SECONDS-t0)) s" >> $R/times.log
xz -dc .gpu/la-tests.xz > .gpu/la-tests && chmod +x .gpu/la-tests
left=$((565-SECONDS+t0)); [ $left -gt 30 ] && scripts/gpu/gpu_tests.sh .gpu/la-tests .gpu/done54.txt $((left-10)) > $R/tests_gpu.log 2>&1
echo "tests exit $? at $((SECONDS-t0)) s" >> $R/times.log
cp .gpu/done54.txt $R/
cd $OUT && tar czf r54a.tgz r54a
