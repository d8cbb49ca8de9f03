//! The library's histogram (`cub::DeviceHistogram::HistogramEven`, `torch.histc`,
//! `torch.bincount`): even bins over a value range, counted per block in shared memory with
//! shared atomics, merged into global memory with global atomics. One generic kernel,
//! [`histogram_even()`], instantiated for `u8`, `u16`, `u32`, `i32` and `f32` samples
//! (`histogram_even__u8`, …); the host's `reduce_scan::Histogram` launches it.
//!
//! **Which bin.** [`Bins`], the one rule the kernel and the host's CPU reference both call:
//! a sample `s` with `lower ≤ s < upper` falls in bin `⌊(s − lower) · bins / (upper − lower)⌋`;
//! any other sample (NaN and ±∞ among them) is dropped. Integers: exact (CUB's integer rule). A
//! float: `(s − lower) · (bins / (upper − lower))` in `f32`, truncated (CUB's float rule), and a
//! sample whose product rounds up to `bins` is dropped, as CUB drops it.
//!
//! **The lesson** (`./x learn 26`): two small kernels of 256 bins over bytes, as *CUDA by
//! Example* (§9.4) teaches them: [`histogram_global`], every byte a global atomic, and
//! [`histogram_shared`], a histogram per block in shared memory, merged once. The library's
//! kernel goes further (copies per lane, 16-byte loads, any bins and range).

/// The lesson's first kernel: every byte a global atomic (its handle:
/// `histogram_global::histogram_global::KERNEL`).
pub mod histogram_global;
/// The lesson's kernel: a histogram per block in shared memory, merged once.
pub mod histogram_shared;

/// Bins of the histogram lesson's kernels (`histogram_global`, `histogram_shared`,
/// `./x learn 26`): one per byte value.
pub const HISTOGRAM_BINS: usize = 256;

use crate::device::kernel;
use crate::device::shared::{Shared, dynamic_shared};
use crate::device::slice::{AtomicSlice, Slice};
use crate::device::thread::{block_dim_x, block_idx_x, grid_dim_x, lane_id, sync_threads, thread_idx_x};

/// The most bins a histogram has: 4096 (16 KiB of shared counters for one copy).
pub const MAX_BINS: u32 = 4096;

/// Shared counter words of a block: 8192 (32 KiB). Up to 256 bins a block keeps 32 copies of
/// its histogram, one per lane of a warp (lane `l` counts bin `b` in word `32 b + l`, in bank
/// `l`: a warp's 32 atomics never queue for a bank, however skewed the data); above, as many
/// copies (a power of two) as fit in these words. The README's `hist256` measured 32 copies,
/// blocks of 1024, one block an SM, fastest on an H200.
pub const SHARED_WORDS: u32 = 8192;

/// Copies of the histogram a block keeps for `bins` bins (1..=[`MAX_BINS`]): the largest power
/// of two up to 32 whose counters fit in [`SHARED_WORDS`].
///
/// ```
/// use reduce_scan_kernels::histogram::copies;
/// assert_eq!((copies(1), copies(256), copies(257), copies(4096)), (32, 32, 16, 2));
/// ```
pub const fn copies(bins: u32) -> u32 {
    let mut c = 32;
    while c > 1 && bins * c > SHARED_WORDS {
        c /= 2;
    }
    c
}

/// Bytes of dynamic shared memory a launch for `bins` bins needs.
pub const fn shared_bytes(bins: u32) -> u32 {
    4 * bins * copies(bins)
}

/// The rule of even bins: `bins` bins over `[lower, upper)`, with what every sample's bin
/// needs computed once (a thread makes it at its start).
#[derive(Clone, Copy, Debug)]
pub struct Bins {
    mode: u32,
    bins: u32,
    /// Integers: `lower` modulo 2^32, and `upper − lower − 1` (`range − 1`, which fits 32 bits).
    lower: u32,
    last: u32,
    /// Integers: `upper − lower` (1..=2^32); log2 of the bin's width where `range / bins` is a
    /// whole power of two (`u32::MAX` where not): then a bin is a shift; else, where `range >
    /// bins`, `magic = ⌊bins · 2^32 / range⌋` (below 2^32): a bin is the high word of `d ·
    /// magic`, plus one where that falls short.
    range: u64,
    shift: u32,
    magic: u32,
    /// Floats: the bounds and `bins / (upper − lower)` in `f32` (the float rule's factor).
    lower_f: f32,
    upper_f: f32,
    scale: f32,
}

