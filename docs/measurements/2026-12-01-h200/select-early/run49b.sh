#!/usr/bin/env bash
# Session 49: the bundle's GPU tests (../shared/gpu/bundle of main, cd59a4a), in two calls.
#   run49b.sh 1   tests/main's tests but the emulator's (CI runs those) and the GPU's tests
#                 of types::, gpu:: and api::
#   run49b.sh 2   tests/main's GPU tests of types:: and api:: (one filter a run: the suite's
#                 harness takes one), every other test binary, then gpu:: in the time left
# Where a GPU is usable the suite's harness does not mark GPU tests ignored (--ignored selects
# none there), so the parts are chosen by filter and --skip, all with --include-ignored.
# Each step under a timeout; logs tarred.
set -u
part=$1; O=$OUT/r49b$part; mkdir -p $O
mkdir -p .gpu/b && tar xJf .gpu/packB.tar.xz -C .gpu/b
t0=$SECONDS
M=$(ls .gpu/b/tests/main-*)
if [ "$part" = 1 ]; then
  timeout 550 $M --include-ignored --skip "[emulator]" --skip "[gpu] types::" --skip "[gpu] gpu::" --skip "[gpu] api::" > $O/main_part1.log 2>&1
  echo "main part 1 exit $? at $((SECONDS-t0)) s" >> $O/times.log
else
  for f in types api; do
    timeout 300 $M --include-ignored "[gpu] $f::" > $O/main_$f.log 2>&1
    echo "main $f:: exit $? at $((SECONDS-t0)) s" >> $O/times.log
  done
  for t in .gpu/b/tests/*; do
    [ "$t" = "$M" ] && continue
    echo "=== $(basename $t)" >> $O/others.log
    timeout 120 $t --include-ignored >> $O/others.log 2>&1
    echo "$(basename $t) exit $? at $((SECONDS-t0)) s" >> $O/times.log
  done
  # gpu:: (the curriculum's kernels, among them the nested launches) in the time left: each
  # test's line is written as it ends, so a timeout still leaves those that ran.
  left=$((570-SECONDS+t0)); [ $left -gt 20 ] && {
    timeout $left $M --include-ignored "[gpu] gpu::" > $O/main_gpu.log 2>&1
    echo "main gpu:: exit $? at $((SECONDS-t0)) s (limit $left s)" >> $O/times.log; }
fi
cd $OUT && tar czf r49b$part.tgz r49b$part
