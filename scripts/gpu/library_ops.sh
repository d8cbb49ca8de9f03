#!/usr/bin/env bash
# Issue #39 on a GPU host: the library's operations (argmin, argmax, dot, norm, sum of squares),
# the segmented reductions and the batched rows, against CUB's counterparts, PyTorch's where the
# host has it, and the bound (bytes read / peak bandwidth), in one run with interleaved rounds.
#
#   scripts/gpu/library_ops.sh          writes $OUT/library_ops.csv (default ./library_ops.csv)
#
# Run from the repository root with the bundle in .gpu/ (.gpu/bin/reduce, built from this
# commit). Each round runs every case once, in the same order, alternating the implementations
# within the case: ours and CUB's in one `reduce … --compare-cub` process (ours timed, then CUB's
# harness on the same values, cub/ops.cu, built by the binary with the host's nvcc into the
# user's harness cache, each answer checked against the CPU), then PyTorch's in one python
# process per round (its own random input of the same type and size, timed with CUDA events
# around each call; skipped, with a line saying so, where `import torch` fails or sees no GPU).
#
# The cases:
#   * ops      OPS (default "argmin argmax dot norm sum_of_squares") × TYPES (default "f32 i32")
#              × n = 2^K for K in SIZES (default "24 28");
#   * whole    the whole-buffer f32 sum at 2^SEG_LOG2 (the library's plan for a typed pair:
#              atomic_accumulate at block 256), the throughput the 10-segment target compares with;
#   * segmented f32 sums over 2^SEG_LOG2 (default 26) elements in SEGMENTS (default "10 1000
#              100000 1000000") segments, LENGTHS equal and power (power-law);
#   * rows     f32 row sums (and argmax: ROW_FOLDS, default "sum argmax") of ROWS (default
#              "4096x4096 65536x256").
#
# Columns: impl (ours, cub, torch), round, case, operation, type, n, segments, layout, plan,
# median_us, bound_us (the bytes the operation must move over the device's peak bandwidth, from
# ours), pct_of_bound, x_cub (CUB's median over ours, same run), verdict. Exit status 0 when every
# row of ours and CUB's passed its check, 1 otherwise, 2 when the binary is missing.
#
# Environment: ROUNDS (3), REPEAT (20 timed calls per row), REDUCE (.gpu/bin/reduce), BACKEND
# (gpu; `emulator` with small SIZES checks the script itself on a machine with no GPU), PYTHON
# (python3), and the lists above.
set -uo pipefail
bin=${REDUCE:-.gpu/bin/reduce}
[ -x "$bin" ] || { echo "library_ops: no reduce binary at $bin (build the bundle into .gpu/)" >&2; exit 2; }
out=${OUT:-.}; mkdir -p "$out"
rounds=${ROUNDS:-3}; repeat=${REPEAT:-20}; backend=${BACKEND:-gpu}; python=${PYTHON:-python3}
ops=${OPS:-argmin argmax dot norm sum_of_squares}; types=${TYPES:-f32 i32}; sizes=${SIZES:-24 28}
seg_log2=${SEG_LOG2:-26}; segments=${SEGMENTS:-10 1000 100000 1000000}; lengths=${LENGTHS:-equal power}
rows=${ROWS:-4096x4096 65536x256}; row_folds=${ROW_FOLDS:-sum argmax}
# Logs and the per-process CSVs go into a private folder (mktemp -d: a random name, mode 0700).
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
csv=$out/library_ops.csv
echo "impl,round,case,operation,type,n,segments,layout,plan,median_us,bound_us,pct_of_bound,x_cub,verdict" >"$csv"
status=0

# One `reduce` process: its CSV row becomes an `ours` row and, with --compare-cub, a `cub` row.
# $1 round, $2 case, $3 layout; the rest are reduce's flags.
run_reduce() {
  local round=$1 case=$2 layout=$3; shift 3
  "$bin" --backend "$backend" --repeat "$repeat" --format csv "$@" >"$tmp/row.csv" 2>"$tmp/row.log"
  local code=$?
  [ $code -eq 0 ] || status=1
  python3 - "$tmp/row.csv" "$tmp/row.log" "$round" "$case" "$layout" "$code" "$*" >>"$csv" <<'PY' || status=1
import csv, sys
path, log, rnd, case, layout, code, args = sys.argv[1:]
rows = list(csv.DictReader(open(path))) if open(path).read().strip() else []
if not rows:
    why = (open(log).read().strip().splitlines() or ["no output"])[-1].replace(",", ";")
    print(f"ours,{rnd},{case},,,,,{layout},,,,,,ERROR: {why} (reduce {args}; exit {code})")
    sys.exit(1)
r = rows[0]
op = r.get("operation") or r.get("variant", "")
combine = r.get("combine", "")
if case in ("segmented", "rows", "whole"):
    op = f"{case}_{combine}" if case != "whole" else "whole_sum"
n, segs, plan = r.get("n", ""), r.get("segments", ""), r.get("strategy", r.get("grid", ""))
ours = float(r["time_us_median"])
bound = r.get("bound_us") or ""
if not bound and r.get("pct_peak"):  # the whole-buffer reduce's row: time × (bytes/s / peak)
    bound = f"{ours * float(r['pct_peak']) / 100:.3f}"
pct = f"{100 * float(bound) / ours:.1f}" if bound else ""
cub = r.get("cub_median_us") or ""
x_cub = f"{float(cub) / ours:.3f}" if cub else ""
verdict = r["verdict"].replace(",", ";")
print(f"ours,{rnd},{case},{op},{r['type']},{n},{segs},{layout},{plan},{ours:.3f},{bound},{pct},{x_cub},{verdict}")
if cub:
    cpct = f"{100 * float(bound) / float(cub):.1f}" if bound else ""
    print(f"cub,{rnd},{case},{op},{r['type']},{n},{segs},{layout},,{float(cub):.3f},{bound},{cpct},1.000,checked")
PY
}

