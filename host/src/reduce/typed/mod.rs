//! Reductions of every element type with every operator: the generic variants of
//! [`registry::typed`](crate::registry::typed) prepared, launched and finished, and the
//! library calls [`reduce()`] / [`Reducer::reduce`](super::sum::Reducer::reduce), and the
//! plan hook [`OpKind::path`] that sends `i32` sums to the classic kernels instead.
//!
//! ```
//! use reduce_scan::{Backend, Max, Min, Sum};
//! let backend = Backend::emulator(); // Backend::gpu()? on a GPU host
//! let data = backend.upload(&[2.5f64, -1.0, f64::INFINITY, -0.0])?;
//! assert_eq!(reduce_scan::reduce::<f64, Max>(&backend, &data)?, f64::INFINITY);
//! assert_eq!(reduce_scan::reduce::<f64, Min>(&backend, &data)?, -1.0);
//! let ints = backend.upload(&[u64::MAX, 2])?;
//! assert_eq!(reduce_scan::reduce::<u64, Sum>(&backend, &ints)?, 1); // integer sums wrap
//! # Ok::<(), reduce_scan::Error>(())
//! ```
//!
//! [`TypedReduction`] is the counterpart of [`super::Reduction`] for one
//! [`TypedVariant`]: the same [`Grid`](super::plan::Grid) axis and block rule, its own
//! finish ([`TypedFinish`], matched here only), buffers of `T`.

pub mod cpu;

use std::fmt;

use super::plan::{self, MAX_GRID};
use crate::backend::{Backend, DeviceBuffer, LaunchConfig};
use crate::error::{Error, Result};
use crate::registry::typed::{TypedFinish, TypedVariant, find_typed};
use crate::registry::{Elem, Op};

/// An element type the host can reduce: a device buffer element, a kernels-crate
/// [`Element`](kernels::types::Element), and what the references, inputs and reports need.
pub trait Value: crate::backend::Element + kernels::types::Element + fmt::Display {
    /// The registry's name for it.
    const ELEM: Elem;
    /// Does this type have the classic sum kernels (the book's `i32` kernels, with the measured
    /// plans [`SUM_PLAN`](crate::sum::SUM_PLAN) and the classic `lookback` scan)? Only `i32`.
    /// Read through the plan hook, [`OpKind::path`].
    const CLASSIC_SUM: bool = false;
    /// Unit roundoff (2⁻²⁴ for `f32`, 2⁻⁵³ for `f64`; 0 for integers, which are exact).
    const UNIT_ROUNDOFF: f64;
    /// A value from 64 random bits: integers over their whole range (sums wrap), floats in
    /// ±[2⁻⁸, 2⁸) with a random exponent and sign.
    fn random(bits: u64) -> Self;
    /// `x` rounded to this type (floats; integers truncate).
    fn from_f64(x: f64) -> Self;
    /// The value as `f64` (exact for 32-bit types and `f64`; integers may round).
    fn to_f64(self) -> f64;
    /// The wrapping (integers) or rounded (floats) sum of two values.
    fn wrapping_add_host(a: Self, b: Self) -> Self;
    /// Is it a NaN?
    fn is_nan_host(self) -> bool;
    /// The NaN min (`smallest`) or max returns: `−NaN` or `+NaN`, quiet, payload 0.
    fn canonical_nan(smallest: bool) -> Self;
    /// A key ordered as the values, with −0.0 below +0.0 (NaNs excluded).
    fn order_key(self) -> i128;
    /// The bits, zero-extended to 64.
    fn bits(self) -> u64;
    /// The value whose bits are the low bytes of `bits` (the inverse of [`bits`](Self::bits)).
    fn from_bits_u64(bits: u64) -> Self;
    /// The same bits?
    fn same_bits(self, other: Self) -> bool {
        self.bits() == other.bits()
    }
    /// The type's extreme values: for a sum, ones whose sums cannot overflow a float
    /// (subnormals, ±0, `MIN_POSITIVE`, large but summable values); otherwise also ±MAX and
    /// ±inf (integers: MIN, MAX, 0, ±1 either way).
    fn extremes(for_sum: bool) -> Vec<Self>;
}

