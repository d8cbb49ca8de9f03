//! The README's 256-bin histogram with shared-memory atomics (`hist256`, in
//! `examples/my-kernels/`, the same text as the README's kernel crate: a column of bins per lane,
//! counted with `red_add`, 16-byte loads half a step ahead of the counting and one bounds check a
//! step), the form before it (`hist256_quads`: four quads loaded together a step), the form before
//! that (`hist256_scalar`: sixteen 4-byte loads, each checked) and that form with 16-byte loads
//! checked one by one (`hist256_v4`), with `atomic_add` (`hist256_atomic`) and with one column
//! (`hist256_one_column`, `hist256_red_one_column`), and the form it had to take before the
//! device layer had shared atomics (`hist256_shuffles`: one writer a bin, 32 warp shuffles a
//! step), on the same data, in interleaved rounds; every kernel's answer checked against the
//! CPU's count.
//!
//! `cargo run --release --example histogram -- [--n N] [--rounds R] [--runs K] [--kernels K1,K2]
//! [--block B1,B2] [--waves W1,W2] [--per-sm K] [--format table|csv]`
//!
//! On a GPU: n = 2^24 `u32` by default, 5 rounds, each the median of 20 launches timed by CUDA
//! events, as device time, GB/s of input read and the share of the read bound (the input's bytes
//! at the device's peak bandwidth). On the emulator: n = 2^16 + 7, one round, one launch (the
//! time is the emulator's CPU time). Two distributions: `uniform` (a hash of the index) and
//! `skewed` (90 % of the values in one bin). Each kernel runs at each block size (default 1024)
//! and grid: `--waves W` times the blocks that fit on the device at once (default 1), at most
//! `--per-sm K` of them an SM. Bad arguments: one line, exit status 2.

use reduce_scan::backend::{Backend, BackendKind, LaunchConfig};
use reduce_scan::output::{Cell, Column, Format, Report};
use reduce_scan::{Error, Result, experiment};

reduce_scan::module! {
    /// The kernels of `examples/my-kernels`.
    struct MyKernels(my_kernels) { hist256, hist256_scalar, hist256_v4, hist256_atomic, hist256_one_column, hist256_red_one_column, hist256_shuffles, hist256_quads }
}

/// The kernels compared, in the first round's order.
const KERNELS: [&str; 8] = [
    "hist256",
    "hist256_quads",
    "hist256_scalar",
    "hist256_v4",
    "hist256_atomic",
    "hist256_one_column",
    "hist256_red_one_column",
    "hist256_shuffles",
];

/// What to run: from the command line.
struct Args {
    n: Option<usize>,
    rounds: Option<u32>,
    runs: u32,
    format: Format,
    /// The kernels to run (all of [`KERNELS`] by default).
    kernels: Vec<&'static str>,
    /// Threads a block: each kernel runs at each.
    blocks: Vec<u32>,
    /// The grid in waves: as many blocks as fit on the device at once, times this.
    waves: Vec<u32>,
    /// At most this many blocks an SM in a wave (what fits by default).
    per_sm: Option<u32>,
}

