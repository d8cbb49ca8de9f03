#!/usr/bin/env python3
"""The table of an A/B of builds (scripts/gpu/builds_ab.sh's ab.csv, ab_2.csv, …) in Markdown.

    python3 scripts/ab_table.py AB.csv [AB_2.csv ...] [BASE [OTHER ...]]

One line per row, one column per build: the range of the medians over the rounds, and for every
build but the base its mean against the base's (+: slower). A row is named by the file's `row`
column (the arguments builds_ab.sh gave it); files written before that column (their build
column is `variant`, their rows select's) by operation, type and keep. BASE defaults to the
build of the first file's first line, the others to the rest in order of appearance. A row a
build did not PASS is marked; a line with no result is counted and named on stderr, not tabled.
Exit status 2 on a file it cannot read or an unknown build.
"""
import csv
import sys
from collections import defaultdict


def load(paths):
    times, verdicts, rows, builds = defaultdict(list), defaultdict(set), [], []
    for path in paths:
        empty = 0
        with open(path, newline="") as f:
            reader = csv.DictReader(f)
            new = "build" in (reader.fieldnames or [])
            for r in reader:
                if not r.get("time_us_median"):
                    empty += 1
                    continue
                build = r["build"] if new else r["variant"]
                row = r["row"] if new else f"{r['operation']} {r['type']} {r['keep']}"
                if row not in rows:
                    rows.append(row)
                if build not in builds:
                    builds.append(build)
                times[(row, build)].append(float(r["time_us_median"]))
                verdicts[(row, build)].add(r["verdict"])
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
    files = [a for a in argv[1:] if a.endswith(".csv")]
    chosen = [a for a in argv[1:] if not a.endswith(".csv")]
    if not files:
        print("usage: ab_table.py AB.csv [AB_2.csv ...] [BASE [OTHER ...]]", file=sys.stderr)
        return 2
    try:
        times, verdicts, rows, builds = load(files)
    except (OSError, KeyError, ValueError) as e:
        print(f"ab_table: {' '.join(files)} is not an A/B of builds ({e})", file=sys.stderr)
        return 2
    chosen = chosen or builds
    unknown = [b for b in chosen if b not in builds]
    if unknown:
        print(f"ab_table: no build {unknown[0]} in {' '.join(files)} (it has {', '.join(builds)})", file=sys.stderr)
        return 2
    base = chosen[0]
    print("| row | " + " | ".join(chosen) + " |")
    print("|---" * (len(chosen) + 1) + "|")
    for row in rows:
        print(f"| {row} | " + " | ".join(cell(times, verdicts, row, b, base) for b in chosen) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
