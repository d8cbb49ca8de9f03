//! Criterion benches of the library's operations beyond the whole-buffer reduction, on the GPU,
//! timed with CUDA events:
//!
//! * `ops/{operation}/{type}/{n}` — argmin, argmax, dot, sum_of_squares, norm × the six types ×
//!   n ∈ {2^24, 2^26} (`reduce_scan::ops`), at the plan's block and grid (or `REDUCE_BENCH_BLOCK` on the resident grid);
//!   `Throughput::Bytes` the bytes the operation must read (two inputs for a dot product). The
//!   `iters` launches of a sample run back to back between two events, **each on an object of
//!   its own** (a pool of `ArgReducer`s or `Reducer`s, made and warmed outside the events), so
//!   that every launch's answer survives the batch: each is read after the events and checked
//!   against the answer computed once (`ops::Expectation`: exact, or the stated float bound).
//! * `segmented/{layout}/{type}/{fold}/{n}` — f32 segmented sums over 2^26 elements in 10, 10^3,
//!   10^5 and 10^6 segments of equal and power-law lengths, and the rows of 4096 × 4096 and
//!   65536 × 256 matrices (sum and argmax). Each launch is timed alone between its own events
//!   and checked after them on the device (`verify::DeviceCheck`: every segment's value within
//!   its bound, or every row's index exactly), as the scan benches do.
//!
//! A wrong answer fails the bench (`FAILED`, exit status 1) naming the id, the sample, the
//! launch, expected and actual. Without a GPU the benches print why and register nothing.

use criterion::BenchmarkId;
use criterion::measurement::WallTime;
use reduce_scan::backend::{Backend, DeviceBuffer};
use reduce_scan::input::{Pattern, typed};
use reduce_scan::ops::{Answer, Expectation, Operation};
use reduce_scan::reduce::one_pass::{DEFAULT_BLOCK, OnePass, Sizing};
use reduce_scan::reduce::segmented::Segments;
use reduce_scan::types::{Elem, Value};
use reduce_scan::verify::DeviceCheck;
use reduce_scan::{ArgReducer, Max, Min, Reducer, SegmentedReducer, Sum};

#[allow(dead_code)]
mod common;

const SIZES: [usize; 2] = [1 << 24, 1 << 26];

fn main() {
    let Some(backend) = common::gpu_or_skip("ops") else { return };
    let asked: Option<u32> = std::env::var("REDUCE_BENCH_BLOCK").ok().and_then(|s| s.parse().ok());
    let block = match asked.map(Sizing::block).transpose() {
        Ok(sizing) => sizing.unwrap_or(Sizing::Plan),
        Err(e) => {
            println!("REDUCE_BENCH_BLOCK: {e}");
            std::process::exit(2);
        }
    };
    println!("library operation benches on {}, {block:?}", backend.info());
    let mut c = common::criterion();
    let mut failures = 0;
    for n in SIZES {
        for op in Operation::ALL {
            for elem in Elem::ALL {
                let r = reduce_scan::with_elem!(elem, T => bench_op::<T>(&mut c, &backend, op, n, block));
                failures += r.is_err() as usize;
            }
        }
    }
    failures += segmented(&mut c, &backend);
    c.final_summary();
    if failures > 0 {
        println!("{failures} benchmark(s) failed their check or could not run");
        std::process::exit(1);
    }
}

