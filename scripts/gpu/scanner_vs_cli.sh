#!/usr/bin/env bash
# Issue #37 on a GPU host: the library's `Scanner<i32, Sum>` against the CLI's timing of the
# kernel it runs, in interleaved rounds. Each round, at each size: `scanner_time` (examples/
# scanner_time.rs: the Scanner's enqueue timed alone between CUDA events, CALLS times, after an
# untimed call), then `reduce --op scan --variant V` with V the variant the Scanner ran (the
# per-device plan's), CALLS timed launches after an untimed one; the order of the two alternates
# from round to round. Both check every run's output on the device after its stop event (a
# kernel that reads the output and the reference): the same work between timed runs on both
# sides. (Without it, back-to-back scans start with the previous one's output still dirty in
# L2, ~6 µs more per scan on the H100 on 2026-11-26: docs/measurements/2026-11-26-h100/
# scanner-4f7feb7/.)
#
#   scripts/gpu/scanner_vs_cli.sh        writes $OUT/scanner_vs_cli.csv (default ./)
#
# Columns: round, n, variant, impl (scanner, cli), median_us, min_us. The summary on stdout:
# per size, the medians' spread of each side and the Scanner's median over the CLI's.
# Environment: ROUNDS (3), CALLS (30), SIZES ("100000000 268435456"), REDUCE (.gpu/bin/reduce),
# SCANNER (.gpu/bin/scanner_time). Exit status 0 when every run passed, 1 otherwise, 2 when a
# binary is missing.
set -uo pipefail
bin=${REDUCE:-.gpu/bin/reduce}; scanner=${SCANNER:-.gpu/bin/scanner_time}
for b in "$bin" "$scanner"; do
  [ -x "$b" ] || { echo "scanner_vs_cli: no binary at $b (build the bundle into .gpu/)" >&2; exit 2; }
done
out=${OUT:-.}; mkdir -p "$out"
rounds=${ROUNDS:-3}; calls=${CALLS:-30}; sizes=${SIZES:-100000000 268435456}
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
csv=$out/scanner_vs_cli.csv
echo "round,n,variant,impl,median_us,min_us" >"$csv"
status=0
lib() { # $1 round, $2 n: the Scanner's row; prints its variant
  "$scanner" --calls "$calls" "$2" >"$tmp/s.csv" 2>"$tmp/s.log" || { status=1; cat "$tmp/s.log" >&2; return; }
  tail -1 "$tmp/s.csv" | awk -F, -v r="$1" '{print r","$2","$3",scanner,"$4","$5}' >>"$csv"
}
cli() { # $1 round, $2 n, $3 variant
  "$bin" --op scan --backend gpu --n "$2" --variant "$3" --kind inclusive --repeat "$calls" --format csv \
    >"$tmp/c.csv" 2>"$tmp/c.log" || { status=1; tail -1 "$tmp/c.log" >&2; }
  python3 - "$tmp/c.csv" "$1" "$2" "$3" >>"$csv" <<'PY' || status=1
import csv, sys
path, rnd, n, v = sys.argv[1:]
rows = [r for r in csv.DictReader(open(path)) if r.get("variant") == v]
if not rows or not rows[0]["verdict"].startswith("PASS"):
    sys.exit(f"scanner_vs_cli: no passing row of {v} at n = {n}")
print(f"{rnd},{n},{v},cli,{rows[0]['time_us_median']},{rows[0]['time_us_min']}")
PY
}
for round in $(seq 1 "$rounds"); do
  for n in $sizes; do
    if [ $((round % 2)) -eq 1 ]; then
      lib "$round" "$n"; v=$(tail -1 "$csv" | cut -d, -f3); cli "$round" "$n" "$v"
    else
      v=$(awk -F, -v n="$n" '$2==n && $4=="scanner"{v=$3} END{print v}' "$csv")
      cli "$round" "$n" "$v"; lib "$round" "$n"
    fi
    echo "scanner_vs_cli: round $round n $n: $(grep "^$round,$n," "$csv" | cut -d, -f4,5 | tr '\n' ' ')" >&2
  done
done
python3 - "$csv" <<'PY'
import csv, collections, statistics, sys
g = collections.defaultdict(list)
for r in csv.DictReader(open(sys.argv[1])):
    g[(int(r["n"]), r["variant"], r["impl"])].append(float(r["median_us"]))
for n, v in sorted({(n, v) for n, v, _ in g}):
    s, c = g.get((n, v, "scanner"), []), g.get((n, v, "cli"), [])
    if s and c:
        ratio = statistics.median(s) / statistics.median(c)
        print(f"n={n} {v}: Scanner {statistics.median(s):.1f} [{min(s):.1f}, {max(s):.1f}] µs, "
              f"CLI {statistics.median(c):.1f} [{min(c):.1f}, {max(c):.1f}] µs, Scanner/CLI {ratio:.4f}")
PY
exit $status
