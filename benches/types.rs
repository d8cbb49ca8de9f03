//! Criterion benches of the typed instantiations of the generic variants on the GPU, timed
//! with CUDA events as `benches/reduce.rs` times the classic ones.
//!
//! Ids are `reduce/{variant}/{type}/{op}/{n}` (`reduce/vector_loads/f64/max/16777216`) for
//! every generic variant × i32/u32/i64/u64/f32/f64 × sum/min/max, and
//! `scan/lookback/{type}/{op}/{n}` for the typed inclusive look-back scan, n ∈ {2^24, 2^26};
//! `Throughput::Bytes(n × element size)`, so 64-bit types count twice the bytes per element.
//! Block: 512, or `REDUCE_BENCH_BLOCK`. Without a GPU the benches print why and register
//! nothing.
//!
//! **Every launch of every sample is checked** (issue #12), after a first check of each
//! variant before timing (float sums within the stated bound):
//!
//! * **Reductions** run `iters` launches back to back between two CUDA events, as
//!   `benches/reduce.rs` does: each launch writes its own result slot (its partials for the
//!   host-finished variants, its two result words for `atomic_accumulate`:
//!   `Reduction::alloc_slots` / `launch_into`), allocated and filled outside the events
//!   and read back after them (partials combined pairwise, as the host finishes them, untimed).
//!   Each answer is compared with one computed once per variant (`reduce_scan::verify::Expected`):
//!   integers and min/max bit for bit; float sums against the exact sum (double-double) within
//!   `γ(depth)·Σ|x|` plus the reference's own error, the exact sum and bound computed once, so
//!   a launch's check is a subtraction and a comparison. Their figures are back to back.
//! * **Look-back scans** write n elements, too many to keep per launch or to check on the host
//!   per launch: each launch is **timed alone** between its own events, and after it, outside
//!   them, a check kernel (`kernels::check`) compares the output with a reference uploaded once
//!   before timing and counts the wrong elements into that launch's counter, read once per
//!   sample. Integers and min/max compare bits; float sums compare `|got − exact|` with a bound
//!   per element (both arrays from `reduce_scan::scan::cpu::sum_targets`, 16n bytes on the
//!   device), in the very `f64` operations of the host's check, so the device accepts exactly
//!   what the host would. Their figures are per launch, not back to back.
//!
//! A wrong result fails the bench (`FAILED`, exit status 1) naming the id, n, the sample, the
//! launch and the expected and actual answer (reductions) or the count of wrong elements
//! (scans).

use reduce_scan::backend::Backend;
use reduce_scan::input::{Pattern, typed};
use reduce_scan::reduce::{Reduction, registry};
use reduce_scan::registry::Elem;
use reduce_scan::scan::{Kind, Scan, ScanInstance, cpu as scan_cpu};
use reduce_scan::types::Value;
use reduce_scan::verify::{DeviceCheck, Expected, reference_bytes};

// The helpers for the classic benches (CUB, slow-variant limits) go unused here.
#[allow(dead_code)]
mod common;

const SIZES: [usize; 2] = [1 << 24, 1 << 26];

fn main() {
    let Some(backend) = common::gpu_or_skip("types") else { return };
    let block: u32 = std::env::var("REDUCE_BENCH_BLOCK").ok().and_then(|s| s.parse().ok()).unwrap_or(512);
    println!("typed reduce benches on {}, block {block}", backend.info());
    let mut c = common::criterion();
    let mut failures = 0;
    for n in SIZES {
        for elem in Elem::ALL {
            let ok = reduce_scan::with_elem!(elem, T => bench_type::<T>(&mut c, &backend, n, block));
            failures += ok.iter().filter(|r| r.is_err()).count();
        }
    }
    c.final_summary();
    if failures > 0 {
        println!("{failures} benchmark(s) failed their check or could not run");
        std::process::exit(1);
    }
}

/// Every row of `T` of the generic variants and scans at `n`; one `Err` per row that failed.
fn bench_type<T: Value>(
    c: &mut criterion::Criterion,
    backend: &Backend,
    n: usize,
    block: u32,
) -> Vec<Result<(), String>> {
    let data = typed::<T>(n, 1, Pattern::Random);
    let input = match backend.upload(&data) {
        Ok(b) => b,
        Err(e) => return vec![Err(format!("reduce/*/{}/*/{n}: upload failed: {e}", T::ELEM.name()))],
    };
    let mut results = Vec::new();
    let mut group = common::group(c, "reduce", (n * T::ELEM.size()) as u64, false);
    for (v, _, op) in registry::instances().filter(|&(v, elem, _)| v.is_generic() && elem == T::ELEM) {
        match v.instance::<T>(op) {
            Ok(tv) => results.push(bench_one::<T>(&mut group, backend, tv, &input, &data, block)),
            Err(e) => results.push(Err(e.to_string())),
        }
    }
    group.finish();
    // A scan reads and writes every element: twice the bytes of a reduction.
    let mut group = common::group(c, "scan", (2 * n * T::ELEM.size()) as u64, false);
    let scans = reduce_scan::scan::instances().filter(|&(v, elem, _)| v.is_generic() && elem == T::ELEM);
    for (v, _, op) in scans {
        match v.instance::<T>(op) {
            Ok(tv) => results.push(bench_scan::<T>(&mut group, backend, tv, &input, &data)),
            Err(e) => results.push(Err(e.to_string())),
        }
    }
    group.finish();
    results
}

