//! The reduction rows for `--type` / `--combine` other than `i32` sum: the generic variants
//! only. With `--variant all` or `--family`, the classic variants (i32 sums) are left out and
//! a note line says so; a classic variant named with `--variant` is a one-line refusal
//! (exit 2).

use std::io::Write;

use super::{Args, Session, progress, progress_done, timing_cells, timing_columns};
use crate::input::{Pattern, typed};
use crate::output::{Cell, Column, Shown};
use crate::reduce::typed::{TypedReduction, Value, cpu};
use crate::registry::typed::{find_typed, generic_names, is_generic};
use crate::registry::{Elem, Op, Variant};
use crate::{Error, Result};

/// The columns of a typed report (the × CUB pair with `--compare-cub`).
fn columns(with_cub: bool) -> Vec<Column> {
    let mut c = vec![
        Column::new("variant", "variant", 20, 0),
        Column::new("type", "type", 5, 0),
        Column::new("combine", "combine", 8, 0),
    ];
    c.extend(super::shape_columns());
    c.extend(timing_columns(("bytes_per_s", "gb_per_s", "GB/s"), 8));
    c.extend([Column::new("result", "result", 24, 0), Column::new("expected", "expected", 0, 0).only(Shown::DataOnly)]);
    if with_cub {
        c.push(Column::new("x_cub", "× CUB", 7, 2));
        c.push(Column::new("cub_median_us", "CUB µs", 0, 2).only(Shown::DataOnly));
    }
    c.push(Column::new("verdict", "verdict", 0, 0));
    c
}

