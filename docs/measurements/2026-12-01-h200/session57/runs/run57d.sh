#!/usr/bin/env bash
# Session 57, call 4: fmm's (d7dd39d) f32/f64 rows of measure.sh's typed_scans (2^24, 2^28) and
# types_vs_cub (1 round), CUB in every row, within a deadline so that the CSVs come back.
set -u
R=$OUT/r57d; mkdir -p $R; t0=$SECONDS
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.max.mem --format=csv > $R/device.txt
echo "fmm d7dd39d (exp/fminmax): .gpu/bin/reduce" >> $R/device.txt
OUT=$R TYPES="f32 f64" timeout 150 scripts/gpu/measure.sh typed_scans > $R/typed_scans.log 2>&1
echo "typed_scans exit $? at $((SECONDS-t0)) s" >> $R/times.log
OUT=$R TYPES="f32 f64" TYPE_ROUNDS=1 timeout $((400-SECONDS+t0)) scripts/gpu/measure.sh types_vs_cub > $R/types.log 2>&1
echo "types_vs_cub exit $? at $((SECONDS-t0)) s" >> $R/times.log
cd $OUT && tar czf r57d.tgz r57d
