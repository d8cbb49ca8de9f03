//! The reduction rows of the command line: select the variants, measure each, and turn each
//! result into cells of the report's columns.

use std::io::Write;

use super::metrics::before_last;
use super::{Args, Session, progress, progress_done, timing_cells, timing_columns};
use crate::cpu::Reference;
use crate::input::Input;
use crate::output::{Cell, Column, Report, Shown};
use crate::reduce::{Measurement, geometry, measure_shaped};
use crate::registry::{self, Family, Grid, Op, Variant};
use crate::twins::TwinInput;
use crate::{Error, Result};

/// The default block of the reductions.
pub(super) const DEFAULT_BLOCK: u32 = 512;

/// Which optional column groups a report has.
#[derive(Clone, Copy)]
struct Groups {
    /// CUB's median at the same n, when `--compare-cub` got one.
    cub: Option<f64>,
    /// `--compare-c` with a usable nvcc and GPU.
    twins: bool,
}

/// The columns of a reduction report, with its optional groups.
fn columns(groups: Groups) -> Vec<Column> {
    let mut c = vec![Column::new("variant", "variant", 24, 0)];
    c.extend(super::shape_columns());
    c.extend(timing_columns(("bytes_per_s", "gb_per_s", "GB/s"), 8));
    c.extend([
        Column::new("clock64_cycles", "clock64 Δ", 12, 0),
        Column::new("sum", "sum", 12, 0),
        Column::new("expected", "expected", 0, 0).only(Shown::DataOnly),
        Column::new("widened_sum", "widened", 0, 0).only(Shown::DataOnly),
    ]);
    if groups.cub.is_some() {
        c.push(Column::new("x_cub", "× CUB", 7, 2));
        c.push(Column::new("cub_median_us", "CUB µs", 0, 2).only(Shown::DataOnly));
    }
    if groups.twins {
        c.push(Column::new("c_median_us", "C µs", 11, 2));
        c.push(Column::new("x_c", "× C", 6, 3));
        c.push(Column::new("c_min_us", "C min", 0, 2).only(Shown::DataOnly));
        c.push(Column::new("c_max_us", "C max", 0, 2).only(Shown::DataOnly));
    }
    c.push(Column::new("verdict", "verdict", 0, 0));
    c
}

/// The CUDA C twin's timing for a row, when the report has the group.
enum Twin {
    /// No group, or no twin for this variant, or the Rust row did not run.
    None,
    /// Timed and every run right.
    Timed(crate::twins::TwinTiming),
    /// The twin failed or gave a wrong result: the row fails.
    Failed(String),
    /// The twin's harness cannot be built or run here (the nested twins need `-rdc=true` and
    /// `libcudadevrt`): the row keeps its verdict and says why it has no twin.
    Unavailable(String),
}

/// What happened to one variant.
type Outcome = super::Outcome<Box<Measurement>>;

/// Does `v` do what CUB's `DeviceReduce::Sum` does (a sum to one scalar on the device, all
/// of it timed)? Only those rows get a × CUB ratio.
fn comparable_with_cub(v: &Variant) -> bool {
    v.op == Op::Sum && v.finish.on_device()
}

fn verdict(m: &Measurement) -> Cell {
    match &m.runs.first_wrong {
        _ if m.sum != m.expected.wrapped => {
            Cell::Verdict("FAIL", Some(format!("expected {}, got {}", m.expected.wrapped, m.sum)))
        }
        Some((run, why)) => Cell::Verdict("FAIL", Some(format!("timed run {run}: {why}"))),
        None => Cell::Verdict("PASS", None),
    }
}

