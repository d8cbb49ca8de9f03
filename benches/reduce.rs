//! Criterion benches of every registered reduction variant on the GPU, timed with CUDA
//! events, and of CUB's `DeviceReduce::Sum` in the same run where nvcc can build it.
//!
//! Ids are `reduce/{variant}/{n}`, `reduce/sum/{n}` (the full reduction `reduce_scan::sum` picks for
//! that size: variant and block from `sum::choose`) and `reduce/cub/{n}` (CUB's
//! `DeviceReduce::Sum`), n ∈ {2^20, 2^24, 2^26, 2^28};
//! criterion reports the time per launch and, from `Throughput::Bytes(4n)`, the bytes of
//! input read per second. Filter as usual: `.gpu/benches/reduce-* --bench 'reduce/single_pass/'`.
//!
//! **What is timed.** `iter_custom`: a CUDA event, `iters` launches back to back on the
//! GPU's stream with no synchronisation between them, a second event, one wait; the time
//! between the events (device time, launch gaps included). Input generation, upload and
//! allocation happen once, before timing. Results: every variant is checked before timing,
//! and **every launch of every sample** after it: each launch of a batch writes its own
//! partials and result words (allocated and zeroed before the events, read back and checked
//! after them: partials added as the host adds them, untimed, as in the CLI), and
//! `reduce/cub` checks every call's sum the same way. **In-place variants** (which overwrite
//! their input) cannot run back to back on the same data: each launch of their samples runs on
//! a freshly restored scratch copy (the copy outside the events), is timed alone between its
//! own events, and is checked before the next; their sample time is the sum of those launch
//! times, so their figures are per launch, not back to back.
//!
//! **Bounded time.** Flat sampling, 20 samples, 0.3 s warm-up and 1 s of measurement per
//! benchmark; a variant whose single launch takes over 20 ms gets 10 samples, and one
//! predicted (from the previous size) to take over 250 ms per launch is skipped with a line
//! saying so. Every variant × 4 sizes takes a few minutes on an H100/H200.
//!
//! Block size: 512 (the CLI's default and the book's), or `REDUCE_BENCH_BLOCK`.
//! Without a GPU the benches print why and register nothing.

use std::collections::HashMap;

use reduce_scan::backend::Backend;
use reduce_scan::input::Input;
use reduce_scan::reduce::Reduction;
use reduce_scan::registry::{self, Elem, Family, Op, Variant};
use reduce_scan_cli::cub::CubOp;

// The scans' per-launch device check (`bench_scan_checked`) goes unused here: reductions
// check every launch with their own result words (`bench_every_launch_checked`, `bench_in_place`).
#[allow(dead_code)]
mod common;

const SIZES: [usize; 4] = [1 << 20, 1 << 24, 1 << 26, 1 << 28];

fn main() {
    let Some(backend) = common::gpu_or_skip("reduce") else { return };
    let block: u32 = match std::env::var("REDUCE_BENCH_BLOCK") {
        Ok(s) => match s.parse() {
            Ok(b) => b,
            Err(_) => {
                eprintln!("REDUCE_BENCH_BLOCK={s}: not a number");
                std::process::exit(2);
            }
        },
        Err(_) => 512,
    };
    println!("reduce benches on {}, block {block}", backend.info());
    let mut c = common::criterion();

    let mut cub_session = common::cub_session("reduce");

    // Launch time of each variant at the previous size, to predict the next one.
    let mut last_us: HashMap<&'static str, (usize, f64)> = HashMap::new();
    let mut failures = 0;
    for n in SIZES {
        if (n as u64) * 4 * 3 > backend.info().memory_bytes {
            println!("reduce/*/{n}: skipped (input, scratch copy and CUB's copy need more than the device's memory)");
            continue;
        }
        let data = Input::small(n, 1).data;
        let sum = data.iter().fold(0i32, |a, &x| a.wrapping_add(x));
        let squares = data.iter().fold(0i32, |a, &x| a.wrapping_add(x.wrapping_mul(x)));
        let input = match backend.upload(&data) {
            Ok(b) => b,
            Err(e) => {
                println!("reduce/*/{n}: skipped (upload failed: {e})");
                failures += 1;
                continue;
            }
        };
        drop(data);

        for family in Family::ALL {
            failures += bench_family(&mut c, &backend, family, (&input, n, block), (sum, squares), &mut last_us);
        }
        failures += bench_sum(&mut c, &backend, &input, n, sum);

        if !common::bench_cub(&mut c, "reduce", &mut cub_session, CubOp::ReduceSum, n, n as u64 * 4) {
            failures += 1;
        }
    }
    c.final_summary();
    if failures > 0 {
        println!("{failures} benchmark(s) failed their check or could not run");
        std::process::exit(1);
    }
}

