//! How long a user waits for a sum: the wall time of a loop of synchronous
//! `Reducer::<i32, Sum>::reduce` calls, next to the time to queue one (`enqueue`) and the GPU's
//! own time for the work (CUDA events), at each size.
//!
//! ```text
//! cargo run --release --example time_to_answer -- [--calls N] [--rounds R] [LOG2 …]
//! ```
//!
//! Defaults: 300 calls per row, 3 rounds, sizes 2^20 2^22 2^24 2^26 2^28. One CSV row per
//! (round, size) on stdout: `round,n,wall_us_median,wall_us_min,enqueue_us_median,device_us_median`.
//! Every call's answer is checked against the sum on the CPU. On a machine without a GPU it
//! runs on the emulator (the figures then say nothing about a GPU). CUB's side of the
//! comparison, `cub::DeviceReduce::Sum` then `cudaMemcpy` of its result, is `cub/wall.cu`;
//! `scripts/gpu/time_to_answer.sh` runs both in alternation.

use std::process::ExitCode;
use std::time::Instant;

use reduce_scan::{Backend, Reducer, Sum};

#[path = "common/timing_args.rs"]
mod timing_args;
use timing_args::median;

/// `[--calls N] [--rounds R] LOG2 …`: 300 calls, 3 rounds, 2^20 … 2^28 unless given.
fn parse(argv: impl Iterator<Item = String>) -> Result<timing_args::Args, String> {
    let exponent = |k: &str| {
        k.parse::<usize>()
            .ok()
            .filter(|k| (1..=30).contains(k))
            .ok_or(format!("`{k}`: sizes are powers of two given by their exponent, 1..=30 (20 for 2^20)"))
    };
    let mut a = timing_args::parse(argv, (300, 3), exponent)?;
    if a.sizes.is_empty() {
        a.sizes = vec![20, 22, 24, 26, 28];
    }
    Ok(a)
}

/// One row: `calls` synchronous sums of `data`, each checked, then the same number of enqueues
/// (each followed by an untimed `result`), then the GPU's time of one enqueue, median of 30.
fn row(
    backend: &Backend,
    data: &reduce_scan::DeviceBuffer<i32>,
    expected: i32,
    calls: usize,
) -> Result<String, String> {
    let err = |e: reduce_scan::Error| e.to_string();
    let mut sums = Reducer::<i32, Sum>::new(backend);
    let n = data.len();
    for _ in 0..20 {
        sums.reduce(data).map_err(err)?; // warm: storage, module, clocks
    }
    let mut wall = Vec::with_capacity(calls);
    for _ in 0..calls {
        let t = Instant::now();
        let got = sums.reduce(data).map_err(err)?;
        wall.push(t.elapsed().as_secs_f64() * 1e6);
        if got != expected {
            return Err(format!("n = {n}: the sum is {got}, expected {expected}"));
        }
    }
    let mut enqueue = Vec::with_capacity(calls);
    for _ in 0..calls {
        let t = Instant::now();
        sums.enqueue(data, 0..n).map_err(err)?;
        enqueue.push(t.elapsed().as_secs_f64() * 1e6);
        sums.result().map_err(err)?;
    }
    let mut device = Vec::with_capacity(30);
    for _ in 0..30 {
        device.push(backend.time(&mut || sums.enqueue(data, 0..n)).map_err(err)?);
    }
    let min = wall.iter().copied().fold(f64::INFINITY, f64::min);
    Ok(format!("{n},{:.2},{min:.2},{:.2},{:.2}", median(wall), median(enqueue), median(device)))
}

fn main() -> ExitCode {
    let args = match parse(std::env::args().skip(1)) {
        Ok(a) => a,
        Err(e) => {
            eprintln!("time_to_answer: {e}");
            return ExitCode::from(2);
        }
    };
    let backend = Backend::gpu().unwrap_or_else(|e| {
        eprintln!("time_to_answer: no GPU ({e}); on the emulator, whose times say nothing about a GPU");
        Backend::emulator()
    });
    eprintln!("time_to_answer on {}", backend.info().name);
    println!("round,n,wall_us_median,wall_us_min,enqueue_us_median,device_us_median");
    for round in 1..=args.rounds {
        for &k in &args.sizes {
            let n = 1usize << k;
            let host: Vec<i32> = (0..n).map(|i| (i as i32).wrapping_mul(-1_640_531_535) >> 20).collect();
            let expected = host.iter().fold(0i32, |a, &x| a.wrapping_add(x));
            let result =
                backend.upload(&host).map_err(|e| e.to_string()).and_then(|d| row(&backend, &d, expected, args.calls));
            match result {
                Ok(line) => println!("{round},{line}"),
                Err(e) => {
                    eprintln!("time_to_answer: {e}");
                    return ExitCode::FAILURE;
                }
            }
        }
    }
    ExitCode::SUCCESS
}