macro_rules! integer_value {
    ($t:ident, $E:ident $(, classic_sum = $classic:literal)?) => {
        impl Value for $t {
            const ELEM: Elem = Elem::$E;
            $(const CLASSIC_SUM: bool = $classic;)?
            const UNIT_ROUNDOFF: f64 = 0.0;
            fn random(bits: u64) -> Self {
                bits as $t
            }
            fn from_f64(x: f64) -> Self {
                x as $t
            }
            fn to_f64(self) -> f64 {
                self as f64
            }
            fn wrapping_add_host(a: Self, b: Self) -> Self {
                a.wrapping_add(b)
            }
            fn is_nan_host(self) -> bool {
                false
            }
            fn canonical_nan(smallest: bool) -> Self {
                if smallest { $t::MIN } else { $t::MAX }
            }
            fn order_key(self) -> i128 {
                self as i128
            }
            fn bits(self) -> u64 {
                self as u64 & (u64::MAX >> (64 - 8 * std::mem::size_of::<$t>()))
            }
            fn from_bits_u64(bits: u64) -> Self {
                bits as $t
            }
            #[allow(unused_comparisons)]
            fn extremes(_for_sum: bool) -> Vec<Self> {
                let mut v = vec![$t::MIN, $t::MAX, 0, 1];
                if $t::MIN < 0 {
                    v.push((0 as $t).wrapping_sub(1));
                }
                v
            }
        }
    };
}
integer_value!(i32, I32, classic_sum = true);
integer_value!(u32, U32);
integer_value!(i64, I64);
integer_value!(u64, U64);

macro_rules! float_value {
    ($t:ident, $E:ident, $bits:ty, $mant:expr) => {
        impl Value for $t {
            const ELEM: Elem = Elem::$E;
            const UNIT_ROUNDOFF: f64 = 1.0 / (1u64 << $mant) as f64;
            fn random(bits: u64) -> Self {
                // 53 bits of mantissa in [1, 2), an exponent in -8..8, a sign.
                let m = 1.0 + (bits >> 11) as f64 / (1u64 << 53) as f64;
                let e = ((bits >> 3) & 15) as i32 - 8;
                let s = if bits & 1 == 0 { 1.0 } else { -1.0 };
                (s * m * 2f64.powi(e)) as $t
            }
            fn from_f64(x: f64) -> Self {
                x as $t
            }
            fn to_f64(self) -> f64 {
                self as f64
            }
            fn wrapping_add_host(a: Self, b: Self) -> Self {
                a + b
            }
            fn is_nan_host(self) -> bool {
                self.is_nan()
            }
            fn canonical_nan(smallest: bool) -> Self {
                let nan = $t::NAN.to_bits() & !(1 << (8 * std::mem::size_of::<$t>() - 1));
                $t::from_bits(if smallest { nan | 1 << (8 * std::mem::size_of::<$t>() - 1) } else { nan })
            }
            fn order_key(self) -> i128 {
                // Sign-magnitude to a monotonic integer: negative values reversed below 0.
                let b = self.to_bits();
                let magnitude = (b & !(1 << (8 * std::mem::size_of::<$t>() - 1))) as i128;
                if b >> (8 * std::mem::size_of::<$t>() - 1) == 1 { -magnitude - 1 } else { magnitude }
            }
            fn bits(self) -> u64 {
                self.to_bits() as u64
            }
            fn from_bits_u64(bits: u64) -> Self {
                $t::from_bits(bits as _)
            }
            fn extremes(for_sum: bool) -> Vec<Self> {
                let tiny = $t::from_bits(1); // the smallest subnormal
                let mut v = vec![0.0, -0.0, tiny, -tiny, $t::MIN_POSITIVE, -$t::MIN_POSITIVE, 1.0, -1.0];
                if for_sum {
                    // Large, but 2^32 of them still sum to a finite value.
                    v.extend([$t::MAX / 2f64.powi(40) as $t, -$t::MAX / 2f64.powi(40) as $t]);
                } else {
                    v.extend([$t::MAX, -$t::MAX, $t::INFINITY, $t::NEG_INFINITY]);
                }
                v
            }
        }
    };
}
float_value!(f32, F32, u32, 24);
float_value!(f64, F64, u64, 53);

