//! The `reduce` command line: runs the reduction (or scan) variants on the GPU or the CPU
//! emulator, checks every result against the CPU reference, and prints one row per variant.
//!
//! The layers, ripgrep-style: flags (`Args`, clap) → a `Session` (n, repeat, backend,
//! banner, seed: everything both operations share, checked once) → rows (`cli/reduce.rs` or
//! `cli/scan.rs`) → one [`Report`](crate::output::Report) in the chosen format.
//!
//! Exit status: 0 when every row passes, 1 when any row fails, 2 for bad input or when
//! nothing could run. The binary (`src/bin/reduce.rs`) only calls [`main`]; tests call
//! [`run_with`] to see the output and the status. Errors and progress go to the writer the
//! caller gives ([`run_with`]'s `err`).

mod check;
mod committed;
mod histogram;
mod metrics;
mod ops;
mod parse;
mod reduce;
mod report;
mod scan;
mod segmented;
mod select;
mod sweep;
mod trace;

use std::io::Write;

use clap::{Parser, ValueEnum};

use crate::backend::{Backend, BackendKind, DeviceInfo};
use crate::emu::Checks;
use crate::output::Format;
use crate::{Error, Result};

/// Timed runs per variant on the emulator when `--repeat` is not given (after the warm-up, as on a
/// GPU). One: the emulator's times are CPU times, which order its own work and teach nothing of a
/// GPU's, and its answer (the verdict, the checks' faults) is the same after one run; each more
/// run delays it by a whole checked emulation of the kernel (the learner's loop,
/// `scripts/learner_loop.sh`, times the default). `--repeat N` asks for more.
pub const EMULATOR_REPEAT: u32 = 1;

/// What the report shows of a row, by pair: the reduction's rows (`cli/reduce`) and the scan's
/// (`cli/scan.rs`) alike.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Layout {
    /// `i32` sums, the curriculum's: the variant's name alone (every curriculum variant runs
    /// it), the committed GPU figures beside the row, CUB's (and for reductions the CUDA C
    /// twins' and `clock64`'s) columns.
    Curriculum,
    /// Every other pair: type and operator beside the name, the result beside the reference.
    Pair,
}

impl Layout {
    fn of(elem: crate::types::Elem, op: crate::types::Op) -> Self {
        if (elem, op) == (crate::types::Elem::I32, crate::types::Op::Sum) { Layout::Curriculum } else { Layout::Pair }
    }
}

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
    /// The prefix sums (reduce_scan::scan): bit, blelloch, lookback × inclusive/exclusive.
    Scan,
    /// The smallest element and its first index (NaN is the smallest).
    Argmin,
    /// The largest element and its first index (NaN is the largest).
    Argmax,
    /// Σ a[i]·b[i] of two inputs, no temporary.
    Dot,
    /// Σ x[i]², no temporary.
    #[value(name = "sum_of_squares")]
    SumOfSquares,
    /// The L2 norm √(Σ x[i]²).
    Norm,
    /// Many reductions in one launch, over CSR offsets (--segments K [--lengths], or --offsets).
    Segmented,
    /// The rows of a row-major --rows × --cols matrix, each reduced (x.sum(dim=-1)).
    Rows,
    /// The count of samples in each of --bins even bins over [--lower, --upper)
    /// (DeviceHistogram::HistogramEven, torch.histc); --type u8, u16, u32, i32 or f32.
    Histogram,
    /// The count of each value 0..--bins (torch.bincount); --type u8, u16, u32 or i32.
    Bincount,
    /// The elements --predicate keeps, in order, and their count (DeviceSelect::If, Flagged;
    /// torch.masked_select); --type i32, u32, f32, u8 or u16 (also of partition, unique and
    /// run_length).
    Select,
    /// The elements --predicate keeps first, in order, then the others in reverse order
    /// (DevicePartition::If, Flagged).
    Partition,
    /// The first element and each one unequal to the one before (DeviceSelect::Unique,
    /// torch.unique_consecutive); runs of mean length --run.
    Unique,
    /// Each run's first element and its length, and the number of runs
    /// (DeviceRunLengthEncode::Encode, torch.unique_consecutive(return_counts=True)); runs of
    /// mean length --run.
    #[value(name = "run_length")]
    RunLength,
}

