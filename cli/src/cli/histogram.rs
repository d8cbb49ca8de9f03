//! The row of a histogram (`reduce --op histogram`, `--op bincount`, [`crate::histogram`]):
//! `--bins B` even bins over `[--lower, --upper)` (default: every value of an integer `--type`,
//! `[0, 1)` for `f32`), or `bincount`'s bins 0..B; samples spread over the range and a tenth of
//! its width past each end; one row: the time, GB/s, the bound, and with `--compare-cub`
//! `cub::DeviceHistogram::HistogramEven` on the same samples, every counter of ours (and CUB's)
//! checked against the CPU.

use std::io::Write;

use super::metrics::{Counted, Length, before_last};
use super::reduce::fits_device;
use super::{
    Args, Session, bound_and_cub_cells, bound_and_cub_columns, no_cub, progress, progress_done, timing_cells,
    timing_columns, verdict,
};
use crate::backend::DeviceBuffer;
use crate::histogram::{self, HistSample, Histogram};
use crate::output::{Cell, Column};
use crate::timing::Rerun;
use crate::{Error, Result};

/// The columns of a histogram report.
fn columns() -> Vec<Column> {
    let mut c = vec![
        Column::new("operation", "operation", 10, 0),
        Column::new("type", "type", 5, 0),
        Column::new("bins", "bins", 5, 0),
        Column::new("lower", "lower", 12, 0),
        Column::new("upper", "upper", 12, 0),
        Column::new("n", "n", 11, 0),
    ];
    c.extend(timing_columns(("bytes_per_s", "gb_per_s", "GB/s"), 7));
    c.extend(bound_and_cub_columns());
    c.push(Column::new("verdict", "verdict", 0, 0));
    c
}

/// Runs `--op histogram` (`bincount` false) or `--op bincount`; `Ok(false)` when the row failed.
pub(super) fn run(args: &Args, bincount: bool, out: &mut dyn Write, err: &mut dyn Write) -> Result<bool> {
    refuse_flags(args, bincount)?;
    match args.elem.as_str() {
        "u8" => row::<u8>(args, bincount, out, err),
        "u16" => row::<u16>(args, bincount, out, err),
        "u32" => row::<u32>(args, bincount, out, err),
        "i32" => row::<i32>(args, bincount, out, err),
        "f32" if !bincount => row::<f32>(args, bincount, out, err),
        other => Err(Error::Invalid(format!(
            "--type {other} does not apply to --op {}: the sample types are {}",
            if bincount { "bincount" } else { "histogram" },
            if bincount { "u8, u16, u32, i32" } else { "u8, u16, u32, i32, f32" }
        ))),
    }
}

/// The flags of the other operations are refused here, never ignored.
fn refuse_flags(args: &Args, bincount: bool) -> Result<()> {
    let name = if bincount { "bincount" } else { "histogram" };
    super::refuse_one_kernel_flags(args, name, "histogram_even__{type}")?;
    let refuse = |flag: String, why: &str| Err(Error::Invalid(format!("{flag} does not apply to --op {name}: {why}")));
    match () {
        () if args.combine != "sum" => refuse(format!("--combine {}", args.combine), "a histogram counts"),
        () if bincount && (args.lower.is_some() || args.upper.is_some()) => {
            refuse("--lower/--upper".into(), "its bins are the values 0..--bins")
        }
        () => match args.block {
            Some(b) if crate::reduce::one_pass::check_block(b).is_err() => {
                Err(Error::Invalid(format!("--block {b}: the block must be a power of two in 32..=1024")))
            }
            _ => Ok(()),
        },
    }
}

/// A bound from its flag, or the type's default.
fn level<S: HistSample>(flag: &str, given: &Option<String>, default: S::Level) -> Result<S::Level> {
    match given {
        None => Ok(default),
        Some(text) => S::parse_level(text).map_err(|why| Error::Invalid(format!("{flag} {text}: {why}"))),
    }
}

/// A histogram prepared on one input: what the timing loop launches and checks.
struct Job<'b, S: HistSample> {
    backend: &'b crate::Backend,
    data: Vec<S>,
    input: DeviceBuffer<S>,
    counts: DeviceBuffer<u32>,
    bounds: (S::Level, S::Level),
    /// The CPU's counts, made once: every timed run and CUB's answer are checked against them.
    want: Vec<u32>,
    histogram: Histogram<'b, S>,
}

impl<'b, S: HistSample> Job<'b, S> {
    /// The row's buffers on `backend` (`want.len()` counters; `block` the plan's block where
    /// `--block` gives one); `want` the CPU's counts the checks compare with.
    fn new(
        backend: &'b crate::Backend,
        block: Option<u32>,
        data: Vec<S>,
        bounds: (S::Level, S::Level),
        want: Vec<u32>,
    ) -> Result<Self> {
        let histogram = match block {
            Some(b) => Histogram::with_block(backend, b)?,
            None => Histogram::new(backend),
        };
        let (input, counts) = (backend.upload(&data)?, backend.alloc::<u32>(want.len())?);
        Ok(Job { backend, data, input, counts, bounds, want, histogram })
    }
}

