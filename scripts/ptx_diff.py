#!/usr/bin/env python3
"""Compares two PTX builds of the kernels entry by entry: the proof that a change to the
kernels' source left the GPU code alone.

    scripts/ptx_diff.py BEFORE.ptx AFTER.ptx [--sass ARCH --ptxas PTXAS --nvdisasm NVDISASM]

Every `.entry` and `.func` of either file gets one verdict:

* `same`      the text of the function is identical;
* `renamed`   identical once virtual registers (`%r12`) and block labels (`$L__BB3_7`) are
              renumbered in order of first use: only names and numbering differ;
* `sass-same` (with --sass) the PTX differs, but ptxas compiles both to the same SASS
              instructions (addresses, encodings and comments stripped; branch targets
              renumbered in order of first use): the GPU runs the same code;
* `differs`   none of the above; the first differing line of the normalised text is shown;
* `only-before` / `only-after` the function exists in one build only.

Exit status 0 when every function is `same`, `renamed` or `sass-same`, 1 otherwise, 2 on bad
arguments. The nested PTX build leaves its files at `target/ptx/out/kernels-<tag>_sm_XX.s`, and
the build script's copies in its OUT_DIR as `kernels_sm_XX.ptx`.

`--ptxas` and `--nvdisasm` default to `.tools/ptxas/ptxas` and `.tools/nvdisasm/nvdisasm` where
they exist, else the PATH's. Neither needs a GPU: ptxas comes from PyPI's `nvidia-cuda-nvcc-cu12`
wheel (`./x test` fetches it), nvdisasm from its `nvidia-cuda-nvdisasm` wheel (the file
`nvidia/cu13/bin/nvdisasm` in it; CUDA 13.5's reads sm_90 cubins of ptxas 12.9).
"""

import argparse
import re
import subprocess
import sys
import tempfile
from pathlib import Path

HEADER = re.compile(r"^(?:\.visible\s+|\.weak\s+)?(\.entry|\.func)\s+(?:\([^)]*\)\s*)?([A-Za-z_$][\w$]*)")
REGISTER = re.compile(r"%(r|rd|rs|f|fd|p|h|hh|rq)(\d+)\b")
LABEL = re.compile(r"\$L__BB\d+_\d+")


def functions(text):
    """{name: body text} for every .entry and .func of a PTX file (declarations skipped)."""
    out = {}
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        m = HEADER.match(lines[i])
        if not m:
            i += 1
            continue
        name = m.group(2)
        start = i
        # A declaration ends with ';' before any '{'.
        j = i
        while j < len(lines) and "{" not in lines[j] and not lines[j].rstrip().endswith(";"):
            j += 1
        if j < len(lines) and lines[j].rstrip().endswith(";") and "{" not in lines[j]:
            i = j + 1
            continue
        depth = 0
        k = j
        while k < len(lines):
            depth += lines[k].count("{") - lines[k].count("}")
            if depth == 0 and "}" in lines[k]:
                break
            k += 1
        out[name] = "\n".join(lines[start : k + 1])
        i = k + 1
    return out


def renumber(text, pattern, key, fmt):
    seen = {}

    def sub(m):
        k = key(m)
        if k not in seen:
            seen[k] = sum(1 for s in seen if s[0] == k[0]) if isinstance(k, tuple) else len(seen)
        return fmt(m, seen[k])

    return pattern.sub(sub, text)


def normalise(body):
    """Register and label numbering by first use; `.reg` declarations (their counts) dropped."""
    lines = [l for l in body.splitlines() if not l.strip().startswith(".reg ")]
    text = "\n".join(lines)
    text = renumber(text, REGISTER, lambda m: (m.group(1), m.group(2)), lambda m, n: f"%{m.group(1)}{n}")
    text = renumber(text, LABEL, lambda m: m.group(0), lambda m, n: f"$L{n}")
    return text


def first_difference(a, b):
    al, bl = a.splitlines(), b.splitlines()
    for n, (x, y) in enumerate(zip(al, bl)):
        if x != y:
            return f"line {n + 1}: before `{x.strip()}` / after `{y.strip()}`"
    return f"lengths {len(al)} / {len(bl)} lines"


