//! The library's operations beyond the whole-buffer reduction and scan — the ones a CUB or
//! PyTorch user reaches for next — in one list ([`Operation::ALL`]) that the command line
//! (`reduce --op argmax`, …), the tests (`tests/ops.rs`), the benches (`benches/ops.rs`), the GPU
//! script (`scripts/gpu/library_ops.sh`) and the crate docs' table iterate; and [`Prepared`],
//! one operation on one input, launched, timed and checked against the CPU reference the same
//! way by all of them.
//!
//! | operation | Rust | kernel | CUB | PyTorch |
//! |---|---|---|---|---|
//! | `argmin`, `argmax` | [`ArgReducer`]`<T, Min/Max>` | `arg_reduce__{type}_{min\|max}` | `DeviceReduce::ArgMin` / `ArgMax` | `torch.argmin` / `argmax` |
//! | `dot` | [`Reducer::dot`] | `transform_reduce__{type}_product_sum` | `DeviceReduce::TransformReduce` (or `InnerProduct`) | `torch.dot` |
//! | `sum_of_squares` | [`Reducer::sum_of_squares`] | `transform_reduce__{type}_square_sum` | `DeviceReduce::TransformReduce` | `(x * x).sum()` |
//! | `norm` | [`Reducer::norm`] | `transform_reduce__{type}_square_sum` | `TransformReduce`, then `sqrt` | `torch.linalg.vector_norm` |
//!
//! Beside them, the segmented reductions (`reduce --op segmented`, `--op rows`):
//! [`SegmentedReducer`](crate::SegmentedReducer) over [`Segments`](crate::Segments), kernels
//! `segmented_warp__{type}_{fold}` and `segmented_tiles__{type}_{fold}`
//! (`cub::DeviceSegmentedReduce`, `torch.sum(x, dim=-1)`), which take segments rather than one
//! input and answer one value (and index) per segment: [`crate::reduce::segmented`].

use kernels::types::{Max, Min, Sum};

use crate::backend::{Backend, DeviceBuffer};
use crate::cpu;
use crate::error::{Error, Result};
use crate::reduce::arg::{self, ArgReducer, Extremum};
use crate::reduce::one_pass::{OnePass, Sizing};
use crate::reduce::sum::Reducer;
use crate::reduce::transform::{self, Transform};
use crate::timing::Rerun;
use crate::types::{Elem, Op, Value};

/// One of the library's operations beyond the whole-buffer reduction and scan.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Operation {
    /// The smallest element and its first index.
    ArgMin,
    /// The largest element and its first index.
    ArgMax,
    /// `Σ a[i]·b[i]`.
    Dot,
    /// `Σ x[i]²`.
    SumOfSquares,
    /// `√(Σ x[i]²)`.
    Norm,
}

impl Operation {
    /// Every operation, in the order of the docs' table and `--op`'s list.
    pub const ALL: [Operation; 5] =
        [Operation::ArgMin, Operation::ArgMax, Operation::Dot, Operation::SumOfSquares, Operation::Norm];

