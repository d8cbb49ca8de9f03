#!/usr/bin/env bash
# Session 36: the README's hist256 (binaries of d630442) again, on another lease of the H200:
# interleaved runs of examples/histogram (hist256 against hist256_quads), the README's program,
# and the plain sum of the same bytes with CUB's DeviceReduce::Sum.
set -uo pipefail
o=$OUT/again; mkdir -p $o
{ nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader; echo "bundle commit: $(cat .gpu/COMMIT)"; } > $o/device.txt
H=.gpu/extra/histogram
for i in 1 2 3 4; do
  $H --n 16777216 --rounds 5 --kernels hist256,hist256_quads --block 1024 --format csv > $o/hist_$i.csv 2>>$o/err.txt
  app=$PWD/.gpu/extra/dot-app; log=$(cd $o && pwd)/dot_app_$i.txt
  (w=$(mktemp -d); cd $w && env -i PATH=/usr/bin:/bin HOME=/root $app > $log 2>&1; rm -rf $w)
  .gpu/bin/reduce --type u32 --variant atomic_accumulate --n 16777216 --format csv --compare-cub > $o/sum_cub_$i.csv 2>>$o/err.txt
done
$H --n 16 --rounds 3 --kernels hist256,hist256_quads --block 1024 --format csv > $o/one_block.csv 2>>$o/err.txt
cd $OUT && tar czf again.tgz again && rm -rf again
