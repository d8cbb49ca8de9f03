#!/usr/bin/env python3
"""Look-back figures of a select__* launch from ncu's source page.

    python3 scripts/ncu_lookback_stats.py SOURCE.csv [...]

SOURCE.csv is `ncu -i REPORT --page source --csv --print-source sass` of one launch of
`select__*` (a report taken with `--set full`). Prints, per file: the warp stall samples; the
windows of 32 predecessors read (the first `LD.E.64.STRONG.GPU`'s executions: warp 0 reads one
window a round trip, and a launch of T tiles looks back T - 1 times); the polls after a
sleep (`NANOSLEEP`'s executions: a window held a predecessor that had not published yet); and the share of the stall samples at the barrier
after the look-back (the three instructions after the kernel's last `BAR.SYNC`, where the
block's other warps wait for warp 0).
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from ncu_regions import load, number  # noqa: E402  (the source page's one reader)


def stats(path):
    col, _, data = load(path)
    samples, executed, barrier = (
        col["Warp Stall Sampling (All Samples)"],
        col["Instructions Executed"],
        col["stall_barrier"],
    )
    total = sum(number(r[samples]) for r in data)
    loads = [int(number(r[executed])) for r in data if "LD.E.64.STRONG.GPU" in r[1]]
    sleeps = sum(int(number(r[executed])) for r in data if "NANOSLEEP" in r[1])
    last = [k for k, r in enumerate(data) if "BAR.SYNC" in r[1]][-1]
    waiting = sum(number(r[barrier]) for r in data[last + 1 : last + 4])
    return total, loads[0], sleeps, waiting / total


def main():
    if len(sys.argv) < 2:
        print("usage: ncu_lookback_stats.py SOURCE.csv [...]", file=sys.stderr)
        return 2
    for path in sys.argv[1:]:
        try:
            total, windows, sleeps, share = stats(path)
        except (OSError, ValueError, IndexError, KeyError) as e:
            print(f"{path}: not an ncu source page of a select launch ({e})", file=sys.stderr)
            return 2
        print(f"{path}: {int(total)} stall samples; {windows} windows read; {sleeps} polls after a "
              f"sleep; {share:.1%} of the samples at the barrier after the look-back")
    return 0


if __name__ == "__main__":
    sys.exit(main())