/// One library object per launch of a batch.
enum One<'b, T: Value> {
    Min(ArgReducer<'b, T, Min>),
    Max(ArgReducer<'b, T, Max>),
    Sum(Box<Reducer<'b, T, Sum>>),
}

impl<'b, T: Value> One<'b, T> {
    fn new(backend: &'b Backend, op: Operation, block: Sizing) -> reduce_scan::Result<Self> {
        Ok(match op {
            Operation::ArgMin => One::Min(ArgReducer::with_sizing(backend, block)),
            Operation::ArgMax => One::Max(ArgReducer::with_sizing(backend, block)),
            _ => One::Sum(Box::new(Reducer::with_transform_sizing(backend, block))),
        })
    }

    fn enqueue(&mut self, op: Operation, a: &DeviceBuffer<T>, b: &DeviceBuffer<T>) -> reduce_scan::Result<()> {
        let n = a.len();
        match (self, op) {
            (One::Min(r), _) => r.enqueue(a, 0..n),
            (One::Max(r), _) => r.enqueue(a, 0..n),
            (One::Sum(r), Operation::Dot) => r.enqueue_dot(a, b, 0..n),
            (One::Sum(r), _) => r.enqueue_sum_of_squares(a, 0..n),
        }
    }

    fn answer(&self, op: Operation) -> reduce_scan::Result<Answer<T>> {
        Ok(match (self, op) {
            (One::Min(r), _) => Answer::Position(r.result()?),
            (One::Max(r), _) => Answer::Position(r.result()?),
            (One::Sum(r), Operation::Norm) => Answer::Norm(reduce_scan::reduce::transform::norm_of(r.result()?)),
            (One::Sum(r), _) => Answer::Value(r.result()?),
        })
    }
}

/// Grows the pool to `len` objects, each launched once (its storage made, outside any timing).
fn grow<'b, T: Value>(
    pool: &mut Vec<One<'b, T>>,
    len: usize,
    (backend, op, block): (&'b Backend, Operation, Sizing),
    (a, b): (&DeviceBuffer<T>, &DeviceBuffer<T>),
) -> reduce_scan::Result<()> {
    while pool.len() < len {
        let mut one = One::new(backend, op, block)?;
        one.enqueue(op, a, b)?;
        one.answer(op)?;
        pool.push(one);
    }
    Ok(())
}

/// `ops/{op}/{type}/{n}`: checked once before timing, then every launch of every sample.
fn bench_op<'b, T: Value>(
    c: &mut criterion::Criterion,
    backend: &'b Backend,
    op: Operation,
    n: usize,
    block: Sizing,
) -> Result<(), String> {
    let id = format!("{}/{}", op.name(), T::ELEM.name());
    let fail = |why: String| {
        println!("ops/{id}/{n}: FAILED, not benchmarked ({why})");
        why
    };
    let a = typed::<T>(n, 1, Pattern::Random);
    let b = typed::<T>(n, 2, Pattern::Random);
    let (da, db) =
        (backend.upload(&a).map_err(|e| fail(e.to_string()))?, backend.upload(&b).map_err(|e| fail(e.to_string()))?);
    let shape = OnePass::sized(backend, op.symbol(T::ELEM), block, reduce_scan::reduce::arg::items::<T>(), n)
        .map_err(|e| fail(e.to_string()))?;
    let expected = Expectation::of(op, &a, (op.inputs() == 2).then_some(&b[..]), shape.depth(n));
    drop((a, b));
    let mut pool: Vec<One<'b, T>> = Vec::new();
    grow(&mut pool, 1, (backend, op, block), (&da, &db)).map_err(|e| fail(e.to_string()))?;
    pool[0]
        .enqueue(op, &da, &db)
        .and_then(|()| pool[0].answer(op))
        .map_err(|e| fail(e.to_string()))
        .and_then(|got| expected.check(got).map_err(fail))?;
    let (mut sample, mut wrong) = (0u64, None);
    let stop = |e: reduce_scan::Error| -> ! { panic!("ops/{id}/{n}: {e}") };
    let mut group = common::group(c, "ops", op.bytes(n, T::ELEM) as u64, false);
    group.bench_function(BenchmarkId::new(&id, n), |bencher| {
        bencher.iter_custom(|iters| {
            sample += 1;
            let iters = iters as usize;
            grow(&mut pool, iters, (backend, op, block), (&da, &db)).unwrap_or_else(|e| stop(e));
            let us = backend
                .time(&mut || pool[..iters].iter_mut().try_for_each(|one| one.enqueue(op, &da, &db)))
                .unwrap_or_else(|e| stop(e));
            for (i, one) in pool[..iters].iter().enumerate() {
                if let Err(why) = one.answer(op).map_err(|e| e.to_string()).and_then(|got| expected.check(got)) {
                    wrong.get_or_insert(format!("sample {sample}, launch {i}: {why}"));
                    break;
                }
            }
            std::time::Duration::from_secs_f64(us * 1e-6)
        })
    });
    group.finish();
    wrong.map_or(Ok(()), |why| {
        println!("ops/{id}/{n}: FAILED ({why})");
        Err(why)
    })
}

/// A segmented sum (values checked) or argmax (indices checked) whose every launch the bench
/// checks on the device.
struct SegJob<'b> {
    segments: Segments,
    input: DeviceBuffer<f32>,
    values: DeviceBuffer<f32>,
    indices: DeviceBuffer<u32>,
    sum: SegmentedReducer<'b, f32, Sum>,
    max: SegmentedReducer<'b, f32, Max>,
    arg: bool,
}

impl SegJob<'_> {
    fn launch(&mut self) -> reduce_scan::Result<()> {
        if self.arg {
            self.max.enqueue_arg(&self.input, &self.segments, &mut self.values, &mut self.indices)
        } else {
            self.sum.enqueue(&self.input, &self.segments, &mut self.values)
        }
    }
}

/// The sums' check (per segment: the exact sum and its bound) or the argmaxes' (the indices).
struct SumsChecked<'a, 'b>(&'a mut SegJob<'b>);
struct IndicesChecked<'a, 'b>(&'a mut SegJob<'b>);