impl OpArg {
    /// Its name on the command line (`histogram`, `select`, …).
    fn name(self) -> String {
        self.to_possible_value().map_or_else(|| format!("{self:?}"), |v| v.get_name().to_string())
    }

    /// The library operation it names (`reduce_scan::ops`), if it is one.
    fn operation(self) -> Option<crate::ops::Operation> {
        use crate::ops::Operation;
        match self {
            OpArg::Reduce
            | OpArg::Scan
            | OpArg::Segmented
            | OpArg::Rows
            | OpArg::Histogram
            | OpArg::Bincount
            | OpArg::Select
            | OpArg::Partition
            | OpArg::Unique
            | OpArg::RunLength => None,
            OpArg::Argmin => Some(Operation::ArgMin),
            OpArg::Argmax => Some(Operation::ArgMax),
            OpArg::Dot => Some(Operation::Dot),
            OpArg::SumOfSquares => Some(Operation::SumOfSquares),
            OpArg::Norm => Some(Operation::Norm),
        }
    }
}

/// What the emulator checks on every access (`docs/emulator.md`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum ChecksArg {
    /// memcheck, racecheck and initcheck (and the barrier and warp checks, always on);
    /// racecheck follows every block of a grid of up to 64 blocks, 64 blocks of a larger one.
    All,
    /// As `all`, with racecheck on every block of every grid (slower).
    Exhaustive,
    /// memcheck only (bounds, use after free, alignment), and the barrier and warp checks:
    /// no race or initialisation tracking.
    Memcheck,
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
#[derive(Parser, Debug, Clone)]
#[command(name = "reduce", version, about, long_about = None, after_help = "Subcommands: reduce check --variant NAME checks one reduction at every block and the test suite's sizes on the emulator (reduce check --help); reduce trace --variant NAME draws one block's memory accesses, barrier by barrier, as SVG (reduce trace --help); reduce report RUN_DIR... [--out DIR] builds an HTML report from measurement CSVs (reduce report --help).")]
struct Args {
    /// Number of elements, 1..=4294967295 [default: 2^24 on a GPU, 2^20 on the emulator].
    #[arg(long, conflicts_with = "log2", value_parser = parse::n, allow_negative_numbers = true)]
    n: Option<u64>,
    /// Number of elements as a power of two: n = 2^LOG2 (0..=31).
    #[arg(long, value_parser = parse::log2, allow_negative_numbers = true)]
    log2: Option<u32>,
    /// Threads per block (reductions, and the library's operations: argmin, …, norm; each scan
    /// has its own) [default: 512; for the operations, their plan's by size].
    #[arg(long, value_parser = parse::block, allow_negative_numbers = true)]
    block: Option<u32>,
    /// Grid-stride variants (grid_stride, vector_loads, single_pass, atomic_accumulate) and the
    /// operations (argmin, …, norm): at most K blocks per SM instead of what the occupancy
    /// calculator says fits; a large K (e.g. 1024) gives one block per tile of the data.
    #[arg(long, value_parser = parse::blocks_per_sm, allow_negative_numbers = true)]
    blocks_per_sm: Option<u32>,
    /// A variant name, or `all`: every variant that runs the pair (with `--op scan`: a scan
    /// variant, `all`, `tuning`, or several scan variants separated by commas, run in that
    /// order on one input: `lookback,lookback_warpspec`).
    #[arg(long, default_value = "all")]
    variant: String,
    /// Only the variants of this family (global, shared, modern, sumsq; reductions only).
    #[arg(long)]
    family: Option<String>,
    /// Seed of the input generator.
    #[arg(long, default_value_t = 1, value_parser = parse::seed, allow_negative_numbers = true)]
    seed: u64,
    /// Timed runs per variant (the median is reported) [default: 20 on a GPU, 1 on the emulator].
    #[arg(long, value_parser = parse::repeat, allow_negative_numbers = true)]
    repeat: Option<u32>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = FormatArg::Table)]
    format: FormatArg,
    /// Where to run.
    #[arg(long, value_enum, default_value_t = BackendArg::Auto)]
    backend: BackendArg,
    /// What the emulator checks on every memory access (emulator only; a GPU run ignores it):
    /// `all` is compute-sanitizer's memcheck, racecheck and initcheck (racecheck on 64 blocks of
    /// a larger grid), `exhaustive` racechecks every block, `memcheck` skips the race and
    /// initialisation tracking (docs/emulator.md gives the cost).
    #[arg(long, value_enum, default_value_t = ChecksArg::All)]
    emulator_checks: ChecksArg,
    /// The multiprocessors the emulator plays, which size the grids that fill a device (the
    /// grid-stride variants', the persistent scan's): `gpu`, the committed GPU's (the H100's
    /// 132, so its grids are the GPU's and its counters compare with ncu's), `cpu`, one per
    /// worker thread (fewer, longer-running blocks), or a count. [default: REDUCE_EMULATED_SMS,
    /// else gpu] (emulator only)
    #[arg(long, value_name = "SMS", value_parser = parse::emulated_sms)]
    emulated_sms: Option<crate::emu::EmulatedSms>,
    /// List the variants and what each teaches, then exit.
    #[arg(long)]
    list: bool,
    /// What to run: the reductions, the prefix sums, one of the library's operations (argmin,
    /// argmax, dot, sum_of_squares, norm: one row, --type's input; --list lists them), or a
    /// segmented reduction (segmented: over offsets; rows: over a matrix's rows).
    #[arg(long, value_enum, default_value_t = OpArg::Reduce)]
    op: OpArg,
    /// Element type. Each variant runs the element types × operators its registry entry
    /// declares: the selection's variants that run the pair run (`--list` with the pair shows
    /// them); the curriculum's kernels are i32 sums, the generic ones run every pair.
    /// `--op histogram` and `bincount` take the sample types u8, u16, u32, i32 (and f32 for
    /// histogram), `select`, `partition`, `unique` and `run_length` i32, u32, f32, u8, u16; the
    /// other operations the first six.
    #[arg(long = "type", value_name = "TYPE", default_value = "i32", value_parser = ["i32", "u32", "i64", "u64", "f32", "f64", "u8", "u16"])]
    elem: String,
    /// What the reduction or scan combines with: sum (wrapping for integers), min or max
    /// (floats: NaN propagates, -0.0 < +0.0). The pair is `--type` × `--combine`, under the same
    /// rule. `--op segmented` and `--op rows` also take argmin and argmax.
    #[arg(long, default_value = "sum", value_parser = ["sum", "min", "max", "argmin", "argmax"])]
    combine: String,
    /// Also time CUB (DeviceReduce::Sum, or DeviceScan::InclusiveSum with `--op scan`, or the
    /// operation's counterpart: DeviceReduce::ArgMin/ArgMax, TransformReduce) at the same n
    /// (needs nvcc on the GPU host) and add a `× CUB` column: CUB's time over ours (> 1: faster
    /// than CUB).
    #[arg(long)]
    compare_cub: bool,
    /// Also time each classic kernel's CUDA C twin (cub/classic.cu, built with the host's nvcc)
    /// on the same data and geometry, and add its median and a `× C` column: C's time over
    /// ours (> 1: the Rust kernel is faster).
    #[arg(long)]
    compare_c: bool,
    /// Also add each variant's counters as columns. On a GPU, Nsight Compute's (ncu): gld and
    /// warp execution efficiency, instructions, occupancy, DRAM throughput, bank conflicts,
    /// barrier stalls, requests, sectors, wavefronts (docs/metrics.md); exit status 2 without
    /// ncu. On the emulator, its own count of the same accesses under the same names, plus
    /// active lanes per request and barriers (docs/counters.md).
    #[arg(long)]
    metrics: bool,
    /// Only this kind of scan (the child runs of `--metrics`).
    #[arg(long, hide = true, value_parser = ["inclusive", "exclusive"])]
    kind: Option<String>,
    /// Run the selection at every size of a range into one CSV (progress and ETA on stderr):
    /// `LO..HI` for n = 2^LO, 2^(LO+1), …, 2^HI (e.g. `10..28`), or `seed` for the seed's scan
    /// lengths 10^2, 10^3, …, 10^9 (sizes the device cannot hold are skipped rows).
    #[arg(long, conflicts_with_all = ["n", "log2"])]
    sweep: Option<String>,
    /// `--op segmented`: K segments over the n elements (1..=n), lengths as --lengths says.
    #[arg(long, conflicts_with = "offsets", value_parser = parse::segments, allow_negative_numbers = true)]
    segments: Option<u64>,
    /// `--op segmented` with --segments: `equal` lengths, or `power` (power-law: many short
    /// segments, a few long ones).
    #[arg(long, value_parser = ["equal", "power"])]
    lengths: Option<String>,
    /// `--op segmented`: the CSR offsets themselves, comma-separated (`0,4,4,10`: three
    /// segments, the second empty); they must not decrease, and the last must be at most n.
    #[arg(long, value_parser = parse::offsets)]
    offsets: Option<parse::OffsetList>,
    /// `--op segmented`, `--op rows`: lanes per segment where a logical warp takes each short
    /// segment (a power of two in 4..=32) [default: the plan's, from their mean length].
    #[arg(long, value_parser = parse::lanes, allow_negative_numbers = true)]
    lanes: Option<u32>,
    /// `--op rows`: the matrix's rows (n = rows × cols).
    #[arg(long, requires = "cols", conflicts_with_all = ["n", "log2", "sweep"], value_parser = parse::dimension, allow_negative_numbers = true)]
    rows: Option<u64>,
    /// `--op rows`: the matrix's columns, the length of each row reduced.
    #[arg(long, requires = "rows", value_parser = parse::dimension, allow_negative_numbers = true)]
    cols: Option<u64>,
    /// `--op histogram`, `--op bincount`: the bins (1..=4096), one counter each.
    #[arg(long, default_value_t = 256, value_parser = parse::bins, allow_negative_numbers = true)]
    bins: u32,
    /// `--op histogram`: the lowest value of the first bin (inclusive) [default: the type's
    /// smallest value; 0 for f32].
    #[arg(long, allow_negative_numbers = true)]
    lower: Option<String>,
    /// `--op histogram`: the end of the last bin (exclusive) [default: one past the type's
    /// largest value; 1 for f32].
    #[arg(long, allow_negative_numbers = true)]
    upper: Option<String>,
    /// `--op select`, `--op partition`: what keeps an element: `lt:X`, `le:X`, `gt:X`, `ge:X`,
    /// `eq:X`, `ne:X`, `nonzero`, or `flags` (a flag array, about half its bytes set). The input
    /// is uniform over [0, 1000) ([0, 256) for u8) [default: lt:500 (u8: lt:128), about half
    /// kept].
    #[arg(long, allow_negative_numbers = true)]
    predicate: Option<String>,
    /// `--op unique` and `--op run_length`: the mean length of the input's runs of equal values
    /// (1..=2^20) [default: 4].
    #[arg(long, value_parser = parse::run_length)]
    run: Option<u32>,
    /// Set by `--sweep` for the run of one size: (size index, sizes) for the progress lines.
    #[arg(skip)]
    sweep_step: Option<(usize, usize)>,
}