SASS_INSN = re.compile(r"/\*[0-9a-f]{4,}\*/\s*(.*?)\s*;")
SASS_FUNC = re.compile(r"\.text\.([\w$]+):")
SASS_TARGET = re.compile(r"`\(\.L_x_\d+\)|\.L_x_\d+")


def sass(ptx_file, arch, ptxas, nvdisasm, workdir):
    """{function: [instructions]} of the whole PTX file compiled by ptxas for `arch`."""
    cubin = Path(workdir) / (Path(ptx_file).stem + f"_{arch}.cubin")
    subprocess.run([ptxas, f"-arch={arch}", "-O3", "-o", str(cubin), str(ptx_file)], check=True)
    dis = subprocess.run([nvdisasm, "-c", str(cubin)], check=True, capture_output=True, text=True).stdout
    out, current = {}, None
    for line in dis.splitlines():
        m = SASS_FUNC.search(line)
        if m and line.strip().startswith(".text."):
            current = m.group(1)
            out[current] = []
            continue
        m = SASS_INSN.search(line)
        if m and current is not None:
            out[current].append(m.group(1))
    return out


def normalise_sass(insns):
    text = "\n".join(insns)
    return renumber(text, SASS_TARGET, lambda m: m.group(0), lambda m, n: f".L{n}")


def tool(name):
    """`.tools/NAME/NAME` of this checkout where it exists (`./x test` puts ptxas there), else
    NAME on the PATH."""
    here = Path(__file__).resolve().parent.parent / ".tools" / name / name
    return str(here) if here.is_file() else name


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("before")
    ap.add_argument("after")
    ap.add_argument("--sass", metavar="ARCH", help="compile both with ptxas for ARCH (sm_90) where PTX differs")
    ap.add_argument("--ptxas", default=tool("ptxas"))
    ap.add_argument("--nvdisasm", default=tool("nvdisasm"))
    ap.add_argument("--quiet", action="store_true", help="print only the summary and the failures")
    try:
        args = ap.parse_args()
        before_text = Path(args.before).read_text()
        after_text = Path(args.after).read_text()
    except OSError as e:
        print(f"ptx_diff: {e}", file=sys.stderr)
        sys.exit(2)
    before, after = functions(before_text), functions(after_text)
    verdicts = {}
    pending = []
    for name in sorted(set(before) | set(after)):
        if name not in after:
            verdicts[name] = ("only-before", "")
        elif name not in before:
            verdicts[name] = ("only-after", "")
        elif before[name] == after[name]:
            verdicts[name] = ("same", "")
        elif normalise(before[name]) == normalise(after[name]):
            verdicts[name] = ("renamed", "")
        else:
            verdicts[name] = ("differs", first_difference(normalise(before[name]), normalise(after[name])))
            pending.append(name)
    if pending and args.sass:
        with tempfile.TemporaryDirectory() as tmp:
            sb = sass(args.before, args.sass, args.ptxas, args.nvdisasm, tmp)
            sa = sass(args.after, args.sass, args.ptxas, args.nvdisasm, tmp)
        for name in pending:
            if name in sb and name in sa and normalise_sass(sb[name]) == normalise_sass(sa[name]):
                verdicts[name] = ("sass-same", f"{len(sb[name])} instructions")
            elif name in sb and name in sa:
                verdicts[name] = ("differs", verdicts[name][1] + "; SASS " + first_difference(
                    normalise_sass(sb[name]), normalise_sass(sa[name])))
    counts = {}
    for name, (verdict, why) in verdicts.items():
        counts[verdict] = counts.get(verdict, 0) + 1
        if not args.quiet or verdict not in ("same", "renamed", "sass-same"):
            print(f"{verdict:12} {name}" + (f"  ({why})" if why else ""))
    print("summary: " + ", ".join(f"{v} {counts[v]}" for v in sorted(counts)) + f" of {len(verdicts)} functions")
    sys.exit(0 if all(v in ("same", "renamed", "sass-same") for v, _ in verdicts.values()) else 1)


if __name__ == "__main__":
    main()