/// Which kernels a library object ([`Reducer`](crate::sum::Reducer),
/// [`Scanner`](crate::scan::Scanner)) runs for an element type and an operator: the answer of
/// the plan hook [`OpKind::path`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Path {
    /// The classic `i32` kernels with their measured plans: [`SUM_PLAN`](crate::sum::SUM_PLAN)
    /// (`atomic_accumulate` at the block and grid of the size) for a reduction, the classic
    /// `lookback` scan for a scan.
    Classic,
    /// The typed instantiations: `atomic_accumulate__{type}_{op}` at block 256
    /// ([`library_choice`]), `lookback__{type}_{op}`.
    Typed,
}

/// The host-side name of an operator type of the kernels crate (`kernels::types::Sum` → [`Op::Sum`]).
pub trait OpKind {
    /// The registry's operator.
    const OP: Op;

    /// **The plan hook**: which kernels the library objects run for `T` with this operator.
    /// [`Path::Typed`] for every pair but `Sum` over a type with [`Value::CLASSIC_SUM`] (`i32`),
    /// which takes [`Path::Classic`]. Both are constants of the types, so the choice is made at
    /// compile time, per instantiation.
    fn path<T: Value>() -> Path {
        Path::Typed
    }
}
impl OpKind for kernels::types::Sum {
    const OP: Op = Op::Sum;
    fn path<T: Value>() -> Path {
        if T::CLASSIC_SUM { Path::Classic } else { Path::Typed }
    }
}
impl OpKind for kernels::types::Min {
    const OP: Op = Op::Min;
}
impl OpKind for kernels::types::Max {
    const OP: Op = Op::Max;
}

/// `Ok` when `T` is laid out as the kernels of [`T::ELEM`](Value::ELEM) read it (its size is
/// that type's): the library objects' guard against a [`Value`] implemented outside this crate
/// with another type's `ELEM`, whose buffers the kernels would read past.
pub(crate) fn check_layout<T: Value>() -> Result<()> {
    if size_of::<T>() == T::ELEM.size() {
        Ok(())
    } else {
        Err(Error::Invalid(format!(
            "a Value of {} bytes names {} ({} bytes) as its kernels' type",
            size_of::<T>(),
            T::ELEM.name(),
            T::ELEM.size()
        )))
    }
}

/// `a ⊕ b` for `op`, as the kernels combine (the kernels crate's own functions).
pub fn combine<T: Value>(op: Op, a: T, b: T) -> Result<T> {
    match op {
        Op::Sum => Ok(T::plus(a, b)),
        Op::Min => Ok(T::minimum(a, b)),
        Op::Max => Ok(T::maximum(a, b)),
        Op::SumOfSquares => Err(Error::Invalid("the typed reductions have no sum of squares".into())),
    }
}

/// The identity of `op` on `T` (the result of an empty reduction).
pub fn identity<T: Value>(op: Op) -> Result<T> {
    match op {
        Op::Sum => Ok(T::ZERO),
        Op::Min => Ok(T::HIGHEST),
        Op::Max => Ok(T::LOWEST),
        Op::SumOfSquares => Err(Error::Invalid("the typed reductions have no sum of squares".into())),
    }
}

/// Combines `values` pairwise (the halving tree of [`crate::cpu::recursive_reduce`]):
/// depth ⌈log₂ len⌉, which keeps a float sum of many partials accurate.
pub fn combine_pairwise<T: Value>(op: Op, mut values: Vec<T>) -> Result<T> {
    let mut size = values.len();
    if size == 0 {
        return identity(op);
    }
    while size > 1 {
        let half = size.div_ceil(2);
        for i in 0..size - half {
            values[i] = combine(op, values[i], values[half + i])?;
        }
        size = half;
    }
    Ok(values[0])
}

