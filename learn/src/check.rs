//! Checking an attempt on the emulator: its answer at several sizes and blocks (odd ones
//! included, each block's partial against the CPU's), every fault the emulator's checks find
//! (with `file:line`), and the lesson's measure against its goal.

use std::time::Duration;

use reduce_scan::backend::{Backend, LaunchConfig};
use reduce_scan::emu::Emulator;
use reduce_scan::emu::counters::Counters;
use reduce_scan::input::Input;
use reduce_scan::reduce::plan::SharedMem;
use reduce_scan::scan::{Kind, Scan, ScanPlan, ScanVariant};
use reduce_scan::{Error, registry};

use crate::exercises::{Attempt, Code, Exercise, Measure, ScanKernels};

/// The sizes each answer is checked at: one element, around a warp and a block, and a size
/// no block divides.
pub const SIZES: &[usize] = &[1, 33, 1000, 1025, 4097, 65_543];

/// The blocks each answer is checked at.
pub const BLOCKS: &[u32] = &[128, 512];

/// The shape the measure is taken at.
pub const MEASURE_N: usize = 1 << 16;
/// The block the measure is taken at.
pub const MEASURE_BLOCK: u32 = 512;

/// How long one launch may run before the emulator calls it hung.
const BUDGET: Duration = Duration::from_secs(5);

/// What a check found.
pub struct Report {
    /// The first wrong answer, in full; `None` when every size and block was right.
    pub wrong: Option<String>,
    /// The first fault the emulator's checks reported (its one line, with `file:line`).
    pub fault: Option<String>,
    /// The lesson's measure, when the kernel ran at the measure's shape.
    pub measure: Option<f64>,
}

impl Report {
    /// Right answers, no fault, and the goal reached.
    pub fn passed(&self, ex: &Exercise) -> bool {
        self.wrong.is_none() && self.fault.is_none() && self.measure.is_some_and(|m| ex.goal.met(m))
    }
}

/// Checks `attempt` as exercise `ex`.
pub fn check(ex: &Exercise, attempt: &Attempt) -> Report {
    let backend = Backend::with_emulator(Emulator::new().with_budget(BUDGET));
    let mut report = Report { wrong: None, fault: None, measure: None };
    'shapes: for &block in BLOCKS {
        for &n in SIZES {
            match answer(&backend, ex, attempt, n, block) {
                Ok(None) => {}
                Ok(Some(wrong)) => {
                    report.wrong = Some(wrong);
                    break 'shapes;
                }
                Err(fault) => {
                    report.fault = Some(fault);
                    break 'shapes;
                }
            }
        }
    }
    if report.fault.is_none() {
        match measure(ex, attempt) {
            Ok(m) => report.measure = Some(m),
            Err(fault) => report.fault = Some(fault),
        }
    }
    report
}

/// How a launch is made: directly, or timed (`Backend::time`, CUDA events on a GPU).
type Wrap<'a> = &'a mut dyn FnMut(&mut dyn FnMut() -> Result<(), Error>) -> Result<(), Error>;

/// The partials of one run of `attempt` on `data` at `block`: one per block (one per thread of
/// the one block for the sum of squares).
fn run(backend: &Backend, ex: &Exercise, attempt: &Attempt, data: &[i32], block: u32) -> Result<Vec<i32>, Error> {
    run_wrapped(backend, ex, attempt, data, block, &mut |f| f())
}

/// [`run`] with each launch made through `wrap`.
fn run_wrapped(
    backend: &Backend,
    ex: &Exercise,
    attempt: &Attempt,
    data: &[i32],
    block: u32,
    wrap: Wrap<'_>,
) -> Result<Vec<i32>, Error> {
    let n = data.len();
    let items = attempt.items.max(1) as usize;
    if let Code::Scan(kernels) = attempt.code {
        return scan_output(backend, ex, kernels, data, Kind::Inclusive, wrap);
    }
    let mut input = backend.upload(data)?;
    let v = registry::find(ex.lesson)?;
    let shared_bytes = match v.shared {
        SharedMem::DynamicPerThread(_) => v.shared_bytes(block),
        _ => 0,
    };
    let n32 = n as u32;
    match attempt.code {
        Code::Clocked(k) => {
            let mut partials = backend.alloc::<i32>(block as usize)?;
            let mut clocks = backend.alloc::<u64>(2)?;
            let cfg = LaunchConfig { grid: 1, block, shared_bytes };
            let args = (input.as_ptr(), partials.as_mut_ptr(), clocks.as_mut_ptr(), n32);
            // SAFETY: one block; `partials` holds one element per thread, `clocks` two stamps.
            wrap(&mut || unsafe { backend.launch(&k, cfg, args) })?;
            backend.download(&partials)
        }
        code => {
            let grid = n.div_ceil(block as usize * items).max(1);
            let mut partials = backend.alloc::<i32>(grid)?;
            let cfg = LaunchConfig { grid: grid as u32, block, shared_bytes };
            let (i, o) = (input.as_mut_ptr(), partials.as_mut_ptr());
            let per_block = match code {
                Code::PerBlock(table) => match table.iter().find(|(b, _)| *b == block) {
                    Some((_, k)) => Some(*k),
                    None => return Err(Error::Invalid(format!("no instantiation for block {block}"))),
                },
                _ => None,
            };
            // SAFETY: `input` holds n elements and `partials` one per block of a grid that
            // covers n at `items` per thread, the kernels' contract.
            wrap(&mut || unsafe {
                match (code, per_block) {
                    (Code::InPlace(k), _) | (Code::PerBlock(_), Some(k)) => backend.launch(&k, cfg, (i, o, n32)),
                    (Code::Read(k), _) => backend.launch(&k, cfg, (i.cast_const(), o, n32)),
                    _ => unreachable!("handled above"),
                }
            })?;
            backend.download(&partials)
        }
    }
}

