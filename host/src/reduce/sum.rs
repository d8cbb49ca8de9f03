//! The library's reductions: [`Reducer`], one reusable object per element type and operator
//! that owns its temporary storage (as a CUB user keeps `d_temp_storage`), its plan ([`PLAN`],
//! [`choose`]: which row of the registry runs, by pair and size), and the one-shot [`sum`],
//! [`sum_range`] and [`reduce()`].
//!
//! ```
//! use reduce_scan::{Backend, Max, Reducer, Sum};
//! // The emulator here, so that this example runs anywhere; `Backend::gpu()?` on a GPU host.
//! let backend = Backend::emulator();
//! let data = backend.upload(&[1, 2, 3, -4])?;
//! let mut sums = Reducer::<i32, Sum>::new(&backend);
//! assert_eq!(sums.reduce(&data)?, 2);
//! assert_eq!(sums.reduce_range(&data, 1..3)?, 5); // no allocation: the storage is reused
//! sums.enqueue(&data, 0..4)?; // queued on the backend's stream; the host goes on
//! assert_eq!(sums.result()?, 2); // waits for it
//!
//! let floats = backend.upload(&[0.5f32, f32::NAN, 3.0])?;
//! assert!(Reducer::<f32, Max>::new(&backend).reduce(&floats)?.is_nan()); // NaN propagates
//! # Ok::<(), reduce_scan::Error>(())
//! ```
//!
//! **Why this shape.** One object per algorithm, generic over the element type and the
//! operator, each with a synchronous and an enqueue form, as a CUB user expects
//! (`cub::DeviceReduce::Reduce` with its type, operator and `d_temp_storage`). The type and the
//! operator are parameters of the *object*, not of its methods, because what the object keeps
//! depends on both: its storage holds elements of `T` (the result words, the partials), and its
//! plan is fixed by the pair (below). So `Reducer<'_, f32, Max>` is a reducer of `f32` maxima,
//! its methods are the same four for every pair ([`reduce`](Reducer::reduce),
//! [`reduce_range`](Reducer::reduce_range), [`enqueue`](Reducer::enqueue) +
//! [`result`](Reducer::result)), and a wrong element type is a compile error, not a run-time
//! one. The defaults make `Reducer<'_>` the `i32` sum; in an expression Rust infers type
//! parameters rather than taking defaults, so name the pair (`Reducer::<i32, Sum>::new`) or
//! annotate the binding (`let r: Reducer<'_> = Reducer::new(&backend)`).
//!
//! **Which kernel.** [`choose`] takes the first row of [`PLAN`] that serves the pair and covers
//! the size: `atomic_accumulate` for every pair, one plan and one launch path.
//!
//! * `i32` × `Sum`: the measured rows, block and grid by size (the classic `atomic_accumulate`).
//!   Its one launch leaves the final sum on the device (each block adds its partial into the
//!   result with a fire-and-forget `red.add`), it reads the input with 128-bit loads in a
//!   grid-stride loop (so any grid works: resident blocks for small n, one block per tile for
//!   large n), and it accepts any `i32` alignment, so sub-ranges work too.
//! * every other pair: `atomic_accumulate__{type}_{op}` at block 256, as many blocks as fit, the
//!   same one-launch shape with the type's `red` (floats' min/max: two integer `red`s chosen by
//!   the sign bit), any start element.
//!
//! **Device and stream.** A [`Reducer`] runs on the [`Backend`] it was made with: a GPU chosen
//! by [`Backend::gpu_device`], on that backend's stream ([`Backend::with_new_stream`] gives
//! one of its own). [`Reducer::enqueue`] queues the launch without waiting; [`Reducer::result`]
//! waits for the answer: on a GPU a one-thread launch behind the sum publishes it into mapped
//! page-locked host memory and the host spins on its flag (no copy, no stream synchronisation).
//! The synchronous `i32` sum ([`Reducer::reduce`], [`Reducer::reduce_range`]) needs no second
//! launch: its kernel's last block publishes the answer itself (`atomic_accumulate_to_host`),
//! and a call that repeats the previous call's shape launches a CUDA graph of that kernel
//! (`docs/time-to-answer.md` has the figures).
//!
//! **What the caller gets.** The reduction of an empty range is the operator's identity (0,
//! the type's largest value for min, its smallest for max), returned without touching the
//! device. A range outside the buffer or longer than the kernels' 32-bit length
//! (`n ≤ u32::MAX`) is `Error::Invalid` with the numbers; a device error is `Error::Cuda` /
//! `Error::Emulator`.

