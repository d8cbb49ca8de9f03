#!/usr/bin/env bash
# The README's "Your kernel, your crate", run as written, outside the repository: in a temporary
# folder, its `steps.sh` block (with /path/to/reduction replaced by this checkout) makes the
# kernel crate and the host crate, its `dot-kernels/src/lib.rs` and `dot-app/src/main.rs` blocks
# become their sources, and `cargo run --release` builds the PTX and runs the program (on the GPU
# if there is one, else on the CPU emulator). Then it checks what the issue asks of it:
#
#   1. the answer is right, the emulator's counters are printed, the block picture is written;
#   2. the release binary, run directly with a bare environment (no library path), starts and
#      answers (on a machine without a driver: on the emulator);
#   3. nothing rebuilds without a change: the release build again compiles nothing, nor after
#      touching a file of the kernel crate that no build reads (scripts/no_rebuild.sh);
#   4. a planted out-of-bounds store is reported in one line with the kernel crate's file:line;
#   5. a planted race, the same;
#   6. the bench blocks: `cargo bench -- --quick` builds and runs the criterion bench.
#
# The crates build with the machine's stable toolchain (RUSTUP_TOOLCHAIN, `stable` unless set),
# as a user's would: the README's steps copy no rust-toolchain.toml, and only the PTX build runs
# on the pinned nightly, which reduce-scan-build finds by itself.
#
#   scripts/your_kernel.sh          exit status 0 when every check passed
#
# KEEP=1 keeps the temporary folder (its path is printed). BUNDLE=DIR also copies the release
# binary and the bench executable into DIR (as dot-app and dot-bench: the GPU machine's run,
# scripts/gpu/your_kernel.sh, takes them from .gpu/extra/). The target folder is this
# checkout's target/ (CARGO_TARGET_DIR overrides it): the PTX builds' `core` for the GPU is the
# workspace's, and a second run rebuilds little.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=readme_block.sh
. "$repo/scripts/readme_block.sh"
block() { readme_block your-kernel "$1"; }
say() { echo "your_kernel: $*" >&2; }
fail() { say "FAILED: $*"; exit 1; }

steps=$(block steps.sh); lib=$(block dot-kernels/src/lib.rs); main=$(block dot-app/src/main.rs)
bench_steps=$(block bench.sh); bench=$(block dot-app/benches/dot.rs)
for b in steps lib main bench_steps bench; do
  [ -n "${!b}" ] || { say "README.md has no '$b' block under 'Your kernel, your crate'"; exit 2; }
done
# BUNDLE is named from where the script was started; it runs in a temporary folder.
if [ -n "${BUNDLE:-}" ]; then mkdir -p "$BUNDLE"; BUNDLE=$(cd "$BUNDLE" && pwd); fi
dir=$(mktemp -d)
if [ "${KEEP:-0}" = 1 ]; then say "keeping $dir"; else trap 'rm -rf "$dir"' EXIT; fi
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$repo/target}
export RUSTUP_TOOLCHAIN=${RUSTUP_TOOLCHAIN:-stable}
cd "$dir"
say "the README's steps in $dir"
# The steps end in dot-app/ (they `cd` there); the sources are written from the top folder.
bash -euo pipefail -c "$steps"$'\n'"printf '%s\n' \"\$1\" > ../dot-kernels/src/lib.rs; printf '%s\n' \"\$2\" > src/main.rs" _ "$lib" "$main"
cd dot-app

say "1. cargo run --release (the first build compiles the PTX, core for the GPU included)"
out=$(cargo run --quiet --release 2>&1) || fail "the program failed: $out"
echo "$out"
grep -q 'dot of .*: right;' <<<"$out" || fail "no right dot product in the output"
grep -q 'hist256 of .*: right;' <<<"$out" || fail "no right histogram in the output"
grep -q 'gld_requests' <<<"$out" || fail "no counters in the output"
grep -q 'k1 dot__f32, k2 hist256' <<<"$out" || fail "the counters have no column per kernel"
grep -q '<svg' dot-block0.svg || fail "dot-block0.svg is not a picture"

say "2. the release binary, run directly with a bare environment"
bin=$CARGO_TARGET_DIR/release/dot-app
[ -x "$bin" ] || fail "no release binary at $bin"
out=$(cd "$dir" && env -i PATH=/usr/bin:/bin HOME="$HOME" "$bin" 2>&1) || fail "the binary did not run: $out"
grep -q ': right;' <<<"$out" || fail "the binary gave no right answer: $out"
head -1 <<<"$out"

# Plants `$1` before the block reduction in the kernel, runs, and expects one error line naming
# the kernel crate's file and the planted line, and containing `$2`.
planted() {
  local code=$1 want=$2 what=$3 file=../dot-kernels/src/lib.rs
  cp "$file" "$file.orig"
  awk -v code="$code" '/let total = BlockReduce/ && !done { print "        " code; line = NR; done = 1 } { print }' \
    "$file.orig" > "$file"
  local line; line=$(grep -n -F "$code" "$file" | cut -d: -f1)
  local out status=0
  out=$(cargo run --quiet --release 2>&1) || status=$?
  # Copied back (not moved): the restored file must be newer than the planted build, or cargo
  # would take the planted build for up to date.
  cp "$file.orig" "$file" && rm "$file.orig"
  [ "$status" -ne 0 ] || fail "$what: the program exited 0: $out"
  local report; report=$(grep -m1 "dot-kernels/src/lib.rs:$line" <<<"$out") ||
    fail "$what: no report names dot-kernels/src/lib.rs:$line: $out"
  grep -q -- "$want" <<<"$report" || fail "$what: the report does not say '$want': $report"
  [ "$(grep -c "lib.rs:$line" <<<"$out")" -eq 1 ] || fail "$what: the report is not one line: $out"
  say "$what, caught: $report"
}
say "3. nothing rebuilds without a change"
echo "an unread note" > ../dot-kernels/src/notes.md
"$repo/scripts/no_rebuild.sh" . -- build --release || fail "a release build with no change compiled something"
"$repo/scripts/no_rebuild.sh" . --touch ../dot-kernels/src/notes.md -- build --release ||
  fail "touching a file no build reads rebuilt something"

say "4. a planted out-of-bounds store"
planted 'unsafe { partials.as_global_mut().write(partials.len() + 1, acc) };' 'out of bounds' 'out-of-bounds store'
say "5. a planted race"
planted 'unsafe { partials.as_global_mut().write(block_idx_x() as usize, acc) };' 'race' 'race'

say "6. the bench"
bash -euo pipefail -c "$bench_steps"
mkdir -p benches && printf '%s\n' "$bench" > benches/dot.rs
out=$(cargo bench --quiet -- --quick 2>&1) || fail "cargo bench -- --quick failed: $out"
grep -q 'time:' <<<"$out" || fail "criterion reported no time: $out"
grep 'dot__f32\|time:' <<<"$out" | head -2
if [ -n "${BUNDLE:-}" ]; then
  mkdir -p "$BUNDLE"
  cp "$bin" "$BUNDLE/dot-app"
  exe=$(cargo bench --bench dot --no-run --message-format=json 2>/dev/null |
    python3 -c 'import json,sys; print([m["executable"] for m in map(json.loads, sys.stdin) if m.get("executable")][-1])')
  cp "$exe" "$BUNDLE/dot-bench"
  strip "$BUNDLE/dot-app" "$BUNDLE/dot-bench" 2>/dev/null || true
  say "copied dot-app and dot-bench into $BUNDLE"
fi
say "every check passed"