/// Runs the command line of this process; returns the exit status.
pub fn main() -> u8 {
    run_with(std::env::args_os(), &mut std::io::stdout().lock(), &mut std::io::stderr())
}

/// Runs the command line `argv` (program name first), printing the report to `out` and
/// errors and progress to `err`; returns the exit status (0 pass, 1 a row failed, 2 bad input).
pub fn run_with<I, T>(argv: I, out: &mut dyn Write, err: &mut dyn Write) -> u8
where
    I: IntoIterator<Item = T>,
    T: Into<std::ffi::OsString> + Clone,
{
    let argv: Vec<std::ffi::OsString> = argv.into_iter().map(Into::into).collect();
    if argv.get(1).is_some_and(|a| a == "report") {
        return report::run(&argv, out, err);
    }
    if argv.get(1).is_some_and(|a| a == "trace") {
        return trace::run(&argv, out, err);
    }
    if argv.get(1).is_some_and(|a| a == "check") {
        return check::run(&argv, out, err);
    }
    let args = match Args::try_parse_from(argv) {
        Ok(a) => a,
        Err(e) => {
            let code = if e.use_stderr() { 2 } else { 0 };
            // Help and version as clap renders them; an error in one line (cli/parse.rs).
            let _ = if code == 0 { write!(out, "{}", e.render()) } else { writeln!(err, "{}", parse::one_line(&e)) };
            return code;
        }
    };
    // A harness cache that another user could have written to is refused before anything runs.
    let harness_cache = || if args.compare_cub || args.compare_c { crate::private::check_cache() } else { Ok(()) };
    let result = harness_cache()
        .and_then(|()| select::refuse_elsewhere(&args))
        .and_then(|()| segmented::refuse_elsewhere(&args))
        .and_then(|()| match (&args.sweep, args.op) {
            (Some(spec), _) => sweep::run(&args, spec, out, err),
            (None, OpArg::Reduce) => reduce::run(&args, out, err),
            (None, OpArg::Scan) => scan::run(&args, out, err),
            (None, OpArg::Segmented) => segmented::run(&args, false, out, err),
            (None, OpArg::Rows) => segmented::run(&args, true, out, err),
            (None, OpArg::Histogram) => histogram::run(&args, false, out, err),
            (None, OpArg::Bincount) => histogram::run(&args, true, out, err),
            (None, OpArg::Select | OpArg::Partition | OpArg::Unique | OpArg::RunLength) => select::run(&args, out, err),
            (None, op) => match op.operation() {
                Some(operation) => ops::run(&args, operation, out, err),
                None => Err(Error::Invalid(format!("--op {op:?}: no such operation"))),
            },
        });
    match result {
        Ok(true) => 0,
        Ok(false) => 1,
        Err(e) => {
            let _ = writeln!(err, "error: {e}");
            2
        }
    }
}

