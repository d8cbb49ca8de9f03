//! What the two criterion benches (`reduce`, `scan`) share: the GPU or a skip line, the
//! bounded criterion settings, the CUB session, and the event-timed loop of launches.

use std::time::Duration;

use criterion::measurement::WallTime;
use criterion::{BenchmarkGroup, BenchmarkId, Criterion, SamplingMode, Throughput};
use host::backend::Backend;
use host::cub::{self, CubOp, Session};

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

/// Benchmarks `launch` as `{group}/{name}/{n}`: per sample, a CUDA event, `iters` calls of
/// `launch` back to back on the GPU's stream (no synchronisation between them), a second
/// event, one wait; the time between the events. After every sample, outside the events,
/// `check` reads the last launch's result (`Err` says what is wrong): a wrong result stops
/// the bench with the sample's number instead of hiding behind a good median.
pub fn bench_launches(
    g: &mut BenchmarkGroup<'_, WallTime>,
    backend: &Backend,
    name: &str,
    n: usize,
    mut launch: impl FnMut() -> host::Result<()>,
    mut check: impl FnMut() -> Result<(), String>,
) {
    let mut sample = 0u64;
    g.bench_function(BenchmarkId::new(name, n), |b| {
        b.iter_custom(|iters| {
            let us = backend
                .time(&mut || (0..iters).try_for_each(|_| launch()))
                .unwrap_or_else(|e| panic!("{name}/{n}: {e}"));
            sample += 1;
            if let Err(why) = check() {
                panic!("{name}/{n}: the last launch of sample {sample} gave a wrong result: {why}");
            }
            Duration::from_secs_f64(us * 1e-6)
        })
    });
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
