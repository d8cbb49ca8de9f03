//! One row of the scan registry prepared on one input ([`Scan`]: preconditions checked, scratch
//! allocated, launches planned) and measured ([`measure`]): what the tests, the benches and the
//! CLI run, for every element type and operator.
//!
//! **What is timed** ([`Scan::launch`]): the launches only, all of them. Nothing needs to be
//! restored between runs: `bit` rebuilds its tree from the input, `blelloch` rewrites its sums,
//! and the look-back scans tag their status words with a new epoch per launch, so launches can
//! be queued back to back (what the benches do). [`Scan::reset`] is there for callers that
//! treat every plan alike; no scan needs it.

use super::cpu;
use super::kind::Kind;
use super::plan::{Launch, ScanGeometry, check_of, config};
use super::registry::{ScanInstance, ScanPlan, ScanVariant};
use super::workspace::ScanWorkspace;
use crate::backend::{Backend, DeviceBuffer};
use crate::error::Result;
use crate::timing::{Rerun, Runs, timed_runs};
use crate::types::{Elem, Op, Value};

/// What every run of a [`Scan`] is checked against ([`Rerun::check`]).
enum Expect<'a, T> {
    /// The CPU scan's output: every element equal.
    Output(&'a [T]),
    /// The input: the CPU scan of it ([`cpu::check`]; float sums within the bound).
    Input(&'a [T]),
}

/// What a check against [`Expect::Input`] compares each run with, computed at the first check
/// and kept: the CPU scan (integers, min, max: bit for bit), or each element's exact prefix sum
/// and bound (float sums, [`cpu::sum_targets`]). A run that differs is described by
/// [`verdict`], the walk that computes them, so the line is the same as without them.
enum Targets<T> {
    Exact(Vec<T>),
    Bounded(Vec<f64>, Vec<f64>),
}

impl<T: Value> Targets<T> {
    fn of(op: Op, kind: Kind, data: &[T], depth: u64) -> Self {
        if op == Op::Sum && T::ELEM.is_float() {
            let (exact, bound) = cpu::sum_targets(kind, data, depth);
            Targets::Bounded(exact, bound)
        } else {
            Targets::Exact(cpu::reference(op, kind, data))
        }
    }

    /// Does `got` pass (the same answer as [`verdict`]'s, without its walk)?
    fn pass(&self, got: &[T]) -> bool {
        match self {
            Targets::Exact(want) => cpu::first_mismatch(want, got).is_none(),
            Targets::Bounded(exact, bound) => {
                got.len() == exact.len()
                    && got.iter().zip(exact).zip(bound).all(|((g, e), b)| (g.to_f64() - e).abs() <= *b)
            }
        }
    }
}

/// A scan ready to run: preconditions checked, scratch allocated, launches planned.
pub struct Scan<'a, T: Value = i32> {
    /// What every run must give, when the caller said ([`Rerun::check`]).
    expected: Option<Expect<'a, T>>,
    /// For [`Expect::Input`]: what the first check computed, for every later one.
    targets: Option<Targets<T>>,
    /// Where every check downloads the output (`n` elements from the first check on): kept, so
    /// that a check does not allocate and fault in a buffer of its own after each timed run.
    got: Vec<T>,
    backend: &'a Backend,
    inst: ScanInstance<T>,
    kind: Kind,
    n: usize,
    output: &'a mut DeviceBuffer<T>,
    work: ScanWorkspace<T>,
    launches: Vec<Launch<T>>,
}

impl<T: Value> Rerun for Scan<'_, T> {
    fn reset(&mut self) -> Result<()> {
        Scan::reset(self)
    }
    fn launch(&mut self) -> Result<()> {
        Scan::launch(self)
    }
    fn check(&mut self) -> Result<Option<String>> {
        if self.expected.is_none() {
            return Ok(None);
        }
        let mut got = std::mem::take(&mut self.got);
        got.resize(self.n, T::default());
        self.backend.download_into(self.output, &mut got)?;
        let verdict = self.judge(&got);
        self.got = got;
        Ok(verdict)
    }
}

/// One line for the first element a scan got wrong.
pub fn mismatch_text<T: std::fmt::Display>((i, e, g): (usize, Option<T>, Option<T>)) -> String {
    let show = |v: Option<T>| v.map_or("nothing".into(), |v| v.to_string());
    format!("index {i}: expected {}, got {}", show(e), show(g))
}