    /// The name: `--op`'s value, the bench id's first part.
    pub fn name(self) -> &'static str {
        match self {
            Operation::ArgMin => "argmin",
            Operation::ArgMax => "argmax",
            Operation::Dot => "dot",
            Operation::SumOfSquares => "sum_of_squares",
            Operation::Norm => "norm",
        }
    }

    /// The operation called `name`, or an error listing them.
    pub fn parse(name: &str) -> Result<Operation> {
        Operation::ALL.into_iter().find(|o| o.name() == name).ok_or_else(|| {
            let names: Vec<_> = Operation::ALL.iter().map(|o| o.name()).collect();
            Error::Invalid(format!("no operation `{name}`; the operations are: {}", names.join(", ")))
        })
    }

    /// What it computes, in one line.
    pub fn what(self) -> &'static str {
        match self {
            Operation::ArgMin => "the smallest element and its first index (NaN is the smallest)",
            Operation::ArgMax => "the largest element and its first index (NaN is the largest)",
            Operation::Dot => "Σ a[i]·b[i] of two buffers, no temporary",
            Operation::SumOfSquares => "Σ x[i]², no temporary",
            Operation::Norm => "the L2 norm √(Σ x[i]²)",
        }
    }

    /// The kernel (file, and the PTX entries' prefix).
    pub fn kernel(self) -> &'static str {
        match self {
            Operation::ArgMin | Operation::ArgMax => "arg_reduce",
            Operation::Dot | Operation::SumOfSquares | Operation::Norm => "transform_reduce",
        }
    }

    /// The PTX entry it launches for `elem`.
    pub fn symbol(self, elem: Elem) -> &'static str {
        crate::with_elem!(elem, T => match self {
            Operation::ArgMin => arg::kernel::<T>(Op::Min).map_or("", |k| k.name),
            Operation::ArgMax => arg::kernel::<T>(Op::Max).map_or("", |k| k.name),
            Operation::Dot => transform::kernel::<T>(Transform::Product).name,
            Operation::SumOfSquares | Operation::Norm => transform::kernel::<T>(Transform::Square).name,
        })
    }

    /// Static shared memory per block of its kernel for `elem` (the kernels crate's constants).
    pub fn shared_bytes(self, elem: Elem) -> u32 {
        crate::with_elem!(elem, T => match self {
            Operation::ArgMin | Operation::ArgMax => kernels::reduce::arg_reduce_shared_bytes::<T>(),
            _ => kernels::reduce::transform_reduce_shared_bytes::<T>(),
        })
    }

    /// CUB's counterpart.
    pub fn cub(self) -> &'static str {
        match self {
            Operation::ArgMin => "cub::DeviceReduce::ArgMin",
            Operation::ArgMax => "cub::DeviceReduce::ArgMax",
            Operation::Dot | Operation::SumOfSquares => "cub::DeviceReduce::TransformReduce",
            Operation::Norm => "cub::DeviceReduce::TransformReduce + sqrt",
        }
    }

    /// PyTorch's counterpart.
    pub fn torch(self) -> &'static str {
        match self {
            Operation::ArgMin => "torch.argmin",
            Operation::ArgMax => "torch.argmax",
            Operation::Dot => "torch.dot",
            Operation::SumOfSquares => "(x * x).sum()",
            Operation::Norm => "torch.linalg.vector_norm",
        }
    }

    /// Input buffers it reads: 2 for a dot product, else 1.
    pub fn inputs(self) -> usize {
        match self {
            Operation::Dot => 2,
            _ => 1,
        }
    }

    /// Bytes it must read at least for `n` elements of `elem`: what its throughput and its
    /// bound (bytes over peak bandwidth) count.
    pub fn bytes(self, n: usize, elem: Elem) -> usize {
        n * elem.size() * self.inputs()
    }
}

/// What an operation answers.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Answer<T> {
    /// Argmin, argmax: the extreme and its index (`None`: empty input).
    Position(Option<Extremum<T>>),
    /// Dot product, sum of squares.
    Value(T),
    /// Norm.
    Norm(f64),
}

impl<T: Value> std::fmt::Display for Answer<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Answer::Position(Some(e)) => write!(f, "{} at {}", e.value, e.index),
            Answer::Position(None) => write!(f, "none"),
            Answer::Value(v) => write!(f, "{v}"),
            Answer::Norm(x) => write!(f, "{x}"),
        }
    }
}

