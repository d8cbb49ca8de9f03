#!/usr/bin/env bash
# Issue #37 on a GPU host: CUB's own warp-specialized ("lookahead") scan against cudaMemcpy and
# CUB's default scan, int32 sums (scripts/gpu/explore/cub_lookahead.cu: its header says how to
# build it against a CCCL newer than the toolkit's; the GPU machine cannot fetch one, so build it
# elsewhere and bring the binary).
#
#   CUB_LOOKAHEAD=path/to/cub_lookahead scripts/gpu/cub_lookahead.sh
#
# Environment: CUB_LOOKAHEAD (the binary, required), ROUNDS (3), SIZES ("268435456 100000000"),
# OUT (.). Writes $OUT/cub_lookahead_<n>.csv (the program's CSV at each size), its stderr to
# $OUT/cub_lookahead.log, and $OUT/summary.txt (also on stdout): per size and row, the range of
# the rounds' medians and of their ratio to cudaMemcpy in the same round.
# Exit status: 0 when every run passed its checks; 1 when one failed; 2 for a missing binary or
# a bad setting.
set -uo pipefail
bin=${CUB_LOOKAHEAD:-}
[ -n "$bin" ] && [ -x "$bin" ] || { echo "cub_lookahead.sh: set CUB_LOOKAHEAD to the built program (got '${bin}')" >&2; exit 2; }
rounds=${ROUNDS:-3}
sizes=${SIZES:-268435456 100000000}
case "$rounds" in ''|*[!0-9]*|0*)
  echo "cub_lookahead.sh: ROUNDS must be a whole number from 1 to 100, not '$rounds'" >&2; exit 2 ;;
esac
[ "$rounds" -le 100 ] || { echo "cub_lookahead.sh: ROUNDS must be a whole number from 1 to 100, not '$rounds'" >&2; exit 2; }
[ -n "${sizes// /}" ] || { echo "cub_lookahead.sh: SIZES names no size (sizes from 1 to 2^30, e.g. \"268435456 100000000\")" >&2; exit 2; }
for n in $sizes; do
  case "$n" in *[!0-9]*|0*) n=bad ;; esac
  if [ "$n" = bad ] || [ "${#n}" -gt 10 ] || [ "$n" -gt 1073741824 ]; then
    echo "cub_lookahead.sh: SIZES holds sizes from 1 to 2^30, not '$sizes'" >&2; exit 2
  fi
done
out=${OUT:-.}; mkdir -p "$out"
rc=0
: >"$out/cub_lookahead.log"
for n in $sizes; do
  "$bin" "$rounds" "$n" >"$out/cub_lookahead_$n.csv" 2>>"$out/cub_lookahead.log" || rc=1
done
python3 - "$out" $sizes <<'PY' | tee "$out/summary.txt" || rc=1
import csv, collections, sys
out, sizes = sys.argv[1], sys.argv[2:]
for n in sizes:
    # explore.cuh's rows: round, what, shape, blocks_per_sm, median_us, gb_per_s_rw.
    rows = [r for r in csv.reader(open(f"{out}/cub_lookahead_{n}.csv")) if r and r[0].isdigit()]
    by_round = collections.defaultdict(dict)
    for r in rows:
        by_round[r[0]][" ".join(x for x in r[1:3] if x)] = float(r[4])
    names = list(dict.fromkeys(k for v in by_round.values() for k in v))
    print(f"n = {n}: µs (range of rounds), × cudaMemcpy per round, ({len(by_round)} rounds)")
    for k in names:
        t = [v[k] for v in by_round.values() if k in v]
        if k == "cudaMemcpy":
            print("  %-26s %15s" % (k, f"{min(t):.1f}–{max(t):.1f}"))
            continue
        x = [v[k] / v["cudaMemcpy"] for v in by_round.values() if k in v and "cudaMemcpy" in v]
        print("  %-26s %15s  %s" % (k, f"{min(t):.1f}–{max(t):.1f}", f"{min(x):.3f}–{max(x):.3f}"))
PY
exit $rc
