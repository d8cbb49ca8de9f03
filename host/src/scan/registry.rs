//! The one list of scan variants ([`all()`]): the CLI's `--op scan`, `tests/scan.rs`,
//! `benches/scan.rs`, `scripts/gpu/scan_table.sh`, the report and the exercises iterate over
//! it. A [`ScanVariant`] is a multi-kernel plan ([`ScanPlan`]) with its own scratch, and, like a
//! reduction variant, declares the element types × operators it runs: its own row (an `i32`
//! sum), or every pair (`lookback`: its own row is the classic `lookback`, the 17 others
//! `lookback__{type}_{op}`). [`choose`] is the library's plan: which row a
//! [`Scanner`](super::Scanner) runs.

use kernels::scan::{
    BIT_BLOCK, BIT_SPAN, BLELLOCH_BLOCK, BLELLOCH_TILE, LOOKBACK_THREADS, WARPSPEC_TYPED, lookback_items,
    warpspec_items,
};

use super::kind::Kind;
use crate::backend::Kernel;
use crate::error::{Error, Result};
use crate::kernel_ref;
use crate::types::{Elem, Op, PerElement, PerType, Value};

/// `bit_build(src, tree, n, stride)`.
pub type BitBuildArgs<T = i32> = (*const T, *mut T, u32, u32);
/// `bit_query(tree, output, n, exclusive)`.
pub type BitQueryArgs<T = i32> = (*const T, *mut T, u32, u32);
/// `blelloch_block(input, output, offsets, n, exclusive)`.
pub type BlellochBlockArgs<T = i32> = (*const T, *mut T, *const T, u32, u32);
/// `blelloch_reduce(input, sums, n)`.
pub type BlellochReduceArgs<T = i32> = (*const T, *mut T, u32);
/// `lookback(input, output, status, n, epoch, exclusive)`.
pub type LookbackArgs<T = i32> = (*const T, *mut T, *mut u64, u32, u32, u32);
/// `lookback__{type}_{op}(input, output, status, values, n, epoch, exclusive)`: the look-back
/// with the value slots 64-bit types publish through (`kernels::scan::lookback_generic`).
pub type LookbackValuesArgs<T = i32> = (*const T, *mut T, *mut u64, *mut T, u32, u32, u32);

/// How a scan variant runs.
#[derive(Clone, Copy, Debug)]
pub enum ScanPlan<T: 'static = i32> {
    /// Build a Fenwick tree (`build` at strides 1, 2048, 2048², … while needed), then
    /// `query` every prefix, a tile of `span` per block.
    Fenwick {
        /// `bit_build`.
        build: Kernel<BitBuildArgs<T>>,
        /// `bit_query`.
        query: Kernel<BitQueryArgs<T>>,
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
        reduce: Kernel<BlellochReduceArgs<T>>,
        /// `blelloch_block`.
        block_scan: Kernel<BlellochBlockArgs<T>>,
        /// Threads per block (512).
        block: u32,
        /// Elements per tile (4096).
        tile: u32,
    },
    /// One launch, one block per tile, decoupled look-back between tiles.
    DecoupledLookback {
        /// `lookback` or one of its tuning shapes.
        kernel: Kernel<LookbackArgs<T>>,
        /// Threads per block (the kernel is compiled for exactly this).
        threads: u32,
        /// Elements per thread.
        items: u32,
    },
    /// [`DecoupledLookback`](Self::DecoupledLookback) with the 64-bit types' value slots
    /// (`lookback__{type}_{op}`): one launch, one block per tile.
    DecoupledLookbackValues {
        /// `lookback__{type}_{op}`.
        kernel: Kernel<LookbackValuesArgs<T>>,
        /// Threads per block (the kernel traps on any other).
        threads: u32,
        /// Elements per thread (36 of 32 bits, 18 of 64 bits).
        items: u32,
    },
    /// One launch of as many blocks as fit on the GPU at once, each drawing tiles by ticket
    /// and holding `stages` of them in dynamic shared memory, loaded (and stored) by sm_90's
    /// bulk-copy engine; decoupled look-back between tiles.
    PersistentLookback {
        /// `lookback_persistent`.
        kernel: Kernel<LookbackArgs<T>>,
        /// Threads per block (the kernel is compiled for exactly this).
        threads: u32,
        /// Elements per thread.
        items: u32,
        /// Tiles in shared memory per block.
        stages: u32,
    },
    /// One launch of as many warp-specialized blocks as fit on the GPU at once (sm_90), each
    /// drawing tiles by ticket into a ring of `stages` tiles: a producer warp loads them with the
    /// bulk-copy engine, `lookaheads` look-ahead warps run the decoupled look-back (one, but in
    /// the `…_lookahead{n}` experiments), `warps` compute warps reduce, scan and store
    /// (`kernels::scan::lookback_warpspec`).
    WarpSpecialized {
        /// `lookback_warpspec` or one of its tuning shapes; `lookback_warpspec_8x12x6__{type}_{op}`
        /// for the other pairs (`kernels::scan::lookback_warpspec_generic`).
        kernel: Kernel<LookbackArgs<T>>,
        /// Compute warps per block (the block adds the producer and the look-ahead warps).
        warps: u32,
        /// Elements of `T` per compute thread (for the typed rows: 12 of 32 bits, 6 of 64 bits).
        items: u32,
        /// Tiles in the block's shared-memory ring.
        stages: u32,
        /// Look-ahead warps per block, taking the tiles in turn.
        lookaheads: u32,
        /// Words from one tile's status word to the next's in the packed layout of 32-bit types:
        /// 1 but in `lookback_warpspec_8x12x6` and its typed rows
        /// (`kernels::scan::WARPSPEC_SPACED_WORDS`); a 64-bit type's halves layout takes two
        /// words a tile whatever the spacing (`kernels::scan::warpspec_status_words`).
        spacing: u32,
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
    /// How its own row (an `i32` sum) runs.
    pub plan: ScanPlan,
    /// The element types × operators it runs besides its own row.
    pub pairs: ScanPairs,
}

