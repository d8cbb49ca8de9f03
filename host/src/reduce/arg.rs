//! The position of the extreme: [`ArgReducer`]`<T, Min>` and `<T, Max>`, the library's argmin
//! and argmax (`cub::DeviceReduce::ArgMin` / `ArgMax`, `torch.argmin` / `torch.argmax`), and
//! the one-shot [`argmin`] and [`argmax`].
//!
//! ```
//! use reduce_scan::{ArgReducer, Backend, Max, Min};
//! let backend = Backend::emulator(); // Backend::gpu()? on a GPU host
//! let data = backend.upload(&[3.0f32, 9.5, -1.0, 9.5, -1.0])?;
//! let mut argmax = ArgReducer::<f32, Max>::new(&backend); // owns its storage; reuse it
//! let top = argmax.reduce(&data)?.expect("not empty");
//! assert_eq!((top.value, top.index), (9.5, 1)); // a tie goes to the lowest index
//! assert_eq!(argmax.reduce_range(&data, 2..5)?.map(|e| e.index), Some(3)); // indices into `data`
//! argmax.enqueue(&data, 0..5)?; // queued on the backend's stream
//! assert_eq!(argmax.result()?.map(|e| e.index), Some(1)); // waits for it
//!
//! let low = reduce_scan::argmin(&backend, &data)?.expect("not empty");
//! assert_eq!((low.value, low.index), (-1.0, 2));
//! let with_nan = backend.upload(&[1.0f64, f64::NAN, 7.0, f64::NAN])?;
//! assert_eq!(ArgReducer::<f64, Min>::new(&backend).reduce(&with_nan)?.map(|e| e.index), Some(1)); // NaN wins
//! assert!(reduce_scan::argmax(&backend, &backend.alloc::<u64>(0)?)?.is_none()); // empty: no index
//! # Ok::<(), reduce_scan::Error>(())
//! ```
//!
//! **What it answers** ([`Extremum`]): the extreme's value, as the input holds it (bit for bit,
//! a NaN's payload too), and its index in the buffer (a range's answer counts from the start
//! of the buffer, not of the range).
//!
//! * **Ties go to the lowest index**, as in CUB and PyTorch.
//! * **Floats:** values compare as IEEE 754's `<` and `>` do, so −0.0 and +0.0 tie (the lower
//!   index wins, whichever zero it holds), except that **a NaN is the extreme** for argmin and
//!   argmax alike, and the first NaN wins (as `torch.argmax` and `torch.argmin` do). This is
//!   not the total order of [`Reducer`](super::Reducer)'s min and max, which order −0.0 below
//!   +0.0 and answer a canonical NaN: an argmax answers a position, and keeps the input's value.
//! * **The index** is a `u32` on the device: every length the kernels take fits (n ≤
//!   2³² − 1, the library's limit for every reduction), and the largest index is one below it;
//!   [`Extremum::index`] gives it as a `u64`.
//! * **Empty input** has no extreme: `None` (CUB writes a sentinel, PyTorch raises).
//!
//! **Which kernel.** `arg_reduce__{type}_{min|max}` (`kernels::reduce::arg_reduce_generic`), one
//! launch: every thread keeps the first extreme of its share, read with 128-bit loads; warps
//! and the block reduce (value, index) pairs; the last block to finish combines the blocks'
//! pairs. Grid and block as every one-launch reduction of the library ([`super::one_pass`]).

use std::marker::PhantomData;
use std::ops::Range;

use kernels::types::{Max, Min};

use super::one_pass::{Shapes, Sizing};
use crate::backend::{Backend, DeviceBuffer, Kernel};
use crate::error::{Error, Result};
use crate::types::{Op, OpKind, PerElement, PerType, Value, check_layout};

/// The extreme of a reduction and where it is: what [`ArgReducer`] answers (CUB's
/// `KeyValuePair<int, T>`: `key` is the index).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Extremum<T> {
    /// The value, bit for bit as the input holds it.
    pub value: T,
    /// Its index in the buffer (the first, where the extreme repeats).
    pub index: u64,
}