# PyTorch's counterparts of one round, one python process; a line on stderr where it cannot run.
run_torch() {
  local round=$1
  "$python" - "$round" "$repeat" "$ops" "$types" "$sizes" "$seg_log2" "$rows" "$row_folds" "$backend" \
    >>"$csv" 2>>"$tmp/torch.log" <<'PY' || echo "library_ops: round $round: PyTorch skipped ($(tail -1 "$tmp/torch.log"))" >&2
import statistics, sys
rnd, repeat, ops, types, sizes, seg_log2, rows, row_folds, backend = sys.argv[1:]
if backend != "gpu":
    sys.exit("PyTorch runs on the GPU only")
import torch
if not torch.cuda.is_available():
    sys.exit("torch sees no GPU")
dtypes = {"f32": torch.float32, "f64": torch.float64, "i32": torch.int32, "i64": torch.int64}
def timed(f):
    for _ in range(3):
        f()
    torch.cuda.synchronize()
    times = []
    for _ in range(int(repeat)):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record(); f(); b.record(); b.synchronize()
        times.append(a.elapsed_time(b) * 1e3)
    return statistics.median(times)
def data(t, n, seed):
    g = torch.Generator(device="cuda").manual_seed(seed)
    if dtypes[t].is_floating_point:
        return torch.rand(n, device="cuda", dtype=dtypes[t], generator=g) * 2 - 1
    return torch.randint(-2**20, 2**20, (n,), device="cuda", dtype=dtypes[t], generator=g)
calls = {
    "argmin": lambda x, y: torch.argmin(x), "argmax": lambda x, y: torch.argmax(x),
    "dot": lambda x, y: torch.dot(x, y), "norm": lambda x, y: torch.linalg.vector_norm(x),
    "sum_of_squares": lambda x, y: (x * x).sum(),
}
for k in sizes.split():
    for t in types.split():
        if t not in dtypes:
            continue
        n = 1 << int(k)
        x, y = data(t, n, 1), data(t, n, 2)
        for op in ops.split():
            if op == "norm" and not dtypes[t].is_floating_point:
                continue  # vector_norm takes floats only
            try:
                us = timed(lambda: calls[op](x, y))
                print(f"torch,{rnd},ops,{op},{t},{n},,,,{us:.3f},,,,")
            except Exception as e:
                print(f"torch,{rnd},ops,{op},{t},{n},,,,,,,,SKIP: {type(e).__name__}", file=sys.stdout)
        del x, y
n = 1 << int(seg_log2)
x = data("f32", n, 3)
print(f"torch,{rnd},whole,whole_sum,f32,{n},,,,{timed(lambda: x.sum()):.3f},,,,")
del x
for shape in rows.split():
    r, c = map(int, shape.split("x"))
    m = data("f32", r * c, 4).view(r, c)
    for fold in row_folds.split():
        f = (lambda: m.sum(dim=-1)) if fold == "sum" else (lambda: torch.argmax(m, dim=-1))
        print(f"torch,{rnd},rows,rows_{fold},f32,{r * c},{r},{shape},,{timed(f):.3f},,,,")
    del m
PY
}

for round in $(seq 1 "$rounds"); do
  echo "library_ops: round $round of $rounds" >&2
  for k in $sizes; do
    for t in $types; do
      for op in $ops; do run_reduce "$round" ops "" --op "$op" --type "$t" --log2 "$k" --compare-cub; done
    done
  done
  run_reduce "$round" whole "" --op reduce --type f32 --variant atomic_accumulate --block 256 --log2 "$seg_log2"
  for k in $segments; do
    for l in $lengths; do
      run_reduce "$round" segmented "$l" --op segmented --type f32 --segments "$k" --lengths "$l" --log2 "$seg_log2" --compare-cub
    done
  done
  for shape in $rows; do
    for fold in $row_folds; do
      run_reduce "$round" rows "$shape" --op rows --type f32 --rows "${shape%x*}" --cols "${shape#*x}" --combine "$fold" --compare-cub
    done
  done
  run_torch "$round"
done
cat "$csv"
exit $status
