#!/usr/bin/env bash
# Session 52, call 3: tests/main's select:: and run_length:: on the GPU (the landed build),
# copies of each row's bytes (select_copy.py), then an A/B of the prefetch distance for the
# narrow types and run_length (pfmore = 495 against 660 and 330).
set -u
R=$OUT/r52c; mkdir -p $R; t0=$SECONDS
mkdir -p .gpu/ab && tar xJf .gpu/ab.tar.xz -C .gpu/ab && tar xJf .gpu/ab2.tar.xz -C .gpu/ab
xz -dc .gpu/main-tests.xz > .gpu/main-tests && chmod +x .gpu/main-tests
timeout 150 .gpu/main-tests --include-ignored --skip "[emulator]" select:: run_length:: > $R/tests.log 2>&1
echo "tests exit $? at $((SECONDS-t0)) s" >> $R/times.log
for f in select narrow run_length; do
  timeout 60 python3 scripts/gpu/select_copy.py .gpu/$f.csv 2 20 > $R/copy_$f.csv 2> $R/copy_$f.err
  echo "copy $f exit $? at $((SECONDS-t0)) s" >> $R/times.log
done
left=$((560-SECONDS+t0))
OUT=$R/ab FIRST_ROUND=1 ROUNDS=3 GUARD=$((left-190)) BUILDS="pfmore pf660 pf330" timeout $left scripts/gpu/builds_ab.sh .gpu/ab .gpu/rows_distance.txt
echo "ab exit $? at $((SECONDS-t0)) s" >> $R/times.log
cd $OUT && tar czf r52c.tgz r52c
