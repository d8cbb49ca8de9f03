#!/usr/bin/env bash
# Session 57, call 3: fmm's (d7dd39d) GPU tests of the float minima and maxima: every test whose
# name has f32_min/f32_max/f64_min/f64_max, GPU only (nan_and_zeros ran in call 1, CUB's own
# trials skipped), within a deadline so that the logs come back.
set -u
R=$OUT/r57c; mkdir -p $R; t0=$SECONDS
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.max.mem --format=csv > $R/device.txt
echo "fmm d7dd39d (exp/fminmax) test binary" >> $R/device.txt
xz -d .gpu/tests.xz && chmod +x .gpu/tests
for f in f32_m f64_m; do
  left=$((430-SECONDS+t0)); [ $left -gt 15 ] || break
  timeout $left .gpu/tests --include-ignored --skip emulator --skip nan_and_zeros --skip ::cub $f > $R/tests_$f.log 2>&1
  echo "tests $f exit $? at $((SECONDS-t0)) s" >> $R/times.log
done
cd $OUT && tar czf r57c.tgz r57c
