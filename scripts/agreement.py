#!/usr/bin/env python3
"""The emulator's counters against Nsight Compute's, variant by variant.

    scripts/agreement.py DIR [--md FILE]

DIR holds `reduce --metrics --format csv` output of both sides for the same selection, n and
block (`scripts/gpu/metrics.sh`): `{family}_2eK.csv` from the GPU (ncu) and
`emu_{family}_2eK.csv` from the emulator (run with REDUCE_EMULATED_SMS set to the GPU's SM
count, so that the grids that fill the device are the same). Writes DIR/agreement.csv (one row
per variant × counter: ncu, emulator, difference, target, within it, why not) and prints a
Markdown table (or writes it to FILE): one row per variant, a cell per counter.

Targets (issue #22): load and store efficiency within 0.1 percentage points; requests, sectors
and wavefronts within 1 %; bank conflicts within 5 % (or both 0).
"""

import argparse
import csv
import glob
import os
import sys

# (column, short title, kind): kind "pct" compares in points, "count" relative, "conflicts" 5 %.
COUNTERS = [
    ("gld_efficiency_pct", "gld eff %", "pct"),
    ("gst_efficiency_pct", "gst eff %", "pct"),
    ("gld_requests", "gld req", "count"),
    ("gld_sectors", "gld sect", "count"),
    ("gst_requests", "gst req", "count"),
    ("gst_sectors", "gst sect", "count"),
    ("shared_ld_requests", "sh ld req", "count"),
    ("shared_ld_wavefronts", "sh ld wf", "count"),
    ("shared_st_requests", "sh st req", "count"),
    ("shared_st_wavefronts", "sh st wf", "count"),
    ("shared_ld_bank_conflicts", "bank ld", "conflicts"),
    ("shared_st_bank_conflicts", "bank st", "conflicts"),
]

# Why a counter cannot agree: (variant prefix, column prefix) → reason. Measured, not assumed:
# each entry is a disagreement seen in the committed CSVs.
WHY = [
    ("lookback", "gld", "the tile arrives by cp.async, which ncu counts as LDGSTS and not as a global load, and the "
     "emulator as the global load it performs; what is left on the GPU is the look-back's polls of other tiles' "
     "status words, whose number depends on timing"),
    ("lookback", "shared_ld", "the compiler reads the eight warp totals with two 128-bit shared loads where the "
     "source makes eight scalar reads (114 tiles × 8 warps × 6 = the 5,472 requests of difference)"),
    ("lookback", "shared_st", "cp.async's shared half is a shared store in the emulator, not in ncu's shared "
     "counters (72 warp requests per tile)"),
    ("bit", "shared_ld", "the GPU makes exactly one shared load request per warp fewer (8,192 = 512 blocks × 16 "
     "warps): most likely `bit_query`'s two reads of the adjacent words `span` and `span + 1`, which the compiler "
     "may fetch with one 64-bit load (not checked in the SASS)"),
    ("smem", "shared_ld", "ncu reports conflicts (1,765) and extra wavefronts on requests whose addresses are "
     "conflict-free (each lane a different bank); the emulator counts by address only, which is what the lesson "
     "is about"),
    ("blelloch_unpadded", "shared_ld", "the compiler's, not the source's: LLVM unrolled the unpadded sweeps fully "
     "(21 barriers inline in the PTX, against blelloch's 5 in two loops), and with every offset a constant the GPU "
     "runs 12,576 fewer shared loads than the source's reads at 2^20 (the padded loops agree exactly); fewer "
     "requests, fewer wavefronts and conflicts counted. Which reads it dropped is not checked in the SASS"),
    ("redux", "shared_st", "as smem: ncu's extra wavefronts on stores whose addresses are conflict-free"),
    ("bit", "shared_st", "as smem: ncu's extra wavefronts on stores whose addresses are conflict-free"),
]


def load(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def key(row):
    return row["variant"] + (f" {row['kind']}" if row.get("kind") else "")


def number(text):
    try:
        return float(text)
    except (TypeError, ValueError):
        return None


def judge(kind, gpu, emu):
    """(difference as shown, within target)."""
    if kind == "pct":
        d = emu - gpu
        return f"{d:+.3f} pt", abs(d) <= 0.1
    if gpu == emu:
        return "0", True
    base = max(abs(gpu), 1.0)
    d = (emu - gpu) / base * 100
    return f"{d:+.2f} %", abs(d) <= (5.0 if kind == "conflicts" else 1.0)


def why(variant, column):
    for v, c, text in WHY:
        if variant.startswith(v) and column.startswith(c):
            return text
    return ""


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("dir")
    p.add_argument("--md")
    a = p.parse_args()
    pairs = []
    for emu_path in sorted(glob.glob(os.path.join(a.dir, "emu_*.csv"))):
        gpu_path = os.path.join(a.dir, os.path.basename(emu_path)[4:])
        if not os.path.exists(gpu_path):
            sys.exit(f"no GPU side for {emu_path}: expected {gpu_path}")
        gpu = {key(r): r for r in load(gpu_path)}
        for r in load(emu_path):
            if key(r) in gpu:
                pairs.append((key(r), gpu[key(r)], r))
    if not pairs:
        sys.exit(f"no emu_*.csv with a GPU side in {a.dir}")
    rows, table = [], []
    for name, g, e in pairs:
        cells = []
        for col, _, kind in COUNTERS:
            gv, ev = number(g.get(col)), number(e.get(col))
            if gv is None or ev is None:
                cells.append("—")
                continue
            shown, ok = judge(kind, gv, ev)
            reason = "" if ok else why(name, col)
            rows.append([name, col, g.get(col), e.get(col), shown, ok, reason])
            cells.append(("✓" if ok else "✗") + ("" if shown in ("0", "+0.000 pt") else f" {shown}"))
        table.append((name, cells))
    out = os.path.join(a.dir, "agreement.csv")
    with open(out, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["variant", "counter", "ncu", "emulator", "difference", "within_target", "why_not"])
        w.writerows(rows)
    lines = ["| variant | " + " | ".join(t for _, t, _ in COUNTERS) + " |",
             "|---|" + "---|" * len(COUNTERS)]
    lines += [f"| {n} | " + " | ".join(c) + " |" for n, c in table]
    misses = sorted({(r[0].split()[0], r[1], r[6]) for r in rows if not r[5]})
    ok = sum(1 for r in rows if r[5])
    lines += ["", f"{ok} of {len(rows)} comparisons within target. Where not:", ""]
    lines += [f"* `{v}` `{c}`: {w or 'not explained'}" for v, c, w in misses]
    text = "\n".join(lines) + "\n"
    if a.md:
        with open(a.md, "w") as f:
            f.write(text)
    else:
        sys.stdout.write(text)
    print(f"wrote {out}", file=sys.stderr)


if __name__ == "__main__":
    main()