use std::marker::PhantomData;
use std::ops::Range;

use kernels::types::Sum;

use super::fused::Fused;
use super::geometry::{geometry_of, resident_per_sm};
use super::one_pass::Sizing;
use super::plan::Finish;
#[cfg(test)]
use super::plan::Geometry;
use super::registry::{self, Instance, Variant};
use super::workspace::Workspace;
use crate::backend::{Backend, DeviceBuffer};
use crate::error::{Error, Result};
use crate::types::{Elem, Op, OpKind, Value, check_layout, identity};

/// The pairs a row of [`PLAN`] serves.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Serves {
    /// `i32` × `Sum`: the curriculum's kernels, at their measured shapes.
    I32Sum,
    /// Every pair.
    Every,
}

/// One row of [`PLAN`]: for the pairs it serves, the variant and launch shape for every `n` up
/// to `max_n`.
#[derive(Clone, Copy, Debug)]
pub struct PlanRow {
    /// The pairs it serves.
    pub serves: Serves,
    /// Largest `n` the row covers.
    pub max_n: usize,
    /// Variant name.
    pub variant: &'static str,
    /// Threads per block.
    pub block: u32,
    /// Blocks per SM (`None`: as many as fit).
    pub blocks_per_sm: Option<u32>,
    /// The synchronous call's answer is handed to the host by the kernel's last block
    /// (`atomic_accumulate_to_host`, `i32` sums: `docs/time-to-answer.md`).
    pub answer_in_kernel: bool,
}

/// The plan's former name (before #38 it held the `i32`-sum rows only, which are still its
/// first three).
pub const SUM_PLAN: &[PlanRow] = PLAN;

/// The former name of a row of the plan.
pub type SizeRule = PlanRow;

/// What a [`Reducer`] runs: the first row that serves the pair and covers `n`.
///
/// The `i32` sum rows are from `docs/measurements/2026-11-22-h100/sum_shapes.csv` (NVIDIA H100
/// 80GB HBM3, commit 07edd4e: `atomic_accumulate` at blocks 128/256/512, each with the
/// occupancy calculator's grid and with one block per tile, 3 interleaved rounds of 30 runs;
/// docs/results.md has the table), and the block-1024 rows of `sum_shapes_1024.csv` there
/// (a879790, 2 rounds) and of `docs/measurements/2026-11-23-h200/sum_shapes.csv` (NVIDIA H200,
/// a879790, 2 rounds):
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
/// H200 at 2^28 (`kernels::reduce::ATOMIC_ACCUMULATE_LOADS` has the figures). Every other pair
/// runs the first row's shape.
pub const PLAN: &[PlanRow] = &[
    PlanRow {
        serves: Serves::I32Sum,
        max_n: 1 << 22,
        variant: "atomic_accumulate",
        block: 256,
        blocks_per_sm: None,
        answer_in_kernel: true,
    },
    PlanRow {
        serves: Serves::I32Sum,
        max_n: 1 << 24,
        variant: "atomic_accumulate",
        block: 512,
        blocks_per_sm: Some(1024),
        answer_in_kernel: true,
    },
    PlanRow {
        serves: Serves::I32Sum,
        max_n: u32::MAX as usize,
        variant: "atomic_accumulate",
        block: 1024,
        blocks_per_sm: Some(1024),
        answer_in_kernel: true,
    },
    PlanRow {
        serves: Serves::Every,
        max_n: u32::MAX as usize,
        variant: "atomic_accumulate",
        block: 256,
        blocks_per_sm: None,
        answer_in_kernel: false,
    },
];

/// A variant and its launch shape.
#[derive(Clone, Copy, Debug)]
pub struct Choice {
    /// The variant.
    pub variant: &'static Variant,
    /// Threads per block.
    pub block: u32,
    /// Blocks per SM of a grid-stride variant's grid (`None`: as many as fit, from the
    /// occupancy calculator; see [`Reduction::shaped`](super::Reduction::shaped)).
    pub blocks_per_sm: Option<u32>,
    /// The kernel hands a synchronous call's answer to the host ([`PlanRow::answer_in_kernel`]).
    pub answer_in_kernel: bool,
}

