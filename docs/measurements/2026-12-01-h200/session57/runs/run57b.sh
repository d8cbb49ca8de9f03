#!/usr/bin/env bash
# Session 57, call 2: round 2 of the A/B (rows_57b.txt: rows_57a.txt and an f64 sum control);
# fmm's f32/f64 rows of measure.sh's types_vs_cub (2 rounds) and typed_scans (2^24, 2^28), CUB
# in every row; then fmm's GPU tests of the float minima and maxima (types, typed_scan, ops).
set -u
D=docs/measurements/2026-12-01-h200/session57
R=$OUT/r57b; mkdir -p $R; t0=$SECONDS
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.max.mem --format=csv > $R/device.txt
echo "fmm d7dd39d (exp/fminmax); main 13dc665" >> $R/device.txt
mkdir -p .gpu/ab && tar xJf .gpu/ab57.tar.xz -C .gpu/ab
xz -d .gpu/tests.xz && chmod +x .gpu/tests
OUT=$R/ab ROUNDS=1 FIRST_ROUND=2 N=67108864 BUILDS="main fmm" timeout 300 scripts/gpu/builds_ab.sh .gpu/ab $D/runs/rows_57b.txt
echo "ab exit $? at $((SECONDS-t0)) s" >> $R/times.log
mkdir -p .gpu/bin && cp .gpu/ab/fmm/reduce .gpu/bin/reduce && echo "d7dd39d" > .gpu/COMMIT
OUT=$R TYPES="f32 f64" TYPE_ROUNDS=2 timeout 200 scripts/gpu/measure.sh types_vs_cub > $R/types.log 2>&1
echo "types_vs_cub exit $? at $((SECONDS-t0)) s" >> $R/times.log
OUT=$R TYPES="f32 f64" timeout 100 scripts/gpu/measure.sh typed_scans > $R/typed_scans.log 2>&1
echo "typed_scans exit $? at $((SECONDS-t0)) s" >> $R/times.log
for f in f32_m f64_m; do
  left=$((570-SECONDS+t0)); [ $left -gt 15 ] || break
  timeout $left .gpu/tests --include-ignored --skip emulator --skip nan_and_zeros $f > $R/tests_$f.log 2>&1
  echo "tests $f exit $? at $((SECONDS-t0)) s" >> $R/times.log
done
cd $OUT && tar czf r57b.tgz r57b
