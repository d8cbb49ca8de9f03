//! Criterion benches of the typed instantiations of the generic variants on the GPU, timed
//! with CUDA events as `benches/reduce.rs` times the classic ones.
//!
//! Ids are `reduce/{variant}/{type}/{op}/{n}` (`reduce/vector_loads/f64/max/16777216`) for
//! every generic variant × i32/u32/i64/u64/f32/f64 × sum/min/max, and
//! `scan/lookback/{type}/{op}/{n}` for the typed inclusive look-back scan, n ∈ {2^24, 2^26};
//! `Throughput::Bytes(n × element size)`, so 64-bit types count twice the bytes per element.
//! Every variant is checked once before timing (float sums within the stated bound) and the
//! last launch of every sample after it. Block: 512, or `REDUCE_BENCH_BLOCK`. Without a GPU
//! the benches print why and register nothing.

use host::backend::Backend;
use host::input::{Pattern, typed};
use host::reduce::typed::{TypedReduction, Value, cpu};
use host::registry::Elem;
use host::registry::typed::{TypedVariant, all};
use host::scan::Kind;
use host::scan::typed::{TypedScan, all as all_scans, cpu as scan_cpu};

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
            let ok = match elem {
                Elem::I32 => bench_type::<i32>(&mut c, &backend, n, block),
                Elem::U32 => bench_type::<u32>(&mut c, &backend, n, block),
                Elem::I64 => bench_type::<i64>(&mut c, &backend, n, block),
                Elem::U64 => bench_type::<u64>(&mut c, &backend, n, block),
                Elem::F32 => bench_type::<f32>(&mut c, &backend, n, block),
                Elem::F64 => bench_type::<f64>(&mut c, &backend, n, block),
            };
            failures += ok.iter().filter(|r| r.is_err()).count();
        }
    }
    c.final_summary();
    if failures > 0 {
        println!("{failures} benchmark(s) failed their check or could not run");
        std::process::exit(1);
    }
}

/// Every typed instantiation of `T` at `n`; one `Err` per instantiation that failed.
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
    for tv in all().filter(|t| t.elem == T::ELEM) {
        results.push(bench_one::<T>(&mut group, backend, tv, &input, &data, block));
    }
    group.finish();
    // A scan reads and writes every element: twice the bytes of a reduction.
    let mut group = common::group(c, "scan", (2 * n * T::ELEM.size()) as u64, false);
    for tv in all_scans().filter(|t| t.elem == T::ELEM) {
        results.push(bench_scan::<T>(&mut group, backend, tv, &input, &data));
    }
    group.finish();
    results
}

/// The typed inclusive scan `tv`, checked element by element once before timing and after the
/// last launch of every sample (float sums within `scan::typed::cpu::check`'s bound).
fn bench_scan<T: Value>(
    group: &mut criterion::BenchmarkGroup<'_, criterion::measurement::WallTime>,
    backend: &Backend,
    tv: &'static host::scan::typed::TypedScanVariant,
    input: &host::DeviceBuffer<T>,
    data: &[T],
) -> Result<(), String> {
    let n = data.len();
    let id = format!("lookback/{}/{}", T::ELEM.name(), tv.op.name());
    let fail = |why: String| {
        println!("scan/{id}/{n}: FAILED, not benchmarked ({why})");
        why
    };
    let mut output = backend.alloc::<T>(n).map_err(|e| fail(e.to_string()))?;
    let s = TypedScan::new(backend, tv, Kind::Inclusive, input, &mut output, n).map_err(|e| fail(e.to_string()))?;
    let depth = s.depth();
    let s = std::cell::RefCell::new(s);
    let check = || {
        let got = s.borrow().result().map_err(|e| e.to_string())?;
        scan_cpu::check(tv.op, Kind::Inclusive, data, &got, depth)
    };
    s.borrow_mut().launch().map_err(|e| fail(e.to_string()))?;
    check().map_err(fail)?;
    common::bench_launches(group, backend, &id, n, || s.borrow_mut().launch(), check);
    Ok(())
}

fn bench_one<T: Value>(
    group: &mut criterion::BenchmarkGroup<'_, criterion::measurement::WallTime>,
    backend: &Backend,
    tv: &'static TypedVariant,
    input: &host::DeviceBuffer<T>,
    data: &[T],
    block: u32,
) -> Result<(), String> {
    let n = data.len();
    let id = tv.id();
    let prepared = TypedReduction::new(backend, tv, input, n, block)
        .and_then(|mut r| r.launch().and_then(|_| r.result()).map(|got| (r, got)));
    let (r, got) = prepared.map_err(|e| {
        println!("reduce/{id}/{n}: FAILED, not benchmarked ({e})");
        e.to_string()
    })?;
    let depth = r.depth();
    cpu::check(tv.op, data, got, depth).map_err(|why| {
        println!("reduce/{id}/{n}: FAILED, not benchmarked ({why})");
        why
    })?;
    let r = std::cell::RefCell::new(r);
    common::bench_launches(
        group,
        backend,
        &id,
        n,
        || r.borrow_mut().launch(),
        || {
            let got = r.borrow().result().map_err(|e| e.to_string())?;
            cpu::check(tv.op, data, got, depth)
        },
    );
    Ok(())
}
