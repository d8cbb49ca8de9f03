#!/usr/bin/env bash
# Same kernel, same PTX, in any crate: three of the project's lessons (`interleaved`, global
# memory; `smem`, shared memory and the last warp; `redux`, the collective layer's block sum and
# sm_80's `redux.sync`) compiled from a kernel crate outside this repository, as a user's own
# (it depends on `reduce-scan-collective` alone and uses the device layer's `kernel!`), through
# `reduce-scan-build` from a host crate's build script; then each entry's PTX is compared with
# the project's own build of the same kernel (sm_80), function by function (scripts/ptx_diff.py:
# the same text, or the same once registers and labels are renumbered).
#
#   scripts/same_ptx.sh        exit status 0 when every kernel's PTX is the project's
#
# The project's PTX comes from this checkout's build (`cargo build -p reduce-scan`, which
# this script runs first: nothing to do after `cargo test`): its build script's `kernels_sm_80.ptx`. KEEP=1 keeps the temporary folder.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
target=${CARGO_TARGET_DIR:-$repo/target}
case "$target" in /*) ;; *) target=$repo/$target ;; esac
say() { echo "same_ptx: $*" >&2; }
kernels=(interleaved smem redux)

# The OUT_DIR of a package's build script, as cargo reports it (a reused target folder may keep
# an unchanged PTX file from an earlier run, so no file age is asked).
out_dir_of() {
  python3 -c 'import json, sys
for line in sys.stdin:
    m = json.loads(line)
    if m.get("reason") == "build-script-executed" and sys.argv[1] in m.get("package_id", ""):
        print(m["out_dir"])' "$1"
}
ours=$(cd "$repo" && cargo build --quiet -p reduce-scan --message-format=json | out_dir_of '#reduce-scan@')
ours=${ours:+$ours/kernels_sm_80.ptx}
[ -s "$ours" ] || { say "the project's build left no kernels_sm_80.ptx (${ours:-no OUT_DIR})"; exit 2; }

dir=$(mktemp -d)
if [ "${KEEP:-0}" = 1 ]; then say "keeping $dir"; else trap 'rm -rf "$dir"' EXIT; fi
mkdir -p "$dir/lessons/src" "$dir/host/src"
cat > "$dir/lessons/Cargo.toml" <<EOF
[package]
name = "lessons"
version = "0.1.0"
edition = "2024"

[dependencies]
reduce-scan-collective = { path = "$repo/collective" }
EOF
{
  echo '#![no_std]'
  echo '//! Three of the project'"'"'s lesson files, unchanged, in a crate of their own: the names they'
  echo '//! import from the kernels crate (`crate::device`, `crate::collective`, `crate::kernel`, …) come'
  echo '//! from the collective layer here.'
  echo 'pub use reduce_scan_collective::{self as collective, device, kernel, static_shared, types};'
  echo "#[path = \"$repo/kernels/src/index.rs\"]"
  echo 'pub mod index;'
  grep -h '^pub const ITEMS_PER_THREAD' "$repo/kernels/src/reduce/mod.rs"
  for k in "${kernels[@]}"; do
    echo "#[path = \"$repo/kernels/src/reduce/$k.rs\"]"
    echo "pub mod $k;"
  done
} > "$dir/lessons/src/lib.rs"
cat > "$dir/host/Cargo.toml" <<EOF
[package]
name = "host"
version = "0.1.0"
edition = "2024"

[build-dependencies]
reduce-scan-build = { path = "$repo/builder" }
EOF
echo 'fn main() { reduce_scan_build::Ptx::crate_at("../lessons").arches(&["sm_80"]).build(); }' > "$dir/host/build.rs"
echo 'fn main() {}' > "$dir/host/src/main.rs"
cp "$repo/rust-toolchain.toml" "$dir/"
say "building the lessons' PTX from $dir/lessons (the first time: core for the GPU too)"
# The host crate's OUT_DIR, as cargo reports it: a reused target folder may keep an unchanged
# PTX file from an earlier run (the build rewrites only what changed), so no file age is asked.
out_dir=$(cd "$dir/host" && CARGO_TARGET_DIR="$target" cargo build --quiet --message-format=json |
  out_dir_of '/host#')
theirs=$out_dir/lessons_sm_80.ptx
[ -n "$out_dir" ] && [ -s "$theirs" ] || { say "the build left no lessons_sm_80.ptx (OUT_DIR: ${out_dir:-none})"; exit 1; }

report=$(python3 "$repo/scripts/ptx_diff.py" "$ours" "$theirs" || true)
status=0
for k in "${kernels[@]}"; do
  verdict=$(awk -v k="$k" '$2 == k { print $1 }' <<<"$report")
  case "$verdict" in
    same|renamed) say "$k: $verdict" ;;
    *) say "$k: ${verdict:-missing}"; grep -A3 " $k\$" <<<"$report" >&2 || true; status=1 ;;
  esac
done
[ "$status" -eq 0 ] && say "the three kernels' PTX from an outside crate is the project's"
exit "$status"
