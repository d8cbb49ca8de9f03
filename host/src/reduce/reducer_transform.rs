//! The transform-reduce methods of [`Reducer`]`<T, Sum>` (dot product, sum of squares, norm):
//! the checks of their inputs and their launches through the reducer's fused storage. The
//! transforms, their kernels and that storage are [`transform`](super::transform)'s; this file
//! only joins them to the reducer, so that neither of `sum.rs` and `transform.rs` imports the
//! other (tests/imports.rs).

use std::ops::Range;

use kernels::types::Sum;

use super::one_pass::check_len;
use super::sum::Reducer;
use super::transform::{Transform, norm_of};
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