/// Whether `got` is the `kind` scan of `data` with `op` ([`cpu::check`], a summation tree of
/// `depth`), and if not, the first wrong element. `i32` sums keep the curriculum's line
/// ([`mismatch_text`]).
pub fn verdict<T: Value>(op: Op, kind: Kind, data: &[T], got: &[T], depth: u64) -> std::result::Result<(), String> {
    if (T::ELEM, op) == (Elem::I32, Op::Sum) {
        let want = cpu::reference(op, kind, data);
        return cpu::first_mismatch(&want, got).map(mismatch_text).map_or(Ok(()), Err);
    }
    cpu::check(op, kind, data, got, depth)
}

impl<'a, T: Value> Scan<'a, T> {
    /// Prepares `variant`'s sum (its own row for `i32`) to scan the first `n` elements of
    /// `input` into `output`.
    pub fn new(
        backend: &'a Backend,
        variant: &'static ScanVariant,
        kind: Kind,
        input: &'a DeviceBuffer<T>,
        output: &'a mut DeviceBuffer<T>,
        n: usize,
    ) -> Result<Self> {
        Self::of(backend, variant.instance::<T>(Op::Sum)?, kind, input, output, n)
    }

    /// Prepares the row `inst` (any element type × operator a scan variant runs:
    /// [`ScanVariant::instance`]) to scan the first `n` elements of `input` into `output`.
    pub fn of(
        backend: &'a Backend,
        inst: ScanInstance<T>,
        kind: Kind,
        input: &'a DeviceBuffer<T>,
        output: &'a mut DeviceBuffer<T>,
        n: usize,
    ) -> Result<Self> {
        check_of(&inst, kind, n, (input.len(), output.len()), backend.info().compute_capability)?;
        let mut work = ScanWorkspace::new();
        let launches = work.launches(backend, &inst, kind, (input.as_ptr(), output.as_mut_ptr()), n)?;
        Ok(Self { expected: None, targets: None, got: Vec::new(), backend, inst, kind, n, output, work, launches })
    }

    /// Checks every run's output against `expected`, the CPU scan ([`Rerun::check`]).
    pub fn expecting(mut self, expected: &'a [T]) -> Self {
        (self.expected, self.targets) = (Some(Expect::Output(expected)), None);
        self
    }

    /// Checks every run's output against the CPU scan of `data`, the input's elements (float
    /// sums within the bound of the kernel's tree, [`scan_depth`]). The first check computes
    /// what every run is compared with and keeps it while the scan lives: the CPU scan (`n`
    /// elements), or for float sums each element's exact prefix and bound (16 bytes an element).
    pub fn checking(mut self, data: &'a [T]) -> Self {
        (self.expected, self.targets) = (Some(Expect::Input(data)), None);
        self
    }

    /// The variant.
    pub fn variant(&self) -> &'static ScanVariant {
        self.inst.variant
    }

    /// The row it runs.
    pub fn instance(&self) -> ScanInstance<T> {
        self.inst
    }

    /// The kind.
    pub fn kind(&self) -> Kind {
        self.kind
    }

    /// The launch geometry.
    pub fn geometry(&self) -> ScanGeometry {
        let first = self.launches.first().map(Launch::config).unwrap_or(config(0, 0));
        let tile = self.inst.plan.tile();
        ScanGeometry { launches: self.launches.len(), grid: first.grid, block: first.block, tile }
    }

    /// The depth of its summation tree ([`scan_depth`]), for [`cpu::check`]'s float bound.
    pub fn depth(&self) -> u64 {
        scan_depth(&self.inst.plan, self.n)
    }

    /// Outside the timed region: prepares the next run. Every scan plan restores what it
    /// needs by itself (see the module docs), so this does nothing; it exists so that callers
    /// can treat scans like the reductions, whose plans do need a reset.
    pub fn reset(&mut self) -> Result<()> {
        Ok(())
    }

    /// Enqueues every launch of the plan: the timed work. Launches may be queued back to back
    /// without [`reset`](Self::reset) in between.
    pub fn launch(&mut self) -> Result<()> {
        // SAFETY: the input and output are borrowed for 'a (alive, distinct: `&` and `&mut`) and
        // hold n elements (checked in `of`).
        unsafe { self.work.launch(self.backend, &mut self.launches) }
    }

    /// What is wrong with `got`, the output of a run, against what the caller expects (`None`
    /// when it passes, or when nothing is expected): [`Rerun::check`]'s verdict, for an output
    /// already downloaded.
    fn judge(&mut self, got: &[T]) -> Option<String> {
        match self.expected {
            Some(Expect::Output(want)) => cpu::first_mismatch(want, got).map(mismatch_text),
            Some(Expect::Input(data)) => {
                let (op, kind, depth) = (self.inst.op, self.kind, self.depth());
                let targets = self.targets.get_or_insert_with(|| Targets::of(op, kind, data, depth));
                if targets.pass(got) { None } else { verdict(op, kind, data, got, depth).err() }
            }
            None => None,
        }
    }

    /// Waits for the last launch and returns the `n` scanned elements.
    pub fn result(&self) -> Result<Vec<T>> {
        self.backend.download_prefix(self.output, self.n)
    }

    /// The output buffer the launches write (for a check on the device, `crate::verify`).
    pub fn output(&self) -> &DeviceBuffer<T> {
        self.output
    }
}

