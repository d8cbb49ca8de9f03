#!/usr/bin/env bash
# The README's "From another crate" steps, run as written: in a temporary directory, its
# `steps.sh` block (with /path/to/reduction replaced by this checkout) makes a new crate that
# depends on `reduce-scan` (folder host/) by path, its `src/main.rs` block becomes the crate's
# program, and `cargo run` builds and runs it (on the GPU if there is one, else on the CPU
# emulator).
#
#   scripts/external_crate.sh        exit status: cargo's (0 when the program ran and passed)
#
# The crate's target folder is target/external-crate of this checkout (CARGO_TARGET_DIR
# overrides it), so a second run rebuilds nothing.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
# The fenced block after the marker `<!-- external: NAME -->` in README.md.
block() {
  awk -v want="<!-- external: $1 -->" '
    $0 == want { found = 1; next }
    found && /^```/ { if (inside) exit; inside = 1; next }
    inside { print }
  ' "$repo/README.md" | sed "s|/path/to/reduction|$repo|g"
}
steps=$(block steps.sh); main=$(block src/main.rs)
[ -n "$steps" ] && [ -n "$main" ] || { echo "external_crate: README.md has no steps.sh or src/main.rs block" >&2; exit 2; }
dir=$(mktemp -d); trap 'rm -rf "$dir"' EXIT
cd "$dir"
echo "external_crate: the README's steps in $dir" >&2
bash -euo pipefail -c "$steps"
cd myapp
printf '%s\n' "$main" > src/main.rs
CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$repo/target/external-crate} cargo run --quiet