/// Prepares, checks and times every variant of `family` on the first `n` elements of `input`
/// with `block` threads (against the sum, or the sum of squares), skipping those that
/// `last_us` (each variant's launch time at the previous size) predicts to be too slow.
/// Returns how many failed.
fn bench_family<'a>(
    c: &mut criterion::Criterion,
    backend: &'a Backend,
    family: Family,
    (input, n, block): (&'a reduce_scan::DeviceBuffer<i32>, usize, u32),
    (sum, squares): (i32, i32),
    last_us: &mut HashMap<&'static str, (usize, f64)>,
) -> usize {
    let mut failures = 0;
    // Prepare and check every variant of the family at this size, outside timing.
    let mut ready: Vec<(&'static Variant, Reduction<'_>, f64)> = Vec::new();
    for v in registry::all().filter(|v| v.family == family) {
        let id = format!("reduce/{}/{n}", v.name);
        if common::predicted_too_slow(last_us, v.name, n, &id, "launch") {
            continue;
        }
        let expected = if v.op == Op::SumOfSquares { squares } else { sum };
        match prepare(backend, v, input, n, block, expected) {
            Ok((r, us)) => {
                last_us.insert(v.name, (n, us));
                ready.push((v, r, us));
            }
            Err(Skip::Unsupported(why)) => println!("{id}: skipped ({why})"),
            Err(Skip::Failed(why)) => {
                println!("{id}: FAILED, not benchmarked ({why})");
                failures += 1;
            }
        }
    }
    if ready.is_empty() {
        return failures;
    }
    let slow = ready.iter().any(|(_, _, us)| *us > common::SLOW_US);
    let mut group = common::group(c, "reduce", n as u64 * 4, slow);
    for (v, r, _) in &mut ready {
        // Every launch of every sample checked: back to back with per-launch result buffers,
        // or (in-place kernels) one restored launch at a time.
        let expected = if v.op == Op::SumOfSquares { squares } else { sum };
        let outcome = if v.in_place() {
            bench_in_place(&mut group, backend, v.name, r, n, expected)
        } else {
            bench_every_launch_checked(&mut group, backend, (v.name, v, block, None), input, n, expected)
        };
        if let Err(why) = outcome {
            println!("reduce/{}/{n}: FAILED ({why})", v.name);
            failures += 1;
        }
    }
    group.finish();
    failures
}

/// `reduce/sum/{n}`; returns how many failed (0 or 1).
fn bench_sum(
    c: &mut criterion::Criterion,
    backend: &Backend,
    input: &reduce_scan::DeviceBuffer<i32>,
    n: usize,
    sum: i32,
) -> usize {
    let mut failures = 0;
    // `reduce/sum/{n}`: the full reduction `reduce_scan::sum` runs at this size (the variant and
    // block `sum::choose` picks), the one to hold against CUB. Every launch's sum is checked.
    match reduce_scan::sum::choose(Elem::I32, Op::Sum, n, backend.info().compute_capability)
        .map_err(|e| Skip::Failed(e.to_string()))
        .and_then(|ch| prepare(backend, ch.variant, input, n, ch.block, sum).map(|_| ch))
    {
        Ok(ch) => {
            let mut group = common::group(c, "reduce", n as u64 * 4, false);
            let shape = ("sum", ch.variant, ch.block, ch.blocks_per_sm);
            if let Err(why) = bench_every_launch_checked(&mut group, backend, shape, input, n, sum) {
                println!("reduce/sum/{n}: FAILED ({why})");
                failures += 1;
            }
            group.finish();
        }
        Err(Skip::Unsupported(why) | Skip::Failed(why)) => {
            println!("reduce/sum/{n}: FAILED, not benchmarked ({why})");
            failures += 1;
        }
    }

    failures
}