/// Launch geometry of one typed run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TypedGeometry {
    /// Blocks.
    pub grid: u32,
    /// Threads per block.
    pub block: u32,
    /// Static shared memory per block, bytes.
    pub shared_bytes: u32,
    /// Partials the kernel writes (0 for the atomic finish).
    pub partials: u64,
    /// Result words on the device, after the partials (2 for the atomic finish, 1 for the
    /// last-block finish, 0 when the host combines the partials).
    pub result_words: usize,
}

impl TypedFinish {
    /// `(partials, result words)` for `grid` blocks.
    fn needs(&self, grid: u64) -> (u64, usize) {
        match self {
            TypedFinish::HostCombines(_) => (grid, 0),
            TypedFinish::AtomicCombines(_) => (0, 2),
            TypedFinish::LastBlockCombines(_) => (grid, 1),
        }
    }

    /// Additions a value passes through in the finish of `grid` partials of `block`-thread
    /// blocks: the host's pairwise tree, a chain of `grid` atomic adds in arrival order, or the
    /// last block's `⌈grid / block⌉` adds per thread and its five warp and five block levels.
    fn depth(&self, grid: u64, block: u64) -> u64 {
        match self {
            TypedFinish::HostCombines(_) => 64 - grid.saturating_sub(1).leading_zeros() as u64,
            TypedFinish::AtomicCombines(_) => grid,
            TypedFinish::LastBlockCombines(_) => grid.div_ceil(block.max(1)) + 10,
        }
    }

    /// Enqueues one launch.
    ///
    /// # Safety
    /// `input` holds `n` elements of the variant's type; `out` holds the partials (one per
    /// block) and then the result words, of the same type; `ticket` is a zeroed (or left 0 by
    /// the last launch) `u32` for the last-block finish; `cfg` is the variant's geometry for `n`.
    unsafe fn launch(
        &self,
        backend: &Backend,
        cfg: LaunchConfig,
        (input, out, ticket): (*const u8, *mut u8, *mut u32),
        n: u32,
        epoch: u32,
        size: usize,
    ) -> Result<()> {
        match self {
            // SAFETY: forwarded from the caller.
            TypedFinish::HostCombines(k) => unsafe { backend.launch(k, cfg, (input, out, n)) },
            // SAFETY: forwarded from the caller; the word epoch % 2 holds the identity.
            TypedFinish::AtomicCombines(k) => unsafe { backend.launch(k, cfg, (input, out, n, epoch)) },
            TypedFinish::LastBlockCombines(k) => {
                // The result word follows the grid's partials (`wrapping_add`: a device address).
                let result = out.wrapping_add(cfg.grid as usize * size);
                // SAFETY: forwarded from the caller: partials, then the result word; the ticket.
                unsafe { backend.launch(k, cfg, (input, out, ticket, result, n)) }
            }
        }
    }
}

/// The depth of the addition tree of `tv` on `n` elements at `g` (the `depth` of
/// [`cpu::float_sum_bound`]): the elements one thread folds (at most
/// `⌈n / (threads · items)⌉ · items` plus an unaligned head and tail element), five warp
/// levels, five block levels, and the finish.
pub fn sum_depth(tv: &TypedVariant, n: usize, g: &TypedGeometry) -> u64 {
    let items = tv.items_per_thread.max(1) as u64;
    let threads = g.grid as u64 * g.block as u64;
    let per_thread = (n as u64).div_ceil(threads.max(1) * items) * items + 2;
    per_thread + 5 + 5 + tv.finish.depth(g.grid as u64, g.block as u64)
}

/// Checks the preconditions of running `tv` on `n` elements with `block` threads and returns
/// the geometry (the [`plan::check`] rules, with the typed kernel's symbol and sizes).
pub fn geometry(
    backend: &Backend,
    tv: &TypedVariant,
    n: usize,
    block: u32,
    resident: Option<u32>,
) -> Result<TypedGeometry> {
    let base = tv.base()?;
    plan::check(base, n, block, backend.info().compute_capability)?;
    let ask = || match resident {
        Some(r) => Ok(r),
        None => Ok(backend.occupancy(tv.symbol(), block, 0)?.max(1)),
    };
    let (grid, block) = base.grid.size(n, block, tv.items_per_thread, backend.info().multiprocessors, ask)?;
    if grid > MAX_GRID {
        return Err(Error::Invalid(format!(
            "variant `{}`: n = {n} needs {grid} blocks of {block}; a grid holds at most {MAX_GRID}",
            tv.id()
        )));
    }
    let (partials, result_words) = tv.finish.needs(grid);
    Ok(TypedGeometry { grid: grid as u32, block, shared_bytes: tv.shared_bytes, partials, result_words })
}

