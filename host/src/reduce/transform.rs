//! Transform-reduce: a map fused into the reduction, with no temporary — the dot product, the
//! sum of squares and the L2 norm of [`Reducer`](super::sum::Reducer)`<T, Sum>` (`cub::DeviceReduce::TransformReduce`,
//! `torch.dot`, `torch.linalg.vector_norm`), for the six element types.
//!
//! ```
//! use reduce_scan::{Backend, Reducer, Sum};
//! let backend = Backend::emulator(); // Backend::gpu()? on a GPU host
//! let a = backend.upload(&[1.0f64, 2.0, 3.0, 4.0])?;
//! let b = backend.upload(&[0.5f64, -1.0, 2.0, 0.25])?;
//! let mut r = Reducer::<f64, Sum>::new(&backend); // owns its storage; reuse it
//! assert_eq!(r.dot(&a, &b)?, 5.5);
//! assert_eq!(r.dot_range(&a, &b, 1..3)?, 4.0);
//! assert_eq!(r.sum_of_squares(&a)?, 30.0);
//! assert_eq!(r.norm(&b)?, 2.3048861143232218); // √5.3125
//! r.enqueue_dot(&a, &b, 0..4)?; // queued; the host goes on
//! assert_eq!(r.result()?, 5.5); // waits for it
//! let ints = backend.upload(&[u32::MAX, 3])?;
//! assert_eq!(Reducer::<u32, Sum>::new(&backend).sum_of_squares(&ints)?, 10); // wraps: 1 + 9
//! # Ok::<(), reduce_scan::Error>(())
//! ```
//!
//! **What it computes.** The transform is an axis of its own beside the operator
//! ([`Transform`]; `kernels::types::Transform`): [`Transform::Product`] × sum is a dot product,
//! [`Transform::Square`] × sum a sum of squares; the norm is the square root of the sum of
//! squares. One kernel body serves them all (`kernels::reduce::transform_reduce_generic`,
//! entries `transform_reduce__{type}_{product|square}_sum`).
//!
//! * **Integers wrap**, products and sums alike (modulo 2³² or 2⁶⁴, as the GPU's `mul.lo` and
//!   `add` do): exact modulo 2^bits, whatever the order. The norm of integers is the square
//!   root, in `f64`, of that wrapped sum of squares read as unsigned: the true norm while
//!   Σx² < 2³² (32-bit types) or 2⁶⁴ (widen the input to `i64` or `f64` beyond it).
//! * **Floats**: each product rounded to nearest (`mul.rn`), then summed by the kernel's tree
//!   in a fixed order (the same bits on every run of the same grid). The result lies within
//!   `γ(d + 1)·Σ|aᵢbᵢ| + 2⁻⁵¹·Σ|aᵢbᵢ| + n·η` of the exact dot product, `d` the depth of the
//!   addition tree ([`OnePass::depth`]), the `+ 1` the product's rounding, `η` the smallest
//!   subnormal (products that underflow; [`cpu::float_dot_bound`](crate::cpu::float_dot_bound),
//!   `docs/types.md`). For a sum of squares without underflow `Σ|aᵢbᵢ| = Σxᵢ²`, so the bound is
//!   relative: γ(d + 1) of the answer. The norm's square root is taken in `f64` and adds at most
//!   half of that relative error, plus `f64`'s rounding.
//!
//! **Sizes.** The two inputs of a dot product must have the same length (or, for the `_range`
//! forms, hold the range): anything else is one line, [`Error::Invalid`], before any launch.
//! Empty input gives 0 (and a norm of 0.0) without a launch.

use super::one_pass::{DEFAULT_BLOCK, LastBlockWords, OnePass, check_block};
use crate::backend::{Backend, Kernel};
use crate::error::{Error, Result};
use crate::types::{PerElement, PerType, Value};

/// What a transform-reduce applies to each element (or pair) before the sum.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Transform {
    /// `a[i] · b[i]`: the dot product.
    Product,
    /// `x[i]²`: the sum of squares (and, by its square root, the norm).
    Square,
}

impl Transform {
    /// Both transforms, in the kernel table's order.
    pub const ALL: [Transform; 2] = [Transform::Product, Transform::Square];

    /// The name in PTX entry names (`transform_reduce__f32_product_sum`).
    pub fn name(self) -> &'static str {
        match self {
            Transform::Product => "product",
            Transform::Square => "square",
        }
    }

    /// Inputs it reads: 2 for a product, 1 for a square.
    pub fn inputs(self) -> usize {
        match self {
            Transform::Product => 2,
            Transform::Square => 1,
        }
    }
}

/// `transform_reduce__{type}_{transform}_sum(a, b, partials, ticket, n)`: the partials and the
/// answer after them (`grid + 1`), the ticket.
pub type TransformArgs<T> = (*const T, *const T, *mut T, *mut u32, u32);

