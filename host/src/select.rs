//! Stream compaction (`cub::DeviceSelect::If`, `Flagged`, `Unique`, `cub::DevicePartition::If`,
//! `Flagged`; `torch.masked_select`, `torch.unique_consecutive`'s values): the elements a
//! predicate, a flag array or "differs from the one before" keeps, in order, and their count,
//! for `i32`, `u32`, `f32`, `u8` and `u16`, in one pass over the input.
//!
//! ```
//! use reduce_scan::select::{Select, predicate};
//! use reduce_scan::Backend;
//! let backend = Backend::emulator(); // Backend::gpu()? on a GPU host
//! let input = backend.upload(&[5i32, -1, 7, 7, 0, 3, 3, 3])?;
//! let mut output = backend.alloc::<i32>(8)?; // room for every element
//! let mut select = Select::<i32>::new(&backend); // owns its storage; reuse it
//! let kept = select.select_if(&input, predicate("lt:4")?, &mut output)?;
//! assert_eq!(backend.download_prefix(&output, kept)?, [-1, 0, 3, 3, 3]);
//! let kept = select.unique(&input, &mut output)?; // drops consecutive duplicates
//! assert_eq!(backend.download_prefix(&output, kept)?, [5, -1, 7, 0, 3]);
//! let flags = backend.upload(&[1u8, 0, 0, 1, 0, 0, 0, 2])?;
//! let kept = select.partition_flagged(&input, &flags, &mut output)?; // kept first, the rest reversed
//! assert_eq!((kept, backend.download(&output)?), (3, vec![5, 7, 3, 3, 3, 0, 7, -1]));
//! # Ok::<(), reduce_scan::Error>(())
//! ```
//!
//! **Predicates** ([`predicate`]): `lt:X`, `le:X`, `gt:X`, `ge:X`, `eq:X`, `ne:X`, `nonzero`;
//! NaN compares unordered (only `ne` and `nonzero` hold for it). **Unique** drops an element
//! equal (`==`) to the one before it: each NaN is kept, and `-0.0` after `0.0` is dropped.
//! **Partition**: the kept elements first, in order, then the others from the output's end
//! backwards (CUB's layout), the return value the kept count.
//!
//! **Bad input**, one line of [`Error::Invalid`] before any launch: no elements (n = 0), an
//! output (or, for the run-length encoding, lengths) shorter than the input, a flag array of
//! another length than the input, a range outside the input, a predicate that does not parse.
//!
//! **How** (`kernels::select::select`): tiles of 7168 elements; each flags its elements in
//! registers, counts them, and learns how many the tiles before it kept from the decoupled
//! look-back of the scan (`kernels::scan::lookback`), then stores its kept elements through
//! their indices compacted in shared memory, so that each warp writes whole lines.
//!
//! **Run-length encoding** ([`Select::run_length_encode`], `kernels::run_length::run_length`):
//! unique's pass, with each run's length written beside its first element; the look-back
//! carries a pair (the runs begun before a tile, and where the last began), so a run may span
//! any number of tiles.
//!
//! ```
//! use reduce_scan::select::Select;
//! let backend = reduce_scan::Backend::emulator();
//! let input = backend.upload(&[4u32, 4, 4, 0, 9, 9])?;
//! let (mut firsts, mut lengths) = (backend.alloc::<u32>(6)?, backend.alloc::<u32>(6)?);
//! let runs = Select::<u32>::new(&backend).run_length_encode(&input, &mut firsts, &mut lengths)?;
//! assert_eq!(backend.download_prefix(&firsts, runs)?, [4, 0, 9]);
//! assert_eq!(backend.download_prefix(&lengths, runs)?, [3, 1, 2]);
//! # Ok::<(), reduce_scan::Error>(())
//! ```

use std::ops::Range;

use kernels::device::global::{Global, GlobalMut};
use kernels::run_length::{RUN_LENGTH_STATUS_WORDS, run_length};
use kernels::scan::index::MAX_EPOCH;
pub use kernels::select::{ABOVE, BELOW, EQUAL, Predicate, UNORDERED, Widen};
use kernels::select::{FLAGGED, IF, PARTITION, SELECT_STATUS_SPACING, UNIQUE, select, select_block, select_tile};

