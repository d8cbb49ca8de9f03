//! The sum of an `i32` device buffer, for library callers: [`Reducer`], a reusable object that
//! owns its temporary storage (as a CUB user keeps `d_temp_storage`), and the one-shot
//! [`sum`] / [`sum_range`].
//!
//! ```
//! use host::{Backend, sum::Reducer};
//! // The emulator here, so that this example runs anywhere; `Backend::gpu()?` on a GPU host.
//! let backend = Backend::emulator();
//! let data = backend.upload(&[1, 2, 3, -4])?;
//! let mut reducer = Reducer::new(&backend);
//! assert_eq!(reducer.sum(&data)?, 2);
//! assert_eq!(reducer.sum_range(&data, 1..3)?, 5); // no allocation: the storage is reused
//! # Ok::<(), host::Error>(())
//! ```
//!
//! **Which kernel.** [`choose`] is the one place the choice is made, from the measured table
//! [`SUM_PLAN`]: `atomic_accumulate` at every size, its block and grid by size. Its one launch
//! leaves the final sum on the device (each block adds its partial into the result with a
//! fire-and-forget `red.add`), it reads the input with 128-bit loads in a grid-stride loop
//! (so any grid works: resident blocks for small n, one block per tile for large n), and it
//! accepts any `i32` alignment, so sub-ranges work too.
//!
//! **Device and stream.** A [`Reducer`] runs on the [`Backend`] it was made with: a GPU chosen
//! by [`Backend::gpu_device`], on that backend's stream ([`Backend::with_new_stream`] gives
//! one of its own). [`Reducer::enqueue`] queues the launch without waiting; [`Reducer::result`]
//! waits for the stream and reads the answer.
//!
//! **What the caller gets.** The sum of an empty range is 0 (the identity of addition, as for
//! `Iterator::sum`), returned without touching the device. A range outside the buffer or
//! longer than the kernels' 32-bit length (`n ≤ u32::MAX`) is `Error::Invalid` with the
//! numbers; a device error is `Error::Cuda` / `Error::Emulator`.

use std::any::Any;
use std::ops::Range;

use kernels::types::Sum;

use super::Workspace;
use super::plan::{self, Geometry};
use super::registry::{self, Variant};
use super::typed::{OpKind, TypedState, Value, reduce_with};
use crate::backend::{Backend, DeviceBuffer};
use crate::error::{Error, Result};

/// A variant and a block size.
#[derive(Clone, Copy, Debug)]
pub struct Choice {
    /// The variant.
    pub variant: &'static Variant,
    /// Threads per block.
    pub block: u32,
    /// Blocks per SM of a grid-stride variant's grid (`None`: as many as fit, from the
    /// occupancy calculator; see [`Reduction::shaped`](super::Reduction::shaped)).
    pub blocks_per_sm: Option<u32>,
}

/// One row of [`SUM_PLAN`]: the variant and block for every `n` up to `max_n`.
#[derive(Clone, Copy, Debug)]
pub struct SizeRule {
    /// Largest `n` the row covers.
    pub max_n: usize,
    /// Variant name.
    pub variant: &'static str,
    /// Threads per block.
    pub block: u32,
    /// Blocks per SM (`None`: as many as fit).
    pub blocks_per_sm: Option<u32>,
}

