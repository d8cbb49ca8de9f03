//! The library's histogram (`reduce_scan::Histogram`): every sample type × bin counts that hurt
//! (1, 7, 31, 256 — the last with 32 copies a block —, 257, 1000, 4096) × sizes around a
//! quad, a block's step and the grid, at blocks 32, 256 and 1024, on random samples spread over
//! the range and past both ends; bincount; ranges at every start modulo 16 bytes (the samples
//! before the first whole quad); skewed data (90 % in one bin); the edges of each rule (lower,
//! the last value below upper, upper, NaN and ±∞ for `f32`, the whole `u32` and `i32` ranges);
//! every bad request's message. Every counter is compared with the CPU's count by the kernel's
//! own rule (`reduce_scan::histogram::cpu`); the same on the GPU where there is one.

use libtest_mimic::{Failed, Trial};
use reduce_scan::Backend;
use reduce_scan::histogram::{self, HistSample, Histogram};
use reduce_scan::input::{Pattern, typed};

const SEED: u64 = 0x415;
const BLOCKS: [u32; 3] = [32, 256, 1024];
const BINS: [u32; 7] = [1, 7, 31, 256, 257, 1000, 4096];
/// Around a quad of `u8` (16), a block's step at block 32 (2 × 2 quads × 32 threads), and past
/// one step of every block of the emulator's grid.
const SIZES: [usize; 6] = [1, 17, 255, 1025, 4099, 70_001];

fn err(e: impl std::fmt::Display) -> Failed {
    e.to_string().into()
}

/// A sample type with the data the tests give it: samples spread over and past `[lower,
/// upper)`.
trait Case: HistSample {
    /// The test's range.
    fn range() -> (Self::Level, Self::Level);
    /// `n` samples from `seed`, about a tenth outside the range on each side.
    fn samples(n: usize, seed: u64) -> Vec<Self>;
}

macro_rules! int_case {
    ($($t:ty, $lower:expr, $upper:expr);*) => {$(
        impl Case for $t {
            fn range() -> (i64, i64) {
                ($lower, $upper)
            }
            fn samples(n: usize, seed: u64) -> Vec<$t> {
                let (lo, hi) = ($lower as i128, $upper as i128);
                let span = hi - lo;
                typed::<u64>(n, seed, Pattern::Random)
                    .iter()
                    .map(|&w| {
                        let v = lo - span / 10 + (w as i128 % (span + span / 5 + 1));
                        v.clamp(<$t>::MIN as i128, <$t>::MAX as i128) as $t
                    })
                    .collect()
            }
        }
    )*};
}
int_case!(u8, 10, 250; u16, 100, 60_000; u32, 1_000, 3_000_000_000; i32, -70_000, 1_234_567);

impl Case for f32 {
    fn range() -> (f32, f32) {
        (-2.5, 7.25)
    }
    fn samples(n: usize, seed: u64) -> Vec<f32> {
        typed::<u64>(n, seed, Pattern::Random)
            .iter()
            .map(|&w| (w % 1_000_000) as f32 / 1_000_000.0 * 12.0 - 3.7)
            .collect()
    }
}

/// One histogram of `samples[range]` on `backend`, against the CPU.
fn check<S: Case>(
    backend: &Backend,
    samples: &[S],
    range: std::ops::Range<usize>,
    bins: u32,
    block: u32,
    bounds: (S::Level, S::Level),
) -> Result<(), Failed> {
    let what = format!(
        "histogram {} n={} (from {}) bins={bins} block={block} [{}, {})",
        S::NAME,
        range.len(),
        range.start,
        bounds.0,
        bounds.1
    );
    let want = histogram::cpu(&samples[range.clone()], bins, bounds.0, bounds.1).map_err(err)?;
    let input = backend.upload(samples).map_err(err)?;
    let mut counts = backend.alloc::<u32>(bins as usize).map_err(err)?;
    let mut h = Histogram::<S>::with_block(backend, block).map_err(err)?;
    // Twice: the second must start from zero again.
    for _ in 0..2 {
        h.even_range(&input, range.clone(), &mut counts, bounds.0, bounds.1).map_err(|e| format!("{what}: {e}"))?;
    }
    let got = backend.download(&counts).map_err(err)?;
    if let Some(b) = (0..bins as usize).find(|&b| got[b] != want[b]) {
        return Err(format!("{what}: bin {b} holds {}, the CPU counts {}", got[b], want[b]).into());
    }
    let after = backend.download(&input).map_err(err)?;
    // (A NaN equals no NaN: the same place holds one before and after.)
    #[allow(clippy::eq_op)]
    let same = after.iter().zip(samples).all(|(a, b)| a == b || (a != a && b != b));
    if !same {
        return Err(format!("{what}: the input was modified").into());
    }
    Ok(())
}