/// `run_with` on `args` with its output captured: (exit status, stdout, stderr). For the
/// subcommands' unit tests.
#[cfg(test)]
fn run_captured(args: &[&str]) -> (u8, String, String) {
    let (mut out, mut err) = (Vec::new(), Vec::new());
    let code = run_with(args, &mut out, &mut err);
    (code, String::from_utf8(out).unwrap(), String::from_utf8(err).unwrap())
}

/// What every run shares, checked once: where it runs, on how many elements, how often.
struct Session {
    backend: Backend,
    /// Why the GPU could not be used, when `--backend auto` fell back to the emulator.
    no_gpu: Option<String>,
    n: usize,
    repeat: u32,
    format: Format,
    seed: u64,
}

impl Session {
    /// The same session on a counting copy of its emulator (the same device memory), making
    /// one timed run: what `--metrics` runs on the emulator. `None` on a GPU.
    fn counting(&self) -> Option<Session> {
        Some(Session {
            backend: self.backend.counting()?,
            no_gpu: self.no_gpu.clone(),
            n: self.n,
            repeat: 1,
            format: self.format,
            seed: self.seed,
        })
    }

    /// How many calls `--compare-cub` times CUB for (at least [`crate::timing::MIN_RUNS`]),
    /// or why CUB cannot be timed here (the emulator, no nvcc, the harness does not build).
    fn cub_calls(&self) -> std::result::Result<u32, String> {
        if !self.backend.is_gpu() {
            return Err("CUB runs on a GPU only; these are emulator results".into());
        }
        crate::cub::available().map_err(|e| e.to_string())?;
        Ok(self.repeat.max(crate::timing::MIN_RUNS))
    }

