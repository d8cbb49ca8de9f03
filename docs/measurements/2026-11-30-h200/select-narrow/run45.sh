#!/usr/bin/env bash
# Session 45: select and run-length for u8/u16 on the GPU — tests/main.rs's select::gpu trials
# (every type), compute-sanitizer memcheck of the narrow kernels, and scripts/gpu/select.sh narrow.
set -u
O=$OUT/narrow; mkdir -p $O
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.max.mem --format=csv > $O/device.txt
echo "bundle: $(cat .gpu/COMMIT)" >> $O/device.txt
.gpu/bin/main --include-ignored select::gpu > $O/select_tests.log 2>&1; echo "tests exit $?" >> $O/select_tests.log
for row in "--op select --type u8" "--op partition --type u16 --predicate flags" "--op run_length --type u8 --run 3" "--op unique --type u16 --run 2"; do
  echo "== $row" >> $O/sanitizer.log
  compute-sanitizer --tool memcheck .gpu/bin/reduce --backend gpu $row --n 1000003 --repeat 2 --format csv >> $O/sanitizer.log 2>&1
  echo "exit $?" >> $O/sanitizer.log
done
ROUNDS=2 REDUCE=.gpu/bin/reduce OUT=$O bash scripts/gpu/select.sh narrow > $O/select_sh.log 2>&1; echo "select.sh exit $?" >> $O/select_sh.log
cd $OUT && tar czf narrow.tgz narrow
