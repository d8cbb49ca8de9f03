//! How much the library's scan costs over its kernel, on the GPU: `Scanner::<i32, Sum>::inclusive`
//! as a caller runs it (the plan's choice for this GPU and size, `host/src/scan/plan_by_device.csv`)
//! against the same kernel launched directly (`scan::Scan`, what `reduce --op scan --variant V`
//! times), in one process, call by call alternating (issue #37: the Scanner within 1 % of the
//! kernel's time).
//!
//! ```text
//! cargo run --release --example scanner_time -- [--calls N] [--rounds R] N …
//! ```
//!
//! Defaults: 30 timed calls of each per row, 1 round, sizes 10^8 and 2^28. One CSV row per
//! (round, size) on stdout: `round,n,variant,scanner_us_median,kernel_us_median,
//! scanner_over_kernel`. Each call is timed alone between CUDA events and its output compared
//! element by element with the CPU's scan on the device, outside the events. On a machine
//! without a GPU it runs on the emulator (figures meaningless).

use std::process::ExitCode;

use reduce_scan::scan::by_device::choose_on;
use reduce_scan::scan::{Kind, Scan, cpu};
use reduce_scan::types::Op;
use reduce_scan::verify::DeviceCheck;
use reduce_scan::{Backend, Scanner, Sum};

#[path = "common/timing_args.rs"]
mod timing_args;
use timing_args::median;

/// `[--calls N] [--rounds R] N …`: 30 calls, 1 round, 10^8 and 2^28 unless given.
fn parse(argv: impl Iterator<Item = String>) -> Result<timing_args::Args, String> {
    let whole = |k: &str| {
        k.parse::<usize>()
            .ok()
            .filter(|&n| (1..=u32::MAX as usize).contains(&n))
            .ok_or(format!("`{k}`: a size is a whole number of elements in 1..={}", u32::MAX))
    };
    let mut a = timing_args::parse(argv, (30, 1), whole)?;
    if a.sizes.is_empty() {
        a.sizes = vec![100_000_000, 1 << 28];
    }
    Ok(a)
}

/// One row: `Scanner::inclusive`'s enqueue and the plan's kernel launched directly
/// (`scan::Scan::of` on the same variant: what `reduce --op scan --variant V` times), after an
/// untimed call of each, then `calls` calls of each, alternating which goes first, each timed
/// alone between CUDA events and followed, outside its events, by the device check of its
/// output against the CPU's scan (`verify::DeviceCheck`). Both run in one process, on one
/// input, under the same load, so their ratio is the library's own cost.
fn row(backend: &Backend, host: &[i32], calls: usize) -> Result<String, String> {
    let err = |e: reduce_scan::Error| e.to_string();
    let n = host.len();
    let input = backend.upload(host).map_err(err)?;
    let mut output = backend.alloc::<i32>(n).map_err(err)?;
    let mut direct_output = backend.alloc::<i32>(n).map_err(err)?;
    let mut check = DeviceCheck::<i32>::exact(backend, &cpu::inclusive_scan(host)).map_err(err)?;
    check.start_batch(backend, 2 * (calls + 1)).map_err(err)?;
    let inst = choose_on::<i32>(Op::Sum, backend.info(), n).map_err(err)?;
    let mut direct = Scan::of(backend, inst, Kind::Inclusive, &input, &mut direct_output, n).map_err(err)?;
    let mut scanner = Scanner::<i32, Sum>::new(backend);
    let (mut library, mut kernel) = (Vec::with_capacity(calls), Vec::with_capacity(calls));
    for call in 0..=calls {
        for which in [call % 2, 1 - call % 2] {
            let us = if which == 0 {
                let t = backend.time(&mut || scanner.enqueue(Kind::Inclusive, &input, 0..n, &mut output));
                check.enqueue(backend, &output, 2 * call).map_err(err)?;
                t
            } else {
                let t = backend.time(&mut || direct.launch());
                check.enqueue(backend, direct.output(), 2 * call + 1).map_err(err)?;
                t
            };
            let us = us.map_err(err)?;
            if call > 0 {
                if which == 0 { library.push(us) } else { kernel.push(us) }
            }
        }
    }
    if let Some((at, wrong)) = check.counts(backend).map_err(err)?.iter().enumerate().find(|&(_, &c)| c > 0) {
        let who = if at % 2 == 0 { "Scanner" } else { "direct launch" };
        return Err(format!("n = {n}: {who} call {} left {wrong} elements unlike the CPU's scan", at / 2));
    }
    let (lib, ker) = (median(library), median(kernel));
    Ok(format!("{n},{},{lib:.3},{ker:.3},{:.4}", inst.variant.name, lib / ker))
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
    println!("round,n,variant,scanner_us_median,kernel_us_median,scanner_over_kernel");
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