    /// Opens the backend and checks `--n`/`--log2` and `--repeat`.
    fn open(args: &Args) -> Result<Self> {
        let kind = match args.backend {
            BackendArg::Auto => BackendKind::Auto,
            BackendArg::Gpu => BackendKind::Gpu,
            BackendArg::Emulator => BackendKind::Emulator,
        };
        let checks = match args.emulator_checks {
            ChecksArg::All => Checks::ALL,
            ChecksArg::Exhaustive => Checks::EXHAUSTIVE,
            ChecksArg::Memcheck => Checks::MEMCHECK,
        };
        // The flag, else the variable (refused in one line when it names no geometry).
        let sms = match args.emulated_sms {
            Some(sms) => Some(sms),
            None => crate::emu::EmulatedSms::from_env().map_err(Error::Invalid)?,
        };
        let (backend, no_gpu) = Backend::select(kind)?;
        let backend = backend.with_checks(checks);
        let backend = match sms {
            Some(sms) => backend.with_sms(sms),
            None => backend,
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
        let repeat = args.repeat.unwrap_or(if backend.is_gpu() { 20 } else { EMULATOR_REPEAT });
        if repeat == 0 {
            return Err(Error::Invalid("--repeat 0: at least one timed run is needed".into()));
        }
        let format = match args.format {
            FormatArg::Table => Format::Table,
            FormatArg::Csv => Format::Csv,
            FormatArg::Json => Format::Json,
        };
        Ok(Self { backend, no_gpu, n: n as usize, repeat, format, seed: args.seed })
    }

    fn info(&self) -> &DeviceInfo {
        self.backend.info()
    }

    /// The lines above a table: the device, and the emulator banner where it applies.
    fn banner(&self) -> Vec<String> {
        let mut lines = vec![format!("device: {}", self.info())];
        if !self.backend.is_gpu() {
            lines.push(match &self.no_gpu {
                Some(cause) => format!("EMULATOR RESULTS ({cause}); times are CPU times, not GPU times"),
                None => "EMULATOR RESULTS — times are CPU times, not GPU times".into(),
            });
            if let Some(checks) = self.backend.emulator_checks() {
                lines.push(format!("emulator checks: {checks} (docs/emulator.md)"));
            }
        }
        lines
    }

    /// The JSON document's metadata, in the order the reports have always had.
    fn meta(&self) -> serde_json::Map<String, serde_json::Value> {
        let info = self.info();
        let mut m = serde_json::Map::new();
        m.insert("device".into(), info.name.clone().into());
        m.insert("backend".into(), if self.backend.is_gpu() { "gpu" } else { "emulator" }.into());
        m.insert("is_gpu".into(), info.is_gpu.into());
        let cc = info.compute_capability;
        m.insert("compute_capability".into(), format!("{}.{}", cc.0, cc.1).into());
        m.insert("peak_bandwidth_bytes_per_s".into(), info.peak_bandwidth.map(|p| p.round()).into());
        m.insert("n".into(), self.n.into());
        m
    }

    /// "median of N timed runs", or "one timed run", for the description line.
    fn timed_runs(&self) -> String {
        match self.repeat {
            1 => "one timed run".to_string(),
            r => format!("median of {r} timed runs"),
        }
    }

    /// "(CUDA events)" or the emulator's wall clock, for the description line.
    fn clock(&self) -> &'static str {
        if self.backend.is_gpu() { "" } else { ": here, wall clock" }
    }