/// What [`sum`] runs, by size: the first row whose `max_n` covers `n`. From
/// `docs/measurements/2026-11-22-h100/sum_shapes.csv` (NVIDIA H100 80GB HBM3, commit 07edd4e:
/// `atomic_accumulate` at blocks 128/256/512, each with the occupancy calculator's grid and with
/// one block per tile, 3 interleaved rounds of 30 runs; docs/results.md has the table), and the
/// block-1024 rows of `sum_shapes_1024.csv` there (a879790, 2 rounds) and of
/// `docs/measurements/2026-11-23-h200/sum_shapes.csv` (NVIDIA H200, a879790, 2 rounds):
///
/// * up to 2^22: block 256, as many blocks as fit (H100 2^20: 4.70 µs, the fastest row;
///   re-measured after `thread_sum_v4` lost its division, `docs/measurements/2026-11-23-h100/
///   sum_shapes.csv` at bfef8f2, 3 rounds: 4.51–4.61 µs, median 4.54, still the fastest of
///   blocks 128–1024 × both grids);
/// * up to 2^24: block 512, one block per tile of 16 × 512 elements, so every thread makes one
///   trip and no block loops (H100 2^24: 25.44–25.52 µs; block 1024 25.63–26.66; at bfef8f2
///   median 25.23 µs, block 1024 25.34, block 256 per tile 25.28);
/// * above: block 1024, one block per tile. On the H200 it is the fastest shape at 2^28
///   (232.2–232.4 µs; block 512 243.6–244.0, CUB 238.1–238.3), on the H100 it ties block 512
///   (2^28: 337.8–338.0 against 337.7–337.7; 2^26: 88.13–88.14 against 88.03–88.08), so one
///   table serves both GPUs.
///
/// Two 128-bit loads per trip instead of four (with block 512 one block per tile up to 2^26)
/// were measured on 2026-11-23 and not kept: at most 0.8% faster on the H100, 0.83× CUB on the
/// H200 at 2^28
/// (`kernels::reduce::ATOMIC_ACCUMULATE_LOADS` has the figures).
pub const SUM_PLAN: &[SizeRule] = &[
    SizeRule { max_n: 1 << 22, variant: "atomic_accumulate", block: 256, blocks_per_sm: None },
    SizeRule { max_n: 1 << 24, variant: "atomic_accumulate", block: 512, blocks_per_sm: Some(1024) },
    SizeRule { max_n: u32::MAX as usize, variant: "atomic_accumulate", block: 1024, blocks_per_sm: Some(1024) },
];

/// The variant and block [`sum`] uses for `n` elements on a device of compute capability `cc`:
/// the first row of [`SUM_PLAN`] that covers `n` and whose variant the device runs.
pub fn choose(n: usize, cc: (u32, u32)) -> Result<Choice> {
    for rule in SUM_PLAN.iter().filter(|r| n <= r.max_n) {
        let variant = registry::find(rule.variant)?;
        if cc >= variant.min_cc {
            return Ok(Choice { variant, block: rule.block, blocks_per_sm: rule.blocks_per_sm });
        }
    }
    Err(Error::Invalid(format!("n = {n}: no row of the sum plan covers it (n must be in 1..={})", u32::MAX)))
}

/// A reusable full reduction: it owns its temporary storage (a few device words), asks the
/// occupancy calculator once, and so allocates nothing on repeated calls.
pub struct Reducer<'b> {
    backend: &'b Backend,
    /// The choice, its resident blocks per SM, and the storage, once a first call made them.
    state: Option<(Choice, u32, Workspace)>,
    /// The same for the typed calls ([`reduce`](Self::reduce)), for the last type and operator.
    typed: Option<TypedState>,
}

impl<'b> Reducer<'b> {
    /// A reducer on `backend` (its device and stream). Allocates nothing until the first call.
    pub fn new(backend: &'b Backend) -> Self {
        Self { backend, state: None, typed: None }
    }

    /// The sum of every element of `input` (wrapping for integers); waits for it. Any
    /// [`Value`] type: `i32` takes the classic path ([`SUM_PLAN`]), the others
    /// [`reduce`](Self::reduce)`::<T, Sum>`.
    pub fn sum<T: Value>(&mut self, input: &DeviceBuffer<T>) -> Result<T> {
        self.sum_range(input, 0..input.len())
    }

