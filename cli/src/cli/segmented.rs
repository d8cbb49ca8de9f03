//! The rows of a segmented reduction (`reduce --op segmented`, `--op rows`,
//! [`crate::reduce::segmented`]): the segments from `--segments K` (`--lengths equal` or
//! `power`), `--offsets LIST`, or `--rows R --cols C`; `--combine` sum, min, max, argmin or
//! argmax; one row: the plan, the time, GB/s, the bound, and with `--compare-cub`
//! `cub::DeviceSegmentedReduce` on the same values, every segment of ours (and CUB's) checked.

use std::io::Write;

use super::metrics::{Counted, Length, before_last, profile_of};
use super::reduce::fits_device;
use super::{
    Args, Session, bound_and_cub_cells, bound_and_cub_columns, no_cub, progress, progress_done, timing_cells,
    timing_columns, verdict,
};
use crate::backend::DeviceBuffer;
use crate::input::{Pattern, typed};
use crate::output::{Cell, Column, Shown};
use crate::reduce::segmented::{SegmentedReducer, Segments, Strategy, check_all};
use crate::timing::Rerun;
use crate::types::{Elem, Op, Value};
use crate::{Error, Max, Min, Result, Sum};

/// The columns of a segmented report.
fn columns() -> Vec<Column> {
    let mut c = vec![
        Column::new("operation", "operation", 10, 0),
        Column::new("type", "type", 5, 0),
        Column::new("combine", "combine", 8, 0),
        Column::new("segments", "segments", 9, 0),
        Column::new("n", "n", 0, 0).only(Shown::DataOnly),
        Column::new("strategy", "plan", 18, 0),
        Column::new("grid_x_block", "grid×block", 14, 0).only(Shown::TableOnly),
        Column::new("grid", "grid", 0, 0).only(Shown::DataOnly),
        Column::new("block", "block", 0, 0).only(Shown::DataOnly),
        Column::new("lanes", "lanes", 0, 0).only(Shown::DataOnly),
    ];
    c.extend(timing_columns(("bytes_per_s", "gb_per_s", "GB/s"), 7));
    c.extend(bound_and_cub_columns());
    c.push(Column::new("verdict", "verdict", 0, 0));
    c
}

/// Runs `--op segmented` (`rows` false) or `--op rows`; `Ok(false)` when the row failed.
pub(super) fn run(args: &Args, rows: bool, out: &mut dyn Write, err: &mut dyn Write) -> Result<bool> {
    refuse_flags(args, rows)?;
    let (op, arg) = combine(&args.combine)?;
    let elem = Elem::parse(&args.elem)?;
    let mut args = args.clone();
    if let (Some(r), Some(c)) = (args.rows, args.cols) {
        args.n = Some(r.checked_mul(c).filter(|&t| t <= u32::MAX as u64).ok_or_else(|| {
            Error::Invalid(format!("--rows {r} --cols {c}: rows × cols must be at most {}", u32::MAX))
        })?);
    }
    crate::with_elem!(elem, T => row::<T>(&args, rows, (op, arg), out, err))
}

/// The segmented reductions' flags (`--segments`, `--offsets`, `--lengths`, `--rows`, `--cols`,
/// `--lanes`) are refused on every other operation, never ignored.
pub(super) fn refuse_elsewhere(args: &Args) -> Result<()> {
    let shaped = args.segments.is_some()
        || args.offsets.is_some()
        || args.lengths.is_some()
        || args.rows.is_some()
        || args.cols.is_some()
        || args.lanes.is_some();
    if shaped && !matches!(args.op, super::OpArg::Segmented | super::OpArg::Rows) {
        return Err(Error::Invalid(format!(
            "--segments, --offsets, --lengths, --rows, --cols and --lanes do not apply to --op {}: they shape \
             --op segmented and --op rows",
            args.op.name()
        )));
    }
    Ok(())
}

