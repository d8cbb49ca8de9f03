//! One row of the registry prepared on one input ([`Reduction`]: buffers allocated,
//! preconditions checked), and measured ([`measure`]): what the tests, the benches and the CLI
//! run, for every element type and operator.

use super::cpu;
use super::geometry::geometry_of;
use super::plan::Geometry;
use super::registry::{Instance, Variant};
use super::workspace::Workspace;
use crate::backend::{Backend, DeviceBuffer};
use crate::error::{Error, Result};
use crate::timing::{Rerun, Runs, timed_runs};
use crate::types::{Op, Value};

/// A row of the registry ready to run on one input: buffers allocated, preconditions checked.
pub struct Reduction<'a, T: Value = i32> {
    backend: &'a Backend,
    inst: Instance<T>,
    input: &'a DeviceBuffer<T>,
    offset: usize,
    n: usize,
    work: Workspace<T>,
    /// The answer every run must give, when the caller knows it ([`Rerun::check`]).
    expected: Option<T>,
}

impl<'a, T: Value> Reduction<'a, T> {
    /// Prepares `variant`'s own row ([`Variant::own`]: the curriculum's `i32` kernel) on the
    /// first `n` elements of `input` with `block` threads per block.
    pub fn new(
        backend: &'a Backend,
        variant: &'static Variant,
        input: &'a DeviceBuffer<T>,
        n: usize,
        block: u32,
    ) -> Result<Self> {
        Self::new_at(backend, variant, input, 0, n, block)
    }

    /// Prepares `variant`'s own row on the `n` elements of `input` starting at element `offset`:
    /// the kernel gets the address of element `offset`, which is only element-aligned in
    /// general (the unaligned-head cases of the vector-load kernels). In-place variants get a
    /// scratch copy of the whole buffer and work on the same range of it.
    pub fn new_at(
        backend: &'a Backend,
        variant: &'static Variant,
        input: &'a DeviceBuffer<T>,
        offset: usize,
        n: usize,
        block: u32,
    ) -> Result<Self> {
        Self::shaped(backend, variant.instance::<T>(variant.op)?, input, (offset, n), block, None)
    }

    /// Prepares the row `inst` (any element type × operator a variant runs:
    /// [`Variant::instance`]) on the first `n` elements of `input`.
    pub fn of(
        backend: &'a Backend,
        inst: Instance<T>,
        input: &'a DeviceBuffer<T>,
        n: usize,
        block: u32,
    ) -> Result<Self> {
        Self::shaped(backend, inst, input, (0, n), block, None)
    }

    /// The row `inst` on `input[offset..offset + n]` (`range`), with the grid-stride variants'
    /// residency fixed at `blocks_per_sm` instead of the occupancy calculator's answer (`None`):
    /// the grid is at most SMs × `blocks_per_sm` blocks ([`Grid::Resident`](super::plan::Grid);
    /// other grids ignore it). What the library's plan and the CLI's `--blocks-per-sm` choose.
    pub fn shaped(
        backend: &'a Backend,
        inst: Instance<T>,
        input: &'a DeviceBuffer<T>,
        (offset, n): (usize, usize),
        block: u32,
        blocks_per_sm: Option<u32>,
    ) -> Result<Self> {
        let geometry = geometry_of(backend, &inst, n, block, blocks_per_sm)?;
        if offset.checked_add(n).is_none_or(|end| end > input.len()) {
            return Err(Error::Invalid(format!(
                "input holds {} elements, fewer than offset {offset} + n = {n}",
                input.len()
            )));
        }
        let work = Workspace::new(backend, geometry, inst.op, input.len())?;
        Ok(Self { backend, inst, input, offset, n, work, expected: None })
    }

    /// Checks every run's result against `expected` ([`Rerun::check`]).
    pub fn expecting(mut self, expected: T) -> Self {
        self.expected = Some(expected);
        self
    }

    /// The row it runs.
    pub fn instance(&self) -> Instance<T> {
        self.inst
    }

    /// The launch geometry.
    pub fn geometry(&self) -> Geometry {
        self.work.geometry
    }

    /// The depth of its addition tree ([`sum_depth`]), for [`cpu::check`]'s float bound.
    pub fn depth(&self) -> u64 {
        sum_depth(&self.inst, self.n, &self.work.geometry)
    }

    /// Restores what a run consumes (the scratch copy of the input). Not part of the timed
    /// work; call it before each [`launch`](Self::launch) whose result you will read.
    pub fn reset(&mut self) -> Result<()> {
        self.work.reset(self.backend, self.input)
    }

    /// Enqueues the kernel: the timed work.
    pub fn launch(&mut self) -> Result<()> {
        let finish = self.inst.row.finish;
        // SAFETY: shaped() checked that input[offset..offset + n] exists and made the geometry.
        unsafe { self.work.launch(self.backend, &finish, self.input.as_ptr(), self.offset, self.n) }
    }

