//! The device layer's atomics on the emulator (issue #59): many threads of several blocks on the
//! same shared and global words, checked against a CPU count; and the counters of small launches
//! against a hand count. Their unit tests (each operation × type from a fixed word) are in
//! `device/src/atomic/rmw.rs`; their faults in `faults.rs` (`faults::atomic_*`,
//! `faults::store_races_*_atomic`).

use libtest_mimic::{Failed, Trial};
use reduce_scan::backend::{Backend, Kernel, LaunchConfig};
use reduce_scan::experiment;
use reduce_scan::ptx::KERNELS;

use kernels::atomics::{
    BINS, EVERY_WORDS, EveryFloat, EveryInt, atomic_every_float, atomic_every_int, atomic_histogram, atomic_inc_dec,
};

/// The sizes of the histogram: around a warp, a block, and past 2^16.
const SIZES: [usize; 8] = [1, 31, 32, 33, 1023, 1024, 1025, (1 << 16) + 7];
/// The block sizes.
const BLOCKS: [u32; 3] = [32, 256, 1024];

fn err(e: impl std::fmt::Display) -> Failed {
    e.to_string().into()
}

/// The GPU, or the emulator.
fn on(gpu: bool) -> Result<Backend, Failed> {
    if gpu { Backend::gpu().map_err(err) } else { Ok(Backend::emulator()) }
}

/// `n` pseudo-random words (xorshift32 from `seed`).
fn words(n: usize, seed: u32) -> Vec<u32> {
    let mut x = seed | 1;
    (0..n)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            x
        })
        .collect()
}

/// The histogram of `n` words on `block`-thread blocks (a grid of up to 8 blocks, each striding
/// the grid), against the CPU's count.
fn histogram(gpu: bool, n: usize, block: u32) -> Result<(), Failed> {
    let backend = on(gpu)?;
    let input = words(n, n as u32 ^ block);
    let mut want = vec![0u32; BINS];
    for w in &input {
        want[(w & 0xff) as usize] += 1;
    }
    let d_in = backend.upload(&input).map_err(err)?;
    let mut hist = backend.alloc::<u32>(BINS).map_err(err)?;
    let grid = (n.div_ceil(block as usize) as u32).clamp(1, 8);
    let k = Kernel::of(&KERNELS, atomic_histogram::KERNEL);
    let cfg = LaunchConfig { grid, block, shared_bytes: 0 };
    // SAFETY: the input is read only; `hist` is touched only through its atomics.
    unsafe { backend.launch(&k, cfg, (d_in.slice(), hist.atomic())) }.map_err(err)?;
    let got = backend.download(&hist).map_err(err)?;
    if let Some(b) = (0..BINS).find(|&b| got[b] != want[b]) {
        return Err(format!(
            "n = {n}, block {block}, grid {grid}: bin {b} holds {}, the CPU counts {}",
            got[b], want[b]
        )
        .into());
    }
    Ok(())
}

/// What [`atomic_every_int`] leaves in one set of words after the threads `gs`, as `u64` bits of
/// `T` (`bits` of them): `exch` and `cas` leave one of several values, checked apart (`None`).
fn every_int_want(gs: std::ops::Range<u64>, bits: u32) -> [Option<u64>; EVERY_WORDS] {
    let mask = if bits == 64 { u64::MAX } else { (1u64 << bits) - 1 };
    let k = gs.end - gs.start;
    let sum = gs.clone().map(|g| g + 1).fold(0u64, u64::wrapping_add);
    let (lo, hi) = (gs.start + 5, gs.end + 4);
    let seen = gs.clone().fold(0u64, |a, g| a | 1 << (g % 32));
    let xor = gs.clone().fold(0u64, |a, g| a ^ g);
    [
        Some(sum & mask),
        Some(0u64.wrapping_sub(k) & mask),
        Some(lo & mask),
        Some(hi & mask),
        Some(!seen & mask),
        Some(seen & mask),
        Some(xor & mask),
        None,
        None,
        Some(1),
        Some(0),
        Some(0),
    ]
}