/// The element types × operators a scan variant runs besides its own row (`i32` × sum).
#[derive(Clone, Copy, Debug)]
pub enum ScanPairs {
    /// Its own row only.
    Own,
    /// Every element type × sum, min and max: the table holds the rows besides `i32` × sum
    /// (`every_other_pair!`).
    Every(&'static PerType<ScanByOp>),
}

/// A generic scan's rows of one element type, by operator (sum, min, max); `None` where the
/// variant's own row is that pair (`i32` × sum).
#[derive(Debug)]
pub struct ScanByOp;

impl PerElement for ScanByOp {
    type Of<T: Value> = [Option<ScanPlan<T>>; 3];
}

/// The plans of one type as [`ScanInstance`]s take them.
#[derive(Debug)]
struct PlanOf;

impl PerElement for PlanOf {
    type Of<T: Value> = ScanPlan<T>;
}

/// One row of one scan variant: the variant, the operator, and its plan for element type `T`.
#[derive(Clone, Copy, Debug)]
pub struct ScanInstance<T: 'static = i32> {
    /// The variant.
    pub variant: &'static ScanVariant,
    /// The operator.
    pub op: Op,
    /// How it runs for `T`.
    pub plan: ScanPlan<T>,
}

impl<T: Value> ScanInstance<T> {
    /// `(T, op)`.
    pub fn pair(&self) -> (Elem, Op) {
        (T::ELEM, self.op)
    }

    /// `variant/type/op`, as bench ids and failure messages name a row.
    pub fn id(&self) -> String {
        format!("{}/{}/{}", self.variant.name, T::ELEM.name(), self.op.name())
    }
}