/// The buffers of typed launches, reused across launches of one geometry's size.
pub(crate) struct TypedWork<T: Value> {
    pub(crate) tv: &'static TypedVariant,
    pub(crate) geometry: TypedGeometry,
    /// Partials (host and last-block finishes), then the result words (two for the atomic
    /// finish, one for the last block).
    out: DeviceBuffer<T>,
    /// The last-block finish's ticket (zeroed; each launch leaves it 0).
    ticket: DeviceBuffer<u32>,
    epoch: u32,
}

impl<T: Value> TypedWork<T> {
    /// Allocates for `geometry`; the atomic finish's two words start at the identity.
    pub(crate) fn new(backend: &Backend, tv: &'static TypedVariant, geometry: TypedGeometry) -> Result<Self> {
        if T::ELEM != tv.elem {
            return Err(Error::Invalid(format!(
                "variant {} reduces {}, not {}",
                tv.id(),
                tv.elem.name(),
                T::ELEM.name()
            )));
        }
        let len = (geometry.partials + geometry.result_words as u64) as usize;
        let mut out = backend.alloc::<T>(len)?;
        if geometry.result_words > 0 && geometry.partials == 0 {
            // The atomic finish folds into its words: they start at the identity.
            backend.write(&mut out, &vec![identity::<T>(tv.op)?; geometry.result_words])?;
        }
        Ok(Self { tv, geometry, out, ticket: backend.alloc::<u32>(1)?, epoch: 0 })
    }

    /// Can it serve `g` (same finish, room for the partials and result words)?
    pub(crate) fn fits(&self, g: &TypedGeometry) -> bool {
        g.result_words == self.geometry.result_words
            && g.partials.min(1) == self.geometry.partials.min(1)
            && self.out.len() as u64 >= g.partials + g.result_words as u64
    }

    /// Enqueues the kernel on `input[offset .. offset + n]`.
    ///
    /// # Safety
    /// That range exists and `self.geometry` is the variant's for `n`.
    pub(crate) unsafe fn launch(
        &mut self,
        backend: &Backend,
        input: &DeviceBuffer<T>,
        offset: usize,
        n: usize,
    ) -> Result<()> {
        let g = self.geometry;
        let cfg = LaunchConfig { grid: g.grid, block: g.block, shared_bytes: 0 };
        let at = input.as_ptr().wrapping_add(offset).cast::<u8>();
        let out = self.out.as_mut_ptr().cast::<u8>();
        let buffers = (at, out, self.ticket.as_mut_ptr());
        // SAFETY: the buffers hold T = the variant's type (checked in new), sized by the geometry;
        // the input range is the caller's promise; the epoch counts accepted launches, so the
        // atomic word epoch % 2 holds the identity (filled at allocation, then by the last
        // launch); the ticket was zeroed at allocation and every finished launch leaves it 0.
        unsafe { self.tv.finish.launch(backend, cfg, buffers, n as u32, self.epoch, T::ELEM.size()) }?;
        self.epoch = self.epoch.wrapping_add(1);
        Ok(())
    }

    /// Waits for the last launch and returns its answer.
    pub(crate) fn result(&self, backend: &Backend) -> Result<T> {
        let g = self.geometry;
        if g.result_words > 0 {
            let at = g.partials as usize;
            let last = self.epoch.checked_sub(1).ok_or_else(|| Error::Invalid("result() before any launch".into()))?;
            return backend.read_element(&self.out, at + last as usize % g.result_words);
        }
        combine_pairwise(self.tv.op, backend.download_prefix(&self.out, g.partials as usize)?)
    }
}