/// The operators whose position can be asked: [`Min`] (argmin) and [`Max`] (argmax).
pub trait ExtremeKind: OpKind {}
impl ExtremeKind for Min {}
impl ExtremeKind for Max {}

/// `arg_reduce__{type}_{op}(input, values, indices, ticket, n)`: the partials and the answer
/// after them (`values`, `indices`: `grid + 1` each), the ticket.
pub type ArgArgs<T> = (*const T, *mut T, *mut u32, *mut u32, u32);

/// The kernels of one element type: `[min, max]`.
#[derive(Debug)]
pub struct ByExtreme;

impl PerElement for ByExtreme {
    type Of<T: Value> = [Kernel<ArgArgs<T>>; 2];
}

/// The twelve entries `arg_reduce__{type}_{min|max}`, named as `kernels::extreme_kernel!` names
/// them.
macro_rules! arg_kernels {
    ($($t:ident),*) => {
        PerType { $($t: [
            crate::kernel_ref!(instance kernels::reduce::arg_reduce::$t::min(a, v, i, t, n)),
            crate::kernel_ref!(instance kernels::reduce::arg_reduce::$t::max(a, v, i, t, n)),
        ]),* }
    };
}

/// Every argmin and argmax kernel, by element type.
pub static KERNELS: PerType<ByExtreme> = arg_kernels!(i32, u32, i64, u64, f32, f64);

/// The argmin (`op` = [`Op::Min`]) or argmax ([`Op::Max`]) kernel of `T`.
pub fn kernel<T: Value>(op: Op) -> Result<Kernel<ArgArgs<T>>> {
    match op {
        Op::Min => Ok(T::of(&KERNELS)[0]),
        Op::Max => Ok(T::of(&KERNELS)[1]),
        Op::Sum | Op::SumOfSquares => {
            Err(Error::Invalid(format!("an argument of the extreme is of min or max, not {}", op.name())))
        }
    }
}

/// Elements a thread of `arg_reduce` consumes per trip: four 128-bit loads.
pub fn items<T: Value>() -> u32 {
    kernels::collective::thread::items_per_trip::<T>() as u32
}

/// A reusable argmin (`O` = [`Min`]) or argmax ([`Max`]) of elements of `T`: the extreme and
/// its first index. It owns its storage (a value and an index per block, and a ticket) and
/// reuses it; it runs on the [`Backend`] it was made with (device and stream). The module docs
/// give the rules (ties, NaN, ±0.0, the index type, empty input).
pub struct ArgReducer<'b, T: Value, O: ExtremeKind> {
    backend: &'b Backend,
    sizing: Sizing,
    storage: Option<Shapes<T>>,
    last: Last,
    op: PhantomData<fn() -> O>,
}

/// What [`ArgReducer::result`] answers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Last {
    Nothing,
    Empty,
    Launched { grid: u32, offset: usize, slot: usize },
}

impl<'b, T: Value, O: ExtremeKind> ArgReducer<'b, T, O> {
    /// An argmin or argmax on `backend`, at the plan's block and grid for each length
    /// ([`one_pass::PLAN`](super::one_pass::PLAN)). Allocates nothing until the first call.
    pub fn new(backend: &'b Backend) -> Self {
        Self { backend, sizing: Sizing::Plan, storage: None, last: Last::Nothing, op: PhantomData }
    }

    /// The same at `block` threads per block (a power of two in 32..=1024) on the resident
    /// grid, for experiments and tests; the answer is the same at every block.
    pub fn with_block(backend: &'b Backend, block: u32) -> Result<Self> {
        Ok(Self { sizing: Sizing::block(block)?, ..Self::new(backend) })
    }

    /// The same at the block and grid `sizing` gives (`reduce --op argmax --block B
    /// --blocks-per-sm K`).
    pub fn with_sizing(backend: &'b Backend, sizing: Sizing) -> Self {
        Self { sizing, ..Self::new(backend) }
    }

