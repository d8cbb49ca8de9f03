#!/usr/bin/env python3
"""Issue #61's "within 1.15x a device-to-device copy of the same bytes read and written": for
each row of a CSV written by `reduce --format csv` (operation, type, keep, time_us_median,
gb_per_s_rw; the rows of `scripts/gpu/select.sh` or an A/B of them), the bytes the row reads
and writes (gb_per_s_rw x time), and a device-to-device copy moving as many (half of them
read, half written: `dst.copy_(src)` of torch uint8 tensors, cudaMemcpyAsync) timed as the
command line times ours: the median of RUNS calls, each between two CUDA events, after 3
untimed. The copies run in ROUNDS interleaved rounds (every row's copy once a round); each
row's figure is its rounds' medians, lowest and highest.

    python3 scripts/gpu/select_copy.py CSV [ROUNDS] [RUNS] [VARIANT]
        CSV: columns as `reduce --format csv` writes them, optionally after `variant,round,`;
        VARIANT keeps only that variant's rows (its last round's time is the one compared).
    prints CSV: operation,type,keep,bytes,ours_us,copy_us_low,copy_us_high,ours_over_copy
"""
import csv
import sys

import torch


def timed(runs, f):
    times = []
    for r in range(-3, runs):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        f()
        b.record()
        b.synchronize()
        if r >= 0:
            times.append(a.elapsed_time(b) * 1000.0)
    times.sort()
    return times[runs // 2] if runs % 2 else 0.5 * (times[runs // 2 - 1] + times[runs // 2])


def main():
    if len(sys.argv) < 2:
        print("select_copy: usage: select_copy.py CSV [ROUNDS] [RUNS] [VARIANT]", file=sys.stderr)
        sys.exit(2)
    rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 2
    runs = int(sys.argv[3]) if len(sys.argv) > 3 else 20
    variant = sys.argv[4] if len(sys.argv) > 4 else None
    rows = {}
    with open(sys.argv[1]) as f:
        for r in csv.DictReader(line for line in f if not line.startswith("#")):
            if variant and r.get("variant") != variant:
                continue
            if not r.get("time_us_median"):
                continue
            key = (r["operation"], r["type"], r["keep"])
            t = float(r["time_us_median"])
            rows[key] = (t, round(float(r["gb_per_s_rw"]) * 1e3 * t))
    copies = {k: [] for k in rows}
    for _ in range(rounds):
        for key, (_, moved) in rows.items():
            half = moved // 2
            src = torch.empty(half, dtype=torch.uint8, device="cuda")
            dst = torch.empty(half, dtype=torch.uint8, device="cuda")
            copies[key].append(timed(runs, lambda: dst.copy_(src)))
            del src, dst
    print("operation,type,keep,bytes,ours_us,copy_us_low,copy_us_high,ours_over_copy")
    for key, (t, moved) in rows.items():
        lo, hi = min(copies[key]), max(copies[key])
        print(f"{key[0]},{key[1]},{key[2]},{moved},{t:.1f},{lo:.1f},{hi:.1f},{t / hi:.3f}-{t / lo:.3f}")


if __name__ == "__main__":
    main()
