//! The scan rows of the command line (`reduce --op scan`): every selected scan variant that runs
//! the pair (`--type`/`--combine`) × inclusive/exclusive, checked element by element against the
//! CPU scan, timed, and turned into cells of the same report the reductions use. One path for
//! every pair; what the report shows of a row follows the pair ([`Layout`]).

use std::io::Write;

use super::metrics::before_last;
use super::{Args, Layout, Session, progress, progress_done, timing_cells, timing_columns};
use crate::input::{Input, Pattern, typed};
use crate::output::{Cell, Column, Shown};
use crate::scan::{Kind, ScanMeasurement, ScanVariant, all, curriculum, find, generic_names, measure};
use crate::types::{Elem, Op, Value};
use crate::{Error, Result};

/// The columns of a scan report (the × CUB column is always there; empty without CUB).
fn columns(layout: Layout) -> Vec<Column> {
    let mut c = match layout {
        Layout::Curriculum => vec![
            // As wide as the longest name (`lookback_stream_store`), so that every row lines up.
            Column::new("variant", "variant", all().map(|v| v.name.len()).max().unwrap_or(16), 0),
            Column::new("kind", "kind", 9, 0),
            Column::new("n", "n", 0, 0).only(Shown::DataOnly),
            Column::new("launches", "launches", 8, 0),
        ],
        Layout::Pair => vec![
            Column::new("variant", "variant", 10, 0),
            Column::new("type", "type", 5, 0),
            Column::new("combine", "combine", 8, 0),
            Column::new("kind", "kind", 9, 0),
            Column::new("n", "n", 0, 0).only(Shown::DataOnly),
        ],
    };
    c.extend([
        Column::new("grid_x_block", "grid×block", 14, 0).only(Shown::TableOnly),
        Column::new("grid", "grid", 0, 0).only(Shown::DataOnly),
        Column::new("block", "block", 0, 0).only(Shown::DataOnly),
        Column::new("tile", "tile", 0, 0).only(Shown::DataOnly),
    ]);
    c.extend(timing_columns(("bytes_per_s_rw", "gb_per_s_rw", "GB/s r+w"), 7));
    c.extend([
        Column::new("cub_time_us", "CUB µs", 0, 2).only(Shown::DataOnly),
        Column::new("speedup_vs_cub", "vs CUB", 8, 2),
        match layout {
            Layout::Curriculum => Column::new("last", "last", 0, 0).only(Shown::JsonOnly),
            Layout::Pair => Column::new("last", "last", 24, 0),
        },
        Column::new("verdict", "verdict", 0, 0),
    ]);
    c
}

/// What happened to one (variant, kind).
type Outcome<T> = super::Outcome<ScanMeasurement<T>>;

/// CUB's scan at the same `n`, when asked.
enum Cub {
    NotAsked,
    Timed(f64),
    Unavailable(String),
}

fn cub_time(cub: &Cub) -> Option<f64> {
    match cub {
        Cub::Timed(t) => Some(*t),
        Cub::NotAsked | Cub::Unavailable(_) => None,
    }
}

/// A curriculum row of `width` cells: the name, the kind, then empty cells and the verdict.
fn bare_row(name: &str, kind: Kind, verdict: Cell) -> Vec<Cell> {
    let mut row = vec![Cell::Text(name.into()), Cell::Text(kind.name().into())];
    row.resize(columns(Layout::Curriculum).len() - 1, Cell::Empty);
    row.push(verdict);
    row
}

fn verdict<T: Value>(m: &ScanMeasurement<T>) -> Cell {
    match (&m.verdict, &m.runs.first_wrong) {
        (Err(why), _) => Cell::Verdict("FAIL", Some(why.clone())),
        (Ok(()), Some((run, why))) => Cell::Verdict("FAIL", Some(format!("timed run {run}: {why}"))),
        (Ok(()), None) => Cell::Verdict("PASS", None),
    }
}

