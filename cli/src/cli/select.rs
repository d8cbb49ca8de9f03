//! The row of a stream compaction (`reduce --op select`, `--op partition`, `--op unique`,
//! [`crate::select`]) or a run-length encoding (`--op run_length`): values uniform over
//! [0, 1000) (`u8`: [0, 256); for unique and run_length, in runs of mean length `--run`), kept
//! by `--predicate` (or a flag array: `--predicate flags`); one row: the time, GB/s of the bytes read and
//! written, the bound, and with `--compare-cub` CUB's `DeviceSelect`/`DevicePartition`/
//! `DeviceRunLengthEncode` on the same input, every output of ours (and CUB's) checked against
//! the CPU.

use std::io::Write;

use super::metrics::{Counted, Length, before_last, profile_of};
use super::reduce::fits_device;
use super::{
    Args, OpArg, Session, bound_and_cub_cells, bound_and_cub_columns, no_cub, progress, progress_done, timing_cells,
    timing_columns, verdict,
};
use crate::backend::DeviceBuffer;
use crate::input::{Pattern, typed};
use crate::output::{Cell, Column};
use crate::select::{CpuSelection, Predicate, Select, SelectElement, Selection, cpu, cpu_run_length, predicate};
use crate::timing::Rerun;
use crate::{Error, Result};

/// `--predicate` and `--run` belong to the compactions: refused with any other operation.
pub(super) fn refuse_elsewhere(args: &Args) -> Result<()> {
    let runs = runs(args.op);
    match (&args.predicate, args.run) {
        (Some(p), _) if !matches!(args.op, OpArg::Select | OpArg::Partition) => Err(Error::Invalid(format!(
            "--predicate {p} does not apply to --op {}: it says what --op select and --op partition keep",
            args.op.name()
        ))),
        (_, Some(r)) if !runs => Err(Error::Invalid(format!(
            "--run {r} does not apply to --op {}: it shapes the input of --op unique and --op run_length",
            args.op.name()
        ))),
        _ => Ok(()),
    }
}

/// Is `op` one whose input comes in runs (`--run`): unique and run_length.
fn runs(op: OpArg) -> bool {
    matches!(op, OpArg::Unique | OpArg::RunLength)
}

/// The columns of a compaction report.
fn columns() -> Vec<Column> {
    let mut c = vec![
        Column::new("operation", "operation", 10, 0),
        Column::new("type", "type", 5, 0),
        Column::new("keep", "keep", 10, 0),
        Column::new("n", "n", 11, 0),
        Column::new("kept", "kept", 11, 0),
    ];
    c.extend(timing_columns(("bytes_per_s_rw", "gb_per_s_rw", "GB/s r+w"), 7));
    c.extend(bound_and_cub_columns());
    c.push(Column::new("verdict", "verdict", 0, 0));
    c
}

/// Runs `--op select`, `partition` or `unique`; `Ok(false)` when the row failed.
pub(super) fn run(args: &Args, out: &mut dyn Write, err: &mut dyn Write) -> Result<bool> {
    refuse_flags(args)?;
    match args.elem.as_str() {
        "i32" => row::<i32>(args, out, err),
        "u32" => row::<u32>(args, out, err),
        "f32" => row::<f32>(args, out, err),
        "u8" => row::<u8>(args, out, err),
        "u16" => row::<u16>(args, out, err),
        other => Err(Error::Invalid(format!(
            "--type {other} does not apply to --op {}: the element types are i32, u32, f32, u8, u16",
            args.op.name()
        ))),
    }
}

/// The flags of the other operations are refused here, never ignored.
fn refuse_flags(args: &Args) -> Result<()> {
    let name = args.op.name();
    let kernel = if args.op == OpArg::RunLength { "run_length__{type}" } else { "select__{type}" };
    super::refuse_one_kernel_flags(args, &name, kernel)?;
    let refuse = |flag: String, why: &str| Err(Error::Invalid(format!("{flag} does not apply to --op {name}: {why}")));
    match () {
        () if args.block.is_some() => refuse(
            "--block".into(),
            "the kernel is compiled for its block: 256 threads, and for i32, u32, f32 a look-ahead warp more (288)",
        ),
        () if args.combine != "sum" => refuse(format!("--combine {}", args.combine), "a compaction combines nothing"),
        () if args.lower.is_some() || args.upper.is_some() || args.bins != 256 => {
            refuse("--bins/--lower/--upper".into(), "they shape a histogram")
        }
        () => Ok(()),
    }
}

