#!/usr/bin/env python3
"""PyTorch's counterparts of `reduce --op select` and `--op unique` on the same shapes (values
uniform over [0, 1000), drawn by torch: the same distribution as the command line's, not the
same values): torch.masked_select(x, x < 500) and (x < 10), and torch.unique_consecutive on
runs of exactly L equal values (L = 1, 16, 1024). The median of RUNS calls, each between two
CUDA events (the mask's comparison included: masked_select needs the mask made). With
`run_length`: torch.unique_consecutive(return_counts=True) on the same runs (i32 at L = 1, 16,
1024; f32 at 16), the counterpart of `reduce --op run_length`.

    python3 scripts/gpu/select_torch.py [N] [RUNS] [run_length]   (CSV: op,type,keep,n,kept,median_us)
"""
import sys

import torch


def timed(runs, f):
    times = []
    out = None
    for r in range(-3, runs):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        out = f()
        b.record()
        b.synchronize()
        if r >= 0:
            times.append(a.elapsed_time(b) * 1000.0)
    times.sort()
    med = times[runs // 2] if runs % 2 else 0.5 * (times[runs // 2 - 1] + times[runs // 2])
    return med, out


def main():
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 1 << 28
    runs = int(sys.argv[2]) if len(sys.argv) > 2 else 20
    torch.manual_seed(61)
    print("op,type,keep,n,kept,median_us")
    if len(sys.argv) > 3 and sys.argv[3] == "run_length":
        for name, dtype, run in (("i32", torch.int32, 1), ("i32", torch.int32, 16), ("i32", torch.int32, 1024),
                                 ("f32", torch.float32, 16)):
            v = torch.randint(0, 1000, (n // run,), device="cuda", dtype=torch.int32).to(dtype)
            x = torch.repeat_interleave(v, run)
            med, (out, counts) = timed(runs, lambda: torch.unique_consecutive(x, return_counts=True))
            assert int(counts.sum()) == x.numel()
            print(f"unique_consecutive_counts,{name},run:{run},{x.numel()},{out.numel()},{med:.2f}")
            del v, x
        return
    for name, dtype in (("i32", torch.int32), ("f32", torch.float32)):
        x = torch.randint(0, 1000, (n,), device="cuda", dtype=torch.int32).to(dtype)
        for bound in (500, 10):
            med, out = timed(runs, lambda: torch.masked_select(x, x < bound))
            print(f"masked_select,{name},lt:{bound},{n},{out.numel()},{med:.2f}")
        del x
        for run in (1, 16, 1024):
            v = torch.randint(0, 1000, (n // run,), device="cuda", dtype=torch.int32).to(dtype)
            x = torch.repeat_interleave(v, run)
            med, out = timed(runs, lambda: torch.unique_consecutive(x))
            print(f"unique_consecutive,{name},run:{run},{x.numel()},{out.numel()},{med:.2f}")
            del v, x


if __name__ == "__main__":
    main()