/// The arguments, or the one line that says what is wrong.
fn args() -> std::result::Result<Args, String> {
    let mut a = Args {
        n: None,
        rounds: None,
        runs: 20,
        format: Format::Table,
        kernels: KERNELS.to_vec(),
        blocks: vec![1024],
        waves: vec![1],
        per_sm: None,
    };
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        let mut value = |what: &str| it.next().ok_or(format!("{flag} takes {what}"));
        let number =
            |v: String, what: &str| v.parse::<u64>().ok().filter(|&x| x > 0).ok_or(format!("{flag} {v}: {what}"));
        match flag.as_str() {
            "--n" => a.n = Some(number(value("a count")?, "a count of elements from 1 to 2^30")?.min(1 << 30) as usize),
            "--rounds" => a.rounds = Some(number(value("a count")?, "a count of rounds, 1 or more")? as u32),
            "--runs" => a.runs = number(value("a count")?, "a count of timed launches, 1 or more")? as u32,
            "--kernels" => {
                let list = value("a list of kernels")?;
                a.kernels = list
                    .split(',')
                    .map(|k| KERNELS.iter().find(|&&name| name == k).copied())
                    .collect::<Option<_>>()
                    .ok_or(format!("--kernels {list}: a comma-separated list of {}", KERNELS.join(", ")))?;
            }
            "--block" => {
                let list = value("a list of block sizes")?;
                a.blocks = list
                    .split(',')
                    .map(|b| b.parse::<u32>().ok().filter(|b| b.is_power_of_two() && (32..=1024).contains(b)))
                    .collect::<Option<_>>()
                    .ok_or(format!("--block {list}: block sizes, powers of two from 32 to 1024, comma-separated"))?;
            }
            "--per-sm" => {
                a.per_sm = Some(number(value("a count")?, "a count of blocks an SM, 1 or more")?.min(64) as u32)
            }
            "--waves" => {
                let list = value("a list of wave counts")?;
                a.waves = list
                    .split(',')
                    .map(|w| w.parse::<u32>().ok().filter(|w| (1..=64).contains(w)))
                    .collect::<Option<_>>()
                    .ok_or(format!("--waves {list}: counts from 1 to 64, comma-separated"))?;
            }
            "--format" => {
                a.format = match value("table or csv")?.as_str() {
                    "table" => Format::Table,
                    "csv" => Format::Csv,
                    other => return Err(format!("--format {other}: table or csv")),
                }
            }
            other => {
                return Err(format!(
                    "unknown argument {other}: --n N, --rounds R, --runs K, --kernels K1,K2, --block B1,B2, \
                     --waves W1,W2, --per-sm K, --format table|csv"
                ));
            }
        }
    }
    Ok(a)
}

/// `n` values: a hash of the index (`uniform`), or 90 % of them 7 (`skewed`).
fn data(n: usize, skewed: bool) -> Vec<u32> {
    (0..n as u64)
        .map(|i| {
            let h = (i.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 29) as u32;
            if skewed && !h.is_multiple_of(10) { 7 } else { h }
        })
        .collect()
}

/// The CPU's histogram of the low bytes.
fn cpu(values: &[u32]) -> Vec<u32> {
    let mut bins = vec![0u32; my_kernels::BINS];
    for v in values {
        bins[(v & 0xff) as usize] += 1;
    }
    bins
}

