//! The scan rows of the command line (`reduce --op scan`): every selected scan variant ×
//! inclusive/exclusive, checked element by element against the CPU scan, timed, and turned
//! into cells of the same report the reductions use. Other element types and operators
//! (`--type`, `--combine`) go to the typed look-back scan (`cli/typed_scan.rs`).

use std::io::Write;

use super::metrics::before_last;
use super::{Args, Session, progress, progress_done, timing_cells, timing_columns};
use crate::input::Input;
use crate::output::{Cell, Column, Shown};
use crate::scan::{Kind, ScanMeasurement, ScanVariant, all, curriculum, find, measure, mismatch_text};
use crate::{Error, Result};

/// The columns of a scan report (the × CUB column is always there; empty without CUB).
fn columns() -> Vec<Column> {
    let mut c = vec![
        // As wide as the longest name (`lookback_stream_store`), so that every row lines up.
        Column::new("variant", "variant", all().map(|v| v.name.len()).max().unwrap_or(16), 0),
        Column::new("kind", "kind", 9, 0),
        Column::new("n", "n", 0, 0).only(Shown::DataOnly),
        Column::new("launches", "launches", 8, 0),
    ];
    c.extend(measured_columns(Column::new("last", "last", 0, 0).only(Shown::JsonOnly)));
    c
}

/// The columns every scan report (i32 and typed) has after its names: the launch shape, the
/// timing group, CUB's time and the ratio, `last`, the verdict.
pub(super) fn measured_columns(last: Column) -> Vec<Column> {
    let mut c = vec![
        Column::new("grid_x_block", "grid×block", 14, 0).only(Shown::TableOnly),
        Column::new("grid", "grid", 0, 0).only(Shown::DataOnly),
        Column::new("block", "block", 0, 0).only(Shown::DataOnly),
        Column::new("tile", "tile", 0, 0).only(Shown::DataOnly),
    ];
    c.extend(timing_columns(("bytes_per_s_rw", "gb_per_s_rw", "GB/s r+w"), 7));
    c.extend([
        Column::new("cub_time_us", "CUB µs", 0, 2).only(Shown::DataOnly),
        Column::new("speedup_vs_cub", "vs CUB", 8, 2),
        last,
        Column::new("verdict", "verdict", 0, 0),
    ]);
    c
}

/// What happened to one (variant, kind).
type Outcome = super::Outcome<ScanMeasurement>;

/// CUB's `DeviceScan::InclusiveSum` at the same `n`, when asked.
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

/// A row of `width` cells: the name, the kind, then empty cells and the verdict.
fn bare_row(name: &str, kind: Kind, verdict: Cell) -> Vec<Cell> {
    let mut row = vec![Cell::Text(name.into()), Cell::Text(kind.name().into())];
    row.resize(columns().len() - 1, Cell::Empty);
    row.push(verdict);
    row
}

fn verdict(m: &ScanMeasurement) -> Cell {
    match (m.mismatch, &m.runs.first_wrong) {
        (Some(first), _) => Cell::Verdict("FAIL", Some(mismatch_text(first))),
        (None, Some((run, why))) => Cell::Verdict("FAIL", Some(format!("timed run {run}: {why}"))),
        (None, None) => Cell::Verdict("PASS", None),
    }
}

fn cells(session: &Session, v: &ScanVariant, kind: Kind, outcome: &Outcome, cub: &Cub) -> Vec<Cell> {
    if let Some(row) = outcome.bare_row(&[v.name, kind.name()], columns().len()) {
        return row;
    }
    let Outcome::Ran(m) = outcome else { unreachable!("bare_row covers the rows that did not run") };
    let g = m.geometry;
    // CUB's InclusiveSum is the reference for inclusive rows only.
    let ratio = cub_time(cub).filter(|_| kind == Kind::Inclusive).map(|c| c / m.median_us());
    let mut row = vec![
        Cell::Text(v.name.into()),
        Cell::Text(kind.name().into()),
        Cell::Int(m.n as i64),
        Cell::Int(g.launches as i64),
        Cell::Text(format!("{}×{}", g.grid, g.block)),
        Cell::Int(g.grid.into()),
        Cell::Int(g.block.into()),
        Cell::Int(g.tile.into()),
    ];
    // Each element read once and written once.
    row.extend(timing_cells(session, &m.runs, m.n as f64 * 8.0));
    row.extend([
        cub_time(cub).map_or(Cell::Empty, Cell::Num),
        ratio.map_or(Cell::Empty, Cell::Num),
        m.last.map_or(Cell::Empty, |l| Cell::Int(l.into())),
        verdict(m),
    ]);
    row
}

