//! The library's histogram (`reduce_scan::Histogram`) timed, as `cub/histogram_even.cu` times
//! CUB's `DeviceHistogram::HistogramEven` on the same samples: `u32` samples from a hash of the
//! index, three distributions, each checked against the CPU's count.
//!
//! ```text
//! cargo run --release --example histogram_even -- [--n N] [--runs R] [--format table|csv]
//! ```
//!
//! * `uniform`: the hash's high 32 bits, 256 bins over `[0, 2^32)` (a bin is a shift);
//! * `skewed`: the same, but 9 samples of 10 are `0x1234_5678` (90 % in one bin);
//! * `narrow`: the hash modulo 1100, 256 bins over `[0, 1000)` (no shift: the multiply and its
//!   correction; a tenth of the samples dropped);
//! * `uniform30`: the hash's high 30 bits, 256 bins over `[0, 2^30)`: bounds that CUB holds in
//!   an `int` (its `uniform` needs `long long` levels for 2^32);
//! * `f32`: 24 bits of the hash as an `f32` in `[0, 1)`, 256 bins over `[0, 1)`
//!   (`scripts/gpu/histc.py` times `torch.histc` on the same values).
//!
//! On a GPU: n = 2^28 by default, each row the median of 20 launches by CUDA events (counters
//! zeroed by a queued copy, then the kernel), with GB/s of samples read and the `counts_hash`
//! (FNV-1a of the 256 counters) that CUB's program prints for the same samples. On the emulator:
//! n = 2^16, one launch.

use reduce_scan::backend::{Backend, BackendKind};
use reduce_scan::histogram::{self, HistSample, Histogram};
use reduce_scan::output::{Cell, Column, Format, Report};
use reduce_scan::{Error, Result, experiment};

/// SplitMix64 of `x`: the samples' hash (the same in `cub/histogram_even.cu`).
fn mix(x: u64) -> u64 {
    let mut z = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// A distribution: its name, sample `i`, lower, upper.
type Distribution = (&'static str, fn(u64) -> u32, i64, i64);

/// The distributions.
const DISTRIBUTIONS: [Distribution; 4] = [
    ("uniform", |i| (mix(i) >> 32) as u32, 0, 1 << 32),
    ("skewed", |i| if !mix(i).is_multiple_of(10) { 0x1234_5678 } else { (mix(i) >> 32) as u32 }, 0, 1 << 32),
    ("narrow", |i| (mix(i) % 1100) as u32, 0, 1000),
    ("uniform30", |i| (mix(i) >> 34) as u32, 0, 1 << 30),
];

/// FNV-1a of the counters' little-endian bytes.
fn fnv(counts: &[u32]) -> u64 {
    counts
        .iter()
        .flat_map(|c| c.to_le_bytes())
        .fold(0xcbf2_9ce4_8422_2325, |h, b| (h ^ b as u64).wrapping_mul(0x100_0000_01b3))
}

fn args() -> std::result::Result<(Option<usize>, u32, Format), String> {
    let (mut n, mut runs, mut format) = (None, 20u32, Format::Table);
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        let v = it.next().ok_or(format!("{flag} takes a value"))?;
        match flag.as_str() {
            "--n" => {
                n = Some(
                    v.parse()
                        .ok()
                        .filter(|&x: &usize| (1..=1 << 30).contains(&x))
                        .ok_or(format!("--n {v}: a count from 1 to 2^30"))?,
                )
            }
            "--runs" => runs = v.parse().ok().filter(|&x| x > 0).ok_or(format!("--runs {v}: a count, 1 or more"))?,
            "--format" => {
                format = match v.as_str() {
                    "table" => Format::Table,
                    "csv" => Format::Csv,
                    _ => return Err(format!("--format {v}: table or csv")),
                }
            }
            _ => {
                return Err(format!(
                    "unknown argument `{flag}`; the arguments are --n N, --runs R, --format table|csv"
                ));
            }
        }
    }
    Ok((n, runs, format))
}

/// One distribution's row: 256 bins, the median of `runs` launches, checked against the CPU.
fn row<S: HistSample>(
    backend: &Backend,
    name: &str,
    samples: &[S],
    (lower, upper): (S::Level, S::Level),
    runs: u32,
    bound_us: Option<f64>,
) -> Result<Vec<Cell>> {
    let n = samples.len();
    let want = histogram::cpu(samples, 256, lower, upper)?;
    let input = backend.upload(samples)?;
    let mut counts = backend.alloc::<u32>(256)?;
    let mut h = Histogram::<S>::new(backend);
    let us = experiment::time(backend, runs, || h.enqueue_even(&input, 0..n, &mut counts, lower, upper))?.median_us();
    let got = backend.download(&counts)?;
    if got != want {
        return Err(Error::Invalid(format!("histogram {name} n={n}: the counters differ from the CPU's")));
    }
    Ok(vec![
        Cell::Text(name.into()),
        Cell::Int(n as i64),
        Cell::Int(256),
        Cell::Num(us),
        Cell::Num((n * 4) as f64 / us / 1e3),
        bound_us.map_or(Cell::Empty, |b| Cell::Num(100.0 * b / us)),
        Cell::Text(format!("{:016x}", fnv(&got))),
        Cell::Verdict("PASS", None),
    ])
}

fn main() -> reduce_scan::MainResult {
    let (n, runs, format) = match args() {
        Ok(a) => a,
        Err(e) => {
            eprintln!("histogram_even: {e}");
            std::process::exit(2)
        }
    };
    let (backend, _) = Backend::select(BackendKind::Auto)?;
    let gpu = backend.is_gpu();
    let n = n.unwrap_or(if gpu { 1 << 28 } else { 1 << 16 });
    let runs = if gpu { runs } else { 1 };
    let columns = vec![
        Column::new("distribution", "data", 9, 0),
        Column::new("n", "n", 10, 0),
        Column::new("bins", "bins", 4, 0),
        Column::new("median_us", "µs", 9, 2),
        Column::new("gb_per_s", "GB/s", 7, 0),
        Column::new("read_bound_pct", "% bound", 7, 1),
        Column::new("counts_hash", "counts", 16, 0),
        Column::new("check", "check", 0, 0),
    ];
    let mut stdout = std::io::stdout();
    let mut report = Report::new(format, &mut stdout, columns);
    report.note(&format!(
        "{} · median of {runs} launch(es), the counters zeroed by a queued copy in each",
        backend.info()
    ));
    report.header();
    let bound_us = backend.info().peak_bandwidth.map(|bw| (n * 4) as f64 / bw * 1e6);
    for (name, sample, lower, upper) in DISTRIBUTIONS {
        let samples: Vec<u32> = (0..n as u64).map(sample).collect();
        report.row(&row(&backend, name, &samples, (lower, upper), runs, bound_us)?);
    }
    // `f32` in [0, 1) (24 bits of the hash), 256 bins over [0, 1): what `torch.histc` takes.
    let floats: Vec<f32> = (0..n as u64).map(|i| (mix(i) >> 40) as f32 / (1 << 24) as f32).collect();
    report.row(&row(&backend, "f32", &floats, (0.0, 1.0), runs, bound_us)?);
    report.finish(Default::default(), &[]);
    Ok(())
}
