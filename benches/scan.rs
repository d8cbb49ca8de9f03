//! Criterion benches of the scan variants (`host::scan`) on the GPU, timed with CUDA events,
//! and of CUB's `DeviceScan::InclusiveSum` in the same run where nvcc can build it.
//!
//! Ids are `scan/{variant}/{n}` (and `scan/cub/{n}`) at the seed's lengths
//! n ∈ {100, 10³, 10⁴, 10⁵, 10⁶, 10⁷, 10⁸, 10⁹}, inclusive scans; criterion reports the time
//! per scan and, from `Throughput::Bytes(8n)`, bytes moved per second counting each element
//! read once and written once (what a device-to-device copy of the input moves). Filter as
//! usual: `.gpu/benches/scan-* --bench 'scan/lookback/'`. `SCAN_BENCH_TUNING=1` adds the
//! tuning shapes of `lookback` (`lookback_128x44`, …).
//!
//! **What is timed.** `iter_custom`: a CUDA event, `iters` scans back to back on the GPU's
//! stream (every launch of the variant's plan, no synchronisation anywhere in between), a
//! second event, one wait. The scans need nothing restored between runs (see `host::scan`:
//! the look-back's per-launch epochs), so back-to-back runs are real
//! runs. Input generation, upload, allocation and the check of each variant's output against
//! the CPU scan happen once per (variant, n), before timing.
//!
//! **Bounded time.** Flat sampling, 0.3 s warm-up, 1 s of measurement, 20 samples (10 where
//! one scan takes over 20 ms); a variant predicted (from the previous size) to take over
//! 250 ms per scan is skipped with a line saying so. Without a GPU the benches print why and
//! register nothing.

use std::collections::HashMap;
use std::time::Duration;

use criterion::{BenchmarkId, Criterion, SamplingMode, Throughput};
use host::backend::{Backend, DeviceBuffer};
use host::cub::{self, CubOp};
use host::input::Input;
use host::scan::{self, Kind, Scan, ScanVariant, cpu};

const SIZES: [usize; 8] = [100, 1_000, 10_000, 100_000, 1_000_000, 10_000_000, 100_000_000, 1_000_000_000];
/// A scan slower than this gets fewer samples.
const SLOW_US: f64 = 20e3;
/// A scan predicted slower than this is not benchmarked at that size.
const SKIP_US: f64 = 250e3;

