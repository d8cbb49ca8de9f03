#!/usr/bin/env bash
# Session 50, call 3: (1) one more A/B round of select's L2 prefetch distance (main = none,
# landed = 495, pf330, pf660); (2) scripts/gpu/select.sh (ours and CUB's in the same row,
# PyTorch's) with the landed build, 1 round; (3) tests/main's select:: tests on the GPU.
set -u
R=$OUT/r50c; mkdir -p $R; t0=$SECONDS
mkdir -p .gpu/ab && tar xJf .gpu/ab.tar.xz -C .gpu/ab && tar xJf .gpu/ab3.tar.xz -C .gpu/ab
xz -dc .gpu/main-tests.xz > .gpu/main-tests && chmod +x .gpu/main-tests
OUT=$R/ab ROUNDS=1 BUILDS="landed pf330 main pf660" scripts/gpu/builds_ab.sh .gpu/ab .gpu/rows7.txt
echo "ab exit $? at $((SECONDS-t0)) s" >> $R/times.log
left=$((440-SECONDS+t0)); [ $left -gt 60 ] && {
  OUT=$R/select ROUNDS=1 REDUCE=.gpu/ab/landed/reduce timeout $left scripts/gpu/select.sh > $R/select.log 2>&1
  echo "select.sh exit $? at $((SECONDS-t0)) s (limit $left s)" >> $R/times.log; }
left=$((560-SECONDS+t0)); [ $left -gt 20 ] && {
  timeout $left .gpu/main-tests --include-ignored --skip "[emulator]" "select::" > $R/tests.log 2>&1
  echo "tests exit $? at $((SECONDS-t0)) s (limit $left s)" >> $R/times.log; }
cd $OUT && tar czf r50c.tgz r50c
