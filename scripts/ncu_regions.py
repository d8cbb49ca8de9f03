#!/usr/bin/env python3
"""Where a kernel's warps wait, by stretch of SASS between barriers, from ncu's source page.

    python3 scripts/ncu_regions.py SOURCE.csv [TOP]

SOURCE.csv is `ncu -i REPORT --page source --csv --print-source sass` of one launch (a report
taken with `--set full`, whose source counters sample each warp's stall reason at its next
instruction). The SASS is cut after every `BAR.SYNC`, `DEPBAR` and `EXIT`; for each stretch it
prints the share of all stall samples, the three largest stall reasons, how many times its last
instruction ran (warp-level) and that instruction. A warp waiting at a barrier is sampled at the
instruction after it, so a barrier's wait shows in the stretch that follows it. Then the TOP
(default 10) instructions by samples, each with its largest reason.
"""
import csv
import sys
from collections import Counter

CUTS = ("BAR.SYNC", "DEPBAR", "EXIT")


def load(path):
    rows = list(csv.reader(open(path, newline="")))
    head, data = rows[1], rows[2:]
    col = {name: k for k, name in enumerate(head)}
    reasons = [h for h in head if h.startswith("stall_") and "Not Issued" not in h]
    return col, reasons, data


def number(text):
    return float(text.replace(",", "") or 0)


def main(argv):
    if len(argv) not in (2, 3) or (len(argv) == 3 and not argv[2].isdigit()):
        print("usage: ncu_regions.py SOURCE.csv [TOP]", file=sys.stderr)
        return 2
    try:
        col, reasons, data = load(argv[1])
        samples, executed = col["Warp Stall Sampling (All Samples)"], col["Instructions Executed"]
    except (OSError, IndexError, KeyError) as e:
        print(f"ncu_regions: {argv[1]} is not an ncu source page with stall samples ({e})", file=sys.stderr)
        return 2
    total = sum(number(r[samples]) for r in data) or 1.0
    start = 0
    print("share  reasons (of all samples)                         runs  ends with")
    for k, r in enumerate(data):
        if not any(c in r[1] for c in CUTS) and k != len(data) - 1:
            continue
        stretch, by = data[start : k + 1], Counter()
        for s in stretch:
            for name in reasons:
                by[name[6:]] += number(s[col[name]])
        share = sum(number(s[samples]) for s in stretch) / total
        top = ", ".join(f"{name} {v / total:.1%}" for name, v in by.most_common(3) if v > 0)
        print(f"{share:6.1%} {top:48.48} {r[executed]:>9}  {r[1].strip()[:48]}")
        start = k + 1
    count = int(argv[2]) if len(argv) == 3 else 10
    print(f"\nthe {count} instructions with the most samples:")
    for r in sorted(data, key=lambda r: -number(r[samples]))[:count]:
        name, v = max(((n[6:], number(r[col[n]])) for n in reasons), key=lambda x: x[1])
        print(f"{number(r[samples]) / total:6.1%} {r[0][-6:]:>6}  {r[1].strip()[:52]:52} {name}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