impl<T> ScanPlan<T> {
    /// Every PTX symbol it launches.
    pub fn symbols(&self) -> Vec<&'static str> {
        match self {
            ScanPlan::Fenwick { build, query, .. } => vec![build.name, query.name],
            ScanPlan::ReduceThenScan { reduce, block_scan, .. } => vec![reduce.name, block_scan.name],
            ScanPlan::DecoupledLookback { kernel, .. }
            | ScanPlan::PersistentLookback { kernel, .. }
            | ScanPlan::WarpSpecialized { kernel, .. } => vec![kernel.name],
            ScanPlan::DecoupledLookbackValues { kernel, .. } => vec![kernel.name],
        }
    }

    /// Threads per block of its (main) kernel.
    pub fn block(&self) -> u32 {
        match *self {
            ScanPlan::Fenwick { block, .. } | ScanPlan::ReduceThenScan { block, .. } => block,
            ScanPlan::DecoupledLookback { threads, .. }
            | ScanPlan::DecoupledLookbackValues { threads, .. }
            | ScanPlan::PersistentLookback { threads, .. } => threads,
            ScanPlan::WarpSpecialized { warps, lookaheads, .. } => {
                kernels::scan::warpspec_threads_with(warps, lookaheads)
            }
        }
    }

    /// Elements per block of its (main) kernel.
    pub fn tile(&self) -> u32 {
        match *self {
            ScanPlan::Fenwick { span, .. } => span,
            ScanPlan::ReduceThenScan { tile, .. } => tile,
            ScanPlan::DecoupledLookback { threads, items, .. }
            | ScanPlan::DecoupledLookbackValues { threads, items, .. }
            | ScanPlan::PersistentLookback { threads, items, .. } => threads * items,
            ScanPlan::WarpSpecialized { warps, items, .. } => kernels::scan::warpspec_tile(warps, items),
        }
    }

    /// Bytes of device scratch it needs for `n` elements of `size` bytes (beyond input and
    /// output).
    pub fn scratch_bytes(&self, n: usize, size: usize) -> u64 {
        let tiles = (n as u64).div_ceil(self.tile() as u64);
        match self {
            ScanPlan::Fenwick { .. } => (n * size) as u64,
            ScanPlan::ReduceThenScan { .. } => {
                let levels = super::levels::blelloch_levels(n);
                levels[..levels.len() - 1].iter().map(|l| (l.grid * size) as u64).sum()
            }
            ScanPlan::DecoupledLookback { .. } => tiles * 8,
            // The status words, then two value slots per tile.
            ScanPlan::DecoupledLookbackValues { .. } => tiles * 8 * 3,
            // The status words, then the ticket counter.
            ScanPlan::PersistentLookback { .. } => (tiles + 1) * 8,
            // The status words (two per tile for a 64-bit type: the halves layout; `spacing`
            // words a tile for a 32-bit one), then the ticket counter.
            ScanPlan::WarpSpecialized { spacing, .. } => {
                (tiles * kernels::scan::warpspec_status_words(size, *spacing as usize) as u64 + 1) * 8
            }
        }
    }
}

impl ScanVariant {
    /// Its own row (`i32` × sum).
    pub fn own(&'static self) -> ScanInstance<i32> {
        ScanInstance { variant: self, op: Op::Sum, plan: self.plan }
    }

    /// Its row for element type `T` and operator `op`, or an error that says which scan
    /// variants have every pair.
    pub fn instance<T: Value>(&'static self, op: Op) -> Result<ScanInstance<T>> {
        if (T::ELEM, op) == (Elem::I32, Op::Sum)
            && let Some(plan) = T::from_i32::<PlanOf>(self.plan)
        {
            return Ok(ScanInstance { variant: self, op, plan });
        }
        if let ScanPairs::Every(table) = self.pairs
            && let Some(at) = Op::COMBINES.iter().position(|&o| o == op)
            && let Some(plan) = T::of(table)[at]
        {
            return Ok(ScanInstance { variant: self, op, plan });
        }
        Err(Error::Invalid(format!(
            "scan variant `{}` has no {} {} kernel: only the generic scan variants ({}) take --type and \
             --combine; the others are i32 sums",
            self.name,
            T::ELEM.name(),
            op.name(),
            generic_names().join(", ")
        )))
    }

    /// The pairs it runs: `i32` × sum first, then (for a generic scan) the others, operator by
    /// operator, type by type.
    pub fn pairs(&self) -> Vec<(Elem, Op)> {
        let mut out = vec![(Elem::I32, Op::Sum)];
        if let ScanPairs::Every(_) = self.pairs {
            let every = Op::COMBINES.iter().flat_map(|&op| Elem::ALL.into_iter().map(move |e| (e, op)));
            out.extend(every.filter(|&p| p != (Elem::I32, Op::Sum)));
        }
        out
    }

    /// Does it run `elem` × `op`?
    pub fn supports(&self, elem: Elem, op: Op) -> bool {
        self.pairs().contains(&(elem, op))
    }

    /// Is it generic (every element type × operator)?
    pub fn is_generic(&self) -> bool {
        matches!(self.pairs, ScanPairs::Every(_))
    }