use crate::backend::{Backend, DeviceBuffer, Kernel, LaunchConfig};
use crate::error::{Error, Result};
use crate::ptx::KERNELS;
use crate::types::Value;

/// The kernel's parameters: input, flags, output, the count, the status words, `n`, the epoch,
/// what to keep, the predicate's outcomes and operand, and whether the input is 16-byte aligned.
pub type SelectArgs<T> =
    (Global<T>, Global<u8>, GlobalMut<T>, GlobalMut<u32>, GlobalMut<u64>, u32, u32, u32, u32, u64, u32);

/// The run-length kernel's parameters: input, unique values, lengths, the run count, the status
/// words, `n`, the epoch, and whether the input is 16-byte aligned.
pub type RunLengthArgs<T> = (Global<T>, GlobalMut<T>, GlobalMut<u32>, GlobalMut<u32>, GlobalMut<u64>, u32, u32, u32);

/// An element type of the compaction and the run-length encoding: `i32`, `u32`, `f32`, and the
/// narrow `u8` and `u16` (widened to a word in the kernel's tile, `kernels::select::Widen`: the
/// same tile of 7168 elements, comparisons as the narrow type's).
///
/// ```
/// use reduce_scan::select::{Select, predicate};
/// let backend = reduce_scan::Backend::emulator();
/// let bytes = backend.upload(&[7u8, 7, 0, 255, 255, 3])?;
/// let mut select = Select::<u8>::new(&backend);
/// let mut out = backend.alloc::<u8>(6)?;
/// let kept = select.select_if(&bytes, predicate("gt:5")?, &mut out)?; // X must be a u8
/// assert_eq!(backend.download_prefix(&out, kept)?, [7, 7, 255, 255]);
/// let mut lengths = backend.alloc::<u32>(6)?;
/// let runs = select.run_length_encode(&bytes, &mut out, &mut lengths)?;
/// assert_eq!(backend.download_prefix(&out, runs)?, [7, 0, 255, 3]);
/// assert_eq!(backend.download_prefix(&lengths, runs)?, [2, 1, 2, 1]);
/// assert!(predicate::<u8>("gt:256").is_err()); // not a u8
/// # Ok::<(), reduce_scan::Error>(())
/// ```
pub trait SelectElement:
    crate::backend::Element
    + Widen
    + std::fmt::Display
    + std::str::FromStr
    + select::Instance<Args = SelectArgs<Self>>
    + run_length::Instance<Args = RunLengthArgs<Self>>
{
    /// The type's name: the entries' suffix (`select__u8`), `--type`'s value.
    const NAME: &'static str;
    /// 0 (`nonzero`'s operand).
    const ZERO: Self;
    /// The bits, zero-extended: the kernel's operand, CUB's files.
    fn to_bits64(self) -> u64;
    /// The value whose bits are the low bytes of `bits`: the inverse of
    /// [`to_bits64`](Self::to_bits64).
    fn from_bits64(bits: u64) -> Self;
    /// The same bits (how outputs are compared: a NaN equals its own bits)?
    fn same_bits(self, other: Self) -> bool {
        self.to_bits64() == other.to_bits64()
    }
    /// `x` as this type: exact below 2^24 (`f32`), the low bits for `u8` and `u16`.
    fn from_u32(x: u32) -> Self;
}

macro_rules! select_element {
    ($($t:ty),*) => {$(
        impl SelectElement for $t {
            const NAME: &'static str = <$t as kernels::types::Element>::NAME;
            const ZERO: $t = <$t as kernels::types::Element>::ZERO;
            fn to_bits64(self) -> u64 {
                Value::bits(self)
            }
            fn from_bits64(bits: u64) -> $t {
                <$t as Value>::from_bits_u64(bits)
            }
            fn from_u32(x: u32) -> $t {
                <$t as Value>::from_f64(x as f64)
            }
        }
    )*};
}
select_element!(i32, u32, f32);