/// The object that runs an operation.
// One runner per call, never in a collection: the size of its largest variant costs nothing.
#[allow(clippy::large_enum_variant)]
enum Runner<'b, T: Value> {
    ArgMin(ArgReducer<'b, T, Min>),
    ArgMax(ArgReducer<'b, T, Max>),
    Fused(Box<Reducer<'b, T, Sum>>),
}

/// One operation prepared on one input: the data on the host (for the reference) and on the
/// device, and the library object that runs it at a given block. What the CLI, the tests and
/// the benches launch, time ([`Rerun`]) and check.
pub struct Prepared<'b, T: Value> {
    backend: &'b Backend,
    op: Operation,
    a: Vec<T>,
    b: Option<Vec<T>>,
    da: DeviceBuffer<T>,
    db: Option<DeviceBuffer<T>>,
    runner: Runner<'b, T>,
    shape: OnePass,
    expected: std::sync::OnceLock<Expectation<T>>,
}

impl<'b, T: Value> Prepared<'b, T> {
    /// `op` on `a` (and, for a dot product, `b`: the same length) at `block` threads per block
    /// on the resident grid (`None`: the plan's block and grid), uploaded to `backend`.
    pub fn new(backend: &'b Backend, op: Operation, a: Vec<T>, b: Option<Vec<T>>, block: Option<u32>) -> Result<Self> {
        let sizing = match block {
            Some(block) => Sizing::block(block)?,
            None => Sizing::Plan,
        };
        Self::with_sizing(backend, op, (a, b), sizing)
    }

    /// The same at the block and grid `sizing` gives (`--block`, `--blocks-per-sm`).
    pub fn with_sizing(
        backend: &'b Backend,
        op: Operation,
        (a, b): (Vec<T>, Option<Vec<T>>),
        sizing: Sizing,
    ) -> Result<Self> {
        let b = if op.inputs() == 2 {
            let b = b.ok_or_else(|| Error::Invalid(format!("{}: a second input is needed", op.name())))?;
            if b.len() != a.len() {
                return Err(Error::Invalid(format!(
                    "{} of inputs of {} and {} elements: the lengths must match",
                    op.name(),
                    a.len(),
                    b.len()
                )));
            }
            Some(b)
        } else {
            None
        };
        let runner = match op {
            Operation::ArgMin => Runner::ArgMin(ArgReducer::with_sizing(backend, sizing)),
            Operation::ArgMax => Runner::ArgMax(ArgReducer::with_sizing(backend, sizing)),
            _ => Runner::Fused(Box::new(Reducer::with_transform_sizing(backend, sizing))),
        };
        let shape = OnePass::sized(backend, op.symbol(T::ELEM), sizing, arg::items::<T>(), a.len())?;
        let da = backend.upload(&a)?;
        let db = b.as_deref().map(|b| backend.upload(b)).transpose()?;
        Ok(Self { backend, op, a, b, da, db, runner, shape, expected: std::sync::OnceLock::new() })
    }

    /// Elements.
    pub fn n(&self) -> usize {
        self.a.len()
    }

    /// The launch shape of its kernel (`shape().config(n)`: the grid and block of one run).
    pub fn shape(&self) -> OnePass {
        self.shape
    }

    /// The block it launches with.
    pub fn block(&self) -> u32 {
        self.shape.block
    }

    /// The backend it runs on.
    pub fn backend(&self) -> &'b Backend {
        self.backend
    }

    /// The operation.
    pub fn op(&self) -> Operation {
        self.op
    }

    /// Queues one run on the backend's stream.
    pub fn enqueue(&mut self) -> Result<()> {
        let n = self.a.len();
        match (&mut self.runner, self.op) {
            (Runner::ArgMin(r), _) => r.enqueue(&self.da, 0..n),
            (Runner::ArgMax(r), _) => r.enqueue(&self.da, 0..n),
            (Runner::Fused(r), Operation::Dot) => {
                let db = self.db.as_ref().ok_or_else(|| Error::Invalid("dot: no second input".into()))?;
                r.enqueue_dot(&self.da, db, 0..n)
            }
            (Runner::Fused(r), _) => r.enqueue_sum_of_squares(&self.da, 0..n),
        }
    }

    /// The answer of the last run (waits for it).
    pub fn answer(&self) -> Result<Answer<T>> {
        Ok(match (&self.runner, self.op) {
            (Runner::ArgMin(r), _) => Answer::Position(r.result()?),
            (Runner::ArgMax(r), _) => Answer::Position(r.result()?),
            (Runner::Fused(r), Operation::Norm) => Answer::Norm(transform::norm_of(r.result()?)),
            (Runner::Fused(r), _) => Answer::Value(r.result()?),
        })
    }

    /// Does `got` pass against the CPU reference? Argmin/argmax exactly; integer dot products
    /// and sums of squares exactly (wrapping); floats within [`cpu::float_dot_bound`] of the
    /// kernel's tree; a norm within half that relative bound and `f64`'s rounding. The reference
    /// is computed once ([`expectation`](Self::expectation)) and kept.
    pub fn check(&self, got: Answer<T>) -> std::result::Result<(), String> {
        self.expectation().check(got)
    }

    /// What a run must answer, computed once (the exact dot product of 2^28 elements takes a
    /// while): the checks of the timed runs and of the benches' every launch are then a
    /// comparison.
    pub fn expectation(&self) -> &Expectation<T> {
        self.expected
            .get_or_init(|| Expectation::of(self.op, &self.a, self.b.as_deref(), self.shape.depth(self.a.len())))
    }

    /// The reference answer, for reports: the position, the exact (integers: wrapped) value, or
    /// the norm of the exact sum of squares.
    pub fn reference(&self) -> String {
        match self.expectation() {
            Expectation::Position(p) => p.map_or("none".into(), |(v, i)| format!("{v} at {i}")),
            Expectation::Exact(v) => format!("{v}"),
            Expectation::Within { exact, .. } => format!("{exact:e}"),
            Expectation::Norm { want, .. } => format!("{want}"),
        }
    }
}

