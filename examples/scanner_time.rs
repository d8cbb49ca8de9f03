//! How long the library's scan takes on the GPU: `Scanner::<i32, Sum>::inclusive` as a caller
//! runs it (the plan's choice for this GPU and size, `host/src/scan/plan_by_device.csv`), each
//! call's `enqueue` timed alone between two CUDA events, as `reduce --op scan --variant V`
//! times the variant's kernel. `scripts/gpu/scanner_vs_cli.sh` runs both in alternation, to
//! check that the library costs no more than the kernel it runs (issue #37: within 1 %).
//!
//! ```text
//! cargo run --release --example scanner_time -- [--calls N] [--rounds R] N …
//! ```
//!
//! Defaults: 30 timed calls per row, 1 round, sizes 10^8 and 2^28. One CSV row per (round,
//! size) on stdout: `round,n,variant,device_us_median,device_us_min`. Every call's output (the
//! first, untimed, which also makes the storage, and each timed one) is compared element by
//! element with the CPU's scan on the device, outside the events, as the CLI checks its runs.
//! On a machine without a GPU it runs on the emulator (figures meaningless).

use std::process::ExitCode;

use reduce_scan::scan::by_device::choose_on;
use reduce_scan::scan::{Kind, cpu};
use reduce_scan::types::Op;
use reduce_scan::verify::DeviceCheck;
use reduce_scan::{Backend, Scanner, Sum};

/// What the command line asks for.
struct Args {
    calls: usize,
    rounds: usize,
    sizes: Vec<usize>,
}

fn parse(mut argv: impl Iterator<Item = String>) -> Result<Args, String> {
    let mut a = Args { calls: 30, rounds: 1, sizes: Vec::new() };
    let number = |flag: &str, v: Option<String>| -> Result<usize, String> {
        let v = v.ok_or(format!("{flag} needs a number"))?;
        v.parse::<usize>().ok().filter(|&x| x > 0).ok_or(format!("{flag} {v}: a positive whole number is allowed"))
    };
    while let Some(arg) = argv.next() {
        match arg.as_str() {
            "--calls" => a.calls = number("--calls", argv.next())?,
            "--rounds" => a.rounds = number("--rounds", argv.next())?,
            k => a.sizes.push(
                k.parse::<usize>()
                    .ok()
                    .filter(|&n| (1..=u32::MAX as usize).contains(&n))
                    .ok_or(format!("`{k}`: a size is a whole number of elements in 1..={}", u32::MAX))?,
            ),
        }
    }
    if a.sizes.is_empty() {
        a.sizes = vec![100_000_000, 1 << 28];
    }
    Ok(a)
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// One row: an untimed call, then `calls` calls each timed alone; after each call, outside its
/// events, the device check of its output against the CPU's scan (`verify::DeviceCheck`), as
/// the CLI checks each of its timed runs (so that both leave the GPU's caches alike between
/// runs: the check reads the output, and writes nothing back but a counter).
fn row(backend: &Backend, host: &[i32], calls: usize) -> Result<String, String> {
    let err = |e: reduce_scan::Error| e.to_string();
    let n = host.len();
    let input = backend.upload(host).map_err(err)?;
    let mut output = backend.alloc::<i32>(n).map_err(err)?;
    let mut check = DeviceCheck::<i32>::exact(backend, &cpu::inclusive_scan(host)).map_err(err)?;
    check.start_batch(backend, calls + 1).map_err(err)?;
    let mut scanner = Scanner::<i32, Sum>::new(backend);
    scanner.enqueue(Kind::Inclusive, &input, 0..n, &mut output).map_err(err)?;
    check.enqueue(backend, &output, 0).map_err(err)?;
    let mut device = Vec::with_capacity(calls);
    for call in 1..=calls {
        device.push(backend.time(&mut || scanner.enqueue(Kind::Inclusive, &input, 0..n, &mut output)).map_err(err)?);
        check.enqueue(backend, &output, call).map_err(err)?;
    }
    if let Some((call, wrong)) = check.counts(backend).map_err(err)?.iter().enumerate().find(|&(_, &c)| c > 0) {
        return Err(format!("n = {n}: call {call} left {wrong} elements unlike the CPU's scan"));
    }
    let variant = choose_on::<i32>(Op::Sum, backend.info(), n).map_err(err)?.variant.name;
    let min = device.iter().copied().fold(f64::INFINITY, f64::min);
    Ok(format!("{n},{variant},{:.3},{min:.3}", median(device)))
}

fn main() -> ExitCode {
    let args = match parse(std::env::args().skip(1)) {
        Ok(a) => a,
        Err(e) => {
            eprintln!("scanner_time: {e}");
            return ExitCode::from(2);
        }
    };
    let backend = Backend::gpu().unwrap_or_else(|e| {
        eprintln!("scanner_time: no GPU ({e}); on the emulator, whose times say nothing about a GPU");
        Backend::emulator()
    });
    eprintln!("scanner_time on {}", backend.info().name);
    println!("round,n,variant,device_us_median,device_us_min");
    for round in 1..=args.rounds {
        for &n in &args.sizes {
            let host: Vec<i32> = (0..n).map(|i| ((i as u32).wrapping_mul(2_654_435_761) >> 20) as i32 - 2048).collect();
            match row(&backend, &host, args.calls) {
                Ok(line) => println!("{round},{line}"),
                Err(e) => {
                    eprintln!("scanner_time: {e}");
                    return ExitCode::FAILURE;
                }
            }
        }
    }
    ExitCode::SUCCESS
}
