//! The sum-of-squares tutorial: one thread → many blocks with a shared-memory tree, timed with in-kernel clocks.
//!
//! Steps 4 and 5 run [`BLOCKS_PER_SM`] blocks per multiprocessor.

use super::{BlockRule, Elem, Family, Op, Outputs, Plan, SharedMem, SumSqGrid, Variant};
use crate::kernel_ref;

/// Blocks per multiprocessor of the many-block steps. At the CLI's default block of 512
/// threads, 4 blocks are 2048 threads per SM: the most one SM holds on Volta, A100 and
/// Hopper, so the grid is one full wave over the whole GPU (smaller blocks leave SMs part
/// empty, larger ones make a second wave; the grid-stride loop is correct for any grid).
pub(super) const BLOCKS_PER_SM: u32 = 4;

pub(super) static VARIANTS: &[Variant] = &[
    Variant {
        name: "squares_one_thread",
        family: Family::SumOfSquares,
        concept: "the CPU loop on one GPU thread: correct, and as slow as a GPU gets",
        op: Op::SumOfSquares,
        elem: Elem::I32,
        min_cc: (7, 0),
        plan: Plan::SumSquares {
            kernel: kernel_ref!(kernels::sumsq::squares_one_thread(a, r, c, n)),
            grid: SumSqGrid::OneThread,
            outputs: Outputs::PerThread,
            shared: SharedMem::None,
            blocks: BlockRule::ANY,
        },
    },
    Variant {
        name: "squares_chunked",
        family: Family::SumOfSquares,
        concept: "one block, each thread a contiguous chunk: parallel, but a warp's loads are a chunk apart",
        op: Op::SumOfSquares,
        elem: Elem::I32,
        min_cc: (7, 0),
        plan: Plan::SumSquares {
            kernel: kernel_ref!(kernels::sumsq::squares_chunked(a, r, c, n)),
            grid: SumSqGrid::OneBlock,
            outputs: Outputs::PerThread,
            shared: SharedMem::None,
            blocks: BlockRule::ANY,
        },
    },
    Variant {
        name: "squares_coalesced",
        family: Family::SumOfSquares,
        concept: "one block, thread t reads t, t+T, …: each warp load is one coalesced line",
        op: Op::SumOfSquares,
        elem: Elem::I32,
        min_cc: (7, 0),
        plan: Plan::SumSquares {
            kernel: kernel_ref!(kernels::sumsq::squares_coalesced(a, r, c, n)),
            grid: SumSqGrid::OneBlock,
            outputs: Outputs::PerThread,
            shared: SharedMem::None,
            blocks: BlockRule::ANY,
        },
    },
    Variant {
        name: "squares_grid_stride",
        family: Family::SumOfSquares,
        concept: "many blocks with a grid-stride loop: every multiprocessor busy",
        op: Op::SumOfSquares,
        elem: Elem::I32,
        min_cc: (7, 0),
        plan: Plan::SumSquares {
            kernel: kernel_ref!(kernels::sumsq::squares_grid_stride(a, r, c, n)),
            grid: SumSqGrid::PerMultiprocessor(BLOCKS_PER_SM),
            outputs: Outputs::PerThread,
            shared: SharedMem::None,
            blocks: BlockRule::ANY,
        },
    },
    Variant {
        name: "squares_block_tree",
        family: Family::SumOfSquares,
        concept: "a shared-memory tree per block: the host adds one number per block, not per thread",
        op: Op::SumOfSquares,
        elem: Elem::I32,
        min_cc: (7, 0),
        plan: Plan::SumSquares {
            kernel: kernel_ref!(kernels::sumsq::squares_block_tree(a, r, c, n)),
            grid: SumSqGrid::PerMultiprocessor(BLOCKS_PER_SM),
            outputs: Outputs::PerBlock,
            shared: SharedMem::Static { bytes: 4096 },
            blocks: BlockRule::ANY,
        },
    },
];