/// What an operation must answer on one input, computed once.
#[derive(Clone, Debug)]
pub enum Expectation<T> {
    /// Argmin, argmax: exactly this value (bits) and index.
    Position(Option<(T, u64)>),
    /// An integer dot product or sum of squares: these bits.
    Exact(T),
    /// A float one: within `bound` of `exact` (`cpu::float_dot_bound`).
    Within {
        /// The exact value.
        exact: f64,
        /// The bound.
        bound: f64,
    },
    /// A norm: within `bound` of `want`.
    Norm {
        /// The norm of the exact (integers: wrapped) sum of squares.
        want: f64,
        /// Half the sum's relative bound, a few `f64` roundings, and `√(n·η)` for underflow.
        bound: f64,
    },
}

impl<T: Value> Expectation<T> {
    /// The expectation of `op` on `a` (and `b`) summed with a tree of `depth`.
    pub fn of(op: Operation, a: &[T], b: Option<&[T]>, depth: u64) -> Self {
        match op {
            Operation::ArgMin | Operation::ArgMax => {
                Expectation::Position(cpu::arg_reference(op == Operation::ArgMin, a))
            }
            Operation::Norm => {
                let (want, sum_rel, under) = if T::ELEM.is_float() {
                    let under = (a.len() as f64 * cpu::smallest_subnormal::<T>()).sqrt();
                    (cpu::exact_dot(a, None).0.sqrt(), cpu::gamma(depth + 1, T::UNIT_ROUNDOFF), under)
                } else {
                    (transform::norm_of(cpu::transform_reference(a, None)), 0.0, 0.0)
                };
                Expectation::Norm { want, bound: (sum_rel / 2.0 + 4.0 * f64::EPSILON) * want + under }
            }
            _ if T::ELEM.is_float() => {
                let (exact, abs) = cpu::exact_dot(a, b);
                let bound = cpu::float_dot_bound(T::UNIT_ROUNDOFF, depth, abs, a.len(), cpu::smallest_subnormal::<T>());
                Expectation::Within { exact, bound }
            }
            _ => Expectation::Exact(cpu::transform_reference(a, b)),
        }
    }