/// What [`Reducer`]`::<T, O>` runs for `n` elements of `elem` with `op` on a device of compute
/// capability `cc`: the first row of [`PLAN`] that serves the pair, covers `n` and whose
/// variant the device runs and has the pair.
pub fn choose(elem: Elem, op: Op, n: usize, cc: (u32, u32)) -> Result<Choice> {
    let serves = |r: &&PlanRow| r.serves == Serves::Every || (elem, op) == (Elem::I32, Op::Sum);
    for rule in PLAN.iter().filter(serves).filter(|r| n <= r.max_n) {
        let variant = registry::find(rule.variant)?;
        if cc >= variant.min_cc && variant.supports(elem, op) {
            let answer_in_kernel = rule.answer_in_kernel;
            return Ok(Choice { variant, block: rule.block, blocks_per_sm: rule.blocks_per_sm, answer_in_kernel });
        }
    }
    Err(Error::Invalid(format!(
        "n = {n}: no row of the plan covers {} {} at that size (n must be in 1..={})",
        elem.name(),
        op.name(),
        u32::MAX
    )))
}

/// A reusable reduction of elements of `T` with the operator `O` (`Sum`, `Min`, `Max` of
/// `kernels::types`, re-exported as `reduce_scan::{Sum, Min, Max}`): it owns its temporary storage (a
/// few device words), asks the occupancy calculator once, and so allocates nothing on repeated
/// calls of one size class. The module docs say which kernel runs and why the shape.
pub struct Reducer<'b, T: Value = i32, O: OpKind = Sum> {
    backend: &'b Backend,
    /// The device storage, once a first launch made it.
    storage: Option<Storage<T>>,
    /// The storage of the transform-reduce calls (`dot`, `sum_of_squares`, `norm`: the
    /// [`transform`](super::transform) module), once one made it.
    fused: Option<Fused<T>>,
    /// The block and grid of the transform-reduce launches.
    fused_sizing: Sizing,
    /// What [`result`](Self::result) answers.
    last: Last<T>,
    op: PhantomData<fn() -> O>,
}

/// What a [`Reducer`] keeps between calls: the plan's choice for the last size, the row it
/// runs, its resident blocks per SM, and the workspace.
struct Storage<T: Value> {
    choice: Choice,
    inst: Instance<T>,
    resident: u32,
    work: Workspace<T>,
}

/// What the last call left for [`Reducer::result`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Last<T> {
    /// Nothing enqueued yet, or the last enqueue failed.
    Nothing,
    /// An empty range: the identity, with no launch.
    Identity,
    /// A launch, whose answer the storage holds once it completes.
    Launched,
    /// The answer of a synchronous call, already on the host.
    Answer(T),
    /// A transform-reduce launch, whose answer the fused storage holds.
    Fused,
}

impl<'b, T: Value, O: OpKind> Reducer<'b, T, O> {
    /// A reducer on `backend` (its device and stream). Allocates nothing until the first call.
    pub fn new(backend: &'b Backend) -> Self {
        let fused_sizing = Sizing::Plan;
        Self { backend, storage: None, fused: None, fused_sizing, last: Last::Nothing, op: PhantomData }
    }

    /// A reducer whose transform-reduce launches (`dot`, `sum_of_squares`, `norm`) run at
    /// `block` threads per block (a power of two in 32..=1024), for experiments and tests; its
    /// `reduce` calls keep the plan's block. The answer is the same at every block (floats:
    /// within the same bound).
    pub fn with_transform_block(backend: &'b Backend, block: u32) -> Result<Self> {
        Ok(Self { fused_sizing: Sizing::block(block)?, ..Self::new(backend) })
    }

    /// A reducer whose transform-reduce launches take the block and grid `sizing` gives
    /// (`reduce --op dot --block B --blocks-per-sm K`); its `reduce` calls keep the plan's.
    pub fn with_transform_sizing(backend: &'b Backend, sizing: Sizing) -> Self {
        Self { fused_sizing: sizing, ..Self::new(backend) }
    }

    /// `O` over every element of `input`; waits for it. Integer sums wrap; float min/max
    /// propagate NaN and order −0.0 < +0.0 (the crate docs' table); an empty buffer gives the
    /// identity.
    pub fn reduce(&mut self, input: &DeviceBuffer<T>) -> Result<T> {
        self.reduce_range(input, 0..input.len())
    }