/// The cells of one row, one per column of [`columns`].
fn cells<T: Value>(
    session: &Session,
    (v, op): (&ScanVariant, Op),
    kind: Kind,
    outcome: &Outcome<T>,
    cub: &Cub,
) -> Vec<Cell> {
    let layout = Layout::of(T::ELEM, op);
    let names: Vec<&str> = match layout {
        Layout::Curriculum => vec![v.name, kind.name()],
        Layout::Pair => vec![v.name, T::ELEM.name(), op.name(), kind.name()],
    };
    if let Some(row) = outcome.bare_row(&names, columns(layout).len()) {
        return row;
    }
    let Outcome::Ran(m) = outcome else { unreachable!("bare_row covers the rows that did not run") };
    let g = m.geometry;
    // CUB's inclusive scan is the reference for inclusive rows only.
    let ratio = cub_time(cub).filter(|_| kind == Kind::Inclusive).map(|c| c / m.median_us());
    let mut row: Vec<Cell> = names.iter().map(|n| Cell::Text(n.to_string())).collect();
    row.push(Cell::Int(m.n as i64));
    if layout == Layout::Curriculum {
        row.push(Cell::Int(g.launches as i64));
    }
    row.extend([
        Cell::Text(format!("{}×{}", g.grid, g.block)),
        Cell::Int(g.grid.into()),
        Cell::Int(g.block.into()),
        Cell::Int(g.tile.into()),
    ]);
    // Each element read once and written once.
    row.extend(timing_cells(session, &m.runs, (2 * m.n * T::ELEM.size()) as f64));
    let last = match layout {
        Layout::Curriculum => m.last.map_or(Cell::Empty, |l| Cell::Int(l.bits() as u32 as i32 as i64)),
        Layout::Pair => m.last.map_or(Cell::Empty, |l| Cell::Text(l.to_string())),
    };
    row.extend([cub_time(cub).map_or(Cell::Empty, Cell::Num), ratio.map_or(Cell::Empty, Cell::Num), last, verdict(m)]);
    row
}

/// A reference row (CUB's scan, a device-to-device copy): its median `t` µs moving `n` elements
/// in and out, and the verdict's detail.
fn reference_row(session: &Session, name: &str, kind: &str, t: f64, detail: &str, vs_cub: Option<f64>) -> Vec<Cell> {
    let bw = session.n as f64 * 8.0 / (t * 1e-6);
    let columns = columns(Layout::Curriculum);
    let mut row = vec![Cell::Text(name.into()), Cell::Text(kind.into())];
    row.resize(columns.len() - 1, Cell::Empty);
    row.push(Cell::Verdict("REFERENCE", Some(detail.into())));
    let at = |key: &str| columns.iter().position(|c| c.key == key).expect("a scan column");
    row[at("n")] = Cell::Int(session.n as i64);
    row[at("time_us_median")] = Cell::Num(t);
    row[at("median_us")] = Cell::Num(t);
    row[at("bytes_per_s_rw")] = Cell::Int(bw.round() as i64);
    row[at("gb_per_s_rw")] = Cell::Num(bw / 1e9);
    row[at("pct_peak")] = session.pct_peak(bw);
    row[at("speedup_vs_cub")] = vs_cub.map_or(Cell::Empty, Cell::Num);
    row
}

/// CUB's own row, when it was asked for (the curriculum's report).
fn cub_row(session: &Session, cub: &Cub) -> Option<Vec<Cell>> {
    match cub {
        Cub::NotAsked => None,
        Cub::Unavailable(why) => Some(bare_row("cub", Kind::Inclusive, Cell::Verdict("SKIP", Some(why.clone())))),
        Cub::Timed(t) => {
            let mut row =
                reference_row(session, "cub", "inclusive", *t, "cub::DeviceScan::InclusiveSum, nvcc", Some(1.0));
            let at = columns(Layout::Curriculum).iter().position(|c| c.key == "cub_time_us").expect("a scan column");
            row[at] = Cell::Num(*t);
            Some(row)
        }
    }
}

/// With `--compare-cub` on a GPU: the median time of a device-to-device copy of the `n` input
/// elements (`cuMemcpyAsync` on the backend's stream, events around each): the floor of any
/// scan, which reads and writes every element once.
fn time_copy<T: Value>(session: &Session, input: &crate::DeviceBuffer<T>, asked: bool) -> Option<f64> {
    if !asked || !session.backend.is_gpu() {
        return None;
    }
    let b = &session.backend;
    let mut out = b.alloc::<T>(session.n).ok()?;
    b.copy(input, &mut out).ok()?;
    let mut times = Vec::new();
    for _ in 0..session.repeat {
        times.push(b.time(&mut || b.copy(input, &mut out)).ok()?);
    }
    Some(crate::timing::median(&times))
}