/// [`atomic_every_int`] for `T` on `grid` blocks of `block` threads, each set of words checked.
fn every_int<T>(gpu: bool, grid: u32, block: u32) -> Result<(), Failed>
where
    T: EveryInt + reduce_scan::backend::Element + Into<i128>,
    T: atomic_every_int::Instance<Args = (kernels::device::global::GlobalMut<T>,)>,
{
    let backend = on(gpu)?;
    let bits = 8 * std::mem::size_of::<T>() as u32;
    let mut host = vec![T::of(0); EVERY_WORDS * (grid as usize + 1)];
    host[2] = T::MAX;
    host[4] = T::of(u64::MAX);
    let mut out = backend.upload(&host).map_err(err)?;
    let k = Kernel::of(&KERNELS, <T as atomic_every_int::Instance>::KERNEL);
    let cfg = LaunchConfig { grid, block, shared_bytes: 0 };
    // SAFETY: `out` holds 12 (grid + 1) elements.
    unsafe { backend.launch(&k, cfg, (out.global_mut(),)) }.map_err(err)?;
    let got = backend.download(&out).map_err(err)?;
    let mask = if bits == 64 { u64::MAX } else { (1u64 << bits) - 1 };
    let as_bits = |v: T| (v.into() as u64) & mask;
    let b = u64::from(block);
    let sets = std::iter::once(("global", 0..u64::from(grid) * b))
        .chain((0..u64::from(grid)).map(|blk| ("a block's shared", blk * b..(blk + 1) * b)));
    for (set, (name, gs)) in sets.enumerate() {
        let words = &got[set * EVERY_WORDS..(set + 1) * EVERY_WORDS];
        let want = every_int_want(gs.clone(), bits);
        for (i, (w, g)) in want.iter().zip(words).enumerate() {
            if let Some(w) = w
                && as_bits(*g) != *w
            {
                let ty = std::any::type_name::<T>();
                return Err(format!(
                    "{ty}, {grid}×{block}: {name} word {i} (set {set}) is {g:?}, expected bits {w:#x}"
                )
                .into());
            }
        }
        // exch and cas leave the g + 1 of one of the set's threads.
        for i in [7, 8] {
            let v = as_bits(words[i]);
            if !(gs.start + 1..=gs.end).contains(&v) {
                return Err(format!("{grid}×{block}: {name} word {i} is {v}, not g + 1 of a thread in {gs:?}").into());
            }
        }
    }
    Ok(())
}

/// [`atomic_inc_dec`] and [`atomic_every_float`] on `grid` blocks of `block` threads.
fn inc_dec_and_floats(gpu: bool, grid: u32, block: u32) -> Result<(), Failed> {
    let backend = on(gpu)?;
    let cfg = LaunchConfig { grid, block, shared_bytes: 0 };
    let words = 2 * (grid as usize + 1);
    let mut out = backend.alloc::<u32>(words).map_err(err)?;
    let k = Kernel::of(&KERNELS, atomic_inc_dec::KERNEL);
    // SAFETY: `out` holds 2 (grid + 1) elements.
    unsafe { backend.launch(&k, cfg, (out.global_mut(),)) }.map_err(err)?;
    let got = backend.download(&out).map_err(err)?;
    let inc = |k: u32| k % 10;
    let dec = |k: u32| (10 - k % 10) % 10;
    let mut want = vec![inc(grid * block), dec(grid * block)];
    for _ in 0..grid {
        want.extend([inc(block), dec(block)]);
    }
    if got != want {
        return Err(format!("atomicInc/atomicDec, {grid}×{block}: {got:?}, expected {want:?}").into());
    }
    every_float::<f32>(&backend, cfg)?;
    every_float::<f64>(&backend, cfg)
}

fn every_float<T>(backend: &Backend, cfg: LaunchConfig) -> Result<(), Failed>
where
    T: EveryFloat + reduce_scan::backend::Element + Into<f64>,
    T: atomic_every_float::Instance<Args = (kernels::device::global::GlobalMut<T>,)>,
{
    let (grid, block) = (cfg.grid, cfg.block);
    let mut out = backend.alloc::<T>(2 * (grid as usize + 1)).map_err(err)?;
    let k = Kernel::of(&KERNELS, <T as atomic_every_float::Instance>::KERNEL);
    // SAFETY: `out` holds 2 (grid + 1) elements.
    unsafe { backend.launch(&k, cfg, (out.global_mut(),)) }.map_err(err)?;
    let got: Vec<f64> = backend.download(&out).map_err(err)?.into_iter().map(Into::into).collect();
    let ty = std::any::type_name::<T>();
    let (b, all) = (f64::from(block), f64::from(grid * block));
    let exch_ok = |v: f64, from: f64, to: f64| v.fract() == 0.0 && v > from && v <= to;
    if got[0] != all || !exch_ok(got[1], 0.0, all) {
        return Err(format!("{ty}, {grid}×{block}: global add {} (expected {all}), exch {}", got[0], got[1]).into());
    }
    for blk in 0..grid as usize {
        let (add, exch) = (got[2 + 2 * blk], got[3 + 2 * blk]);
        if add != b || !exch_ok(exch, blk as f64 * b, (blk as f64 + 1.0) * b) {
            return Err(
                format!("{ty}, {grid}×{block}: block {blk}'s shared add {add} (expected {b}), exch {exch}").into()
            );
        }
    }
    Ok(())
}

