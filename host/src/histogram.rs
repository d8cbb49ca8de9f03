//! Histograms (`cub::DeviceHistogram::HistogramEven`, `torch.histc`, `torch.bincount`): the
//! count of samples in each of `bins` even bins over `[lower, upper)`, for `u8`, `u16`, `u32`,
//! `i32` and `f32` samples, 1 to 4096 bins, into a counter buffer of the caller's.
//!
//! ```
//! use reduce_scan::{Backend, Histogram};
//! let backend = Backend::emulator(); // Backend::gpu()? on a GPU host
//! let samples = backend.upload(&[0u32, 1, 5, 9, 10, 99, 3])?;
//! let mut counts = backend.alloc::<u32>(4)?; // one counter per bin: 4 bins
//! let mut histogram = Histogram::<u32>::new(&backend); // owns its storage; reuse it
//! histogram.even(&samples, &mut counts, 0, 12)?; // bins [0,3) [3,6) [6,9) [9,12); 99 dropped
//! assert_eq!(backend.download(&counts)?, [2, 2, 0, 2]);
//! histogram.bincount(&samples, &mut counts)?; // bin v counts the value v, for v < 4
//! assert_eq!(backend.download(&counts)?, [1, 1, 0, 1]);
//! let floats = backend.upload(&[0.5f32, -0.1, 0.99, f32::NAN, 1.0])?;
//! let mut two = backend.alloc::<u32>(2)?;
//! Histogram::<f32>::new(&backend).even(&floats, &mut two, 0.0, 1.0)?; // NaN, -0.1, 1.0 dropped
//! assert_eq!(backend.download(&two)?, [0, 2]);
//! # Ok::<(), reduce_scan::Error>(())
//! ```
//!
//! **Which bin** (`kernels::histogram::Bins`, the rule the kernel and [`cpu`] share): a sample
//! `s` with `lower ≤ s < upper` counts in bin `⌊(s − lower) · bins / (upper − lower)⌋`; every
//! other sample is dropped, NaN and ±∞ among them. Integers: exact, CUB's rule. `f32`:
//! `(s − lower) · (bins / (upper − lower))` in `f32`, truncated, and a sample whose product
//! rounds up to `bins` is dropped (CUB's rule; so a sample just below `upper` may be dropped
//! where the range is wide). The bounds are `i64` for the integer types (`upper` may be one past
//! the type's largest value: 256 for `u8`, 2^32 for `u32`) and `f32` for `f32` (finite).
//!
//! **Bad input**, one line of [`Error::Invalid`] before any launch: no counters or more than
//! 4096, `lower ≥ upper`, a bound outside the sample type or not finite, a range outside the
//! input, no samples (n = 0).
//!
//! **How** (`kernels::histogram::histogram_even`): each block counts into histograms of its
//! own in shared memory with shared atomics (32 copies up to 256 bins, one per lane), then adds
//! each bin once into the counters with a global atomic; blocks of 1024 threads, one an SM.

use std::fmt::Display;
use std::marker::PhantomData;
use std::ops::Range;

use kernels::device::global::Global;
use kernels::device::slice::{AtomicSlice, Slice};
use kernels::histogram::{Bins, MAX_BINS, Sample, histogram_even, shared_bytes};

use crate::backend::{Backend, DeviceBuffer, Element, Kernel, LaunchConfig};
use crate::error::{Error, Result};
use crate::ptx::KERNELS;

/// The kernel's parameters: the samples, the samples before the first 16-byte boundary, the
/// counters, the bin count, and the bounds' bits.
pub type HistogramArgs<S> = (Slice<S>, u32, AtomicSlice<u32>, u32, u64, u64);