/// The scan variants `--variant` selects that run `elem` × `op`; for any other pair than `i32`
/// sums, a variant that does not (or `tuning`) is a one-line refusal.
fn selected(args: &Args, elem: Elem, op: Op) -> Result<Vec<&'static ScanVariant>> {
    let name = args.variant.as_str();
    let unfit = name.split(',').map(str::trim).find(|one| !find(one).is_ok_and(|v| v.supports(elem, op)));
    if Layout::of(elem, op) == Layout::Pair
        && name != "all"
        && let Some(one) = unfit
    {
        return Err(Error::Invalid(format!(
            "--op scan --type {} --combine {}: scan variant `{one}` is an i32 sum only; the generic scan variants \
             are: {}",
            elem.name(),
            op.name(),
            generic_names().join(", ")
        )));
    }
    let list: Vec<&'static ScanVariant> = match name {
        "all" => curriculum().collect(),
        "tuning" => all().filter(|v| v.name.starts_with("lookback")).collect(),
        name => name.split(',').map(|one| find(one.trim())).collect::<Result<_>>()?,
    };
    Ok(list.into_iter().filter(|v| v.supports(elem, op)).collect())
}

/// The reduction-only flags are refused on the scan path, never silently ignored.
fn refuse_reduction_flags(args: &Args) -> Result<()> {
    if let Some(block) = args.block {
        let blocks: Vec<String> = curriculum().map(|v| format!("{} {}", v.name, v.block())).collect();
        return Err(Error::Invalid(format!(
            "--block {block} does not apply to --op scan: each scan variant has its own block ({})",
            blocks.join(", ")
        )));
    }
    if let Some(k) = args.blocks_per_sm {
        return Err(Error::Invalid(format!(
            "--blocks-per-sm {k} does not apply to --op scan: it shapes the grid of the grid-stride reductions"
        )));
    }
    if let Some(f) = &args.family {
        return Err(Error::Invalid(format!(
            "--family {f} does not apply to --op scan; choose scans with --variant (a name, all or tuning)"
        )));
    }
    if args.compare_c {
        return Err(Error::Invalid(
            "--compare-c does not apply to --op scan: the CUDA C twins are of the classic reductions only; \
             --compare-cub compares the scans with CUB"
                .into(),
        ));
    }
    Ok(())
}

/// `--compare-cub`: CUB's inclusive scan at the same `n`: the curriculum's `InclusiveSum` on its
/// own input from the seed, a pair's `InclusiveScan` on the same values, its last call's output
/// checked against the CPU scan (float sums within the bound for any order, γ(n)·Σ|x|: CUB's
/// order of additions is not ours).
fn time_cub<T: Value>(session: &Session, op: Op, data: &[T], asked: bool) -> Cub {
    if !asked {
        return Cub::NotAsked;
    }
    if Layout::of(T::ELEM, op) == Layout::Pair {
        let typed = || -> std::result::Result<f64, String> {
            let repeat = session.cub_calls()?;
            let (timing, got) = crate::cub::time_typed_scan(op, data, repeat).map_err(|e| e.to_string())?;
            crate::scan::cpu::check(op, Kind::Inclusive, data, &got, data.len() as u64)
                .map_err(|why| format!("CUB's scan is wrong: {why}"))?;
            Ok(timing.median_us)
        };
        return typed().map_or_else(Cub::Unavailable, Cub::Timed);
    }
    if !session.backend.is_gpu() {
        return Cub::Unavailable("CUB runs on a GPU only".into());
    }
    match crate::cub::time(crate::cub::CubOp::InclusiveSum, session.n, session.repeat, session.seed) {
        Ok(t) => Cub::Timed(t.median_us),
        Err(e) => Cub::Unavailable(e.to_string()),
    }
}

/// Runs `reduce --op scan`: prints the rows, returns whether every row passed.
pub(super) fn run(args: &Args, out: &mut dyn Write, err: &mut dyn Write) -> Result<bool> {
    refuse_reduction_flags(args)?;
    let (elem, op) = (Elem::parse(&args.elem)?, Op::parse(&args.combine)?);
    let variants = selected(args, elem, op)?;
    if args.list {
        match Layout::of(elem, op) {
            Layout::Curriculum => {
                for v in all() {
                    let _ =
                        writeln!(out, "{:<18} {:<7} {}", v.name, if v.tuning { "tuning" } else { "scan" }, v.concept);
                }
            }
            Layout::Pair => {
                for v in &variants {
                    let symbol = crate::with_elem!(elem, T => v.instance::<T>(op)?.plan.symbols()).join(", ");
                    let _ = writeln!(out, "{symbol:<18} scan    decoupled look-back scan, any type and operator");
                }
            }
        }
        return Ok(true);
    }
    crate::with_elem!(elem, T => rows::<T>(args, &variants, op, out, err))
}