    /// Does `got` pass? `Err` says expected and actual.
    pub fn check(&self, got: Answer<T>) -> std::result::Result<(), String> {
        let show = |x: Option<(T, u64)>| x.map_or("none (empty)".to_string(), |(v, i)| format!("{v} at index {i}"));
        let fail = |want: String, got: String| Err(format!("expected {want}, got {got}"));
        match (self, got) {
            (Expectation::Position(want), Answer::Position(got)) => {
                let got = got.map(|e| (e.value, e.index));
                let same = match (want, got) {
                    (None, None) => true,
                    (Some((wv, wi)), Some((gv, gi))) => *wi == gi && wv.same_bits(gv),
                    _ => false,
                };
                if same { Ok(()) } else { fail(show(*want), show(got)) }
            }
            (Expectation::Exact(want), Answer::Value(v)) if want.same_bits(v) => Ok(()),
            (Expectation::Exact(want), Answer::Value(v)) => {
                fail(format!("{want} (bits {:#x})", want.bits()), format!("{v} (bits {:#x})", v.bits()))
            }
            // A NaN (or an infinity) in the exact answer: the same, not a bound (a NaN's error
            // would compare false with any bound and fail a right answer).
            (Expectation::Within { exact, .. }, Answer::Value(v)) if !exact.is_finite() => {
                if crate::cpu::same_non_finite(*exact, v.to_f64()) {
                    Ok(())
                } else {
                    fail(format!("{exact} (a NaN or infinity in the input)"), format!("{v}"))
                }
            }
            (Expectation::Norm { want, .. }, Answer::Norm(x)) if !want.is_finite() => {
                if crate::cpu::same_non_finite(*want, x) {
                    Ok(())
                } else {
                    fail(format!("{want} (a NaN or infinity in the input)"), format!("{x}"))
                }
            }
            (Expectation::Within { exact, bound }, Answer::Value(v)) => {
                let err = (v.to_f64() - exact).abs();
                if err <= *bound {
                    Ok(())
                } else {
                    fail(format!("{exact:e} (exact) ± {bound:e}"), format!("{v} (error {err:e})"))
                }
            }
            (Expectation::Norm { want, bound }, Answer::Norm(x)) => {
                let err = (x - want).abs();
                if err <= *bound {
                    Ok(())
                } else {
                    fail(format!("{want:e} ± {bound:e}"), format!("{x:e} (error {err:e})"))
                }
            }
            (want, got) => Err(format!("expected an answer like {want:?}, got {got:?}")),
        }
    }
}

impl<T: Value> Rerun for Prepared<'_, T> {
    fn reset(&mut self) -> Result<()> {
        Ok(())
    }

    fn launch(&mut self) -> Result<()> {
        self.enqueue()
    }

    fn check(&mut self) -> Result<Option<String>> {
        let got = self.answer()?;
        Ok(Prepared::check(self, got).err())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_parse_back_and_every_operation_runs_on_the_emulator() {
        let b = Backend::emulator();
        for op in Operation::ALL {
            assert_eq!(Operation::parse(op.name()).unwrap(), op);
            let a: Vec<f32> = (0..3001).map(|i| ((i * 37) % 101) as f32 * 0.25 - 12.0).collect();
            let other = Some(a.iter().rev().copied().collect());
            let mut p = Prepared::new(&b, op, a, other, Some(64)).unwrap();
            p.enqueue().unwrap();
            let got = p.answer().unwrap();
            p.check(got).unwrap_or_else(|e| panic!("{}: {e}", op.name()));
            assert!(op.symbol(Elem::F32).starts_with(op.kernel()));
        }
        assert!(Operation::parse("argmid").unwrap_err().to_string().contains("argmin, argmax, dot"));
        let e = Prepared::new(&b, Operation::Dot, vec![1i32, 2], Some(vec![3]), None).err().unwrap().to_string();
        assert!(e.contains("inputs of 2 and 1 elements"), "{e}");
    }
}