fn main() {
    let backend = match Backend::gpu() {
        Ok(b) => b,
        Err(e) => {
            println!(
                "scan benches: skipped, nothing registered ({e}); run them on a GPU host: .gpu/benches/scan-* --bench"
            );
            return;
        }
    };
    println!("scan benches on {}", backend.info());
    let mut c = Criterion::default()
        .warm_up_time(Duration::from_millis(300))
        .measurement_time(Duration::from_secs(1))
        .sample_size(20)
        .nresamples(10_000)
        .configure_from_args();
    let tuning = std::env::var("SCAN_BENCH_TUNING").is_ok_and(|v| v == "1");
    let variants: Vec<&'static ScanVariant> = scan::all().filter(|v| tuning || !v.tuning).collect();

    let mut cub_session = match cub::available() {
        Ok(()) => match cub::Session::start() {
            Ok(s) => Some(s),
            Err(e) => {
                println!("scan/cub: skipped ({e})");
                None
            }
        },
        Err(why) => {
            println!("scan/cub: skipped ({why})");
            None
        }
    };

    let mut last_us: HashMap<&'static str, (usize, f64)> = HashMap::new();
    let mut failures = 0;
    for n in SIZES {
        let data = Input::full_range(n, 1).data;
        let expected = cpu::inclusive_scan(&data);
        let input = match backend.upload(&data) {
            Ok(b) => b,
            Err(e) => {
                println!("scan/*/{n}: skipped (upload failed: {e})");
                failures += 1;
                continue;
            }
        };
        drop(data);

        for &v in &variants {
            let id = format!("scan/{}/{n}", v.name);
            if let Some(&(m, us)) = last_us.get(v.name) {
                let predicted = us * (n as f64 / m as f64);
                if predicted > SKIP_US {
                    println!("{id}: skipped (one scan would take about {:.0} ms)", predicted / 1e3);
                    last_us.insert(v.name, (n, predicted));
                    continue;
                }
            }
            let need = 8 * n as u64 + v.scratch_bytes(n);
            if need > backend.info().memory_bytes {
                println!("{id}: skipped (needs {need} bytes of device memory)");
                continue;
            }
            let mut output = match backend.alloc::<i32>(n) {
                Ok(o) => o,
                Err(e) => {
                    println!("{id}: skipped (cannot allocate the output: {e})");
                    continue;
                }
            };
            let (mut s, us) = match prepare(&backend, v, &input, &mut output, &expected) {
                Ok(r) => r,
                Err(why) => {
                    println!("{id}: FAILED, not benchmarked ({why})");
                    failures += 1;
                    continue;
                }
            };
            last_us.insert(v.name, (n, us));
            let mut group = c.benchmark_group("scan");
            group
                .throughput(Throughput::Bytes(n as u64 * 8))
                .sampling_mode(SamplingMode::Flat)
                .sample_size(if us > SLOW_US { 10 } else { 20 });
            group.bench_function(BenchmarkId::new(v.name, n), |b| {
                b.iter_custom(|iters| {
                    let us = backend
                        .time(&mut || {
                            for _ in 0..iters {
                                s.launch()?;
                            }
                            Ok(())
                        })
                        .unwrap_or_else(|e| panic!("scan/{}/{n}: {e}", v.name));
                    Duration::from_secs_f64(us * 1e-6)
                })
            });
            group.finish();
        }

        if let Some(session) = cub_session.as_mut() {
            let mut group = c.benchmark_group("scan");
            group.throughput(Throughput::Bytes(n as u64 * 8)).sampling_mode(SamplingMode::Flat).sample_size(20);
            let mut error = None;
            group.bench_function(BenchmarkId::new("cub", n), |b| {
                b.iter_custom(|iters| match session.batch(CubOp::InclusiveSum, n, iters) {
                    Ok(us) => Duration::from_secs_f64(us * 1e-6),
                    Err(e) => {
                        error.get_or_insert(e.to_string());
                        Duration::from_secs(1)
                    }
                })
            });
            group.finish();
            if let Some(e) = error {
                println!("scan/cub/{n}: FAILED ({e}); the figure above is meaningless; no more CUB entries");
                failures += 1;
                cub_session = None;
            }
        }
    }
    c.final_summary();
    if failures > 0 {
        println!("{failures} benchmark(s) failed their check or could not run");
        std::process::exit(1);
    }
}

/// Plans the scan, runs it once untimed (module load, caches) and once timed, and checks
/// every element of the output against the CPU scan. Returns the ready scan and that run's
/// time (µs).
fn prepare<'a>(
    backend: &'a Backend,
    v: &'static ScanVariant,
    input: &'a DeviceBuffer<i32>,
    output: &'a mut DeviceBuffer<i32>,
    expected: &[i32],
) -> Result<(Scan<'a>, f64), String> {
    let n = expected.len();
    let mut s = Scan::new(backend, v, Kind::Inclusive, input, output, n).map_err(|e| e.to_string())?;
    s.launch().and_then(|_| backend.synchronize()).map_err(|e| e.to_string())?;
    let us = backend.time(&mut || s.launch()).map_err(|e| e.to_string())?;
    let got = s.result().map_err(|e| e.to_string())?;
    if let Some((i, e, g)) = cpu::first_mismatch(expected, &got) {
        return Err(format!("index {i}: expected {e:?}, got {g:?}"));
    }
    Ok((s, us))
}