    /// A report of `columns` in the session's format, to `out`. On the emulator the time is
    /// titled a CPU time and the GPU throughput columns leave the table ([`committed::on_the_cpu`]).
    fn report<'w>(&self, out: &'w mut dyn Write, columns: Vec<crate::output::Column>) -> crate::output::Report<'w> {
        let columns =
            if self.backend.is_gpu() { columns } else { columns.into_iter().map(committed::on_the_cpu).collect() };
        crate::output::Report::new(self.format, out, columns)
    }

    /// `% of peak` for a throughput, when the device has a peak.
    fn pct_peak(&self, bytes_per_s: f64) -> crate::output::Cell {
        use crate::output::Cell;
        self.info().peak_bandwidth.map_or(Cell::Empty, |p| Cell::Num(100.0 * bytes_per_s / p))
    }
}

/// The launch-shape columns every reduction report has after its name columns: `grid×block`
/// in the table, `n`, `grid`, `block` and `shared_bytes` in CSV and JSON.
fn shape_columns() -> [crate::output::Column; 5] {
    use crate::output::{Column, Shown};
    [
        Column::new("grid_x_block", "grid×block", 14, 0).only(Shown::TableOnly),
        Column::new("n", "n", 0, 0).only(Shown::DataOnly),
        Column::new("grid", "grid", 0, 0).only(Shown::DataOnly),
        Column::new("block", "block", 0, 0).only(Shown::DataOnly),
        Column::new("shared_bytes", "shared", 0, 0).only(Shown::DataOnly),
    ]
}

/// The columns after the timing of a library operation's row: the bound, its share, CUB's
/// median and CUB's time over ours (the operations, the segmented reductions, the histogram).
fn bound_and_cub_columns() -> [crate::output::Column; 4] {
    use crate::output::Column;
    [
        Column::new("bound_us", "bound µs", 9, 2),
        Column::new("pct_of_bound", "% bound", 8, 1),
        Column::new("cub_median_us", "CUB µs", 9, 2),
        Column::new("x_cub", "× CUB", 7, 2),
    ]
}