/// **The depth of the summation tree** of a look-back plan on `n` elements: an upper bound on
/// the roundings any element passes through on its way into any output, for [`cpu::check`]'s
/// bound. With `I` items per thread, `W` warps, `k` tiles:
///
/// * in its tile's aggregate an element passes at most `a = I + 5 + W` combines (the
///   thread's `I`, the 5-step warp scan, the `W` warp totals);
/// * the inclusive prefix `P` of tile `t` is `prefix ⊕ aggregate`, the prefix found by the
///   look-back: a butterfly (5) over a window, one combine per window (at most `⌈k/32⌉`), one
///   for the nearest `P`. By induction over `t`, an element reaches `P_t` through at most
///   `a + 7t + ⌈k/32⌉` roundings;
/// * an output is `prefix ⊕ local`, the tile-local value taking at most `2I + W + 5`.
///
/// So `d = 2I + W + 6 + 7(k − 1) + ⌈k/32⌉` (for `f32` at n = 2^24: 12,883). Plans that do
/// not look back are `i32` sums, exact: `n`.
pub fn scan_depth<T>(plan: &ScanPlan<T>, n: usize) -> u64 {
    let (threads, items) = match *plan {
        ScanPlan::DecoupledLookback { threads, items, .. }
        | ScanPlan::DecoupledLookbackValues { threads, items, .. }
        | ScanPlan::PersistentLookback { threads, items, .. } => (threads as u64, items as u64),
        // The compute warps hold the tile (the bound's W is theirs).
        ScanPlan::WarpSpecialized { warps, items, .. } => (32 * warps as u64, items as u64),
        ScanPlan::Fenwick { .. } | ScanPlan::ReduceThenScan { .. } => return n as u64,
    };
    let tiles = (n as u64).div_ceil(threads * items).max(1);
    2 * items + threads / 32 + 6 + 7 * (tiles - 1) + tiles.div_ceil(32)
}

/// One scan row measured and checked.
#[derive(Clone, Debug)]
pub struct ScanMeasurement<T: Value = i32> {
    /// The variant.
    pub variant: &'static ScanVariant,
    /// The operator.
    pub op: Op,
    /// Inclusive or exclusive.
    pub kind: Kind,
    /// Elements.
    pub n: usize,
    /// Launch geometry.
    pub geometry: ScanGeometry,
    /// The timed runs (all launches of each), every run's output checked.
    pub runs: Runs,
    /// Whether the last run's output is the CPU scan (every element), and if not, the first
    /// element it got wrong ([`verdict`]).
    pub verdict: std::result::Result<(), String>,
    /// The last element of the scan (the device's), for reports.
    pub last: Option<T>,
}

impl<T: Value> ScanMeasurement<T> {
    /// Does every element of every run agree with the CPU reference?
    pub fn pass(&self) -> bool {
        self.verdict.is_ok() && self.runs.first_wrong.is_none()
    }

    /// Median time, µs.
    pub fn median_us(&self) -> f64 {
        self.runs.median_us()
    }

    /// Bytes moved per second at the median time, counting each element read once and
    /// written once (`2 n × element size / t`), as for a device-to-device copy.
    pub fn bytes_per_second(&self) -> f64 {
        (2 * self.n * T::ELEM.size()) as f64 / (self.median_us() * 1e-6)
    }
}

