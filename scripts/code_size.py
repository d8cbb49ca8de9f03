#!/usr/bin/env python3
"""Counts what the guide asks to keep small in a source tree: files over 600 lines and functions
over 80 lines (from the `fn` line to its closing brace, nested functions counted in their outer
one too).

    scripts/code_size.py [DIR]        (default host/src)

Prints each long file and function with its length, then the two counts. Exit status 0.
"""

import os
import re
import sys

FN = re.compile(r'^\s*(pub(\([^)]*\))?\s+)?(const\s+)?(async\s+)?(unsafe\s+)?(extern\s+"[^"]*"\s+)?fn\s+(\w+)')


def functions(lines):
    """(name, first line, length) of every function with a body."""
    for i, line in enumerate(lines):
        m = FN.match(line)
        if not m:
            continue
        depth, started = 0, False
        for j in range(i, len(lines)):
            code = lines[j].split("//")[0]
            if not started and ";" in code and "{" not in code:
                break
            depth += code.count("{") - code.count("}")
            started = started or "{" in code
            if started and depth <= 0:
                yield m.group(7), i + 1, j - i + 1
                break


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else "host/src"
    big, long = [], []
    for d, _, files in sorted(os.walk(root)):
        for f in sorted(files):
            if not f.endswith(".rs"):
                continue
            path = os.path.join(d, f)
            lines = open(path, encoding="utf-8").read().splitlines()
            if len(lines) > 600:
                big.append((len(lines), path))
            long += [(n, f"{path}:{at}", name) for name, at, n in functions(lines) if n > 80]
    for n, path in sorted(big, reverse=True):
        print(f"file      {n:5} lines  {path}")
    for n, at, name in sorted(long, reverse=True):
        print(f"function  {n:5} lines  {name} ({at})")
    print(f"{root}: {len(big)} files over 600 lines, {len(long)} functions over 80 lines")


if __name__ == "__main__":
    main()
