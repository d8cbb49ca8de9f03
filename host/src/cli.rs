//! The `reduce` command line: runs the reduction variants on the GPU (or the CPU emulator),
//! checks each sum against the CPU recursion, and prints one row per variant.
//!
//! Exit status: 0 when every row passes, 1 when any row fails, 2 for bad input or when
//! nothing could run. The binary (`src/bin/reduce.rs`) only calls [`main`]; tests call
//! [`run_with`] to see the output and the status.

use std::io::Write;

use clap::{Parser, ValueEnum};

/// `writeln!` that ignores a closed pipe (e.g. `reduce | head`).
macro_rules! outln {
    ($out:expr, $($t:tt)*) => {{
        let _ = writeln!($out, $($t)*);
    }};
}
use crate::backend::{Backend, BackendKind};
use crate::cpu::Reference;
use crate::input::Input;
use crate::reduce::measure;
use crate::registry::{self, Family, Op, Variant};
use crate::report::{self, Format, Row};
use crate::{Error, Result};

#[derive(Clone, Copy, Debug, ValueEnum)]
enum FormatArg {
    Table,
    Csv,
    Json,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum OpArg {
    /// The reductions (sums).
    Reduce,
    /// The prefix sums (host::scan): bit, blelloch, lookback × inclusive/exclusive.
    Scan,
}

#[derive(Clone, Copy, Debug, ValueEnum)]
enum BackendArg {
    /// The GPU if one can be used, else the emulator.
    Auto,
    /// The GPU; an error if there is none.
    Gpu,
    /// The CPU emulator.
    Emulator,
}

/// Runs the reduction variants, checks every result against the CPU recursion, and prints
/// time, bandwidth and verdict per variant.
#[derive(Parser, Debug)]
#[command(name = "reduce", version, about, long_about = None)]
struct Args {
    /// Number of elements [default: 2^24 on a GPU, 2^20 on the emulator].
    #[arg(long, conflicts_with = "log2")]
    n: Option<u64>,
    /// Number of elements as a power of two: n = 2^LOG2 (0..=32).
    #[arg(long, value_parser = clap::value_parser!(u32).range(0..=32))]
    log2: Option<u32>,
    /// Threads per block.
    #[arg(long, default_value_t = 512)]
    block: u32,
    /// A variant name, or `all`.
    #[arg(long, default_value = "all")]
    variant: String,
    /// Only the variants of this family (global, shared, modern, sumsq).
    #[arg(long)]
    family: Option<String>,
    /// Seed of the input generator.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Timed runs per variant (the median is reported) [default: 20 on a GPU, 3 on the emulator].
    #[arg(long)]
    repeat: Option<u32>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = FormatArg::Table)]
    format: FormatArg,
    /// Where to run.
    #[arg(long, value_enum, default_value_t = BackendArg::Auto)]
    backend: BackendArg,
    /// List the variants and what each teaches, then exit.
    #[arg(long)]
    list: bool,
    /// What to run: the reductions, or the prefix sums (`--variant` then names a scan
    /// variant, `all` or `tuning`; `--block` and `--family` do not apply).
    #[arg(long, value_enum, default_value_t = OpArg::Reduce)]
    op: OpArg,
    /// Also time CUB's DeviceReduce::Sum at the same n (needs nvcc on the GPU host) and add a
    /// `× CUB` column: our throughput over CUB's (> 1: faster than CUB).
    #[arg(long)]
    compare_cub: bool,
}

/// Runs the command line of this process; returns the exit status.
pub fn main() -> u8 {
    run_with(std::env::args_os(), &mut std::io::stdout().lock(), &mut std::io::stderr())
}

/// Runs the command line `argv` (program name first), printing the report to `out` and
/// errors to `err`; returns the exit status (0 pass, 1 a variant failed, 2 bad input).
pub fn run_with<I, T>(argv: I, out: &mut dyn Write, err: &mut dyn Write) -> u8
where
    I: IntoIterator<Item = T>,
    T: Into<std::ffi::OsString> + Clone,
{
    let args = match Args::try_parse_from(argv) {
        Ok(a) => a,
        Err(e) => {
            let code = if e.use_stderr() { 2 } else { 0 };
            let text = e.render().to_string();
            let _ = if code == 0 { write!(out, "{text}") } else { write!(err, "{text}") };
            return code;
        }
    };
    match run(&args, out) {
        Ok(true) => 0,
        Ok(false) => 1,
        Err(e) => {
            let _ = writeln!(err, "error: {e}");
            2
        }
    }
}