/// The counters of a small histogram launch against a hand count: one block of 32 threads,
/// input `0, 1, …, 31` (bin i once each).
fn histogram_counters() -> Result<(), Failed> {
    let backend = Backend::emulator();
    let input: Vec<u32> = (0..32).collect();
    let d_in = backend.upload(&input).map_err(err)?;
    let mut hist = backend.alloc::<u32>(BINS).map_err(err)?;
    let k = Kernel::of(&KERNELS, atomic_histogram::KERNEL);
    let cfg = LaunchConfig { grid: 1, block: 32, shared_bytes: 0 };
    // SAFETY: as in `histogram`.
    let c =
        experiment::count(&backend, |b| unsafe { b.launch(&k, cfg, (d_in.slice(), hist.atomic())) }).map_err(err)?;
    // The warp's one shared atomicAdd: 32 lanes on 32 consecutive words, one wavefront. Its
    // merge: bins 0-31 non-zero, one global atomicAdd of 32 lanes on 128 bytes, 4 sectors.
    let want = [
        ("shared_atom_requests", 1.0),
        ("shared_atom_wavefronts", 1.0),
        ("shared_atom_bank_conflicts", 0.0),
        ("gatom_requests", 1.0),
        ("gatom_sectors", 4.0),
        ("gred_requests", 0.0),
        ("gred_sectors", 0.0),
        ("emu_atomics", 64.0),
    ];
    check_counters("atomic_histogram, 1×32, input 0..32", &c, &want)
}

/// The counters of [`atomic_inc_dec`] on 2 blocks of 64 threads: per warp, two shared atomics
/// (inc, dec) and two global ones, every lane on one word (one wavefront, one sector).
fn inc_dec_counters() -> Result<(), Failed> {
    let backend = Backend::emulator();
    let mut out = backend.alloc::<u32>(6).map_err(err)?;
    let k = Kernel::of(&KERNELS, atomic_inc_dec::KERNEL);
    let cfg = LaunchConfig { grid: 2, block: 64, shared_bytes: 0 };
    // SAFETY: `out` holds 2 (grid + 1) elements.
    let c = experiment::count(&backend, |b| unsafe { b.launch(&k, cfg, (out.global_mut(),)) }).map_err(err)?;
    let want = [
        ("shared_atom_requests", 8.0),
        ("shared_atom_wavefronts", 8.0),
        ("shared_atom_bank_conflicts", 0.0),
        ("gatom_requests", 8.0),
        ("gatom_sectors", 8.0),
        ("gred_requests", 0.0),
        ("emu_atomics", 512.0),
    ];
    check_counters("atomic_inc_dec, 2×64", &c, &want)
}

fn check_counters(what: &str, c: &experiment::Counters, want: &[(&str, f64)]) -> Result<(), Failed> {
    for &(key, v) in want {
        if c.get(key) != Some(v) {
            return Err(format!("{what}: {key} is {:?}, the hand count {v}\n{c}", c.get(key)).into());
        }
    }
    if !c.to_string().contains("gatom") {
        return Err(format!("{what}: experiment::count's table lacks the atomics' rows:\n{c}").into());
    }
    Ok(())
}

/// Every check on the emulator, and on the GPU where there is one (marked ignored otherwise):
/// the same kernels, the same exact answers.
pub fn trials(have_gpu: bool) -> Vec<Trial> {
    let mut trials = Vec::new();
    for (gpu, kind) in [(false, "emulator"), (true, "gpu")] {
        let trial = |name: String, run: Box<dyn FnOnce() -> Result<(), Failed> + Send>| {
            Trial::test(format!("atomics::{kind}::{name}"), run).with_kind(kind).with_ignored_flag(gpu && !have_gpu)
        };
        for block in BLOCKS {
            for n in SIZES {
                trials.push(trial(format!("histogram/block{block}/n{n}"), Box::new(move || histogram(gpu, n, block))));
            }
        }
        for (grid, block) in [(1, 32), (3, 64), (2, 1024), (5, 96)] {
            let name = |what: &str| format!("{what}/{grid}x{block}");
            trials.push(trial(name("every_int_i32"), Box::new(move || every_int::<i32>(gpu, grid, block))));
            trials.push(trial(name("every_int_u32"), Box::new(move || every_int::<u32>(gpu, grid, block))));
            trials.push(trial(name("every_int_i64"), Box::new(move || every_int::<i64>(gpu, grid, block))));
            trials.push(trial(name("every_int_u64"), Box::new(move || every_int::<u64>(gpu, grid, block))));
            trials.push(trial(name("inc_dec_and_floats"), Box::new(move || inc_dec_and_floats(gpu, grid, block))));
        }
    }
    trials.push(Trial::test("atomics::counters_of_a_histogram", histogram_counters));
    trials.push(Trial::test("atomics::counters_of_inc_dec", inc_dec_counters));
    trials
}