/// Per-launch buffers for a batch of `iters` launches of one variant: each launch writes its own
/// partials and result words (zeroed), so that every launch's answer survives the batch and is
/// read back after it; the last-block ticket (reset by the kernel) and the clock stamps (not
/// checked) are shared.
struct Slots {
    needs: reduce_scan::reduce::plan::Needs,
    partials: reduce_scan::DeviceBuffer<i32>,
    result: reduce_scan::DeviceBuffer<i32>,
    ticket: reduce_scan::DeviceBuffer<u32>,
    clocks: reduce_scan::DeviceBuffer<u64>,
}

impl Slots {
    fn new(
        backend: &Backend,
        needs: reduce_scan::reduce::plan::Needs,
        grid: u32,
        iters: usize,
    ) -> reduce_scan::Result<Self> {
        Ok(Self {
            needs,
            partials: backend.alloc::<i32>((needs.partials as usize * iters).max(1))?,
            result: backend.alloc::<i32>((needs.result_words * iters).max(1))?,
            ticket: backend.alloc::<u32>(1)?,
            clocks: backend.alloc::<u64>(if needs.clocks {
                2 * needs.partials.max(grid as u64) as usize
            } else {
                1
            })?,
        })
    }

    /// The buffers of launch `i` (`wrapping_add`: device addresses, within the allocations).
    fn pointers(&mut self, input: *const i32, i: usize) -> reduce_scan::reduce::plan::Pointers {
        let null = |needed: bool, p: *mut i32| if needed { p } else { std::ptr::null_mut() };
        reduce_scan::reduce::plan::Pointers {
            input,
            scratch: std::ptr::null_mut(),
            partials: null(
                self.needs.partials > 0,
                self.partials.as_mut_ptr().wrapping_add(i * self.needs.partials as usize),
            ),
            ticket: if self.needs.ticket { self.ticket.as_mut_ptr() } else { std::ptr::null_mut() },
            result: null(
                self.needs.result_words > 0,
                self.result.as_mut_ptr().wrapping_add(i * self.needs.result_words),
            ),
            clocks: if self.needs.clocks { self.clocks.as_mut_ptr() } else { std::ptr::null_mut() },
        }
    }

    /// The answer of every launch of the batch: its partials added as the host adds them
    /// (wrapping, in order), or its result word (epoch 0 of the atomic finish's pair).
    fn answers(&self, backend: &Backend, iters: usize) -> reduce_scan::Result<Vec<i32>> {
        let (per, adds, words) = (self.needs.partials as usize, self.needs.host_adds as usize, self.needs.result_words);
        if adds > 0 {
            let partials = backend.download(&self.partials)?;
            Ok((0..iters)
                .map(|i| partials[i * per..i * per + adds].iter().fold(0i32, |a, &p| a.wrapping_add(p)))
                .collect())
        } else {
            let result = backend.download(&self.result)?;
            Ok((0..iters).map(|i| result[i * words]).collect())
        }
    }
}