macro_rules! narrow_select_element {
    ($($t:ident),*) => {$(
        impl SelectElement for $t {
            const NAME: &'static str = stringify!($t);
            const ZERO: $t = 0;
            fn to_bits64(self) -> u64 {
                self as u64
            }
            fn from_bits64(bits: u64) -> $t {
                bits as $t
            }
            fn from_u32(x: u32) -> $t {
                x as $t
            }
        }
    )*};
}
narrow_select_element!(u8, u16);

/// What a compaction keeps, and whether it is a partition.
#[derive(Clone, Copy)]
pub enum Selection<'a, T> {
    /// The elements for which the predicate holds (`DeviceSelect::If`).
    If(Predicate<T>),
    /// The elements whose flag byte is not 0 (`DeviceSelect::Flagged`); one flag per element
    /// of the input buffer (a range takes the same range of flags).
    Flagged(&'a DeviceBuffer<u8>),
    /// The first element and each one unequal to the one before (`DeviceSelect::Unique`).
    Unique,
    /// [`If`](Self::If) as a partition (`DevicePartition::If`).
    PartitionIf(Predicate<T>),
    /// [`Flagged`](Self::Flagged) as a partition (`DevicePartition::Flagged`).
    PartitionFlagged(&'a DeviceBuffer<u8>),
}

impl<T> Selection<'_, T> {
    /// The kernel's `how`, and the flags where there are some.
    fn how(&self) -> (u32, Option<&DeviceBuffer<u8>>) {
        match *self {
            Selection::If(_) => (IF, None),
            Selection::Flagged(f) => (FLAGGED, Some(f)),
            Selection::Unique => (UNIQUE, None),
            Selection::PartitionIf(_) => (IF | PARTITION, None),
            Selection::PartitionFlagged(f) => (FLAGGED | PARTITION, Some(f)),
        }
    }

    /// Is it a partition (every element written)?
    pub fn is_partition(&self) -> bool {
        self.how().0 & PARTITION != 0
    }
}

/// A predicate from its name: `lt:X`, `le:X`, `gt:X`, `ge:X`, `eq:X`, `ne:X` (compared with
/// the operand `X`, a value of `T`) or `nonzero`.
pub fn predicate<T: SelectElement>(text: &str) -> Result<Predicate<T>> {
    let bad = |why: String| {
        Error::Invalid(format!(
            "predicate `{text}`: {why}; expected lt:X, le:X, gt:X, ge:X, eq:X, ne:X (X of type {}) or nonzero",
            T::NAME
        ))
    };
    if text == "nonzero" {
        return Ok(Predicate { outcomes: BELOW | ABOVE | UNORDERED, operand: T::ZERO });
    }
    let (name, value) = text.split_once(':').ok_or_else(|| bad("no `:` before its operand".into()))?;
    let outcomes = match name {
        "lt" => BELOW,
        "le" => BELOW | EQUAL,
        "gt" => ABOVE,
        "ge" => ABOVE | EQUAL,
        "eq" => EQUAL,
        "ne" => BELOW | ABOVE | UNORDERED,
        _ => return Err(bad(format!("unknown comparison `{name}`"))),
    };
    let operand = value.parse::<T>().map_err(|_| bad(format!("`{value}` is not a value of type {}", T::NAME)))?;
    Ok(Predicate { outcomes, operand })
}

/// The CPU's compaction of `input` (`flags` for the flagged kinds: one per element): the
/// output the kernel must write (for a partition, every element) and the kept count. The
/// reference every test compares with.
pub fn cpu<T: SelectElement>(input: &[T], what: CpuSelection<'_, T>) -> (Vec<T>, usize) {
    let keep: Vec<bool> = match what {
        CpuSelection::If(p) | CpuSelection::PartitionIf(p) => {
            let p = p.widened();
            input.iter().map(|&x| p.holds(x.widen())).collect()
        }
        CpuSelection::Flagged(f) | CpuSelection::PartitionFlagged(f) => f.iter().map(|&b| b != 0).collect(),
        CpuSelection::Unique => (0..input.len()).map(|i| i == 0 || input[i] != input[i - 1]).collect(),
    };
    let mut out: Vec<T> = input.iter().zip(&keep).filter(|(_, k)| **k).map(|(x, _)| *x).collect();
    let kept = out.len();
    if matches!(what, CpuSelection::PartitionIf(_) | CpuSelection::PartitionFlagged(_)) {
        out.extend(input.iter().zip(&keep).filter(|(_, k)| !**k).map(|(x, _)| *x).rev());
    }
    (out, kept)
}