    /// Waits for the last launch and returns its answer.
    pub fn result(&self) -> Result<T> {
        self.work.result(self.backend)
    }

    /// For kernels that record `clock64()` per block: latest end minus earliest start, in
    /// the SM's cycles (in the emulator, host nanoseconds).
    pub fn cycles(&self) -> Result<Option<u64>> {
        self.work.cycles(self.backend)
    }
}

/// Per-launch result slots, for the benches (issue #12): each launch of a batch writes its own
/// partials and result words, so that every launch's answer survives the batch and is read back
/// after it.
impl<T: Value> Reduction<'_, T> {
    /// Elements of one slot: the launch's partials (host and last-block finishes), then its
    /// result words (two for the atomic finish, one for the last block).
    pub fn slot_len(&self) -> usize {
        let needs = self.work.geometry.needs;
        (needs.partials + needs.result_words as u64) as usize
    }

    /// `count` fresh slots: partials zeroed, result words at the operator's identity. Each slot
    /// takes one launch ([`launch_into`](Self::launch_into)) before it is filled again.
    pub fn alloc_slots(&self, count: usize) -> Result<DeviceBuffer<T>> {
        let len = self.slot_len() * count.max(1);
        let mut slots = self.backend.alloc::<T>(len)?;
        if self.work.geometry.needs.result_words > 0 {
            self.backend.write(&mut slots, &vec![crate::types::identity::<T>(self.inst.op); len])?;
        }
        Ok(slots)
    }

    /// Enqueues one launch that writes slot `slot` of `slots` (epoch 0: the atomic finish adds
    /// into the slot's first word, which holds the identity; the last-block finish shares the
    /// reduction's ticket, which every launch leaves at 0). Kernels that work in place or
    /// record clocks have no slots.
    pub fn launch_into(&mut self, slots: &mut DeviceBuffer<T>, slot: usize) -> Result<()> {
        let per = self.slot_len();
        if (slot + 1) * per > slots.len() {
            return Err(Error::Invalid(format!("slot {slot} of {per} elements: the slots hold {}", slots.len())));
        }
        let needs = self.work.geometry.needs;
        if needs.scratch || needs.clocks {
            return Err(Error::Invalid(format!("variant `{}` has no result slots", self.inst.variant.name)));
        }
        let at = slots.as_mut_ptr().wrapping_add(slot * per);
        let finish = self.inst.row.finish;
        // SAFETY: shaped() checked input[..n] and made the geometry for n; the slot holds the
        // partials and result words (checked above) of T, its first result word at the identity
        // (alloc_slots); the ticket was zeroed at allocation and every finished launch leaves
        // it 0.
        unsafe {
            self.work.launch_into(self.backend, &finish, self.input.as_ptr().wrapping_add(self.offset), self.n, at)
        }
    }

    /// Waits, and returns the answers of slots `0..count` (one download): partials combined as
    /// [`result`](Self::result) combines them, or the first result word after the partials.
    pub fn slot_answers(&self, slots: &DeviceBuffer<T>, count: usize) -> Result<Vec<T>> {
        let per = self.slot_len();
        let all = self.backend.download_prefix(slots, per * count)?;
        Ok(all.chunks(per).map(|s| self.work.slot_answer(s)).collect())
    }
}

impl<T: Value> Rerun for Reduction<'_, T> {
    fn reset(&mut self) -> Result<()> {
        Reduction::reset(self)
    }
    fn launch(&mut self) -> Result<()> {
        Reduction::launch(self)
    }
    fn check(&mut self) -> Result<Option<String>> {
        let Some(want) = self.expected else { return Ok(None) };
        let got = self.result()?;
        Ok((!got.same_bits(want)).then(|| format!("expected {want}, got {got}")))
    }
}

/// The depth of the addition tree of row `inst` on `n` elements at `g` (the `depth` of
/// [`cpu::float_sum_bound`]): the elements one thread folds (at most
/// `⌈n / (threads · items)⌉ · items` plus an unaligned head and tail element), five warp levels,
/// five block levels, and the finish ([`Finish::depth`](super::plan::Finish::depth)).
pub fn sum_depth<T>(inst: &Instance<T>, n: usize, g: &Geometry) -> u64 {
    let items = inst.row.items_per_thread.max(1) as u64;
    let threads = g.grid as u64 * g.block as u64;
    let per_thread = (n as u64).div_ceil(threads.max(1) * items) * items + 2;
    per_thread + 5 + 5 + inst.row.finish.depth(g.grid as u64, g.block as u64)
}

