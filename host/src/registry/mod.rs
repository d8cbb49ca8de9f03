//! The one list of variants. The CLI, the tests, the benches and the docs all iterate over
//! [`all()`]; nothing else names a kernel. The entries live in one file per family
//! (`global.rs`, `shared.rs`, `modern.rs`, `sumsq.rs`).
//!
//! A [`Variant`] says what a kernel teaches and how to run it: its [`Plan`] (which kernel,
//! how the grid follows from `n` and the block size, how much shared memory, whether it
//! works in place, who adds the partial sums). [`crate::reduce`] turns a plan into launches;
//! adding a variant is adding an entry here and a file in `kernels/src/`.
//!
//! Element type and operator are fields ([`Elem`], [`Op`]) so that `u32`/`i64`/`f32`
//! variants and `min`/`max` operators slot in as more entries with the same plans.

use crate::backend::Kernel;
use crate::error::{Error, Result};

/// Arguments of a kernel that reads its input: `(g_idata, g_odata, n)`; block `b` writes its
/// partial result to `g_odata[b]`.
pub type ReadArgs = (*const i32, *mut i32, u32);
/// Arguments of a kernel that works in place on a scratch copy: `(g_idata, g_odata, n)`.
pub type InPlaceArgs = (*mut i32, *mut i32, u32);

/// Which group of the curriculum a variant belongs to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Family {
    /// *Professional CUDA C Programming* ch. 3: reduction in global memory, from divergent
    /// to fully unrolled.
    GlobalMemory,
    /// Ch. 5: the same trees in shared memory.
    SharedMemory,
    /// Warp shuffles, `redux.sync`, vector loads, grid-stride loops, single pass.
    Modern,
    /// The sum-of-squares tutorial, timed with in-kernel clocks.
    SumOfSquares,
}

impl Family {
    /// Every family, in teaching order.
    pub const ALL: [Family; 4] = [Family::GlobalMemory, Family::SharedMemory, Family::Modern, Family::SumOfSquares];

    /// Short name used by the CLI's `--family` and in reports.
    pub fn name(self) -> &'static str {
        match self {
            Family::GlobalMemory => "global",
            Family::SharedMemory => "shared",
            Family::Modern => "modern",
            Family::SumOfSquares => "sumsq",
        }
    }
}

/// Element type.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Elem {
    /// 32-bit signed integer, wrapping arithmetic.
    I32,
}

impl Elem {
    /// Bytes per element.
    pub fn size(self) -> usize {
        match self {
            Elem::I32 => 4,
        }
    }
}

/// What the reduction computes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Op {
    /// Σ x (wrapping).
    Sum,
    /// Σ x² (wrapping).
    SumOfSquares,
}

/// Allowed block sizes: powers of two in `min..=max`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BlockRule {
    /// Smallest block.
    pub min: u32,
    /// Largest block.
    pub max: u32,
}

impl BlockRule {
    /// Every power of two from 32 to 1024.
    pub const ANY: BlockRule = BlockRule { min: 32, max: 1024 };

    /// Does `block` satisfy the rule?
    pub fn allows(self, block: u32) -> bool {
        block.is_power_of_two() && (self.min..=self.max).contains(&block)
    }

    /// The allowed blocks, smallest first.
    pub fn sizes(self) -> impl Iterator<Item = u32> {
        (5..=10).map(|s| 1u32 << s).filter(move |&b| self.allows(b))
    }
}

impl std::fmt::Display for BlockRule {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "a power of two in {}..={}", self.min, self.max)
    }
}

/// Shared memory a kernel uses per block.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SharedMem {
    /// None.
    None,
    /// A static array of this many bytes per thread of the block (compiled in: the kernel
    /// declares the largest block's array).
    Static {
        /// Bytes the kernel declares.
        bytes: u32,
    },
    /// Dynamic shared memory sized at launch: this many bytes per thread of the block.
    DynamicPerThread(u32),
}

/// One kernel, or one instantiation per block size (const-generic kernels).
#[derive(Clone, Copy, Debug)]
pub enum KernelSel<A: 'static> {
    /// The same kernel for every block size.
    One(Kernel<A>),
    /// `(block, kernel)` pairs: the kernel compiled for that block size.
    PerBlock(&'static [(u32, Kernel<A>)]),
}

impl<A> KernelSel<A> {
    /// The kernel for `block`, if there is one.
    pub fn for_block(&self, block: u32) -> Option<Kernel<A>> {
        match self {
            KernelSel::One(k) => Some(*k),
            KernelSel::PerBlock(list) => list.iter().find(|(b, _)| *b == block).map(|(_, k)| *k),
        }
    }

