#!/usr/bin/env bash
# compute-sanitizer and ncu on the bulk-copy look-back scan, on a GPU host with the bundle in
# .gpu/: memcheck, racecheck and synccheck of every lookback_bulk kernel at odd sizes (each run
# also checks its output), then ncu's DRAM throughput and time of lookback and lookback_bulk at
# 2^28. Logs and ncu_bulk.csv go to $OUT, else to the current directory; one summary line per
# step on stdout.
set -uo pipefail
bin=${1:-.gpu/bin/reduce}
out=${OUT:-.}
for tool in memcheck racecheck synccheck; do
  for v in lookback_bulk lookback_bulk_256x36x3 lookback_bulk_256x20x3 lookback_bulk_load_only; do
    # racecheck and synccheck run ~100x slower: 11 to 20 tiles are enough for them.
    sizes="1000003 9217"; [ "$tool" = memcheck ] || sizes="100003 9217"
    for n in $sizes; do
      log=$out/sanitizer_${tool}_${v}_$n.log
      compute-sanitizer --tool "$tool" --error-exitcode 9 "$bin" --op scan --backend gpu --variant "$v" --n "$n" \
        --repeat 2 >"$log" 2>&1
      echo "$tool $v n=$n: exit $? ($(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$log" | head -1))"
    done
  done
done
metrics=dram__throughput.avg.pct_of_peak_sustained_elapsed,gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum
for v in lookback lookback_bulk lookback_bulk_load_only; do
  ncu --csv --metrics "$metrics" --kernel-name "regex:^$v\$" --launch-count 3 \
    "$bin" --op scan --backend gpu --variant "$v" --n 268435456 --repeat 3 >"$out/ncu_$v.csv" 2>"$out/ncu_$v.log"
  echo "ncu $v: exit $?"
done