/// Every size × bin count at one block; the ranges at every start modulo 16 bytes.
fn matrix<S: Case>(backend: &Backend, block: u32, sizes: &[usize]) -> Result<(), Failed> {
    for &n in sizes {
        let samples = S::samples(n + 16, SEED ^ n as u64 ^ block as u64);
        for bins in BINS {
            check(backend, &samples[..n], 0..n, bins, block, S::range())?;
        }
        for start in 1..16 / std::mem::size_of::<S>() {
            check(backend, &samples, start..start + n, 256, block, S::range())?;
        }
    }
    Ok(())
}

/// 90 % of the samples in one bin (the contention a shared histogram's copies are for).
fn skewed<S: Case>(backend: &Backend, block: u32) -> Result<(), Failed> {
    let mut samples = S::samples(50_003, SEED ^ 9);
    let one = samples
        .iter()
        .copied()
        .find(|s| histogram::cpu(&[*s], 256, S::range().0, S::range().1).is_ok_and(|c| c.iter().sum::<u32>() == 1));
    let one = one.ok_or("no sample in the range")?;
    for (i, s) in samples.iter_mut().enumerate() {
        if i % 10 != 0 {
            *s = one;
        }
    }
    check(backend, &samples, 0..samples.len(), 256, block, S::range())
}

/// The rules' edges: the bounds themselves, one past, the whole range of the type.
fn edges(backend: &Backend) -> Result<(), Failed> {
    let u = [0u32, 1, 2, 999, 1000, 1001, u32::MAX - 1, u32::MAX, 1 << 31, (1 << 31) - 1];
    for (lo, hi) in [(0i64, 1i64 << 32), (1000, 1001), (1, u32::MAX as i64), (0, 1 << 31)] {
        for bins in [1, 3, 256, 4096] {
            check(backend, &u, 0..u.len(), bins, 256, (lo, hi))?;
        }
    }
    let i = [i32::MIN, i32::MIN + 1, -1, 0, 1, i32::MAX - 1, i32::MAX, -70_000, 1_234_566];
    for (lo, hi) in [(i32::MIN as i64, 1i64 << 31), (-1, 1), (-70_000, 1_234_567)] {
        for bins in [1, 2, 7, 4096] {
            check(backend, &i, 0..i.len(), bins, 256, (lo, hi))?;
        }
    }
    let b: Vec<u8> = (0..=255).collect();
    check(backend, &b, 0..256, 256, 32, (0, 256))?;
    check(backend, &b, 0..256, 7, 32, (3, 200))?;
    let below = f32::from_bits(7.25f32.to_bits() - 1);
    let f = [-2.5, 7.25, below, f32::NAN, f32::INFINITY, f32::NEG_INFINITY, -0.0, 0.0, 2.375, -2.4999998];
    for bins in [1, 3, 4096] {
        check(backend, &f, 0..f.len(), bins, 32, (-2.5, 7.25))?;
    }
    Ok(())
}

/// The integer rule (`kernels::histogram::Bins`, the kernel's and the CPU reference's, so the
/// comparisons above cannot see a fault of its own) against the exact formula in `i128`: every
/// mode (a shift, the magic multiply and its correction, the range of 2^32, fewer values than
/// bins) at random bounds, bin counts and samples, and at the bounds themselves.
fn rule() -> Result<(), Failed> {
    let r = typed::<u64>(200_000, SEED ^ 5, Pattern::Random);
    let mut k = 0;
    let mut next = || {
        k += 1;
        r[k % r.len()]
    };
    for case in 0..2000 {
        let bins = match case % 4 {
            0 => 1 + (next() % 4096) as u32,
            1 => 1 << (next() % 13),
            2 => [1, 3, 7, 255, 256, 257, 1000, 4095, 4096][(next() % 9) as usize],
            _ => 1 + (next() % 300) as u32,
        };
        // Bounds within u32, then shifted to i32 for half the cases.
        let (a, b) = match case % 5 {
            0 => (0i64, 1i64 << 32),
            1 => {
                let lo = (next() % (1 << 32)) as i64;
                (lo, lo + 1 + (next() % 5000) as i64)
            }
            _ => {
                let (x, y) = ((next() % (1 << 32)) as i64, (next() % (1 << 32)) as i64);
                (x.min(y), x.max(y) + 1)
            }
        };
        let b = b.min(1 << 32);
        let shift = if case % 2 == 0 { 0 } else { 1i64 << 31 };
        let (lo, hi) = (a - shift, b - shift);
        let bits = |x: i64| x as u64;
        let rule = kernels::histogram::Bins::new(false, bins, bits(lo), bits(hi));
        let range = (hi - lo) as i128;
        for j in 0..64 {
            let v = match j {
                0 => lo,
                1 => hi - 1,
                2 => hi,
                3 => lo - 1,
                _ => lo - 3 + (next() as i128 % (range + 6)) as i64,
            };
            if v < -shift || v >= (1i64 << 32) - shift {
                continue; // not a value of the type
            }
            let want = (v >= lo && v < hi).then(|| (((v - lo) as i128 * bins as i128) / range) as u32);
            let got = rule.int_bin(v as u32);
            if got != want {
                return Err(
                    format!("bins {bins} over [{lo}, {hi}): sample {v} in bin {got:?}, exactly {want:?}").into()
                );
            }
        }
    }
    Ok(())
}

