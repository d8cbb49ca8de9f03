#!/usr/bin/env bash
# Issue #37 on a GPU host: the library's `Scanner<T, Sum>` (T = i32, or TYPE: u32, i64, u64)
# against the kernel it runs, launched directly, in one process (examples/scanner_time.rs, bundled as
# .gpu/bin/scanner_time): ROUNDS rounds at each of SIZES, CALLS timed calls of each per row,
# alternating call by call, every output checked on the device.
#
#   scripts/gpu/scanner_time.sh        writes $OUT/scanner_time.csv (default ./)
#
# Columns: round, n, variant, scanner_us_median, kernel_us_median, scanner_over_kernel, type. The
# summary on stdout: per size, the rounds' spread of both medians and of the ratio.
# Environment: TYPE (i32), ROUNDS (3), CALLS (30), SIZES ("100000000 268435456"), SCANNER
# (.gpu/bin/scanner_time). Exit status: the example's (0 when every call passed its check; 2
# when the binary is missing).
set -uo pipefail
scanner=${SCANNER:-.gpu/bin/scanner_time}
[ -x "$scanner" ] || { echo "scanner_time: no binary at $scanner (build it into .gpu/bin/)" >&2; exit 2; }
out=${OUT:-.}; mkdir -p "$out"
csv=$out/scanner_time.csv
# shellcheck disable=SC2086
"$scanner" --type "${TYPE:-i32}" --rounds "${ROUNDS:-3}" --calls "${CALLS:-30}" ${SIZES:-100000000 268435456} >"$csv"
status=$?
python3 - "$csv" <<'PY'
import csv, collections, statistics, sys
g = collections.defaultdict(list)
for r in csv.DictReader(open(sys.argv[1])):
    g[(int(r["n"]), f'{r["variant"]} ({r["type"]})')].append((float(r["scanner_us_median"]), float(r["kernel_us_median"]), float(r["scanner_over_kernel"])))
for (n, v), rows in sorted(g.items()):
    s, k, x = zip(*rows)
    # The median of the rounds (of an even count, the mean of the middle two).
    print(f"n={n} {v}: Scanner {statistics.median(s):.1f} [{min(s):.1f}, {max(s):.1f}] µs, kernel "
          f"{statistics.median(k):.1f} [{min(k):.1f}, {max(k):.1f}] µs, Scanner/kernel {statistics.median(x):.4f} [{min(x):.4f}, {max(x):.4f}]")
PY
exit $status
