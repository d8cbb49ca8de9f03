//! What the criterion benches (`reduce`, `scan`, `types`) share: the GPU or a skip line, the
//! bounded criterion settings, the CUB session, and the scans' loop of launches, each timed
//! alone and checked on the device.

use std::collections::HashMap;
use std::time::Duration;

use criterion::measurement::WallTime;
use criterion::{BenchmarkGroup, BenchmarkId, Criterion, SamplingMode, Throughput};
use reduce_scan::backend::{Backend, DeviceBuffer};
use reduce_scan::scan::Scan;
use reduce_scan::types::Value;
use reduce_scan::verify::{DeviceCheck, batch_verdict};
use reduce_scan_cli::cub::{self, CubOp, Session};

/// A launch (or scan) slower than this gets 10 samples instead of 20.
pub const SLOW_US: f64 = 20e3;
/// A launch predicted slower than this is not benchmarked at that size.
pub const SKIP_US: f64 = 250e3;

/// The GPU, or `None` after printing why the bench `name` registers nothing.
pub fn gpu_or_skip(name: &str) -> Option<Backend> {
    match Backend::gpu() {
        Ok(b) => Some(b),
        Err(e) => {
            println!(
                "{name} benches: skipped, nothing registered ({e}); run them on a GPU host: .gpu/benches/{name}-* --bench"
            );
            None
        }
    }
}

/// Criterion with bounded time: 0.3 s warm-up, 1 s of measurement, 20 samples.
pub fn criterion() -> Criterion {
    Criterion::default()
        .warm_up_time(Duration::from_millis(300))
        .measurement_time(Duration::from_secs(1))
        .sample_size(20)
        .nresamples(10_000)
        .configure_from_args()
}

/// Does `name`'s time at the previous size (`last_us`: n and µs per launch) predict one `what`
/// at `n` over [`SKIP_US`]? If so, prints the skip line for `id` and records the prediction.
pub fn predicted_too_slow(
    last_us: &mut HashMap<&'static str, (usize, f64)>,
    name: &'static str,
    n: usize,
    id: &str,
    what: &str,
) -> bool {
    let Some(&(m, us)) = last_us.get(name) else { return false };
    let predicted = us * (n as f64 / m as f64);
    if predicted > SKIP_US {
        println!("{id}: skipped (one {what} would take about {:.0} ms)", predicted / 1e3);
        last_us.insert(name, (n, predicted));
    }
    predicted > SKIP_US
}

/// A CUB harness session, or `None` after printing why `{group}/cub` is skipped.
pub fn cub_session(group: &str) -> Option<Session> {
    let why = match cub::available() {
        Ok(()) => match Session::start() {
            Ok(s) => return Some(s),
            Err(e) => e.to_string(),
        },
        Err(why) => why.to_string(),
    };
    println!("{group}/cub: skipped ({why})");
    None
}

/// A flat-sampling group named `group` whose throughput is `bytes` per iteration.
pub fn group<'a>(c: &'a mut Criterion, group: &str, bytes: u64, slow: bool) -> BenchmarkGroup<'a, WallTime> {
    let mut g = c.benchmark_group(group);
    g.throughput(Throughput::Bytes(bytes)).sampling_mode(SamplingMode::Flat).sample_size(if slow { 10 } else { 20 });
    g
}

/// A scan whose every launch a bench checks on the device: the launch, and the buffer it
/// writes.
pub trait Checked {
    /// The element type of the output.
    type Elem: Value;
    /// Enqueues every launch of one scan.
    fn launch(&mut self) -> reduce_scan::Result<()>;
    /// The output the launch writes.
    fn output(&self) -> &DeviceBuffer<Self::Elem>;
}

impl<T: Value> Checked for Scan<'_, T> {
    type Elem = T;
    fn launch(&mut self) -> reduce_scan::Result<()> {
        Scan::launch(self)
    }
    fn output(&self) -> &DeviceBuffer<T> {
        Scan::output(self)
    }
}

/// Benchmarks the scan `s` as `{group}/{name}/{n}` with every launch of every sample checked:
/// each launch is timed alone between its own CUDA events (`Backend::time`), and after it,
/// outside the events, `check` queues the device check of its output into that launch's
/// counter ([`DeviceCheck::enqueue`]); the counters are read once per sample. The sample's
/// time is the sum of its launches' times (per-launch, not back-to-back, figures). `Err` names
/// the first wrong sample, launch and count; the bench goes on, as `benches/reduce.rs` does.
pub fn bench_scan_checked<S: Checked>(
    g: &mut BenchmarkGroup<'_, WallTime>,
    backend: &Backend,
    name: &str,
    n: usize,
    s: &mut S,
    check: &mut DeviceCheck<S::Elem>,
) -> Result<(), String> {
    let mut sample = 0u64;
    let mut wrong: Option<String> = None;
    let fail = |e: reduce_scan::Error| -> ! { panic!("{name}/{n}: {e}") };
    g.bench_function(BenchmarkId::new(name, n), |b| {
        b.iter_custom(|iters| {
            sample += 1;
            let iters = iters as usize;
            check.start_batch(backend, iters).unwrap_or_else(|e| fail(e));
            let mut us = 0.0;
            for i in 0..iters {
                us += backend.time(&mut || s.launch()).unwrap_or_else(|e| fail(e));
                check.enqueue(backend, s.output(), i).unwrap_or_else(|e| fail(e));
            }
            let counts = check.counts(backend).unwrap_or_else(|e| fail(e));
            if let Err(why) = batch_verdict(&counts, n) {
                wrong.get_or_insert(format!("sample {sample}, {why}"));
            }
            Duration::from_secs_f64(us * 1e-6)
        })
    });
    wrong.map_or(Ok(()), Err)
}

/// Benchmarks CUB's `op` as `{group}/cub/{n}` in the same run. On an error it prints the
/// reason, drops the session (no more CUB entries) and returns `false`.
pub fn bench_cub(
    c: &mut Criterion,
    group_name: &str,
    session: &mut Option<Session>,
    op: CubOp,
    n: usize,
    bytes: u64,
) -> bool {
    let Some(s) = session.as_mut() else { return true };
    let mut error = None;
    let mut g = group(c, group_name, bytes, false);
    g.bench_function(BenchmarkId::new("cub", n), |b| {
        b.iter_custom(|iters| match s.batch(op, n, iters) {
            Ok(us) => Duration::from_secs_f64(us * 1e-6),
            Err(e) => {
                error.get_or_insert(e.to_string());
                Duration::from_secs(1)
            }
        })
    });
    g.finish();
    match error {
        None => true,
        Some(e) => {
            println!("{group_name}/cub/{n}: FAILED ({e}); the figure above is meaningless; no more CUB entries");
            *session = None;
            false
        }
    }
}
