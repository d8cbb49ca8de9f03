//! Reductions, laid out like [`crate::scan`]: one track for every element type and operator.
//!
//! * [`registry`] — the one list of variants ([`registry::all`]); each declares the element
//!   types × operators it runs (its rows: [`registry::Instance`]).
//! * [`plan`] — the grid and finish axes of a row, matched there and nowhere else, and the
//!   launch [`Geometry`]; [`geometry()`] sizes a row's launch on one input ([`nested`]: the room
//!   the nested kernels' device-side launches need).
//! * [`cpu`] — the CPU references (the book's recursion for `i32` sums; every type and
//!   operator, with the float sums' error bound).
//! * [`Reduction`] — one row prepared on one input: buffers allocated, preconditions checked;
//!   [`measure`] times and checks it. What the tests, the benches and the CLI run.
//! * [`sum`] — [`sum::Reducer`], the reusable object a library caller keeps (generic over
//!   element type and operator), its plan ([`sum::PLAN`]), and the one-shot [`sum::sum`] and
//!   [`reduce()`] (`reduce_scan::reduce::<f32, Max>(&backend, &buf)`).
//!
//! * [`arg`] — [`arg::ArgReducer`], the position of the extreme (argmin, argmax), and
//!   [`transform`] — the transform-reduce methods of [`sum::Reducer`] (dot product, sum of
//!   squares, norm): the library's one-launch reductions beyond the registry's whole-buffer
//!   rows, each one kernel generic over type and operator (and transform), launched through
//!   [`one_pass`] (the plan's resident grid and last-block finish); [`segmented`] — many
//!   reductions in one launch, over CSR offsets or a matrix's rows ([`segmented::SegmentedReducer`]).
//!
//! Every row runs through one workspace shape (the buffers its finish needs, of its element
//! type) and one launch: `i32` sums are the curriculum's rows, not a second path.

pub mod arg;
pub mod cpu;
mod fused;
mod geometry;
pub mod nested;
pub mod one_pass;
pub mod plan;
pub mod registry;
mod run;
pub mod segmented;
pub mod sum;
pub mod transform;
mod workspace;

pub use geometry::{check, check_of, geometry, geometry_of, resident_per_sm};
pub use plan::{Geometry, MAX_GRID};
pub use run::{Measurement, Reduction, measure, measure_own, sum_depth};
pub use sum::{Reducer, reduce};