    /// Every PTX symbol its own row launches.
    pub fn symbols(&self) -> Vec<&'static str> {
        self.plan.symbols()
    }

    /// Threads per block of its own row's (main) kernel.
    pub fn block(&self) -> u32 {
        self.plan.block()
    }

    /// Elements per block of its own row's (main) kernel.
    pub fn tile(&self) -> u32 {
        self.plan.tile()
    }

    /// Bytes of device scratch its own row needs for `n` elements (beyond input and output).
    pub fn scratch_bytes(&self, n: usize) -> u64 {
        self.plan.scratch_bytes(n, 4)
    }
}

/// The rows of a generic scan besides `i32` × sum, one `$row!(type op)` per pair: a
/// [`PerType`] of [`ScanByOp`].
macro_rules! every_other_pair {
    ($row:ident) => {
        PerType {
            i32: [None, $row!(i32 min), $row!(i32 max)],
            u32: [$row!(u32 sum), $row!(u32 min), $row!(u32 max)],
            i64: [$row!(i64 sum), $row!(i64 min), $row!(i64 max)],
            u64: [$row!(u64 sum), $row!(u64 min), $row!(u64 max)],
            f32: [$row!(f32 sum), $row!(f32 min), $row!(f32 max)],
            f64: [$row!(f64 sum), $row!(f64 min), $row!(f64 max)],
        }
    };
}

/// A row of `lookback` besides `i32` × sum: `lookback__{type}_{op}`, an instantiation of its
/// generic body (`kernels::scan::lookback_generic`), the kernels crate's module
/// `kernels::scan::lookback::{type}::{op}`.
macro_rules! lookback_row {
    ($t:ident $o:ident) => {
        Some(ScanPlan::DecoupledLookbackValues {
            kernel: kernel_ref!(instance kernels::scan::lookback::$t::$o(a, b, c, d, e, f, g)),
            threads: LOOKBACK_THREADS,
            items: lookback_items::<$t>(),
        })
    };
}

/// A row of `lookback_warpspec_8x12x6` besides `i32` × sum:
/// `lookback_warpspec_8x12x6__{type}_{op}`, an instantiation of its generic body
/// (`kernels::scan::lookback_warpspec_generic`, at the shape `WARPSPEC_TYPED`).
macro_rules! warpspec_row {
    ($t:ident $o:ident) => {
        Some(ScanPlan::WarpSpecialized {
            kernel: kernel_ref!(instance kernels::scan::lookback_warpspec_8x12x6::$t::$o(a, b, c, d, e, f)),
            warps: WARPSPEC_TYPED.0,
            items: warpspec_items::<$t>(WARPSPEC_TYPED.1),
            stages: WARPSPEC_TYPED.2,
            lookaheads: 1,
            spacing: kernels::scan::WARPSPEC_SPACED_WORDS as u32,
        })
    };
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
            pairs: ScanPairs::Own,
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
            pairs: ScanPairs::Own,
            plan: ScanPlan::DecoupledLookback {
                kernel: kernel_ref!(kernels::scan::$name(a, b, c, d, e, f)),
                threads: kernels::scan::LOOKBACK_THREADS,
                items: kernels::scan::LOOKBACK_ITEMS,
            },
        }
    };
}