/// One row measured and checked.
#[derive(Clone, Debug)]
pub struct Measurement<T: Value = i32> {
    /// The variant.
    pub variant: &'static Variant,
    /// The operator.
    pub op: Op,
    /// Elements.
    pub n: usize,
    /// Launch geometry.
    pub geometry: Geometry,
    /// The timed runs, each one's result checked.
    pub runs: Runs,
    /// What the device computed in the last run.
    pub result: T,
    /// Whether that result is the CPU reference's ([`cpu::check`]: exact, or float sums within
    /// the bound of the kernel's tree), and if not, why.
    pub verdict: std::result::Result<(), String>,
    /// In-kernel clock cycles of the last run (sum-of-squares kernels only).
    pub cycles: Option<u64>,
}

impl<T: Value> Measurement<T> {
    /// Did every timed run agree with the reference?
    pub fn pass(&self) -> bool {
        self.verdict.is_ok() && self.runs.first_wrong.is_none()
    }

    /// Median time, µs.
    pub fn median_us(&self) -> f64 {
        self.runs.median_us()
    }

    /// Bytes read from device memory per second at the median time (each input element read
    /// once: `n × element size / t`).
    pub fn bytes_per_second(&self) -> f64 {
        self.n as f64 * T::ELEM.size() as f64 / (self.median_us() * 1e-6)
    }
}

/// Runs the row `inst` on `data` (uploaded as `input`) once untimed (warm-up: module load,
/// JIT, caches), then `repeat` timed runs (see [`timed_runs`]); every run's result must be the
/// first's, and the last is checked against the CPU reference of `data` ([`cpu::check`]).
/// `shape` is `(block, blocks_per_sm)`.
pub fn measure<T: Value>(
    backend: &Backend,
    inst: Instance<T>,
    (input, data): (&DeviceBuffer<T>, &[T]),
    shape: (u32, Option<u32>),
    repeat: u32,
) -> Result<Measurement<T>> {
    let (block, blocks_per_sm) = shape;
    let n = data.len();
    let mut r = Reduction::shaped(backend, inst, input, (0, n), block, blocks_per_sm)?;
    // The reference: exact for integers, min and max, and what every run must return; a float
    // sum's order (the atomic finish's arrival order) may change its last bits, so its runs are
    // checked against the bound below, not against each other.
    let exact = !(T::ELEM.is_float() && inst.op == Op::Sum);
    if exact {
        r = r.expecting(cpu::reference(inst.op, data));
    }
    let runs = timed_runs(backend, &mut r, repeat)?;
    let result = r.result()?;
    let verdict = cpu::check(inst.op, data, result, r.depth());
    Ok(Measurement {
        variant: inst.variant,
        op: inst.op,
        n,
        geometry: r.geometry(),
        runs,
        result,
        verdict,
        cycles: r.cycles()?,
    })
}

/// [`measure`] of `variant`'s own row (an `i32` sum or sum of squares).
pub fn measure_own(
    backend: &Backend,
    variant: &'static Variant,
    (input, data): (&DeviceBuffer<i32>, &[i32]),
    shape: (u32, Option<u32>),
    repeat: u32,
) -> Result<Measurement<i32>> {
    measure(backend, variant.own(), (input, data), shape, repeat)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::registry::find;

    #[test]
    fn a_row_of_every_kind_agrees_with_the_reference() {
        let b = Backend::emulator();
        let data: Vec<f32> = (0..3000).map(|i| f32::random((i as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15))).collect();
        let buf = b.upload(&data).unwrap();
        for name in ["warp_shuffle", "vector_loads", "single_pass", "atomic_accumulate"] {
            for op in [Op::Sum, Op::Min, Op::Max] {
                let inst = find(name).unwrap().instance::<f32>(op).unwrap();
                let m = measure(&b, inst, (&buf, &data), (256, None), 2).unwrap();
                assert!(m.pass(), "{}: {:?} {:?}", inst.id(), m.verdict, m.runs.first_wrong);
            }
        }
        let ints: Vec<i32> = (0..5000).map(|i| i * 7919 % 2003 - 1001).collect();
        let ib = b.upload(&ints).unwrap();
        let m = measure_own(&b, find("squares_block_tree").unwrap(), (&ib, &ints), (256, None), 1).unwrap();
        assert!(m.pass(), "{:?}", m.verdict);
    }

    #[test]
    fn depth_of_the_tree() {
        let inst = find("warp_shuffle").unwrap().instance::<f32>(Op::Sum).unwrap();
        let needs = inst.row.finish.needs(5, 256);
        let g = Geometry { grid: 5, block: 256, dynamic_shared: 0, shared_bytes: 128, needs };
        assert_eq!(sum_depth(&inst, 10_000, &g), 8 + 2 + 10 + 3);
    }
}