/// One kernel on `values` at `block` threads a block and `waves` times the blocks that fit on
/// the device at once: the grid (0 where a block this large does not fit), and the median of `runs` timed launches (µs; none for 0 runs),
/// then one more launch into zeroed bins, whose answer must be the CPU's.
fn measure(
    backend: &Backend,
    (kernel, block, waves): (&'static str, u32, u32),
    per_sm_cap: Option<u32>,
    values: &[u32],
    runs: u32,
) -> Result<(u32, Option<f64>)> {
    let input = backend.upload(values)?;
    let mut bins = backend.alloc::<u32>(my_kernels::BINS)?;
    // `waves` times as many blocks as fit on the device at once (each kernel's own shared memory
    // decides), or fewer where the input is short.
    let fits = backend.occupancy(reduce_scan::Entry::of(MyKernels::ptx(), kernel), block, 0)?;
    let per_sm = per_sm_cap.map_or(fits, |cap| fits.min(cap));
    if per_sm == 0 {
        return Ok((0, None)); // its registers or shared memory do not fit a block this large
    }
    let grid =
        (values.len().div_ceil(block as usize * 16) as u32).clamp(1, backend.info().multiprocessors * per_sm * waves);
    let cfg = LaunchConfig { grid, block, shared_bytes: 0 };
    let k = MyKernels::new(backend);
    let launch = |bins: &mut reduce_scan::DeviceBuffer<u32>| {
        // SAFETY: both buffers are this backend's, and `bins` is touched only by atomics.
        unsafe {
            match kernel {
                // The whole buffer: its start is 16-byte aligned (for hist256, hist256_quads
                // and hist256_v4).
                "hist256" => k.hist256(cfg, (input.slice(), bins.atomic())),
                "hist256_quads" => k.hist256_quads(cfg, (input.slice(), bins.atomic())),
                "hist256_scalar" => k.hist256_scalar(cfg, (input.slice(), bins.atomic())),
                "hist256_v4" => k.hist256_v4(cfg, (input.slice(), bins.atomic())),
                "hist256_atomic" => k.hist256_atomic(cfg, (input.slice(), bins.atomic())),
                "hist256_one_column" => k.hist256_one_column(cfg, (input.slice(), bins.atomic())),
                "hist256_red_one_column" => k.hist256_red_one_column(cfg, (input.slice(), bins.atomic())),
                _ => k.hist256_shuffles(cfg, (input.slice(), bins.atomic())),
            }
        }
    };
    let median =
        if runs == 0 { None } else { Some(experiment::time(backend, runs, || launch(&mut bins))?.median_us()) };
    backend.write(&mut bins, &[0; my_kernels::BINS])?;
    launch(&mut bins)?;
    let (got, want) = (backend.download(&bins)?, cpu(values));
    if got != want {
        let b = (0..want.len()).find(|&b| got[b] != want[b]).unwrap_or(0);
        return Err(Error::Mismatch(format!(
            "{kernel}, n = {}: bin {b} holds {}, the CPU counts {}",
            values.len(),
            got[b],
            want[b]
        )));
    }
    Ok((grid, median))
}

fn main() -> reduce_scan::MainResult {
    let a = match args() {
        Ok(a) => a,
        Err(e) => {
            eprintln!("histogram: {e}");
            std::process::exit(2)
        }
    };
    let (backend, _) = Backend::select(BackendKind::Auto)?;
    let gpu = backend.is_gpu();
    let n = a.n.unwrap_or(if gpu { 1 << 24 } else { (1 << 16) + 7 });
    let (rounds, runs) = if gpu { (a.rounds.unwrap_or(5), a.runs) } else { (a.rounds.unwrap_or(1), 1) };
    let columns = vec![
        Column::new("round", "round", 5, 0),
        Column::new("data", "data", 8, 0),
        Column::new("kernel", "kernel", 23, 0),
        Column::new("n", "n", 9, 0),
        Column::new("block", "block", 5, 0),
        Column::new("grid", "grid", 6, 0),
        Column::new("median_us", "µs", 9, 2),
        Column::new("gb_per_s", "GB/s", 7, 0),
        Column::new("read_bound_pct", "% bound", 7, 1),
        Column::new("check", "check", 0, 0),
    ];
    let mut stdout = std::io::stdout();
    let mut report = Report::new(a.format, &mut stdout, columns);
    report.note(&format!("{} · {rounds} interleaved round(s), median of {runs} launch(es) each", backend.info()));
    report.header();
    let bound_us = backend.info().peak_bandwidth.map(|bw| (n * 4) as f64 / bw * 1e6);
    for round in 1..=rounds {
        for skewed in [false, true] {
            let values = data(n, skewed);
            // Interleaved: the order of the cases (kernel, block, waves) turns from round to round.
            let mut order = Vec::new();
            for &k in &a.kernels {
                for &b in &a.blocks {
                    order.extend(a.waves.iter().map(|&w| (k, b, w)));
                }
            }
            let len = order.len();
            order.rotate_left(round as usize % len);
            for case in order {
                let (grid, us) = measure(&backend, case, a.per_sm, &values, runs)?;
                let per = |f: &dyn Fn(f64) -> f64| us.map_or(Cell::Empty, |t| Cell::Num(f(t)));
                report.row(&[
                    Cell::Int(i64::from(round)),
                    Cell::Text(if skewed { "skewed" } else { "uniform" }.into()),
                    Cell::Text(case.0.into()),
                    Cell::Int(n as i64),
                    Cell::Int(i64::from(case.1)),
                    Cell::Int(i64::from(grid)),
                    per(&|t| t),
                    per(&|t| (n * 4) as f64 / t / 1e3),
                    bound_us.map_or(Cell::Empty, |b| per(&|t| 100.0 * b / t)),
                    if grid == 0 { Cell::Text("does not fit".into()) } else { Cell::Verdict("PASS", None) },
                ]);
            }
        }
    }
    report.finish(Default::default(), &[]);
    Ok(())
}