/// A shape of the warp-specialized scan (compute warps, items per thread, stages): `lookback_warpspec`
/// itself, or a tuning shape `lookback_warpspec_{warps}x{items}x{stages}`; with `concept:`, an
/// experiment on a shape (`lookback_warpspec_store_bulk`, `…_ahead{n}`), tuning too, with
/// `lookaheads:` one with that many look-ahead warps (`…_lookahead{n}`), and with `tuning`,
/// `pairs`, `concept:` and `spacing:` one whose 32-bit status words lie that many words apart
/// (`lookback_warpspec_8x12x6`, with its typed rows).
macro_rules! warpspec_shape {
    ($name:ident, $warps:literal, $items:literal, $stages:literal, $tuning:literal) => {
        warpspec_shape!($name, $warps, $items, $stages, $tuning, ScanPairs::Own)
    };
    ($name:ident, $warps:literal, $items:literal, $stages:literal, $tuning:literal, $pairs:expr) => {
        warpspec_shape!(@row $name, $warps, $items, $stages, $tuning, $pairs, if $tuning {
            "lookback_warpspec with another shape (compute warps x items per thread x ring stages), for tuning"
        } else {
            "warp-specialized persistent blocks: a producer warp fills a ring of stages with bulk copies, a look-ahead warp runs the look-back, compute warps reduce, scan and store, no block barrier on the look-back path"
        })
    };
    ($name:ident, $warps:literal, $items:literal, $stages:literal, concept: $concept:expr) => {
        warpspec_shape!(@row $name, $warps, $items, $stages, true, ScanPairs::Own, $concept)
    };
    ($name:ident, $warps:literal, $items:literal, $stages:literal, concept: $concept:expr, lookaheads: $looks:literal) => {
        warpspec_shape!(@row $name, $warps, $items, $stages, true, ScanPairs::Own, $concept, $looks)
    };
    ($name:ident, $warps:literal, $items:literal, $stages:literal, lookaheads: $looks:literal) => {
        warpspec_shape!(@row $name, $warps, $items, $stages, true, ScanPairs::Own, LOOKAHEAD_CONCEPT, $looks)
    };
    ($name:ident, $warps:literal, $items:literal, $stages:literal, $tuning:literal, $pairs:expr, concept: $concept:expr, spacing: $spacing:expr) => {
        warpspec_shape!(@row $name, $warps, $items, $stages, $tuning, $pairs, $concept, 1, $spacing)
    };
    (@row $name:ident, $warps:literal, $items:literal, $stages:literal, $tuning:literal, $pairs:expr, $concept:expr) => {
        warpspec_shape!(@row $name, $warps, $items, $stages, $tuning, $pairs, $concept, 1)
    };
    (@row $name:ident, $warps:literal, $items:literal, $stages:literal, $tuning:literal, $pairs:expr, $concept:expr, $looks:literal) => {
        warpspec_shape!(@row $name, $warps, $items, $stages, $tuning, $pairs, $concept, $looks, 1)
    };
    (@row $name:ident, $warps:literal, $items:literal, $stages:literal, $tuning:literal, $pairs:expr, $concept:expr, $looks:literal, $spacing:expr) => {
        ScanVariant {
            name: stringify!($name),
            concept: $concept,
            kinds: BOTH,
            min_cc: (9, 0),
            tuning: $tuning,
            pairs: $pairs,
            plan: ScanPlan::WarpSpecialized {
                kernel: kernel_ref!(kernels::scan::$name(a, b, c, d, e, f)),
                warps: $warps,
                items: $items,
                stages: $stages,
                lookaheads: $looks,
                spacing: $spacing,
            },
        }
    };
}

/// The concept of the `…_lookahead{n}` experiments.
const LOOKAHEAD_CONCEPT: &str = "lookback_warpspec at a shape with more look-ahead warps (the name's lookahead), taking the tiles' look-backs in turn, an experiment";

/// The concept of the `…_early_empty` experiments.
const EARLY_CONCEPT: &str = "lookback_warpspec at a shape whose compute warps give each stage back as soon as they have read it, then scan and store from registers (with the name's lookahead look-ahead warps, if any), an experiment";

/// The concept of the `…_spin` and `…_sleep{n}` experiments.
const SLEEP_CONCEPT: &str = "lookback_warpspec at a shape whose look-ahead warp sleeps less between polls of an unpublished predecessor (spin: not at all; sleep64: 64 ns; 256 otherwise), an experiment";

/// The concept of the `…_windows{n}` experiments.
const WINDOWS_CONCEPT: &str = "lookback_warpspec at a shape whose look-ahead warp loads n windows of 32 predecessors per round trip (the name's windows; with early_empty, the stage given back early too), an experiment";

/// The concept of the tuning shapes with larger tiles and a 4-stage ring (10x12x4, 12x12x4).
const LARGER_TILES_CONCEPT: &str = "lookback_warpspec with a larger tile and a shorter ring, written to fit 3 blocks an SM (compute warps x items per thread x ring stages), its 32-bit status words 16 bytes apart, for tuning: fewer look-backs per byte";

/// The concept of the `…_ahead{n}` experiments.
const AHEAD_CONCEPT: &str = "lookback_warpspec at a shape whose compute warps reduce fewer tiles ahead (the name's ahead), so more stages load at once, an experiment";