/// The registered scan `ex.lesson` with `kernels` in place of its own.
fn scan_variant(ex: &Exercise, kernels: ScanKernels) -> &'static ScanVariant {
    let base = reduce_scan::scan::find(ex.lesson).expect("a scan exercise's lesson is a registered scan");
    let plan = match (base.plan, kernels) {
        (ScanPlan::Fenwick { block, span, .. }, ScanKernels::Fenwick(build, query)) => {
            ScanPlan::Fenwick { build, query, block, span }
        }
        (ScanPlan::ReduceThenScan { block, tile, .. }, ScanKernels::ReduceThenScan(reduce, block_scan)) => {
            ScanPlan::ReduceThenScan { reduce, block_scan, block, tile }
        }
        _ => panic!("{}: the exercise's kernels are not of its registered scan's plan", ex.lesson),
    };
    // One small leak per check: the scan machinery takes a 'static variant.
    Box::leak(Box::new(ScanVariant { plan, ..*base }))
}

/// The `kind` scan of `data` by `kernels`, run as the registered scan runs.
fn scan_output(
    backend: &Backend,
    ex: &Exercise,
    kernels: ScanKernels,
    data: &[i32],
    kind: Kind,
    wrap: Wrap<'_>,
) -> Result<Vec<i32>, Error> {
    let input = backend.upload(data)?;
    let mut output = backend.alloc::<i32>(data.len())?;
    let mut scan = Scan::new(backend, scan_variant(ex, kernels), kind, &input, &mut output, data.len())?;
    wrap(&mut || scan.launch())?;
    scan.result()
}

/// A scan's answer at `n`, both kinds: `Ok(None)` right, `Ok(Some(why))` the first wrong
/// element, `Err(fault)`.
fn scan_answer(backend: &Backend, ex: &Exercise, attempt: &Attempt, n: usize) -> Result<Option<String>, String> {
    let Code::Scan(kernels) = attempt.code else { return Ok(None) };
    let data = Input::full_range(n, 0x1EA4 ^ n as u64).data;
    for kind in [Kind::Inclusive, Kind::Exclusive] {
        let got = scan_output(backend, ex, kernels, &data, kind, &mut |f| f())
            .map_err(|e| format!("n = {n}, {} scan: {e}", kind.name()))?;
        let want = kind.reference(&data);
        if let Some(i) = (0..n).find(|&i| got.get(i) != want.get(i)) {
            return Ok(Some(format!(
                "n = {n}, {} scan: element {i} is {:?}, expected {}",
                kind.name(),
                got.get(i),
                want[i]
            )));
        }
    }
    Ok(None)
}

/// `Ok(None)`: the right answer; `Ok(Some(why))`: a wrong one (the first wrong block and its
/// value); `Err(fault)`: the emulator stopped the kernel.
fn answer(backend: &Backend, ex: &Exercise, attempt: &Attempt, n: usize, block: u32) -> Result<Option<String>, String> {
    if let Code::Scan(..) = attempt.code {
        // A scan runs at its own block: check it once per size.
        return if block == BLOCKS[0] { scan_answer(backend, ex, attempt, n) } else { Ok(None) };
    }
    let data = Input::full_range(n, 0x1EA4 ^ n as u64).data;
    let shape = format!("n = {n}, block {block}");
    let partials = run(backend, ex, attempt, &data, block).map_err(|e| format!("{shape}: {e}"))?;
    if let Code::Clocked(_) = attempt.code {
        let want = data.iter().fold(0i32, |a, &x| a.wrapping_add(x.wrapping_mul(x)));
        let got = partials.iter().fold(0i32, |a, &x| a.wrapping_add(x));
        return Ok((got != want).then(|| format!("{shape}: the sum of squares is {got}, expected {want}")));
    }
    let segment = block as usize * attempt.items.max(1) as usize;
    for (b, &got) in partials.iter().enumerate() {
        let part = &data[(b * segment).min(n)..((b + 1) * segment).min(n)];
        let want = part.iter().fold(0i32, |a, &x| a.wrapping_add(x));
        if got != want {
            return Ok(Some(format!(
                "{shape}: block {b} wrote {got}, expected {want} (the sum of its {} elements from {})",
                part.len(),
                b * segment
            )));
        }
    }
    Ok(None)
}

