#!/usr/bin/env bash
# Every Nsight Compute metric name `reduce --metrics` asks for, checked against this GPU's ncu
# (issue 40: the copy counters' names, `op_ldgsts` and `op_tma_*`, were taken from NVIDIA's
# metric names and are confirmed here before a run depends on them).
#
#   scripts/gpu/ncu_names.sh
#
# The names are read from their one table, the `pub(super) const … = "…";` lines at the top of
# runtime/src/metrics/columns.rs. Each is looked up by its base name (the part before the first
# `.`: `l1tex__t_requests_pipe_lsu_mem_global_op_st` for `….sum`) in `ncu --query-metrics`
# (the metrics of the GPU present). Output: $OUT/ncu_names.txt (else ./ncu-names.txt): one line
# per name, `ok` or `MISSING`, then every metric of the query whose name holds `ldgsts`, `tma`
# or `bulk` (where the right name is, if one is missing). Exit status 1 if a name is missing, 2
# without ncu.
set -uo pipefail
cd "$(dirname "$0")/../.."
ncu=${NCU:-$(command -v ncu || ls -d /usr/local/cuda*/bin/ncu 2>/dev/null | tail -1)}
[ -x "$ncu" ] || { echo "ncu_names.sh: no ncu (set NCU)"; exit 2; }
out=${OUT:+$OUT/ncu_names.txt}; out=${out:-ncu-names.txt}
[ -n "${OUT:-}" ] && mkdir -p "$OUT"
query=$(mktemp); trap 'rm -f "$query"' EXIT
"$ncu" --query-metrics >"$query" 2>&1 || { echo "ncu_names.sh: ncu --query-metrics failed: $(tail -1 "$query")"; exit 2; }
names=$(sed -n 's/^pub(super) const [A-Z_0-9]*: &str = "\([^"]*\)";$/\1/p' runtime/src/metrics/columns.rs)
[ -n "$names" ] || { echo "ncu_names.sh: no metric names in runtime/src/metrics/columns.rs"; exit 2; }
missing=0
{
  echo "# $("$ncu" --version | tail -1); $(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1)"
  for name in $names; do
    base=${name%%.*}
    if grep -qE "^${base}([[:space:]]|$)" "$query"; then echo "ok       $name"; else echo "MISSING  $name"; missing=1; fi
  done
  echo "# the query's copy metrics (ldgsts, tma, bulk):"
  grep -E '^[a-z0-9_]*(ldgsts|tma|bulk)[a-z0-9_]*([[:space:]]|$)' "$query" || echo "(none)"
} >"$out"
cat "$out"
exit $missing