/// `reduce/{name}/{n}` with every launch of every sample checked: `iters` launches back to back
/// between the events, each into its own [`Slots`], every answer compared with `expected`
/// after the batch. For the variants that read their input (in-place ones: [`bench_in_place`]).
fn bench_every_launch_checked(
    group: &mut criterion::BenchmarkGroup<'_, criterion::measurement::WallTime>,
    backend: &Backend,
    (name, v, block, blocks_per_sm): (&str, &'static Variant, u32, Option<u32>),
    input: &reduce_scan::DeviceBuffer<i32>,
    n: usize,
    expected: i32,
) -> Result<(), String> {
    let g = reduce_scan::reduce::geometry(backend, v, n, block, blocks_per_sm).map_err(|e| e.to_string())?;
    let cfg = reduce_scan::backend::LaunchConfig { grid: g.grid, block: g.block, shared_bytes: g.dynamic_shared };
    let needs = v.finish.needs(g.grid as u64, g.block);
    let mut wrong: Option<String> = None;
    group.bench_function(criterion::BenchmarkId::new(name, n), |b| {
        b.iter_custom(|iters| {
            let iters = iters as usize;
            let mut slots = Slots::new(backend, needs, g.grid, iters).expect("per-launch result buffers for the batch");
            let us = backend
                .time(&mut || {
                    (0..iters).try_for_each(|i| {
                        let p = slots.pointers(input.as_ptr(), i);
                        // SAFETY: `cfg` is the variant's geometry for n; `input` holds n elements;
                        // launch i has its own partials and zeroed result words of the sizes
                        // `needs` gives (epoch 0 adds into a zeroed word); the ticket starts at 0
                        // and the last-block kernel puts it back to 0.
                        unsafe { v.finish.launch(backend, cfg, p, n as u32, 0) }
                    })
                })
                .unwrap_or_else(|e| panic!("reduce/{name}/{n}: {e}"));
            let answers = slots.answers(backend, iters).expect("reading the batch's answers");
            if let Some(i) = answers.iter().position(|&s| s != expected) {
                wrong.get_or_insert(format!(
                    "launch {i} of a batch of {iters}: expected {expected}, got {}",
                    answers[i]
                ));
            }
            std::time::Duration::from_secs_f64(us * 1e-6)
        })
    });
    wrong.map_or(Ok(()), Err)
}

/// `reduce/{name}/{n}` for an in-place variant, every launch checked: its back-to-back launches
/// would reduce what the previous one left, so each launch of a sample runs on a freshly
/// restored scratch copy (the copy outside the events), is timed alone, and its sum is read
/// and checked before the next; the sample's time is the sum of the launches' times.
fn bench_in_place(
    group: &mut criterion::BenchmarkGroup<'_, criterion::measurement::WallTime>,
    backend: &Backend,
    name: &str,
    r: &mut Reduction<'_>,
    n: usize,
    expected: i32,
) -> Result<(), String> {
    let mut wrong: Option<String> = None;
    group.bench_function(criterion::BenchmarkId::new(name, n), |b| {
        b.iter_custom(|iters| {
            let mut us = 0.0;
            for i in 0..iters {
                r.reset().unwrap_or_else(|e| panic!("reduce/{name}/{n}: {e}"));
                us += backend.time(&mut || r.launch()).unwrap_or_else(|e| panic!("reduce/{name}/{n}: {e}"));
                if let Err(why) = result_is(r, expected) {
                    wrong.get_or_insert(format!("launch {i} of a batch of {iters}: {why}"));
                }
            }
            std::time::Duration::from_secs_f64(us * 1e-6)
        })
    });
    wrong.map_or(Ok(()), Err)
}

/// `Ok` when the reduction's last result is `expected`.
fn result_is(r: &Reduction<'_>, expected: i32) -> Result<(), String> {
    match r.result() {
        Ok(got) if got == expected => Ok(()),
        Ok(got) => Err(format!("expected {expected}, got {got}")),
        Err(e) => Err(e.to_string()),
    }
}

enum Skip {
    /// The variant cannot run here (block not allowed, compute capability too old…).
    Unsupported(String),
    /// It ran and failed, or returned a wrong sum.
    Failed(String),
}

/// Allocates the variant's buffers, runs it once untimed (module load, caches), then once
/// timed, and checks the sum. Returns the ready reduction and that launch's time (µs).
fn prepare<'a>(
    backend: &'a Backend,
    v: &'static Variant,
    input: &'a reduce_scan::backend::DeviceBuffer<i32>,
    n: usize,
    block: u32,
    expected: i32,
) -> Result<(Reduction<'a>, f64), Skip> {
    let mut r = match Reduction::new(backend, v, input, n, block) {
        Ok(r) => r,
        Err(e @ (reduce_scan::Error::Invalid(_) | reduce_scan::Error::Unsupported(_))) => {
            return Err(Skip::Unsupported(e.to_string()));
        }
        Err(e) => return Err(Skip::Failed(e.to_string())),
    };
    let failed = |e: reduce_scan::Error| Skip::Failed(e.to_string());
    r.reset().and_then(|_| r.launch()).and_then(|_| backend.synchronize()).map_err(failed)?;
    r.reset().map_err(failed)?;
    let us = backend.time(&mut || r.launch()).map_err(failed)?;
    let got = r.result().map_err(failed)?;
    if got != expected {
        return Err(Skip::Failed(format!("expected {expected}, got {got}")));
    }
    Ok((r, us))
}
