#!/usr/bin/env bash
# One GPU session's worth of checks, for a GPU host with no Rust toolchain. Build the bundle
# first on a build machine (../shared/gpu/bundle → .gpu/), copy the repository with .gpu/, and
# run from the repository root:
#
#   scripts/gpu/run-all.sh [STEP...]     steps: info tests cli sanitize benches compare scan (default: all)
#
# Full logs go to $OUT (or ./gpu-logs); the terminal gets one short line per step and the
# tables. Exit status: non-zero when a step failed.
set -uo pipefail
cd "$(dirname "$0")/../.."
logs=${OUT:-gpu-logs}; mkdir -p "$logs"
steps=("$@"); [ ${#steps[@]} -eq 0 ] && steps=(info tests cli sanitize benches compare scan)
rc=0
step() { echo; echo "=== $1"; }
for s in "${steps[@]}"; do
  case "$s" in
    info)
      step "device"
      nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.max.mem,memory.total --format=csv,noheader
      ;;
    tests)
      step "tests (--include-ignored)"
      .gpu/run-tests --include-ignored >"$logs/tests.log" 2>&1 || rc=1
      grep -E '^test result|^=== ' "$logs/tests.log" | paste - - | sed 's/=== //' | awk '{print}'
      grep -E 'FAILED|panicked' "$logs/tests.log" | head -20
      ;;
    cli)
      for k in 24 28; do
        step "reduce --variant all --log2 $k"
        .gpu/bin/reduce --variant all --log2 "$k" --block 512 | tee "$logs/cli_$k.txt" || rc=1
      done
      if .gpu/bin/reduce --help | grep -q -- '--op'; then
        step "reduce --op scan --log2 28"
        .gpu/bin/reduce --op scan --log2 28 | tee "$logs/scan_28.txt" || rc=1
      fi
      ;;
    sanitize)
      step "compute-sanitizer (memcheck racecheck synccheck initcheck)"
      OUT=$logs scripts/sanitize.sh .gpu/bin/reduce || rc=1
      ;;
    benches)
      step "criterion benches"
      for b in .gpu/benches/*; do
        name=$(basename "$b")
        "$b" --bench >"$logs/bench_$name.log" 2>&1 || rc=1
        grep -E '^(reduce|scan)/|thrpt:' "$logs/bench_$name.log" | paste - - | awk '{printf "%-40s %s %s %s %s\n", $1, $(NF-3), $(NF-2), $(NF-1), $NF}' | head -80
      done
      # criterion's HTML reports (plotters backend) come back as one tarball with the logs.
      [ -d target/criterion ] && tar czf "$logs/criterion.tgz" -C target criterion
      ;;
    compare)
      if [ -x scripts/gpu/compare.sh ]; then step "ours vs CUB DeviceReduce::Sum"; scripts/gpu/compare.sh || rc=1; fi
      ;;
    scan)
      if [ -x scripts/gpu/scan_table.sh ]; then step "scan table (ms), ours vs CUB InclusiveSum"; scripts/gpu/scan_table.sh || rc=1; fi
      ;;
    *) echo "unknown step $s"; rc=2 ;;
  esac
done
exit $rc
