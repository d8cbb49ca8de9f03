#!/usr/bin/env bash
# The emulator's counters against Nsight Compute's at two shapes (issue 40), on a GPU host with
# ncu: both sides of scripts/agreement.py's tables, step by step (each step fits a command of
# ten minutes or less; run them in any order, each call's files come back under $OUT).
#
#   scripts/gpu/agreement.sh STEP [REDUCE_BINARY]      default binary: .gpu/bin/reduce
#
#   names          scripts/gpu/ncu_names.sh: every ncu metric name of `--metrics` against
#                  `ncu --query-metrics` ($OUT/ncu_names.txt)
#   a-gpu, a-emu   shape A, the first table's: n = 2^20, block 512 (each scan at its own block),
#                  every family, ncu / the emulator ($OUT/agreement/2e20_b512/)
#   b-gpu, b-emu   shape B: n = 5·2^20 + 3 = 5242883 (odd), block 128, every family but the
#                  three nested reductions ($OUT/agreement/n5242883_b128/)
#   b-nested-gpu, b-nested-emu
#                  shape B, the nested reductions (recursive_reduce, recursive_reduce_nosync,
#                  recursive_reduce2), one run each: under ncu each takes minutes (NESTED="…"
#                  names fewer, to split the step over several commands)
#   nested-small   the nested reductions at n = 2^14 + 3, 2^17 + 3, 2^20 + 3 (block 128), ncu and
#                  the emulator, and ncu's per-instruction counts (source page, SASS) of one launch
#                  of recursive_reduce at 2^14 + 3: where their extra requests come from
#                  ($OUT/agreement/nested/; docs/counters.md, "The nested kernels")
#   sass DIR       scripts/gpu/sass_conflicts.py DIR: ncu's bank conflicts from each SASS
#                  instruction's addresses (source counters), for every GPU row of DIR
#                  (DIR/sass_conflicts.csv), which the table then compares in place of ncu's
#                  hardware conflict counters
#   table DIR      scripts/agreement.py DIR: agreement.csv and agreement.md from both sides
#
# Exit status: that of the last failing run (2: no ncu, no counter permission), else 0.
set -uo pipefail
cd "$(dirname "$0")/../.."
step=${1:-}
case "$step" in
  names) OUT=${OUT:-.} exec scripts/gpu/ncu_names.sh ;;
  sass)
    dir=${2:?agreement.sh sass DIR [REDUCE_BINARY]}
    SKIP="recursive_reduce recursive_reduce_nosync recursive_reduce2" exec python3 scripts/gpu/sass_conflicts.py "$dir" "${3:-.gpu/bin/reduce}" ;;
  table)
    dir=${2:?agreement.sh table DIR}
    exec python3 scripts/agreement.py "$dir" --md "$dir/agreement.md" ;;
  a-gpu | a-emu | b-gpu | b-emu | b-nested-gpu | b-nested-emu | nested-small) ;;
  *)
    sed -n '2,28p' "$0" | sed 's/^# \{0,1\}//'
    exit 2 ;;
esac
bin=${2:-.gpu/bin/reduce}
[ -x "$bin" ] || { echo "agreement.sh: no reduce binary at $bin (build the bundle: ../shared/gpu/bundle)"; exit 2; }
bin=$(cd "$(dirname "$bin")" && pwd)/$(basename "$bin")
base=${OUT:-agreement-logs}/agreement
all_nested="recursive_reduce recursive_reduce_nosync recursive_reduce2"
nested=${NESTED:-$all_nested}

# Every global variant but the nested ones, from the binary's own list.
plain_global() {
  "$bin" --list --family global | awk '{print $1}' | grep -vxE "$(echo "$all_nested" | tr ' ' '|')" | tr '\n' ' '
}

metrics() { # $1 = out dir, rest = environment for metrics.sh
  local dir=$1; shift
  mkdir -p "$dir"
  env OUT="$dir" "$@" scripts/gpu/metrics.sh "$bin"
  local rc=$?
  mv "$dir"/metrics/* "$dir"/ 2>/dev/null; rmdir "$dir/metrics" 2>/dev/null
  return $rc
}

case "$step" in
  a-gpu | a-emu)
    side=gpu; [ "$step" = a-emu ] && side=emulator
    metrics "$base/2e20_b512" BACKEND=$side LOG2=20 BLOCK=512 ;;
  b-gpu | b-emu)
    side=gpu; [ "$step" = b-emu ] && side=emulator
    rc=0
    metrics "$base/n5242883_b128" BACKEND=$side N=5242883 BLOCK=128 FAMILIES=global VARIANTS="$(plain_global)" || rc=$?
    metrics "$base/n5242883_b128" BACKEND=$side N=5242883 BLOCK=128 FAMILIES="shared modern sumsq scan" || rc=$?
    exit $rc ;;
  b-nested-gpu | b-nested-emu)
    side=gpu; [ "$step" = b-nested-emu ] && side=emulator
    metrics "$base/n5242883_b128" BACKEND=$side N=5242883 BLOCK=128 FAMILIES=global VARIANTS="$nested" ;;
  nested-small)
    dir=$base/nested; rc=0
    for n in 16387 131075 1048579; do
      for side in gpu emulator; do
        metrics "$dir" BACKEND=$side N=$n BLOCK=128 FAMILIES=global VARIANTS="$nested" || rc=$?
      done
    done
    ncu=${NCU:-$(command -v ncu || ls -d /usr/local/cuda*/bin/ncu 2>/dev/null | tail -1)}
    if [ -x "$ncu" ]; then
      # One launch (the warm-up's) of recursive_reduce with ncu's source counters: the SASS of the
      # kernel and of the device runtime's functions linked into it, each with its executed count.
      "$ncu" --section SourceCounters -k regex:'^recursive_reduce$' -c 1 -f -o "$dir/source_recursive_reduce" \
        "$bin" --backend gpu --variant recursive_reduce --n 16387 --block 128 --repeat 1 >"$dir/source.log" 2>&1 || rc=$?
      "$ncu" --import "$dir/source_recursive_reduce.ncu-rep" --page source --print-source sass --csv \
        >"$dir/source_recursive_reduce_sass.csv" 2>>"$dir/source.log" || rc=$?
      "$ncu" --import "$dir/source_recursive_reduce.ncu-rep" --page details --csv \
        >"$dir/source_recursive_reduce_details.csv" 2>>"$dir/source.log" || rc=$?
    fi
    exit $rc ;;
esac
