#!/usr/bin/env python3
"""The table of an A/B of builds (scripts/gpu/builds_ab.sh's ab.csv) in Markdown.

    python3 scripts/ab_table.py AB.csv [BASE [OTHER ...]]

One line per row (operation, type, keep), one column per build: the range of the medians over
the rounds, and for every build but the base its mean against the base's (+: slower). BASE
defaults to the build of the file's first line, the others to the rest in order of appearance.
A row a build did not PASS is marked; a line with no result (the command line refused the row:
builds_ab.sh then writes the variant and round alone) is counted and named on stderr, not
tabled. Exit status 2 on a file it cannot read or an unknown build.
"""
import csv
import sys
from collections import defaultdict


def load(path):
    times, verdicts, rows, builds = defaultdict(list), defaultdict(set), [], []
    empty = 0
    with open(path, newline="") as f:
        for r in csv.DictReader(f):
            if not r.get("operation") or not r.get("time_us_median"):
                empty += 1
                continue
            row = f"{r['operation']} {r['type']} {r['keep']}"
            if row not in rows:
                rows.append(row)
            if r["variant"] not in builds:
                builds.append(r["variant"])
            times[(row, r["variant"])].append(float(r["time_us_median"]))
            verdicts[(row, r["variant"])].add(r["verdict"])
    if empty:
        print(f"ab_table: {path}: {empty} line(s) with no result left out", file=sys.stderr)
    return times, verdicts, rows, builds


def cell(times, verdicts, row, build, base):
    t = times.get((row, build))
    if not t:
        return "–"
    text = f"{min(t):.1f}–{max(t):.1f}"
    b = times.get((row, base))
    if build != base and b:
        text += f" ({(sum(t) / len(t)) / (sum(b) / len(b)) - 1:+.1%})"
    if verdicts[(row, build)] != {"PASS"}:
        text += " **not PASS**"
    return text


def main(argv):
    if len(argv) < 2:
        print("usage: ab_table.py AB.csv [BASE [OTHER ...]]", file=sys.stderr)
        return 2
    try:
        times, verdicts, rows, builds = load(argv[1])
    except (OSError, KeyError, ValueError) as e:
        print(f"ab_table: {argv[1]} is not an A/B of builds ({e})", file=sys.stderr)
        return 2
    chosen = argv[2:] or builds
    unknown = [b for b in chosen if b not in builds]
    if unknown:
        print(f"ab_table: no build {unknown[0]} in {argv[1]} (it has {', '.join(builds)})", file=sys.stderr)
        return 2
    base = chosen[0]
    print("| row | " + " | ".join(chosen) + " |")
    print("|---" * (len(chosen) + 1) + "|")
    for row in rows:
        print(f"| {row} | " + " | ".join(cell(times, verdicts, row, b, base) for b in chosen) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
