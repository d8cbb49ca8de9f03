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

use host::backend::{Backend, DeviceBuffer};
use host::cub::CubOp;
use host::input::Input;
use host::scan::{self, Kind, Scan, ScanVariant, cpu};

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

        for &v in &variants {
            let id = format!("scan/{}/{n}", v.name);
            if let Some(&(m, us)) = last_us.get(v.name) {
                let predicted = us * (n as f64 / m as f64);
                if predicted > common::SKIP_US {
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
            let mut group = common::group(&mut c, "scan", n as u64 * 8, us > common::SLOW_US);
            // Checked before timing (a full download per sample would dominate the bench at 1e9).
            common::bench_launches(&mut group, &backend, v.name, n, || s.launch(), || Ok(()));
            group.finish();
        }

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
