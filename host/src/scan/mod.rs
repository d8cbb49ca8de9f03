//! Prefix sums (scans) on the GPU or the emulator: the scan registry of the `i32` variants,
//! preconditions, launch plans, timing; [`typed`], the look-back scan of every element type and
//! operator; [`Scanner`], the library object (any type, any operator); and [`inclusive_scan`] /
//! [`exclusive_scan`] for callers who just want the answer.
//!
//! The scan family lives apart from the reductions' [`crate::registry`]: a scan writes an
//! array, not a scalar, and its variants are multi-kernel plans with their own scratch
//! buffers. [`all()`] is its one list (the CLI's `--op scan`, `tests/scan.rs`,
//! `benches/scan.rs` and `scripts/gpu/scan_table.sh` iterate over it).
//!
//! | variant | launches | scratch |
//! |---|---|---|
//! | `bit` | `bit_build` × (1 + ⌊log₂₀₄₈(n/2)⌋) (strides 1, 2048, 2048², …), `bit_query` | the tree (n words) |
//! | `blelloch` | `blelloch_reduce` per level but the last (n, n/4096, … → 1 tile), then `blelloch_block` per level, top-down | the tile sums of each level but the last |
//! | `lookback` (and its tuning shapes) | `lookback` once | one status word per tile |
//! | `lookback_bulk` (and `lookback_bulk_load_only`; sm_90) | itself once | one status word per tile |
//! | `lookback_persistent` (sm_90) | itself once, as many blocks as fit at once | one status word per tile, then the ticket counter |
//!
//! **What is timed** ([`Scan::launch`]): the launches only, all of them. Nothing needs to be
//! restored between runs: `bit` rebuilds its tree from the input, `blelloch` rewrites its
//! sums, and `lookback` tags its status words with a new epoch per launch, so launches can be
//! queued back to back (what the benches do). [`Scan::reset`] is there for callers that
//! treat every plan alike; no scan needs it.
//!
//! **Never the input.** Every kernel reads `input` and writes `output` or scratch the
//! [`Scan`] owns; `input` and `output` are distinct buffers by construction (`&` and `&mut`).

pub mod cpu;
mod scanner;
pub mod typed;

pub use scanner::Scanner;

use std::fmt;

use kernels::scan::index::{MAX_EPOCH, bit_next_stride, bit_positions};
use kernels::scan::{BIT_BLOCK, BIT_SPAN, BLELLOCH_BLOCK, BLELLOCH_TILE};
use kernels::types::Sum;

use crate::backend::{Backend, DeviceBuffer, Kernel, LaunchConfig};
use crate::error::{Error, Result};
use crate::kernel_ref;
use crate::reduce::MAX_GRID;
use crate::timing::{Rerun, Runs, timed_runs};

/// Inclusive or exclusive scan.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Kind {
    /// `out[i] = in[0] + … + in[i]`.
    Inclusive,
    /// `out[i] = in[0] + … + in[i-1]`, `out[0] = 0`.
    Exclusive,
}

impl Kind {
    /// Both kinds.
    pub const ALL: [Kind; 2] = [Kind::Inclusive, Kind::Exclusive];

    /// `inclusive` or `exclusive`.
    pub fn name(self) -> &'static str {
        match self {
            Kind::Inclusive => "inclusive",
            Kind::Exclusive => "exclusive",
        }
    }

    /// The kernels' `exclusive` argument.
    pub(crate) fn flag(self) -> u32 {
        (self == Kind::Exclusive) as u32
    }

    /// The CPU reference of this kind.
    pub fn reference(self, data: &[i32]) -> Vec<i32> {
        match self {
            Kind::Inclusive => cpu::inclusive_scan(data),
            Kind::Exclusive => cpu::exclusive_scan(data),
        }
    }
}

impl fmt::Display for Kind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// `bit_build(src, tree, n, stride)`.
pub type BitBuildArgs = (*const i32, *mut i32, u32, u32);
/// `bit_query(tree, output, n, exclusive)`.
pub type BitQueryArgs = (*const i32, *mut i32, u32, u32);
/// `blelloch_block(input, output, offsets, n, exclusive)`.
pub type BlellochBlockArgs = (*const i32, *mut i32, *const i32, u32, u32);
/// `blelloch_reduce(input, sums, n)`.
pub type BlellochReduceArgs = (*const i32, *mut i32, u32);
/// `lookback(input, output, status, n, epoch, exclusive)`.
pub type LookbackArgs = (*const i32, *mut i32, *mut u64, u32, u32, u32);

