//! The reduction rows of the command line: select the variants that run the pair
//! (`--type`/`--combine`), measure each row of the registry, and turn each result into cells of
//! the report's columns. One path for every pair; what the report shows of a row follows the
//! pair ([`Layout`]).

use std::io::Write;

mod cells;
mod notes;
mod select;

use super::metrics::before_last;
use super::{Args, Layout, Session, progress, progress_done};
use crate::Result;
use crate::cpu::Reference;
use crate::input::{Input, Pattern, typed};
use crate::reduce::{Measurement, geometry_of, measure};
use crate::registry::{Elem, Op, Variant};
use crate::twins::TwinInput;
use crate::types::Value;
use cells::{Twin, cells, columns, time_twin, twins_usable};
use notes::{cub_median_us, notes};
pub(super) use select::{check_blocks_per_sm, fits_device, selected};
use select::{check_request, own_op, supporting};

/// The default block of the reductions.
pub(super) const DEFAULT_BLOCK: u32 = 512;

/// Which optional column groups a report has.
#[derive(Clone, Copy)]
struct Groups {
    layout: Layout,
    /// `--compare-cub` asked (the pairs' reports keep the group when CUB is missing).
    cub_asked: bool,
    /// CUB's median at the same n, when `--compare-cub` got one.
    cub: Option<f64>,
    /// `--compare-c` with a usable nvcc and GPU.
    twins: bool,
}

/// What happened to one variant.
type Outcome<T> = super::Outcome<Box<Measurement<T>>>;

/// The input of a run and what the rows are checked and shown against.
struct Data<T: Value> {
    values: Vec<T>,
    buffer: crate::DeviceBuffer<T>,
    /// The curriculum's references: the CPU recursion's sum, and of the squares where a sum of
    /// squares is selected.
    sums: Option<(Reference, Option<Reference>)>,
    /// The CUDA C twins' copy of the values, with `--compare-c` (the curriculum's).
    twin: Option<TwinInput>,
}

/// Runs `reduce` (the reductions) for `--type`/`--combine`: prints the rows, returns whether
/// every row passed.
pub(super) fn run(args: &Args, out: &mut dyn Write, err: &mut dyn Write) -> Result<bool> {
    let (elem, op) = (Elem::parse(&args.elem)?, Op::parse(&args.combine)?);
    let selection = selected(args)?;
    let variants = supporting(args, &selection, elem, op)?;
    check_blocks_per_sm(args, &variants)?;
    if args.list {
        for v in &variants {
            let _ = writeln!(out, "{:<24} {:<7} {}", v.name, v.family.name(), v.concept);
        }
        return Ok(true);
    }
    crate::with_elem!(elem, T => rows::<T>(args, &variants, op, selection.len(), out, err))
}