    /// The extreme of every element of `input` and its first index; waits. `None` for an empty
    /// buffer.
    pub fn reduce(&mut self, input: &DeviceBuffer<T>) -> Result<Option<Extremum<T>>> {
        self.reduce_range(input, 0..input.len())
    }

    /// The extreme of `input[range]` (any start, any length) and its index in `input`; waits.
    pub fn reduce_range(&mut self, input: &DeviceBuffer<T>, range: Range<usize>) -> Result<Option<Extremum<T>>> {
        self.enqueue(input, range)?;
        self.result()
    }

    /// Queues the argmin or argmax of `input[range]` on the backend's stream and returns at once;
    /// read it with [`result`](Self::result), and keep `input` alive until then. An empty range
    /// queues nothing (its result is `None`).
    pub fn enqueue(&mut self, input: &DeviceBuffer<T>, range: Range<usize>) -> Result<()> {
        self.last = Last::Nothing;
        check_range(O::OP, input.len(), &range)?;
        check_layout::<T>()?;
        if range.is_empty() {
            self.last = Last::Empty;
            return Ok(());
        }
        super::one_pass::check_len(&format!("arg{}", O::OP.name()), range.len())?;
        let kernel = kernel::<T>(O::OP)?;
        let backend = self.backend;
        let shapes = self.storage.get_or_insert_with(|| Shapes::new(kernel.name, items::<T>(), true, self.sizing));
        let slot = shapes.for_len(backend, range.len())?;
        let (shape, words) = shapes.get(slot)?;
        let cfg = shape.config(range.len());
        let indices = words.indices.as_mut().map_or(std::ptr::null_mut(), DeviceBuffer::as_mut_ptr);
        let args = (
            input.as_ptr().wrapping_add(range.start),
            words.values.as_mut_ptr(),
            indices,
            words.ticket.as_mut_ptr(),
            range.len() as u32,
        );
        // SAFETY: the range lies within `input` (checked) and holds 1..=u32::MAX elements of T
        // (checked; T's layout is its kernel's); `values` and `indices` hold max_grid + 1 ≥
        // grid + 1 elements; the ticket is this reducer's, 0 between launches, and its launches
        // share the backend's one stream; the grid is within 2^29 threads (OnePass).
        unsafe { backend.launch(&kernel, cfg, args) }?;
        self.last = Last::Launched { grid: cfg.grid, offset: range.start, slot };
        Ok(())
    }

    /// Waits for the last [`enqueue`](Self::enqueue)d call and returns its answer (`None` for an
    /// empty range).
    pub fn result(&self) -> Result<Option<Extremum<T>>> {
        match (self.last, &self.storage) {
            (Last::Empty, _) => Ok(None),
            (Last::Launched { grid, offset, slot }, Some(shapes)) => {
                let (value, index) = shapes.words(slot)?.answer(self.backend, grid)?;
                let index = index.ok_or_else(|| Error::Invalid("the argument reducer has no index words".into()))?;
                if index as usize >= u32::MAX as usize {
                    return Err(Error::Invalid(format!("arg{}: the kernel left no index", O::OP.name())));
                }
                Ok(Some(Extremum { value, index: (offset + index as usize) as u64 }))
            }
            _ => Err(Error::Invalid("result() with nothing enqueued (or the last enqueue failed)".into())),
        }
    }

    /// The block and blocks per SM it launches `n` elements with.
    pub fn shape_at(&self, n: usize) -> (u32, Option<u32>) {
        self.sizing.at(n)
    }

    /// The block it launches a short range with (the block set by `with_block`, or the plan's
    /// first row). Since the plan's block depends on the length, [`shape_at`](Self::shape_at)
    /// says which block a length gets.
    #[deprecated(note = "the plan's block depends on the length: use `shape_at(n).0`")]
    pub fn block(&self) -> u32 {
        self.sizing.at(1).0
    }
}

/// Is `range` within a buffer of `len` elements? One line naming the operation otherwise.
pub(crate) fn check_range(op: Op, len: usize, range: &Range<usize>) -> Result<()> {
    if range.start > range.end || range.end > len {
        return Err(Error::Invalid(format!(
            "arg{} of elements {}..{} of a buffer of {len}: the range must lie within the buffer",
            op.name(),
            range.start,
            range.end,
        )));
    }
    Ok(())
}

