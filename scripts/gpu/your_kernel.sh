#!/usr/bin/env bash
# Issue #36 on a GPU host: a user's own kernel, from binaries built on a machine without a GPU
# (run from the repository root, with the bundle in .gpu/).
#
#   scripts/gpu/your_kernel.sh
#
# Expects in .gpu/extra/ (`BUNDLE=.gpu/extra scripts/your_kernel.sh` puts the first two there;
# `cargo build --release --example my_kernel` builds the third, copied there by hand):
# * dot-app    the README template's release binary ("Your kernel, your crate");
# * dot-bench  its criterion bench (`cargo bench --no-run`);
# * my_kernel  examples/my_kernel.rs, built in release.
# Writes to $OUT/your-kernel/ (default ./your-kernel/): dot-app.txt (the device, the time, the
# emulator's counters beside ncu's), dot-bench.txt (criterion), my_kernel.txt, driver.txt (what
# the binaries need to start: no libcuda among their NEEDED entries, no run path).
# Exit status 0 when every step passed.
set -uo pipefail
cd "$(dirname "$0")/../.."
out=${OUT:-.}/your-kernel; mkdir -p "$out"
extra=$PWD/.gpu/extra
rc=0
step() { echo "your_kernel (GPU): $*" >&2; }

step "what the binaries need to start"
for b in "$extra"/dot-app "$extra"/my_kernel .gpu/bin/reduce; do
  echo "== $b"; readelf -d "$b" | grep -E 'NEEDED|RPATH|RUNPATH'
done >"$out/driver.txt" 2>&1
grep -q 'libcuda' "$out/driver.txt" && { step "a binary links libcuda"; rc=1; }

# The template writes its picture into the folder it runs in: a private one.
work=$(mktemp -d)
step "the template's release binary, with a bare environment"
(cd "$work" && env -i PATH=/usr/local/cuda/bin:/usr/bin:/bin HOME="${HOME:-/root}" "$extra/dot-app") \
  >"$out/dot-app.txt" 2>&1 || { step "dot-app failed"; rc=1; }
cp "$work/dot-block0.svg" "$out/" 2>/dev/null
rm -rf "$work"
grep -E 'right|µs|ncu|gld_' "$out/dot-app.txt" | head -20 >&2

step "the template's criterion bench"
"$extra/dot-bench" --bench --warm-up-time 1 --measurement-time 3 >"$out/dot-bench.txt" 2>&1 ||
  { step "dot-bench failed"; rc=1; }
grep -E 'time:' "$out/dot-bench.txt" >&2

step "examples/my_kernel.rs"
"$extra/my_kernel" >"$out/my_kernel.txt" 2>&1 || { step "my_kernel failed"; rc=1; }
tail -4 "$out/my_kernel.txt" >&2
exit $rc