/// `--combine` as an operator and whether its argument is asked.
fn combine(name: &str) -> Result<(Op, bool)> {
    match name {
        "argmin" => Ok((Op::Min, true)),
        "argmax" => Ok((Op::Max, true)),
        other => Op::parse(other).map(|op| (op, false)),
    }
}

/// The flags of the other operations are refused here, never ignored.
fn refuse_flags(args: &Args, rows: bool) -> Result<()> {
    let name = if rows { "rows" } else { "segmented" };
    super::refuse_registry_flags(args, name)?;
    let refuse = |flag: String, why: &str| Err(Error::Invalid(format!("{flag} does not apply to --op {name}: {why}")));
    match () {
        () if rows && (args.segments.is_some() || args.offsets.is_some() || args.lengths.is_some()) => {
            refuse("--segments, --offsets and --lengths".into(), "its segments are the rows of --rows × --cols")
        }
        () if rows && args.rows.is_none() => {
            Err(Error::Invalid("--op rows needs --rows R --cols C (a row-major R × C matrix)".into()))
        }
        () if !rows && (args.rows.is_some() || args.cols.is_some()) => {
            refuse("--rows and --cols".into(), "use --op rows")
        }
        () if !rows && args.segments.is_none() && args.offsets.is_none() => Err(Error::Invalid(
            "--op segmented needs --segments K (with --lengths equal or power) or --offsets LIST".into(),
        )),
        () if args.lengths.is_some() && args.segments.is_none() => {
            refuse("--lengths".into(), "it shapes the segments of --segments K")
        }
        () => match args.block {
            Some(b) if crate::reduce::one_pass::check_block(b).is_err() => {
                Err(Error::Invalid(format!("--block {b}: the block must be a power of two in 32..=1024")))
            }
            _ => Ok(()),
        },
    }
}

/// The CSR offsets the flags ask for over `n` elements.
fn offsets(args: &Args, n: usize) -> Result<Vec<u32>> {
    if let Some(list) = &args.offsets {
        return Ok(list.0.clone());
    }
    let k = args.segments.unwrap_or(1) as usize;
    if k > n {
        return Err(Error::Invalid(format!("--segments {k}: at most n = {n} segments")));
    }
    let lens: Vec<u64> = match args.lengths.as_deref() {
        Some("power") => power_law(n, k, args.seed),
        _ => (0..k).map(|s| ((s + 1) * n / k - s * n / k) as u64).collect(),
    };
    let mut out = Vec::with_capacity(k + 1);
    out.push(0u32);
    for l in lens {
        out.push(out[out.len() - 1] + l as u32);
    }
    Ok(out)
}

/// `k` power-law lengths (∝ 1/(i + 1)^1.2, shuffled by the seed) summing to `n`.
fn power_law(n: usize, k: usize, seed: u64) -> Vec<u64> {
    let weights: Vec<f64> = (0..k).map(|i| 1.0 / ((i + 1) as f64).powf(1.2)).collect();
    let total: f64 = weights.iter().sum();
    let mut lens: Vec<u64> = weights.iter().map(|w| (w / total * n as f64) as u64).collect();
    let short = n as u64 - lens.iter().sum::<u64>();
    lens[0] += short;
    let r = typed::<u64>(k, seed ^ 0x5E6, Pattern::Random);
    for i in (1..k).rev() {
        lens.swap(i, (r[i] % (i as u64 + 1)) as usize);
    }
    lens
}

/// A segmented reduction prepared on one input: what the timing loop launches and checks.
struct Job<'b, T: Value> {
    backend: &'b crate::Backend,
    data: Vec<T>,
    input: DeviceBuffer<T>,
    segments: Segments,
    values: DeviceBuffer<T>,
    indices: DeviceBuffer<u32>,
    fold: (Op, bool),
    block: u32,
    reducer: Reducers<'b, T>,
}