/// How a scan variant runs.
#[derive(Clone, Copy, Debug)]
pub enum ScanPlan {
    /// Build a Fenwick tree (`build` at strides 1, 2048, 2048², … while needed), then
    /// `query` every prefix, a tile of `span` per block.
    Fenwick {
        /// `bit_build`.
        build: Kernel<BitBuildArgs>,
        /// `bit_query`.
        query: Kernel<BitQueryArgs>,
        /// Threads per block of both (512).
        block: u32,
        /// Tree positions (nodes built, prefixes answered) per block of both (2048).
        span: u32,
    },
    /// Reduce-then-scan: `reduce` every tile to its sum, recursively on the sums until one
    /// tile holds them, then `block_scan` every level top-down, each tile seeded with its
    /// offset (the scanned sums of the level above).
    ReduceThenScan {
        /// `blelloch_reduce`.
        reduce: Kernel<BlellochReduceArgs>,
        /// `blelloch_block`.
        block_scan: Kernel<BlellochBlockArgs>,
        /// Threads per block (512).
        block: u32,
        /// Elements per tile (4096).
        tile: u32,
    },
    /// One launch, one block per tile, decoupled look-back between tiles.
    DecoupledLookback {
        /// `lookback` or one of its tuning shapes.
        kernel: Kernel<LookbackArgs>,
        /// Threads per block (the kernel is compiled for exactly this).
        threads: u32,
        /// Elements per thread.
        items: u32,
    },
    /// One launch of as many blocks as fit on the GPU at once, each drawing tiles by ticket
    /// and holding `stages` of them in dynamic shared memory, loaded (and stored) by sm_90's
    /// bulk-copy engine; decoupled look-back between tiles.
    PersistentLookback {
        /// `lookback_persistent`.
        kernel: Kernel<LookbackArgs>,
        /// Threads per block (the kernel is compiled for exactly this).
        threads: u32,
        /// Elements per thread.
        items: u32,
        /// Tiles in shared memory per block.
        stages: u32,
    },
}

/// A scan variant.
#[derive(Clone, Copy, Debug)]
pub struct ScanVariant {
    /// The name: file, kernel prefix, PTX symbols, CLI argument and bench id.
    pub name: &'static str,
    /// The idea it teaches, in one line.
    pub concept: &'static str,
    /// The kinds it computes.
    pub kinds: &'static [Kind],
    /// Oldest GPU it runs on.
    pub min_cc: (u32, u32),
    /// A tuning shape of another variant (run only when named, or with `--variant tuning`),
    /// not a step of the curriculum.
    pub tuning: bool,
    /// How it runs.
    pub plan: ScanPlan,
}

impl ScanVariant {
    /// Every PTX symbol it launches.
    pub fn symbols(&self) -> Vec<&'static str> {
        match self.plan {
            ScanPlan::Fenwick { build, query, .. } => vec![build.name, query.name],
            ScanPlan::ReduceThenScan { reduce, block_scan, .. } => vec![reduce.name, block_scan.name],
            ScanPlan::DecoupledLookback { kernel, .. } | ScanPlan::PersistentLookback { kernel, .. } => {
                vec![kernel.name]
            }
        }
    }

    /// Threads per block of its (main) kernel.
    pub fn block(&self) -> u32 {
        match self.plan {
            ScanPlan::Fenwick { block, .. } | ScanPlan::ReduceThenScan { block, .. } => block,
            ScanPlan::DecoupledLookback { threads, .. } | ScanPlan::PersistentLookback { threads, .. } => threads,
        }
    }

    /// Elements per block of its (main) kernel.
    pub fn tile(&self) -> u32 {
        match self.plan {
            ScanPlan::Fenwick { span, .. } => span,
            ScanPlan::ReduceThenScan { tile, .. } => tile,
            ScanPlan::DecoupledLookback { threads, items, .. }
            | ScanPlan::PersistentLookback { threads, items, .. } => threads * items,
        }
    }

    /// What [`check_shape`] needs to know of it.
    pub(crate) fn shape(&self) -> Shape {
        Shape { name: self.name, kinds: self.kinds, min_cc: self.min_cc, tile: self.tile() }
    }

    /// Bytes of device scratch it needs for `n` elements (beyond input and output).
    pub fn scratch_bytes(&self, n: usize) -> u64 {
        match self.plan {
            ScanPlan::Fenwick { .. } => n as u64 * 4,
            ScanPlan::ReduceThenScan { .. } => {
                let levels = blelloch_levels(n);
                levels[..levels.len() - 1].iter().map(|l| l.grid as u64 * 4).sum()
            }
            ScanPlan::DecoupledLookback { .. } => (n as u64).div_ceil(self.tile() as u64) * 8,
            // The status words, then the ticket counter.
            ScanPlan::PersistentLookback { .. } => ((n as u64).div_ceil(self.tile() as u64) + 1) * 8,
        }
    }
}

const BOTH: &[Kind] = &Kind::ALL;

/// A tuning shape of `lookback`.
macro_rules! lookback_shape {
    ($name:ident, $threads:literal, $items:literal) => {
        ScanVariant {
            name: stringify!($name),
            concept: "lookback with another tile shape (threads x items per thread), for tuning",
            kinds: BOTH,
            min_cc: (7, 0),
            tuning: true,
            plan: ScanPlan::DecoupledLookback {
                kernel: kernel_ref!(kernels::scan::$name(a, b, c, d, e, f)),
                threads: $threads,
                items: $items,
            },
        }
    };
}

