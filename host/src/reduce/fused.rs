//! The kernel table and the device storage of the transform-reduce calls of
//! [`Reducer`](super::Reducer) (the [`transform`](super::transform) module's methods): which
//! kernel runs a [`Transform`] for an element type, and the words its last block writes. Its own
//! file so that `sum.rs` (which keeps a [`Fused`] in every reducer) and `transform.rs` (which
//! adds the methods to `Reducer`) need not import each other.

use super::one_pass::{Shapes, Sizing};
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
            crate::kernel_ref!(instance kernels::reduce::transform_reduce::$t::product::sum(a, b, p, t, n)),
            crate::kernel_ref!(instance kernels::reduce::transform_reduce::$t::square::sum(a, b, p, t, n)),
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

/// The storage of a [`Reducer`]'s transform-reduce calls: the launch shapes and their words
/// per transform (their kernels' occupancy may differ), made by the first call that needs each.
pub(crate) struct Fused<T: Value> {
    sizing: Sizing,
    shapes: [Option<Shapes<T>>; 2],
    /// The transform, grid and shape slot of the last launch, whose answer `result` reads.
    pub(crate) last: Option<(Transform, u32, usize)>,
}

impl<T: Value> Fused<T> {
    pub(crate) fn new(sizing: Sizing) -> Self {
        Self { sizing, shapes: [None, None], last: None }
    }

    /// Queues `transform` × sum over `n` elements of `a` (and `b`) from the given device
    /// addresses.
    ///
    /// # Safety
    /// `a` holds `n` elements of `T` of this backend, and so does `b` for a product (for a
    /// square it is never read); `1 ≤ n ≤ u32::MAX`.
    pub(crate) unsafe fn launch(
        &mut self,
        backend: &Backend,
        transform: Transform,
        a: *const T,
        b: *const T,
        n: usize,
    ) -> Result<()> {
        self.last = None;
        let k = kernel::<T>(transform);
        let sizing = self.sizing;
        let shapes =
            self.shapes[transform as usize].get_or_insert_with(|| Shapes::new(k.name, items::<T>(), false, sizing));
        let slot = shapes.for_len(backend, n)?;
        let (shape, words) = shapes.get(slot)?;
        let cfg = shape.config(n);
        let args = (a, b, words.values.as_mut_ptr(), words.ticket.as_mut_ptr(), n as u32);
        // SAFETY: the inputs are the caller's promise; the partials hold max_grid + 1 ≥ grid + 1
        // elements; the ticket is this storage's, 0 between launches, on the backend's one
        // stream; the grid is within 2^29 threads (OnePass).
        unsafe { backend.launch(&k, cfg, args) }?;
        self.last = Some((transform, cfg.grid, slot));
        Ok(())
    }

    /// The answer of the last launch (waits for it).
    pub(crate) fn answer(&self, backend: &Backend) -> Result<T> {
        let (transform, grid, slot) = self.last.ok_or_else(|| Error::Invalid("no transform-reduce launched".into()))?;
        match &self.shapes[transform as usize] {
            Some(shapes) => Ok(shapes.words(slot)?.answer(backend, grid)?.0),
            None => Err(Error::Invalid("the transform-reduce storage is missing".into())),
        }
    }
}
