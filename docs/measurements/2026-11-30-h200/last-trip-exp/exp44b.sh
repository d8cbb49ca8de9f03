#!/usr/bin/env bash
# Session 44, second call: thread_fold_v128's last, partial trip. HEAD (.gpu/bin/reduce, 897006c)
# against v1 (one loop, every trip's four loads predicated) and v2 (HEAD's full trips, then one
# partial trip of up to three predicated loads), interleaved in every round.
set -u
O=$OUT/exp2; mkdir -p $O
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.max.mem --format=csv > $O/device.txt
echo "bundle commit: $(cat .gpu/COMMIT)" >> $O/device.txt
one() { # label args...
  local label=$1; shift
  for v in head v1 v2; do
    local bin=.gpu/extra/reduce-$v; [ $v = head ] && bin=.gpu/bin/reduce
    $bin --backend gpu --repeat 20 --format csv --compare-cub "$@" 2>>$O/stderr.log | tail -1 | sed "s/^/${label}_$v,$r,/" >> $O/exp2.csv
  done
}
.gpu/bin/reduce --backend gpu --repeat 1 --format csv --op rows --rows 4 --cols 4 | head -1 | sed "s/^/label,round,/" > $O/exp2.csv
for r in 1 2; do
  one rows4096 --op rows --rows 4096 --cols 4096 --type f32
  one rows4096argmax --op rows --rows 4096 --cols 4096 --type f32 --combine argmax
  one seg1e4 --op segmented --segments 10000 --log2 26 --type f32
  one seg1e4argmax --op segmented --segments 10000 --log2 26 --type f32 --combine argmax
  one seg10 --op segmented --segments 10 --log2 26 --type f32
  one seg1000 --op segmented --segments 1000 --log2 26 --type f32
  one seg1e5 --op segmented --segments 100000 --log2 26 --type f32
  one seg1e6 --op segmented --segments 1000000 --log2 26 --type f32
  one seg1e6argmax --op segmented --segments 1000000 --log2 26 --type f32 --combine argmax
  one pow1e6 --op segmented --segments 1000000 --lengths power --log2 26 --type f32
  one rows256 --op rows --rows 65536 --cols 256 --type f32
  one seg1e4min --op segmented --segments 10000 --log2 26 --type f32 --combine min
done