impl Bins {
    /// The rule from the kernel's parameters: `lower` and `upper` as `i64` bits for an integer
    /// sample type (`float` false), as `f32` bits for `f32`. The host checked `1 ≤ bins ≤ 4096`
    /// and `lower < upper` within the type's values (`upper` may be one past its largest).
    #[inline(always)]
    pub fn new(float: bool, bins: u32, lower: u64, upper: u64) -> Self {
        if float {
            let (lower_f, upper_f) = (f32::from_bits(lower as u32), f32::from_bits(upper as u32));
            let scale = bins as f32 / (upper_f - lower_f);
            return Bins {
                mode: FLOAT,
                bins,
                lower: 0,
                last: 0,
                range: 1,
                shift: u32::MAX,
                magic: 0,
                lower_f,
                upper_f,
                scale,
            };
        }
        let range = (upper as i64 - lower as i64) as u64;
        let width = range / bins as u64;
        // (A width of 2^32, one bin over all of `u32`, is no shift of a `u32`.)
        let shift = if width * bins as u64 == range && width.is_power_of_two() && width < 1 << 32 {
            width.trailing_zeros()
        } else {
            u32::MAX
        };
        // Once a thread, at its start (a 64-bit division).
        let magic = if range > bins as u64 { (((bins as u64) << 32) / range) as u32 } else { 0 };
        let mode = if shift != u32::MAX {
            SHIFT
        } else if magic != 0 {
            MAGIC
        } else {
            DIVIDE
        };
        Bins {
            mode,
            bins,
            lower: lower as u32,
            last: (range - 1) as u32,
            range,
            shift,
            magic,
            lower_f: 0.0,
            upper_f: 0.0,
            scale: 0.0,
        }
    }

    /// The bin of the integer `s` (as `u32`, two's complement for `i32`): `d = s − lower`
    /// modulo 2^32 is below `range` exactly when `lower ≤ s < upper` (a sample below `lower`
    /// wraps to `2^32 + s − lower ≥ upper − lower`, since `upper ≤ 2^32 + s` for every pair of
    /// values the type allows: the host checks the bounds against the type); then the bin is
    /// `⌊d · bins / range⌋`, exactly, with no division:
    /// * a shift, where the width is a power of two;
    /// * else, where `range > bins`, `q = ⌊d · magic / 2^32⌋`, which is the bin or one less
    ///   (`magic > bins · 2^32 / range − 1`, so `d · magic / 2^32 > d · bins / range − 1`), and
    ///   one more where `(q + 1) · range ≤ d · bins` (two 64-bit products);
    /// * else (fewer than `bins` values, so `d · bins < 2^24`) a 32-bit division.
    #[inline(always)]
    pub fn int_bin(&self, s: u32) -> Option<u32> {
        match self.mode() {
            SHIFT => self.int_bin_by::<SHIFT>(s),
            MAGIC => self.int_bin_by::<MAGIC>(s),
            _ => self.int_bin_by::<DIVIDE>(s),
        }
    }

    /// Which of [`int_bin`](Self::int_bin)'s ways this rule takes: [`SHIFT`], [`MAGIC`] or
    /// [`DIVIDE`] for integers, [`FLOAT`] for `f32`. The kernel picks its loop by it once, so
    /// no sample pays for the choice.
    #[inline(always)]
    pub fn mode(&self) -> u32 {
        self.mode
    }

    /// [`int_bin`](Self::int_bin) the way `MODE` says (which must be [`mode`](Self::mode)'s).
    #[inline(always)]
    pub fn int_bin_by<const MODE: u32>(&self, s: u32) -> Option<u32> {
        let d = s.wrapping_sub(self.lower);
        if d > self.last {
            return None;
        }
        Some(match MODE {
            SHIFT => d >> self.shift,
            MAGIC => {
                let q = ((d as u64 * self.magic as u64) >> 32) as u32;
                q + ((q as u64 + 1) * self.range <= d as u64 * self.bins as u64) as u32
            }
            _ => d * self.bins / self.range as u32,
        })
    }

    /// The bin of the float `s`: `(s − lower) · scale` truncated, dropped where it rounds up to
    /// `bins` (CUB's rule); NaN fails both comparisons and is dropped, as ±∞ are.
    #[inline(always)]
    pub fn float_bin(&self, s: f32) -> Option<u32> {
        if !(s >= self.lower_f && s < self.upper_f) {
            return None;
        }
        let q = ((s - self.lower_f) * self.scale) as u32;
        (q < self.bins).then_some(q)
    }
}