/// Bincount: bin v counts the value v.
fn bincount(backend: &Backend) -> Result<(), Failed> {
    let data: Vec<i32> = typed::<u64>(10_007, SEED, Pattern::Random).iter().map(|&w| (w % 300) as i32 - 20).collect();
    let input = backend.upload(&data).map_err(err)?;
    let mut counts = backend.alloc::<u32>(257).map_err(err)?;
    Histogram::<i32>::new(backend).bincount(&input, &mut counts).map_err(err)?;
    let got = backend.download(&counts).map_err(err)?;
    for (v, &c) in got.iter().enumerate() {
        let want = data.iter().filter(|&&x| x == v as i32).count() as u32;
        if c != want {
            return Err(format!("bincount i32 n=10007 bins=257: bin {v} holds {c}, the CPU counts {want}").into());
        }
    }
    Ok(())
}

/// Each bad request: one line, before any launch.
fn errors() -> Result<(), Failed> {
    let b = Backend::emulator();
    let input = b.upload(&[1u8, 2, 3]).map_err(err)?;
    let floats = b.upload(&[1.0f32]).map_err(err)?;
    let mut none = b.alloc::<u32>(0).map_err(err)?;
    let mut many = b.alloc::<u32>(4097).map_err(err)?;
    let mut four = b.alloc::<u32>(4).map_err(err)?;
    let mut h = Histogram::<u8>::new(&b);
    let mut hf = Histogram::<f32>::new(&b);
    let got = [
        h.even(&input, &mut none, 0, 256).err(),
        h.even(&input, &mut many, 0, 256).err(),
        h.even(&input, &mut four, 5, 5).err(),
        h.even(&input, &mut four, 0, 257).err(),
        h.even_range(&input, 2..5, &mut four, 0, 256).err(),
        h.even_range(&input, 1..1, &mut four, 0, 256).err(),
        hf.even(&floats, &mut four, f32::NAN, 1.0).err(),
        hf.even(&floats, &mut four, -f32::MAX, f32::MAX).err(),
        hf.bincount(&floats, &mut four).err(),
        Histogram::<u8>::with_block(&b, 48).err(),
    ];
    let want = [
        "invalid request: histogram of 0 bins (the counter buffer's length): it must be 1..=4096",
        "invalid request: histogram of 4097 bins (the counter buffer's length): it must be 1..=4096",
        "invalid request: histogram of u8 samples over [5, 5): the bounds must satisfy 0 ≤ lower < upper ≤ 256",
        "invalid request: histogram of u8 samples over [0, 257): the bounds must satisfy 0 ≤ lower < upper ≤ 256",
        "invalid request: histogram of elements 2..5 of a buffer of 3: the range must lie within the buffer",
        "invalid request: histogram: n = 0; the kernels take n in 1..=4294967295",
        "invalid request: histogram of f32 samples over [NaN, 1): the bounds must be finite, lower < upper, and upper − lower finite",
        "invalid request: histogram of f32 samples over [-340282350000000000000000000000000000000, 340282350000000000000000000000000000000): the bounds must be finite, lower < upper, and upper − lower finite",
        "invalid request: bincount of f32 samples: it counts integers; use even bins",
        "invalid request: block = 48: it must be a power of two in 32..=1024",
    ];
    for (got, want) in got.into_iter().zip(want) {
        let got = got.map(|e| e.to_string());
        if got.as_deref() != Some(want) {
            return Err(format!("want `{want}`, got {got:?}").into());
        }
    }
    Ok(())
}