    /// `O` over `input[range]` (any start element, any length); waits for it.
    ///
    /// Where the plan's row hands the answer to the host from the kernel (`i32` sums:
    /// `atomic_accumulate_to_host`, one launch; `docs/time-to-answer.md`), that; otherwise
    /// [`enqueue`](Self::enqueue) then [`result`](Self::result).
    pub fn reduce_range(&mut self, input: &DeviceBuffer<T>, range: Range<usize>) -> Result<T> {
        self.last = Last::Nothing;
        check_range::<T, O>(input, &range)?;
        if range.is_empty() {
            self.last = Last::Identity;
            return Ok(identity(O::OP));
        }
        let backend = self.backend;
        let storage = self.prepare(range.len())?;
        if !(storage.choice.answer_in_kernel && backend.answers_in_kernel()) {
            self.enqueue(input, range)?;
            return self.result();
        }
        if !matches!(storage.inst.row.finish, Finish::AtomicAccumulate(_)) {
            let name = storage.choice.variant.name;
            return Err(Error::Invalid(format!("the plan's `{name}` is not an atomic finish")));
        }
        // SAFETY: the range lies within `input` (checked above); the workspace's geometry is
        // `atomic_accumulate`'s for n (the plan's variant, checked above).
        let answer = unsafe { storage.work.launch_to_host(backend, input.as_ptr(), range.start, range.len()) }?;
        self.last = Last::Answer(answer);
        Ok(answer)
    }

    /// Queues `O` over `input[range]` on the backend's stream and returns at once; read the
    /// answer with [`result`](Self::result). An empty range queues nothing, and its result is
    /// the identity. Keep `input` alive until then. After an error there is nothing for
    /// `result` to read until the next enqueue succeeds.
    pub fn enqueue(&mut self, input: &DeviceBuffer<T>, range: Range<usize>) -> Result<()> {
        self.last = Last::Nothing;
        check_range::<T, O>(input, &range)?;
        if range.is_empty() {
            self.last = Last::Identity;
            return Ok(());
        }
        let backend = self.backend;
        let storage = self.prepare(range.len())?;
        let finish = storage.inst.row.finish;
        // SAFETY: the range lies within `input` (checked above); the workspace's geometry is the
        // chosen row's for n (prepare).
        unsafe { storage.work.launch(backend, &finish, input.as_ptr(), range.start, range.len()) }?;
        self.last = Last::Launched;
        Ok(())
    }

    /// Waits for the last [`enqueue`](Self::enqueue)d reduction and returns its answer.
    pub fn result(&self) -> Result<T> {
        match (self.last, &self.storage) {
            (Last::Identity, _) => Ok(identity(O::OP)),
            (Last::Answer(answer), _) => Ok(answer),
            (Last::Launched, Some(storage)) => storage.work.result(self.backend),
            (Last::Fused, _) => match &self.fused {
                Some(fused) => fused.answer(self.backend),
                None => Err(Error::Invalid("the reducer's transform storage is missing".into())),
            },
            _ => Err(Error::Invalid("result() with nothing enqueued (or the last enqueue failed)".into())),
        }
    }

