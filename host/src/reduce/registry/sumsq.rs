//! The sum-of-squares tutorial: one thread → many blocks with a shared-memory tree, timed with in-kernel clocks.
//!
//! Steps 4 and 5 run [`BLOCKS_PER_SM`] blocks per multiprocessor.

use super::{BlockRule, ClockedArgs, Elem, Family, Finish, Grid, Op, Pairs, Per, SharedMem, Variant};
use crate::backend::Kernel;
use crate::kernel_ref;

/// Blocks per multiprocessor of the many-block steps. At the CLI's default block of 512
/// threads, 4 blocks are 2048 threads per SM: the most one SM holds on Volta, A100 and
/// Hopper, so the grid is one full wave over the whole GPU (smaller blocks leave SMs part
/// empty, larger ones make a second wave; the grid-stride loop is correct for any grid).
pub(super) const BLOCKS_PER_SM: u32 = 4;

/// A step of the tutorial: every step sums squares of `i32` on any GPU from Volta on, for any
/// allowed block; what differs is the kernel, its grid, what it writes and its shared memory.
const fn step(
    name: &'static str,
    concept: &'static str,
    kernel: Kernel<ClockedArgs>,
    grid: Grid,
    per: Per,
    shared: SharedMem,
) -> Variant {
    Variant {
        name,
        family: Family::SumOfSquares,
        concept,
        op: Op::SumOfSquares,
        elem: Elem::I32,
        pairs: Pairs::Own,
        min_cc: (7, 0),
        finish: Finish::HostAddsClocked(kernel, per),
        grid,
        items_per_thread: 1,
        // Only the grids that scale with the GPU read it.
        blocks_per_sm: Some(BLOCKS_PER_SM),
        shared,
        blocks: BlockRule::ANY,
    }
}

pub(super) static VARIANTS: &[Variant] = &[
    step(
        "squares_one_thread",
        "the CPU loop on one GPU thread: correct, and as slow as a GPU gets",
        kernel_ref!(kernels::sumsq::squares_one_thread(a, r, c, n)),
        Grid::OneThread,
        Per::Thread,
        SharedMem::None,
    ),
    step(
        "squares_chunked",
        "one block, each thread a contiguous chunk: parallel, but a warp's loads are a chunk apart",
        kernel_ref!(kernels::sumsq::squares_chunked(a, r, c, n)),
        Grid::OneBlock,
        Per::Thread,
        SharedMem::None,
    ),
    step(
        "squares_coalesced",
        "one block, thread t reads t, t+T, …: each warp load is one coalesced line",
        kernel_ref!(kernels::sumsq::squares_coalesced(a, r, c, n)),
        Grid::OneBlock,
        Per::Thread,
        SharedMem::None,
    ),
    step(
        "squares_grid_stride",
        "many blocks with a grid-stride loop: every multiprocessor busy",
        kernel_ref!(kernels::sumsq::squares_grid_stride(a, r, c, n)),
        Grid::PerMultiprocessor,
        Per::Thread,
        SharedMem::None,
    ),
    step(
        "squares_block_tree",
        "a shared-memory tree per block: the host adds one number per block, not per thread",
        kernel_ref!(kernels::sumsq::squares_block_tree(a, r, c, n)),
        Grid::PerMultiprocessor,
        Per::Block,
        SharedMem::Static { bytes: kernels::sumsq::SQUARES_BLOCK_TREE_SHARED_BYTES },
    ),
];
