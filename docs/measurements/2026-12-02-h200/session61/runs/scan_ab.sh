#!/usr/bin/env bash
# Session 61: the look-back scans of builds A and B at 2^LOG2 (28 unless LOG2 is set), inclusive and exclusive (the CLI
# prints a line for each; the inclusive one carries CUB's time with --compare-cub), in
# interleaved rounds, the build order alternating by round. Every line the CLI prints is kept
# (builds_ab.sh keeps one line a row, so the scans have this loop, as session 58's run58c.sh).
#   R=OUT_DIR AB=.gpu/ab BUILDS="main flag" FIRST_ROUND=1 ROUNDS=1 CUB=1 GUARD=SECONDS [LOG2=28] scan_ab.sh ROW...
# ROW: the row's arguments, one word-split string ("--type f32 --combine min").
set -u
mkdir -p "$R"; t0=$SECONDS; read -r -a builds <<< "$BUILDS"
cub=""; [ "${CUB:-0}" = 1 ] && cub="--compare-cub"
csv=$R/scans.csv
# The header from the first row's own type and operator: an untyped `--op scan` prints the
# columns of the i32 sum's variants, not these (calls 1-5 took it so; their CSVs were mended).
# shellcheck disable=SC2086  # the row is its words
[ -s "$csv" ] || "$AB/${builds[0]}/reduce" --backend gpu --op scan $1 --n 1000 --repeat 1 --format csv 2>/dev/null \
  | grep -v '^#' | head -1 | sed 's/^/build,round,/' > "$csv"
for r in $(seq "$FIRST_ROUND" $((FIRST_ROUND + ROUNDS - 1))); do
  if [ $((r % 2)) = 1 ]; then order="${builds[*]}"; else order="${builds[1]} ${builds[0]}"; fi
  for row in "$@"; do for b in $order; do
    [ $((SECONDS - t0)) -gt "$GUARD" ] && { echo "stopped in round $r at $((SECONDS - t0)) s" >> "$R/times.log"; exit 0; }
    s=$SECONDS
    # shellcheck disable=SC2086  # the row is its words
    "$AB/$b/reduce" --backend gpu --op scan $row --log2 "${LOG2:-28}" --repeat 10 $cub --format csv 2>> "$R/stderr.log" \
      | grep -v '^#' | tail -n +2 | sed "s/^/$b,$r,/" >> "$csv"
    echo "$b $r $row: $((SECONDS - s)) s" >> "$R/times.log"
  done; done
done
echo "scan_ab done at $((SECONDS - t0)) s" >> "$R/times.log"