    /// Every PTX symbol involved.
    pub fn symbols(&self) -> Vec<&'static str> {
        match self {
            KernelSel::One(k) => vec![k.name],
            KernelSel::PerBlock(list) => list.iter().map(|(_, k)| k.name).collect(),
        }
    }
}

/// Arguments of a single-pass kernel: `(g_idata, g_partials, g_ticket, g_out, n)`. Blocks
/// write partials to `g_partials[blockIdx.x]`; the last block to finish (it draws the last
/// ticket from `*g_ticket`, which it then resets to 0) adds them and writes `*g_out`.
pub type SinglePassArgs = (*const i32, *mut i32, *mut u32, *mut i32, u32);
/// Arguments of an accumulating kernel: `(g_idata, g_acc, n, epoch)`. Every block adds its
/// partial into `g_acc[epoch % 2]` (which must be 0 at the start) and block 0 clears the other
/// word for the next launch; the host passes consecutive epochs.
pub type AccumulateArgs = (*const i32, *mut i32, u32, u32);
/// Arguments of a sum-of-squares kernel: `(g_idata, g_result, g_clocks, n)`. It writes one
/// result per thread or per block (see [`Outputs`]) and, per block, `clock64()` at its start
/// and end to `g_clocks[2b]` and `g_clocks[2b + 1]`.
pub type SumSqArgs = (*const i32, *mut i32, *mut u64, u32);

/// Grid of a sum-of-squares step (the tutorial fixes its grid rather than deriving it from n).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SumSqGrid {
    /// One block of one thread: the block size asked for is ignored.
    OneThread,
    /// One block of the requested size.
    OneBlock,
    /// `k` blocks per multiprocessor of the requested size.
    PerMultiprocessor(u32),
}

/// What a sum-of-squares kernel writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outputs {
    /// One partial per thread of the grid (the host adds them).
    PerThread,
    /// One partial per block (the host adds them).
    PerBlock,
}

/// How a variant runs.
#[derive(Clone, Copy, Debug)]
pub enum Plan {
    /// One thread per `items_per_thread` elements, grid `ceil(n / (block × items))`; each
    /// block writes one partial; the host adds the partials. `in_place` kernels get a scratch
    /// copy of the input (made outside the timed region).
    Partials {
        /// The kernel.
        kernel: PartialsKernel,
        /// Elements each thread folds before the tree (the unrolling factor).
        items_per_thread: u32,
        /// Shared memory.
        shared: SharedMem,
        /// Allowed blocks.
        blocks: BlockRule,
    },
    /// A grid-stride loop over a grid no larger than the GPU holds at once:
    /// `grid = min(ceil(n / (block × items_per_thread)), SMs × resident blocks per SM)`, the
    /// residency from the occupancy calculator unless `blocks_per_sm` fixes it. Each block
    /// writes one partial; the host adds the partials.
    GridStride {
        /// The kernel.
        kernel: Kernel<ReadArgs>,
        /// Elements a thread consumes per loop trip (e.g. 4 for one 128-bit load).
        items_per_thread: u32,
        /// Resident blocks per SM to size the grid with (`None`: ask the occupancy calculator).
        blocks_per_sm: Option<u32>,
        /// Shared memory.
        shared: SharedMem,
        /// Allowed blocks.
        blocks: BlockRule,
    },
    /// Like [`Plan::GridStride`], but one launch leaves the final sum on the device.
    SinglePass {
        /// The kernel.
        kernel: Kernel<SinglePassArgs>,
        /// Elements a thread consumes per loop trip.
        items_per_thread: u32,
        /// Resident blocks per SM (`None`: the occupancy calculator).
        blocks_per_sm: Option<u32>,
        /// Shared memory.
        shared: SharedMem,
        /// Allowed blocks.
        blocks: BlockRule,
    },
    /// Like [`Plan::GridStride`], but every block adds its partial into the result with an
    /// atomic: one launch leaves the final sum on the device, with no last-block pass.
    Accumulate {
        /// The kernel.
        kernel: Kernel<AccumulateArgs>,
        /// Elements a thread consumes per loop trip.
        items_per_thread: u32,
        /// Resident blocks per SM (`None`: the occupancy calculator).
        blocks_per_sm: Option<u32>,
        /// Shared memory.
        shared: SharedMem,
        /// Allowed blocks.
        blocks: BlockRule,
    },
    /// A step of the sum-of-squares tutorial: fixed grid, clocks per block.
    SumSquares {
        /// The kernel.
        kernel: Kernel<SumSqArgs>,
        /// Its grid.
        grid: SumSqGrid,
        /// What it writes.
        outputs: Outputs,
        /// Shared memory.
        shared: SharedMem,
        /// Allowed blocks (ignored for [`SumSqGrid::OneThread`]).
        blocks: BlockRule,
    },
}

