//! Criterion benches of every registered reduction variant on the GPU, timed with CUDA
//! events, and of CUB's `DeviceReduce::Sum` in the same run where nvcc can build it.
//!
//! Ids are `reduce/{variant}/{n}`, `reduce/sum/{n}` (the full reduction `host::sum` picks for
//! that size: variant and block from `sum::choose`) and `reduce/cub/{n}` (CUB's
//! `DeviceReduce::Sum`), n ∈ {2^20, 2^24, 2^26, 2^28};
//! criterion reports the time per launch and, from `Throughput::Bytes(4n)`, the bytes of
//! input read per second. Filter as usual: `.gpu/benches/reduce-* --bench 'reduce/single_pass/'`.
//!
//! **What is timed.** `iter_custom`: a CUDA event, `iters` launches back to back on the
//! GPU's stream with no synchronisation between them, a second event, one wait; the time
//! between the events (device time, launch gaps included). Input generation, upload and
//! allocation of partials and scratch happen once, before timing. Results: every variant is
//! checked before timing; `reduce/sum` and `reduce/cub` check **every launch** of every
//! sample (each launch writes its own result words, read back after the events); the other
//! variants check the last launch of every sample (in-place ones only before timing). Partial sums are not added on the host inside the timed loop
//! (as in the CLI: the reported time is the kernels'); single-pass variants finish on the
//! device in every launch. In-place variants are reset (their scratch copy of the input
//! restored) only before the check: inside the timed loop they re-run on their own, already
//! reduced scratch. The work is the same — these kernels' loads, adds, stores and branches
//! do not depend on the values — only the sums are meaningless.
//!
//! **Bounded time.** Flat sampling, 20 samples, 0.3 s warm-up and 1 s of measurement per
//! benchmark; a variant whose single launch takes over 20 ms gets 10 samples, and one
//! predicted (from the previous size) to take over 250 ms per launch is skipped with a line
//! saying so. Every variant × 4 sizes takes a few minutes on an H100/H200.
//!
//! Block size: 512 (the CLI's default and the book's), or `REDUCE_BENCH_BLOCK`.
//! Without a GPU the benches print why and register nothing.

use std::collections::HashMap;