/// A sample type of the histogram: `u8`, `u16`, `u32`, `i32`, `f32`.
pub trait HistSample:
    Element + Sample + Display + PartialOrd + histogram_even::Instance<Args = HistogramArgs<Self>>
{
    /// What a bound is: `i64` for the integers, `f32` for `f32`.
    type Level: Copy + Display + PartialOrd;
    /// The type's name (`u8`, …: the entry's suffix, `--type`'s value).
    const NAME: &'static str;
    /// The bounds as the kernel's parameters, checked: within the type's values (`upper` up to
    /// one past the largest) or finite, `lower < upper`.
    fn bounds(lower: Self::Level, upper: Self::Level) -> Result<(u64, u64)>;
    /// `v` as a bound (a bincount's `upper`, the bin count).
    fn level(v: u32) -> Self::Level;
    /// The default bounds of the command line: every value of an integer type, `[0, 1)` for
    /// `f32`.
    fn whole() -> (Self::Level, Self::Level);
    /// A bound written in decimal (`--lower`, `--upper`), or why it is none.
    fn parse_level(text: &str) -> std::result::Result<Self::Level, String>;
    /// The sample's bits, zero-extended (how CUB's harness reads it, little-endian).
    fn bits(self) -> u32;
    /// A sample from a random word: over `[lower, upper)` and a tenth of its width past each
    /// end, within the type's values.
    fn spread(word: u64, lower: Self::Level, upper: Self::Level) -> Self;
}

macro_rules! int_hist_sample {
    ($($t:ty),*) => {$(
        impl HistSample for $t {
            type Level = i64;
            const NAME: &'static str = stringify!($t);
            fn bounds(lower: i64, upper: i64) -> Result<(u64, u64)> {
                let (min, max) = (<$t>::MIN as i64, <$t>::MAX as i64 + 1);
                if lower < min || upper > max || lower >= upper {
                    return Err(Error::Invalid(format!(
                        "histogram of {} samples over [{lower}, {upper}): the bounds must satisfy {min} ≤ lower < upper ≤ {max}",
                        stringify!($t)
                    )));
                }
                Ok((lower as u64, upper as u64))
            }
            fn level(v: u32) -> i64 {
                v as i64
            }
            fn whole() -> (i64, i64) {
                (<$t>::MIN as i64, <$t>::MAX as i64 + 1)
            }
            fn parse_level(text: &str) -> std::result::Result<i64, String> {
                text.parse().map_err(|_| format!("`{text}` is not an integer"))
            }
            fn bits(self) -> u32 {
                self as u32
            }
            fn spread(word: u64, lower: i64, upper: i64) -> Self {
                let span = (upper - lower) as i128;
                let v = lower as i128 - span / 10 + (word as i128 % (span + span / 5 + 1));
                v.clamp(<$t>::MIN as i128, <$t>::MAX as i128) as $t
            }
        }
    )*};
}
int_hist_sample!(u8, u16, u32, i32);

impl HistSample for f32 {
    type Level = f32;
    const NAME: &'static str = "f32";
    fn bounds(lower: f32, upper: f32) -> Result<(u64, u64)> {
        // NaN fails `lower < upper`.
        if !(lower.is_finite() && upper.is_finite() && lower < upper) || !(upper - lower).is_finite() {
            return Err(Error::Invalid(format!(
                "histogram of f32 samples over [{lower}, {upper}): the bounds must be finite, lower < upper, and upper − lower finite"
            )));
        }
        Ok((lower.to_bits() as u64, upper.to_bits() as u64))
    }
    fn level(v: u32) -> f32 {
        v as f32
    }
    fn whole() -> (f32, f32) {
        (0.0, 1.0)
    }
    fn parse_level(text: &str) -> std::result::Result<f32, String> {
        text.parse().map_err(|_| format!("`{text}` is not a number"))
    }
    fn bits(self) -> u32 {
        self.to_bits()
    }
    fn spread(word: u64, lower: f32, upper: f32) -> Self {
        let span = upper as f64 - lower as f64;
        let at = (word >> 11) as f64 / (1u64 << 53) as f64;
        (lower as f64 - span / 10.0 + at * span * 1.2) as f32
    }
}