/// Runs the row `inst`'s `kind` scan of `data` (uploaded as `input`) once untimed (warm-up),
/// then `repeat` timed runs (see [`timed_runs`]), checking every run's output against the CPU
/// scan of `data` (`reference`, when the caller has it: the same scan, computed once).
pub fn measure<T: Value>(
    backend: &Backend,
    inst: ScanInstance<T>,
    kind: Kind,
    (input, data): (&DeviceBuffer<T>, &[T]),
    reference: Option<&[T]>,
    repeat: u32,
) -> Result<ScanMeasurement<T>> {
    let n = data.len();
    let mut output = backend.alloc::<T>(n)?;
    let scan = Scan::of(backend, inst, kind, input, &mut output, n)?;
    let mut scan = match reference {
        Some(want) => scan.expecting(want),
        None => scan.checking(data),
    };
    let runs = timed_runs(backend, &mut scan, repeat)?;
    // The last run's output, one download, judged as every timed run was (the targets kept).
    let got = scan.result()?;
    let (verdict, last) = (scan.judge(&got).map_or(Ok(()), Err), got.last().copied());
    let (variant, op, geometry) = (inst.variant, inst.op, scan.geometry());
    Ok(ScanMeasurement { variant, op, kind, n, geometry, runs, verdict, last })
}

/// Scans all of `input` into `output` with `variant`'s sum, and waits for it (an empty
/// `input` is a no-op).
pub fn scan_with<T: Value>(
    backend: &Backend,
    variant: &'static ScanVariant,
    kind: Kind,
    input: &DeviceBuffer<T>,
    output: &mut DeviceBuffer<T>,
) -> Result<()> {
    if input.is_empty() {
        return Ok(());
    }
    let mut scan = Scan::new(backend, variant, kind, input, output, input.len())?;
    scan.launch()?;
    backend.synchronize()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scan::find;

    /// [`Targets::pass`] gives [`verdict`]'s answer: for exact scans (bit for bit, a wrong or
    /// missing element) and float sums (inside and just outside the bound, NaN, a short output).
    #[test]
    fn kept_targets_pass_what_the_walk_passes() {
        let agree = |op: Op, kind: Kind, data: &[f32], got: &[f32], depth: u64| {
            let walk = verdict(op, kind, data, got, depth).is_ok();
            assert_eq!(Targets::of(op, kind, data, depth).pass(got), walk, "{op:?} {kind:?} {got:?}");
            walk
        };
        let data: Vec<f32> = (0..1000).map(|i| ((i * 7919) % 1000) as f32 / 7.0 - 50.0).collect();
        for kind in [Kind::Inclusive, Kind::Exclusive] {
            let sums = cpu::reference(Op::Sum, kind, &data);
            assert!(agree(Op::Sum, kind, &data, &sums, 20));
            let (exact, bound) = cpu::sum_targets(kind, &data, 20);
            let mut near = sums.clone();
            near[500] = (exact[500] + 0.9 * bound[500]) as f32;
            let mut far = sums.clone();
            far[500] = (exact[500] + 4.0 * bound[500] + 1e-3) as f32;
            let mut nan = sums.clone();
            nan[999] = f32::NAN;
            assert!(agree(Op::Sum, kind, &data, &near, 20), "inside the bound");
            assert!(!agree(Op::Sum, kind, &data, &far, 20), "outside it");
            assert!(!agree(Op::Sum, kind, &data, &nan, 20));
            assert!(!agree(Op::Sum, kind, &data, &sums[..999], 20), "one short");
            let mins = cpu::reference(Op::Min, kind, &data);
            assert!(agree(Op::Min, kind, &data, &mins, 20));
            let mut zero = mins.clone();
            zero[0] = if kind == Kind::Exclusive { f32::MAX } else { zero[0] + 1.0 };
            assert!(!agree(Op::Min, kind, &data, &zero, 20), "one element off");
        }
        let ints: Vec<i64> = (0..300).map(|i| (i * 31 % 97) - 48).collect();
        let want = cpu::reference(Op::Max, Kind::Inclusive, &ints);
        assert!(Targets::of(Op::Max, Kind::Inclusive, &ints, 1).pass(&want));
        assert!(!Targets::of(Op::Max, Kind::Inclusive, &ints, 1).pass(&want[1..]));
    }

    #[test]
    fn depth_grows_with_the_tiles() {
        let plan = find("lookback").unwrap().instance::<f32>(Op::Sum).unwrap().plan;
        assert_eq!(scan_depth(&plan, 1), 72 + 8 + 6 + 1);
        assert_eq!(scan_depth(&plan, 1 << 24), 72 + 8 + 6 + 7 * 1820 + 57);
        let tile = find("lookback").unwrap().instance::<f64>(Op::Max).unwrap().plan.tile();
        assert_eq!(tile as usize * 8, 256 * 9 * 16);
    }
}