/// The scan variants: the curriculum first (`bit` → `blelloch_unpadded` → `blelloch` → `lookback`), then the
/// tuning shapes of `lookback` (same order as `kernels::scan::LOOKBACK_TUNING`).
static VARIANTS: &[ScanVariant] = &[
    ScanVariant {
        name: "bit",
        concept: "Fenwick tree: build it level by level across blocks, answer every prefix by a query walk (the part above a tile once per tile; O(n log T) work)",
        kinds: BOTH,
        min_cc: (7, 0),
        tuning: false,
        pairs: ScanPairs::Own,
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
        pairs: ScanPairs::Own,
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
        pairs: ScanPairs::Own,
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
        pairs: ScanPairs::Every(&every_other_pair!(lookback_row)),
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
        pairs: ScanPairs::Own,
        plan: ScanPlan::DecoupledLookback {
            kernel: kernel_ref!(kernels::scan::lookback_bulk(a, b, c, d, e, f)),
            threads: kernels::scan::BULK_THREADS,
            items: kernels::scan::BULK_ITEMS,
        },
    },
    warpspec_shape!(lookback_warpspec, 8, 20, 4, false),
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
        pairs: ScanPairs::Own,
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
        pairs: ScanPairs::Own,
        plan: ScanPlan::PersistentLookback {
            kernel: kernel_ref!(kernels::scan::lookback_persistent(a, b, c, d, e, f)),
            threads: kernels::scan::PERSISTENT_THREADS,
            items: kernels::scan::PERSISTENT_ITEMS,
            stages: kernels::scan::PERSISTENT_STAGES,
        },
    },
    warpspec_shape!(lookback_warpspec_8x12x4, 8, 12, 4, true),
    // Its other rows are the typed warp-specialized scans (`WARPSPEC_TYPED`).
    warpspec_shape!(
        lookback_warpspec_8x12x6,
        8,
        12,
        6,
        true,
        ScanPairs::Every(&every_other_pair!(warpspec_row)),
        concept: "lookback_warpspec at the shape the plan runs (compute warps x items per thread x ring stages), its 32-bit status words 16 bytes apart, for tuning",
        spacing: kernels::scan::WARPSPEC_SPACED_WORDS as u32
    ),
    warpspec_shape!(lookback_warpspec_8x28x3, 8, 28, 3, true),
    warpspec_shape!(lookback_warpspec_4x20x4, 4, 20, 4, true),
    warpspec_shape!(lookback_warpspec_4x36x4, 4, 36, 4, true),
    warpspec_shape!(lookback_warpspec_8x36x3, 8, 36, 3, true),
    warpspec_shape!(lookback_warpspec_16x12x4, 16, 12, 4, true),
    warpspec_shape!(lookback_warpspec_8x20x6, 8, 20, 6, true),
    warpspec_shape!(lookback_warpspec_8x28x5, 8, 28, 5, true),
    warpspec_shape!(lookback_warpspec_8x12x8, 8, 12, 8, true),
    warpspec_shape!(lookback_warpspec_8x12x10, 8, 12, 10, true),
    warpspec_shape!(lookback_warpspec_16x12x6, 16, 12, 6, true),
    warpspec_shape!(lookback_warpspec_4x12x6, 4, 12, 6, true),
    warpspec_shape!(lookback_warpspec_4x12x8, 4, 12, 8, true),
    warpspec_shape!(lookback_warpspec_8x4x6, 8, 4, 6, true),
    warpspec_shape!(lookback_warpspec_10x12x4, 10, 12, 4, true, ScanPairs::Own, concept: LARGER_TILES_CONCEPT, spacing: kernels::scan::WARPSPEC_SPACED_WORDS as u32),
    warpspec_shape!(lookback_warpspec_12x12x4, 12, 12, 4, true, ScanPairs::Own, concept: LARGER_TILES_CONCEPT, spacing: kernels::scan::WARPSPEC_SPACED_WORDS as u32),
    warpspec_shape!(lookback_warpspec_8x12x6_ahead2, 8, 12, 6, concept: AHEAD_CONCEPT),
    warpspec_shape!(lookback_warpspec_8x12x6_ahead3, 8, 12, 6, concept: AHEAD_CONCEPT),
    warpspec_shape!(lookback_warpspec_8x12x8_ahead3, 8, 12, 8, concept: AHEAD_CONCEPT),
    warpspec_shape!(lookback_warpspec_8x12x8_ahead4, 8, 12, 8, concept: AHEAD_CONCEPT),
    warpspec_shape!(
        lookback_warpspec_store_bulk,
        8,
        12,
        6,
        concept: "lookback_warpspec_8x12x6 storing each warp's scanned region with one bulk copy (cp.async.bulk shared -> global), an experiment"
    ),
    warpspec_shape!(lookback_warpspec_8x12x6_lookahead2, 8, 12, 6, lookaheads: 2),
    warpspec_shape!(lookback_warpspec_8x12x6_lookahead3, 8, 12, 6, lookaheads: 3),
    warpspec_shape!(lookback_warpspec_8x12x6_lookahead2_ahead2, 8, 12, 6, lookaheads: 2),
    warpspec_shape!(lookback_warpspec_8x12x6_lookahead2_ahead3, 8, 12, 6, lookaheads: 2),
    warpspec_shape!(lookback_warpspec_8x12x8_lookahead2_ahead4, 8, 12, 8, lookaheads: 2),
    warpspec_shape!(lookback_warpspec_8x12x4_lookahead2, 8, 12, 4, lookaheads: 2),
    warpspec_shape!(lookback_warpspec_8x12x6_early_empty, 8, 12, 6, concept: EARLY_CONCEPT),
    warpspec_shape!(lookback_warpspec_8x12x4_early_empty, 8, 12, 4, concept: EARLY_CONCEPT),
    warpspec_shape!(lookback_warpspec_8x12x6_lookahead2_early_empty, 8, 12, 6, concept: EARLY_CONCEPT, lookaheads: 2),
    warpspec_shape!(lookback_warpspec_8x12x6_spin, 8, 12, 6, concept: SLEEP_CONCEPT),
    warpspec_shape!(lookback_warpspec_8x12x6_sleep64, 8, 12, 6, concept: SLEEP_CONCEPT),
    warpspec_shape!(lookback_warpspec_8x12x6_windows2, 8, 12, 6, concept: WINDOWS_CONCEPT),
    warpspec_shape!(lookback_warpspec_8x12x6_windows4, 8, 12, 6, concept: WINDOWS_CONCEPT),
    warpspec_shape!(lookback_warpspec_8x12x6_early_empty_windows2, 8, 12, 6, concept: WINDOWS_CONCEPT),
    warpspec_shape!(
        lookback_warpspec_8x12x6_packed,
        8,
        12,
        6,
        concept: "lookback_warpspec_8x12x6 with its tiles' status words packed 8 bytes apart (as every other shape), the layout it had before, an experiment"
    ),
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

