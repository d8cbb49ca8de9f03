//! Checking an attempt on the emulator: its answer at several sizes and blocks (odd ones
//! included, each block's partial against the CPU's), every fault the emulator's checks find
//! (with `file:line`), and the lesson's measure against its goal.

use std::sync::OnceLock;
use std::time::Duration;

use reduce_scan::backend::{Backend, Kernel, LaunchConfig};
use reduce_scan::emu::Emulator;
use reduce_scan::emu::counters::Counters;
use reduce_scan::input::Input;
use reduce_scan::reduce::plan::{AccumulateArgs, Grid, SharedMem, SinglePassArgs};
use reduce_scan::scan::{Kind, Scan, ScanPlan, ScanVariant};
use reduce_scan::{Error, registry};

use crate::exercises::{Attempt, Code, CompactKernels, Exercise, HistogramArgs, Measure, ScanKernels};

/// The sizes each answer is checked at: one element, around a warp and a block, and a size
/// no block divides (2^14 + 27), over which a grid-stride loop on [`CHECK_SMS`] goes round four
/// times and a tail. It was 65,543 until the edit-to-verdict target of issue #40: a quarter of the
/// elements (docs/measurements/2026-11-26-cpu/, the A/B/A of session 21).
pub const SIZES: &[usize] = &[1, 33, 1000, 1025, 4097, 16_411];

/// The blocks each answer is checked at.
pub const BLOCKS: &[u32] = &[128, 512];

/// The size a reduction's measure is taken at.
pub const MEASURE_N: usize = 1 << 16;
/// The size a scan's measure is taken at: four tiles of `lookback` (9,216 elements each), eight
/// of `blelloch`, sixteen `bit` spans. Half of [`MEASURE_N`] since the edit-to-verdict target of
/// issue #40: a scan's check runs both kinds at every size, and exercise 24's starting file
/// re-reads every tile before its own, so its counted run grows with the square of the tiles.
pub const MEASURE_SCAN_N: usize = 1 << 15;
/// The block the measure is taken at.
pub const MEASURE_BLOCK: u32 = 512;

/// How long one launch may run before the emulator calls it hung.
const BUDGET: Duration = Duration::from_secs(5);

/// Multiprocessors of the GPU the check sizes a resident grid for (`Grid::Resident`: as many
/// blocks as the GPU holds at once): two of 2048 threads, 8 blocks of 512 or 32 of 128, so that
/// at the check's sizes a grid-stride loop goes round several times (an H100's 132 would cover
/// 16,411 elements in one pass). On a GPU (`--gpu`), its own count.
pub const CHECK_SMS: u32 = 2;

/// What `g_out` holds before a last-block kernel runs: still there after it, the kernel left
/// the partials for the host to add (no sum the check makes is this value: a test checks).
pub(crate) const UNWRITTEN: i32 = i32::MIN + 0x5EED;

/// What the elements before a shifted input hold (the 16-byte loads' exercises start their
/// input 1 to 3 elements past a 16-byte boundary): a kernel that adds one is wrong.
const BEFORE_INPUT: i32 = 1_000_003;

/// What `g_acc[0]` holds before an accumulating kernel's launch at epoch 1, which must clear it
/// for the next launch.
const STALE_ACC: i32 = 777;

/// What one run left.
pub(crate) enum Output {
    /// One partial per block (per thread for the sum of squares), for the host to add.
    Partials(Vec<i32>),
    /// The kernel's own answer, and what is wrong with what it left besides (a ticket not put
    /// back, a word not cleared for the next launch).
    Answer {
        /// The answer.
        value: i32,
        /// What is wrong besides, in words.
        left: Option<String>,
    },
    /// A scan's output.
    Scan(Vec<i32>),
    /// A histogram's 256 counters.
    Histogram(Vec<u32>),
    /// A compaction's output buffer (the kept elements, then what was there before) and the
    /// count it wrote.
    Compacted {
        /// The output buffer, whole.
        output: Vec<i32>,
        /// `count[0]` after the run.
        count: u32,
    },
}