/// An ablation of `lookback`: its shape, with one instruction changed (a cache hint, or a
/// sleep in the look-back's wait).
macro_rules! lookback_hinted {
    ($name:ident, $concept:literal) => {
        ScanVariant {
            name: stringify!($name),
            concept: $concept,
            kinds: BOTH,
            min_cc: (7, 0),
            tuning: true,
            plan: ScanPlan::DecoupledLookback {
                kernel: kernel_ref!(kernels::scan::$name(a, b, c, d, e, f)),
                threads: kernels::scan::LOOKBACK_THREADS,
                items: kernels::scan::LOOKBACK_ITEMS,
            },
        }
    };
}

/// The scan variants: the curriculum first (`bit` → `blelloch_unpadded` → `blelloch` → `lookback`), then the
/// tuning shapes of `lookback` (same order as `kernels::scan::LOOKBACK_TUNING`).
static VARIANTS: &[ScanVariant] = &[
    ScanVariant {
        name: "bit",
        concept: "Fenwick tree: build it level by level across blocks, answer every prefix by a query walk (the part above a tile once per tile; O(n log T) work)",
        kinds: BOTH,
        min_cc: (7, 0),
        tuning: false,
        plan: ScanPlan::Fenwick {
            build: kernel_ref!(kernels::scan::bit_build(a, b, c, d)),
            query: kernel_ref!(kernels::scan::bit_query(a, b, c, d)),
            block: BIT_BLOCK,
            span: BIT_SPAN,
        },
    },
    ScanVariant {
        name: "blelloch_unpadded",
        concept: "work-efficient up-sweep/down-sweep over 4-element leaves, the shared tree one word per node: up-to-32-way bank conflicts",
        kinds: BOTH,
        min_cc: (7, 0),
        tuning: false,
        plan: ScanPlan::ReduceThenScan {
            reduce: kernel_ref!(kernels::scan::blelloch_unpadded_reduce(a, b, c)),
            block_scan: kernel_ref!(kernels::scan::blelloch_unpadded_block(a, b, c, d, e)),
            block: BLELLOCH_BLOCK,
            tile: BLELLOCH_TILE,
        },
    },
    ScanVariant {
        name: "blelloch",
        concept: "work-efficient up-sweep/down-sweep in bank-conflict-free padded shared memory over 4-element leaves; reduce-then-scan across blocks",
        kinds: BOTH,
        min_cc: (7, 0),
        tuning: false,
        plan: ScanPlan::ReduceThenScan {
            reduce: kernel_ref!(kernels::scan::blelloch_reduce(a, b, c)),
            block_scan: kernel_ref!(kernels::scan::blelloch_block(a, b, c, d, e)),
            block: BLELLOCH_BLOCK,
            tile: BLELLOCH_TILE,
        },
    },
    ScanVariant {
        name: "lookback",
        concept: "single pass: each tile publishes its sum, then looks back over 32 predecessors at a time (decoupled look-back)",
        kinds: BOTH,
        min_cc: (7, 0),
        tuning: false,
        plan: ScanPlan::DecoupledLookback {
            kernel: kernel_ref!(kernels::scan::lookback(a, b, c, d, e, f)),
            threads: kernels::scan::LOOKBACK_THREADS,
            items: kernels::scan::LOOKBACK_ITEMS,
        },
    },
    ScanVariant {
        name: "lookback_bulk",
        concept: "lookback with sm_90's bulk-copy engine: one thread moves the whole tile (cp.async.bulk + mbarrier), in and out",
        kinds: BOTH,
        min_cc: (9, 0),
        tuning: false,
        plan: ScanPlan::DecoupledLookback {
            kernel: kernel_ref!(kernels::scan::lookback_bulk(a, b, c, d, e, f)),
            threads: kernels::scan::BULK_THREADS,
            items: kernels::scan::BULK_ITEMS,
        },
    },
    lookback_shape!(lookback_128x44, 128, 44),
    lookback_shape!(lookback_128x60, 128, 60),
    lookback_shape!(lookback_192x44, 192, 44),
    lookback_shape!(lookback_256x28, 256, 28),
    lookback_hinted!(lookback_no_hints, "lookback without its cache hints (plain stores and copies), an ablation"),
    lookback_hinted!(lookback_stream_store, "lookback with streaming stores only (no evict-first copies), an ablation"),
    lookback_hinted!(lookback_evict_first, "lookback with evict-first copies only (plain stores), an ablation"),
    lookback_hinted!(
        lookback_prefetch256,
        "lookback with a 256-byte L2 prefetch on its copies instead of its hints, an ablation"
    ),
    lookback_hinted!(lookback_sleep64, "lookback whose waiting lanes sleep 64 ns between polls, an ablation"),
    lookback_hinted!(lookback_spin, "lookback whose waiting lanes spin without sleeping between polls, an ablation"),
    lookback_hinted!(lookback_sleep1024, "lookback whose waiting lanes sleep 1024 ns between polls, an ablation"),
    ScanVariant {
        name: "lookback_bulk_load_only",
        concept: "lookback_bulk storing through registers (st.global.cs.v4) instead of a bulk store, an ablation",
        kinds: BOTH,
        min_cc: (9, 0),
        tuning: true,
        plan: ScanPlan::DecoupledLookback {
            kernel: kernel_ref!(kernels::scan::lookback_bulk_load_only(a, b, c, d, e, f)),
            threads: kernels::scan::BULK_THREADS,
            items: kernels::scan::BULK_ITEMS,
        },
    },
    ScanVariant {
        name: "lookback_persistent",
        concept: "lookback_bulk with persistent blocks drawing tiles by ticket, the next tile loading during the look-back: an experiment, slower",
        kinds: BOTH,
        min_cc: (9, 0),
        tuning: true,
        plan: ScanPlan::PersistentLookback {
            kernel: kernel_ref!(kernels::scan::lookback_persistent(a, b, c, d, e, f)),
            threads: kernels::scan::PERSISTENT_THREADS,
            items: kernels::scan::PERSISTENT_ITEMS,
            stages: kernels::scan::PERSISTENT_STAGES,
        },
    },
];

