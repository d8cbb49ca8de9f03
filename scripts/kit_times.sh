#!/usr/bin/env bash
# The light kit's targets (issue #59), measured on this machine: the README's "Your kernel, your
# crate" steps in a new folder with an EMPTY target folder of its own (nothing shared with this
# checkout's builds), on the stable toolchain, then
#
#   first_run        the first `cargo run --release` (every dependency, `core` for the GPU for
#                    three architectures, the kernels' PTX, the program's run)
#   noop_build       `cargo build --release` again, with no change
#   edit_to_gpu_binary  an edit of the kernel crate, then `cargo build --release` (a GPU-ready binary)
#   edit_to_emulator    an edit of the kernel crate, then `REDUCE_SCAN_NO_PTX=1 cargo run` to the
#                    emulator's answer (debug build, n = 2^16; after one such run without an edit)
#   binary_bytes     the size of target/release/dot-app
#   entries          the `.visible .entry` names in it (PTX kernels it carries)
#
#   scripts/kit_times.sh [OUT.csv]     the rows also go to OUT.csv (step,seconds,detail)
#
# RUNS=N repeats the edit steps N times (default 3); every one is a row. KEEP=1 keeps the folder.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=readme_block.sh
. "$repo/scripts/readme_block.sh"
out=${1:-/dev/null}
case "$out" in /*) ;; *) out=$PWD/$out ;; esac
runs=${RUNS:-3}
case "$runs" in ''|*[!0-9]*|0) echo "kit_times: RUNS=$runs: a count of runs, 1 or more" >&2; exit 2 ;; esac
dir=$(mktemp -d)
if [ "${KEEP:-0}" = 1 ]; then echo "kit_times: keeping $dir" >&2; else trap 'rm -rf "$dir"' EXIT; fi
export CARGO_TARGET_DIR=$dir/target RUSTUP_TOOLCHAIN=${RUSTUP_TOOLCHAIN:-stable}
echo "step,seconds,detail" > "$out"
row() { echo "kit_times: $1 $2 s${3:+ ($3)}" >&2; echo "$1,$2,${3:-}" >> "$out"; }
timed() { local t0; t0=$(date +%s.%N); "$@" > "$dir/last.log" 2>&1 || { cat "$dir/last.log" >&2; exit 1; }
  awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.2f", b - a }'; }

cd "$dir"
bash -euo pipefail -c "$(readme_block your-kernel steps.sh)"$'\n'"printf '%s\n' \"\$1\" > ../dot-kernels/src/lib.rs; printf '%s\n' \"\$2\" > src/main.rs" \
  _ "$(readme_block your-kernel dot-kernels/src/lib.rs)" "$(readme_block your-kernel dot-app/src/main.rs)" > /dev/null 2>&1
cd dot-app
# The dependencies' sources are downloaded first (a first build on a machine that has them).
cargo fetch --quiet
row first_run "$(timed cargo run --release)" "$(rustc --version | cut -d' ' -f2)"
row noop_build "$(timed cargo build --release)"
edit() { echo "// edit $1" >> ../dot-kernels/src/lib.rs; }
for i in $(seq "$runs"); do
  edit "gpu $i"; row edit_to_gpu_binary "$(timed cargo build --release)" "run $i"
done
REDUCE_SCAN_NO_PTX=1 cargo run --quiet > /dev/null 2>&1
for i in $(seq "$runs"); do
  edit "emulator $i"; row edit_to_emulator "$(timed env REDUCE_SCAN_NO_PTX=1 cargo run --quiet)" "run $i"
done
bin=$CARGO_TARGET_DIR/release/dot-app
row binary_bytes "$(stat -c %s "$bin")" ""
entries=$(grep -ao '\.visible \.entry [A-Za-z_0-9]*(' "$bin" | sort -u | sed 's/.*\.entry //; s/($//' | tr '\n' ' ')
row entries "$(wc -w <<<"$entries" | tr -d ' ')" "$entries"
