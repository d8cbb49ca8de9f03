#!/usr/bin/env python3
"""The summary of one scripts/gpu/copy_bound.sh run: for every copy kernel, scan step and scan,
the range of its per-round times at 2^28 int32 and of its time over the copy's in the same round
(the CUDA C programs against their own cudaMemcpy, the CLI's scans against its device-to-device
copy), fastest first.

    scripts/gpu/copy_bound_summary.py OUT_FOLDER
"""
import csv
import glob
import os
import sys


def rows_of(folder):
    """(name, µs, × copy) for every timed row of the run in `folder`, one per round."""
    out = []
    for name in ("copy_kernels.csv", "scan_steps.csv"):
        path = os.path.join(folder, name)
        if not os.path.exists(path):
            continue
        rows = [r for r in csv.reader(open(path)) if r and r[0].isdigit()]
        copy = {r[0]: float(r[4]) for r in rows if r[1] == "cudaMemcpy"}
        for r in rows:
            if r[1] != "cudaMemcpy":
                out.append((" ".join(x for x in r[1:4] if x), float(r[4]), float(r[4]) / copy[r[0]]))
    for path in sorted(glob.glob(os.path.join(folder, "scan_round_*", "warpspec_sweep.csv"))):
        rows = list(csv.DictReader(open(path)))
        copy = [float(r["time_us_median"]) for r in rows if r["variant"] == "d2d_copy"]
        for r in rows:
            if r["variant"] != "d2d_copy" and copy:
                t = float(r["time_us_median"])
                out.append(("sweep " + r["variant"], t, t / copy[0]))
    return out


def main():
    if len(sys.argv) != 2 or not os.path.isdir(sys.argv[1]):
        print("copy_bound_summary.py: give one folder, copy_bound.sh's OUT", file=sys.stderr)
        return 2
    by = {}
    for name, us, ratio in rows_of(sys.argv[1]):
        by.setdefault(name, []).append((us, ratio))
    print(f"{'kernel':44s} {'µs':>17s} {'× copy':>13s}")
    for name, v in sorted(by.items(), key=lambda kv: min(t for t, _ in kv[1])):
        us = [t for t, _ in v]
        x = [r for _, r in v]
        print(f"{name:44s} {min(us):8.1f}-{max(us):<8.1f} {min(x):6.3f}-{max(x):<6.3f} ({len(v)} rounds)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