/// Every scan variant, tuning shapes included.
pub fn all() -> impl Iterator<Item = &'static ScanVariant> + Clone {
    VARIANTS.iter()
}

/// The variants of the curriculum (no tuning shapes): what `--variant all` runs.
pub fn curriculum() -> impl Iterator<Item = &'static ScanVariant> + Clone {
    all().filter(|v| !v.tuning)
}

/// The scan variant called `name`, or an error listing the names there are.
pub fn find(name: &str) -> Result<&'static ScanVariant> {
    all().find(|v| v.name == name).ok_or_else(|| {
        let names: Vec<_> = all().map(|v| v.name).collect();
        Error::Invalid(format!("no scan variant `{name}`; the scan variants are: {}", names.join(", ")))
    })
}

/// Whether `lookback_bulk` is the `i32` scan of the library on sm_90 and newer: the one place
/// the scan's plan is chosen per architecture (`lookback` everywhere else, and the typed scans).
///
/// Measured (H100, `docs/measurements/2026-11-25-h100/bulk/`): see `docs/scan-bulk.md`.
pub const BULK_ON_SM90: bool = false;

/// The variant [`inclusive_scan`], [`exclusive_scan`] and [`Scanner`] use for `i32` sums on a
/// device of compute capability `cc`: a single-pass look-back scan, with sm_90's bulk copies
/// where [`BULK_ON_SM90`] says they are faster.
pub fn fastest(cc: (u32, u32)) -> &'static ScanVariant {
    let name = if BULK_ON_SM90 && cc >= (9, 0) { "lookback_bulk" } else { "lookback" };
    find(name).expect("both look-back scans are registered")
}

/// A single-pass variant's launch on `n` elements: the kernel, its launch configuration, and
/// the status words it needs (one per tile; the bulk scan's ticket counter after them).
pub(crate) fn single_pass_launch(
    backend: &Backend,
    variant: &ScanVariant,
    n: usize,
) -> Result<(Kernel<LookbackArgs>, LaunchConfig, usize)> {
    let tiles = n.div_ceil(variant.tile() as usize);
    match variant.plan {
        ScanPlan::DecoupledLookback { kernel, threads, .. } => Ok((kernel, config(tiles, threads), tiles)),
        ScanPlan::PersistentLookback { kernel, .. } => Ok((kernel, persistent_config(backend, variant, n)?, tiles + 1)),
        ScanPlan::Fenwick { .. } | ScanPlan::ReduceThenScan { .. } => {
            Err(Error::Invalid(format!("scan `{}` is not a single-pass scan", variant.name)))
        }
    }
}

/// One level of the reduce-then-scan recursion: `len` elements in `grid` tiles.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Level {
    /// Elements scanned at this level (n, then the tile sums of the level below, …).
    pub len: usize,
    /// Tiles (blocks) at this level; the last level has one.
    pub grid: usize,
}

/// The levels of a reduce-then-scan over `n ≥ 1` elements with 4096-element tiles.
///
/// ```
/// use reduce_scan::scan::{blelloch_levels, Level};
/// assert_eq!(blelloch_levels(4000), vec![Level { len: 4000, grid: 1 }]);
/// assert_eq!(blelloch_levels(4097), vec![Level { len: 4097, grid: 2 }, Level { len: 2, grid: 1 }]);
/// assert_eq!(blelloch_levels((1 << 24) + 7).len(), 3);
/// ```
pub fn blelloch_levels(n: usize) -> Vec<Level> {
    let tile = BLELLOCH_TILE as usize;
    let mut levels = vec![Level { len: n, grid: n.div_ceil(tile) }];
    while let Some(&Level { grid, .. }) = levels.last()
        && grid > 1
    {
        levels.push(Level { len: grid, grid: grid.div_ceil(tile) });
    }
    levels
}

/// The strides of the `bit_build` launches for `n ≥ 1` elements: 1, 2048, 2048², … while a
/// tree node needs them.
///
/// ```
/// use reduce_scan::scan::bit_strides;
/// assert_eq!(bit_strides(4000), vec![1]);
/// assert_eq!(bit_strides(4096), vec![1, 2048]);
/// assert_eq!(bit_strides(1 << 23), vec![1, 2048, 1 << 22]);
/// ```
pub fn bit_strides(n: usize) -> Vec<usize> {
    let mut strides = vec![1];
    while let Some(next) = bit_next_stride(n, *strides.last().unwrap(), BIT_SPAN as usize) {
        strides.push(next);
    }
    strides
}