/// [`Bins::mode`]: a bin is a shift.
pub const SHIFT: u32 = 0;
/// [`Bins::mode`]: a bin is a multiply-high and one correction.
pub const MAGIC: u32 = 1;
/// [`Bins::mode`]: a bin is a 32-bit division (fewer values than bins).
pub const DIVIDE: u32 = 2;
/// [`Bins::mode`]: the float rule.
pub const FLOAT: u32 = 3;

/// A sample type of the histogram: how 16 bytes unpack into samples, and which bin a sample
/// falls in.
pub trait Sample: Copy + 'static {
    /// Whether it is `f32` (its bounds are `f32` bits; the integers' are `i64` bits).
    const FLOAT: bool;
    /// Samples in 16 bytes.
    const PER_QUAD: usize;
    /// Calls `f` on each sample of a little-endian 4-byte word, in order (straight-line code:
    /// no loop, so a thread's samples stay in registers).
    fn each_in_word(word: u32, f: impl FnMut(Self));
    /// The bin of `self` by `rule` the way `MODE` says ([`Bins::int_bin_by`], or for `f32`
    /// [`Bins::float_bin`]).
    fn bin_by<const MODE: u32>(self, rule: &Bins) -> Option<u32>;
    /// The bin of `self` by `rule` ([`Bins::int_bin`] or [`Bins::float_bin`]).
    fn bin(self, rule: &Bins) -> Option<u32>;
}

macro_rules! int_sample {
    ($($t:ty, $per:expr, [$($shift:expr),+]);*) => {$(
        impl Sample for $t {
            const FLOAT: bool = false;
            const PER_QUAD: usize = $per;
            #[inline(always)]
            fn each_in_word(word: u32, mut f: impl FnMut(Self)) {
                $(f((word >> $shift) as $t);)+
            }
            #[inline(always)]
            fn bin_by<const MODE: u32>(self, rule: &Bins) -> Option<u32> {
                rule.int_bin_by::<MODE>(self as u32)
            }
            #[inline(always)]
            fn bin(self, rule: &Bins) -> Option<u32> {
                rule.int_bin(self as u32)
            }
        }
    )*};
}
int_sample!(u8, 16, [0, 8, 16, 24]; u16, 8, [0, 16]; u32, 4, [0]; i32, 4, [0]);

impl Sample for f32 {
    const FLOAT: bool = true;
    const PER_QUAD: usize = 4;
    #[inline(always)]
    fn each_in_word(word: u32, mut f: impl FnMut(Self)) {
        f(f32::from_bits(word))
    }
    #[inline(always)]
    fn bin_by<const MODE: u32>(self, rule: &Bins) -> Option<u32> {
        rule.float_bin(self)
    }
    #[inline(always)]
    fn bin(self, rule: &Bins) -> Option<u32> {
        rule.float_bin(self)
    }
}

/// A thread's counting into its block's shared copies: the rule, and the thread's column.
/// (Methods, not closures: a closure's `#[inline(always)]` is unstable, and LLVM left the `u8`
/// form's 16-sample closure a call, with the samples in local memory.)
/// `MODE` is the rule's [`Bins::mode`], a constant, so each mode's loop is code of its own.
struct Counter<const MODE: u32> {
    local: Shared<u32>,
    rule: Bins,
    copies: u32,
    column: u32,
}

impl<const MODE: u32> Counter<MODE> {
    /// Counts `s` in its bin, if it has one.
    #[inline(always)]
    fn count<S: Sample>(&self, s: S) {
        if let Some(b) = s.bin_by::<MODE>(&self.rule) {
            // SAFETY: b < bins and column < copies, so the word is below bins × copies, the
            // array's length; in this barrier interval every access to it is atomic. (The
            // word's index in 32 bits: below 8192.)
            unsafe { self.local.red_add((b * self.copies + self.column) as usize, 1) };
        }
    }

    /// Counts the samples of a quad, each word by name (a loop over the quad is not unrolled
    /// for `u8` and `u16`, whose 16 and 8 samples make a long body, and the quad would go to
    /// local memory).
    #[inline(always)]
    fn quad<S: Sample>(&self, [w0, w1, w2, w3]: [u32; 4]) {
        S::each_in_word(w0, |s| self.count(s));
        S::each_in_word(w1, |s| self.count(s));
        S::each_in_word(w2, |s| self.count(s));
        S::each_in_word(w3, |s| self.count(s));
    }
}