/// What a row keeps: a predicate, flags, unique values, or the runs (unique values and lengths).
#[derive(Clone, Debug)]
enum Keep<T> {
    Predicate(Predicate<T>),
    Flags(Vec<u8>),
    Unique,
    Runs,
}

/// A compaction prepared on one input: what the timing loop launches and checks.
struct Job<'b, T: SelectElement> {
    backend: &'b crate::Backend,
    input: DeviceBuffer<T>,
    flags: Option<DeviceBuffer<u8>>,
    output: DeviceBuffer<T>,
    /// The runs' lengths (run_length; one unused word otherwise).
    lengths: DeviceBuffer<u32>,
    count: DeviceBuffer<u32>,
    keep: Keep<T>,
    partition: bool,
    /// The CPU's output and kept count (and the runs' lengths), made once: every timed run and
    /// CUB's answer are checked against them.
    want: Want<T>,
    /// Where each check downloads the output and the lengths (as long as the CPU's): kept
    /// between runs, so that a check does not allocate and fault in a buffer of its own.
    got: (Vec<T>, Vec<u32>),
    select: Select<'b, T>,
}

/// The CPU's answer: the output, the kept count, the runs' lengths (run_length only).
struct Want<T> {
    output: Vec<T>,
    kept: usize,
    lengths: Vec<u32>,
}

impl<'b, T: SelectElement> Job<'b, T> {
    /// The row's buffers on `backend`: the input (and flags), the output (and lengths), the
    /// count; `want` the CPU's answer the checks compare with.
    fn new(backend: &'b crate::Backend, data: &[T], (keep, partition): (Keep<T>, bool), want: Want<T>) -> Result<Self> {
        let n = data.len();
        let flags = match &keep {
            Keep::Flags(f) => Some(backend.upload(f)?),
            _ => None,
        };
        let (input, output, count) = (backend.upload(data)?, backend.alloc::<T>(n)?, backend.alloc::<u32>(1)?);
        let lengths = backend.alloc::<u32>(if matches!(keep, Keep::Runs) { n } else { 1 })?;
        let select = Select::new(backend);
        let got = (vec![T::ZERO; want.output.len()], vec![0; want.lengths.len()]);
        Ok(Job { backend, input, flags, output, lengths, count, keep, partition, want, got, select })
    }
}

impl<T: SelectElement> Rerun for Job<'_, T> {
    fn reset(&mut self) -> Result<()> {
        Ok(())
    }

    fn launch(&mut self) -> Result<()> {
        let n = self.input.len();
        // (The selection borrows the flags; the object, the output and the count are apart.)
        let sel = match (&self.keep, self.partition, &self.flags) {
            (Keep::Predicate(p), false, _) => Selection::If(*p),
            (Keep::Predicate(p), true, _) => Selection::PartitionIf(*p),
            (Keep::Flags(_), false, Some(f)) => Selection::Flagged(f),
            (Keep::Flags(_), true, Some(f)) => Selection::PartitionFlagged(f),
            (Keep::Unique, _, _) => Selection::Unique,
            (Keep::Runs, _, _) => {
                let (input, unique, lengths) = (&self.input, &mut self.output, &mut self.lengths);
                return self.select.enqueue_run_length(input, 0..n, unique, lengths, &mut self.count);
            }
            (Keep::Flags(_), _, None) => return Err(Error::Invalid("no flags".into())),
        };
        self.select.enqueue(&self.input, 0..n, sel, &mut self.output, &mut self.count)
    }

    fn check(&mut self) -> Result<Option<String>> {
        let kept = self.backend.read_element(&self.count, 0)? as usize;
        let (got, lengths) = &mut self.got;
        self.backend.download_into(&self.output, got)?;
        self.backend.download_into(&self.lengths, lengths)?;
        Ok(first_wrong(&self.want, kept, got, lengths))
    }
}

