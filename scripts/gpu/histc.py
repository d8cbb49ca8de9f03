#!/usr/bin/env python3
"""torch.histc on the f32 samples of examples/histogram_even.rs (24 bits of SplitMix64 of the
index, as an f32 in [0, 1)), 256 bins over [0, 1): the median of RUNS calls, each between two
CUDA events, and the counters' FNV-1a hash beside the example's (torch's bin rule may put a
sample on an edge in another bin, so the hashes may differ; the count of samples may not).

    python3 scripts/gpu/histc.py [N] [RUNS]     (CSV: distribution,n,bins,median_us,gb_per_s,counts_hash,total)
"""
import sys

import numpy as np
import torch


def mix(x):
    with np.errstate(over="ignore"):
        z = x + np.uint64(0x9E3779B97F4A7C15)
        z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        return z ^ (z >> np.uint64(31))


def main():
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 1 << 28
    runs = int(sys.argv[2]) if len(sys.argv) > 2 else 20
    chunks = []
    for start in range(0, n, 1 << 24):
        i = np.arange(start, min(n, start + (1 << 24)), dtype=np.uint64)
        chunks.append(((mix(i) >> np.uint64(40)).astype(np.float32) / np.float32(1 << 24)))
    x = torch.from_numpy(np.concatenate(chunks)).cuda()
    times = []
    for r in range(-3, runs):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        h = torch.histc(x, bins=256, min=0.0, max=1.0)
        b.record()
        b.synchronize()
        if r >= 0:
            times.append(a.elapsed_time(b) * 1000.0)
    times.sort()
    med = times[runs // 2] if runs % 2 else 0.5 * (times[runs // 2 - 1] + times[runs // 2])
    counts = h.to(torch.int64).cpu().numpy().astype(np.uint32)
    fnv = 0xCBF29CE484222325
    for byte in counts.astype("<u4").tobytes():
        fnv = ((fnv ^ byte) * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    print("distribution,n,bins,median_us,gb_per_s,counts_hash,total")
    print(f"f32,{n},256,{med:.2f},{n * 4 / med / 1e3:.1f},{fnv:016x},{int(counts.sum())}")


if __name__ == "__main__":
    main()