/// Step 2 and 3 of [`histogram_even()`]'s execution: this thread's share of the samples
/// counted into its block's copies by `counter`.
#[inline(always)]
fn count_all<S: Sample, const MODE: u32>(counter: Counter<MODE>, input: Slice<S>, head: usize) {
    let (t, threads) = (thread_idx_x() as usize, block_dim_x() as usize);
    let count = |s: S| counter.count(s);
    if block_idx_x() == 0 && t < head {
        count(input.at(t));
    }
    let quads = (input.len() - head) / S::PER_QUAD;
    // SAFETY: head ≤ len, so the offset is within the buffer or one past its end.
    let g = unsafe { input.as_global().offset(head) }.cast::<u32>();
    // SAFETY: the quad is below `quads`, so its 16 bytes are in the input from `head`, whose
    // start is 16-byte aligned (the caller's promise).
    let load = |q: usize| unsafe { g.load_v4(4 * q) };
    let half = |q: usize| -> [[u32; 4]; HALF] { core::array::from_fn(|k| load(q + k * threads)) };
    let unpacked = |quad: [u32; 4]| counter.quad::<S>(quad);
    let whole = |q: usize| q + (2 * HALF - 1) * threads < quads;
    let step = grid_dim_x() as usize * 2 * HALF * threads;
    let mut q = block_idx_x() as usize * 2 * HALF * threads + t;
    if whole(q) {
        let mut first = half(q);
        loop {
            let second = half(q + HALF * threads);
            // Each quad by name, not by a loop over the array: the integer types' counting is
            // long enough that LLVM would not unroll the loop, and the halves would go to
            // local memory.
            let [a, b] = first;
            unpacked(a);
            unpacked(b);
            let more = whole(q + step);
            if more {
                first = half(q + step);
            }
            let [a, b] = second;
            unpacked(a);
            unpacked(b);
            q += step;
            if !more {
                break;
            }
        }
    }
    for k in 0..2 * HALF {
        if q + k * threads < quads {
            unpacked(load(q + k * threads));
        }
    }
    if block_idx_x() == 0
        && let Some(s) = input.get(head + quads * S::PER_QUAD + t)
    {
        count(s);
    }
}

/// Whole 16-byte quads a thread loads in half a step (`hist256`'s `HIST256_HALF`: two halves of
/// two quads, the next half in flight while the current one is counted).
pub const HALF: usize = 2;
const _: () = assert!(HALF == 2, "the loop below names the two quads of a half");