/// The smallest element of `input` and its first index (a one-shot [`ArgReducer`]`<T, Min>`):
/// NaN is the smallest, ties go to the lowest index; `None` for an empty buffer.
pub fn argmin<T: Value>(backend: &Backend, input: &DeviceBuffer<T>) -> Result<Option<Extremum<T>>> {
    ArgReducer::<T, Min>::new(backend).reduce(input)
}

/// The largest element of `input` and its first index (a one-shot [`ArgReducer`]`<T, Max>`):
/// NaN is the largest, ties go to the lowest index; `None` for an empty buffer.
pub fn argmax<T: Value>(backend: &Backend, input: &DeviceBuffer<T>) -> Result<Option<Extremum<T>>> {
    ArgReducer::<T, Max>::new(backend).reduce(input)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cpu::arg_reference;

    #[test]
    fn ties_nan_zeros_ranges_and_errors() {
        let b = Backend::emulator();
        let data = b.upload(&[0.0f32, -0.0, 5.0, f32::NAN, 5.0, f32::NAN]).unwrap();
        let mut max = ArgReducer::<f32, Max>::new(&b);
        assert_eq!(max.reduce(&data).unwrap().map(|e| e.index), Some(3));
        assert_eq!(max.reduce_range(&data, 0..3).unwrap().map(|e| e.index), Some(2));
        let zeros = max.reduce_range(&data, 0..2).unwrap().unwrap();
        assert_eq!((zeros.index, zeros.value.to_bits()), (0, 0)); // ±0.0 tie: the first
        let mut min = ArgReducer::<f32, Min>::new(&b);
        assert_eq!(min.reduce_range(&data, 1..3).unwrap().map(|e| (e.index, e.value.to_bits())), Some((1, 1 << 31)));
        assert_eq!(min.reduce_range(&data, 4..6).unwrap().map(|e| e.index), Some(5));
        assert_eq!(min.reduce_range(&data, 4..4).unwrap(), None);
        let e = min.reduce_range(&data, 4..7).unwrap_err().to_string();
        assert_eq!(
            e,
            "invalid request: argmin of elements 4..7 of a buffer of 6: the range must lie within the buffer"
        );
        assert!(min.result().unwrap_err().to_string().contains("nothing enqueued"));
        assert!(ArgReducer::<u32, Min>::with_block(&b, 100).is_err());
    }

    #[test]
    fn each_row_of_the_plan_gives_the_reference() {
        let b = Backend::emulator();
        let n = (1 << 22) + 5; // past the first row: block 1024
        let data: Vec<i32> = (0..n as i32).map(|i| i.wrapping_mul(-1_640_531_535) >> 9).collect();
        let buf = b.upload(&data).unwrap();
        let mut max = ArgReducer::<i32, Max>::new(&b);
        for (len, shape) in [(n, (1024, None)), (1 << 20, (256, None)), (n, (1024, None))] {
            assert_eq!(max.shape_at(len), shape, "n = {len}");
            let got = max.reduce_range(&buf, 0..len).unwrap().unwrap();
            let (value, index) = arg_reference(false, &data[..len]).unwrap();
            assert_eq!((got.value, got.index), (value, index), "n = {len}, shape {shape:?}");
        }
    }

    #[test]
    fn every_block_gives_the_reference() {
        let b = Backend::emulator();
        let data: Vec<i64> = (0..20_011).map(|i: i64| (i * 7919) % 1009 - (i % 3) * 2000).collect();
        let buf = b.upload(&data).unwrap();
        for block in [32, 128, 1024] {
            let got = ArgReducer::<i64, Max>::with_block(&b, block).unwrap().reduce(&buf).unwrap().unwrap();
            let (value, index) = arg_reference(false, &data).unwrap();
            assert_eq!((got.value, got.index), (value, index), "block {block}");
        }
    }
}