/// A typed variant ready to run on one input: buffers allocated, preconditions checked.
pub struct TypedReduction<'a, T: Value> {
    backend: &'a Backend,
    input: &'a DeviceBuffer<T>,
    n: usize,
    work: TypedWork<T>,
}

impl<'a, T: Value> TypedReduction<'a, T> {
    /// Prepares `tv` on the first `n` elements of `input` with `block` threads per block.
    pub fn new(
        backend: &'a Backend,
        tv: &'static TypedVariant,
        input: &'a DeviceBuffer<T>,
        n: usize,
        block: u32,
    ) -> Result<Self> {
        Self::shaped(backend, tv, input, n, block, None)
    }

    /// As [`new`](Self::new), at most `blocks_per_sm` blocks per SM for a grid-stride variant
    /// (`None`: the occupancy calculator's answer), as [`crate::reduce::Reduction::shaped`].
    pub fn shaped(
        backend: &'a Backend,
        tv: &'static TypedVariant,
        input: &'a DeviceBuffer<T>,
        n: usize,
        block: u32,
        blocks_per_sm: Option<u32>,
    ) -> Result<Self> {
        let geometry = geometry(backend, tv, n, block, blocks_per_sm)?;
        if n > input.len() {
            return Err(Error::Invalid(format!("input holds {} elements, fewer than n = {n}", input.len())));
        }
        Ok(Self { backend, input, n, work: TypedWork::new(backend, tv, geometry)? })
    }

    /// The launch geometry.
    pub fn geometry(&self) -> TypedGeometry {
        self.work.geometry
    }

    /// The depth of its addition tree ([`sum_depth`]), for [`cpu::check`].
    pub fn depth(&self) -> u64 {
        sum_depth(self.work.tv, self.n, &self.work.geometry)
    }

    /// Enqueues the kernel: the timed work.
    pub fn launch(&mut self) -> Result<()> {
        // SAFETY: new() checked that input[..n] exists and made the geometry for n.
        unsafe { self.work.launch(self.backend, self.input, 0, self.n) }
    }

    /// Waits for the last launch and returns its result.
    pub fn result(&self) -> Result<T> {
        self.work.result(self.backend)
    }
}

impl<T: Value> crate::timing::Rerun for TypedReduction<'_, T> {
    fn reset(&mut self) -> Result<()> {
        Ok(())
    }
    fn launch(&mut self) -> Result<()> {
        TypedReduction::launch(self)
    }
    fn check(&mut self) -> Result<Option<String>> {
        Ok(None)
    }
}

/// The variant and block the library's typed reductions use: `atomic_accumulate`, 256
/// threads, as [`super::sum::SUM_PLAN`] for `i32` sums.
pub fn library_choice(elem: Elem, op: Op) -> Result<(&'static TypedVariant, u32)> {
    let rule = super::sum::SUM_PLAN.first().ok_or_else(|| Error::Invalid("empty sum plan".into()))?;
    Ok((find_typed(rule.variant, elem, op)?, rule.block))
}

/// `O` over every element of `input` (`reduce_scan::reduce::<f32, Max>(&backend, &buf)`): the
/// wrapping sum, the minimum or the maximum, in one launch; waits for it. An empty buffer
/// gives the identity (0, the type's largest value, its smallest). A one-shot
/// [`Reducer`](super::sum::Reducer)`::<T, O>` (which keeps its storage for the next call).
pub fn reduce<T: Value, O: OpKind>(backend: &Backend, input: &DeviceBuffer<T>) -> Result<T> {
    super::sum::Reducer::<T, O>::new(backend).reduce(input)
}