kernel! {
    /// `counts[b]` gains the number of samples of `input` in bin `b` of `bins` even bins over
    /// `[lower, upper)` (module docs: [`Bins`]; `lower`, `upper` as [`Bins::new`] reads them);
    /// `counts` holds `bins` counters (the host zeroes them first).
    ///
    /// # Concept
    /// **Privatize, then merge.** Global atomics on `bins` counters from every thread queue at
    /// L2 on the popular bins; a block counts into a histogram of its own in shared memory
    /// (`red.shared.add`: only its threads contend, and none waits for an old value), in
    /// [`copies`]`(bins)` copies so that a warp's lanes count in different banks, and adds each
    /// bin once into global memory at its end: `bins` global atomics a block, not one a sample.
    ///
    /// # Previous problem → fix
    /// `kernels::atomics::atomic_histogram` counts 4-byte loads into one shared copy: a warp's
    /// 32 atomics on a popular bin queue for one bank, and each value costs a bounds check.
    /// Here each lane has its own column (up to 256 bins), and a thread loads 16-byte quads
    /// half a step ahead of its counting, with one bounds check a step (the README's
    /// `hist256`, generalised to any sample type, bin count and range).
    ///
    /// # Execution
    /// 1. Zero `bins × copies` shared words; barrier.
    /// 2. Block 0's threads count the `head` samples before the first 16-byte boundary.
    /// 3. Every thread: steps of `2 × HALF` quads a block's width apart (grid-stride), loaded a
    ///    half ahead; each sample's bin counted with `red.shared.add` in column `lane % copies`;
    ///    then the last step's whole quads one by one, and block 0 the samples after the last
    ///    whole quad. The rule's way of binning ([`Bins::mode`]: a shift, a multiply-high, a
    ///    division, the float rule) is chosen once, before this step: each way has a loop of
    ///    its own ([`Sample::bin_by`] with the way a constant), so no sample pays for the
    ///    choice.
    /// 4. Barrier; each thread sums its bins' `copies` columns and adds the non-zero totals into
    ///    `counts` (`atomicAdd`).
    ///
    /// # Launch
    /// Any grid, blocks of 16 threads or more (fastest: blocks of 1024, one an SM);
    /// [`shared_bytes`]`(bins)` bytes of dynamic shared memory.
    ///
    /// # Preconditions
    /// `1 ≤ bins ≤ 4096`; `lower < upper`, within the sample type's values (an integer's
    /// `upper` may be one past its largest; an `f32`'s bounds finite, and their difference);
    /// `counts` holds `bins` counters; `head ≤ input.len()` and `input` from element `head`
    /// starts 16-byte aligned; blocks of at least 16 threads (the head and the tail, fewer than
    /// 16 samples each, are counted one a thread).
    ///
    /// # Safety
    /// The launch gives `shared_bytes(bins)` bytes of dynamic shared memory; the input's
    /// alignment from `head` is as promised; no one writes the input while the kernel runs.
    ///
    /// # Measured
    /// 2^28 samples, 256 bins, NVIDIA H200 (`docs/measurements/2026-11-29-h200/histogram-839cbea/histogram.csv`, commit 839cbea; `scripts/gpu/histogram.sh`, 2 interleaved rounds, each the median of 20 calls between CUDA events, every row checked; CUB's `DeviceHistogram::HistogramEven` and `torch.histc` on the same samples, × their median over ours): uniform over [0, 2^32): 249.5 µs (89.4 % of the read bound); CUB 1362.2–1365.3 µs (5.47×); 90 % in one bin: 249.2–249.4 µs (89.4–89.5 % of the read bound); CUB 1373.4–1382.6 µs (5.54×); [0, 1000), no shift: 317.9–318.0 µs (70.1–70.2 % of the read bound); CUB 612.8–626.0 µs (1.97×); uniform over [0, 2^30): 248.7–249.0 µs (89.6–89.7 % of the read bound); CUB 1425.5–1437.4 µs (5.77×); `f32` in [0, 1): 254.0–254.3 µs (87.7–87.8 % of the read bound); `torch.histc` 1142.5–1174.0 µs (4.62×).
    /// Every sample type through `reduce --op histogram --compare-cub` (`docs/measurements/2026-11-29-h200/histogram-839cbea/cli.csv`, one row each, the median of 20 launches): `u8` 256 bins over [0, 256) 113.6 µs, CUB 125.8 µs (1.11×); `u16` 256 bins over [0, 65536) 139.2 µs, CUB 652.1 µs (4.68×); `u32` 256 bins over [0, 4294967296) 250.0 µs, CUB 1360.7 µs (5.44×); `i32` 256 bins over [-2147483648, 2147483648) 249.7 µs, CUB 1380.7 µs (5.53×); `f32` 256 bins over [0, 1) 259.1 µs, CUB 274.0 µs (1.06×); `u32` 1000 bins over [0, 1000000) 320.4 µs, CUB 3281.7 µs (10.24×).
    pub unsafe fn histogram_even<S: Sample>(
        input: Slice<S>,
        head: u32,
        counts: AtomicSlice<u32>,
        bins: u32,
        lower: u64,
        upper: u64
    ) for [u8, u16, u32, i32, f32] {
        let copies = copies(bins) as usize;
        let words = bins as usize * copies;
        // SAFETY: the launch gives shared_bytes(bins) = 4 × words bytes (the caller's promise).
        let local = unsafe { dynamic_shared::<u32>(words) };
        let (t, threads) = (thread_idx_x() as usize, block_dim_x() as usize);
        let mut w = t;
        while w < words {
            // SAFETY: w < words, the array's length; each thread zeroes words of its own.
            unsafe { local.write(w, 0) };
            w += threads;
        }
        sync_threads();
        let rule = Bins::new(S::FLOAT, bins, lower, upper);
        let column = lane_id() & (copies as u32 - 1);
        // One loop a mode, chosen once (uniform over the grid).
        match rule.mode() {
            SHIFT => count_all(Counter::<SHIFT> { local, rule, copies: copies as u32, column }, input, head as usize),
            MAGIC => count_all(Counter::<MAGIC> { local, rule, copies: copies as u32, column }, input, head as usize),
            DIVIDE => count_all(Counter::<DIVIDE> { local, rule, copies: copies as u32, column }, input, head as usize),
            _ => count_all(Counter::<FLOAT> { local, rule, copies: copies as u32, column }, input, head as usize),
        }
        sync_threads();
        let mut b = t;
        while b < bins as usize {
            let mut total = 0u32;
            let mut c = 0;
            while c < copies {
                // Column (b + c) mod copies (a power of two): a warp's bins read different banks at once.
                // SAFETY: the word is below `words`; after the barrier no thread writes.
                total = total.wrapping_add(unsafe { local.read(b * copies + ((b + c) & (copies - 1))) });
                c += 1;
            }
            if total > 0 {
                counts.atomic_add(b, total);
            }
            b += threads;
        }
    }
}