/// The CPU's run-length encoding of `input`: the first element of each run of equal (`==`)
/// consecutive elements, and each run's length (their sum is `input.len()`). The reference
/// every test compares [`Select::run_length_encode`] with.
pub fn cpu_run_length<T: SelectElement>(input: &[T]) -> (Vec<T>, Vec<u32>) {
    let (mut unique, mut lengths) = (Vec::new(), Vec::<u32>::new());
    for (i, &x) in input.iter().enumerate() {
        if i == 0 || x != input[i - 1] {
            unique.push(x);
            lengths.push(1);
        } else if let Some(l) = lengths.last_mut() {
            *l += 1;
        }
    }
    (unique, lengths)
}

/// [`Selection`] for the CPU reference: flags as a host slice.
#[derive(Clone, Copy, Debug)]
pub enum CpuSelection<'a, T> {
    /// As [`Selection::If`].
    If(Predicate<T>),
    /// As [`Selection::Flagged`].
    Flagged(&'a [u8]),
    /// As [`Selection::Unique`].
    Unique,
    /// As [`Selection::PartitionIf`].
    PartitionIf(Predicate<T>),
    /// As [`Selection::PartitionFlagged`].
    PartitionFlagged(&'a [u8]),
}

/// Compactions of `T` elements: an object owning its temporary storage (the look-back's status
/// words, one per tile, tagged with a new epoch per launch so they are zeroed only when
/// allocated; the count's word), reused across calls. The plain forms wait and return the kept
/// count; [`enqueue`](Self::enqueue) queues the work and leaves the count on the device.
pub struct Select<'b, T: SelectElement> {
    backend: &'b Backend,
    status: Option<DeviceBuffer<u64>>,
    epoch: u32,
    count: Option<DeviceBuffer<u32>>,
    _elements: std::marker::PhantomData<fn() -> T>,
}

impl<'b, T: SelectElement> Select<'b, T> {
    /// Compactions on `backend`.
    pub fn new(backend: &'b Backend) -> Self {
        Select { backend, status: None, epoch: 0, count: None, _elements: std::marker::PhantomData }
    }

    /// `output[..k]` = the elements of `input` for which `predicate` holds, in order; returns
    /// `k`. `output` holds at least as many elements as `input`; waits.
    pub fn select_if(
        &mut self,
        input: &DeviceBuffer<T>,
        predicate: Predicate<T>,
        output: &mut DeviceBuffer<T>,
    ) -> Result<usize> {
        self.run(input, Selection::If(predicate), output)
    }

    /// `output[..k]` = the elements of `input` whose flag is not 0, in order; returns `k`.
    pub fn flagged(
        &mut self,
        input: &DeviceBuffer<T>,
        flags: &DeviceBuffer<u8>,
        output: &mut DeviceBuffer<T>,
    ) -> Result<usize> {
        self.run(input, Selection::Flagged(flags), output)
    }

    /// `output[..k]` = the first element of `input` and every one unequal to the one before it;
    /// returns `k`.
    pub fn unique(&mut self, input: &DeviceBuffer<T>, output: &mut DeviceBuffer<T>) -> Result<usize> {
        self.run(input, Selection::Unique, output)
    }

    /// [`select_if`](Self::select_if), and the other elements after them, from the output's end
    /// backwards; returns the kept count.
    pub fn partition_if(
        &mut self,
        input: &DeviceBuffer<T>,
        predicate: Predicate<T>,
        output: &mut DeviceBuffer<T>,
    ) -> Result<usize> {
        self.run(input, Selection::PartitionIf(predicate), output)
    }