/// The cells of one row, one per column of [`columns`]`(groups)`.
fn cells(session: &Session, v: &Variant, outcome: &Outcome, groups: Groups, twin: &Twin) -> Vec<Cell> {
    if let Some(row) = outcome.bare_row(&[v.name], columns(groups).len()) {
        return row;
    }
    let Outcome::Ran(m) = outcome else { unreachable!("bare_row covers the rows that did not run") };
    let g = m.geometry;
    let mut row = vec![
        Cell::Text(v.name.into()),
        Cell::Text(format!("{}×{}", g.grid, g.block)),
        Cell::Int(m.n as i64),
        Cell::Int(g.grid.into()),
        Cell::Int(g.block.into()),
        Cell::Int(g.shared_bytes.into()),
    ];
    row.extend(timing_cells(session, &m.runs, m.n as f64 * v.elem.size() as f64));
    row.extend([
        m.cycles.map_or(Cell::Empty, |c| Cell::Int(c as i64)),
        Cell::Int(m.sum.into()),
        Cell::Int(m.expected.wrapped.into()),
        Cell::Int(m.expected.widened),
    ]);
    if let Some(c) = groups.cub {
        let ratio = comparable_with_cub(v).then(|| c / m.median_us());
        row.push(ratio.map_or(Cell::Empty, Cell::Num));
        row.push(Cell::Num(c));
    }
    if groups.twins {
        match twin {
            Twin::Timed(t) => row.extend([
                Cell::Num(t.median_us),
                Cell::Num(t.median_us / m.median_us()),
                Cell::Num(t.min_us),
                Cell::Num(t.max_us),
            ]),
            Twin::None | Twin::Failed(_) | Twin::Unavailable(_) => {
                row.extend([Cell::Empty, Cell::Empty, Cell::Empty, Cell::Empty])
            }
        }
    }
    row.push(match (verdict(m), twin) {
        (Cell::Verdict("PASS", None), Twin::Failed(why)) => Cell::Verdict("FAIL", Some(format!("CUDA C twin: {why}"))),
        (Cell::Verdict("PASS", None), Twin::Unavailable(why)) => {
            Cell::Verdict("PASS", Some(format!("no CUDA C twin here: {why}")))
        }
        (v, _) => v,
    });
    row
}

/// Times `v`'s CUDA C twin on the same data and geometry, when the report has the group.
fn time_twin(session: &Session, v: &Variant, input: Option<&TwinInput>, block: u32, outcome: &Outcome) -> Twin {
    let Some(input) = input.filter(|_| crate::twins::has_twin(v.name) && matches!(outcome, Outcome::Ran(_))) else {
        return Twin::None;
    };
    // A harness that cannot be built here is no twin; one that runs and fails fails the row.
    if let Err(Error::Unsupported(why) | Error::NoGpu(why)) = crate::twins::available_for(v.name) {
        return Twin::Unavailable(why);
    }
    match crate::twins::time_on(v.name, input, block, session.repeat) {
        Ok(t) if t.all_correct => Twin::Timed(t),
        Ok(t) => Twin::Failed(format!(
            "{} of {} runs right, last result {} (expected {})",
            t.ok_runs,
            t.runs(),
            t.result,
            t.expected
        )),
        Err(e) => Twin::Failed(e.to_string()),
    }
}

/// `--compare-c`: can the twins run here? `Err` says why not, in one line.
fn twins_usable(session: &Session) -> std::result::Result<(), String> {
    if !session.backend.is_gpu() {
        return Err("the CUDA C twins run on a GPU only; these are emulator results".into());
    }
    crate::twins::available().map_err(|e| e.to_string())
}

/// The variants `--variant` and `--family` select.
pub(super) fn selected(args: &Args) -> Result<Vec<&'static Variant>> {
    let family = match &args.family {
        None => None,
        Some(f) => Some(Family::ALL.into_iter().find(|x| x.name() == f).ok_or_else(|| {
            let names: Vec<_> = Family::ALL.iter().map(|f| f.name()).collect();
            Error::Invalid(format!("no family `{f}`; the families are: {}", names.join(", ")))
        })?),
    };
    let list: Vec<&'static Variant> =
        if args.variant == "all" { registry::all().collect() } else { vec![registry::find(&args.variant)?] };
    if let (Some(f), [v]) = (family, &list[..])
        && v.family != f
    {
        return Err(Error::Invalid(format!(
            "--variant {} is of the family {}, not --family {}; give one of the two, or --family {}",
            v.name,
            v.family.name(),
            f.name(),
            v.family.name()
        )));
    }
    Ok(list.into_iter().filter(|v| family.is_none_or(|f| v.family == f)).collect())
}

/// `--compare-cub`: CUB's median for DeviceReduce::Sum on `n` elements, or why there is none.
fn cub_median_us(session: &Session) -> std::result::Result<f64, String> {
    let repeat = session.cub_calls()?;
    crate::cub::time(crate::cub::CubOp::ReduceSum, session.n, repeat, session.seed)
        .map(|t| t.median_us)
        .map_err(|e| e.to_string())
}