    /// The sum of `input[range]` (any start element); waits for it.
    pub fn sum_range<T: Value>(&mut self, input: &DeviceBuffer<T>, range: Range<usize>) -> Result<T> {
        match (input as &dyn Any).downcast_ref::<DeviceBuffer<i32>>() {
            Some(ints) => {
                let s = self.sum_range_i32(ints, range)?;
                (&s as &dyn Any)
                    .downcast_ref::<T>()
                    .copied()
                    .ok_or_else(|| Error::Invalid("i32 sum as another type".into()))
            }
            None => self.reduce_range::<T, Sum>(input, range),
        }
    }

    /// `O` (`kernels::types::{Sum, Min, Max}`) over every element of `input`, for any [`Value`]
    /// type: one launch of `atomic_accumulate__{type}_{op}`; waits for it. Integer sums wrap;
    /// float min/max propagate NaN and order −0.0 < +0.0 (`kernels::types`); an empty buffer
    /// gives the identity. The storage is kept for the next call of the same type and operator.
    pub fn reduce<T: Value, O: OpKind>(&mut self, input: &DeviceBuffer<T>) -> Result<T> {
        self.reduce_range::<T, O>(input, 0..input.len())
    }

    /// [`reduce`](Self::reduce) over `input[range]`.
    pub fn reduce_range<T: Value, O: OpKind>(&mut self, input: &DeviceBuffer<T>, range: Range<usize>) -> Result<T> {
        reduce_with::<T, O>(self.backend, &mut self.typed, input, range)
    }

    /// The wrapping sum of `input[range]` of `i32`: the classic path.
    fn sum_range_i32(&mut self, input: &DeviceBuffer<i32>, range: Range<usize>) -> Result<i32> {
        if range.start == range.end && range.start <= input.len() {
            return Ok(0);
        }
        self.enqueue(input, range)?;
        self.result()
    }

    /// Queues the sum of `input[range]` on the backend's stream and returns at once; read it
    /// with [`result`](Self::result). An empty range is an error here (there is nothing to
    /// launch); [`sum_range`](Self::sum_range) answers 0 for it.
    pub fn enqueue(&mut self, input: &DeviceBuffer<i32>, range: Range<usize>) -> Result<()> {
        if range.start > range.end || range.end > input.len() {
            return Err(Error::Invalid(format!(
                "sum of elements {}..{} of a buffer of {}: the range must lie within the buffer",
                range.start,
                range.end,
                input.len()
            )));
        }
        let n = range.len();
        let geometry = self.prepare(n)?;
        let (choice, _, work) = self.state.as_mut().expect("prepare() made the state");
        work.retarget(geometry);
        // SAFETY: the range lies within `input` (checked above) and `geometry` is the chosen
        // variant's for n, which the workspace fits (prepare).
        unsafe { work.launch(self.backend, &choice.variant.finish, input, range.start, n) }
    }

    /// Waits for the last [`enqueue`](Self::enqueue)d sum and returns it.
    pub fn result(&self) -> Result<i32> {
        let (_, _, work) =
            self.state.as_ref().ok_or_else(|| Error::Invalid("result() before any sum was enqueued".into()))?;
        work.result(self.backend)
    }

    /// The geometry for `n`, (re)making the choice and storage only when they change.
    fn prepare(&mut self, n: usize) -> Result<Geometry> {
        let choice = choose(n, self.backend.info().compute_capability)?;
        let same = |c: &Choice| {
            std::ptr::eq(c.variant, choice.variant)
                && c.block == choice.block
                && c.blocks_per_sm == choice.blocks_per_sm
        };
        if let Some((c, resident, work)) = &self.state
            && same(c)
        {
            let g = plan::geometry(self.backend, choice.variant, n, choice.block, Some(*resident))?;
            if work.fits(&g) {
                return Ok(g);
            }
        }
        let resident = match choice.blocks_per_sm {
            Some(k) => k,
            None => plan::resident_per_sm(self.backend, choice.variant, choice.block)?,
        };
        let g = plan::geometry(self.backend, choice.variant, n, choice.block, Some(resident))?;
        self.state = Some((choice, resident, Workspace::new(self.backend, g, 0)?));
        Ok(g)
    }
}