/// `n` samples from `seed` spread over `[lower, upper)` and a tenth of its width past each end
/// ([`HistSample::spread`]): the command line's input.
pub fn spread<S: HistSample>(n: usize, seed: u64, lower: S::Level, upper: S::Level) -> Vec<S> {
    crate::input::typed::<u64>(n, seed, crate::input::Pattern::Random)
        .iter()
        .map(|&w| S::spread(w, lower, upper))
        .collect()
}

/// The CPU's histogram of `samples` in `bins` even bins over `[lower, upper)` (checked as the
/// library checks them), by the kernel's own rule: the reference every test compares with.
pub fn cpu<S: HistSample>(samples: &[S], bins: u32, lower: S::Level, upper: S::Level) -> Result<Vec<u32>> {
    check_bins(bins)?;
    let (lo, hi) = S::bounds(lower, upper)?;
    let rule = Bins::new(S::FLOAT, bins, lo, hi);
    let mut counts = vec![0u32; bins as usize];
    for &s in samples {
        if let Some(b) = s.bin(&rule) {
            counts[b as usize] += 1;
        }
    }
    Ok(counts)
}

/// The bin count, checked: 1..=4096.
fn check_bins(bins: u32) -> Result<()> {
    if bins == 0 || bins > MAX_BINS {
        return Err(Error::Invalid(format!(
            "histogram of {bins} bins (the counter buffer's length): it must be 1..={MAX_BINS}"
        )));
    }
    Ok(())
}

/// Threads per block of the histogram unless asked: one block of 1024 an SM was fastest for
/// the README's `hist256` on an H200 (`docs/notes.md`, session 35).
pub const BLOCK: u32 = 1024;

/// Histograms of `S` samples: an object owning its temporary storage (the zeros its counters
/// start from), reused across calls. `even` and `bincount` wait; the `enqueue_` forms queue the
/// work on the backend's stream, and any download of the counters waits for it.
pub struct Histogram<'b, S: HistSample> {
    backend: &'b Backend,
    block: u32,
    zeros: Option<DeviceBuffer<u32>>,
    /// The block that fits for the last shared size asked (`(shared bytes, block)`): the
    /// occupancy query is made once, not at every launch of a timed loop.
    fitted: Option<(u32, u32)>,
    _samples: PhantomData<fn() -> S>,
}

impl<'b, S: HistSample> Histogram<'b, S> {
    /// Histograms on `backend`, blocks of [`BLOCK`] threads.
    pub fn new(backend: &'b Backend) -> Self {
        Histogram { backend, block: BLOCK, zeros: None, fitted: None, _samples: PhantomData }
    }

    /// The same with blocks of `block` threads (a power of two in 32..=1024).
    pub fn with_block(backend: &'b Backend, block: u32) -> Result<Self> {
        if !(32..=1024).contains(&block) || !block.is_power_of_two() {
            return Err(Error::Invalid(format!("block = {block}: it must be a power of two in 32..=1024")));
        }
        Ok(Histogram { block, ..Self::new(backend) })
    }

    /// `counts[b]` = the samples of `input` in bin `b` of `counts.len()` even bins over
    /// `[lower, upper)`; waits.
    pub fn even(
        &mut self,
        input: &DeviceBuffer<S>,
        counts: &mut DeviceBuffer<u32>,
        lower: S::Level,
        upper: S::Level,
    ) -> Result<()> {
        self.even_range(input, 0..input.len(), counts, lower, upper)
    }

    /// The same over `input[range]`; waits.
    pub fn even_range(
        &mut self,
        input: &DeviceBuffer<S>,
        range: Range<usize>,
        counts: &mut DeviceBuffer<u32>,
        lower: S::Level,
        upper: S::Level,
    ) -> Result<()> {
        self.enqueue_even(input, range, counts, lower, upper)?;
        self.backend.synchronize()
    }