/// Launch geometry of a scan, for reports.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ScanGeometry {
    /// Kernel launches per run.
    pub launches: usize,
    /// Blocks of the first (largest) launch.
    pub grid: u32,
    /// Threads per block.
    pub block: u32,
    /// Elements per block of the main kernel.
    pub tile: u32,
}

/// Checks every precondition of scanning `n` elements with `variant`, `kind` on a device of
/// compute capability `cc`, with buffers of `input_len` and `output_len` elements.
pub fn check(
    variant: &ScanVariant,
    kind: Kind,
    n: usize,
    input_len: usize,
    output_len: usize,
    cc: (u32, u32),
) -> Result<()> {
    check_shape(&variant.shape(), kind, n, (input_len, output_len), cc)
}

/// What [`check_shape`] needs to know of a scan kernel: its name, kinds, oldest GPU and tile.
#[derive(Clone, Copy)]
pub(crate) struct Shape {
    pub(crate) name: &'static str,
    pub(crate) kinds: &'static [Kind],
    pub(crate) min_cc: (u32, u32),
    pub(crate) tile: u32,
}

/// [`check`] for any scan kernel (the i32 variants and the typed ones): `(input_len,
/// output_len)` are the buffers' lengths in elements.
pub(crate) fn check_shape(
    variant: &Shape,
    kind: Kind,
    n: usize,
    (input_len, output_len): (usize, usize),
    cc: (u32, u32),
) -> Result<()> {
    let name = variant.name;
    if n == 0 {
        return Err(Error::Invalid(format!("scan `{name}`: n = 0; a scan needs n ≥ 1 elements")));
    }
    if n > u32::MAX as usize {
        return Err(Error::Invalid(format!(
            "scan `{name}`: n = {n} is more than the kernels' 32-bit length parameter allows (n ≤ {})",
            u32::MAX
        )));
    }
    if input_len < n {
        return Err(Error::Invalid(format!("scan `{name}`: the input holds {input_len} elements, fewer than n = {n}")));
    }
    if output_len < n {
        return Err(Error::Invalid(format!(
            "scan `{name}`: the output holds {output_len} elements, fewer than n = {n}; it must hold at least n"
        )));
    }
    if !variant.kinds.contains(&kind) {
        let kinds: Vec<_> = variant.kinds.iter().map(|k| k.name()).collect();
        return Err(Error::Unsupported(format!("scan `{name}` has no {kind} scan; it computes: {}", kinds.join(", "))));
    }
    if cc < variant.min_cc {
        return Err(Error::Unsupported(format!(
            "scan `{name}` needs compute capability {}.{} or newer; this device has {}.{}",
            variant.min_cc.0, variant.min_cc.1, cc.0, cc.1
        )));
    }
    let grid = (n as u64).div_ceil(variant.tile as u64);
    if grid > MAX_GRID {
        return Err(Error::Invalid(format!(
            "scan `{name}`: n = {n} needs {grid} blocks; a grid holds at most {MAX_GRID}"
        )));
    }
    Ok(())
}

/// One kernel launch of a plan, with its arguments (device pointers into buffers the
/// [`Scan`] holds).
#[derive(Clone, Copy)]
enum Launch {
    BitBuild(Kernel<BitBuildArgs>, LaunchConfig, BitBuildArgs),
    BitQuery(Kernel<BitQueryArgs>, LaunchConfig, BitQueryArgs),
    BlellochBlock(Kernel<BlellochBlockArgs>, LaunchConfig, BlellochBlockArgs),
    BlellochReduce(Kernel<BlellochReduceArgs>, LaunchConfig, BlellochReduceArgs),
    /// The look-back scan: its epoch argument is filled in at each launch.
    Lookback(Kernel<LookbackArgs>, LaunchConfig, LookbackArgs),
}

impl Launch {
    /// Enqueues this launch; a look-back launch gets `epoch` as its epoch argument.
    ///
    /// # Safety
    /// As for [`Backend::launch`]: the arguments are valid for the kernel.
    unsafe fn enqueue(self, backend: &Backend, epoch: u32) -> Result<()> {
        match self {
            // SAFETY: forwarded from the caller.
            Launch::BitBuild(k, c, a) => unsafe { backend.launch(&k, c, a) },
            // SAFETY: forwarded from the caller.
            Launch::BitQuery(k, c, a) => unsafe { backend.launch(&k, c, a) },
            // SAFETY: forwarded from the caller.
            Launch::BlellochBlock(k, c, a) => unsafe { backend.launch(&k, c, a) },
            // SAFETY: forwarded from the caller.
            Launch::BlellochReduce(k, c, a) => unsafe { backend.launch(&k, c, a) },
            Launch::Lookback(k, c, mut a) => {
                a.4 = epoch;
                // SAFETY: forwarded from the caller.
                unsafe { backend.launch(&k, c, a) }
            }
        }
    }

    fn config(&self) -> LaunchConfig {
        match self {
            Launch::BitBuild(_, c, _)
            | Launch::BitQuery(_, c, _)
            | Launch::BlellochBlock(_, c, _)
            | Launch::BlellochReduce(_, c, _)
            | Launch::Lookback(_, c, _) => *c,
        }
    }
}