/// Runs the generic variants among `variants` for `elem` × `op`.
pub(super) fn run(
    args: &Args,
    variants: &[&'static Variant],
    elem: Elem,
    op: Op,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> Result<bool> {
    let what = format!("--type {} --combine {}", elem.name(), op.name());
    if args.variant != "all" && !is_generic(&args.variant) {
        return Err(Error::Invalid(format!(
            "{what}: variant `{}` is an i32 sum only; the generic variants are: {}",
            args.variant,
            generic_names().join(", ")
        )));
    }
    let generic: Vec<&'static Variant> = variants.iter().copied().filter(|v| is_generic(v.name)).collect();
    if generic.is_empty() {
        return Err(Error::Invalid(format!(
            "{what}: no generic variant in the selection; the generic variants are: {}",
            generic_names().join(", ")
        )));
    }
    super::reduce::check_blocks_per_sm(args, &generic)?;
    if args.list {
        for v in &generic {
            let _ = writeln!(out, "{:<24} {:<7} {}", v.name, v.family.name(), v.concept);
        }
        return Ok(true);
    }
    match elem {
        Elem::I32 => rows::<i32>(args, &generic, op, variants.len(), out, err),
        Elem::U32 => rows::<u32>(args, &generic, op, variants.len(), out, err),
        Elem::I64 => rows::<i64>(args, &generic, op, variants.len(), out, err),
        Elem::U64 => rows::<u64>(args, &generic, op, variants.len(), out, err),
        Elem::F32 => rows::<f32>(args, &generic, op, variants.len(), out, err),
        Elem::F64 => rows::<f64>(args, &generic, op, variants.len(), out, err),
    }
}

/// The report for element type `T`: one row per generic variant.
fn rows<T: Value>(
    args: &Args,
    generic: &[&'static Variant],
    op: Op,
    selected: usize,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> Result<bool> {
    let session = Session::open(args)?;
    let block = args.block.unwrap_or(super::reduce::DEFAULT_BLOCK);
    if !block.is_power_of_two() || !(32..=1024).contains(&block) {
        return Err(Error::Invalid(format!("--block {block}: the block must be a power of two in 32..=1024")));
    }
    let mut report = session.report(out, columns(args.compare_cub));
    for line in session.banner() {
        report.note(&line);
    }
    let (elem, n) = (T::ELEM, session.n);
    if generic.len() < selected {
        report.note(&format!(
            "--type {} --combine {}: only the generic variants run ({}); the other {} selected are i32 sums",
            elem.name(),
            op.name(),
            generic.iter().map(|v| v.name).collect::<Vec<_>>().join(", "),
            selected - generic.len()
        ));
    }
    let (data, buffer) = typed_input::<T>(&session, err)?;
    report.note(&format!(
        "n = {n} {} ({:.1} MiB), block {block}, {}; {}",
        elem.name(),
        (n * elem.size()) as f64 / (1 << 20) as f64,
        session.timed_runs(),
        if elem.is_float() && op == Op::Sum {
            "a float sum passes within γ(depth)·Σ|x| of the exact sum (docs: types and operators)"
        } else {
            "the result must equal the CPU reference bit for bit"
        }
    ));
    let cub = args.compare_cub.then(|| cub::<T>(&session, op, &data));
    match &cub {
        Some(Ok(c)) => report.note(&format!(
            "CUB DeviceReduce::{} at the same n on the same values: {c:.2} µs, median of {}, every call's result              checked; × CUB = CUB's time / ours (> 1: faster), only for atomic_accumulate (the others leave              partials the host combines untimed)",
            cub_name(op),
            session.repeat.max(crate::timing::MIN_RUNS)
        )),
        Some(Err(why)) => report.note(&format!("--compare-cub: no CUB comparison ({why}); no × CUB figures")),
        None => {}
    }
    let cub = cub.and_then(|c| c.ok());
    report.header();
    let mut failed = 0;
    for v in generic {
        super::sweep_progress(args, err, n, v.name);
        let row = row::<T>(&session, v, op, &buffer, &data, (block, args.blocks_per_sm), (args.compare_cub, cub));
        failed += row_failed(&row) as usize;
        report.row(&row);
    }
    let mut meta = session.meta();
    meta.insert("block".into(), block.into());
    meta.insert("type".into(), elem.name().into());
    meta.insert("combine".into(), op.name().into());
    super::finish(report, meta, failed, "variant(s)", None);
    Ok(failed == 0)
}

/// The typed input of a run: checks that two arrays of `n` elements fit the GPU (input and
/// scratch, or a scan's input and output; checked before anything is generated), generates the
/// values from the session's seed and uploads them, with progress on `err`.
pub(super) fn typed_input<T: Value>(
    session: &Session,
    err: &mut dyn Write,
) -> Result<(Vec<T>, crate::DeviceBuffer<T>)> {
    let (elem, n) = (T::ELEM, session.n);
    if session.backend.is_gpu() {
        super::reduce::fits_device(n, elem.size() as u64, 2, session.info().memory_bytes)?;
    }
    progress(session, err, &format!("generating {n} {} inputs (seed {})", elem.name(), session.seed));
    let data = typed::<T>(n, session.seed, Pattern::Random);
    let buffer = session.backend.upload(&data)?;
    progress_done(session, err);
    Ok((data, buffer))
}

/// Did this row fail (its verdict cell is FAIL or ERROR)?
pub(super) fn row_failed(row: &[Cell]) -> bool {
    matches!(row.last(), Some(Cell::Verdict("FAIL" | "ERROR", _)))
}

/// One variant's cells: measured and checked, or skipped/failed with why.
fn row<T: Value>(
    session: &Session,
    v: &'static Variant,
    op: Op,
    buffer: &crate::DeviceBuffer<T>,
    data: &[T],
    shape: (u32, Option<u32>),
    (compare_cub, cub): (bool, Option<f64>),
) -> Vec<Cell> {
    let elem = T::ELEM;
    let names = [v.name, elem.name(), op.name()];
    let (block, per_sm) = shape;
    let measured = find_typed(v.name, elem, op).and_then(|tv| {
        let mut r = TypedReduction::shaped(&session.backend, tv, buffer, data.len(), block, per_sm)?;
        let runs = crate::timing::timed_runs(&session.backend, &mut r, session.repeat)?;
        let got = r.result()?;
        Ok((r.geometry(), runs, got, cpu::check(op, data, got, r.depth())))
    });
    let (g, runs, got, verdict) = match super::Outcome::of(measured) {
        super::Outcome::Ran(m) => m,
        other => return other.bare_row(&names, columns(compare_cub).len()).unwrap_or_default(),
    };
    let mut row: Vec<Cell> = names.iter().map(|s| Cell::Text(s.to_string())).collect();
    row.extend([
        Cell::Text(format!("{}×{}", g.grid, g.block)),
        Cell::Int(data.len() as i64),
        Cell::Int(g.grid.into()),
        Cell::Int(g.block.into()),
        Cell::Int(g.shared_bytes.into()),
    ]);
    row.extend(timing_cells(session, &runs, (data.len() * elem.size()) as f64));
    let expected = if elem.is_float() && op == Op::Sum {
        format!("{:e}", cpu::exact_sum(data).0)
    } else {
        cpu::reference(op, data).to_string()
    };
    row.extend([Cell::Text(got.to_string()), Cell::Text(expected)]);
    if compare_cub {
        let ratio = cub.filter(|_| v.finish.on_device()).map(|c| c / runs.median_us());
        row.extend([ratio.map_or(Cell::Empty, Cell::Num), cub.map_or(Cell::Empty, Cell::Num)]);
    }
    row.push(match verdict {
        Ok(()) => Cell::Verdict("PASS", None),
        Err(why) => Cell::Verdict("FAIL", Some(why)),
    });
    row
}

/// CUB's function for `op`.
fn cub_name(op: Op) -> &'static str {
    match op {
        Op::Min => "Min",
        Op::Max => "Max",
        Op::Sum | Op::SumOfSquares => "Sum",
    }
}

/// `--compare-cub`: CUB's median for `op` on `data`, every call's result checked against the
/// CPU reference (float sums within the bound for a sequential sum, γ(n)·Σ|x|: CUB's order of
/// additions is not ours), or why there is none.
fn cub<T: Value>(session: &Session, op: Op, data: &[T]) -> std::result::Result<f64, String> {
    let repeat = session.cub_calls()?;
    let (timing, results) = crate::cub::time_typed(op, data, repeat).map_err(|e| e.to_string())?;
    for got in results {
        cpu::check(op, data, got, data.len() as u64).map_err(|why| format!("CUB's result is wrong: {why}"))?;
    }
    Ok(timing.median_us)
}