/// The first difference between the CPU's answer and (`kept`, `got`, `lengths`), as a
/// verdict's reason.
fn first_wrong<T: SelectElement>(want: &Want<T>, kept: usize, got: &[T], lengths: &[u32]) -> Option<String> {
    if kept != want.kept {
        return Some(format!("kept {kept}, the CPU keeps {}", want.kept));
    }
    // The common case first, at memcmp's speed: every byte the CPU's (the same bits).
    let bytes = bytemuck::cast_slice::<T, u8>;
    if got.get(..want.output.len()).is_some_and(|g| bytes(g) == bytes(&want.output))
        && lengths.get(..want.lengths.len()) == Some(&want.lengths[..])
    {
        return None;
    }
    let w = &want.output;
    let value = (0..w.len()).find(|&i| got.get(i).is_none_or(|g| !g.same_bits(w[i]))).map(|i| {
        format!("output[{i}] = {}, the CPU's {}", got.get(i).map_or("nothing".into(), ToString::to_string), w[i])
    });
    let l = &want.lengths;
    value.or_else(|| {
        (0..l.len()).find(|&i| lengths.get(i) != Some(&l[i])).map(|i| {
            format!(
                "length[{i}] = {}, the CPU's {}",
                lengths.get(i).map_or("nothing".into(), ToString::to_string),
                l[i]
            )
        })
    })
}

/// The row's values are uniform over [0, this): 1000, or 256 for `u8` (its whole range).
fn value_range<T>() -> u32 {
    if std::mem::size_of::<T>() == 1 { 256 } else { 1000 }
}

/// The row's input: values uniform over [0, [`value_range`]) from the seed; for unique, each
/// value repeats the one before with probability 1 − 1/run.
fn values<T: SelectElement>(n: usize, seed: u64, run: Option<u32>) -> Vec<T> {
    let words = typed::<u64>(n, seed, Pattern::Random);
    let range = value_range::<T>() as u64;
    let mut out: Vec<T> = Vec::with_capacity(n);
    for (i, &w) in words.iter().enumerate() {
        let repeat = run.is_some_and(|r| i > 0 && !(w >> 40).is_multiple_of(r as u64));
        out.push(if repeat { out[i - 1] } else { T::from_u32((w % range) as u32) });
    }
    out
}

/// What `args` keeps, as the report names it (`lt:500`, `flags`, `run:4`), and as the row
/// runs it (the predicate parsed, or the flags made from `seed`: about half of them set).
fn keep_of<T: SelectElement>(args: &Args, n: usize, seed: u64) -> Result<(String, Keep<T>)> {
    if runs(args.op) {
        let keep = if args.op == OpArg::Unique { Keep::Unique } else { Keep::Runs };
        return Ok((format!("run:{}", args.run.unwrap_or(4)), keep));
    }
    // Half the values by default: lt:500 (lt:128 for u8).
    let described = args.predicate.clone().unwrap_or_else(|| format!("lt:{}", value_range::<T>() / 2));
    let keep = if described == "flags" {
        Keep::Flags(typed::<u64>(n, seed ^ 0xf1a6, Pattern::Random).iter().map(|&w| (w & 1) as u8).collect())
    } else {
        Keep::Predicate(predicate::<T>(&described)?)
    };
    Ok((described, keep))
}

