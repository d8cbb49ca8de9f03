//! Transform-reduce: a map fused into the reduction, with no temporary — the dot product, the
//! sum of squares and the L2 norm of [`Reducer`]`<T, Sum>` (`cub::DeviceReduce::TransformReduce`,
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
//!   addition tree ([`OnePass::depth`](super::one_pass::OnePass::depth)), the `+ 1` the product's rounding, `η` the smallest
//!   subnormal (products that underflow; [`cpu::float_dot_bound`](crate::cpu::float_dot_bound),
//!   `docs/types.md`). For a sum of squares without underflow `Σ|aᵢbᵢ| = Σxᵢ²`, so the bound is
//!   relative: γ(d + 1) of the answer. The norm's square root is taken in `f64` and adds at most
//!   half of that relative error, plus `f64`'s rounding.
//!
//! **Sizes.** The two inputs of a dot product must have the same length (or, for the `_range`
//! forms, hold the range): anything else is one line, [`Error::Invalid`], before any launch.
//! Empty input gives 0 (and a norm of 0.0) without a launch.

use std::ops::Range;

use kernels::types::Sum;

pub use super::fused::{ByTransform, KERNELS, Transform, TransformArgs, items, kernel};
use super::one_pass::check_len;
use super::sum::Reducer;
use crate::backend::DeviceBuffer;
use crate::error::{Error, Result};
use crate::types::{Value, check_layout};

/// The lengths of a dot product's inputs, checked: both hold `range`.
fn check_pair<T: Value>(a: &DeviceBuffer<T>, b: &DeviceBuffer<T>, range: &Range<usize>) -> Result<()> {
    if range.start > range.end || range.end > a.len() || range.end > b.len() {
        return Err(Error::Invalid(format!(
            "dot of elements {}..{} of buffers of {} and {} elements: the range must lie within both",
            range.start,
            range.end,
            a.len(),
            b.len()
        )));
    }
    check_layout::<T>()
}

/// One input's range, checked.
fn check_one<T: Value>(what: &str, x: &DeviceBuffer<T>, range: &Range<usize>) -> Result<()> {
    if range.start > range.end || range.end > x.len() {
        return Err(Error::Invalid(format!(
            "{what} of elements {}..{} of a buffer of {}: the range must lie within the buffer",
            range.start,
            range.end,
            x.len()
        )));
    }
    check_layout::<T>()
}

impl<'b, T: Value> Reducer<'b, T, Sum> {
    /// `Σ a[i]·b[i]` over every element; waits. The buffers must have the same length
    /// (`torch.dot`'s rule). Integers wrap; floats within the bound of the module docs.
    pub fn dot(&mut self, a: &DeviceBuffer<T>, b: &DeviceBuffer<T>) -> Result<T> {
        if a.len() != b.len() {
            return Err(Error::Invalid(format!(
                "dot of buffers of {} and {} elements: the lengths must match",
                a.len(),
                b.len()
            )));
        }
        self.dot_range(a, b, 0..a.len())
    }

    /// `Σ a[i]·b[i]` for `i` in `range` (which both buffers hold); waits.
    pub fn dot_range(&mut self, a: &DeviceBuffer<T>, b: &DeviceBuffer<T>, range: Range<usize>) -> Result<T> {
        self.enqueue_dot(a, b, range)?;
        self.result()
    }

    /// `Σ x[i]²` over every element; waits.
    pub fn sum_of_squares(&mut self, x: &DeviceBuffer<T>) -> Result<T> {
        self.sum_of_squares_range(x, 0..x.len())
    }

    /// `Σ x[i]²` for `i` in `range`; waits.
    pub fn sum_of_squares_range(&mut self, x: &DeviceBuffer<T>, range: Range<usize>) -> Result<T> {
        self.enqueue_sum_of_squares(x, range)?;
        self.result()
    }

    /// The L2 norm `√(Σ x[i]²)`, the square root taken in `f64` (`torch.linalg.vector_norm`);
    /// waits. Integers: the root of the wrapping sum of squares (module docs).
    pub fn norm(&mut self, x: &DeviceBuffer<T>) -> Result<f64> {
        self.norm_range(x, 0..x.len())
    }

    /// The L2 norm of `x[range]`; waits.
    pub fn norm_range(&mut self, x: &DeviceBuffer<T>, range: Range<usize>) -> Result<f64> {
        Ok(norm_of(self.sum_of_squares_range(x, range)?))
    }

    /// Queues `Σ a[i]·b[i]` over `range` on the backend's stream; read it with
    /// [`result`](Self::result). Keep both buffers alive until then.
    pub fn enqueue_dot(&mut self, a: &DeviceBuffer<T>, b: &DeviceBuffer<T>, range: Range<usize>) -> Result<()> {
        self.begin_fused();
        check_pair(a, b, &range)?;
        self.launch_fused(Transform::Product, a.as_ptr(), b.as_ptr(), range)
    }

    /// Queues `Σ x[i]²` over `range`; read it with [`result`](Self::result) (the norm is its
    /// square root).
    pub fn enqueue_sum_of_squares(&mut self, x: &DeviceBuffer<T>, range: Range<usize>) -> Result<()> {
        self.begin_fused();
        check_one("sum of squares", x, &range)?;
        self.launch_fused(Transform::Square, x.as_ptr(), x.as_ptr(), range)
    }

    /// One launch of `transform` over `range` of the inputs at `a` and `b` (checked by the
    /// caller), or the identity for an empty range.
    fn launch_fused(&mut self, transform: Transform, a: *const T, b: *const T, range: Range<usize>) -> Result<()> {
        if range.is_empty() {
            self.end_fused(None);
            return Ok(());
        }
        check_len(if transform == Transform::Product { "dot" } else { "sum of squares" }, range.len())?;
        let backend = self.backend();
        let fused = self.fused_storage();
        let (a, b) = (a.wrapping_add(range.start), b.wrapping_add(range.start));
        // SAFETY: the range lies within both inputs (the callers checked it) and holds
        // 1..=u32::MAX elements (checked above).
        unsafe { fused.launch(backend, transform, a, b, range.len()) }?;
        self.end_fused(Some(()));
        Ok(())
    }
}

/// The norm from a sum of squares: its square root in `f64`; an integer sum of squares (which
/// wraps) is read as unsigned, its value modulo 2^bits.
pub fn norm_of<T: Value>(sum_of_squares: T) -> f64 {
    if T::ELEM.is_float() { sum_of_squares.to_f64().sqrt() } else { (sum_of_squares.bits() as f64).sqrt() }
}