impl Output {
    /// What it adds up to: the partials' sum, the answer, or a scan's last element.
    fn total(&self) -> i32 {
        match self {
            Output::Partials(p) => p.iter().fold(0i32, |a, &x| a.wrapping_add(x)),
            Output::Answer { value, .. } => *value,
            Output::Scan(out) => out.last().copied().unwrap_or(0),
            Output::Histogram(counts) => counts.iter().fold(0i32, |a, &c| a.wrapping_add(c as i32)),
            Output::Compacted { output, count } => {
                output.iter().take(*count as usize).fold(0i32, |a, &x| a.wrapping_add(x))
            }
        }
    }
}

/// The block of a grid-stride loop over `grid` blocks of `block` threads that adds element `i`:
/// thread g adds elements g, g + G, g + 2G, … (G = grid × block), so element i is thread
/// i mod G's.
pub(crate) fn grid_stride_block(i: usize, block: usize, grid: usize) -> usize {
    (i % (block * grid)) / block
}

/// Elements before the input's first in its buffer at the `index`-th size of [`SIZES`]: 0 to 3
/// for the kernels of 16-byte loads (a head of 3, 2, 1 or 0 elements before the first 16-byte
/// boundary), 0 for the others.
pub(crate) fn offset(attempt: &Attempt, index: usize) -> usize {
    if attempt.grid == Grid::Resident && attempt.items > 1 { index % 4 } else { 0 }
}

/// The blocks of one launch of `attempt` on `n` elements at `block`: one per `block × items`
/// elements, or as many as the GPU holds at once (the check's GPU of [`CHECK_SMS`] on the
/// emulator), through the project's one grid rule (`Grid::size`).
fn grid_of(backend: &Backend, attempt: &Attempt, n: usize, block: u32) -> Result<usize, Error> {
    let sms = if backend.is_gpu() { backend.info().multiprocessors } else { CHECK_SMS };
    let symbol = attempt.code.symbols(block).first().copied().unwrap_or("");
    let (grid, _) = attempt
        .grid
        .size(n, block, attempt.items, sms, || backend.occupancy(reduce_scan::ptx::entry(symbol), block, 0))?;
    Ok(grid.max(1) as usize)
}

/// What each buffer this file allocates is to the kernel, by the variable that holds it.
pub(crate) const BUFFERS: &[(&str, &str)] = &[
    ("input", "the input (the kernel's first argument, g_idata), which the check allocated"),
    ("partials", "the partial sums (the kernel's g_odata), which the check allocated"),
    ("clocks", "the two clock stamps, which the check allocated"),
    ("ticket", "the ticket word, which the check allocated"),
    ("out", "the one-element result, which the check allocated"),
    ("acc", "the accumulator's two words, which the check allocated"),
    ("output", "the scan's output, which the check allocated"),
    ("bytes", "the input bytes (the kernel's first argument), which the check allocated"),
    ("hist", "the histogram's 256 counters (the kernel's hist), which the check allocated"),
    ("kept", "the compaction's output (the kernel's output), which the check allocated"),
    ("count", "the one-word count of kept elements (the kernel's count), which the check allocated"),
    (
        "counts",
        "one word a tile (compact_flags' counts, compact_offsets' and compact_scatter's places), which the check allocated",
    ),
    ("status", "the tiles' status words (one a tile), which the check allocated"),
];