/// The cells of [`bound_and_cub_columns`]: `bound` and `cub` in µs where known, over the
/// `median` of ours.
fn bound_and_cub_cells(bound: Option<f64>, median: f64, cub: Option<f64>) -> [crate::output::Cell; 4] {
    use crate::output::Cell;
    [
        bound.map_or(Cell::Empty, Cell::Num),
        bound.map_or(Cell::Empty, |b| Cell::Num(100.0 * b / median)),
        cub.map_or(Cell::Empty, Cell::Num),
        cub.map_or(Cell::Empty, |c| Cell::Num(c / median)),
    ]
}

/// The verdict of a row: FAIL with the reason of the final check (`wrong`) or of the first
/// timed run that was wrong, else PASS.
fn verdict(wrong: Option<String>, runs: &crate::timing::Runs) -> crate::output::Cell {
    use crate::output::Cell;
    match (wrong, &runs.first_wrong) {
        (Some(why), _) => Cell::Verdict("FAIL", Some(why)),
        (None, Some((run, why))) => Cell::Verdict("FAIL", Some(format!("timed run {run}: {why}"))),
        (None, None) => Cell::Verdict("PASS", None),
    }
}

/// The flags of the registry's runs that an operation with a plan of its own (`name`) refuses in
/// one line, never ignores: `--variant`, `--family`, `--blocks-per-sm`, `--compare-c`. (`--metrics`
/// counts the operation's kernels: its one, or the segmented plan's.)
fn refuse_registry_flags(args: &Args, name: &str) -> crate::Result<()> {
    let refuse =
        |flag: String, why: &str| Err(crate::Error::Invalid(format!("{flag} does not apply to --op {name}: {why}")));
    match () {
        () if args.variant != "all" => refuse(format!("--variant {}", args.variant), "the plan picks its kernel"),
        () if args.family.is_some() => refuse("--family".into(), "the plan picks its kernel"),
        () if args.blocks_per_sm.is_some() => refuse("--blocks-per-sm".into(), "the plan sizes its grid"),
        () if args.compare_c => refuse("--compare-c".into(), "--compare-cub compares it with CUB"),
        () => Ok(()),
    }
}

/// [`refuse_registry_flags`], and that of a one-kernel operation (`kernel`): `--list` (the
/// segmented reductions' shapes: `segmented::refuse_elsewhere`).
fn refuse_one_kernel_flags(args: &Args, name: &str, kernel: &str) -> crate::Result<()> {
    refuse_registry_flags(args, name)?;
    let refuse =
        |flag: String, why: &str| Err(crate::Error::Invalid(format!("{flag} does not apply to --op {name}: {why}")));
    match () {
        () if args.list => refuse("--list".into(), &format!("it runs one kernel, {kernel}")),
        () => Ok(()),
    }
}

/// `--compare-cub` could not time CUB: a note above the table (and, where the output is data,
/// on the error stream too).
fn no_cub(report: &mut crate::output::Report<'_>, err: &mut dyn Write, why: &str) {
    let line = format!("--compare-cub: no CUB comparison ({why}); no × CUB figure");
    report.note(&line);
    if !report.is_table() {
        let _ = writeln!(err, "{line}");
    }
}

