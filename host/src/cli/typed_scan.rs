//! The scan rows for `--op scan` with `--type`/`--combine` other than `i32` sum: the typed
//! look-back scan (`lookback__{type}_{op}`) × inclusive/exclusive, every element of every run
//! checked against the CPU scan (float sums within the stated bound). Only `lookback` is
//! generic; naming another scan variant (or `tuning`) is a one-line refusal (exit 2).

use std::io::Write;

use super::{Args, Session, timing_cells};
use crate::output::{Cell, Column, Shown};
use crate::reduce::typed::Value;
use crate::registry::{Elem, Op};
use crate::scan::Kind;
use crate::scan::typed::{GENERIC, TypedScan, TypedScanVariant, cpu, find};
use crate::{Error, Result};

/// The columns of a typed scan report (the × CUB pair is always there; empty without CUB).
fn columns() -> Vec<Column> {
    let mut c = vec![
        Column::new("variant", "variant", 10, 0),
        Column::new("type", "type", 5, 0),
        Column::new("combine", "combine", 8, 0),
        Column::new("kind", "kind", 9, 0),
        Column::new("n", "n", 0, 0).only(Shown::DataOnly),
    ];
    c.extend(super::scan::measured_columns(Column::new("last", "last", 24, 0)));
    c
}

/// Runs the typed scan for `elem` × `op`: the refusals, then the rows of element type `T`.
pub(super) fn run(args: &Args, elem: Elem, op: Op, out: &mut dyn Write, err: &mut dyn Write) -> Result<bool> {
    let what = format!("--op scan --type {} --combine {}", elem.name(), op.name());
    if args.variant != "all" && !GENERIC.contains(&args.variant.as_str()) {
        return Err(Error::Invalid(format!(
            "{what}: scan variant `{}` is an i32 sum only; the generic scan variants are: {}",
            args.variant,
            GENERIC.join(", ")
        )));
    }
    let tv = find("lookback", elem, op)?;
    if args.list {
        let _ = writeln!(out, "{:<18} scan    decoupled look-back scan, any type and operator", tv.symbol());
        return Ok(true);
    }
    match elem {
        Elem::I32 => rows::<i32>(args, tv, out, err),
        Elem::U32 => rows::<u32>(args, tv, out, err),
        Elem::I64 => rows::<i64>(args, tv, out, err),
        Elem::U64 => rows::<u64>(args, tv, out, err),
        Elem::F32 => rows::<f32>(args, tv, out, err),
        Elem::F64 => rows::<f64>(args, tv, out, err),
    }
}

/// The report: one row per kind (and CUB's inclusive scan with `--compare-cub`).
fn rows<T: Value>(
    args: &Args,
    tv: &'static TypedScanVariant,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> Result<bool> {
    let session = Session::open(args)?;
    let (elem, op, n) = (T::ELEM, tv.op, session.n);
    let mut report = session.report(out, columns());
    for line in session.banner() {
        report.note(&line);
    }
    // Input and output (the status words and value slots are under 1/1000 of that).
    let (data, buffer) = super::typed::typed_input::<T>(&session, err)?;
    report.note(&format!(
        "{} scan of n = {n} {} ({:.1} MiB), {}; GB/s counts each element read once and \
         written once; every output element of every run is checked: {}",
        op.name(),
        elem.name(),
        (n * elem.size()) as f64 / (1 << 20) as f64,
        session.timed_runs(),
        if elem.is_float() && op == Op::Sum {
            "within γ(depth)·Σ|x| of the exact prefix sum (docs: types and operators, typed scans)"
        } else {
            "bit for bit against the CPU scan"
        }
    ));
    let cub = args.compare_cub.then(|| cub::<T>(&session, op, &data));
    if let Some(Err(why)) = &cub {
        report.note(&format!("--compare-cub: no CUB comparison ({why}); no × CUB figures"));
    }
    let cub = cub.and_then(|c| c.ok());
    report.header();
    let mut failed = 0;
    let kinds = Kind::ALL.into_iter().filter(|k| args.kind.as_deref().is_none_or(|x| x == k.name()));
    for kind in kinds {
        super::sweep_progress(args, err, n, tv.name);
        let row = row::<T>(&session, tv, kind, &buffer, &data, cub);
        failed += super::typed::row_failed(&row) as usize;
        report.row(&row);
    }
    let mut meta = serde_json::Map::new();
    meta.insert("op".into(), "scan".into());
    meta.extend(session.meta());
    meta.insert("type".into(), elem.name().into());
    meta.insert("combine".into(), op.name().into());
    meta.insert("cub".into(), cub.map(|t| serde_json::json!({"op": "InclusiveScan", "median_us": t})).into());
    super::finish(report, meta, failed, "scan row(s)", None);
    Ok(failed == 0)
}