/// The launch of a [`ScanPlan::PersistentLookback`] variant on `n` elements: its dynamic shared
/// memory, its block, and as many blocks as fit on the device at once (at most one per
/// tile): persistent blocks that draw their tiles by ticket.
pub(crate) fn persistent_config(backend: &Backend, variant: &ScanVariant, n: usize) -> Result<LaunchConfig> {
    let ScanPlan::PersistentLookback { kernel, threads, items, stages } = variant.plan else {
        return Err(Error::Invalid(format!("scan `{}` is not a persistent scan", variant.name)));
    };
    let shared = kernels::scan::lookback_persistent_shared_bytes(threads, items, stages);
    backend.allow_dynamic_shared(kernel.name, shared as usize)?;
    let per_sm = backend.occupancy(kernel.name, threads, shared as usize)?.max(1);
    let resident = per_sm as usize * backend.info().multiprocessors.max(1) as usize;
    let grid = n.div_ceil(variant.tile() as usize).min(resident);
    Ok(LaunchConfig { grid: grid as u32, block: threads, shared_bytes: shared })
}

pub(crate) fn config(grid: usize, block: u32) -> LaunchConfig {
    LaunchConfig { grid: grid as u32, block, shared_bytes: 0 }
}

/// A scan ready to run: preconditions checked, scratch allocated, launches planned.
pub struct Scan<'a> {
    /// The CPU scan every run must match, when the caller gave one ([`Rerun::check`]).
    expected: Option<&'a [i32]>,
    backend: &'a Backend,
    variant: &'static ScanVariant,
    kind: Kind,
    n: usize,
    output: &'a mut DeviceBuffer<i32>,
    /// Keeps the scratch buffers the planned launches point into alive.
    _scratch: Vec<DeviceBuffer<i32>>,
    status: Option<DeviceBuffer<u64>>,
    epoch: u32,
    launches: Vec<Launch>,
}

impl Rerun for Scan<'_> {
    fn reset(&mut self) -> Result<()> {
        Scan::reset(self)
    }
    fn launch(&mut self) -> Result<()> {
        Scan::launch(self)
    }
    fn check(&mut self) -> Result<Option<String>> {
        let Some(expected) = self.expected else { return Ok(None) };
        let got = self.result()?;
        Ok(cpu::first_mismatch(expected, &got).map(mismatch_text))
    }
}

/// One line for the first element a scan got wrong.
pub fn mismatch_text((i, e, g): (usize, Option<i32>, Option<i32>)) -> String {
    let show = |v: Option<i32>| v.map_or("nothing".into(), |v| v.to_string());
    format!("index {i}: expected {}, got {}", show(e), show(g))
}

impl<'a> Scan<'a> {
    /// Prepares `variant` to scan the first `n` elements of `input` into `output`.
    pub fn new(
        backend: &'a Backend,
        variant: &'static ScanVariant,
        kind: Kind,
        input: &'a DeviceBuffer<i32>,
        output: &'a mut DeviceBuffer<i32>,
        n: usize,
    ) -> Result<Self> {
        check(variant, kind, n, input.len(), output.len(), backend.info().compute_capability)?;
        let n32 = n as u32;
        let excl = kind.flag();
        let inp = input.as_ptr();
        let out = output.as_mut_ptr();
        let mut scratch = Vec::new();
        let mut launches = Vec::new();
        let mut status = None;
        match variant.plan {
            ScanPlan::Fenwick { build, query, block, span } => {
                let mut tree = backend.alloc::<i32>(n)?;
                let t = tree.as_mut_ptr();
                for s in bit_strides(n) {
                    let src = if s == 1 { inp } else { t as *const i32 };
                    let grid = bit_positions(n, s).div_ceil(span as usize);
                    launches.push(Launch::BitBuild(build, config(grid, block), (src, t, n32, s as u32)));
                }
                launches.push(Launch::BitQuery(query, config(n.div_ceil(span as usize), block), (t, out, n32, excl)));
                scratch.push(tree);
            }
            ScanPlan::ReduceThenScan { reduce, block_scan, block, .. } => {
                let levels = blelloch_levels(n);
                let top = levels.len() - 1;
                // sums[k]: the tile totals of level k, the elements of level k + 1 (none for
                // the top level, a single tile).
                let mut sums: Vec<DeviceBuffer<i32>> =
                    levels[..top].iter().map(|l| backend.alloc::<i32>(l.grid)).collect::<Result<_>>()?;
                let sum_ptrs: Vec<*mut i32> = sums.iter_mut().map(|s| s.as_mut_ptr()).collect();
                // Level k reads the input (k = 0) or level k-1's sums, and scans them in place
                // (exclusively: they become the offsets of level k-1's tiles).
                let level_io = |k: usize| {
                    if k == 0 { (inp, out, excl) } else { (sum_ptrs[k - 1] as *const i32, sum_ptrs[k - 1], 1) }
                };
                // Reduce every level but the top, bottom-up.
                for (k, l) in levels[..top].iter().enumerate() {
                    let args = (level_io(k).0, sum_ptrs[k], l.len as u32);
                    launches.push(Launch::BlellochReduce(reduce, config(l.grid, block), args));
                }
                // Then scan every level top-down, each tile seeded with its offset.
                for k in (0..=top).rev() {
                    let (src, dst, x) = level_io(k);
                    let offsets = if k == top { std::ptr::null() } else { sum_ptrs[k] as *const i32 };
                    let args = (src, dst, offsets, levels[k].len as u32, x);
                    launches.push(Launch::BlellochBlock(block_scan, config(levels[k].grid, block), args));
                }
                scratch.append(&mut sums);
            }
            ScanPlan::DecoupledLookback { .. } | ScanPlan::PersistentLookback { .. } => {
                let (kernel, cfg, words) = single_pass_launch(backend, variant, n)?;
                let mut st = backend.alloc::<u64>(words)?;
                launches.push(Launch::Lookback(kernel, cfg, (inp, out, st.as_mut_ptr(), n32, 0, excl)));
                status = Some(st);
            }
        }
        Ok(Self { expected: None, backend, variant, kind, n, output, _scratch: scratch, status, epoch: 0, launches })
    }