/// Checks the flags against what was selected, before anything runs.
fn check_request(args: &Args, session: &Session, variants: &[&'static Variant], block: u32) -> Result<()> {
    if variants.is_empty() {
        return Err(Error::Invalid("no variant matches the selection".into()));
    }
    if !block.is_power_of_two() || !(32..=1024).contains(&block) {
        return Err(Error::Invalid(format!("--block {block}: the block must be a power of two in 32..=1024")));
    }
    check_blocks_per_sm(args, variants)?;
    if args.variant != "all" {
        // A single named variant: a block it does not accept is bad input, not a skipped row.
        geometry(&session.backend, variants[0], session.n, block, args.blocks_per_sm)?;
    }
    if session.backend.is_gpu() {
        fits_device(session.n, 4, 2, session.info().memory_bytes)?;
    }
    Ok(())
}

/// `--blocks-per-sm` shapes grid-stride grids only: any other selected variant is bad input.
pub(super) fn check_blocks_per_sm(args: &Args, variants: &[&'static Variant]) -> Result<()> {
    let strided = |v: &Variant| matches!(v.grid, Grid::Resident | Grid::PerMultiprocessor);
    if let Some(k) = args.blocks_per_sm
        && let Some(v) = variants.iter().find(|v| !strided(v))
    {
        let names: Vec<&str> = registry::all().filter(|v| strided(v)).map(|v| v.name).collect();
        return Err(Error::Invalid(format!(
            "--blocks-per-sm {k}: `{}` sizes its grid by the data; the flag applies to the grid-stride variants ({})",
            v.name,
            names.join(", ")
        )));
    }
    Ok(())
}

/// Do `copies` device arrays of `n` elements of `size` bytes (the input and a scratch copy, or a
/// scan's input and output) fit a device of `memory_bytes`? Checked before the inputs are
/// generated, so a size that cannot run fails at once, with the numbers.
pub(super) fn fits_device(n: usize, size: u64, copies: u64, memory_bytes: u64) -> Result<()> {
    let per = size * copies;
    let need = n as u64 * per;
    if need <= memory_bytes {
        return Ok(());
    }
    Err(Error::Invalid(format!(
        "n = {n} needs {need} bytes of device memory ({copies} arrays of {size}-byte elements, {per} bytes per \
         element); the device has {memory_bytes} bytes, so n must be at most {}",
        memory_bytes / per
    )))
}

/// Runs `reduce` (the reductions): prints the rows, returns whether every row passed.
/// `--type`/`--combine` other than i32 sum go to the generic variants (`cli/typed.rs`).
pub(super) fn run(args: &Args, out: &mut dyn Write, err: &mut dyn Write) -> Result<bool> {
    let (elem, op) = (registry::Elem::parse(&args.elem)?, Op::parse(&args.combine)?);
    let variants = selected(args)?;
    if (elem, op) != (registry::Elem::I32, Op::Sum) {
        return super::typed::run(args, &variants, elem, op, out, err);
    }
    if args.list {
        for v in &variants {
            let _ = writeln!(out, "{:<24} {:<7} {}", v.name, v.family.name(), v.concept);
        }
        return Ok(true);
    }
    let session = Session::open(args)?;
    let block = args.block.unwrap_or(DEFAULT_BLOCK);
    check_request(args, &session, &variants, block)?;
    let (cub, cub_missing) = match args.compare_cub.then(|| cub_median_us(&session)) {
        Some(Ok(c)) => (Some(c), None),
        Some(Err(why)) => (None, Some(format!("--compare-cub: no CUB comparison ({why}); no × CUB column"))),
        None => (None, None),
    };
    let (twins, twins_missing) = match args.compare_c.then(|| twins_usable(&session)) {
        Some(Ok(())) => (true, None),
        Some(Err(why)) => (false, Some(format!("--compare-c: no CUDA C comparison ({why}); no × C column"))),
        None => (false, None),
    };
    let groups = Groups { cub, twins };
    let metrics = if args.metrics { Some(super::metrics::reductions(&session, &variants, block, err)?) } else { None };
    let metric_columns = metrics.as_ref().map_or_else(Vec::new, |(p, _)| crate::metrics::columns_of(*p));
    let gpu = super::committed::Committed::of(&session);
    let all_columns = before_last(before_last(columns(groups), gpu.columns()), metric_columns);
    let mut report = session.report(out, all_columns);
    for line in session.banner() {
        report.note(&line);
    }
    for line in cub_missing.iter().chain(&twins_missing) {
        report.note(line);
        if !report.is_table() {
            let _ = writeln!(err, "{line}");
        }
    }
    progress(&session, err, &format!("generating {} inputs (seed {}) and the CPU reference", session.n, session.seed));
    let input = Input::small(session.n, session.seed);
    let expected = Reference::of(&input.data);
    let squares = variants.iter().any(|v| v.op == Op::SumOfSquares).then(|| Reference::of_squares(&input.data));
    let buffer = session.backend.upload(&input.data)?;
    // The twins read the same values from a file, written once for all of them.
    let twin_input = if twins { Some(TwinInput::new(input.data)?) } else { None };
    progress_done(&session, err);
    describe(&mut report, &session, block, &variants, expected, squares, cub);
    if twins {
        report.note(
            "× C = the CUDA C twin's median / ours (> 1: the Rust kernel is faster); the twin (cub/classic.cu, nvcc -O3) \
             runs on the same values with the same grid and block, every run checked",
        );
    }
    let profile_note = metrics.as_ref().map(|(p, _)| super::metrics::note(*p).to_string());
    for line in profile_note.into_iter().chain(gpu.note()) {
        report.note(&line);
    }
    report.header();
    let mut failed = 0;
    for (i, v) in variants.into_iter().enumerate() {
        super::sweep_progress(args, err, session.n, v.name);
        let reference = squares.filter(|_| v.op == Op::SumOfSquares).unwrap_or(expected);
        let outcome = run_one(&session, v, &buffer, (block, args.blocks_per_sm), reference);
        let twin = time_twin(&session, v, twin_input.as_ref(), block, &outcome);
        failed += (outcome.failed(|m| m.pass()) || matches!(twin, Twin::Failed(_))) as usize;
        let row = before_last(cells(&session, v, &outcome, groups, &twin), gpu.cells(v.name, None));
        match &metrics {
            Some((p, m)) => report.row(&before_last(row, crate::metrics::cells(*p, m[i].as_ref()))),
            None => report.row(&row),
        }
    }
    let mut meta = session.meta();
    meta.insert("block".into(), block.into());
    if let Some(c) = cub {
        meta.insert("cub_median_us".into(), c.into());
    }
    super::finish(report, meta, failed, "variant(s)", gpu.footer());
    Ok(failed == 0)
}

/// The emulator's counters of `variants` at `block` (`--metrics` on the emulator): each
/// variant's launches made once more on a counting copy of the emulator, on the same input.
pub(super) fn counted(
    session: &Session,
    variants: &[&'static Variant],
    block: u32,
    err: &mut dyn Write,
) -> Result<Vec<Option<crate::metrics::Summary>>> {
    let input = Input::small(session.n, session.seed);
    let expected = Reference::of(&input.data);
    let squares = variants.iter().any(|v| v.op == Op::SumOfSquares).then(|| Reference::of_squares(&input.data));
    let buffer = session.backend.upload(&input.data)?;
    let mut out = Vec::with_capacity(variants.len());
    for v in variants {
        if geometry(&session.backend, v, session.n, block, None).is_err() {
            out.push(None);
            continue;
        }
        progress(session, err, &format!("counting {} on the emulator", v.name));
        let reference = squares.filter(|_| v.op == Op::SumOfSquares).unwrap_or(expected);
        out.push(super::metrics::emulated(session, &v.symbols(), |s| {
            run_one(s, v, &buffer, (block, None), reference);
        }));
        progress_done(session, err);
    }
    Ok(out)
}

/// Measures one variant at `shape` (block, blocks per SM); a block or device it cannot take
/// is a skipped row, not an error.
fn run_one(
    session: &Session,
    v: &'static Variant,
    buffer: &crate::DeviceBuffer<i32>,
    shape: (u32, Option<u32>),
    reference: Reference,
) -> Outcome {
    let b = &session.backend;
    let (block, per_sm) = shape;
    Outcome::of(
        geometry(b, v, session.n, block, per_sm)
            .and_then(|_| measure_shaped(b, v, buffer, (session.n, block, per_sm), session.repeat, reference))
            .map(Box::new),
    )
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

#[cfg(test)]
mod tests {
    use super::fits_device;

    #[test]
    fn n_past_the_device_memory_names_the_bytes_and_the_largest_n() {
        assert!(fits_device(1 << 20, 4, 2, 8 << 20).is_ok());
        assert!(fits_device(1 << 20, 8, 2, 8 << 20).is_err(), "64-bit elements need twice the bytes");
        let e = fits_device((1 << 20) + 1, 4, 2, 8 << 20).unwrap_err().to_string();
        assert_eq!(
            e,
            "invalid request: n = 1048577 needs 8388616 bytes of device memory (2 arrays of 4-byte elements, 8 bytes \
             per element); the device has 8388608 bytes, so n must be at most 1048576"
        );
    }
}