/// The kernels of one element type: `[product, square]`, with the sum.
#[derive(Debug)]
pub struct ByTransform;

impl PerElement for ByTransform {
    type Of<T: Value> = [Kernel<TransformArgs<T>>; 2];
}

/// The twelve entries, named as `kernels::transform_kernel!` names them.
macro_rules! transform_kernels {
    ($($t:ident),*) => {
        PerType { $($t: [
            crate::kernel_ref!(kernels::reduce::${concat(transform_reduce__, $t, _product_sum)}(a, b, p, t, n)),
            crate::kernel_ref!(kernels::reduce::${concat(transform_reduce__, $t, _square_sum)}(a, b, p, t, n)),
        ]),* }
    };
}

/// Every transform-reduce kernel, by element type.
pub static KERNELS: PerType<ByTransform> = transform_kernels!(i32, u32, i64, u64, f32, f64);

/// The kernel of `T` for `transform` (with the sum).
pub fn kernel<T: Value>(transform: Transform) -> Kernel<TransformArgs<T>> {
    T::of(&KERNELS)[match transform {
        Transform::Product => 0,
        Transform::Square => 1,
    }]
}

/// Elements a thread consumes per trip (of each input): four 128-bit loads' worth.
pub fn items<T: Value>() -> u32 {
    kernels::collective::thread::items_per_trip::<T>() as u32
}

/// The storage of a [`Reducer`](super::sum::Reducer)'s transform-reduce calls: one launch shape and its words per
/// transform (their kernels' occupancy may differ), made by the first call of each.
pub(crate) struct Fused<T: Value> {
    block: u32,
    shapes: [Option<(OnePass, LastBlockWords<T>)>; 2],
    /// The transform and grid of the last launch, whose answer `result` reads.
    pub(crate) last: Option<(Transform, u32)>,
}

impl<T: Value> Fused<T> {
    pub(crate) fn new(block: u32) -> Self {
        Self { block, shapes: [None, None], last: None }
    }

    /// Queues `transform` × sum over `n` elements of `a` (and `b`) from the given device
    /// addresses.
    ///
    /// # Safety
    /// `a` holds `n` elements of `T` of this backend, and so does `b` for a product (for a
    /// square it is never read); `1 ≤ n ≤ u32::MAX`.
    pub(super) unsafe fn launch(
        &mut self,
        backend: &Backend,
        transform: Transform,
        a: *const T,
        b: *const T,
        n: usize,
    ) -> Result<()> {
        self.last = None;
        let k = kernel::<T>(transform);
        let slot = &mut self.shapes[transform as usize];
        if slot.is_none() {
            let shape = OnePass::new(backend, k.name, self.block, items::<T>())?;
            *slot = Some((shape, LastBlockWords::new(backend, &shape, false)?));
        }
        let Some((shape, words)) = slot.as_mut() else {
            return Err(Error::Invalid("the transform-reduce storage is missing".into()));
        };
        let cfg = shape.config(n);
        let args = (a, b, words.values.as_mut_ptr(), words.ticket.as_mut_ptr(), n as u32);
        // SAFETY: the inputs are the caller's promise; the partials hold max_grid + 1 ≥ grid + 1
        // elements; the ticket is this storage's, 0 between launches, on the backend's one
        // stream; the grid is within 2^29 threads (OnePass).
        unsafe { backend.launch(&k, cfg, args) }?;
        self.last = Some((transform, cfg.grid));
        Ok(())
    }

    /// The answer of the last launch (waits for it).
    pub(crate) fn answer(&self, backend: &Backend) -> Result<T> {
        let (transform, grid) = self.last.ok_or_else(|| Error::Invalid("no transform-reduce launched".into()))?;
        match &self.shapes[transform as usize] {
            Some((_, words)) => Ok(words.answer(backend, grid)?.0),
            None => Err(Error::Invalid("the transform-reduce storage is missing".into())),
        }
    }
}

/// The norm from a sum of squares: its square root in `f64`; an integer sum of squares (which
/// wraps) is read as unsigned, its value modulo 2^bits.
pub fn norm_of<T: Value>(sum_of_squares: T) -> f64 {
    if T::ELEM.is_float() { sum_of_squares.to_f64().sqrt() } else { (sum_of_squares.bits() as f64).sqrt() }
}

/// The block of a reducer's transform-reduce launches, unless set (`Reducer::with_block`).
pub(crate) fn default_block() -> u32 {
    DEFAULT_BLOCK
}

/// `Ok` for a block the transform-reduce kernels take.
pub(crate) fn check_fused_block(block: u32) -> Result<()> {
    check_block(block)
}
