#!/usr/bin/env bash
# Issue #59 on a GPU host (the light kit), from the bundle built on a machine without a GPU: run
# from the repository root, with `.gpu/` from ../shared/gpu/bundle and `.gpu/extra/` holding
# `histogram` and `my_kernel` (release examples) and `dot-app`, `dot-bench` (the README's crates:
# `BUNDLE=.gpu/extra scripts/your_kernel.sh`).
#
#   scripts/gpu/kit.sh tests      every test executable with --include-ignored (the GPU trials too),
#                                 SECONDS_LEFT seconds at most (default 520), then what was left
#   scripts/gpu/kit.sh subset     the GPU trials of the launch path the kit changed (library,
#                                 alignment, api, segmented, scan), each filter within its time
#   scripts/gpu/kit.sh kit        the README's program (dot and the shared-atomic histogram, ncu
#                                 beside the emulator), examples/histogram (5 interleaved rounds
#                                 at 2^24, uniform and skewed, CSV), compute-sanitizer memcheck and
#                                 racecheck on the histograms, `reduce --metrics` with the atomics'
#                                 ncu columns, the template's criterion bench
#
# Logs go to $OUT/kit/ (default ./kit/), with device.txt (GPU, driver, commit). Exit status:
# non-zero when a step failed.
set -uo pipefail
cd "$(dirname "$0")/../.."
out=${OUT:-.}/kit; mkdir -p "$out"
extra=$PWD/.gpu/extra
rc=0
say() { echo "kit (GPU): $*" >&2; }
# The bundle's commit (.gpu/COMMIT, written where it was built): the copy on the GPU host may not
# carry the checkout's git state.
{ nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
  echo "bundle commit: $(cat .gpu/COMMIT 2>/dev/null || echo unknown)"; } >"$out/device.txt"

tests() {
  local left=${SECONDS_LEFT:-520} start=$SECONDS
  for t in .gpu/tests/*; do
    local name; name=$(basename "$t")
    local budget=$((left - (SECONDS - start)))
    [ "$budget" -gt 20 ] || { echo "=== $name: not run (no time left)" >>"$out/tests.log"; continue; }
    echo "=== $name" >>"$out/tests.log"
    timeout "$budget" "$t" --include-ignored >>"$out/tests.log" 2>&1 || { say "$name failed or ran out of time"; rc=1; }
  done
  grep -E '^=== |^test result' "$out/tests.log" >&2
  grep -E 'FAILED|panicked' "$out/tests.log" | head -20 >&2
}

# The GPU trials that exercise what the kit changed in the launch path (modules loaded on first
# use, kernel handles that own their module, graphs, the answer words, the holds), each filter
# within its time: FILTER:SECONDS.
subset() {
  local main; main=$(ls .gpu/tests/main-* | head -1)
  for spec in ${SUBSET:-library:120 alignment::vector_loads::gpu:60 api::gpu:150 segmented::gpu::sum_f32:40 scan::gpu::lookback:::90}; do
    local filter=${spec%:*} seconds=${spec##*:}
    echo "=== $filter ($seconds s at most)" >>"$out/subset.log"
    timeout "$seconds" "$main" --include-ignored "$filter" >>"$out/subset.log" 2>&1 || { say "$filter: failed or ran out of time"; rc=1; }
  done
  grep -E '^=== |^test result' "$out/subset.log" >&2
  grep -E 'FAILED|panicked' "$out/subset.log" | head -20 >&2
}

kit() {
  say "the README's program, with a bare environment (ncu beside the emulator)"
  local work; work=$(mktemp -d)
  (cd "$work" && env -i PATH=/usr/local/cuda/bin:/usr/bin:/bin HOME="${HOME:-/root}" "$extra/dot-app") \
    >"$out/dot-app.txt" 2>&1 || { say "dot-app failed"; rc=1; }
  rm -rf "$work"
  grep -E 'right|µs|k1 ' "$out/dot-app.txt" >&2
  say "examples/histogram: 5 interleaved rounds at 2^24"
  "$extra/histogram" --format csv >"$out/histogram.csv" 2>"$out/histogram.err" || { say "histogram failed"; rc=1; }
  tr , "\t" <"$out/histogram.csv" >&2
  for tool in memcheck racecheck; do
    say "compute-sanitizer --tool $tool, the histograms at n = 2^20 + 7"
    compute-sanitizer --tool "$tool" --error-exitcode 3 "$extra/histogram" --n 1048583 --rounds 1 --runs 1 \
      >"$out/sanitize_$tool.txt" 2>&1 || { say "$tool found errors"; rc=1; }
    grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|Error' "$out/sanitize_$tool.txt" | head -3 >&2
  done
  say "reduce --metrics: the atomics' ncu columns"
  .gpu/bin/reduce --metrics --variant atomic_accumulate --n 16777216 --format csv \
    >"$out/metrics_atomics.csv" 2>&1 || { say "reduce --metrics failed"; rc=1; }
  head -3 "$out/metrics_atomics.csv" | cut -c1-300 >&2
  say "the template's criterion bench (--quick)"
  "$extra/dot-bench" --bench --quick >"$out/dot-bench.txt" 2>&1 || { say "dot-bench failed"; rc=1; }
  grep -E 'time:' "$out/dot-bench.txt" >&2
}

for step in "${@:-kit}"; do
  case $step in
    tests) tests ;;
    subset) subset ;;
    kit) kit ;;
    *) say "unknown step '$step': tests, subset or kit"; exit 2 ;;
  esac
done
exit $rc