/// One kind's cells: measured and checked, or skipped/failed with why.
fn row<T: Value>(
    session: &Session,
    tv: &'static TypedScanVariant,
    kind: Kind,
    buffer: &crate::DeviceBuffer<T>,
    data: &[T],
    cub: Option<f64>,
) -> Vec<Cell> {
    let names = [tv.name, tv.elem.name(), tv.op.name(), kind.name()];
    let measured = session.backend.alloc::<T>(data.len()).and_then(|mut output| {
        let mut s = TypedScan::new(&session.backend, tv, kind, buffer, &mut output, data.len())?.expecting(data);
        let runs = crate::timing::timed_runs(&session.backend, &mut s, session.repeat)?;
        let got = s.result()?;
        Ok((s.grid(), runs, got.last().copied(), cpu::check(tv.op, kind, data, &got, s.depth())))
    });
    let (grid, runs, last, verdict) = match super::Outcome::of(measured) {
        super::Outcome::Ran(m) => m,
        other => return other.bare_row(&names, columns().len()).unwrap_or_default(),
    };
    let mut row: Vec<Cell> = names.iter().map(|s| Cell::Text(s.to_string())).collect();
    row.extend([
        Cell::Int(data.len() as i64),
        Cell::Text(format!("{grid}×{}", tv.threads)),
        Cell::Int(grid.into()),
        Cell::Int(tv.threads.into()),
        Cell::Int(tv.tile().into()),
    ]);
    row.extend(timing_cells(session, &runs, (2 * data.len() * tv.elem.size()) as f64));
    // CUB's InclusiveScan is the reference for inclusive rows only.
    let ratio = cub.filter(|_| kind == Kind::Inclusive).map(|c| c / runs.median_us());
    row.extend([
        cub.map_or(Cell::Empty, Cell::Num),
        ratio.map_or(Cell::Empty, Cell::Num),
        last.map_or(Cell::Empty, |l| Cell::Text(l.to_string())),
    ]);
    row.push(match (verdict, &runs.first_wrong) {
        (Err(why), _) => Cell::Verdict("FAIL", Some(why)),
        (Ok(()), Some((run, why))) => Cell::Verdict("FAIL", Some(format!("timed run {run}: {why}"))),
        (Ok(()), None) => Cell::Verdict("PASS", None),
    });
    row
}

/// `--compare-cub`: CUB's median for the inclusive `op` scan of `data`, its last call's output
/// checked against the CPU scan (float sums within the bound for any order, γ(n)·Σ|x|: CUB's
/// order of additions is not ours), or why there is none.
fn cub<T: Value>(session: &Session, op: Op, data: &[T]) -> std::result::Result<f64, String> {
    let repeat = session.cub_calls()?;
    let (timing, got) = crate::cub::time_typed_scan(op, data, repeat).map_err(|e| e.to_string())?;
    cpu::check(op, Kind::Inclusive, data, &got, data.len() as u64)
        .map_err(|why| format!("CUB's scan is wrong: {why}"))?;
    Ok(timing.median_us)
}