    /// The backend it runs on.
    pub(crate) fn backend(&self) -> &'b Backend {
        self.backend
    }

    /// A transform-reduce call begins: nothing for `result` until it has launched.
    pub(crate) fn begin_fused(&mut self) {
        self.last = Last::Nothing;
    }

    /// A transform-reduce call ended: a launch (`Some`), or an empty range (`None`: the
    /// identity, no launch).
    pub(crate) fn end_fused(&mut self, launched: Option<()>) {
        self.last = if launched.is_some() { Last::Fused } else { Last::Identity };
    }

    /// The transform-reduce storage, made on first use.
    pub(crate) fn fused_storage(&mut self) -> &mut Fused<T> {
        let sizing = self.fused_sizing;
        self.fused.get_or_insert_with(|| Fused::new(sizing))
    }

    /// The storage for `n` elements, retargeted to `n`'s geometry: the plan's choice, its row
    /// and workspace, (re)made only when the choice changes or the workspace is too small.
    fn prepare(&mut self, n: usize) -> Result<&mut Storage<T>> {
        let backend = self.backend;
        let choice = choose(T::ELEM, O::OP, n, backend.info().compute_capability)?;
        let same = |c: &Choice| {
            std::ptr::eq(c.variant, choice.variant)
                && c.block == choice.block
                && c.blocks_per_sm == choice.blocks_per_sm
        };
        let kept = match &self.storage {
            Some(s) if same(&s.choice) => {
                let g = geometry_of(backend, &s.inst, n, choice.block, Some(s.resident))?;
                s.work.fits(&g).then_some(g)
            }
            _ => None,
        };
        let geometry = match kept {
            Some(g) => g,
            None => {
                let inst = choice.variant.instance::<T>(O::OP)?;
                let resident = match choice.blocks_per_sm {
                    Some(k) => k,
                    None => resident_per_sm(backend, &inst, choice.block)?,
                };
                let g = geometry_of(backend, &inst, n, choice.block, Some(resident))?;
                let work = Workspace::new(backend, g, O::OP, 0)?;
                self.storage = Some(Storage { choice, inst, resident, work });
                g
            }
        };
        let storage = self.storage.as_mut().ok_or_else(|| Error::Invalid("the reducer's storage is missing".into()))?;
        storage.work.retarget(geometry);
        Ok(storage)
    }

    /// The geometry of the last launch, if any (tests).
    #[cfg(test)]
    fn geometry(&self) -> Option<Geometry> {
        self.storage.as_ref().map(|s| s.work.geometry)
    }
}

/// Is `range` within `input`, and is `T` laid out as the kernels expect?
fn check_range<T: Value, O: OpKind>(input: &DeviceBuffer<T>, range: &Range<usize>) -> Result<()> {
    if range.start > range.end || range.end > input.len() {
        return Err(Error::Invalid(format!(
            "{} of elements {}..{} of a buffer of {}: the range must lie within the buffer",
            O::OP.name(),
            range.start,
            range.end,
            input.len()
        )));
    }
    check_layout::<T>()
}

/// The sum of every element of `buf`, any [`Value`] type (a one-shot
/// [`Reducer`]`::<T, Sum>`, which allocates its few words).
pub fn sum<T: Value>(backend: &Backend, buf: &DeviceBuffer<T>) -> Result<T> {
    Reducer::<T, Sum>::new(backend).reduce(buf)
}

/// The sum of `buf[range]`. The range may start at any element (the kernel handles
/// the unaligned head and tail); an empty range sums to 0.
pub fn sum_range<T: Value>(backend: &Backend, buf: &DeviceBuffer<T>, range: Range<usize>) -> Result<T> {
    Reducer::<T, Sum>::new(backend).reduce_range(buf, range)
}

/// `O` over every element of `input` (`reduce_scan::reduce::<f32, Max>(&backend, &buf)`): the
/// wrapping sum, the minimum or the maximum, in one launch; waits for it. An empty buffer
/// gives the identity (0, the type's largest value, its smallest). A one-shot
/// [`Reducer`]`::<T, O>` (which keeps its storage for the next call).
///
/// ```
/// use reduce_scan::{Backend, Max, Min, Sum};
/// let backend = Backend::emulator(); // Backend::gpu()? on a GPU host
/// let data = backend.upload(&[2.5f64, -1.0, f64::INFINITY, -0.0])?;
/// assert_eq!(reduce_scan::reduce::<f64, Max>(&backend, &data)?, f64::INFINITY);
/// assert_eq!(reduce_scan::reduce::<f64, Min>(&backend, &data)?, -1.0);
/// let ints = backend.upload(&[u64::MAX, 2])?;
/// assert_eq!(reduce_scan::reduce::<u64, Sum>(&backend, &ints)?, 1); // integer sums wrap
/// # Ok::<(), reduce_scan::Error>(())
/// ```
pub fn reduce<T: Value, O: OpKind>(backend: &Backend, input: &DeviceBuffer<T>) -> Result<T> {
    Reducer::<T, O>::new(backend).reduce(input)
}