/// The inclusive scan row `tv`, checked element by element on the host once before timing,
/// then every launch of every sample on the device (`common::bench_scan_checked`): integers and
/// min/max bit for bit, float sums within `scan::cpu::check`'s bound per element.
fn bench_scan<T: Value>(
    group: &mut criterion::BenchmarkGroup<'_, criterion::measurement::WallTime>,
    backend: &Backend,
    tv: ScanInstance<T>,
    input: &reduce_scan::DeviceBuffer<T>,
    data: &[T],
) -> Result<(), String> {
    let n = data.len();
    let id = format!("lookback/{}/{}", T::ELEM.name(), tv.op.name());
    let fail = |why: String| {
        println!("scan/{id}/{n}: FAILED, not benchmarked ({why})");
        why
    };
    let mut output = backend.alloc::<T>(n).map_err(|e| fail(e.to_string()))?;
    let mut s = Scan::of(backend, tv, Kind::Inclusive, input, &mut output, n).map_err(|e| fail(e.to_string()))?;
    s.launch().map_err(|e| fail(e.to_string()))?;
    let got = s.result().map_err(|e| fail(e.to_string()))?;
    scan_cpu::check(tv.op, Kind::Inclusive, data, &got, s.depth()).map_err(fail)?;
    drop(got);
    // The reference on the device, once: n elements, or exact sums and bounds (16n bytes).
    let mut check = match DeviceCheck::for_scan(backend, tv.op, Kind::Inclusive, data, s.depth()) {
        Ok(c) => c,
        Err(e) => {
            let bytes = reference_bytes(T::ELEM, tv.op, n);
            println!("scan/{id}/{n}: skipped (the reference on the device, {bytes} bytes, does not fit: {e})");
            return Ok(());
        }
    };
    common::bench_scan_checked(group, backend, &id, n, &mut s, &mut check).map_err(|why| {
        println!("scan/{id}/{n}: FAILED ({why})");
        why
    })
}

/// The reduction row `tv`, checked once before timing, then every launch of every sample:
/// `iters` launches back to back between the events, each into its own result slot
/// (`Reduction::launch_into`: its partials or result words), every answer read back after
/// the batch and compared with the answer computed once (`verify::Expected`: the exact float
/// sum and its bound, or the exact value).
fn bench_one<T: Value>(
    group: &mut criterion::BenchmarkGroup<'_, criterion::measurement::WallTime>,
    backend: &Backend,
    tv: reduce_scan::registry::Instance<T>,
    input: &reduce_scan::DeviceBuffer<T>,
    data: &[T],
    block: u32,
) -> Result<(), String> {
    let n = data.len();
    let id = tv.id();
    let fail = |why: String| {
        println!("reduce/{id}/{n}: FAILED, not benchmarked ({why})");
        why
    };
    let mut r = Reduction::of(backend, tv, input, n, block).map_err(|e| fail(e.to_string()))?;
    let got = r.launch().and_then(|_| r.result()).map_err(|e| fail(e.to_string()))?;
    let expected = Expected::of(tv.op, data, r.depth());
    expected.check(got).map_err(fail)?;
    let (mut sample, mut wrong) = (0u64, None);
    let stop = |e: reduce_scan::Error| -> ! { panic!("reduce/{id}/{n}: {e}") };
    group.bench_function(criterion::BenchmarkId::new(&id, n), |b| {
        b.iter_custom(|iters| {
            sample += 1;
            let iters = iters as usize;
            let mut slots = r.alloc_slots(iters).unwrap_or_else(|e| stop(e));
            let us = backend
                .time(&mut || (0..iters).try_for_each(|i| r.launch_into(&mut slots, i)))
                .unwrap_or_else(|e| stop(e));
            let answers = r.slot_answers(&slots, iters).unwrap_or_else(|e| stop(e));
            if let Err(why) = expected.first_wrong(&answers) {
                wrong.get_or_insert(format!("sample {sample}, {why}"));
            }
            std::time::Duration::from_secs_f64(us * 1e-6)
        })
    });
    wrong.map_or(Ok(()), |why| {
        println!("reduce/{id}/{n}: FAILED ({why})");
        Err(why)
    })
}