/// A reference row (CUB's scan, a device-to-device copy): its median `t` µs moving `n` elements
/// in and out, and the verdict's detail.
fn reference_row(session: &Session, name: &str, kind: &str, t: f64, detail: &str, vs_cub: Option<f64>) -> Vec<Cell> {
    let bw = session.n as f64 * 8.0 / (t * 1e-6);
    let mut row = vec![Cell::Text(name.into()), Cell::Text(kind.into())];
    row.resize(columns().len() - 1, Cell::Empty);
    row.push(Cell::Verdict("REFERENCE", Some(detail.into())));
    let at = |key: &str| columns().iter().position(|c| c.key == key).expect("a scan column");
    row[at("n")] = Cell::Int(session.n as i64);
    row[at("time_us_median")] = Cell::Num(t);
    row[at("median_us")] = Cell::Num(t);
    row[at("bytes_per_s_rw")] = Cell::Int(bw.round() as i64);
    row[at("gb_per_s_rw")] = Cell::Num(bw / 1e9);
    row[at("pct_peak")] = session.pct_peak(bw);
    row[at("speedup_vs_cub")] = vs_cub.map_or(Cell::Empty, Cell::Num);
    row
}

/// CUB's own row, when it was asked for.
fn cub_row(session: &Session, cub: &Cub) -> Option<Vec<Cell>> {
    match cub {
        Cub::NotAsked => None,
        Cub::Unavailable(why) => Some(bare_row("cub", Kind::Inclusive, Cell::Verdict("SKIP", Some(why.clone())))),
        Cub::Timed(t) => {
            let mut row =
                reference_row(session, "cub", "inclusive", *t, "cub::DeviceScan::InclusiveSum, nvcc", Some(1.0));
            let at = |key: &str| columns().iter().position(|c| c.key == key).expect("a scan column");
            row[at("cub_time_us")] = Cell::Num(*t);
            Some(row)
        }
    }
}

/// With `--compare-cub` on a GPU: the median time of a device-to-device copy of the `n` input
/// elements (`cuMemcpyAsync` on the backend's stream, events around each): the floor of any
/// scan, which reads and writes every element once.
fn time_copy(session: &Session, input: &crate::DeviceBuffer<i32>, asked: bool) -> Option<f64> {
    if !asked || !session.backend.is_gpu() {
        return None;
    }
    let b = &session.backend;
    let mut out = b.alloc::<i32>(session.n).ok()?;
    b.copy(input, &mut out).ok()?;
    let mut times = Vec::new();
    for _ in 0..session.repeat {
        times.push(b.time(&mut || b.copy(input, &mut out)).ok()?);
    }
    Some(crate::timing::median(&times))
}

fn selected(name: &str) -> Result<Vec<&'static ScanVariant>> {
    Ok(match name {
        "all" => curriculum().collect(),
        "tuning" => all().filter(|v| v.name.starts_with("lookback")).collect(),
        name => vec![find(name)?],
    })
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