/// `reduce --op histogram` and `--op bincount` on the emulator: one PASS row for every sample
/// type, the table's note, and a sweep.
fn cli() -> Result<(), Failed> {
    let run = crate::common::reduce_on_the_emulator;
    for (op, ty, extra) in [
        ("histogram", "u8", &["--bins", "7"][..]),
        ("histogram", "u16", &["--lower", "100", "--upper", "50000"]),
        ("histogram", "u32", &["--bins", "1000", "--lower", "5", "--upper", "123456789"]),
        ("histogram", "i32", &["--lower", "-300", "--upper", "301"]),
        ("histogram", "f32", &["--bins", "4096", "--lower", "-1.5", "--upper", "2.25"]),
        ("bincount", "i32", &["--bins", "31"]),
        ("bincount", "u8", &[]),
    ] {
        let mut args = vec!["--op", op, "--type", ty, "--n", "5003", "--format", "csv"];
        args.extend(extra);
        let (code, out, err) = run(&args);
        let rows: Vec<&str> = out.lines().skip(1).collect();
        if code != 0 || rows.len() != 1 || !rows[0].starts_with(&format!("{op},{ty},")) || !rows[0].ends_with(",PASS") {
            return Err(format!("{}: exit {code}, want 0 and one PASS row:\n{out}{err}", args.join(" ")).into());
        }
    }
    let (code, out, _) = run(&["--op", "histogram", "--type", "u16", "--n", "3000", "--bins", "10"]);
    if code != 0 || !out.contains("histogram of 3000 u16 samples, 10 bins over [0, 65536)") || !out.contains("PASS") {
        return Err(format!("table: exit {code}\n{out}").into());
    }
    // --metrics: the emulator's counters of the row's one kernel: every sample read once (in
    // 32-byte sectors: 100,003 × 4 bytes, at most one partial sector a block more), counted by
    // shared atomics, the bins merged into global memory by far fewer global ones.
    let (code, out, err) =
        run(&["--op", "histogram", "--type", "u32", "--n", "100003", "--metrics", "--format", "csv"]);
    let lines: Vec<&str> = out.lines().filter(|l| !l.starts_with('#')).collect();
    let header: Vec<&str> = lines.first().map_or(vec![], |h| h.split(',').collect());
    let row: Vec<&str> = lines.get(1).map_or(vec![], |r| r.split(',').collect());
    let count = |name: &str| {
        header.iter().position(|h| *h == name).and_then(|i| row.get(i)).and_then(|v| v.parse::<u64>().ok())
    };
    let (sectors, shared, global) = (
        count("gld_sectors").unwrap_or(0),
        count("shared_atom_requests").unwrap_or(0),
        count("gatom_requests").unwrap_or(0) + count("gred_requests").unwrap_or(0),
    );
    if code != 0
        || !out.contains(",PASS")
        || !(100_003 * 4..=100_003 * 4 + 32 * 256).contains(&(sectors * 32))
        || global == 0
        || shared < 10 * global
    {
        return Err(format!(
            "histogram --metrics: exit {code}, gld_sectors {sectors}, shared atomics {shared}, global {global}:\n{out}{err}"
        )
        .into());
    }
    let (code, out, _) = run(&["--op", "bincount", "--type", "u32", "--sweep", "8..10"]);
    let rows = out.lines().filter(|l| l.starts_with("bincount,u32,") && l.ends_with(",PASS")).count();
    if code != 0 || rows != 3 {
        return Err(format!("--sweep 8..10: exit {code}, {rows} PASS rows, want 3\n{out}").into());
    }
    Ok(())
}

fn on(gpu: bool) -> Result<Backend, Failed> {
    if gpu { Backend::gpu().map_err(err) } else { Ok(Backend::emulator()) }
}

macro_rules! per_type {
    ($out:ident, $have_gpu:ident, $($t:ty),*) => {$(
        for block in BLOCKS {
            $out.push(
                Trial::test(format!("histogram::emulator::{}::block_{block}", <$t>::NAME), move || {
                    let b = Backend::emulator();
                    matrix::<$t>(&b, block, &SIZES)?;
                    skewed::<$t>(&b, block)
                })
                .with_kind("emulator"),
            );
        }
        $out.push(
            Trial::test(format!("histogram::gpu::{}", <$t>::NAME), move || {
                let b = on(true)?;
                for block in BLOCKS {
                    matrix::<$t>(&b, block, &[1, 17, 4099, (1 << 20) + 7, 1 << 24])?;
                    skewed::<$t>(&b, block)?;
                }
                Ok(())
            })
            .with_kind("gpu")
            .with_ignored_flag(!$have_gpu),
        );
    )*};
}

pub fn trials(have_gpu: bool) -> Vec<Trial> {
    let mut out = vec![
        Trial::test("histogram::errors", errors),
        Trial::test("histogram::rule", rule),
        Trial::test("histogram::cli", cli).with_kind("emulator"),
        Trial::test("histogram::emulator::edges", || edges(&Backend::emulator())).with_kind("emulator"),
        Trial::test("histogram::emulator::bincount", || bincount(&Backend::emulator())).with_kind("emulator"),
        Trial::test("histogram::gpu::edges", || edges(&on(true)?)).with_kind("gpu").with_ignored_flag(!have_gpu),
        Trial::test("histogram::gpu::bincount", || bincount(&on(true)?)).with_kind("gpu").with_ignored_flag(!have_gpu),
    ];
    per_type!(out, have_gpu, u8, u16, u32, i32, f32);
    out
}