    /// [`flagged`](Self::flagged) as a partition; returns the kept count.
    pub fn partition_flagged(
        &mut self,
        input: &DeviceBuffer<T>,
        flags: &DeviceBuffer<u8>,
        output: &mut DeviceBuffer<T>,
    ) -> Result<usize> {
        self.run(input, Selection::PartitionFlagged(flags), output)
    }

    /// Any [`Selection`] of all of `input`; waits and returns the kept count.
    pub fn run(
        &mut self,
        input: &DeviceBuffer<T>,
        what: Selection<'_, T>,
        output: &mut DeviceBuffer<T>,
    ) -> Result<usize> {
        self.waiting(|s, count| s.enqueue(input, 0..input.len(), what, output, count))
    }

    /// Run-length encoding (`cub::DeviceRunLengthEncode::Encode`,
    /// `torch.unique_consecutive(return_counts=True)`): `unique[..k]` = the first element of
    /// each run of equal (`==`) consecutive elements of `input`, `lengths[..k]` the runs'
    /// lengths; returns `k`, the number of runs. `unique` and `lengths` hold at least as many
    /// elements as `input` (a run per element at most); waits.
    pub fn run_length_encode(
        &mut self,
        input: &DeviceBuffer<T>,
        unique: &mut DeviceBuffer<T>,
        lengths: &mut DeviceBuffer<u32>,
    ) -> Result<usize> {
        self.waiting(|s, runs| s.enqueue_run_length(input, 0..input.len(), unique, lengths, runs))
    }

    /// `queue` with the object's count word, then the count it leaves there (a wait).
    fn waiting(&mut self, queue: impl FnOnce(&mut Self, &mut DeviceBuffer<u32>) -> Result<()>) -> Result<usize> {
        let mut count = match self.count.take() {
            Some(c) => c,
            None => self.backend.alloc::<u32>(1)?,
        };
        let queued = queue(self, &mut count);
        let kept = queued.and_then(|()| self.backend.read_element(&count, 0));
        self.count = Some(count);
        Ok(kept? as usize)
    }

    /// The status array with room for `words` words, and a new epoch on it (reallocated, so
    /// zeroed, where it is too short or its epochs are spent).
    fn next_status(&mut self, words: usize) -> Result<GlobalMut<u64>> {
        if self.status.as_ref().is_none_or(|s| s.len() < words) || self.epoch >= MAX_EPOCH {
            // Zeroed: no word of it carries an epoch yet.
            self.status = Some(self.backend.alloc::<u64>(words.max(64))?);
            self.epoch = 0;
        }
        self.epoch += 1;
        self.status.as_mut().map(DeviceBuffer::global_mut).ok_or_else(|| Error::Invalid("no status".into()))
    }

    /// Queues the compaction of `input[range]` into `output[..range.len()]` (flags: the same
    /// range of the flag buffer), the kept count into `count[0]`; keep the buffers alive until a
    /// download of `count` or `output` (or a synchronize) has waited for it.
    pub fn enqueue(
        &mut self,
        input: &DeviceBuffer<T>,
        range: Range<usize>,
        what: Selection<'_, T>,
        output: &mut DeviceBuffer<T>,
        count: &mut DeviceBuffer<u32>,
    ) -> Result<()> {
        let (how, flags) = what.how();
        let n = self.check("select", input, &range, flags, output, count)?;
        let tiles = n.div_ceil(select_tile::<T>() as usize);
        let status = self.next_status(tiles * SELECT_STATUS_SPACING)?;
        let start = input.as_ptr().wrapping_add(range.start);
        let flag_bytes = flags.map_or(start.cast::<u8>(), |f| f.as_ptr().wrapping_add(range.start));
        let (outcomes, operand) = match what {
            Selection::If(p) | Selection::PartitionIf(p) => (p.outcomes, p.operand.to_bits64()),
            _ => (0, 0),
        };
        let kernel = Kernel::of(&KERNELS, <T as select::Instance>::KERNEL);
        let cfg = LaunchConfig { grid: tiles as u32, block: select_block::<T>(), shared_bytes: 0 };
        let aligned = (start as usize).is_multiple_of(16) as u32;
        let args = (
            Global::from(start),
            Global::from(flag_bytes),
            output.global_mut(),
            count.global_mut(),
            status,
            n as u32,
            self.epoch,
            how,
            outcomes,
            operand,
            aligned,
        );
        // SAFETY: checked above: the range lies in the input (n ≥ 1 elements from `start`, 16-byte
        // aligned where `aligned` says so), the output holds n elements and is another buffer,
        // the flags (where read) n bytes from the same index, the count one word; the status
        // array holds `tiles × SELECT_STATUS_SPACING` words, zeroed at allocation, and the epoch
        // is new on it; the grid and block are the kernel's Launch section's.
        unsafe { self.backend.launch(&kernel, cfg, args) }
    }