/// The reducer of each operator.
enum Reducers<'b, T: Value> {
    Sum(SegmentedReducer<'b, T, Sum>),
    Min(SegmentedReducer<'b, T, Min>),
    Max(SegmentedReducer<'b, T, Max>),
}

impl<T: Value> Rerun for Job<'_, T> {
    fn reset(&mut self) -> Result<()> {
        Ok(())
    }

    fn launch(&mut self) -> Result<()> {
        let (input, segs, values, indices) = (&self.input, &self.segments, &mut self.values, &mut self.indices);
        match (&mut self.reducer, self.fold.1) {
            (Reducers::Sum(r), _) => r.enqueue(input, segs, values),
            (Reducers::Min(r), false) => r.enqueue(input, segs, values),
            (Reducers::Max(r), false) => r.enqueue(input, segs, values),
            (Reducers::Min(r), true) => r.enqueue_arg(input, segs, values, indices),
            (Reducers::Max(r), true) => r.enqueue_arg(input, segs, values, indices),
        }
    }

    fn check(&mut self) -> Result<Option<String>> {
        let values = self.backend.download(&self.values)?;
        let indices = if self.fold.1 { Some(self.backend.download(&self.indices)?) } else { None };
        let verdict = check_all(self.fold.0, &self.data, &self.segments, &values, indices.as_deref(), Some(self.block));
        Ok(verdict.err())
    }
}

impl<'b, T: Value> Job<'b, T> {
    /// The job of `fold` on `data` over `segments` at `block`, uploaded to `backend`.
    fn new(
        backend: &'b crate::Backend,
        data: Vec<T>,
        segments: Segments,
        fold: (Op, bool),
        block: u32,
    ) -> Result<Self> {
        let count = segments.count().max(1);
        let reducer = match fold.0 {
            Op::Min => Reducers::Min(SegmentedReducer::with_block(backend, block)?),
            Op::Max => Reducers::Max(SegmentedReducer::with_block(backend, block)?),
            _ => Reducers::Sum(SegmentedReducer::with_block(backend, block)?),
        };
        let (input, values, indices) =
            (backend.upload(&data)?, backend.alloc::<T>(count)?, backend.alloc::<u32>(count)?);
        Ok(Self { backend, data, input, segments, values, indices, fold, block, reducer })
    }

    /// Bytes a run must move: the input, the offsets it reads, the outputs it writes.
    fn bytes(&self) -> f64 {
        let (n, count, size) = (self.data.len(), self.segments.count(), T::ELEM.size());
        let offsets = if self.segments.is_rows() { 0 } else { 4 * (count + 1) };
        let outputs = count * (size + if self.fold.1 { 4 } else { 0 });
        (n * size + offsets + outputs) as f64
    }

    /// The segments' offsets on the host (the rows' too), for CUB.
    fn host_offsets(&self) -> Vec<u32> {
        let mut out: Vec<u32> = (0..self.segments.count()).map(|s| self.segments.bounds(s).0 as u32).collect();
        out.push(self.segments.end() as u32);
        out
    }
}

/// The report of one segmented reduction of `T`.
fn row<T: Value>(args: &Args, rows: bool, fold: (Op, bool), out: &mut dyn Write, err: &mut dyn Write) -> Result<bool> {
    let session = Session::open(args)?;
    let n = session.n;
    let segments = segments_of(args, &session.backend, rows, n)?;
    let name = if fold.1 { format!("arg{}", fold.0.name()) } else { fold.0.name().to_string() };
    if segments.end() > n {
        return Err(Error::Invalid(format!(
            "segmented {name}: the last offset is {}, past the input of {n} elements",
            segments.end()
        )));
    }
    if session.backend.is_gpu() {
        fits_device(n, T::ELEM.size() as u64, 1, session.info().memory_bytes)?;
    }
    let block = args.block.unwrap_or(crate::reduce::one_pass::DEFAULT_BLOCK);
    let metric_columns = if args.metrics { crate::metrics::columns_of(profile_of(&session)) } else { Vec::new() };
    let mut report = session.report(out, before_last(columns(), metric_columns));
    for line in session.banner() {
        report.note(&line);
    }
    report.note(&format!(
        "{name} of {n} {} elements in {} segments (the longest {}): plan {}, {} (CUDA events{})",
        T::ELEM.name(),
        segments.count(),
        segments.max_len(),
        segments.strategy().name(),
        session.timed_runs(),
        session.clock()
    ));
    progress(&session, err, &format!("generating {n} {} inputs (seed {})", T::ELEM.name(), session.seed));
    let data = typed::<T>(n, session.seed, Pattern::Random);
    progress_done(&session, err);
    let metrics = if args.metrics {
        Some(counters::<T>(&session, args, (rows, &data, segments.strategy()), fold, err)?)
    } else {
        None
    };
    if let Some((p, _)) = &metrics {
        report.note(super::metrics::note(*p));
    }
    let mut job = Job::new(&session.backend, data, segments, fold, block)?;
    let cub = args.compare_cub.then(|| time_cub(&session, &job));
    if let Some(Err(why)) = &cub {
        no_cub(&mut report, err, why);
    }
    super::sweep_progress(args, err, n, if rows { "rows" } else { "segmented" });
    progress(&session, err, &format!("running the segmented {name}"));
    let runs = crate::timing::timed_runs(&session.backend, &mut job, session.repeat)?;
    progress_done(&session, err);
    let verdict = verdict(job.check()?, &runs);
    let failed = matches!(verdict, Cell::Verdict("FAIL", _));
    report.header();
    let cells = cells(&session, &job, (rows, &name), &runs, (cub.and_then(|c| c.ok()), verdict));
    match &metrics {
        Some((p, m)) => report.row(&before_last(cells, crate::metrics::cells(*p, m[0].as_ref()))),
        None => report.row(&cells),
    }
    let mut meta = session.meta();
    meta.insert("operation".into(), (if rows { "rows" } else { "segmented" }).into());
    meta.insert("type".into(), T::ELEM.name().into());
    super::finish(report, meta, failed as usize, "operation(s)", None);
    Ok(!failed)
}

/// The segments the flags ask for over `n` elements, planned on `backend`: `--rows R --cols C`
/// (`rows`), else `--offsets` or `--segments K --lengths L`; `--lanes` where the plan has logical
/// warps (an error where blocks take every segment).
fn segments_of(args: &Args, backend: &crate::Backend, rows: bool, n: usize) -> Result<Segments> {
    let segments = match (args.rows, args.cols) {
        (Some(r), Some(c)) if rows => Segments::rows(r as usize, c as usize)?,
        _ => Segments::from_offsets(backend, &offsets(args, n)?)?,
    };
    match (args.lanes, segments.strategy()) {
        (Some(lanes), Strategy::BlockPerSegment | Strategy::BlockPerRow | Strategy::DeviceWide) => {
            Err(Error::Invalid(format!(
                "--lanes {lanes}: the plan here is {}, whose blocks take the segments; lanes apply where segments of \
             at most {} elements go to logical warps",
                segments.strategy().name(),
                crate::reduce::segmented::WARP_MAX
            )))
        }
        (Some(lanes), _) => segments.with_lanes(lanes),
        (None, _) => Ok(segments),
    }
}

/// `--metrics`: the row's counters, before it is printed: Nsight Compute's on a GPU (a child run
/// of the same row), elsewhere the emulator's count of a rerun of the row's launches on the same
/// input (a warm-up, then one counted run, as ncu's child makes). The kernels counted are the
/// plan's: `segmented_warp`, `segmented_tiles`, `segmented_rows`, or the first two for the split plan.
fn counters<T: Value>(
    session: &Session,
    args: &Args,
    (rows, data, strategy): (bool, &[T], Strategy),
    fold: (Op, bool),
    err: &mut dyn Write,
) -> Result<Counted> {
    let k = crate::reduce::segmented::kernels::<T>(fold.0, fold.1)?;
    let symbols = match strategy {
        Strategy::WarpPerSegment => vec![k.warp.name],
        Strategy::BlockPerSegment | Strategy::DeviceWide => vec![k.tiles.name],
        Strategy::BlockPerRow => vec![k.rows.name],
        Strategy::Split => vec![k.warp.name, k.tiles.name],
    };
    let name = if rows { "rows" } else { "segmented" };
    let block = args.block.unwrap_or(crate::reduce::one_pass::DEFAULT_BLOCK);
    if session.backend.is_gpu() {
        let flag = |f: &str, v: Option<String>| v.map(|v| [f.to_string(), v]).into_iter().flatten();
        let mut child = vec!["--op".into(), name.into(), "--type".into(), T::ELEM.name().into()];
        child.extend(["--combine".into(), args.combine.clone(), "--block".into(), block.to_string()]);
        child.extend(flag("--segments", args.segments.map(|k| k.to_string())));
        child.extend(flag("--lengths", args.lengths.clone()));
        child.extend(flag(
            "--offsets",
            args.offsets.as_ref().map(|o| o.0.iter().map(u32::to_string).collect::<Vec<_>>().join(",")),
        ));
        child.extend(flag("--rows", args.rows.map(|r| r.to_string())));
        child.extend(flag("--cols", args.cols.map(|c| c.to_string())));
        child.extend(flag("--lanes", args.lanes.map(|l| l.to_string())));
        let length = if rows { Length::InArgs } else { Length::SessionN };
        return super::metrics::one(session, name.into(), symbols, (child, length), err);
    }
    progress(session, err, &format!("counting the {name} reduction on the emulator"));
    let summary = super::metrics::emulated(session, &symbols, |s| {
        let job = segments_of(args, &s.backend, rows, data.len())
            .and_then(|segs| Job::new(&s.backend, data.to_vec(), segs, fold, block));
        if let Ok(mut job) = job {
            let _ = crate::timing::timed_runs(&s.backend, &mut job, 1);
        }
    });
    progress_done(session, err);
    Ok((crate::metrics::Profile::Emulator, vec![summary]))
}

/// The cells of the row.
fn cells<T: Value>(
    session: &Session,
    job: &Job<'_, T>,
    (rows, name): (bool, &str),
    runs: &crate::timing::Runs,
    (cub, verdict): (Option<f64>, Cell),
) -> Vec<Cell> {
    let (segs, block) = (&job.segments, job.block);
    let per = <T as kernels::types::Element>::PER_128 as u32;
    let grid = segs.grid(block, per);
    let lanes = match segs.strategy() {
        Strategy::WarpPerSegment | Strategy::Split => Cell::Int(segs.lanes(per).into()),
        Strategy::BlockPerSegment | Strategy::BlockPerRow | Strategy::DeviceWide => Cell::Text(String::new()),
    };
    let bytes = job.bytes();
    let bound = session.info().peak_bandwidth.map(|peak| bytes / peak * 1e6);
    let median = runs.median_us();
    let mut row = vec![
        Cell::Text((if rows { "rows" } else { "segmented" }).into()),
        Cell::Text(T::ELEM.name().into()),
        Cell::Text(name.into()),
        Cell::Int(segs.count() as i64),
        Cell::Int(job.data.len() as i64),
        Cell::Text(segs.strategy().name().into()),
        Cell::Text(format!("{grid}×{block}")),
        Cell::Int(grid.into()),
        Cell::Int(block.into()),
        lanes,
    ];
    row.extend(timing_cells(session, runs, bytes));
    row.extend(bound_and_cub_cells(bound, median, cub));
    row.push(verdict);
    row
}

/// `cub::DeviceSegmentedReduce` on the same values: its median µs, or why there is none.
fn time_cub<T: Value>(session: &Session, job: &Job<'_, T>) -> std::result::Result<f64, String> {
    let repeat = session.cub_calls()?;
    let (op, arg) = job.fold;
    let (timing, values, indices) =
        crate::cub_ops::time_segmented(op, arg, &job.data, &job.host_offsets(), repeat).map_err(|e| e.to_string())?;
    // CUB's order of additions is not ours: the bound for any order (None).
    check_all(op, &job.data, &job.segments, &values, indices.as_deref(), None)
        .map_err(|why| format!("CUB's answer is wrong: {why}"))?;
    Ok(timing.median_us)
}