/// The report of one compaction of `T` elements.
fn row<T: SelectElement>(args: &Args, out: &mut dyn Write, err: &mut dyn Write) -> Result<bool> {
    let session = Session::open(args)?;
    let n = session.n;
    let name = args.op.name();
    let partition = args.op == OpArg::Partition;
    let (described, keep) = keep_of::<T>(args, n, session.seed)?;
    if session.backend.is_gpu() {
        fits_device(n, std::mem::size_of::<T>() as u64, 2, session.info().memory_bytes)?;
    }
    let metric_columns = if args.metrics { crate::metrics::columns_of(profile_of(&session)) } else { Vec::new() };
    let mut report = session.report(out, before_last(columns(), metric_columns));
    for line in session.banner() {
        report.note(&line);
    }
    report.note(&format!(
        "{name} of {n} {} values uniform over [0, {}){}, keep {described}, {} (CUDA events{})",
        T::NAME,
        value_range::<T>(),
        if runs(args.op) { " in runs" } else { "" },
        session.timed_runs(),
        session.clock()
    ));
    progress(&session, err, &format!("generating {n} values (seed {})", session.seed));
    let data = values::<T>(n, session.seed, runs(args.op).then(|| args.run.unwrap_or(4)));
    let want = want_of(&data, &keep, partition);
    progress_done(&session, err);
    let backend = &session.backend;
    let metrics =
        if args.metrics { Some(counters::<T>(&session, args, &data, (&keep, partition), err)?) } else { None };
    if let Some((p, _)) = &metrics {
        report.note(super::metrics::note(*p));
    }
    let mut job = Job::new(backend, &data, (keep, partition), want)?;
    let cub = args.compare_cub.then(|| time_cub(&session, &job, &data));
    if let Some(Err(why)) = &cub {
        no_cub(&mut report, err, why);
    }
    progress(&session, err, &format!("running the {name}"));
    let runs = crate::timing::timed_runs(backend, &mut job, session.repeat)?;
    progress_done(&session, err);
    let verdict = verdict(job.check()?, &runs);
    let failed = matches!(verdict, Cell::Verdict("FAIL", _));
    report.header();
    let size = std::mem::size_of::<T>();
    let kept = job.want.kept;
    // Read: the values (and the flags); written: every element of a partition, else the kept
    // (and their lengths, 4 bytes each).
    let written = if partition { n } else { kept };
    let flag_bytes = if matches!(job.keep, Keep::Flags(_)) { n } else { 0 };
    let bytes = (n * size + flag_bytes + written * size + 4 * job.want.lengths.len()) as f64;
    let bound = session.info().peak_bandwidth.map(|peak| bytes / peak * 1e6);
    let median = runs.median_us();
    let cub = cub.and_then(|c| c.ok());
    let mut cells = vec![
        Cell::Text(name.clone()),
        Cell::Text(T::NAME.into()),
        Cell::Text(described.clone()),
        Cell::Int(n as i64),
        Cell::Int(kept as i64),
    ];
    cells.extend(timing_cells(&session, &runs, bytes));
    cells.extend(bound_and_cub_cells(bound, median, cub));
    cells.push(verdict);
    match &metrics {
        Some((p, m)) => report.row(&before_last(cells, crate::metrics::cells(*p, m[0].as_ref()))),
        None => report.row(&cells),
    }
    let mut meta = session.meta();
    meta.insert("operation".into(), name.into());
    meta.insert("type".into(), T::NAME.into());
    super::finish(report, meta, failed as usize, "operation(s)", None);
    Ok(!failed)
}

/// `--metrics`: the row's counters, before it is printed: Nsight Compute's on a GPU (a child run
/// of the same row), elsewhere the emulator's count of a rerun of the row's launch on the same
/// input (a warm-up, then one counted run, as ncu's child makes).
fn counters<T: SelectElement>(
    session: &Session,
    args: &Args,
    data: &[T],
    (keep, partition): (&Keep<T>, bool),
    err: &mut dyn Write,
) -> Result<Counted> {
    let symbol = if matches!(keep, Keep::Runs) {
        <T as kernels::run_length::run_length::Instance>::KERNEL.name
    } else {
        <T as kernels::select::select::Instance>::KERNEL.name
    };
    let name = args.op.name();
    if session.backend.is_gpu() {
        let mut child = vec!["--op".to_string(), name.clone(), "--type".into(), T::NAME.into()];
        child.extend(args.predicate.iter().flat_map(|p| ["--predicate".to_string(), p.clone()]));
        child.extend(args.run.iter().flat_map(|r| ["--run".to_string(), r.to_string()]));
        return super::metrics::one(session, name, vec![symbol], (child, Length::SessionN), err);
    }
    progress(session, err, &format!("counting the {name} on the emulator"));
    let none = || Want { output: Vec::new(), kept: 0, lengths: Vec::new() };
    let summary = super::metrics::emulated(session, &[symbol], |s| {
        if let Ok(mut job) = Job::new(&s.backend, data, (keep.clone(), partition), none()) {
            let _ = crate::timing::timed_runs(&s.backend, &mut job, 1);
        }
    });
    progress_done(session, err);
    Ok((crate::metrics::Profile::Emulator, vec![summary]))
}

