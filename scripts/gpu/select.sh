#!/usr/bin/env bash
# Issue #61 on a GPU host: the library's compaction (reduce_scan::Select, through `reduce --op
# select|partition|unique --compare-cub`: ours and CUB's DeviceSelect/DevicePartition on the
# same values in the same row, both checked against the CPU) and PyTorch's masked_select and
# unique_consecutive (scripts/gpu/select_torch.py, same shapes, its own values), in interleaved
# rounds: each round runs every row of ours-with-CUB, then PyTorch's. With `run_length`, the
# run-length encoding instead (`reduce --op run_length --compare-cub`: CUB's
# DeviceRunLengthEncode::Encode; PyTorch's unique_consecutive(return_counts=True)). With
# `narrow`, every operation on u8 and u16 (widened to words in the tile), ours and CUB's only.
#
#   scripts/gpu/select.sh              writes $OUT/select.csv and $OUT/select_torch.csv
#   scripts/gpu/select.sh run_length   writes $OUT/run_length.csv and $OUT/run_length_torch.csv
#   scripts/gpu/select.sh narrow       writes $OUT/narrow.csv
#
# Run from the repository root with the command line at .gpu/reduce (built from this commit).
# Environment: ROUNDS (2), N (2^28), REPEAT (20 timed calls per row), REDUCE (.gpu/reduce),
# PYTHON (python3). Exit status 0 when every row passed, 1 otherwise, 2 when reduce is missing.
set -uo pipefail
reduce=${REDUCE:-.gpu/reduce}
[ -x "$reduce" ] || { echo "select: no reduce binary at $reduce (cargo build --release --bin reduce)" >&2; exit 2; }
out=${OUT:-.}; mkdir -p "$out"
rounds=${ROUNDS:-2}; n=${N:-268435456}; repeat=${REPEAT:-20}; python=${PYTHON:-python3}
what=${1:-select}
case $what in select|run_length|narrow) ;; *) echo "select: unknown argument '$what': none (the compactions), run_length or narrow" >&2; exit 2 ;; esac
csv=$out/$what.csv; torch_csv=$out/${what}_torch.csv; [ "$what" = narrow ] && torch_csv=/dev/null
: > "$csv"; : > "$torch_csv"
status=0
rows=(
  "--op select --type i32 --predicate lt:500"
  "--op select --type i32 --predicate lt:10"
  "--op select --type f32 --predicate lt:500"
  "--op select --type f32 --predicate lt:10"
  "--op select --type i32 --predicate flags"
  "--op partition --type i32 --predicate lt:500"
  "--op partition --type f32 --predicate flags"
  "--op unique --type i32 --run 1"
  "--op unique --type i32 --run 16"
  "--op unique --type i32 --run 1024"
  "--op unique --type f32 --run 16"
)
[ "$what" = run_length ] && rows=(
  "--op run_length --type i32 --run 1"
  "--op run_length --type i32 --run 16"
  "--op run_length --type i32 --run 1024"
  "--op run_length --type f32 --run 16"
)
[ "$what" = narrow ] && rows=(
  "--op select --type u8 --predicate lt:128"
  "--op select --type u8 --predicate lt:3"
  "--op select --type u16 --predicate lt:500"
  "--op select --type u16 --predicate lt:10"
  "--op select --type u8 --predicate flags"
  "--op partition --type u8 --predicate lt:128"
  "--op partition --type u16 --predicate flags"
  "--op unique --type u8 --run 1"
  "--op unique --type u16 --run 16"
  "--op run_length --type u8 --run 16"
  "--op run_length --type u16 --run 1"
  "--op run_length --type u16 --run 1024"
)
for r in $(seq 1 "$rounds"); do
  for row in "${rows[@]}"; do
    # shellcheck disable=SC2086
    line=$("$reduce" $row --n "$n" --repeat "$repeat" --compare-cub --format csv | grep -v '^#')
    [ -s "$csv" ] || printf 'round,%s\n' "$(head -1 <<<"$line")" >> "$csv"
    tail -n +2 <<<"$line" | sed "s/^/$r,/" >> "$csv" || status=1
  done
  [ "$what" = narrow ] && continue
  "$python" scripts/gpu/select_torch.py "$n" "$repeat" "$what" | sed "1d; s/^/$r,/" >> "$torch_csv" ||
    echo "select: PyTorch did not run (round $r)" >&2
done
grep -q ',FAIL' "$csv" && status=1
cat "$csv" "$torch_csv"
exit $status
