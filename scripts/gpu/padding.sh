#!/usr/bin/env bash
# What the Blelloch tree's padding buys on a GPU: blelloch_unpadded and blelloch, inclusive and
# exclusive, in ROUNDS interleaved rounds (default 5) at each of SIZES (log2, default "20 24
# 28"), each row the median of 20 runs with every output checked. ROUND0 (default 0): the
# rounds are numbered from ROUND0 + 1, and the file is appended to when ROUND0 > 0.
#
#   scripts/gpu/padding.sh        writes $OUT/measurements/padding.csv (./measurements without OUT)
set -uo pipefail
cd "$(dirname "$0")/../.."
bin=.gpu/bin/reduce; [ -x "$bin" ] || bin=target/release/reduce
out=${OUT:-.}/measurements; mkdir -p "$out"
file=$out/padding.csv; [ "${ROUND0:-0}" -gt 0 ] || rm -f "$file"
rc=0
for r in $(seq $((${ROUND0:-0} + 1)) $((${ROUND0:-0} + ${ROUNDS:-5}))); do
  for k in ${SIZES:-20 24 28}; do
    for v in blelloch_unpadded blelloch; do
      tmp=$(mktemp)
      "$bin" --backend gpu --op scan --variant "$v" --log2 "$k" --repeat 20 --format csv >"$tmp" || rc=1
      [ -s "$file" ] || head -1 "$tmp" | sed 's/^/round,/' >"$file"
      tail -n +2 "$tmp" | sed "s/^/$r,/" >>"$file"
      rm -f "$tmp"
    done
  done
done
exit $rc