/// The CPU reference's answer for what the row keeps.
fn want_of<T: SelectElement>(data: &[T], keep: &Keep<T>, partition: bool) -> Want<T> {
    let what = match (keep, partition) {
        (Keep::Predicate(p), false) => CpuSelection::If(*p),
        (Keep::Predicate(p), true) => CpuSelection::PartitionIf(*p),
        (Keep::Flags(f), false) => CpuSelection::Flagged(f),
        (Keep::Flags(f), true) => CpuSelection::PartitionFlagged(f),
        (Keep::Unique, _) => CpuSelection::Unique,
        (Keep::Runs, _) => {
            let (output, lengths) = cpu_run_length(data);
            return Want { kept: output.len(), output, lengths };
        }
    };
    let (output, kept) = cpu(data, what);
    Want { output, kept, lengths: Vec::new() }
}

/// CUB's `DeviceSelect`, `DevicePartition` or `DeviceRunLengthEncode` on the same input: its
/// median µs, or why there is none (its output checked against the CPU's).
fn time_cub<T: SelectElement>(session: &Session, job: &Job<'_, T>, data: &[T]) -> std::result::Result<f64, String> {
    let repeat = session.cub_calls()?;
    let (kind, outcomes, operand, flags) = match (&job.keep, job.partition) {
        (Keep::Predicate(p), false) => ("if", p.outcomes, p.operand, None),
        (Keep::Predicate(p), true) => ("partition_if", p.outcomes, p.operand, None),
        (Keep::Flags(f), false) => ("flagged", 0, T::ZERO, Some(&f[..])),
        (Keep::Flags(f), true) => ("partition_flagged", 0, T::ZERO, Some(&f[..])),
        (Keep::Unique, _) => ("unique", 0, T::ZERO, None),
        (Keep::Runs, _) => ("run_length", 0, T::ZERO, None),
    };
    let (timing, kept, output, lengths) =
        crate::cub_ops::time_select(kind, data, (outcomes, operand), flags, repeat).map_err(|e| e.to_string())?;
    match first_wrong(&job.want, kept, &output, &lengths) {
        Some(why) => Err(format!("CUB's answer is wrong: {why}")),
        None => Ok(timing.median_us),
    }
}

#[cfg(test)]
mod tests {
    use super::{Want, first_wrong};

    #[test]
    fn a_check_compares_bits_and_names_the_first_difference() {
        let want = Want { output: vec![1.0f32, -0.0, f32::NAN], kept: 3, lengths: vec![] };
        assert_eq!(first_wrong(&want, 3, &[1.0, -0.0, f32::NAN, 7.0], &[]), None, "the same bits, a longer output");
        assert_eq!(first_wrong(&want, 2, &[1.0, -0.0, f32::NAN], &[]).unwrap(), "kept 2, the CPU keeps 3");
        let zero = first_wrong(&want, 3, &[1.0, 0.0, f32::NAN], &[]).unwrap();
        assert_eq!(zero, "output[1] = 0, the CPU's -0", "+0 is not -0: the bits differ");
        assert_eq!(first_wrong(&want, 3, &[1.0], &[]).unwrap(), "output[1] = nothing, the CPU's -0");
        let runs = Want { output: vec![5u8, 6], kept: 2, lengths: vec![3, 1] };
        assert_eq!(first_wrong(&runs, 2, &[5, 6], &[3, 1]), None);
        assert_eq!(first_wrong(&runs, 2, &[5, 6], &[3, 2]).unwrap(), "length[1] = 2, the CPU's 1");
    }
}