fn time_cub(session: &Session, asked: bool) -> Cub {
    if !asked {
        return Cub::NotAsked;
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
    let (elem, op) = (crate::registry::Elem::parse(&args.elem)?, crate::registry::Op::parse(&args.combine)?);
    if (elem, op) != (crate::registry::Elem::I32, crate::registry::Op::Sum) {
        return super::typed_scan::run(args, elem, op, out, err);
    }
    let variants = selected(&args.variant)?;
    if args.list {
        for v in all() {
            let _ = writeln!(out, "{:<18} {:<7} {}", v.name, if v.tuning { "tuning" } else { "scan" }, v.concept);
        }
        return Ok(true);
    }
    let session = Session::open(args)?;
    let kinds: Vec<Kind> =
        Kind::ALL.into_iter().filter(|k| args.kind.as_deref().is_none_or(|x| x == k.name())).collect();
    let pairs: Vec<_> = variants.iter().flat_map(|&v| kinds.iter().map(move |&k| (v, k))).collect();
    let metrics = if args.metrics { Some(super::metrics::scans(&session, &pairs, err)?) } else { None };
    let metric_columns = metrics.as_ref().map_or_else(Vec::new, |(p, _)| crate::metrics::columns_of(*p));
    let gpu = super::committed::Committed::of(&session);
    let all_columns = before_last(before_last(columns(), gpu.columns()), metric_columns);
    let mut report = session.report(out, all_columns);
    for line in session.banner() {
        report.note(&line);
    }
    let n = session.n;
    progress(&session, err, &format!("generating {n} inputs (seed {}) and the CPU scans", session.seed));
    let input = Input::full_range(n, session.seed);
    let expected: Vec<(Kind, Vec<i32>)> = kinds.iter().map(|&k| (k, k.reference(&input.data))).collect();
    let buffer = session.backend.upload(&input.data)?;
    drop(input);
    let cub = time_cub(&session, args.compare_cub);
    progress_done(&session, err);
    report.note(&format!(
        "scan of n = {n} i32 ({:.1} MiB), {}; time = all launches of a run (CUDA events{}); \
         GB/s counts each element read once and written once (8 bytes); every output element of every run is \
         compared with the CPU scan; each variant has its own block size",
        n as f64 * 4.0 / (1 << 20) as f64,
        session.timed_runs(),
        session.clock(),
    ));
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
    for v in variants {
        super::sweep_progress(args, err, session.n, v.name);
        for (kind, reference) in &expected {
            let outcome = run_one(&session, v, *kind, &buffer, reference);
            failed += outcome.failed(ScanMeasurement::pass) as usize;
            report.row(&with_metrics(cells(&session, v, *kind, &outcome, &cub), i, (v.name, kind.name())));
            i += 1;
        }
    }
    if let Some(row) = cub_row(&session, &cub) {
        report.row(&with_metrics(row, usize::MAX, ("", "")));
    }
    if let Some(t) = time_copy(&session, &buffer, args.compare_cub) {
        let vs_cub = cub_time(&cub).map(|c| c / t);
        let row = reference_row(&session, "d2d_copy", "copy", t, "device-to-device copy of the input", vs_cub);
        report.row(&with_metrics(row, usize::MAX, ("", "")));
    }
    let mut meta = serde_json::Map::new();
    meta.insert("op".into(), "scan".into());
    meta.extend(session.meta());
    meta.insert("cub".into(), cub_time(&cub).map(|t| serde_json::json!({"op": "InclusiveSum", "median_us": t})).into());
    super::finish(report, meta, failed, "scan row(s)", gpu.footer());
    Ok(failed == 0)
}

/// The emulator's counters of every (variant, kind) pair (`--metrics` on the emulator): each
/// pair's launches made once more on a counting copy of the emulator, on the same input.
pub(super) fn counted(
    session: &Session,
    pairs: &[(&'static ScanVariant, Kind)],
    err: &mut dyn Write,
) -> Result<Vec<Option<crate::metrics::Summary>>> {
    let input = Input::full_range(session.n, session.seed);
    let buffer = session.backend.upload(&input.data)?;
    let mut out = Vec::with_capacity(pairs.len());
    for &(v, kind) in pairs {
        if !v.kinds.contains(&kind) {
            out.push(None);
            continue;
        }
        progress(session, err, &format!("counting {} {} on the emulator", v.name, kind.name()));
        let reference = kind.reference(&input.data);
        out.push(super::metrics::emulated(session, &v.symbols(), |s| {
            run_one(s, v, kind, &buffer, &reference);
        }));
        progress_done(session, err);
    }
    Ok(out)
}

fn run_one(
    session: &Session,
    v: &'static ScanVariant,
    kind: Kind,
    buffer: &crate::DeviceBuffer<i32>,
    reference: &[i32],
) -> Outcome {
    let (n, info) = (session.n, session.info());
    let need = 8 * n as u64 + v.scratch_bytes(n);
    if session.backend.is_gpu() && need > info.memory_bytes {
        return Outcome::Skipped(format!(
            "needs {need} bytes of device memory; the device has {} bytes",
            info.memory_bytes
        ));
    }
    Outcome::of(measure(&session.backend, v, kind, buffer, n, session.repeat, reference))
}
