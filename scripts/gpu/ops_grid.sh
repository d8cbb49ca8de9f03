#!/usr/bin/env bash
# Issue #39 on a GPU host: the launch shape of the one-launch operations (`arg_reduce`,
# `transform_reduce`): block × grid rule, timed in interleaved rounds, to pick the rows of
# `host/src/reduce/one_pass.rs`'s PLAN.
#
#   scripts/gpu/ops_grid.sh          writes $OUT/ops_grid.csv (default ./ops_grid.csv)
#
# Each round runs every (size, operation, shape) once, in the same order; a shape is BLOCK:K
# (`--block BLOCK --blocks-per-sm K`; K = `-`: the resident grid, K = 1024: one block per tile),
# or `plan` (no flag: the plan's row). Every run is checked against the CPU by `reduce`.
#
# Columns: round, operation, type, n, shape, grid, block, median_us, bound_us, pct_of_bound,
# verdict. Exit status 0 when every row passed, 1 otherwise, 2 when the binary is missing.
#
# Environment: ROUNDS (2), REPEAT (20), REDUCE (.gpu/bin/reduce), BACKEND (gpu; `emulator` with
# small SIZES checks the script on a machine with no GPU), OPS ("argmax dot"), TYPES ("f32"),
# SIZES (log2 n, "22 24 26 28"), SHAPES (below).
set -uo pipefail
bin=${REDUCE:-.gpu/bin/reduce}
[ -x "$bin" ] || { echo "ops_grid: no reduce binary at $bin (build the bundle into .gpu/)" >&2; exit 2; }
out=${OUT:-.}; mkdir -p "$out"
rounds=${ROUNDS:-2}; repeat=${REPEAT:-20}; backend=${BACKEND:-gpu}
ops=${OPS:-argmax dot}; types=${TYPES:-f32}; sizes=${SIZES:-22 24 26 28}
shapes=${SHAPES:-plan 256:- 256:16 256:1024 512:- 512:1024 1024:- 1024:16 1024:1024}
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
csv=$out/ops_grid.csv
echo "round,operation,type,n,shape,grid,block,median_us,bound_us,pct_of_bound,verdict" >"$csv"
status=0
for round in $(seq 1 "$rounds"); do
  for k in $sizes; do
    for op in $ops; do
      for ty in $types; do
        for shape in $shapes; do
          flags=()
          if [ "$shape" != plan ]; then
            flags+=(--block "${shape%%:*}")
            [ "${shape##*:}" = - ] || flags+=(--blocks-per-sm "${shape##*:}")
          fi
          "$bin" --backend "$backend" --op "$op" --type "$ty" --log2 "$k" --repeat "$repeat" \
            --format csv "${flags[@]}" >"$tmp/row.csv" 2>"$tmp/row.log" || status=1
          python3 - "$tmp/row.csv" "$tmp/row.log" "$round" "$shape" >>"$csv" <<'PY' || status=1
import csv, sys
path, log, rnd, shape = sys.argv[1:]
rows = list(csv.DictReader(open(path)))
if not rows:
    why = (open(log).read().strip().splitlines() or ["no output"])[-1].replace(",", ";")
    print(f"{rnd},,,,{shape},,,,,,ERROR: {why}")
    sys.exit(1)
r = rows[0]
print(",".join([rnd, r["operation"], r["type"], r["n"], shape, r["grid"], r["block"], r["time_us_median"],
                r["bound_us"], r["pct_of_bound"], r["verdict"].replace(",", ";")]))
sys.exit(0 if r["verdict"].startswith("PASS") else 1)
PY
          echo "ops_grid: round $round 2^$k $op $ty $shape: $(tail -1 "$csv" | cut -d, -f8,10,11)" >&2
        done
      done
    done
  done
done
exit $status