    /// Checks every run's output against `expected` ([`Rerun::check`]).
    pub fn expecting(mut self, expected: &'a [i32]) -> Self {
        self.expected = Some(expected);
        self
    }

    /// The variant.
    pub fn variant(&self) -> &'static ScanVariant {
        self.variant
    }

    /// The kind.
    pub fn kind(&self) -> Kind {
        self.kind
    }

    /// The launch geometry.
    pub fn geometry(&self) -> ScanGeometry {
        let first = self.launches.first().map(Launch::config).unwrap_or(config(0, 0));
        ScanGeometry { launches: self.launches.len(), grid: first.grid, block: first.block, tile: self.variant.tile() }
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
        if self.status.is_some() {
            if self.epoch >= MAX_EPOCH {
                // 2^30 - 1 launches on this status array: zero it (a fresh zeroed buffer) and
                // start the epochs again, so that no old word can carry the new epoch.
                let tiles = self.status.as_ref().map_or(0, DeviceBuffer::len);
                let mut fresh = self.backend.alloc::<u64>(tiles)?;
                let p = fresh.as_mut_ptr();
                self.status = Some(fresh);
                self.epoch = 0;
                for l in &mut self.launches {
                    if let Launch::Lookback(_, _, args) = l {
                        args.2 = p;
                    }
                }
            }
            self.epoch += 1;
        }
        let epoch = self.epoch;
        for &l in &self.launches {
            // SAFETY: `new` checked the preconditions of the plan and sized every buffer as the
            // kernels' docs require: input and output hold n ≥ 1 elements, the tree n, each
            // level's sums its grid, the status one word per tile (zeroed at allocation,
            // epochs strictly increasing since); all belong to
            // this backend and outlive the launch (held by `self` or borrowed for 'a); the
            // grids are the ones the kernels' Launch sections prescribe and the blocks are the
            // kernels' compiled block sizes.
            unsafe { l.enqueue(self.backend, epoch) }?;
        }
        Ok(())
    }

    /// Waits for the last launch and returns the `n` scanned elements.
    pub fn result(&self) -> Result<Vec<i32>> {
        self.backend.download_prefix(self.output, self.n)
    }

    /// The output buffer the launches write (for a check on the device, `crate::verify`).
    pub fn output(&self) -> &DeviceBuffer<i32> {
        self.output
    }
}

/// Scans all of `input` into `output` (`output[i] = input[0] + … + input[i]`, wrapping) with
/// the fastest variant, and waits for it. `output` must hold at least `input.len()`
/// elements; `input` is not modified. An empty `input` is a no-op (nothing to write). A
/// one-shot [`Scanner`]`::<i32, Sum>`; [`typed::inclusive_scan`] for the other types and
/// operators.
pub fn inclusive_scan(backend: &Backend, input: &DeviceBuffer<i32>, output: &mut DeviceBuffer<i32>) -> Result<()> {
    Scanner::<i32, Sum>::new(backend).inclusive(input, output)
}

/// Like [`inclusive_scan`], but exclusive: `output[i] = input[0] + … + input[i-1]`,
/// `output[0] = 0`. An empty `input` is a no-op.
pub fn exclusive_scan(backend: &Backend, input: &DeviceBuffer<i32>, output: &mut DeviceBuffer<i32>) -> Result<()> {
    Scanner::<i32, Sum>::new(backend).exclusive(input, output)
}

/// Scans all of `input` into `output` with `variant`, and waits for it (an empty `input` is a
/// no-op).
pub fn scan_with(
    backend: &Backend,
    variant: &'static ScanVariant,
    kind: Kind,
    input: &DeviceBuffer<i32>,
    output: &mut DeviceBuffer<i32>,
) -> Result<()> {
    if input.is_empty() {
        return Ok(());
    }
    let mut scan = Scan::new(backend, variant, kind, input, output, input.len())?;
    scan.launch()?;
    backend.synchronize()
}

