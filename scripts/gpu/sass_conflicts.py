#!/usr/bin/env python3
"""ncu's bank conflicts from each SASS instruction's addresses, for the agreement tables (issue #40).

    scripts/gpu/sass_conflicts.py DIR [REDUCE_BINARY]      default binary: .gpu/bin/reduce

ncu's hardware counter (`l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_{ld,st}`, the
`shared_*_bank_conflicts` of `--metrics`) counts conflicts on requests whose addresses are
conflict-free, a different number from run to run (docs/counters.md). Its source counters do not:
for every shared-memory instruction they give the wavefronts it took and the wavefronts its
addresses need (`memory_l1_wavefronts_shared`, `memory_l1_wavefronts_shared_ideal`, from the SASS
instrumentation), and the excess, `derived__memory_l1_wavefronts_shared_excessive`, is a bank
conflict as the emulator counts one (wavefronts − the wavefronts a conflict-free access needs).

For every row of the GPU's `reduce --metrics` CSVs in DIR (`{name}.csv` beside an
`emu_{name}.csv`: scripts/gpu/agreement.sh), this runs the same variant, n and block (a scan at
its own block, one kind at a time) once under `ncu --section SourceCounters`, reads the report's
raw page, and keeps one run of the variant's kernels (the CLI's untimed run; the timed one is
checked to have the same kernels and figures). Writes DIR/sass_conflicts.csv: variant, kind, the kernels, and the shared
wavefronts, ideal wavefronts and excess (loads, stores and atomics together: the raw page does not
split them), which scripts/agreement.py compares with the emulator's load and store conflicts.
SKIP="v1 v2" leaves variants out. Progress on stderr; exit status 2 without ncu or the binary, 1 if a run failed.
"""

import csv
import glob
import os
import re
import shutil
import subprocess
import sys
import tempfile

METRICS = ("memory_l1_wavefronts_shared", "memory_l1_wavefronts_shared_ideal",
           "derived__memory_l1_wavefronts_shared_excessive")
# Kernels of the CLI's own that are no variant's (the stream's hold between runs).
NOT_A_VARIANT = ("stream_hold",)


def number(text):
    try:
        return float(str(text).replace(",", ""))
    except ValueError:
        return None


def raw_launches(ncu, report):
    """(kernel, {metric: value}) per profiled launch, in launch order, from the raw page."""
    text = subprocess.run([ncu, "--import", report, "--page", "raw", "--csv"], check=True,
                          capture_output=True, text=True).stdout
    rows = list(csv.reader(line for line in text.splitlines() if not line.startswith("==")))
    head = rows[0]
    at = {name: head.index(name) for name in ("ID", "Kernel Name") + METRICS}
    out = []
    for r in rows[1:]:
        if len(r) != len(head) or number(r[at["ID"]]) is None:
            continue  # the units row
        out.append((int(number(r[at["ID"]])), r[at["Kernel Name"]],
                    {m: number(r[at[m]]) or 0.0 for m in METRICS}))
    return [(k, v) for _, k, v in sorted(out) if k.split("(")[0].split("<")[0].strip() not in NOT_A_VARIANT]


def runs(launches):
    """The launches split into the CLI's runs of the variant (its untimed run, then its timed one with
    `--repeat 1`): two halves with the same kernels in the same order, else one run of them all."""
    half = len(launches) // 2
    first, second = launches[:half], launches[half:]
    if half and len(first) == len(second) and [k for k, _ in first] == [k for k, _ in second]:
        return [first, second]
    return [launches] if launches else []


def total(run):
    return {m: sum(v[m] for _, v in run) for m in METRICS}


def command(bin_, family, row, block):
    n = row["n"]
    if family == "scan":
        return [bin_, "--op", "scan", "--backend", "gpu", "--variant", row["variant"], "--kind", row["kind"],
                "--n", n, "--repeat", "1"]
    return [bin_, "--backend", "gpu", "--family", family, "--variant", row["variant"], "--n", n,
            "--block", block or row["block"], "--repeat", "1"]


def main():
    if len(sys.argv) not in (2, 3) or not os.path.isdir(sys.argv[1]):
        print("sass_conflicts: usage: scripts/gpu/sass_conflicts.py DIR [REDUCE_BINARY] (DIR: a folder of "
              "`reduce --metrics` CSVs, {name}.csv beside emu_{name}.csv)", file=sys.stderr)
        sys.exit(2)
    out_dir = sys.argv[1]
    bin_ = os.path.abspath(sys.argv[2] if len(sys.argv) > 2 else ".gpu/bin/reduce")
    ncu = shutil.which("ncu") or next(iter(sorted(glob.glob("/usr/local/cuda*/bin/ncu"))), None)
    if not os.access(bin_, os.X_OK) or not ncu:
        print(f"sass_conflicts: needs {bin_} and ncu", file=sys.stderr)
        sys.exit(2)
    # SKIP: variants left out (agreement.sh leaves out the nested reductions: minutes each under
    # ncu, and no shared memory).
    skip = tuple(os.environ.get("SKIP", "").split())
    # The block the reductions ran at: the folder's `_bNNN` (a row's own block may be the
    # variant's, e.g. 1 for squares_one_thread), else each row's.
    shape_block = re.search(r"_b(\d+)$", os.path.normpath(out_dir))
    block = shape_block.group(1) if shape_block else None
    jobs = []
    for emu in sorted(glob.glob(os.path.join(out_dir, "emu_*.csv"))):
        gpu = os.path.join(out_dir, os.path.basename(emu)[4:])
        family = os.path.basename(gpu).split("_")[0]
        if os.path.exists(gpu):
            with open(gpu, newline="") as f:
                jobs += [(family, r) for r in csv.DictReader(f)
                         if r.get("n") and r.get("variant") not in ("cub",) + skip]
    rows, status = [], 0
    with tempfile.TemporaryDirectory(prefix="sass-conflicts-") as tmp:
        for i, (family, row) in enumerate(jobs, 1):
            name = row["variant"] + (f" {row['kind']}" if row.get("kind") else "")
            print(f"sass_conflicts: {i}/{len(jobs)} {family} {name}", file=sys.stderr)
            report = os.path.join(tmp, "r")
            run = subprocess.run([ncu, "--section", "SourceCounters", "-f", "-o", report] + command(bin_, family, row, block),
                                 capture_output=True, text=True)
            if run.returncode != 0 or not os.path.exists(report + ".ncu-rep"):
                print(f"   failed ({run.returncode}): {(run.stderr or run.stdout).strip().splitlines()[-1:]}",
                      file=sys.stderr)
                status = 1
                continue
            groups = runs(raw_launches(ncu, report + ".ncu-rep"))
            first = total(groups[0]) if groups else {m: 0.0 for m in METRICS}
            same = all(total(g) == first for g in groups)
            rows.append([row["variant"], row.get("kind", ""), " ".join(k for k, _ in groups[0]) if groups else "",
                         len(groups), same] + [int(first[m]) for m in METRICS])
            if not same:
                print(f"   the runs differ: {[total(g) for g in groups]}", file=sys.stderr)
    path = os.path.join(out_dir, "sass_conflicts.csv")
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["variant", "kind", "kernels", "runs", "runs_equal", "shared_wavefronts_sass",
                    "shared_wavefronts_ideal_sass", "shared_bank_conflicts_sass"])
        w.writerows(rows)
    print(f"sass_conflicts: wrote {path} ({len(rows)} rows)", file=sys.stderr)
    sys.exit(status)


if __name__ == "__main__":
    main()