impl common::Checked for SumsChecked<'_, '_> {
    type Elem = f32;
    fn launch(&mut self) -> reduce_scan::Result<()> {
        self.0.launch()
    }
    fn output(&self) -> &DeviceBuffer<f32> {
        &self.0.values
    }
}

impl common::Checked for IndicesChecked<'_, '_> {
    type Elem = u32;
    fn launch(&mut self) -> reduce_scan::Result<()> {
        self.0.launch()
    }
    fn output(&self) -> &DeviceBuffer<u32> {
        &self.0.indices
    }
}

/// Power-law lengths summing to `n`.
fn power_law(n: usize, k: usize) -> Vec<u32> {
    let w: Vec<f64> = (0..k).map(|i| 1.0 / ((i + 1) as f64).powf(1.2)).collect();
    let total: f64 = w.iter().sum();
    let mut lens: Vec<u32> = w.iter().map(|x| (x / total * n as f64) as u32).collect();
    let short = n as u32 - lens.iter().sum::<u32>();
    lens[k / 2] += short; // the longest in the middle of the offsets, not first
    lens
}

/// The segmented benches; the number that failed.
fn segmented(c: &mut criterion::Criterion, backend: &Backend) -> usize {
    let n = 1usize << 26;
    let mut layouts: Vec<(String, Result<Segments, String>, bool)> = Vec::new();
    for k in [10usize, 1000, 100_000, 1_000_000] {
        let equal: Vec<u32> = (0..k).map(|s| ((s + 1) * n / k - s * n / k) as u32).collect();
        for (name, lens) in [("equal", equal), ("power", power_law(n, k))] {
            let mut offsets = vec![0u32];
            offsets.extend(lens.iter().scan(0u32, |at, l| {
                *at += l;
                Some(*at)
            }));
            let s = Segments::from_offsets(backend, &offsets).map_err(|e| e.to_string());
            layouts.push((format!("{name}_{k}"), s, false));
        }
    }
    for (r, cols) in [(4096usize, 4096usize), (65_536, 256)] {
        for arg in [false, true] {
            layouts.push((format!("rows_{r}x{cols}"), Segments::rows(r, cols).map_err(|e| e.to_string()), arg));
        }
    }
    let data = typed::<f32>(n, 3, Pattern::Random);
    let mut failed = 0;
    let mut group = common::group(c, "segmented", (n * 4) as u64, false);
    for (name, segments, arg) in layouts {
        let id = format!("{name}/f32/{}", if arg { "argmax" } else { "sum" });
        if let Err(why) = segments.and_then(|s| bench_segmented(&mut group, backend, &id, s, &data, arg)) {
            println!("segmented/{id}/{n}: FAILED ({why})");
            failed += 1;
        }
    }
    group.finish();
    failed
}

/// One segmented layout: the reference once, then every launch checked on the device.
fn bench_segmented(
    group: &mut criterion::BenchmarkGroup<'_, WallTime>,
    backend: &Backend,
    id: &str,
    segments: Segments,
    data: &[f32],
    arg: bool,
) -> Result<(), String> {
    let count = segments.count();
    let e = |e: reduce_scan::Error| e.to_string();
    let input = backend.upload(&data[..segments.end()]).map_err(e)?;
    let (values, indices) = (backend.alloc::<f32>(count).map_err(e)?, backend.alloc::<u32>(count).map_err(e)?);
    let (sum, max) = (SegmentedReducer::new(backend), SegmentedReducer::new(backend));
    let per = 4;
    let (mut exact, mut bound, mut want) = (Vec::new(), Vec::new(), Vec::new());
    for s in 0..count {
        let (a, b) = segments.bounds(s);
        if arg {
            want.push(reduce_scan::cpu::arg_reference(false, &data[a..b]).map_or(u32::MAX, |(_, i)| i as u32));
        } else {
            let (x, abs) = reduce_scan::cpu::exact_sum(&data[a..b]);
            exact.push(x);
            bound.push(reduce_scan::cpu::float_sum_bound(
                f32::UNIT_ROUNDOFF,
                segments.depth(s, DEFAULT_BLOCK, per),
                abs,
            ));
        }
    }
    let mut job = SegJob { segments, input, values, indices, sum, max, arg };
    job.launch().map_err(e)?;
    let n = data.len();
    if arg {
        let mut check = DeviceCheck::<u32>::exact(backend, &want).map_err(e)?;
        common::bench_scan_checked(group, backend, id, n, &mut IndicesChecked(&mut job), &mut check)
    } else {
        let mut check = DeviceCheck::<f32>::within(backend, &exact, &bound).map_err(e)?;
        common::bench_scan_checked(group, backend, id, n, &mut SumsChecked(&mut job), &mut check)
    }
}