fn selected(args: &Args) -> Result<Vec<&'static Variant>> {
    let family = match &args.family {
        None => None,
        Some(f) => Some(Family::ALL.into_iter().find(|x| x.name() == f).ok_or_else(|| {
            let names: Vec<_> = Family::ALL.iter().map(|f| f.name()).collect();
            Error::Invalid(format!("no family `{f}`; the families are: {}", names.join(", ")))
        })?),
    };
    let list: Vec<&'static Variant> =
        if args.variant == "all" { registry::all().collect() } else { vec![registry::find(&args.variant)?] };
    Ok(list.into_iter().filter(|v| family.is_none_or(|f| v.family == f)).collect())
}

/// The options of `--op scan`, for [`crate::scan::cli::run`].
fn scan_options(args: &Args) -> crate::scan::cli::Options {
    crate::scan::cli::Options {
        n: args.n,
        log2: args.log2,
        variant: args.variant.clone(),
        seed: args.seed,
        repeat: args.repeat,
        format: match args.format {
            FormatArg::Table => Format::Table,
            FormatArg::Csv => Format::Csv,
            FormatArg::Json => Format::Json,
        },
        backend: match args.backend {
            BackendArg::Auto => BackendKind::Auto,
            BackendArg::Gpu => BackendKind::Gpu,
            BackendArg::Emulator => BackendKind::Emulator,
        },
        list: args.list,
        compare_cub: args.compare_cub,
    }
}

/// `--compare-cub`: CUB's median time for DeviceReduce::Sum on `n` elements, or why there is
/// none (no GPU, no nvcc, a build or run failure), in one line.
fn cub_median_us(backend: &Backend, n: usize, repeat: u32) -> std::result::Result<f64, String> {
    if !backend.is_gpu() {
        return Err("CUB runs on a GPU only; these are emulator results".into());
    }
    crate::cub::available()?;
    crate::cub::time(crate::cub::CubOp::ReduceSum, n, repeat.max(crate::reduce::MIN_RUNS))
        .map(|t| t.median_us)
        .map_err(|e| e.to_string())
}