/// Per-launch result slots, for the typed benches (issue #12): each launch of a batch writes
/// its own partials or result words, so that every launch's answer survives the batch and is
/// read back after it, as `benches/reduce.rs` does for the classic variants.
impl<T: Value> TypedReduction<'_, T> {
    /// Elements of one slot: the launch's partials (host and last-block finishes), then its
    /// result words (two for the atomic finish, one for the last block).
    pub fn slot_len(&self) -> usize {
        let g = self.work.geometry;
        (g.partials + g.result_words as u64) as usize
    }

    /// `count` fresh slots: partials zeroed, result words at the operator's identity. Each slot
    /// takes one launch ([`launch_into`](Self::launch_into)) before it is filled again.
    pub fn alloc_slots(&self, count: usize) -> Result<DeviceBuffer<T>> {
        let len = self.slot_len() * count.max(1);
        let mut slots = self.backend.alloc::<T>(len)?;
        if self.work.geometry.result_words > 0 {
            self.backend.write(&mut slots, &vec![identity::<T>(self.work.tv.op)?; len])?;
        }
        Ok(slots)
    }

    /// Enqueues one launch that writes slot `slot` of `slots` (epoch 0: the atomic finish adds
    /// into the slot's first word, which holds the identity, and fills its second; the
    /// last-block finish shares the reduction's ticket, which every launch leaves at 0).
    pub fn launch_into(&mut self, slots: &mut DeviceBuffer<T>, slot: usize) -> Result<()> {
        let per = self.slot_len();
        if (slot + 1) * per > slots.len() {
            return Err(Error::Invalid(format!("slot {slot} of {per} elements: the slots hold {}", slots.len())));
        }
        let g = self.work.geometry;
        let cfg = LaunchConfig { grid: g.grid, block: g.block, shared_bytes: 0 };
        let out = slots.as_mut_ptr().wrapping_add(slot * per).cast::<u8>();
        let buffers = (self.input.as_ptr().cast::<u8>(), out, self.work.ticket.as_mut_ptr());
        // SAFETY: new() checked input[..n] and made the geometry for n; the slot holds the
        // partials and result words (checked above) of T, the variant's type; epoch 0 adds into
        // its first result word, which alloc_slots filled with the identity; the ticket was
        // zeroed at allocation and every finished launch leaves it 0.
        unsafe { self.work.tv.finish.launch(self.backend, cfg, buffers, self.n as u32, 0, T::ELEM.size()) }
    }

    /// Waits, and returns the answers of slots `0..count` (one download): partials combined as
    /// [`result`](Self::result) combines them, or the first result word after the partials.
    pub fn slot_answers(&self, slots: &DeviceBuffer<T>, count: usize) -> Result<Vec<T>> {
        let per = self.slot_len();
        let all = self.backend.download_prefix(slots, per * count)?;
        let g = self.work.geometry;
        let finish = |s: &[T]| {
            if g.result_words > 0 { Ok(s[g.partials as usize]) } else { combine_pairwise(self.work.tv.op, s.to_vec()) }
        };
        all.chunks(per).map(finish).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use kernels::types::{Max, Min, Sum};

    #[test]
    fn library_calls_agree_with_the_reference() {
        let b = Backend::emulator();
        let data: Vec<f32> = (0..3000).map(|i| f32::random((i as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15))).collect();
        let buf = b.upload(&data).unwrap();
        assert_eq!(reduce::<f32, Max>(&b, &buf).unwrap().to_bits(), cpu::reference(Op::Max, &data).to_bits());
        assert_eq!(reduce::<f32, Min>(&b, &buf).unwrap().to_bits(), cpu::reference(Op::Min, &data).to_bits());
        let got = reduce::<f32, Sum>(&b, &buf).unwrap();
        cpu::check(Op::Sum, &data, got, 3000).unwrap();
        let empty = b.alloc::<u64>(0).unwrap();
        assert_eq!(reduce::<u64, Min>(&b, &empty).unwrap(), u64::MAX);
    }

    #[test]
    fn pairwise_combine_and_depth() {
        assert_eq!(combine_pairwise(Op::Sum, vec![1u32, 2, 3, 4, 5]).unwrap(), 15);
        assert_eq!(combine_pairwise::<i64>(Op::Max, vec![]).unwrap(), i64::MIN);
        let tv = find_typed("warp_shuffle", Elem::F32, Op::Sum).unwrap();
        let g = TypedGeometry { grid: 5, block: 256, shared_bytes: 128, partials: 5, result_words: 0 };
        assert_eq!(sum_depth(tv, 10_000, &g), 8 + 2 + 10 + 3);
    }
}