/// The timing group every report has: median, fastest, every run (JSON), the median again and
/// the throughput under the names the JSON reports have always used, GB/s and % of peak.
/// `bytes` names the throughput: `("bytes_per_s", "gb_per_s", "GB/s")` for a reduction (each
/// element read once), `("bytes_per_s_rw", "gb_per_s_rw", "GB/s r+w")` for a scan.
fn timing_columns(bytes: (&'static str, &'static str, &'static str), pct_width: usize) -> Vec<crate::output::Column> {
    use crate::output::{Column, Shown};
    let (bytes_key, gb_key, gb_title) = bytes;
    vec![
        Column::new("time_us_median", "time (µs)", 11, 2),
        Column::new("time_us_min", "min (µs)", 0, 2).only(Shown::DataOnly),
        Column::new("times_us", "times", 0, 2).only(Shown::JsonOnly),
        Column::new("median_us", "median", 0, 2).only(Shown::JsonOnly),
        Column::new(bytes_key, "bytes/s", 0, 0).only(Shown::JsonOnly),
        Column::new(gb_key, gb_title, 9, 1),
        Column::new("pct_peak", "% peak", pct_width, 1),
    ]
}

/// The cells of [`timing_columns`] for `runs` moving `bytes` bytes per run.
fn timing_cells(session: &Session, runs: &crate::timing::Runs, bytes: f64) -> Vec<crate::output::Cell> {
    use crate::output::Cell;
    let median = runs.median_us();
    let bw = bytes / (median * 1e-6);
    vec![
        Cell::Num(median),
        Cell::Num(runs.min_us()),
        Cell::List(runs.times_us.clone()),
        Cell::Num(median),
        Cell::Int(bw.round() as i64),
        Cell::Num(bw / 1e9),
        session.pct_peak(bw),
    ]
}

/// What happened to one row (a reduction variant, or a scan variant and kind).
enum Outcome<M> {
    /// It ran; the measurement says whether it passed.
    Ran(M),
    /// Not run: the request does not fit this variant or device (a block it does not take, an
    /// older GPU, not enough memory).
    Skipped(String),
    /// It failed to run.
    Failed(String),
}

impl<M> Outcome<M> {
    /// A measurement, or what stopped it: a request that does not fit ([`Error::Invalid`],
    /// [`Error::Unsupported`]) is a skipped row, any other error a failed one.
    fn of(r: Result<M>) -> Self {
        match r {
            Ok(m) => Outcome::Ran(m),
            Err(e @ (Error::Invalid(_) | Error::Unsupported(_))) => Outcome::Skipped(e.to_string()),
            Err(e) => Outcome::Failed(e.to_string()),
        }
    }

    /// Did the row fail (an error, or a measurement `pass` rejects)?
    fn failed(&self, pass: impl Fn(&M) -> bool) -> bool {
        match self {
            Outcome::Ran(m) => !pass(m),
            Outcome::Skipped(_) => false,
            Outcome::Failed(_) => true,
        }
    }

    /// The cells of a row that did not run: `names`, empty cells up to `width - 1`, the
    /// verdict. `None` for a row that ran.
    fn bare_row(&self, names: &[&str], width: usize) -> Option<Vec<crate::output::Cell>> {
        use crate::output::Cell;
        let verdict = match self {
            Outcome::Ran(_) => return None,
            Outcome::Skipped(why) => Cell::Verdict("SKIP", Some(why.clone())),
            Outcome::Failed(why) => Cell::Verdict("ERROR", Some(why.clone())),
        };
        let mut row: Vec<Cell> = names.iter().map(|n| Cell::Text(n.to_string())).collect();
        row.resize(width - 1, Cell::Empty);
        row.push(verdict);
        Some(row)
    }
}

/// Ends a report: the JSON document gets `meta`; the table a line when rows failed, and
/// `more` (e.g. where the report with every lesson is).
fn finish(
    report: crate::output::Report<'_>,
    meta: serde_json::Map<String, serde_json::Value>,
    failed: usize,
    rows: &str,
    more: Option<String>,
) {
    let failed = (failed > 0).then(|| format!("{failed} {rows} failed"));
    let footer: Vec<String> = failed.into_iter().chain(more).collect();
    report.finish(meta, &footer);
}

/// In a sweep, one progress line per variant: which size, which variant.
fn sweep_progress(args: &Args, err: &mut dyn Write, n: usize, variant: &str) {
    if let Some((i, total)) = args.sweep_step {
        let _ = writeln!(err, "sweep: size {}/{total} (n = {n}), variant {variant}", i + 1);
    }
}

/// Says on `err` that a long step started (table output only: CSV and JSON stay quiet).
fn progress(session: &Session, err: &mut dyn Write, what: &str) {
    if session.format == Format::Table {
        let _ = write!(err, "{what}… ");
        let _ = err.flush();
    }
}

/// Ends a [`progress`] line.
fn progress_done(session: &Session, err: &mut dyn Write) {
    if session.format == Format::Table {
        let _ = writeln!(err, "done");
    }
}
