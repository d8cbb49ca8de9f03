//! How much the library's scan costs over its kernel, on the GPU: `Scanner::<T, Sum>::inclusive`
//! (`T` = `i32` unless `--type` says another integer type) as a caller runs it (the plan's choice for this GPU and size, `host/src/scan/plan_by_device.csv`)
//! against the same kernel launched directly (`scan::Scan`, what `reduce --op scan --variant V`
//! times), in one process, call by call alternating (issue #37: the Scanner within 1 % of the
//! kernel's time).
//!
//! ```text
//! cargo run --release --example scanner_time -- [--type i32|u32|i64|u64] [--calls N] [--rounds R] N …
//! ```
//!
//! Defaults: `i32`, 30 timed calls of each per row, 1 round, sizes 10^8 and 2^28. One CSV row
//! per (round, size) on stdout, through the CLI's output pipeline (`reduce_scan::output`, numbers
//! to three decimals): `round,n,variant,scanner_us_median,kernel_us_median,
//! scanner_over_kernel,type`. Each call is timed alone between CUDA events and its output compared
//! element by element with the CPU's scan on the device, outside the events. On a machine
//! without a GPU it runs on the emulator (figures meaningless).

use std::process::ExitCode;

use reduce_scan::output::{Cell, Column, Format, Report};
use reduce_scan::scan::by_device::choose_on;
use reduce_scan::scan::{Kind, Scan, cpu};
use reduce_scan::types::{Elem, Op, Value};
use reduce_scan::verify::DeviceCheck;
use reduce_scan::{Backend, Scanner, Sum};

#[path = "common/timing_args.rs"]
mod timing_args;
use timing_args::median;

/// The element types whose sums the device check compares exactly (integer sums wrap alike on
/// the CPU and the GPU).
const TYPES: [&str; 4] = ["i32", "u32", "i64", "u64"];

/// `[--type T] [--calls N] [--rounds R] N …`: `i32`, 30 calls, 1 round, 10^8 and 2^28 unless
/// given.
fn parse(argv: impl Iterator<Item = String>) -> Result<(&'static str, timing_args::Args), String> {
    let (mut ty, mut rest) = ("i32", Vec::new());
    let mut argv = argv.into_iter();
    while let Some(arg) = argv.next() {
        if arg == "--type" {
            let t = argv.next().ok_or("--type needs a type: i32, u32, i64 or u64")?;
            ty = TYPES.into_iter().find(|&k| k == t).ok_or(format!("--type {t}: i32, u32, i64 or u64 are allowed"))?;
        } else {
            rest.push(arg);
        }
    }
    Ok((ty, sizes(rest.into_iter())?))
}

/// The rest of the command line, as `time_to_answer` reads it.
fn sizes(argv: impl Iterator<Item = String>) -> Result<timing_args::Args, String> {
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
fn row<T: Value>(backend: &Backend, host: &[T], calls: usize) -> Result<Vec<Cell>, String> {
    let err = |e: reduce_scan::Error| e.to_string();
    let n = host.len();
    let input = backend.upload(host).map_err(err)?;
    let mut output = backend.alloc::<T>(n).map_err(err)?;
    let mut direct_output = backend.alloc::<T>(n).map_err(err)?;
    let mut check = DeviceCheck::<T>::exact(backend, &cpu::reference(Op::Sum, Kind::Inclusive, host)).map_err(err)?;
    check.start_batch(backend, 2 * (calls + 1)).map_err(err)?;
    let inst = choose_on::<T>(Op::Sum, backend.info(), n).map_err(err)?;
    let mut direct = Scan::of(backend, inst, Kind::Inclusive, &input, &mut direct_output, n).map_err(err)?;
    let mut scanner = Scanner::<T, Sum>::new(backend);
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
    Ok(vec![
        Cell::Int(n as i64),
        Cell::Text(inst.variant.name.into()),
        Cell::Num(lib),
        Cell::Num(ker),
        Cell::Num(lib / ker),
        Cell::Text(T::ELEM.name().into()),
    ])
}

/// The CSV's columns (the CLI's output pipeline, `reduce_scan::output`), a row's cells after
/// its round.
fn columns() -> Vec<Column> {
    ["round", "n", "variant", "scanner_us_median", "kernel_us_median", "scanner_over_kernel", "type"]
        .into_iter()
        .map(|key| Column::new(key, key, 0, 3))
        .collect()
}

/// The rows of every round and size, for elements of `T`: the same input per size in every
/// round (`i32`: small values; the others: the type's whole range, sums wrapping).
fn rows<T: Value>(backend: &Backend, args: &timing_args::Args, report: &mut Report<'_>) -> Result<(), String> {
    for round in 1..=args.rounds {
        for &n in &args.sizes {
            let host: Vec<T> = (0..n)
                .map(|i| {
                    let h = (i as u32).wrapping_mul(2_654_435_761);
                    if matches!(T::ELEM, Elem::I32) {
                        T::random(((h >> 20) as i32 - 2048) as u64)
                    } else {
                        T::random((i as u64 + 1).wrapping_mul(0x9e37_79b9_7f4a_7c15))
                    }
                })
                .collect();
            let mut cells = vec![Cell::Int(round as i64)];
            cells.extend(row(backend, &host, args.calls)?);
            report.row(&cells);
        }
    }
    Ok(())
}

fn main() -> ExitCode {
    let (ty, args) = match parse(std::env::args().skip(1)) {
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
    let mut stdout = std::io::stdout();
    let mut report = Report::new(Format::Csv, &mut stdout, columns());
    report.header();
    let done = match ty {
        "u32" => rows::<u32>(&backend, &args, &mut report),
        "i64" => rows::<i64>(&backend, &args, &mut report),
        "u64" => rows::<u64>(&backend, &args, &mut report),
        _ => rows::<i32>(&backend, &args, &mut report),
    };
    report.finish(Default::default(), &[]);
    if let Err(e) = done {
        eprintln!("scanner_time: {e}");
        return ExitCode::FAILURE;
    }
    ExitCode::SUCCESS
}