#[cfg(test)]
mod tests {
    use super::*;
    use kernels::types::{Max, Min};

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
    fn the_plan_gives_i32_sums_their_measured_rows_and_every_pair_a_row() {
        let c = |e, o, n| choose(e, o, n, (9, 0)).unwrap();
        assert_eq!(
            (c(Elem::I32, Op::Sum, 1 << 20).block, c(Elem::I32, Op::Sum, 1 << 20).answer_in_kernel),
            (256, true)
        );
        assert_eq!(c(Elem::I32, Op::Sum, 1 << 23).block, 512);
        assert_eq!(c(Elem::I32, Op::Sum, 1 << 28).block, 1024);
        for (e, o) in [(Elem::U32, Op::Sum), (Elem::F64, Op::Max), (Elem::I32, Op::Min)] {
            let got = c(e, o, 1 << 28);
            assert_eq!((got.variant.name, got.block, got.answer_in_kernel), ("atomic_accumulate", 256, false));
        }
    }

    #[test]
    fn typed_reducers() {
        let b = Backend::emulator();
        let f: Vec<f64> = (0..5000).map(|i| (i as f64 - 2500.5) * 0.25).collect();
        let fb = b.upload(&f).unwrap();
        let u = b.upload(&[7u32, u32::MAX, 3]).unwrap();
        assert_eq!(Reducer::<f64, Max>::new(&b).reduce(&fb).unwrap(), 624.625);
        assert_eq!(Reducer::<f64, Min>::new(&b).reduce(&fb).unwrap(), -625.125);
        assert_eq!(sum(&b, &fb).unwrap(), f.iter().sum::<f64>()); // quarters: every sum is exact
        assert_eq!(sum(&b, &u).unwrap(), 9); // wraps
        let mut r = Reducer::<u32, Min>::new(&b);
        assert_eq!(r.reduce_range(&u, 0..1).unwrap(), 7);
        assert_eq!(r.reduce_range(&u, 1..1).unwrap(), u32::MAX);
        let e = r.reduce_range(&u, 2..5).unwrap_err().to_string();
        assert!(e.starts_with("invalid request: min of elements 2..5 of a buffer of 3"), "{e}");
        let e = r.result().unwrap_err().to_string();
        assert!(e.contains("nothing enqueued"), "{e}");
        r.enqueue(&u, 0..3).unwrap();
        assert_eq!(r.result().unwrap(), 3);
    }

    #[test]
    fn a_reducer_reuses_its_storage_across_sizes() {
        let b = Backend::emulator();
        let data: Vec<i32> = (0..5000).map(|i| i * 7 - 300).collect();
        let buf = b.upload(&data).unwrap();
        let mut r: Reducer<'_> = Reducer::new(&b);
        for (i, n) in [5000usize, 17, 4096, 1, 5000].into_iter().enumerate() {
            let want = data[..n].iter().fold(0i32, |a, &x| a.wrapping_add(x));
            assert_eq!(r.reduce_range(&buf, 0..n).unwrap(), want, "call {i}, n = {n}");
        }
        let words = |r: &Reducer<'_>| r.storage.as_ref().and_then(|s| s.work.result.as_ref().map(|b| b.as_ptr()));
        let first = words(&r);
        r.reduce(&buf).unwrap();
        assert!(first.is_some() && first == words(&r), "the storage was remade");
        assert!(choose(Elem::I32, Op::Sum, 0, (9, 0)).is_ok() && choose(Elem::I32, Op::Sum, 1 << 20, (7, 0)).is_ok());
        assert!(r.geometry().is_some());
    }

    #[test]
    fn the_synchronous_sum_is_published_by_its_last_block_and_leaves_the_tally_at_zero() {
        let b = Backend::emulator();
        let data: Vec<i32> = (0..40_011).map(|i| (i * 7919 % 2001) - 1000).collect();
        let buf = b.upload(&data).unwrap();
        let sum = |r: Range<usize>| data[r].iter().fold(0i32, |a, &x| a.wrapping_add(x));
        let mut r: Reducer<'_> = Reducer::new(&b);
        for n in [40_011usize, 4097, 33, 40_011, 12_289] {
            assert_eq!(r.reduce_range(&buf, 0..n).unwrap(), sum(0..n), "to the host, n = {n}");
            assert_eq!(r.result().unwrap(), sum(0..n), "result() after it, n = {n}");
            // The enqueue way in between: its result words and epochs are its own.
            r.enqueue(&buf, 1..n).unwrap();
            assert_eq!(r.result().unwrap(), sum(1..n), "enqueue after it, n = {n}");
            let Some(storage) = &r.storage else { panic!("no storage") };
            let tally = b.download(storage.work.tally.as_ref().expect("a tally word")).unwrap();
            assert_eq!(tally, [0], "the tally word after n = {n}");
        }
    }
}
