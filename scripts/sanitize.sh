#!/usr/bin/env bash
# Runs every reduction kernel (and, where the CLI has them, the scans) under NVIDIA's
# compute-sanitizer with each of its four tools, on a GPU host, and prints one summary line per
# (tool, run). Exit status 0 only when every run reports 0 errors.
#
#   scripts/sanitize.sh [REDUCE_BINARY]     default: .gpu/bin/reduce, else target/release/reduce
#   SANITIZE_RUNS="--family modern --n 1025 --block 32;…" scripts/sanitize.sh   only these runs
#
# Sizes are small on purpose (the tools slow kernels down 10–100×) but not multiples of the
# block, so partial blocks and tails are exercised: n = 100003 and 1025, blocks 32 and 512.
# Logs go to $OUT/sanitize/ when OUT is set, else to ./sanitize-logs/.
set -uo pipefail
bin=${1:-}
if [ -z "$bin" ]; then
  if [ -x .gpu/bin/reduce ]; then bin=.gpu/bin/reduce; else bin=target/release/reduce; fi
fi
command -v compute-sanitizer >/dev/null || { echo "compute-sanitizer not found (it ships with the CUDA toolkit)"; exit 2; }
logs=${OUT:+$OUT/sanitize}; logs=${logs:-sanitize-logs}; mkdir -p "$logs"
rc=0
runs=(
  "--variant all --n 100003 --block 512 --repeat 1"
  "--variant all --n 1025 --block 32 --repeat 1"
)
if "$bin" --help 2>/dev/null | grep -q -- '--type'; then
  # The generic kernels: a 64-bit and a 32-bit type, each operator once.
  runs+=("--type f64 --combine max --n 100003 --block 512 --repeat 1"
         "--type f32 --combine min --n 1025 --block 32 --repeat 1"
         "--type u64 --combine sum --n 100003 --block 256 --repeat 1")
fi
if "$bin" --help 2>/dev/null | grep -q -- '--op'; then
  runs+=("--op scan --n 100003 --repeat 1" "--op scan --n 1025 --repeat 1")
  if "$bin" --help 2>/dev/null | grep -q -- '--type'; then
    # The typed look-back scan: the split (64-bit) and the packed (32-bit) status layouts.
    runs+=("--op scan --type f64 --combine min --n 100003 --repeat 1"
           "--op scan --type u32 --combine max --n 1025 --repeat 1")
  fi
fi
# SANITIZE_RUNS="args;args;…" replaces the list (e.g. only the kernels a change touched).
if [ -n "${SANITIZE_RUNS:-}" ]; then IFS=';' read -r -a runs <<<"$SANITIZE_RUNS"; fi
printf '%-10s %-48s %s\n' tool run result
for tool in memcheck racecheck synccheck initcheck; do
  extra=()
  [ "$tool" = memcheck ] && extra=(--leak-check full)
  for args in "${runs[@]}"; do
    log="$logs/${tool}_$(echo "$args" | tr -c 'a-zA-Z0-9' '_' | tr -s '_').log"
    # shellcheck disable=SC2086
    compute-sanitizer --tool "$tool" "${extra[@]}" --error-exitcode 99 "$bin" --backend gpu $args >"$log" 2>&1
    status=$?
    summary=$(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$log" | tail -1)
    verdicts=$(grep -cE ' PASS$' "$log")
    fails=$(grep -cE 'FAIL|ERROR \(' "$log")
    [ "$status" -ne 0 ] || [ "$fails" -ne 0 ] && rc=1
    printf '%-10s %-48s %s; %s rows PASS, %s failing; exit %s\n' "$tool" "$args" "${summary:-no summary}" "$verdicts" "$fails" "$status"
  done
done
exit $rc