/// The report of `variants` for `T` × `op`.
fn rows<T: Value>(
    args: &Args,
    variants: &[&'static Variant],
    op: Op,
    selected: usize,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> Result<bool> {
    let session = Session::open(args)?;
    let block = args.block.unwrap_or(DEFAULT_BLOCK);
    check_request::<T>(args, &session, variants, op, block)?;
    let layout = Layout::of(T::ELEM, op);
    let (groups, missing) = groups(args, &session, layout);
    let metrics = if args.metrics { Some(metrics::<T>(&session, variants, op, block, err)?) } else { None };
    let metric_columns = metrics.as_ref().map_or_else(Vec::new, |(p, _)| crate::metrics::columns_of(*p));
    let gpu = super::committed::Committed::of(&session).only_if(layout == Layout::Curriculum);
    let mut report = session.report(out, before_last(before_last(columns(groups), gpu.columns()), metric_columns));
    for line in session.banner() {
        report.note(&line);
    }
    for line in &missing {
        report.note(line);
        if !report.is_table() {
            let _ = writeln!(err, "{line}");
        }
    }
    let data = data::<T>(&session, variants, groups, err)?;
    let groups = notes(&mut report, (&session, args), (variants, selected, op, block), groups, &data);
    for line in metrics.as_ref().map(|(p, _)| super::metrics::note(*p).to_string()).into_iter().chain(gpu.note()) {
        report.note(&line);
    }
    report.header();
    let mut failed = 0;
    for (i, &v) in variants.iter().enumerate() {
        super::sweep_progress(args, err, session.n, v.name);
        let outcome = Outcome::of(
            run_one(&session, v, op, (&data.buffer, &data.values), (block, args.blocks_per_sm)).map(Box::new),
        );
        let twin = time_twin(&session, v, data.twin.as_ref(), block, &outcome);
        failed += (outcome.failed(|m| m.pass()) || matches!(twin, Twin::Failed(_))) as usize;
        let row = before_last(cells(&session, (v, op), &outcome, &data, groups, &twin), gpu.cells(v.name, None));
        match &metrics {
            Some((p, m)) => report.row(&before_last(row, crate::metrics::cells(*p, m[i].as_ref()))),
            None => report.row(&row),
        }
    }
    let mut meta = session.meta();
    meta.insert("block".into(), block.into());
    match layout {
        Layout::Curriculum => {
            if let Some(c) = groups.cub {
                meta.insert("cub_median_us".into(), c.into());
            }
        }
        Layout::Pair => {
            meta.insert("type".into(), T::ELEM.name().into());
            meta.insert("combine".into(), op.name().into());
        }
    }
    super::finish(report, meta, failed, "variant(s)", gpu.footer());
    Ok(failed == 0)
}

/// The optional groups a run asked for, and a line for each that cannot be had here. The
/// curriculum's CUB is timed now (its own input from the seed); a pair's once its data exists
/// ([`notes`]).
fn groups(args: &Args, session: &Session, layout: Layout) -> (Groups, Vec<String>) {
    let mut missing = Vec::new();
    let cub = match (layout, args.compare_cub.then(|| cub_median_us(session))) {
        (Layout::Curriculum, Some(Ok(c))) => Some(c),
        (Layout::Curriculum, Some(Err(why))) => {
            missing.push(format!("--compare-cub: no CUB comparison ({why}); no × CUB column"));
            None
        }
        _ => None,
    };
    let twins = match (layout, args.compare_c.then(|| twins_usable(session))) {
        (Layout::Curriculum, Some(Ok(()))) => true,
        (Layout::Curriculum, Some(Err(why))) => {
            missing.push(format!("--compare-c: no CUDA C comparison ({why}); no × C column"));
            false
        }
        _ => false,
    };
    (Groups { layout, cub_asked: args.compare_cub, cub, twins }, missing)
}

/// The values of a run: the curriculum's small ones (`-128..=127`, so that sums stay
/// readable), or a pair's over the type's range.
fn values<T: Value>(session: &Session, layout: Layout) -> Vec<T> {
    match layout {
        Layout::Curriculum => {
            Input::small(session.n, session.seed).data.into_iter().map(|x| T::from_bits_u64(x as u32 as u64)).collect()
        }
        Layout::Pair => typed::<T>(session.n, session.seed, Pattern::Random),
    }
}

/// The input of a run, its CPU references (the curriculum's) and the twins' copy, uploaded,
/// with progress on `err`.
fn data<T: Value>(
    session: &Session,
    variants: &[&'static Variant],
    groups: Groups,
    err: &mut dyn Write,
) -> Result<Data<T>> {
    let (n, seed) = (session.n, session.seed);
    progress(
        session,
        err,
        &match groups.layout {
            Layout::Curriculum => format!("generating {n} inputs (seed {seed}) and the CPU reference"),
            Layout::Pair => format!("generating {n} {} inputs (seed {seed})", T::ELEM.name()),
        },
    );
    let values = values::<T>(session, groups.layout);
    let ints = || values.iter().map(|x| x.bits() as u32 as i32).collect::<Vec<i32>>();
    let sums = (groups.layout == Layout::Curriculum).then(|| {
        let ints = ints();
        let squares = variants.iter().any(|v| v.op == Op::SumOfSquares).then(|| Reference::of_squares(&ints));
        (Reference::of(&ints), squares)
    });
    let buffer = session.backend.upload(&values)?;
    // The twins read the same values from a file, written once for all of them.
    let twin = if groups.twins { Some(TwinInput::new(ints())?) } else { None };
    progress_done(session, err);
    Ok(Data { values, buffer, sums, twin })
}

/// `--metrics`: the counters of every row, before any is printed: Nsight Compute's on a GPU,
/// the emulator's own count of a rerun of the row's launches on the same input elsewhere.
fn metrics<T: Value>(
    session: &Session,
    variants: &[&'static Variant],
    op: Op,
    block: u32,
    err: &mut dyn Write,
) -> Result<super::metrics::Counted> {
    if session.backend.is_gpu() {
        let pair = (Layout::of(T::ELEM, op) == Layout::Pair).then_some((T::ELEM, op));
        let rows: Vec<_> = variants
            .iter()
            .map(|v| {
                let inst = v.instance::<T>(own_op(v, op)).ok()?;
                let runs = geometry_of(&session.backend, &inst, session.n, block, None).is_ok();
                runs.then(|| (v.name, inst.symbols()))
            })
            .collect();
        return super::metrics::reductions(session, &rows, pair, block, err);
    }
    let values = values::<T>(session, Layout::of(T::ELEM, op));
    let buffer = session.backend.upload(&values)?;
    let mut out = Vec::with_capacity(variants.len());
    for &v in variants {
        let inst = v.instance::<T>(own_op(v, op));
        let Some(inst) = inst.ok().filter(|i| geometry_of(&session.backend, i, session.n, block, None).is_ok()) else {
            out.push(None);
            continue;
        };
        progress(session, err, &format!("counting {} on the emulator", v.name));
        out.push(super::metrics::emulated(session, &inst.symbols(), |s| {
            let _ = run_one(s, v, op, (&buffer, &values), (block, None));
        }));
        progress_done(session, err);
    }
    Ok((crate::metrics::Profile::Emulator, out))
}

/// Measures `v`'s row of `T` × `op` (its own operator where `op` selects it) at `shape`
/// (block, blocks per SM) on `input`; a block or device it cannot take is an `Invalid` or
/// `Unsupported` error: a skipped row.
fn run_one<T: Value>(
    session: &Session,
    v: &'static Variant,
    op: Op,
    input: (&crate::DeviceBuffer<T>, &[T]),
    shape: (u32, Option<u32>),
) -> Result<Measurement<T>> {
    let inst = v.instance::<T>(own_op(v, op))?;
    measure(&session.backend, inst, input, shape, session.repeat)
}
