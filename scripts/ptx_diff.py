#!/usr/bin/env python3
"""Compares two PTX builds of the kernels entry by entry: the proof that a change to the
kernels' source left the GPU code alone.

    scripts/ptx_diff.py BEFORE.ptx AFTER.ptx [--sass ARCH --ptxas PTXAS --nvdisasm NVDISASM]

Every `.entry` and `.func` of either file gets one verdict:

* `same`      the text of the function is identical;
* `renamed`   identical once virtual registers (`%r12`) and block labels (`$L__BB3_7`) are
              renumbered in order of first use: only names and numbering differ;
* `sass-same` (with --sass) the PTX differs, but ptxas compiles both to the same SASS: the
              same bytes in the function's `.text` section of the cubin (no nvdisasm needed,
              so every architecture ptxas knows), or, where the bytes differ, the same
              instructions by nvdisasm (addresses, encodings and comments stripped; branch
              targets renumbered in order of first use): the GPU runs the same code;
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
import struct
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


def compile_cubin(ptx_file, arch, ptxas, workdir, side):
    """The cubin of the whole PTX file compiled by ptxas for `arch`, named for its `side`
    ("before" or "after"): two files of one name (the same crate built twice) must not share
    a cubin, or each side would be compared with itself."""
    cubin = Path(workdir) / f"{side}_{Path(ptx_file).stem}_{arch}.cubin"
    subprocess.run([ptxas, f"-arch={arch}", "-O3", "-o", str(cubin), str(ptx_file)], check=True)
    return cubin


def text_sections(cubin):
    """{function: bytes of its `.text.FUNCTION` section} of a cubin (a 64-bit little-endian ELF
    file): the machine code itself, with no disassembler."""
    d = Path(cubin).read_bytes()
    if d[:5] != b"\x7fELF\x02":
        raise ValueError(f"{cubin} is not a 64-bit ELF file")
    shoff = struct.unpack_from("<Q", d, 0x28)[0]
    entsize, count, names_at = struct.unpack_from("<HHH", d, 0x3A)
    heads = [struct.unpack_from("<IIQQQQ", d, shoff + i * entsize) for i in range(count)]
    names = heads[names_at][4]
    out = {}
    for name_off, _, _, _, offset, size in heads:
        name = d[names + name_off:d.index(b"\0", names + name_off)].decode()
        if name.startswith(".text."):
            out[name[len(".text."):]] = d[offset:offset + size]
    return out


def sass(cubin, nvdisasm):
    """{function: [instructions]} of a cubin by nvdisasm."""
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


def compare_sass(args, pending, verdicts):
    """The `pending` functions' verdicts by their SASS: the same `.text` bytes, else (where
    nvdisasm reads the architecture) the same instructions once branch targets are renumbered."""
    with tempfile.TemporaryDirectory() as tmp:
        cb = compile_cubin(args.before, args.sass, args.ptxas, tmp, "before")
        ca = compile_cubin(args.after, args.sass, args.ptxas, tmp, "after")
        tb, ta = text_sections(cb), text_sections(ca)
        unsettled = [n for n in pending if n in tb and n in ta and tb[n] != ta[n]]
        for name in pending:
            if name in tb and name in ta and tb[name] == ta[name]:
                verdicts[name] = ("sass-same", f"{len(tb[name])} bytes of machine code, identical")
        if not unsettled:
            return
        try:
            sb, sa = sass(cb, args.nvdisasm), sass(ca, args.nvdisasm)
        except (OSError, subprocess.CalledProcessError) as e:
            for name in unsettled:
                verdicts[name] = ("differs", verdicts[name][1] + f"; SASS bytes differ, nvdisasm could not read them ({e})")
            return
    for name in unsettled:
        if normalise_sass(sb[name]) == normalise_sass(sa[name]):
            verdicts[name] = ("sass-same", f"{len(sb[name])} instructions")
        else:
            verdicts[name] = ("differs", verdicts[name][1] + "; SASS " + first_difference(
                normalise_sass(sb[name]), normalise_sass(sa[name])))


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
        compare_sass(args, pending, verdicts)
    counts = {}
    for name, (verdict, why) in verdicts.items():
        counts[verdict] = counts.get(verdict, 0) + 1
        if not args.quiet or verdict not in ("same", "renamed", "sass-same"):
            print(f"{verdict:12} {name}" + (f"  ({why})" if why else ""))
    print("summary: " + ", ".join(f"{v} {counts[v]}" for v in sorted(counts)) + f" of {len(verdicts)} functions")
    sys.exit(0 if all(v in ("same", "renamed", "sass-same") for v, _ in verdicts.values()) else 1)


if __name__ == "__main__":
    main()