/// The lesson's measure of `attempt`, at [`MEASURE_N`] and [`MEASURE_BLOCK`].
fn measure(ex: &Exercise, attempt: &Attempt) -> Result<f64, String> {
    let lines = |pat: &str| {
        attempt.source.lines().filter(|l| !l.trim_start().starts_with("//") && l.contains(pat)).count() as f64
    };
    match ex.goal.measure() {
        Measure::Loops => return Ok(lines("while ")),
        Measure::StaticShared => return Ok(lines("static_shared!")),
        _ => {}
    }
    let mut c = Counters::default();
    for launch in counted_run(ex, attempt)? {
        c.add(&launch.counters);
    }
    let blocks = c.blocks.max(1) as f64;
    Ok(match ex.goal.measure() {
        Measure::LanesPerRequest => c.lanes_per_request(),
        Measure::GldEfficiency => c.gld_efficiency_pct(),
        Measure::ElementsPerThread => MEASURE_N as f64 / (blocks * MEASURE_BLOCK as f64),
        Measure::BarriersPerBlock => c.barriers as f64 / blocks,
        Measure::GlobalStoresPerBlock => c.gst_requests as f64 / blocks,
        Measure::SharedLoadConflicts => c.shared_ld_conflicts() as f64,
        Measure::GlobalLoadsPerBlock => c.gld_requests as f64 / blocks,
        Measure::Loops | Measure::StaticShared => unreachable!("read from the source above"),
    })
}

/// The data of the measure's run: [`MEASURE_N`] small values from seed 1 (the GPU's profiled
/// run, [`profiled_run`], uses the same).
fn measure_data() -> Vec<i32> {
    Input::small(MEASURE_N, 1).data
}

/// The emulator's counters of each launch of one run of `attempt` at [`MEASURE_N`] and
/// [`MEASURE_BLOCK`]; `Err` is a fault's line.
pub fn counted_run(ex: &Exercise, attempt: &Attempt) -> Result<Vec<reduce_scan::emu::Counted>, String> {
    let backend = Backend::with_emulator(Emulator::new().with_budget(BUDGET));
    let counting = backend.counting().expect("the emulator counts");
    run(&counting, ex, attempt, &measure_data(), MEASURE_BLOCK)
        .map_err(|e| format!("n = {MEASURE_N}, block {MEASURE_BLOCK} (the measure's run): {e}"))?;
    Ok(counting.take_counted())
}

/// The same run as [`counted_run`], on `backend` (a GPU, under Nsight Compute: `./x learn N
/// --gpu`'s child run).
pub fn profiled_run(backend: &Backend, ex: &Exercise, attempt: &Attempt) -> Result<(), String> {
    run(backend, ex, attempt, &measure_data(), MEASURE_BLOCK).map(|_| ()).map_err(|e| e.to_string())
}

/// The shape of the GPU run: n = 2^24 at block 512, the committed set's.
pub const GPU_N: usize = 1 << 24;

/// `attempt` on `backend` (a GPU) at [`GPU_N`], block 512: whether its answer is the CPU's, and
/// its launch times over `runs` timed runs (CUDA events; a fresh input before each).
pub fn on_gpu(
    backend: &Backend,
    ex: &Exercise,
    attempt: &Attempt,
    runs: usize,
) -> Result<(Option<String>, Vec<f64>), String> {
    let data = Input::full_range(GPU_N, 0x1EA4).data;
    let want = expected_total(attempt, &data);
    let mut times = Vec::with_capacity(runs);
    let mut wrong = None;
    for i in 0..=runs {
        let mut timed = |f: &mut dyn FnMut() -> Result<(), Error>| -> Result<(), Error> {
            let t = backend.time(f)?;
            if i > 0 {
                times.push(t);
            }
            Ok(())
        };
        let out = run_wrapped(backend, ex, attempt, &data, MEASURE_BLOCK, &mut timed).map_err(|e| e.to_string())?;
        let got = match attempt.code {
            Code::Scan(..) => out.last().copied().unwrap_or(0),
            _ => out.iter().fold(0i32, |a, &x| a.wrapping_add(x)),
        };
        if got != want && wrong.is_none() {
            wrong = Some(format!("run {i}: the total is {got}, expected {want}"));
        }
    }
    times.sort_by(f64::total_cmp);
    Ok((wrong, times))
}

/// What the partials of `attempt` add up to on `data` (a scan: its last inclusive element).
fn expected_total(attempt: &Attempt, data: &[i32]) -> i32 {
    match attempt.code {
        Code::Clocked(_) => data.iter().fold(0i32, |a, &x| a.wrapping_add(x.wrapping_mul(x))),
        _ => data.iter().fold(0i32, |a, &x| a.wrapping_add(x)),
    }
}
