#!/usr/bin/env python3
"""The per-round table of a warp-specialized sweep folder (issue #37): for each type folder
(i32, u32, f32, ... holding scripts/gpu/warpspec_sweep.sh's warpspec_sweep.csv) and size, how
many rounds timed both `lookback_warpspec_8x12x6` and `lookback`, the ranges of their medians,
`lookback` ÷ 8x12x6 per round and in how many rounds 8x12x6 was faster, the packed layout ÷ the
spaced one, both × the copy (i32 sums), and CUB's time ÷ 8x12x6's. Markdown on stdout.

    scripts/gpu/warpspec_rounds.py FOLDER      e.g. docs/measurements/2026-11-28-h200/warpspec-plan-spaced-52870fc
"""
import collections
import csv
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from docs_from_csv import size_label  # noqa: E402  (the docs' names for sizes: 2^28, 1.5·2^27, 10^8)

SPACED, PACKED, LOOKBACK = "lookback_warpspec_8x12x6", "lookback_warpspec_8x12x6_packed", "lookback"


def span(xs, fmt):
    lo, hi = fmt % min(xs), fmt % max(xs)
    return lo if lo == hi else f"{lo}–{hi}"


def rounds_of(path):
    """{n: [{variant: µs}, ...]}, one dict per round, of the rows that passed or are references."""
    g = collections.defaultdict(dict)
    for r in csv.DictReader(open(path)):
        if r["verdict"].startswith(("PASS", "REFERENCE")) and r["time_us_median"]:
            g[(int(r["n"]), r["round"])][r["variant"]] = float(r["time_us_median"])
            if r.get("cub_time_us") and r["variant"] == SPACED:
                g[(int(r["n"]), r["round"])].setdefault("cub", float(r["cub_time_us"]))
    out = collections.defaultdict(list)
    for (n, _), v in sorted(g.items()):
        if SPACED in v and LOOKBACK in v:
            out[n].append(v)
    return out


def table(folder):
    """The table's lines; ValueError where the folder holds no sweep or a CSV is not a sweep's."""
    lines = [
        "| type | n | rounds | 8x12x6 | `lookback` | `lookback` ÷ 8x12x6 | 8x12x6 faster | packed ÷ spaced "
        "| 8x12x6 × copy | `lookback` × copy | CUB ÷ 8x12x6 |",
        "|" + "---|" * 11,
    ]
    found = 0
    for t in ("i32", "u32", "i64", "u64", "f32", "f64"):
        path = os.path.join(folder, t, "warpspec_sweep.csv")
        if not os.path.isfile(path):
            continue
        found += 1
        try:
            by_size = rounds_of(path)
        except (KeyError, ValueError, csv.Error) as e:
            raise ValueError(f"{path} is not a warpspec_sweep.sh CSV ({type(e).__name__}: {e})") from e
        for n, rs in sorted(by_size.items()):
            ratio = lambda a, b: [v[a] / v[b] for v in rs if a in v and b in v]
            cell = lambda xs: span(xs, "%.3f") if xs else ""
            q = ratio(LOOKBACK, SPACED)
            lines.append(
                f"| {t} | {size_label(n)} | {len(rs)} | {span([v[SPACED] for v in rs], '%.1f')} | "
                f"{span([v[LOOKBACK] for v in rs], '%.1f')} | {cell(q)} | {sum(x > 1 for x in q)} of {len(rs)} | "
                f"{cell(ratio(PACKED, SPACED))} | {cell(ratio(SPACED, 'd2d_copy'))} | "
                f"{cell(ratio(LOOKBACK, 'd2d_copy'))} | {cell(ratio('cub', SPACED))} |"
            )
    if not found:
        raise ValueError(f"{folder} has no <type>/warpspec_sweep.csv (i32, u32, i64, u64, f32, f64)")
    return lines


def main():
    usage = "warpspec_rounds.py: give one folder with a warpspec_sweep.csv in each type's folder"
    if len(sys.argv) != 2 or not os.path.isdir(sys.argv[1]):
        print(usage, file=sys.stderr)
        return 2
    try:
        lines = table(sys.argv[1])
    except (ValueError, OSError) as e:
        print(f"warpspec_rounds.py: {e}", file=sys.stderr)
        return 2
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