/// `--metrics`: the row's counters, before it is printed: Nsight Compute's on a GPU (a child run
/// of the same row), elsewhere the emulator's count of a rerun of the row's launch on the same
/// samples (a warm-up, then one counted run).
fn counters<S: HistSample>(
    session: &Session,
    args: &Args,
    name: &str,
    (data, bounds): (&[S], (S::Level, S::Level)),
    err: &mut dyn Write,
) -> Result<Counted> {
    let symbol = <S as kernels::histogram::histogram_even::Instance>::KERNEL.name;
    if session.backend.is_gpu() {
        let mut child = vec!["--op".to_string(), name.into(), "--type".into(), S::NAME.into()];
        child.extend(["--bins".to_string(), args.bins.to_string()]);
        child.extend(args.lower.iter().flat_map(|l| ["--lower".to_string(), l.clone()]));
        child.extend(args.upper.iter().flat_map(|u| ["--upper".to_string(), u.clone()]));
        child.extend(args.block.iter().flat_map(|b| ["--block".to_string(), b.to_string()]));
        return super::metrics::one(session, name.into(), vec![symbol], (child, Length::SessionN), err);
    }
    progress(session, err, &format!("counting the {name} on the emulator"));
    let summary = super::metrics::emulated(session, &[symbol], |s| {
        let zeros = vec![0; args.bins as usize];
        if let Ok(mut job) = Job::new(&s.backend, args.block, data.to_vec(), bounds, zeros) {
            let _ = crate::timing::timed_runs(&s.backend, &mut job, 1);
        }
    });
    progress_done(session, err);
    Ok((crate::metrics::Profile::Emulator, vec![summary]))
}

impl<S: HistSample> Rerun for Job<'_, S> {
    fn reset(&mut self) -> Result<()> {
        Ok(())
    }

    fn launch(&mut self) -> Result<()> {
        let n = self.data.len();
        self.histogram.enqueue_even(&self.input, 0..n, &mut self.counts, self.bounds.0, self.bounds.1)
    }

    fn check(&mut self) -> Result<Option<String>> {
        let got = self.backend.download(&self.counts)?;
        Ok(first_wrong(&self.want, &got))
    }
}

/// The first counter of `got` that differs from the CPU's count `want`, as a verdict's reason.
fn first_wrong(want: &[u32], got: &[u32]) -> Option<String> {
    (0..want.len()).find(|&b| got.get(b) != Some(&want[b])).map(|b| {
        format!("bin {b} holds {}, the CPU counts {}", got.get(b).map_or("nothing".into(), u32::to_string), want[b])
    })
}

/// The report of one histogram of `S` samples.
fn row<S: HistSample>(args: &Args, bincount: bool, out: &mut dyn Write, err: &mut dyn Write) -> Result<bool> {
    let session = Session::open(args)?;
    let n = session.n;
    let bins = args.bins;
    let name = if bincount { "bincount" } else { "histogram" };
    let bounds = if bincount {
        (S::level(0), S::level(bins))
    } else {
        let (lo, hi) = S::whole();
        (level::<S>("--lower", &args.lower, lo)?, level::<S>("--upper", &args.upper, hi)?)
    };
    // The library's checks, before anything is generated or uploaded.
    histogram::cpu::<S>(&[], bins, bounds.0, bounds.1)?;
    if session.backend.is_gpu() {
        fits_device(n, std::mem::size_of::<S>() as u64, 1, session.info().memory_bytes)?;
    }
    let metric_columns =
        if args.metrics { crate::metrics::columns_of(super::metrics::profile_of(&session)) } else { vec![] };
    let mut report = session.report(out, before_last(columns(), metric_columns));
    for line in session.banner() {
        report.note(&line);
    }
    report.note(&format!(
        "{name} of {n} {} samples, {bins} bins over [{}, {}) (a tenth of the samples past each end), {} (CUDA events{})",
        S::NAME,
        bounds.0,
        bounds.1,
        session.timed_runs(),
        session.clock()
    ));
    progress(&session, err, &format!("generating {n} {} samples (seed {})", S::NAME, session.seed));
    let data = histogram::spread::<S>(n, session.seed, bounds.0, bounds.1);
    progress_done(&session, err);
    let backend = &session.backend;
    let metrics = if args.metrics { Some(counters::<S>(&session, args, name, (&data, bounds), err)?) } else { None };
    if let Some((p, _)) = &metrics {
        report.note(super::metrics::note(*p));
    }
    let want = histogram::cpu(&data, bins, bounds.0, bounds.1)?;
    let mut job = Job::new(backend, args.block, data, bounds, want)?;
    let cub = args.compare_cub.then(|| time_cub(&session, &job));
    if let Some(Err(why)) = &cub {
        no_cub(&mut report, err, why);
    }
    progress(&session, err, &format!("running the {name}"));
    let runs = crate::timing::timed_runs(backend, &mut job, session.repeat)?;
    progress_done(&session, err);
    let verdict = verdict(job.check()?, &runs);
    let failed = matches!(verdict, Cell::Verdict("FAIL", _));
    report.header();
    let bytes = (n * std::mem::size_of::<S>() + 4 * bins as usize) as f64;
    let bound = session.info().peak_bandwidth.map(|peak| bytes / peak * 1e6);
    let median = runs.median_us();
    let cub = cub.and_then(|c| c.ok());
    let mut cells = vec![
        Cell::Text(name.into()),
        Cell::Text(S::NAME.into()),
        Cell::Int(bins.into()),
        Cell::Text(bounds.0.to_string()),
        Cell::Text(bounds.1.to_string()),
        Cell::Int(n as i64),
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
    meta.insert("type".into(), S::NAME.into());
    super::finish(report, meta, failed as usize, "operation(s)", None);
    Ok(!failed)
}

/// `cub::DeviceHistogram::HistogramEven` on the same samples: its median µs, or why there is
/// none (its counters checked against the CPU's).
fn time_cub<S: HistSample>(session: &Session, job: &Job<'_, S>) -> std::result::Result<f64, String> {
    let repeat = session.cub_calls()?;
    let bins = job.counts.len() as u32;
    let (timing, counts) =
        crate::cub_ops::time_histogram(&job.data, bins, job.bounds, repeat).map_err(|e| e.to_string())?;
    match first_wrong(&job.want, &counts) {
        Some(why) => Err(format!("CUB's answer is wrong: {why}")),
        None => Ok(timing.median_us),
    }
}
