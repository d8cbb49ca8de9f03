//! The rows of the library's operations (`reduce --op argmin|argmax|dot|sum_of_squares|norm`,
//! [`crate::ops`]): one row per run, the operation on `--type`'s random input from the seed
//! (a dot product: two inputs), launched at the plan's block or `--block`, timed, every timed
//! run checked against the CPU reference, and, with `--compare-cub`, CUB's counterpart timed
//! on the same values. Beside the time, the bound: the bytes the operation must read over the
//! device's peak bandwidth, and the time's share of it.

use std::io::Write;

use super::reduce::fits_device;
use super::{
    Args, Session, bound_and_cub_cells, bound_and_cub_columns, no_cub, progress, progress_done, shape_columns,
    timing_cells, timing_columns, verdict,
};
use crate::input::{Pattern, typed};
use crate::ops::{Answer, Operation, Prepared};
use crate::output::{Cell, Column, Shown};
use crate::reduce::one_pass::Sizing;
use crate::types::{Elem, Value};
use crate::{Error, Result};

/// The columns of an operation's report.
fn columns() -> Vec<Column> {
    let mut c = vec![Column::new("operation", "operation", 14, 0), Column::new("type", "type", 5, 0)];
    c.extend(shape_columns());
    c.extend(timing_columns(("bytes_per_s", "gb_per_s", "GB/s"), 7));
    c.extend(bound_and_cub_columns());
    c.extend([
        Column::new("result", "result", 24, 0),
        Column::new("expected", "expected", 0, 0).only(Shown::DataOnly),
        Column::new("verdict", "verdict", 0, 0),
    ]);
    c
}

/// Runs `op` as the flags say; `Ok(false)` when its row failed.
pub(super) fn run(args: &Args, op: Operation, out: &mut dyn Write, err: &mut dyn Write) -> Result<bool> {
    refuse_flags(args, op)?;
    if args.list {
        for o in Operation::ALL {
            let _ = writeln!(out, "{:<16} {:<18} {}  ({}; {})", o.name(), o.kernel(), o.what(), o.cub(), o.torch());
        }
        return Ok(true);
    }
    let elem = Elem::parse(&args.elem)?;
    crate::with_elem!(elem, T => row::<T>(args, op, out, err))
}

/// The flags that shape the registry's reductions are refused here, never ignored.
fn refuse_flags(args: &Args, op: Operation) -> Result<()> {
    let name = op.name();
    let refuse = |flag: String, why: &str| Err(Error::Invalid(format!("{flag} does not apply to --op {name}: {why}")));
    if args.variant != "all" {
        return refuse(format!("--variant {}", args.variant), &format!("it runs one kernel, {}", op.kernel()));
    }
    if args.combine != "sum" {
        return refuse(format!("--combine {}", args.combine), "the operation fixes what it combines");
    }
    if let Some(f) = &args.family {
        return refuse(format!("--family {f}"), &format!("it runs one kernel, {}", op.kernel()));
    }
    if args.compare_c {
        return refuse(
            "--compare-c".into(),
            "the CUDA C twins are of the classic reductions; --compare-cub compares with CUB",
        );
    }
    if args.metrics {
        return refuse("--metrics".into(), "the counters are of the registry's variants (reduce --metrics)");
    }
    match args.block {
        Some(b) if crate::reduce::one_pass::check_block(b).is_err() => {
            Err(Error::Invalid(format!("--block {b}: the block must be a power of two in 32..=1024")))
        }
        _ => Ok(()),
    }
}

/// The inputs from the seed: random values of `T`, and for a dot product a second input from
/// another seed.
fn inputs<T: Value>(session: &Session, op: Operation) -> (Vec<T>, Option<Vec<T>>) {
    let a = typed::<T>(session.n, session.seed, Pattern::Random);
    let b = (op.inputs() == 2).then(|| typed::<T>(session.n, session.seed ^ 0x9E37_79B9_7F4A_7C15, Pattern::Random));
    (a, b)
}