/// Every row of every scan variant as `(variant, element type, operator)`.
pub fn instances() -> impl Iterator<Item = (&'static ScanVariant, Elem, Op)> + Clone {
    all().flat_map(|v| v.pairs().into_iter().map(move |(e, o)| (v, e, o)))
}

/// Names of the generic scan variants (every element type × operator).
pub fn generic_names() -> Vec<&'static str> {
    all().filter(|v| v.is_generic()).map(|v| v.name).collect()
}

/// Whether `lookback_bulk` is the `i32` scan of the library on sm_90 and newer: the one place
/// the scan's plan is chosen per architecture (`lookback` everywhere else, and every other pair).
///
/// Measured (H100, `docs/measurements/2026-11-25-h100/bulk/`): see `docs/scan-bulk.md`.
pub const BULK_ON_SM90: bool = false;

/// The variant [`Scanner`](super::Scanner) (and so `inclusive_scan` and `exclusive_scan`)
/// runs for `i32` sums on a device of compute capability `cc`: a single-pass look-back scan,
/// with sm_90's bulk copies where [`BULK_ON_SM90`] says they are faster.
pub fn fastest(cc: (u32, u32)) -> &'static ScanVariant {
    let name = if BULK_ON_SM90 && cc >= (9, 0) { "lookback_bulk" } else { "lookback" };
    find(name).expect("both look-back scans are registered")
}

/// The plan for a device of compute capability `cc` when neither the device nor the size is
/// known: [`fastest`] for `i32` sums, `lookback`'s row of the pair for every other.
/// [`choose_on`](super::choose_on) is what a [`Scanner`](super::Scanner) runs.
pub fn choose<T: Value>(op: Op, cc: (u32, u32)) -> Result<ScanInstance<T>> {
    let v = if (T::ELEM, op) == (Elem::I32, Op::Sum) { fastest(cc) } else { find("lookback")? };
    v.instance::<T>(op)
}
