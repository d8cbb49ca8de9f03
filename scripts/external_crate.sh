#!/usr/bin/env bash
# The README's "From another crate" steps, run as written: in a temporary directory, its
# `steps.sh` block (with /path/to/reduction replaced by this checkout) makes a new crate that
# depends on `reduce-scan` (folder host/) by path, its `src/main.rs` block becomes the crate's
# program, and `cargo run --release` builds and runs it (on the GPU if there is one, else on the
# CPU emulator). Then that release binary is run directly, as a user would run it or copy it
# elsewhere: no cargo, no LD_LIBRARY_PATH; its ELF must not need libcuda or a run path (the
# runtime opens the NVIDIA driver at run time, where there is one). One profile, so each crate
# is compiled once per change (a debug `cargo run` as well took 14 s more after a kernel edit on
# the 2-core machine: the kernels crate and the library compiled twice; #60).
#
#   scripts/external_crate.sh        exit status: 0 when both runs passed
#
# The crate builds with the machine's stable toolchain (RUSTUP_TOOLCHAIN, `stable` unless set),
# as a user's would: the steps copy no rust-toolchain.toml (the library's PTX build finds the
# pinned nightly by itself). Its target folder is this checkout's target/ (CARGO_TARGET_DIR
# overrides it): the library's PTX is the workspace's own nested build, and a second run rebuilds
# nothing.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=readme_block.sh
. "$repo/scripts/readme_block.sh"
block() { readme_block external "$1"; }
steps=$(block steps.sh); main=$(block src/main.rs)
[ -n "$steps" ] && [ -n "$main" ] || { echo "external_crate: README.md has no steps.sh or src/main.rs block" >&2; exit 2; }
dir=$(mktemp -d); trap 'rm -rf "$dir"' EXIT
cd "$dir"
echo "external_crate: the README's steps in $dir" >&2
bash -euo pipefail -c "$steps"
cd myapp
printf '%s\n' "$main" > src/main.rs
target=${CARGO_TARGET_DIR:-$repo/target}
export RUSTUP_TOOLCHAIN=${RUSTUP_TOOLCHAIN:-stable}
CARGO_TARGET_DIR=$target cargo run --quiet --release
echo "external_crate: its release binary, run directly with no library path" >&2
app=$target/release/myapp
dynamic=$(readelf -d "$app")
if grep -E '\((NEEDED|RPATH|RUNPATH)\)' <<<"$dynamic" | grep -E 'libcuda|RPATH|RUNPATH' >&2; then
  echo "external_crate: $app needs libcuda or a run path to start (above)" >&2
  exit 1
fi
env -u LD_LIBRARY_PATH "$app"
