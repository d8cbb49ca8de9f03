#!/usr/bin/env bash
# Adding a reduction variant takes three places (docs/adding-a-variant.md), a classic one or a
# generic one (every element type × operator), and this proves it for both: in a temporary copy
# of this checkout it adds
#
#   * `three_places`, a copy of `interleaved` with its lesson's condition written the other way
#     round (an i32 sum), and
#   * `three_places_generic`, a copy of `vector_loads` (its generic body and its
#     `typed_kernel!` line: 17 more PTX entries `three_places_generic__{type}_{op}`),
#
# each with exactly the three edits of the guide, and nothing else:
#
#   1. kernels/src/reduce/<name>.rs              the kernel file (the original's, renamed; its
#                                                 # Measured says "Not measured on a GPU yet.")
#   2. kernels/src/reduce/mod.rs                 `mod <name>;` and its `pub use`
#   3. host/src/reduce/registry/<family>.rs      its entry (the original's, renamed)
#
# then runs the suite's checks: every unit test, the integration tests that name them (the
# emulator matrix, every type × operator of the generic one), the PTX's entries (every kernel
# of the registry, the new ones among them, is an entry of each architecture's module), the
# doc-template, source and CLI checks, `reduce --variant three_places`, `reduce --variant
# three_places_generic --type f64 --combine max`, `reduce check` and `reduce --list`. Run by
# `./x test` (so by CI); it shares this checkout's target/ (the dependencies, and the crates the
# copy does not edit, are built once) without overwriting what this checkout built.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
name=three_places
# A fixed place for the copy, so that its nested PTX build (target/ptx/<its tag>/, apart from
# this checkout's) is reused from one run to the next.
tmp="$repo/target/three-places/checkout"
rm -rf "$tmp"; mkdir -p "$tmp"
trap 'rm -rf "$tmp"' EXIT
cd "$repo"
# The checkout as it is (tracked files and new ones git does not ignore).
git ls-files -z --cached --others --exclude-standard | xargs -0 cp --parents --preserve=timestamps -t "$tmp" 2>/dev/null || true
cd "$tmp"
echo "three_places: adding \`$name\` in three places, in $tmp" >&2

python3 - "$name" <<'PY'
import re, sys
name = sys.argv[1]
# 1. The kernel file: interleaved's, renamed; no GPU figures yet.
src = open("kernels/src/reduce/interleaved.rs").read()
src = re.sub(r"\binterleaved\b", name, src)
# A lesson names a line of code the lesson before does not have (tests/source.rs): this one
# writes interleaved's condition the other way round.
src = src.replace("if tid < stride && tid + stride < len {", "if tid + stride < len && tid < stride {")
src = re.sub(r"(/// # Measured\n)(\s*///.*\n)+?(\s*pub unsafe fn)",
             lambda m: m.group(1) + "    /// Not measured on a GPU yet.\n" + m.group(3), src, count=1)
open(f"kernels/src/reduce/{name}.rs", "w").write(src)
# 2. Its mod line and its pub use.
mod = open("kernels/src/reduce/mod.rs").read()
mod = mod.replace("mod interleaved;\n", f"mod interleaved;\nmod {name};\n", 1)
mod = mod.replace("pub use interleaved::interleaved;\n", f"pub use interleaved::interleaved;\npub use {name}::{name};\n", 1)
open("kernels/src/reduce/mod.rs", "w").write(mod)
# 3. Its registry entry: interleaved's, renamed, right after it.
reg = open("host/src/reduce/registry/global.rs").read()
entry = re.search(r'\n    global\(\n        "interleaved",.*?\n    \),', reg, re.S).group(0)
new = re.sub(r"\binterleaved\b", name, entry)
new = re.sub(r'(\n        "%s",\n        )"[^"]*"' % name, r'\1"interleaved, added in three places by scripts/three_places.sh"', new)
open("host/src/reduce/registry/global.rs", "w").write(reg.replace(entry, entry + new, 1))