/// The kernel of a [`Plan::Partials`]: reads its input, or works in place on a copy.
#[derive(Clone, Copy, Debug)]
pub enum PartialsKernel {
    /// Reads `g_idata`, never writes it.
    Reads(KernelSel<ReadArgs>),
    /// Overwrites `g_idata`: the host hands it a scratch copy.
    InPlace(KernelSel<InPlaceArgs>),
}

/// A reduction variant.
#[derive(Clone, Copy, Debug)]
pub struct Variant {
    /// The name: file, kernel, PTX symbol, CLI argument and bench id.
    pub name: &'static str,
    /// Its group.
    pub family: Family,
    /// The CUDA idea it teaches, in one line.
    pub concept: &'static str,
    /// What it computes.
    pub op: Op,
    /// Element type.
    pub elem: Elem,
    /// Oldest GPU it runs on (compute capability).
    pub min_cc: (u32, u32),
    /// How to run it.
    pub plan: Plan,
}

impl Variant {
    /// The block sizes it accepts.
    pub fn blocks(&self) -> BlockRule {
        match self.plan {
            Plan::Partials { blocks, .. }
            | Plan::GridStride { blocks, .. }
            | Plan::SinglePass { blocks, .. }
            | Plan::Accumulate { blocks, .. }
            | Plan::SumSquares { blocks, .. } => blocks,
        }
    }

    /// Its shared memory rule.
    pub fn shared(&self) -> SharedMem {
        match self.plan {
            Plan::Partials { shared, .. }
            | Plan::GridStride { shared, .. }
            | Plan::SinglePass { shared, .. }
            | Plan::Accumulate { shared, .. }
            | Plan::SumSquares { shared, .. } => shared,
        }
    }

    /// Does it overwrite its input (and so run on a scratch copy)?
    pub fn in_place(&self) -> bool {
        matches!(self.plan, Plan::Partials { kernel: PartialsKernel::InPlace(_), .. })
    }

    /// Every PTX symbol it launches.
    pub fn symbols(&self) -> Vec<&'static str> {
        match self.plan {
            Plan::Partials { kernel: PartialsKernel::Reads(k), .. } => k.symbols(),
            Plan::Partials { kernel: PartialsKernel::InPlace(k), .. } => k.symbols(),
            Plan::GridStride { kernel, .. } => vec![kernel.name],
            Plan::SinglePass { kernel, .. } => vec![kernel.name],
            Plan::Accumulate { kernel, .. } => vec![kernel.name],
            Plan::SumSquares { kernel, .. } => vec![kernel.name],
        }
    }

    /// Dynamic shared memory bytes per block at `block` threads (set at launch).
    pub fn dynamic_shared_bytes(&self, block: u32) -> u32 {
        match self.shared() {
            SharedMem::DynamicPerThread(b) => b * block,
            _ => 0,
        }
    }

    /// Shared memory bytes per block at `block` threads (static + dynamic).
    pub fn shared_bytes(&self, block: u32) -> u32 {
        match self.shared() {
            SharedMem::None => 0,
            SharedMem::Static { bytes } => bytes,
            SharedMem::DynamicPerThread(b) => b * block,
        }
    }
}

mod global;
mod modern;
mod shared;
mod sumsq;

/// Every variant, in teaching order (family by family).
pub fn all() -> impl Iterator<Item = &'static Variant> + Clone {
    global::VARIANTS.iter().chain(shared::VARIANTS).chain(modern::VARIANTS).chain(sumsq::VARIANTS)
}

/// The variant called `name`, or an error listing the names there are.
pub fn find(name: &str) -> Result<&'static Variant> {
    all().find(|v| v.name == name).ok_or_else(|| {
        let names: Vec<_> = all().map(|v| v.name).collect();
        Error::Invalid(format!("no variant `{name}`; the variants are: {}", names.join(", ")))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique_and_symbols_follow_names() {
        let mut names: Vec<_> = all().map(|v| v.name).collect();
        names.sort();
        names.dedup();
        assert_eq!(names.len(), all().count(), "duplicate variant names");
        for v in all() {
            for s in v.symbols() {
                assert!(s.starts_with(v.name), "variant {} launches `{s}`, not named after it", v.name);
            }
        }
    }

    #[test]
    fn block_rule() {
        assert!(BlockRule::ANY.allows(32) && BlockRule::ANY.allows(1024));
        assert!(!BlockRule::ANY.allows(48) && !BlockRule::ANY.allows(16) && !BlockRule::ANY.allows(2048));
        assert_eq!(BlockRule::ANY.sizes().collect::<Vec<_>>(), vec![32, 64, 128, 256, 512, 1024]);
        assert!(find("nope").unwrap_err().to_string().contains("interleaved"));
    }
}