/// The report of `variants` × kinds for `T` × `op`.
fn rows<T: Value>(
    args: &Args,
    variants: &[&'static ScanVariant],
    op: Op,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> Result<bool> {
    let session = Session::open(args)?;
    let layout = Layout::of(T::ELEM, op);
    let kinds: Vec<Kind> =
        Kind::ALL.into_iter().filter(|k| args.kind.as_deref().is_none_or(|x| x == k.name())).collect();
    let metrics = if args.metrics { Some(metrics::<T>(&session, variants, op, &kinds, err)?) } else { None };
    let metric_columns = metrics.as_ref().map_or_else(Vec::new, |(p, _)| crate::metrics::columns_of(*p));
    let gpu = super::committed::Committed::of(&session).only_if(layout == Layout::Curriculum);
    let mut report = session.report(out, before_last(before_last(columns(layout), gpu.columns()), metric_columns));
    for line in session.banner() {
        report.note(&line);
    }
    if session.backend.is_gpu() && layout == Layout::Pair {
        super::reduce::fits_device(session.n, T::ELEM.size() as u64, 2, session.info().memory_bytes)?;
    }
    let (data, buffer, references) = data::<T>(&session, layout, &kinds, err)?;
    let cub = time_cub::<T>(&session, op, &data, args.compare_cub);
    if layout == Layout::Curriculum {
        progress_done(&session, err);
    }
    note::<T>(&mut report, &session, op, &cub);
    let profile_note = metrics.as_ref().map(|(p, _)| super::metrics::note(*p).to_string());
    for line in profile_note.into_iter().chain(gpu.note()) {
        report.note(&line);
    }
    report.header();
    // On the emulator, a row gets its pair's committed GPU figures; with --metrics, its counters;
    // CUB's and the copy's rows get empty cells.
    let with_metrics = |row: Vec<Cell>, i: usize, (name, kind): (&str, &str)| {
        let row = before_last(row, gpu.cells(name, Some(kind)));
        match &metrics {
            Some((p, m)) => before_last(row, crate::metrics::cells(*p, m.get(i).and_then(Option::as_ref))),
            None => row,
        }
    };
    let (mut failed, mut i) = (0, 0);
    for &v in variants {
        super::sweep_progress(args, err, session.n, v.name);
        for (&kind, reference) in kinds.iter().zip(&references) {
            let outcome = run_one(&session, v, op, kind, (&buffer, &data), reference.as_deref());
            failed += outcome.failed(ScanMeasurement::pass) as usize;
            report.row(&with_metrics(cells(&session, (v, op), kind, &outcome, &cub), i, (v.name, kind.name())));
            i += 1;
        }
    }
    if layout == Layout::Curriculum {
        if let Some(row) = cub_row(&session, &cub) {
            report.row(&with_metrics(row, usize::MAX, ("", "")));
        }
        if let Some(t) = time_copy(&session, &buffer, args.compare_cub) {
            let vs_cub = cub_time(&cub).map(|c| c / t);
            let row = reference_row(&session, "d2d_copy", "copy", t, "device-to-device copy of the input", vs_cub);
            report.row(&with_metrics(row, usize::MAX, ("", "")));
        }
    }
    let mut meta = serde_json::Map::new();
    meta.insert("op".into(), "scan".into());
    meta.extend(session.meta());
    let cub_op = match layout {
        Layout::Curriculum => "InclusiveSum",
        Layout::Pair => {
            meta.insert("type".into(), T::ELEM.name().into());
            meta.insert("combine".into(), op.name().into());
            "InclusiveScan"
        }
    };
    meta.insert("cub".into(), cub_time(&cub).map(|t| serde_json::json!({"op": cub_op, "median_us": t})).into());
    super::finish(report, meta, failed, "scan row(s)", gpu.footer());
    Ok(failed == 0)
}

/// The values of a run: the curriculum's over the whole `i32` range, a pair's over its type's.
fn values<T: Value>(session: &Session, layout: Layout) -> Vec<T> {
    match layout {
        Layout::Curriculum => Input::full_range(session.n, session.seed)
            .data
            .into_iter()
            .map(|x| T::from_bits_u64(x as u32 as u64))
            .collect(),
        Layout::Pair => typed::<T>(session.n, session.seed, Pattern::Random),
    }
}

/// The input of a run, uploaded, and (the curriculum's) the CPU scan of each kind, with
/// progress on `err` (the curriculum's line ends once CUB is timed too).
#[allow(clippy::type_complexity)]
fn data<T: Value>(
    session: &Session,
    layout: Layout,
    kinds: &[Kind],
    err: &mut dyn Write,
) -> Result<(Vec<T>, crate::DeviceBuffer<T>, Vec<Option<Vec<T>>>)> {
    let (n, seed) = (session.n, session.seed);
    progress(
        session,
        err,
        &match layout {
            Layout::Curriculum => format!("generating {n} inputs (seed {seed}) and the CPU scans"),
            Layout::Pair => format!("generating {n} {} inputs (seed {seed})", T::ELEM.name()),
        },
    );
    let data = values::<T>(session, layout);
    let references = kinds
        .iter()
        .map(|&kind| (layout == Layout::Curriculum).then(|| crate::scan::cpu::reference(Op::Sum, kind, &data)))
        .collect();
    let buffer = session.backend.upload(&data)?;
    if layout == Layout::Pair {
        progress_done(session, err);
    }
    Ok((data, buffer, references))
}

/// The description line above the table, and (a pair's) CUB's when it is missing.
fn note<T: Value>(report: &mut crate::output::Report<'_>, session: &Session, op: Op, cub: &Cub) {
    let (n, elem) = (session.n, T::ELEM);
    let mib = (n * elem.size()) as f64 / (1 << 20) as f64;
    if Layout::of(elem, op) == Layout::Curriculum {
        report.note(&format!(
            "scan of n = {n} i32 ({mib:.1} MiB), {}; time = all launches of a run (CUDA events{}); \
             GB/s counts each element read once and written once (8 bytes); every output element of every run is \
             compared with the CPU scan; each variant has its own block size",
            session.timed_runs(),
            session.clock(),
        ));
        return;
    }
    report.note(&format!(
        "{} scan of n = {n} {} ({mib:.1} MiB), {}; GB/s counts each element read once and \
         written once; every output element of every run is checked: {}",
        op.name(),
        elem.name(),
        session.timed_runs(),
        if elem.is_float() && op == Op::Sum {
            "within γ(depth)·Σ|x| of the exact prefix sum (docs: types and operators, typed scans)"
        } else {
            "bit for bit against the CPU scan"
        }
    ));
    if let Cub::Unavailable(why) = cub {
        report.note(&format!("--compare-cub: no CUB comparison ({why}); no × CUB figures"));
    }
}

/// Measures `v`'s row of `T` × `op`, `kind`, on `input`; a device it cannot run on, or memory it
/// does not have, is a skipped row.
fn run_one<T: Value>(
    session: &Session,
    v: &'static ScanVariant,
    op: Op,
    kind: Kind,
    (buffer, data): (&crate::DeviceBuffer<T>, &[T]),
    reference: Option<&[T]>,
) -> Outcome<T> {
    let (n, info) = (session.n, session.info());
    let run = || {
        let inst = v.instance::<T>(op)?;
        let need = (2 * n * T::ELEM.size()) as u64 + inst.plan.scratch_bytes(n, T::ELEM.size());
        if session.backend.is_gpu() && need > info.memory_bytes {
            return Err(Error::Unsupported(format!(
                "needs {need} bytes of device memory; the device has {} bytes",
                info.memory_bytes
            )));
        }
        measure(&session.backend, inst, kind, (buffer, data), reference, session.repeat)
    };
    Outcome::of(run())
}

/// `--metrics`: the counters of every (variant, kind) row, before any is printed: Nsight
/// Compute's on a GPU, the emulator's own count of a rerun of the row's launches elsewhere.
fn metrics<T: Value>(
    session: &Session,
    variants: &[&'static ScanVariant],
    op: Op,
    kinds: &[Kind],
    err: &mut dyn Write,
) -> Result<super::metrics::Counted> {
    let rows: Vec<_> = variants
        .iter()
        .flat_map(|&v| kinds.iter().map(move |&k| (v, k)))
        .map(|(v, kind)| {
            let inst = v.instance::<T>(op).ok()?;
            let runs = v.kinds.contains(&kind) && session.info().compute_capability >= v.min_cc;
            runs.then(|| (v, kind, inst.plan.symbols()))
        })
        .collect();
    if session.backend.is_gpu() {
        let pair = (Layout::of(T::ELEM, op) == Layout::Pair).then_some((T::ELEM, op));
        let jobs: Vec<_> = rows.into_iter().map(|r| r.map(|(v, k, s)| (v.name, k, s))).collect();
        return super::metrics::scans(session, &jobs, pair, err);
    }
    let data = values::<T>(session, Layout::of(T::ELEM, op));
    let buffer = session.backend.upload(&data)?;
    let mut out = Vec::with_capacity(rows.len());
    for row in rows {
        let Some((v, kind, symbols)) = row else {
            out.push(None);
            continue;
        };
        progress(session, err, &format!("counting {} {} on the emulator", v.name, kind.name()));
        out.push(super::metrics::emulated(session, &symbols, |s| {
            let _ = run_one(s, v, op, kind, (&buffer, &data), None);
        }));
        progress_done(session, err);
    }
    Ok((crate::metrics::Profile::Emulator, out))
}