# The generic one: vector_loads's file, mod line and entry, renamed.
generic = name + "_generic"
src = open("kernels/src/reduce/vector_loads.rs").read()
src = re.sub(r"\bvector_loads", generic, src).replace("VECTOR_LOADS", generic.upper())
src = re.sub(r"(/// # Measured\n)(\s*///.*\n)+?(\s*(?:#\[inline\(always\)\]\n\s*)?pub unsafe fn)",
             lambda m: m.group(1) + "/// Not measured on a GPU yet.\n" + m.group(3), src)
open(f"kernels/src/reduce/{generic}.rs", "w").write(src)
mod = open("kernels/src/reduce/mod.rs").read()
# A generic kernel's file is a public module (its instantiations are modules in it), and its
# `pub use` names the i32 sum, the body and their constants.
# `pub mod`, with its doc lines (a public module has them): the original's, renamed.
decl = re.search(r"(?:///.*\n)+pub mod vector_loads;\n", mod).group(0)
mod = mod.replace(decl, decl + re.sub(r"\bvector_loads", generic, decl), 1)
use = re.search(r"pub use vector_loads::\{[^}]*\};\n", mod).group(0)
mod = mod.replace(use, use + re.sub(r"\bvector_loads", generic, use).replace("VECTOR_LOADS", generic.upper()), 1)
open("kernels/src/reduce/mod.rs", "w").write(mod)
reg = open("host/src/reduce/registry/modern.rs").read()
entry = re.search(r'\n    every\(\n        modern\(\n            "vector_loads",.*?\n    \),', reg, re.S).group(0)
new = re.sub(r"\bvector_loads", generic, entry).replace("VECTOR_LOADS", generic.upper())
new = re.sub(r'(\n            "%s",\n            )"[^"]*"' % generic, r'\1"vector_loads, added in three places by scripts/three_places.sh"', new)
open("host/src/reduce/registry/modern.rs", "w").write(reg.replace(entry, entry + new, 1))
PY
# Not a fourth place: so that the copy's builds do not overwrite this checkout's in the shared
# target folder, the two packages it edits get a version of their own (their artifacts, and
# those of every crate above them, then have names of their own; cargo names a path package's
# artifacts by its path relative to the workspace root, which the copy shares). The crates below
# them are the test build's: the copy keeps the files' times.
sed -i 's/^version.workspace = true$/version = "0.1.0-three-places"/' kernels/Cargo.toml host/Cargo.toml
grep -q '^version = "0.1.0-three-places"$' kernels/Cargo.toml && grep -q '^version = "0.1.0-three-places"$' host/Cargo.toml
grep -q "mod $name;" kernels/src/reduce/mod.rs && grep -q "\"$name\"" host/src/reduce/registry/global.rs
grep -q "pub mod ${name}_generic;" kernels/src/reduce/mod.rs && grep -q "\"${name}_generic\"" host/src/reduce/registry/modern.rs

export CARGO_TARGET_DIR="$repo/target"
cargo test --quiet --workspace --lib
for filter in "$name" ptx::entries:: docs:: source:: cli::; do
  cargo test --quiet --test main -- "$filter"
done
cargo run --quiet --bin reduce -- --backend emulator --variant "$name" --n 100003 --block 256
cargo run --quiet --bin reduce -- --backend emulator --variant "${name}_generic" --n 100003 --block 256 \
  --type f64 --combine max
cargo run --quiet --bin reduce -- check --variant "$name"
cargo run --quiet --bin reduce -- check --variant "${name}_generic"
for v in "$name" "${name}_generic"; do
  cargo run --quiet --bin reduce -- --list | grep -q "^$v " || { echo "three_places: --list does not show $v" >&2; exit 1; }
done
cargo run --quiet --bin reduce -- --list --type u64 --combine min | grep -q "^${name}_generic " ||
  { echo "three_places: --list --type u64 --combine min does not show ${name}_generic" >&2; exit 1; }
echo "three_places: \`$name\` and \`${name}_generic\`, each added in three places, passed the suite's checks" >&2