/// One scan variant measured and checked.
#[derive(Clone, Debug)]
pub struct ScanMeasurement {
    /// The variant.
    pub variant: &'static ScanVariant,
    /// Inclusive or exclusive.
    pub kind: Kind,
    /// Elements.
    pub n: usize,
    /// Launch geometry.
    pub geometry: ScanGeometry,
    /// The timed runs (all launches of each), every run's output checked.
    pub runs: Runs,
    /// The first element of the last run that differs from the CPU scan: `(index, expected, got)`.
    pub mismatch: Option<(usize, Option<i32>, Option<i32>)>,
    /// The last element of the scan (the device's), for reports.
    pub last: Option<i32>,
}

impl ScanMeasurement {
    /// Does every element of every run agree with the CPU reference?
    pub fn pass(&self) -> bool {
        self.mismatch.is_none() && self.runs.first_wrong.is_none()
    }

    /// Median time, µs.
    pub fn median_us(&self) -> f64 {
        self.runs.median_us()
    }

    /// Bytes moved per second at the median time, counting each element read once and
    /// written once (`n × 8 / t`), as for a device-to-device copy.
    pub fn bytes_per_second(&self) -> f64 {
        self.n as f64 * 8.0 / (self.median_us() * 1e-6)
    }
}

/// Runs `variant` once untimed (warm-up), then `repeat` timed runs (see [`timed_runs`]),
/// comparing every run's output with `expected` (the CPU scan of the input's first `n`
/// elements, of this kind).
pub fn measure(
    backend: &Backend,
    variant: &'static ScanVariant,
    kind: Kind,
    input: &DeviceBuffer<i32>,
    n: usize,
    repeat: u32,
    expected: &[i32],
) -> Result<ScanMeasurement> {
    let mut output = backend.alloc::<i32>(n)?;
    let mut scan = Scan::new(backend, variant, kind, input, &mut output, n)?.expecting(expected);
    let runs = timed_runs(backend, &mut scan, repeat)?;
    let got = scan.result()?;
    let mismatch = cpu::first_mismatch(expected, &got);
    Ok(ScanMeasurement { variant, kind, n, geometry: scan.geometry(), runs, mismatch, last: got.last().copied() })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tuning_shapes_match_the_kernels_list() {
        // The cache-hint ablations keep lookback's own shape; the tuning shapes are the others.
        let own = (kernels::scan::LOOKBACK_THREADS, kernels::scan::LOOKBACK_ITEMS);
        let one_tile_per_block = |v: &&ScanVariant| {
            matches!(v.plan, ScanPlan::DecoupledLookback { .. }) && !v.name.starts_with("lookback_bulk")
        };
        let reshaped = |v: &&ScanVariant| one_tile_per_block(v) && v.tuning && (v.block(), v.tile() / v.block()) != own;
        let shapes: Vec<(u32, u32)> = all()
            .filter(reshaped)
            .map(|v| match v.plan {
                ScanPlan::DecoupledLookback { threads, items, .. } => (threads, items),
                _ => panic!("{} is a tuning variant without a look-back plan", v.name),
            })
            .collect();
        assert_eq!(shapes, kernels::scan::LOOKBACK_TUNING.to_vec());
        for v in all().filter(reshaped) {
            assert_eq!(v.name, format!("lookback_{}x{}", v.block(), v.tile() / v.block()));
        }
    }

    #[test]
    fn levels_and_strides() {
        assert_eq!(blelloch_levels(1), vec![Level { len: 1, grid: 1 }]);
        assert_eq!(
            blelloch_levels(1 << 30),
            vec![Level { len: 1 << 30, grid: 1 << 18 }, Level { len: 1 << 18, grid: 64 }, Level { len: 64, grid: 1 }]
        );
        assert_eq!(bit_strides(1), vec![1]);
        assert_eq!(bit_strides(1 << 30), vec![1, 2048, 1 << 22]);
        assert_eq!(bit_strides((1 << 28) - 1), vec![1, 2048, 1 << 22]);
        assert_eq!(bit_strides(1 << 23), vec![1, 2048, 1 << 22]);
        assert_eq!(bit_strides((1 << 23) - 1), vec![1, 2048]);
    }

    #[test]
    fn preconditions_say_what_is_wrong() {
        let v = fastest((7, 0));
        let e = check(v, Kind::Inclusive, 0, 10, 10, (9, 0)).unwrap_err().to_string();
        assert!(e.contains("n = 0") && e.contains("n ≥ 1"), "{e}");
        let e = check(v, Kind::Inclusive, 10, 10, 9, (9, 0)).unwrap_err().to_string();
        assert!(e.contains("output holds 9") && e.contains("at least n"), "{e}");
        let e = check(v, Kind::Exclusive, 10, 9, 10, (9, 0)).unwrap_err().to_string();
        assert!(e.contains("input holds 9"), "{e}");
        let e = check(v, Kind::Inclusive, 10, 10, 10, (6, 1)).unwrap_err().to_string();
        assert!(e.contains("compute capability 7.0"), "{e}");
        let e = check(v, Kind::Inclusive, 1 << 33, 1 << 33, 1 << 33, (9, 0)).unwrap_err().to_string();
        assert!(e.contains("32-bit"), "{e}");
        assert!(find("nope").unwrap_err().to_string().contains("lookback"));
    }
}