fn run(args: &Args, out: &mut dyn Write) -> Result<bool> {
    if args.op == OpArg::Scan {
        return crate::scan::cli::run(&scan_options(args), out);
    }
    let variants = selected(args)?;
    if args.list {
        for v in &variants {
            outln!(out, "{:<24} {:<7} {}", v.name, v.family.name(), v.concept);
        }
        return Ok(true);
    }
    if variants.is_empty() {
        return Err(Error::Invalid("no variant matches the selection".into()));
    }
    let kind = match args.backend {
        BackendArg::Auto => BackendKind::Auto,
        BackendArg::Gpu => BackendKind::Gpu,
        BackendArg::Emulator => BackendKind::Emulator,
    };
    let (backend, no_gpu) = Backend::select(kind)?;
    let format = match args.format {
        FormatArg::Table => Format::Table,
        FormatArg::Csv => Format::Csv,
        FormatArg::Json => Format::Json,
    };
    let n: u64 = match (args.n, args.log2) {
        (Some(n), _) => n,
        (None, Some(k)) => 1u64 << k,
        (None, None) if backend.is_gpu() => 1 << 24,
        (None, None) => 1 << 20,
    };
    if n == 0 || n > u32::MAX as u64 {
        return Err(Error::Invalid(format!("n = {n}; n must be in 1..={}", u32::MAX)));
    }
    let n = n as usize;
    if !args.block.is_power_of_two() || !(32..=1024).contains(&args.block) {
        return Err(Error::Invalid(format!("--block {}: the block must be a power of two in 32..=1024", args.block)));
    }
    if args.variant != "all" {
        // A single named variant: a block it does not accept is bad input, not a skipped row.
        crate::reduce::geometry(&backend, variants[0], n, args.block)?;
    }
    let repeat = args.repeat.unwrap_or(if backend.is_gpu() { 20 } else { 3 });
    if repeat == 0 {
        return Err(Error::Invalid("--repeat 0: at least one timed run is needed".into()));
    }
    if backend.is_gpu() {
        let need = n as u64 * 4 * 2;
        if need > backend.info().memory_bytes {
            return Err(Error::Invalid(format!(
                "n = {n} needs about {:.1} GiB of device memory (input + scratch copy); the device has {:.1} GiB",
                need as f64 / (1u64 << 30) as f64,
                backend.info().memory_bytes as f64 / (1u64 << 30) as f64
            )));
        }
    }

    let info = backend.info().clone();
    let human = format == Format::Table;
    let (cub, cub_missing) = match args.compare_cub.then(|| cub_median_us(&backend, n, repeat)) {
        Some(Ok(c)) => (Some(c), None),
        Some(Err(why)) => (None, Some(format!("--compare-cub: no CUB comparison ({why}); no × CUB column"))),
        None => (None, None),
    };
    if let (Some(line), false) = (&cub_missing, human) {
        eprintln!("{line}");
    }
    if human {
        outln!(out, "device: {info}");
        if !backend.is_gpu() {
            match &no_gpu {
                Some(cause) => {
                    outln!(out, "EMULATOR RESULTS ({cause}); times are CPU times, not GPU times")
                }
                None => outln!(out, "EMULATOR RESULTS — times are CPU times, not GPU times"),
            }
        }
        if let Some(line) = &cub_missing {
            outln!(out, "{line}");
        }
        eprint!("generating {n} inputs (seed {}) and the CPU reference… ", args.seed);
    }
    let input = Input::small(n, args.seed);
    let expected = Reference::of(&input.data);
    let squares = variants.iter().any(|v| v.op == Op::SumOfSquares).then(|| Reference::of_squares(&input.data));
    let buffer = backend.upload(&input.data)?;
    drop(input);
    if human {
        eprintln!("done");
        outln!(
            out,
            "n = {n} ({:.1} MiB), block {}, median of {repeat} timed runs; time = kernel only (CUDA events{}), \
             partial sums added on the host afterwards; in-place variants run on a scratch copy made before timing",
            n as f64 * 4.0 / (1 << 20) as f64,
            args.block,
            if backend.is_gpu() { "" } else { ": here, wall clock" },
        );
        if variants.iter().any(|v| v.op == Op::Sum) {
            outln!(out, "expected sum (CPU recursion): {} (exact: {})", expected.wrapped, expected.widened);
        }
        if let Some(sq) = squares {
            outln!(out, "expected sum of squares (CPU recursion): {} (exact: {})", sq.wrapped, sq.widened);
        }
        if let Some(c) = cub {
            outln!(
                out,
                "CUB DeviceReduce::Sum at the same n: {c:.2} µs ({:.1} GB/s), median of {repeat}; × CUB = our throughput / CUB's (> 1: faster)",
                n as f64 * 4.0 / (c * 1e-6) / 1e9
            );
            outln!(out, "{}", report::table_header_with_cub());
        } else {
            outln!(out, "{}", report::table_header());
        }
    } else if format == Format::Csv {
        match cub {
            Some(_) => outln!(out, "{}", report::csv_header_with_cub()),
            None => outln!(out, "{}", report::csv_header()),
        }
    }

    let mut rows = Vec::new();
    for v in variants {
        let row = match crate::reduce::geometry(&backend, v, n, args.block) {
            Err(e @ (Error::Invalid(_) | Error::Unsupported(_))) => {
                Row::Skipped { variant: v.name, reason: e.to_string() }
            }
            Err(e) => Row::Failed { variant: v.name, error: e.to_string() },
            Ok(_) => match measure(
                &backend,
                v,
                &buffer,
                n,
                args.block,
                repeat,
                squares.filter(|_| v.op == Op::SumOfSquares).unwrap_or(expected),
            ) {
                Ok(m) => Row::Ran(m),
                Err(e) => Row::Failed { variant: v.name, error: e.to_string() },
            },
        };
        match (format, cub) {
            (Format::Table, None) => outln!(out, "{}", report::table_row(&row, &info)),
            (Format::Table, Some(c)) => outln!(out, "{}", report::table_row_with_cub(&row, &info, c)),
            (Format::Csv, None) => outln!(out, "{}", report::csv_row(&row, &info)),
            (Format::Csv, Some(c)) => outln!(out, "{}", report::csv_row_with_cub(&row, &info, c)),
            (Format::Json, _) => {}
        }
        let _ = out.flush();
        rows.push(row);
    }
    if format == Format::Json {
        let backend_name = if backend.is_gpu() { "gpu" } else { "emulator" };
        outln!(out, "{}", report::json_with_cub(&info, backend_name, n, args.block, &rows, cub));
    }
    let failed = rows.iter().filter(|r| r.failed()).count();
    if human && failed > 0 {
        outln!(out, "{failed} variant(s) failed");
    }
    Ok(failed == 0)
}