/// The lines of this file that allocate a device buffer (`let [mut] NAME = backend.upload` or
/// `backend.alloc`), with the name: what a fault's `allocated at` names. Read from the file's
/// text once.
pub(crate) fn allocation_lines() -> &'static [(usize, &'static str)] {
    static LINES: OnceLock<Vec<(usize, &'static str)>> = OnceLock::new();
    LINES.get_or_init(|| {
        let mut found = Vec::new();
        for (i, line) in include_str!("check.rs").lines().enumerate() {
            let code = line.trim_start();
            let Some(rest) = code.strip_prefix("let ") else { continue };
            let rest = rest.strip_prefix("mut ").unwrap_or(rest);
            if let Some((name, value)) = rest.split_once(" = ")
                && (value.starts_with("backend.upload(") || value.starts_with("backend.alloc::<"))
            {
                found.push((i + 1, name));
            }
        }
        found
    })
}

/// `line` with each `allocated at learn/course/src/check.rs:N` of a buffer of [`BUFFERS`]
/// replaced by what the buffer is to the kernel.
pub(crate) fn name_check_buffers(line: &str) -> String {
    let mut out = line.to_string();
    for &(at, name) in allocation_lines() {
        if let Some((_, what)) = BUFFERS.iter().find(|(n, _)| *n == name) {
            out = out.replace(&format!("allocated at learn/course/src/check.rs:{at}"), what);
        }
    }
    out
}

/// What a check found.
pub struct Report {
    /// The first wrong answer, in full; `None` when every size and block was right.
    pub wrong: Option<String>,
    /// The first fault the emulator's checks reported (its one line, with `file:line`).
    pub fault: Option<String>,
    /// The lesson's measure, when the kernel ran at the measure's shape.
    pub measure: Option<f64>,
    /// The size of the measure's run ([`measure_n`]; its block is [`MEASURE_BLOCK`]).
    pub measure_n: usize,
}

impl Report {
    /// Names the learner's file `learn/exercises/{file}` where the fault or the wrong answer
    /// names the starting file `learn/start/{file}` (a check of the starting file the learner's
    /// file is a copy of).
    /// Where a fault names a buffer the check allocated (`allocated at learn/course/src/
    /// check.rs:LINE`, course code the learner does not read), it says what the buffer is to
    /// the kernel instead ([`BUFFERS`]).
    pub(crate) fn name_learners_file(&mut self, file: &str) {
        let (from, to) = (format!("learn/start/{file}"), format!("learn/exercises/{file}"));
        for line in [&mut self.fault, &mut self.wrong].into_iter().flatten() {
            *line = name_check_buffers(&line.replace(&from, &to));
        }
    }

    /// Right answers, no fault, and the goal reached.
    pub fn passed(&self, ex: &Exercise) -> bool {
        self.wrong.is_none() && self.fault.is_none() && self.measure.is_some_and(|m| ex.goal.met(m))
    }
}

/// Checks `attempt` as exercise `ex`.
pub fn check(ex: &Exercise, attempt: &Attempt) -> Report {
    let backend = Backend::with_emulator(Emulator::new().with_budget(BUDGET));
    let mut report = Report { wrong: None, fault: None, measure: None, measure_n: measure_n(attempt) };
    'shapes: for &block in BLOCKS {
        for (index, &n) in SIZES.iter().enumerate() {
            match answer(&backend, ex, attempt, n, offset(attempt, index), block) {
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

/// One run of `attempt` on `data` (placed `offset` elements into its buffer) at `block`: its
/// partials, one per block (one per thread of the one block for the sum of squares), or its
/// own answer.
fn run(
    backend: &Backend,
    ex: &Exercise,
    attempt: &Attempt,
    data: &[i32],
    offset: usize,
    block: u32,
) -> Result<Output, Error> {
    run_wrapped(backend, ex, attempt, data, offset, block, &mut |f| f())
}

/// [`run`] with each launch made through `wrap`.
fn run_wrapped(
    backend: &Backend,
    ex: &Exercise,
    attempt: &Attempt,
    data: &[i32],
    offset: usize,
    block: u32,
    wrap: Wrap<'_>,
) -> Result<Output, Error> {
    let n = data.len();
    if let Code::Scan(kernels) = attempt.code {
        return scan_output(backend, ex, kernels, data, Kind::Inclusive, wrap).map(Output::Scan);
    }
    if let Code::Histogram(k) = attempt.code {
        return histogram(backend, attempt, k, data, block, wrap).map(Output::Histogram);
    }
    if let Code::Compaction(kernels) = attempt.code {
        return compaction(backend, kernels, data, block, attempt.items, wrap);
    }
    let shifted: Vec<i32> = std::iter::repeat_n(BEFORE_INPUT, offset).chain(data.iter().copied()).collect();
    let mut input = backend.upload(&shifted)?;
    let v = registry::find(ex.lesson)?;
    let shared_bytes = match v.shared {
        SharedMem::DynamicPerThread(_) => v.shared_bytes(block),
        _ => 0,
    };
    let n32 = n as u32;
    // The input's first element, `offset` into the buffer.
    let i = input.as_mut_ptr().wrapping_add(offset);
    let grid = grid_of(backend, attempt, n, block)?;
    let cfg = LaunchConfig { grid: grid as u32, block, shared_bytes };
    match attempt.code {
        Code::Clocked(k) => {
            let mut partials = backend.alloc::<i32>(block as usize)?;
            let mut clocks = backend.alloc::<u64>(2)?;
            let cfg = LaunchConfig { grid: 1, block, shared_bytes };
            let args = (i.cast_const(), partials.as_mut_ptr(), clocks.as_mut_ptr(), n32);
            // SAFETY: one block; `partials` holds one element per thread, `clocks` two stamps.
            wrap(&mut || unsafe { backend.launch(&k, cfg, args) })?;
            Ok(Output::Partials(backend.download(&partials)?))
        }
        Code::LastBlock(k) => last_block(backend, k, cfg, i.cast_const(), n32, wrap),
        Code::Accumulate(k) => accumulate(backend, k, cfg, i.cast_const(), n32, wrap),
        code => {
            let mut partials = backend.alloc::<i32>(grid)?;
            let o = partials.as_mut_ptr();
            let per_block = match code {
                Code::PerBlock(table) => match table.iter().find(|(b, _)| *b == block) {
                    Some((_, k)) => Some(*k),
                    None => return Err(Error::Invalid(format!("no instantiation for block {block}"))),
                },
                _ => None,
            };
            // SAFETY: `input` holds n elements from `i` and `partials` one per block of a grid
            // that covers n (at `items` per thread, or by a loop over a resident grid), the
            // kernels' contract.
            wrap(&mut || unsafe {
                match (code, per_block) {
                    (Code::InPlace(k), _) | (Code::PerBlock(_), Some(k)) => backend.launch(&k, cfg, (i, o, n32)),
                    (Code::Read(k), _) => backend.launch(&k, cfg, (i.cast_const(), o, n32)),
                    _ => unreachable!("handled above"),
                }
            })?;
            Ok(Output::Partials(backend.download(&partials)?))
        }
    }
}

/// The bytes a histogram lesson counts: each element of the check's data, modulo 256.
pub(crate) fn bytes_of(data: &[i32]) -> Vec<u8> {
    data.iter().map(|&x| x as u8).collect()
}

/// The CPU's 256-bin histogram of `bytes`.
pub(crate) fn cpu_histogram(bytes: &[u8]) -> Vec<u32> {
    let mut counts = vec![0u32; kernels::histogram::HISTOGRAM_BINS];
    for &b in bytes {
        counts[b as usize] += 1;
    }
    counts
}

/// A histogram kernel's run on the bytes of `data` at `block`, on a grid of the GPU's size:
/// its 256 counters.
fn histogram(
    backend: &Backend,
    attempt: &Attempt,
    k: Kernel<HistogramArgs>,
    data: &[i32],
    block: u32,
    wrap: Wrap<'_>,
) -> Result<Vec<u32>, Error> {
    let bytes = backend.upload(&bytes_of(data))?;
    // Zero-filled: the kernel adds into its counters.
    let mut hist = backend.alloc::<u32>(kernels::histogram::HISTOGRAM_BINS)?;
    let grid = grid_of(backend, attempt, data.len(), block)?;
    let cfg = LaunchConfig { grid: grid as u32, block, shared_bytes: 0 };
    // SAFETY: the kernel reads `bytes` through its slice and counts into the 256 zeroed
    // counters of `hist` through its atomic slice; nothing else touches either meanwhile.
    wrap(&mut || unsafe { backend.launch(&k, cfg, (bytes.slice(), hist.atomic())) })?;
    backend.download(&hist)
}

/// The first bin of `got` that is not the CPU's count of `bytes`, in words.
fn wrong_bin(bytes: &[u8], got: &[u32], shape: &str) -> Option<String> {
    let want = cpu_histogram(bytes);
    (0..want.len()).find(|&b| got.get(b) != Some(&want[b])).map(|b| {
        format!("{shape}: bin {b} holds {:?}, expected {} (the input's bytes of value {b})", got.get(b), want[b])
    })
}

/// What a compaction's output holds past its kept elements before the run (negative, so never a
/// kept element): still there after it, nothing was written past them.
pub(crate) const NOT_KEPT: i32 = UNWRITTEN;

/// The CPU's compaction of `data`: its positive elements, in order.
pub(crate) fn cpu_compaction(data: &[i32]) -> Vec<i32> {
    data.iter().copied().filter(|&x| x > 0).collect()
}

/// A compaction's run on `data` at `block` (one tile a block, `items` elements a thread): the
/// three launches, or the one pass (at epoch 1, over zeroed status words).
fn compaction(
    backend: &Backend,
    kernels: CompactKernels,
    data: &[i32],
    block: u32,
    items: u32,
    wrap: Wrap<'_>,
) -> Result<Output, Error> {
    let input = backend.upload(data)?;
    let mut kept = backend.upload(&vec![NOT_KEPT; data.len()])?;
    let mut count = backend.alloc::<u32>(1)?;
    let tiles = data.len().div_ceil((block * items.max(1)) as usize).max(1);
    let cfg = LaunchConfig { grid: tiles as u32, block, shared_bytes: 0 };
    match kernels {
        CompactKernels::ThreeLaunches(flags, offsets, scatter) => {
            let mut counts = backend.alloc::<u32>(tiles)?;
            let one = LaunchConfig { grid: 1, ..cfg };
            // SAFETY: `counts` holds one word a tile and `count` one, `kept` as many elements as
            // the input: enough for every kept one; the input is read only.
            wrap(&mut || unsafe {
                backend.launch(&flags, cfg, (input.slice(), counts.global_mut()))?;
                backend.launch(&offsets, one, (counts.global_mut(), tiles as u32, count.global_mut()))?;
                backend.launch(&scatter, cfg, (input.slice(), counts.global_mut(), kept.global_mut()))
            })?;
        }
        CompactKernels::OnePass(k) => {
            let mut status = backend.alloc::<u64>(tiles)?;
            // SAFETY: as above, and `status` holds one zeroed word a tile (no word of epoch 1).
            wrap(&mut || unsafe {
                backend.launch(&k, cfg, (input.slice(), kept.global_mut(), count.global_mut(), status.global_mut(), 1))
            })?;
        }
    }
    Ok(Output::Compacted { output: backend.download(&kept)?, count: backend.read_element(&count, 0)? })
}

/// What is wrong with a compaction's output of `data`, in words: the count, the first wrong
/// kept element, or a write past the kept ones.
fn wrong_compaction(data: &[i32], output: &[i32], count: u32, shape: &str) -> Option<String> {
    let want = cpu_compaction(data);
    if count as usize != want.len() {
        return Some(format!("{shape}: count[0] is {count}, expected {} (the positive elements)", want.len()));
    }
    if let Some(i) = (0..want.len()).find(|&i| output.get(i) != Some(&want[i])) {
        return Some(format!(
            "{shape}: output[{i}] is {:?}, expected {} (the {i}-th positive element, counting from 0)",
            output.get(i),
            want[i]
        ));
    }
    (want.len()..output.len())
        .find(|&i| output[i] != NOT_KEPT)
        .map(|i| format!("{shape}: output[{i}] was written ({}), past the {} kept elements", output[i], want.len()))
}

/// A last-block kernel's run: its answer, or its partials where it left `g_out` unwritten (the
/// starting file of the lesson, which leaves them to the host).
fn last_block(
    backend: &Backend,
    k: Kernel<SinglePassArgs>,
    cfg: LaunchConfig,
    input: *const i32,
    n: u32,
    wrap: Wrap<'_>,
) -> Result<Output, Error> {
    let mut partials = backend.alloc::<i32>(cfg.grid as usize)?;
    let mut ticket = backend.alloc::<u32>(1)?;
    let mut out = backend.upload(&[UNWRITTEN])?;
    let args = (input, partials.as_mut_ptr(), ticket.as_mut_ptr(), out.as_mut_ptr(), n);
    // SAFETY: `input` holds n elements, `partials` one per block, the ticket is one zeroed word
    // and `out` one element: the last-block kernels' contract.
    wrap(&mut || unsafe { backend.launch(&k, cfg, args) })?;
    let value = backend.read_element(&out, 0)?;
    if value == UNWRITTEN {
        return Ok(Output::Partials(backend.download(&partials)?));
    }
    let left = backend.read_element(&ticket, 0)?;
    let left = (left != 0).then(|| {
        format!("the ticket is {left} after the launch, expected 0: the last block puts it back for the next launch")
    });
    Ok(Output::Answer { value, left })
}

/// An accumulating kernel's run at epoch 1: its answer in `g_acc[1]`, and `g_acc[0]`, which it
/// must clear for the next launch.
fn accumulate(
    backend: &Backend,
    k: Kernel<AccumulateArgs>,
    cfg: LaunchConfig,
    input: *const i32,
    n: u32,
    wrap: Wrap<'_>,
) -> Result<Output, Error> {
    let mut acc = backend.upload(&[STALE_ACC, 0])?;
    let args = (input, acc.as_mut_ptr(), n, 1);
    // SAFETY: `input` holds n elements; `acc` two words, the one of epoch 1 zero: the
    // accumulating kernels' contract.
    wrap(&mut || unsafe { backend.launch(&k, cfg, args) })?;
    let (value, other) = (backend.read_element(&acc, 1)?, backend.read_element(&acc, 0)?);
    let left = (other != 0).then(|| {
        format!(
            "g_acc[0] holds {other} after the launch at epoch 1, expected 0: block 0 clears the word the next \
             launch adds into"
        )
    });
    Ok(Output::Answer { value, left })
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
        (ScanPlan::DecoupledLookback { threads, items, .. }, ScanKernels::Lookback(kernel)) => {
            ScanPlan::DecoupledLookback { kernel, threads, items }
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
/// value); `Err(fault)`: the emulator stopped the kernel. `offset`: where the input starts in its
/// buffer ([`offset`]).
fn answer(
    backend: &Backend,
    ex: &Exercise,
    attempt: &Attempt,
    n: usize,
    offset: usize,
    block: u32,
) -> Result<Option<String>, String> {
    if let Code::Scan(..) = attempt.code {
        // A scan runs at its own block: check it once per size.
        return if block == BLOCKS[0] { scan_answer(backend, ex, attempt, n) } else { Ok(None) };
    }
    let data = Input::full_range(n, 0x1EA4 ^ n as u64).data;
    let shape = match offset {
        0 => format!("n = {n}, block {block}"),
        k => {
            format!("n = {n} from {k} element{} past a 16-byte boundary, block {block}", if k == 1 { "" } else { "s" })
        }
    };
    let out = run(backend, ex, attempt, &data, offset, block).map_err(|e| format!("{shape}: {e}"))?;
    if let Output::Histogram(got) = &out {
        return Ok(wrong_bin(&bytes_of(&data), got, &shape));
    }
    if let Output::Compacted { output, count } = &out {
        return Ok(wrong_compaction(&data, output, *count, &shape));
    }
    let sum = |xs: &mut dyn Iterator<Item = i32>| xs.fold(0i32, |a, x| a.wrapping_add(x));
    if let Code::Clocked(_) = attempt.code {
        let want = sum(&mut data.iter().map(|&x| x.wrapping_mul(x)));
        let got = out.total();
        return Ok((got != want).then(|| format!("{shape}: the sum of squares is {got}, expected {want}")));
    }
    let want = sum(&mut data.iter().copied());
    let partials = match out {
        Output::Partials(p) => p,
        Output::Answer { value, .. } if value != want => {
            return Ok(Some(format!(
                "{shape}: the kernel's answer is {value}, expected {want} (the sum of all {n} elements)"
            )));
        }
        Output::Answer { left, .. } => return Ok(left.map(|why| format!("{shape}: the answer is right, but {why}"))),
        Output::Scan(_) | Output::Histogram(_) | Output::Compacted { .. } => {
            unreachable!("scans, histograms and compactions return above")
        }
    };
    Ok(wrong_partial(attempt, &data, &partials, block, &shape))
}

/// The first wrong partial of a run on `data` at `block`, in words, or `None`: each block's
/// segment (one block per `block × items` elements), each block's share of a grid-stride loop
/// (one element per thread per pass), or, for the kernels of 16-byte loads, the total (each
/// shares the input out its own way).
fn wrong_partial(attempt: &Attempt, data: &[i32], partials: &[i32], block: u32, shape: &str) -> Option<String> {
    let sum = |xs: &mut dyn Iterator<Item = i32>| xs.fold(0i32, |a, x| a.wrapping_add(x));
    let (n, grid, block) = (data.len(), partials.len(), block as usize);
    if attempt.grid == Grid::Resident && attempt.items == 1 {
        let threads = grid * block;
        return partials.iter().enumerate().find_map(|(b, &got)| {
            let mine = data.iter().enumerate().filter(|&(i, _)| grid_stride_block(i, block, grid) == b);
            let want = sum(&mut mine.map(|(_, &x)| x));
            (got != want).then(|| {
                format!(
                    "{shape}: block {b} wrote {got}, expected {want} (the sum of the elements i with i mod {threads} \
                     from {} to {}: a grid-stride loop over {grid} blocks of {block})",
                    b * block,
                    (b + 1) * block - 1
                )
            })
        });
    }
    if attempt.grid == Grid::Resident {
        let (got, want) = (sum(&mut partials.iter().copied()), sum(&mut data.iter().copied()));
        return (got != want).then(|| {
            format!(
                "{shape}: the {grid} blocks' partials add up to {got}, expected {want} (the sum of all {n} elements)"
            )
        });
    }
    let segment = block * attempt.items.max(1) as usize;
    partials.iter().enumerate().find_map(|(b, &got)| {
        let part = &data[(b * segment).min(n)..((b + 1) * segment).min(n)];
        let want = sum(&mut part.iter().copied());
        (got != want).then(|| {
            format!(
                "{shape}: block {b} wrote {got}, expected {want} (the sum of its {} elements from {})",
                part.len(),
                b * segment
            )
        })
    })
}

/// The size `attempt`'s measure is taken at: [`MEASURE_SCAN_N`] for a scan, else [`MEASURE_N`].
pub fn measure_n(attempt: &Attempt) -> usize {
    if let Code::Scan(_) = attempt.code { MEASURE_SCAN_N } else { MEASURE_N }
}

/// The lesson's measure of `attempt`, at [`measure_n`] and [`MEASURE_BLOCK`].
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
    let (counted, out) = counted_run(ex, attempt)?;
    for launch in counted {
        c.add(&launch.counters);
    }
    let blocks = c.blocks.max(1) as f64;
    let n = measure_n(attempt);
    let per = |x: u64, of: u64| if of == 0 { 0.0 } else { x as f64 / of as f64 };
    Ok(match ex.goal.measure() {
        Measure::LanesPerRequest => c.lanes_per_request(),
        Measure::GldEfficiency => c.gld_efficiency_pct(),
        Measure::ElementsPerThread => n as f64 / (blocks * MEASURE_BLOCK as f64),
        Measure::BarriersPerBlock => c.barriers as f64 / blocks,
        Measure::GlobalStoresPerBlock => c.gst_requests as f64 / blocks,
        Measure::SharedLoadConflicts => c.shared_ld_conflicts() as f64,
        Measure::GlobalLoadsPerBlock => c.gld_requests as f64 / blocks,
        Measure::WarpCollectivesPerWarp => per(c.warp_collectives, c.warps),
        Measure::BytesPerLoadRequest => per(c.gld_bytes, c.gld_requests),
        Measure::HostAdds => match out {
            Output::Partials(p) => p.len() as f64,
            Output::Answer { .. } | Output::Scan(_) | Output::Histogram(_) | Output::Compacted { .. } => 0.0,
        },
        Measure::AtomicsPerBlock => c.atomics as f64 / blocks,
        Measure::GlobalAtomicsPerElement => per(c.global_atomics, n as u64),
        // Every way a kernel reads global memory: loads, `cp.async` and bulk copies (the
        // project's `lookback` brings its full tiles in with `cp.async`).
        Measure::InputPasses => per(c.gld_bytes + c.ldgsts_bytes + c.bulk_ld_bytes, (n * size_of::<i32>()) as u64),
        Measure::Loops | Measure::StaticShared => unreachable!("read from the source above"),
    })
}

/// The data of the measure's run: [`measure_n`] small values from seed 1 (the GPU's profiled
/// run, [`profiled_run`], uses the same).
fn measure_data(attempt: &Attempt) -> Vec<i32> {
    Input::small(measure_n(attempt), 1).data
}

/// The emulator's counters of each launch of one run of `attempt` at [`measure_n`] and
/// [`MEASURE_BLOCK`], and what the run left; `Err` is a fault's line.
pub(crate) fn counted_run(
    ex: &Exercise,
    attempt: &Attempt,
) -> Result<(Vec<reduce_scan::emu::Counted>, Output), String> {
    let mut emulator = Emulator::new().with_budget(BUDGET);
    if let Code::Scan(ScanKernels::Lookback(_)) | Code::Compaction(CompactKernels::OnePass(_)) = attempt.code {
        // One block at a time, in order: a tile's predecessors have all published before it
        // looks back, so its status loads are as many as it needs, not as many as a wait took
        // (polls would count as loads, and vary from run to run).
        emulator = emulator.with_workers(1);
    }
    let backend = Backend::with_emulator(emulator);
    let counting = backend.counting().expect("the emulator counts");
    let n = measure_n(attempt);
    let out = run(&counting, ex, attempt, &measure_data(attempt), 0, MEASURE_BLOCK)
        .map_err(|e| format!("n = {n}, block {MEASURE_BLOCK} (the measure's run): {e}"))?;
    Ok((counting.take_counted(), out))
}

/// The same run as [`counted_run`], on `backend` (a GPU, under Nsight Compute: `./x learn N
/// --gpu`'s child run).
pub(crate) fn profiled_run(backend: &Backend, ex: &Exercise, attempt: &Attempt) -> Result<(), String> {
    run(backend, ex, attempt, &measure_data(attempt), 0, MEASURE_BLOCK).map(|_| ()).map_err(|e| e.to_string())
}

/// The shape of the GPU run: n = 2^24 at block 512, the committed set's.
pub(crate) const GPU_N: usize = 1 << 24;

/// `attempt` on `backend` (a GPU) at [`GPU_N`], block 512: whether its answer is the CPU's, and
/// its launch times over `runs` timed runs (CUDA events; a fresh input before each).
pub(crate) fn on_gpu(
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
        let out = run_wrapped(backend, ex, attempt, &data, 0, MEASURE_BLOCK, &mut timed).map_err(|e| e.to_string())?;
        if let Output::Histogram(counts) = &out
            && wrong.is_none()
        {
            wrong = wrong_bin(&bytes_of(&data), counts, &format!("run {i}"));
        }
        if let Output::Compacted { output, count } = &out
            && wrong.is_none()
        {
            wrong = wrong_compaction(&data, output, *count, &format!("run {i}"));
        }
        let got = out.total();
        if got != want && wrong.is_none() {
            wrong = Some(format!("run {i}: the total is {got}, expected {want}"));
        }
        if let Output::Answer { left: Some(why), .. } = out
            && wrong.is_none()
        {
            wrong = Some(format!("run {i}: the total is right, but {why}"));
        }
    }
    times.sort_by(f64::total_cmp);
    Ok((wrong, times))
}

/// What the partials of `attempt` add up to on `data` (a scan: its last inclusive element).
fn expected_total(attempt: &Attempt, data: &[i32]) -> i32 {
    match attempt.code {
        Code::Clocked(_) => data.iter().fold(0i32, |a, &x| a.wrapping_add(x.wrapping_mul(x))),
        // Every byte counted once.
        Code::Histogram(_) => data.len() as i32,
        Code::Compaction(_) => cpu_compaction(data).iter().fold(0i32, |a, &x| a.wrapping_add(x)),
        _ => data.iter().fold(0i32, |a, &x| a.wrapping_add(x)),
    }
}