    /// `counts[v]` = the samples of `input` equal to `v`, for `v < counts.len()`; every other
    /// sample is dropped (`torch.bincount` with `minlength = counts.len()`, whose larger values
    /// it leaves out). Integer samples only; waits.
    pub fn bincount(&mut self, input: &DeviceBuffer<S>, counts: &mut DeviceBuffer<u32>) -> Result<()> {
        if S::FLOAT {
            return Err(Error::Invalid("bincount of f32 samples: it counts integers; use even bins".into()));
        }
        let bins = counts.len().min(u32::MAX as usize) as u32;
        self.even_range(input, 0..input.len(), counts, S::level(0), S::level(bins))
    }

    /// Queues [`even_range`](Self::even_range) on the backend's stream; keep the buffers alive
    /// until a download of `counts` (or a synchronize) has waited for it.
    pub fn enqueue_even(
        &mut self,
        input: &DeviceBuffer<S>,
        range: Range<usize>,
        counts: &mut DeviceBuffer<u32>,
        lower: S::Level,
        upper: S::Level,
    ) -> Result<()> {
        let bins = counts.len().min(u32::MAX as usize) as u32;
        check_bins(bins)?;
        let (lo, hi) = S::bounds(lower, upper)?;
        if range.start > range.end || range.end > input.len() {
            return Err(Error::Invalid(format!(
                "histogram of elements {}..{} of a buffer of {}: the range must lie within the buffer",
                range.start,
                range.end,
                input.len()
            )));
        }
        crate::reduce::one_pass::check_len("histogram", range.len())?;
        let zeros = match &mut self.zeros {
            Some(z) => z,
            z => z.insert(self.backend.alloc::<u32>(MAX_BINS as usize)?),
        };
        self.backend.copy_range(zeros, 0..bins as usize, counts)?;
        let size = std::mem::size_of::<S>();
        let start = input.as_ptr().wrapping_add(range.start);
        let head = ((16 - start as usize % 16) % 16 / size).min(range.len());
        let kernel = Kernel::of(&KERNELS, <S as histogram_even::Instance>::KERNEL);
        let block = self.fitting_block(&kernel, bins)?;
        let cfg = LaunchConfig { grid: self.grid(range.len(), block), block, shared_bytes: shared_bytes(bins) };
        // SAFETY: the range lies within the input (checked), so the slice holds readable samples;
        // `counts` holds `bins` counters, touched by the kernel's atomics only.
        let samples = unsafe { Slice::from_raw_parts(Global::from(start), range.len()) };
        // SAFETY: the launch gives shared_bytes(bins) bytes; from `head` the samples start on a
        // 16-byte boundary (computed from the address above); 1 ≤ bins ≤ 4096 and the bounds
        // are checked; the block is a power of two in 32..=1024, so at least 16 threads count the
        // head and the tail.
        unsafe { self.backend.launch(&kernel, cfg, (samples, head as u32, counts.atomic(), bins, lo, hi)) }
    }

    /// The block asked, halved until one block fits on an SM: a kernel that needs more than 64
    /// registers a thread cannot run 1024 threads (the integer forms use 64 at `sm_70`: at the
    /// edge). Asked once for a shared size, then remembered.
    fn fitting_block(&mut self, kernel: &Kernel<HistogramArgs<S>>, bins: u32) -> Result<u32> {
        let shared = shared_bytes(bins);
        if let Some((bytes, block)) = self.fitted
            && bytes == shared
        {
            return Ok(block);
        }
        let mut block = self.block;
        while block > 32 && self.backend.occupancy(kernel.entry(), block, shared as usize)? == 0 {
            block /= 2;
        }
        self.fitted = Some((shared, block));
        Ok(block)
    }

    /// Blocks for `n` samples: one of 1024 threads an SM (as many threads an SM at smaller
    /// blocks), fewer where each block would not get a whole step of quads.
    fn grid(&self, n: usize, block: u32) -> u32 {
        let sms = self.backend.info().multiprocessors.max(1);
        let per_sm = (1024 / block).max(1);
        let per_block = block as usize * 4 * (16 / std::mem::size_of::<S>());
        (n.div_ceil(per_block) as u32).clamp(1, sms * per_sm)
    }
}
