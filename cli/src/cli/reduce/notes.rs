//! The description lines above a reduction report: what was measured, the references, CUB.

use super::super::{Args, Session};
use super::{Data, Groups};
use crate::cpu::Reference;
use crate::output::Report;
use crate::registry::{Op, Variant};
use crate::types::Value;

/// `--compare-cub`: CUB's median for DeviceReduce::Sum on `n` elements, or why there is none.
pub(super) fn cub_median_us(session: &Session) -> std::result::Result<f64, String> {
    let repeat = session.cub_calls()?;
    crate::cub::time(crate::cub::CubOp::ReduceSum, session.n, repeat, session.seed)
        .map(|t| t.median_us)
        .map_err(|e| e.to_string())
}

/// `--compare-cub` for a pair: CUB's median for `op` on `data`, every call's result checked
/// against the CPU reference (float sums within the bound for a sequential sum, γ(n)·Σ|x|:
/// CUB's order of additions is not ours), or why there is none.
fn cub_typed<T: Value>(session: &Session, op: Op, data: &[T]) -> std::result::Result<f64, String> {
    let repeat = session.cub_calls()?;
    let (timing, results) = crate::cub::time_typed(op, data, repeat).map_err(|e| e.to_string())?;
    for got in results {
        crate::cpu::check(op, data, got, data.len() as u64).map_err(|why| format!("CUB's result is wrong: {why}"))?;
    }
    Ok(timing.median_us)
}

/// CUB's function for `op`.
fn cub_name(op: Op) -> &'static str {
    match op {
        Op::Min => "Min",
        Op::Max => "Max",
        Op::Sum | Op::SumOfSquares => "Sum",
    }
}

/// The table's description lines: what was measured, the references, CUB. A pair's CUB is
/// timed here, on the same values.
pub(super) fn notes<T: Value>(
    report: &mut Report<'_>,
    (session, args): (&Session, &Args),
    (variants, selected, op, block): (&[&'static Variant], usize, Op, u32),
    mut groups: Groups,
    data: &Data<T>,
) -> Groups {
    if let Some((expected, squares)) = data.sums {
        describe(report, session, block, variants, expected, squares, groups.cub);
        if groups.twins {
            report.note(
                "× C = the CUDA C twin's median / ours (> 1: the Rust kernel is faster); the twin (cub/classic.cu, nvcc \
                 -O3) runs on the same values with the same grid and block, every run checked",
            );
        }
        return groups;
    }
    let (elem, n) = (T::ELEM, session.n);
    if variants.len() < selected {
        report.note(&format!(
            "--type {} --combine {}: only the generic variants run ({}); the other {} selected are i32 sums",
            elem.name(),
            op.name(),
            variants.iter().map(|v| v.name).collect::<Vec<_>>().join(", "),
            selected - variants.len()
        ));
    }
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
    match args.compare_cub.then(|| cub_typed::<T>(session, op, &data.values)) {
        Some(Ok(c)) => {
            report.note(&format!(
                "CUB DeviceReduce::{} at the same n on the same values: {c:.2} µs, median of {}, every call's result \
                 checked; × CUB = CUB's time / ours (> 1: faster), only for atomic_accumulate (the others leave \
                 partials the host combines untimed)",
                cub_name(op),
                session.repeat.max(crate::timing::MIN_RUNS)
            ));
            groups.cub = Some(c);
        }
        Some(Err(why)) => report.note(&format!("--compare-cub: no CUB comparison ({why}); no × CUB figures")),
        None => {}
    }
    groups
}

/// The table's description lines: what was measured, the references, CUB.
fn describe(
    report: &mut Report<'_>,
    session: &Session,
    block: u32,
    variants: &[&'static Variant],
    expected: Reference,
    squares: Option<Reference>,
    cub: Option<f64>,
) {
    let (n, repeat) = (session.n, session.repeat);
    report.note(&format!(
        "n = {n} ({:.1} MiB), block {block}, {} (every run's result checked); time = kernel \
         only (CUDA events{}), partial sums added on the host afterwards; in-place variants run on a scratch copy \
         made before timing",
        n as f64 * 4.0 / (1 << 20) as f64,
        session.timed_runs(),
        session.clock(),
    ));
    if variants.iter().any(|v| v.op == Op::Sum) {
        report.note(&format!("expected sum (CPU recursion): {} (exact: {})", expected.wrapped, expected.widened));
    }
    if let Some(sq) = squares {
        report.note(&format!("expected sum of squares (CPU recursion): {} (exact: {})", sq.wrapped, sq.widened));
    }
    if let Some(c) = cub {
        report.note(&format!(
            "CUB DeviceReduce::Sum at the same n: {c:.2} µs ({:.1} GB/s), median of {repeat}; × CUB = CUB's time / ours \
             (> 1: faster), only for variants that finish on the device (the others leave partials whose host-side \
             finish is not timed, or compute another sum)",
            n as f64 * 4.0 / (c * 1e-6) / 1e9
        ));
    }
}