/// The report of one operation on `T`.
fn row<T: Value>(args: &Args, op: Operation, out: &mut dyn Write, err: &mut dyn Write) -> Result<bool> {
    let session = Session::open(args)?;
    if session.backend.is_gpu() {
        fits_device(session.n, T::ELEM.size() as u64, op.inputs() as u64, session.info().memory_bytes)?;
    }
    let mut report = session.report(out, columns());
    for line in session.banner() {
        report.note(&line);
    }
    report.note(&format!(
        "{} of {} {} elements: {}; kernel {}, {} (CUDA events{}); bound: {} bytes read at the peak bandwidth",
        op.name(),
        session.n,
        T::ELEM.name(),
        op.what(),
        op.symbol(T::ELEM),
        session.timed_runs(),
        session.clock(),
        op.bytes(session.n, T::ELEM)
    ));
    progress(&session, err, &format!("generating {} {} inputs (seed {})", session.n, T::ELEM.name(), session.seed));
    let (a, b) = inputs::<T>(&session, op);
    progress_done(&session, err);
    let cub = args.compare_cub.then(|| time_cub(&session, op, &a, b.as_deref()));
    if let Some(Err(why)) = &cub {
        no_cub(&mut report, err, why);
    }
    super::sweep_progress(args, err, session.n, op.name());
    let sizing = Sizing::asked(args.block, args.blocks_per_sm)?;
    let mut p = Prepared::with_sizing(&session.backend, op, (a, b), sizing)?;
    progress(&session, err, &format!("running {}", op.name()));
    let runs = crate::timing::timed_runs(&session.backend, &mut p, session.repeat)?;
    progress_done(&session, err);
    let got = p.answer()?;
    let verdict = verdict(p.check(got).err(), &runs);
    let failed = matches!(verdict, Cell::Verdict("FAIL", _));
    report.header();
    let cub_us = cub.and_then(|c| c.ok());
    report.row(&cells(&session, &p, (&runs, got, verdict), cub_us));
    let mut meta = session.meta();
    meta.insert("operation".into(), op.name().into());
    meta.insert("type".into(), T::ELEM.name().into());
    super::finish(report, meta, failed as usize, "operation(s)", None);
    Ok(!failed)
}

/// The cells of the row: names, shape, timing, bound, CUB, result, reference, verdict.
fn cells<T: Value>(
    session: &Session,
    p: &Prepared<'_, T>,
    (runs, got, verdict): (&crate::timing::Runs, Answer<T>, Cell),
    cub_us: Option<f64>,
) -> Vec<Cell> {
    let (op, n) = (p.op(), p.n());
    let cfg = p.shape().config(n);
    let bytes = op.bytes(n, T::ELEM) as f64;
    let median = runs.median_us();
    let bound = session.info().peak_bandwidth.map(|peak| bytes / peak * 1e6);
    let mut row = vec![Cell::Text(op.name().into()), Cell::Text(T::ELEM.name().into())];
    row.extend([
        Cell::Text(format!("{}×{}", cfg.grid, cfg.block)),
        Cell::Int(n as i64),
        Cell::Int(cfg.grid.into()),
        Cell::Int(cfg.block.into()),
        Cell::Int(op.shared_bytes(T::ELEM) as i64),
    ]);
    row.extend(timing_cells(session, runs, bytes));
    row.extend(bound_and_cub_cells(bound, median, cub_us));
    row.extend([Cell::Text(got.to_string()), Cell::Text(p.reference()), verdict]);
    row
}

/// CUB's counterpart on the same values: its median µs, or why there is none (the emulator, no
/// nvcc, the harness, a wrong answer).
fn time_cub<T: Value>(session: &Session, op: Operation, a: &[T], b: Option<&[T]>) -> std::result::Result<f64, String> {
    let repeat = session.cub_calls()?;
    let (timing, answer) = crate::cub_ops::time(op, a, b, repeat).map_err(|e| e.to_string())?;
    let value = T::from_bits_u64(answer.bits);
    let checked = match op {
        Operation::ArgMin | Operation::ArgMax => {
            let got = answer.index.map(|i| (value, i));
            crate::cpu::check_arg(op == Operation::ArgMin, a, got)
        }
        // CUB's order of additions is not ours: the bound for any order, γ(n).
        _ => crate::cpu::check_transform(a, if op == Operation::Dot { b } else { None }, value, a.len() as u64),
    };
    checked.map_err(|why| format!("CUB's answer is wrong: {why}"))?;
    Ok(timing.median_us)
}