    /// Queues the run-length encoding of `input[range]` into `unique[..k]` and `lengths[..k]`,
    /// the number of runs `k` into `runs[0]`; keep the buffers alive until a download of `runs`
    /// (or a synchronize) has waited for it.
    pub fn enqueue_run_length(
        &mut self,
        input: &DeviceBuffer<T>,
        range: Range<usize>,
        unique: &mut DeviceBuffer<T>,
        lengths: &mut DeviceBuffer<u32>,
        runs: &mut DeviceBuffer<u32>,
    ) -> Result<()> {
        const WHAT: &str = "run-length encoding";
        let n = self.check(WHAT, input, &range, None, unique, runs)?;
        if lengths.len() < n {
            return Err(Error::Invalid(format!(
                "{WHAT} of {n} elements into lengths of {}: the lengths must hold at least as many elements as the input",
                lengths.len()
            )));
        }
        let tiles = n.div_ceil(select_tile::<T>() as usize);
        // The pair's two halves a tile, the tiles' words apart (kernels::run_length).
        let status = self.next_status(tiles * RUN_LENGTH_STATUS_WORDS)?;
        let start = input.as_ptr().wrapping_add(range.start);
        let kernel = Kernel::of(&KERNELS, <T as run_length::Instance>::KERNEL);
        let cfg = LaunchConfig { grid: tiles as u32, block: select_block::<T>(), shared_bytes: 0 };
        let aligned = (start as usize).is_multiple_of(16) as u32;
        let args = (
            Global::from(start),
            unique.global_mut(),
            lengths.global_mut(),
            runs.global_mut(),
            status,
            n as u32,
            self.epoch,
            aligned,
        );
        // SAFETY: checked above: the range lies in the input (n ≥ 1 elements from `start`, 16-byte
        // aligned where `aligned` says so), the unique values and lengths hold n elements each
        // and are other buffers, the count one word; the status array holds `tiles ×
        // RUN_LENGTH_STATUS_WORDS` words, zeroed at allocation, and the epoch is new on it; the
        // grid and block are the kernel's Launch section's.
        unsafe { self.backend.launch(&kernel, cfg, args) }
    }

    /// The preconditions [`enqueue`](Self::enqueue) checks before a launch; returns `n`.
    fn check(
        &self,
        what: &str,
        input: &DeviceBuffer<T>,
        range: &Range<usize>,
        flags: Option<&DeviceBuffer<u8>>,
        output: &DeviceBuffer<T>,
        count: &DeviceBuffer<u32>,
    ) -> Result<usize> {
        if range.start > range.end || range.end > input.len() {
            return Err(Error::Invalid(format!(
                "{what} of elements {}..{} of a buffer of {}: the range must lie within the buffer",
                range.start,
                range.end,
                input.len()
            )));
        }
        let n = range.len();
        crate::reduce::one_pass::check_len(what, n)?;
        if output.len() < n {
            return Err(Error::Invalid(format!(
                "{what} of {n} elements into an output of {}: the output must hold at least as many elements as the input",
                output.len()
            )));
        }
        if let Some(f) = flags
            && f.len() != input.len()
        {
            return Err(Error::Invalid(format!(
                "select by a flag array of {} bytes over an input of {} elements: one flag per element",
                f.len(),
                input.len()
            )));
        }
        if count.is_empty() {
            return Err(Error::Invalid(format!("{what}'s count buffer holds no element: it needs one u32")));
        }
        Ok(n)
    }
}