/// The sum of every element of `buf`, any [`Value`] type (one call: allocates a [`Reducer`]'s
/// few words).
pub fn sum<T: Value>(backend: &Backend, buf: &DeviceBuffer<T>) -> Result<T> {
    Reducer::new(backend).sum(buf)
}

/// The sum of `buf[range]`. The range may start at any element (the kernel handles
/// the unaligned head and tail); an empty range sums to 0.
pub fn sum_range<T: Value>(backend: &Backend, buf: &DeviceBuffer<T>, range: Range<usize>) -> Result<T> {
    Reducer::new(backend).sum_range(buf, range)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn empty_ranges_sum_to_zero_and_bad_ranges_are_errors() {
        let b = Backend::emulator();
        let buf = b.upload(&[5, 6, 7]).unwrap();
        assert_eq!(sum_range(&b, &buf, 1..1).unwrap(), 0);
        let e = sum_range(&b, &buf, 2..4).unwrap_err().to_string();
        assert!(e.contains("2..4") && e.contains("buffer of 3"), "{e}");
        #[allow(clippy::reversed_empty_ranges)]
        let e = sum_range(&b, &buf, 2..1).unwrap_err().to_string();
        assert!(e.contains("within the buffer"), "{e}");
        assert_eq!(sum(&b, &buf).unwrap(), 18);
        assert_eq!(sum_range(&b, &buf, 1..3).unwrap(), 13);
        let empty = b.alloc::<i32>(0).unwrap();
        assert_eq!(sum(&b, &empty).unwrap(), 0);
    }

    #[test]
    fn typed_calls_on_one_reducer() {
        use kernels::types::{Max, Min};
        let b = Backend::emulator();
        let f: Vec<f64> = (0..5000).map(|i| (i as f64 - 2500.5) * 0.25).collect();
        let fb = b.upload(&f).unwrap();
        let u = b.upload(&[7u32, u32::MAX, 3]).unwrap();
        let mut r = Reducer::new(&b);
        assert_eq!(r.reduce::<f64, Max>(&fb).unwrap(), 624.625);
        assert_eq!(r.reduce::<f64, Min>(&fb).unwrap(), -625.125);
        assert_eq!(r.sum(&fb).unwrap(), f.iter().sum::<f64>()); // quarters: every sum is exact
        assert_eq!(r.sum(&u).unwrap(), 9); // wraps
        assert_eq!(r.reduce_range::<u32, Min>(&u, 0..1).unwrap(), 7);
        assert_eq!(r.reduce_range::<u32, Min>(&u, 1..1).unwrap(), u32::MAX);
        let e = r.reduce_range::<u32, Max>(&u, 2..5).unwrap_err().to_string();
        assert!(e.contains("2..5") && e.contains("buffer of 3"), "{e}");
        assert_eq!(r.sum(&b.upload(&[1i32, 2]).unwrap()).unwrap(), 3);
    }

    #[test]
    fn a_reducer_reuses_its_storage_across_sizes() {
        let b = Backend::emulator();
        let data: Vec<i32> = (0..5000).map(|i| i * 7 - 300).collect();
        let buf = b.upload(&data).unwrap();
        let mut r = Reducer::new(&b);
        for (i, n) in [5000usize, 17, 4096, 1, 5000].into_iter().enumerate() {
            let want = data[..n].iter().fold(0i32, |a, &x| a.wrapping_add(x));
            assert_eq!(r.sum_range(&buf, 0..n).unwrap(), want, "call {i}, n = {n}");
        }
        let words = |r: &Reducer<'_>| r.state.as_ref().and_then(|(_, _, w)| w.result.as_ref().map(|b| b.as_ptr()));
        let first = words(&r);
        r.sum(&buf).unwrap();
        assert!(first.is_some() && first == words(&r), "the storage was remade");
        assert!(choose(0, (9, 0)).is_ok() && choose(1 << 20, (7, 0)).is_ok());
    }
}