use host::backend::Backend;
use host::cub::CubOp;
use host::input::Input;
use host::reduce::Reduction;
use host::registry::{self, Family, Op, Variant};

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
    (input, n, block): (&'a host::DeviceBuffer<i32>, usize, u32),
    (sum, squares): (i32, i32),
    last_us: &mut HashMap<&'static str, (usize, f64)>,
) -> usize {
    let mut failures = 0;
    // Prepare and check every variant of the family at this size, outside timing.
    let mut ready: Vec<(&'static Variant, Reduction<'_>, f64)> = Vec::new();
    for v in registry::all().filter(|v| v.family == family) {
        let id = format!("reduce/{}/{n}", v.name);
        if let Some(&(m, us)) = last_us.get(v.name) {
            let predicted = us * (n as f64 / m as f64);
            if predicted > common::SKIP_US {
                println!("{id}: skipped (one launch would take about {:.0} ms)", predicted / 1e3);
                last_us.insert(v.name, (n, predicted));
                continue;
            }
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
        // An in-place kernel's back-to-back launches reduce what the previous one left:
        // its result is checked before timing only (prepare); the others after every sample.
        let expected = if v.op == Op::SumOfSquares { squares } else { sum };
        let checked = !v.in_place();
        let r = std::cell::RefCell::new(r);
        common::bench_launches(
            &mut group,
            backend,
            v.name,
            n,
            || r.borrow_mut().launch(),
            || if checked { result_is(&r.borrow(), expected) } else { Ok(()) },
        );
    }
    group.finish();
    failures
}

/// `reduce/sum/{n}`; returns how many failed (0 or 1).
fn bench_sum(
    c: &mut criterion::Criterion,
    backend: &Backend,
    input: &host::DeviceBuffer<i32>,
    n: usize,
    sum: i32,
) -> usize {
    let mut failures = 0;
    // `reduce/sum/{n}`: the full reduction `host::sum` runs at this size (the variant and
    // block `sum::choose` picks), the one to hold against CUB. Every launch's sum is checked.
    match host::sum::choose(n, backend.info().compute_capability)
        .map_err(|e| Skip::Failed(e.to_string()))
        .and_then(|ch| prepare(backend, ch.variant, input, n, ch.block, sum).map(|_| ch))
    {
        Ok(ch) => {
            let mut group = common::group(c, "reduce", n as u64 * 4, false);
            if let Err(why) = bench_sum_every_launch_checked(&mut group, backend, ch, input, n, sum) {
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

/// `reduce/sum/{n}` with every launch checked: each launch of the batch gets its own pair of
/// zeroed result words (allocated before the timing), so that all `iters` sums survive the
/// batch and are read back after it. Only for a finish that leaves the answer in result words
/// on the device (the atomic finish `host::sum` uses); any other is reported, not timed.
fn bench_sum_every_launch_checked(
    group: &mut criterion::BenchmarkGroup<'_, criterion::measurement::WallTime>,
    backend: &Backend,
    ch: host::sum::Choice,
    input: &host::DeviceBuffer<i32>,
    n: usize,
    expected: i32,
) -> Result<(), String> {
    let needs = ch.variant.finish.needs(1, ch.block);
    if needs.result_words != 2 || needs.partials != 0 {
        return Err(format!("{} does not finish in two result words; no per-launch check", ch.variant.name));
    }
    let g =
        host::reduce::plan::geometry(backend, ch.variant, n, ch.block, ch.blocks_per_sm).map_err(|e| e.to_string())?;
    let cfg = host::backend::LaunchConfig { grid: g.grid, block: g.block, shared_bytes: g.dynamic_shared };
    let mut wrong: Option<String> = None;
    group.bench_function(criterion::BenchmarkId::new("sum", n), |b| {
        b.iter_custom(|iters| {
            let mut words = backend.alloc::<i32>(2 * iters as usize).expect("result words for the batch");
            let base = words.as_mut_ptr();
            let us = backend
                .time(&mut || {
                    (0..iters as usize).try_for_each(|i| {
                        let p = host::reduce::plan::Pointers {
                            input: input.as_ptr(),
                            scratch: std::ptr::null_mut(),
                            partials: std::ptr::null_mut(),
                            ticket: std::ptr::null_mut(),
                            // `wrapping_add`: a device address; the buffer holds 2 × iters words.
                            result: base.wrapping_add(2 * i),
                            clocks: std::ptr::null_mut(),
                        };
                        // SAFETY: `cfg` is the chosen variant's geometry for n; `input` holds n
                        // elements; each launch gets its own zeroed pair of result words, so epoch 0
                        // (the word the launch adds into) starts at 0, as the kernel requires.
                        unsafe { ch.variant.finish.launch(backend, cfg, p, n as u32, 0) }
                    })
                })
                .unwrap_or_else(|e| panic!("reduce/sum/{n}: {e}"));
            let sums = backend.download(&words).expect("reading the batch's sums");
            if let Some(i) = sums.iter().step_by(2).position(|&s| s != expected) {
                wrong.get_or_insert(format!(
                    "launch {i} of a batch of {iters}: expected {expected}, got {}",
                    sums[2 * i]
                ));
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
    input: &'a host::backend::DeviceBuffer<i32>,
    n: usize,
    block: u32,
    expected: i32,
) -> Result<(Reduction<'a>, f64), Skip> {
    let mut r = match Reduction::new(backend, v, input, n, block) {
        Ok(r) => r,
        Err(e @ (host::Error::Invalid(_) | host::Error::Unsupported(_))) => {
            return Err(Skip::Unsupported(e.to_string()));
        }
        Err(e) => return Err(Skip::Failed(e.to_string())),
    };
    let failed = |e: host::Error| Skip::Failed(e.to_string());
    r.reset().and_then(|_| r.launch()).and_then(|_| backend.synchronize()).map_err(failed)?;
    r.reset().map_err(failed)?;
    let us = backend.time(&mut || r.launch()).map_err(failed)?;
    let got = r.result().map_err(failed)?;
    if got != expected {
        return Err(Skip::Failed(format!("expected {expected}, got {got}")));
    }
    Ok((r, us))
}
