//! Criterion benches of the scan variants (`reduce_scan::scan`) on the GPU, timed with CUDA events,
//! and of CUB's `DeviceScan::InclusiveSum` in the same run where nvcc can build it.
//!
//! Ids are `scan/{variant}/{n}` (and `scan/cub/{n}`) at the seed's lengths
//! n ∈ {100, 10³, 10⁴, 10⁵, 10⁶, 10⁷, 10⁸, 10⁹}, inclusive scans; criterion reports the time
//! per scan and, from `Throughput::Bytes(8n)`, bytes moved per second counting each element
//! read once and written once (what a device-to-device copy of the input moves). Filter as
//! usual: `.gpu/benches/scan-* --bench 'scan/lookback/'`. `SCAN_BENCH_TUNING=1` adds the
//! tuning shapes of `lookback` (`lookback_128x44`, …).
//!
//! **What is timed, and what is checked.** Every launch of every sample is checked (issue
//! #12). A scan's output is n elements, so it cannot be kept per launch nor checked on the
//! host per launch; instead each launch (every kernel of the variant's plan) is **timed alone**
//! between its own CUDA events (`Backend::time`, which queues a short `stream_hold` kernel
//! before its start event), and after it, outside the events, a check kernel
//! (`kernels::check::count_mismatches_32`, through `reduce_scan::verify::DeviceCheck`) compares the
//! output with the CPU's scan, uploaded to the device once per n before timing and shared by
//! the variants, and adds the number of differing elements into that launch's counter. The
//! counters are read once per sample; a non-zero one fails the bench (`FAILED`, exit status 1)
//! with the sample, the launch and the count. The sample's time is the sum of its launches'
//! times, so **the figures are per launch, not back to back** (as the in-place reductions of
//! `benches/reduce.rs`). The scans need nothing restored between runs (see `reduce_scan::scan`:
//! `bit` rebuilds its tree from the input, `blelloch` rewrites its tile sums, and the
//! look-back tags its status words with a new epoch per launch), so every launch is a real
//! run. Input generation, upload, allocation and a first full check of each variant's output
//! on the host happen once per (variant, n), before timing. The reference costs 4n bytes of
//! device memory (4 GB at 10⁹): where input, output, scratch and reference do not fit, the
//! variant is skipped with a line saying so.
//!
//! **Bounded time.** Flat sampling, 0.3 s warm-up, 1 s of measurement, 20 samples (10 where
//! one scan takes over 20 ms); a variant predicted (from the previous size) to take over
//! 250 ms per scan is skipped with a line saying so. Those budgets count device time; with
//! each launch timed and checked alone, the wall time of a small scan's samples is several
//! times that (each launch waits for its events). Without a GPU the benches print why and
//! register nothing.

use std::collections::HashMap;

use reduce_scan::backend::{Backend, DeviceBuffer};
use reduce_scan::input::Input;
use reduce_scan::scan::{self, Kind, Scan, ScanVariant, cpu};
use reduce_scan::verify::DeviceCheck;
use reduce_scan_cli::cub::CubOp;

mod common;

const SIZES: [usize; 8] = [100, 1_000, 10_000, 100_000, 1_000_000, 10_000_000, 100_000_000, 1_000_000_000];

fn main() {
    let Some(backend) = common::gpu_or_skip("scan") else { return };
    println!("scan benches on {}", backend.info());
    let mut c = common::criterion();
    let tuning = std::env::var("SCAN_BENCH_TUNING").is_ok_and(|v| v == "1");
    let variants: Vec<&'static ScanVariant> = scan::all().filter(|v| tuning || !v.tuning).collect();

    let mut cub_session = common::cub_session("scan");

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

        // The CPU's scan on the device, once per n, for the check of every launch (4n bytes).
        let mut reference = match DeviceCheck::exact(&backend, &expected) {
            Ok(r) => Some(r),
            Err(e) => {
                println!(
                    "scan/*/{n}: skipped (the reference on the device, {} bytes, does not fit: {e})",
                    4 * n as u64
                );
                None
            }
        };
        if let Some(check) = reference.as_mut() {
            for &v in &variants {
                failures += bench_variant(&mut c, &backend, v, (&input, &expected), check, &mut last_us);
            }
        }
        drop(reference);

        if !common::bench_cub(&mut c, "scan", &mut cub_session, CubOp::InclusiveSum, n, n as u64 * 8) {
            failures += 1;
        }
    }
    c.final_summary();
    if failures > 0 {
        println!("{failures} benchmark(s) failed their check or could not run");
        std::process::exit(1);
    }
}

/// Prepares, checks and times `v` on `input` (`expected` its CPU scan, also on the device in
/// `check`), every launch checked, unless `last_us` predicts it too slow or the device lacks
/// the memory. Returns how many failed (0 or 1).
fn bench_variant(
    c: &mut criterion::Criterion,
    backend: &Backend,
    v: &'static ScanVariant,
    (input, expected): (&DeviceBuffer<i32>, &[i32]),
    check: &mut DeviceCheck<i32>,
    last_us: &mut HashMap<&'static str, (usize, f64)>,
) -> usize {
    let n = expected.len();
    let id = format!("scan/{}/{n}", v.name);
    if common::predicted_too_slow(last_us, v.name, n, &id, "scan") {
        return 0;
    }
    // Input, output, scratch and the reference.
    let need = 12 * n as u64 + v.scratch_bytes(n);
    if need > backend.info().memory_bytes {
        println!("{id}: skipped (needs {need} bytes of device memory)");
        return 0;
    }
    let mut output = match backend.alloc::<i32>(n) {
        Ok(o) => o,
        Err(e) => {
            println!("{id}: skipped (cannot allocate the output: {e})");
            return 0;
        }
    };
    let (mut s, us) = match prepare(backend, v, input, &mut output, expected) {
        Ok(r) => r,
        Err(why) => {
            println!("{id}: FAILED, not benchmarked ({why})");
            return 1;
        }
    };
    last_us.insert(v.name, (n, us));
    let mut group = common::group(c, "scan", n as u64 * 8, us > common::SLOW_US);
    let outcome = common::bench_scan_checked(&mut group, backend, v.name, n, &mut s, check);
    group.finish();
    match outcome {
        Ok(()) => 0,
        Err(why) => {
            println!("{id}: FAILED ({why})");
            1
        }
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
