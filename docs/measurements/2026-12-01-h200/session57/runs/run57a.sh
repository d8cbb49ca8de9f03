#!/usr/bin/env bash
# Session 57, call 1: the A/B of rows_57a.txt (main 13dc665 against fmm d7dd39d: float min/max
# as PTX min/max with the NaN chosen beside them), 2 interleaved rounds at 2^26; the rows of
# 4096 x 4096 at blocks of 128, 256 and 512 (main's build, CUB in every row, 2 rounds); then the
# fmm test binary's GPU tests of float min/max (NaN and +-0.0) and segmented::gpu.
set -u
D=docs/measurements/2026-12-01-h200/session57
R=$OUT/r57a; mkdir -p $R; t0=$SECONDS
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.max.mem --format=csv > $R/device.txt
echo "fmm d7dd39d (exp/fminmax); main 13dc665" >> $R/device.txt
mkdir -p .gpu/ab && tar xJf .gpu/ab57.tar.xz -C .gpu/ab
xz -d .gpu/tests.xz && chmod +x .gpu/tests
OUT=$R/ab ROUNDS=2 N=67108864 GUARD=200 BUILDS="main fmm" timeout 330 scripts/gpu/builds_ab.sh .gpu/ab $D/runs/rows_57a.txt
echo "ab exit $? at $((SECONDS-t0)) s" >> $R/times.log
B=.gpu/ab/main/reduce
$B --backend gpu --repeat 1 --format csv --op rows --rows 4 --cols 4 2>/dev/null | grep -v '^#' | head -1 | sed 's/^/block,round,/' > $R/rows.csv
for r in 1 2; do for blk in 256 128 512; do for a in "--type f32" "--type i32 --combine max"; do
  [ $((SECONDS-t0)) -gt 330 ] && break 3
  $B --backend gpu --op rows --rows 4096 --cols 4096 $a --block $blk --repeat 20 --compare-cub --format csv 2>>$R/rows_err.log | grep -v '^#' | tail -1 | sed "s/^/$blk,$r,/" >> $R/rows.csv
done; done; done
echo "rows done at $((SECONDS-t0)) s" >> $R/times.log
timeout $((560-SECONDS+t0)) .gpu/tests --include-ignored "nan_and_zeros" > $R/tests_nan.log 2>&1
echo "nan_and_zeros tests exit $? at $((SECONDS-t0)) s" >> $R/times.log
left=$((575-SECONDS+t0)); [ $left -gt 20 ] && timeout $left .gpu/tests --include-ignored "segmented::gpu" > $R/tests_segmented.log 2>&1
echo "segmented tests exit $? at $((SECONDS-t0)) s" >> $R/times.log
cd $OUT && tar czf r57a.tgz r57a
