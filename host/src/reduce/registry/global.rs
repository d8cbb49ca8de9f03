//! *Professional CUDA C Programming*, chapter 3: reduction in global memory, from the
//! divergent neighbored-pair tree to the completely unrolled, block-size-specialised kernel.
//! Every kernel works in place on a scratch copy of the input, like the book's.

use super::{
    BlockRule, Children, Elem, Family, Finish, Grid, InPlaceArgs, KernelSel, Nesting, Op, Pairs, SharedMem, Variant,
};
use crate::backend::Kernel;
use crate::kernel_ref;

/// A chapter-3 variant: in place, no shared memory, every power-of-two block 32..=1024.
const fn global(
    name: &'static str,
    concept: &'static str,
    kernel: KernelSel<InPlaceArgs>,
    items_per_thread: u32,
) -> Variant {
    chapter3(name, concept, Finish::HostAddsInPlace(kernel), items_per_thread)
}

/// The fields every chapter-3 variant shares, around its `finish`.
const fn chapter3(name: &'static str, concept: &'static str, finish: Finish, items_per_thread: u32) -> Variant {
    Variant {
        name,
        family: Family::GlobalMemory,
        concept,
        op: Op::Sum,
        elem: Elem::I32,
        pairs: Pairs::Own,
        min_cc: (7, 0),
        finish,
        grid: Grid::PerItems,
        items_per_thread,
        blocks_per_sm: None,
        shared: SharedMem::None,
        blocks: BlockRule::ANY,
    }
}

/// `complete_unroll::<BLOCK>`, one instantiation per allowed block.
static COMPLETE_UNROLL: &[(u32, Kernel<InPlaceArgs>)] = &[
    (32, kernel_ref!(kernels::reduce::complete_unroll_32(a, b, n))),
    (64, kernel_ref!(kernels::reduce::complete_unroll_64(a, b, n))),
    (128, kernel_ref!(kernels::reduce::complete_unroll_128(a, b, n))),
    (256, kernel_ref!(kernels::reduce::complete_unroll_256(a, b, n))),
    (512, kernel_ref!(kernels::reduce::complete_unroll_512(a, b, n))),
    (1024, kernel_ref!(kernels::reduce::complete_unroll_1024(a, b, n))),
];

pub(super) static VARIANTS: &[Variant] = &[
    global(
        "neighbored",
        "a tree of pairwise adds with a block barrier between rounds; tid % (2*stride) == 0 makes every warp diverge",
        KernelSel::One(kernel_ref!(kernels::reduce::neighbored(a, b, n))),
        1,
    ),
    global(
        "neighbored_modulo",
        "neighbored with the book's remainder kept as rem.u32 (LLVM makes tid % (2*stride) a mask): the cost the book measures",
        KernelSel::One(kernel_ref!(kernels::reduce::neighbored_modulo(a, b, n))),
        1,
    ),
    global(
        "neighbored_less",
        "the same tree with the work mapped to the first threads (index = 2*stride*tid): whole warps idle, less divergence",
        KernelSel::One(kernel_ref!(kernels::reduce::neighbored_less(a, b, n))),
        1,
    ),
    global(
        "interleaved",
        "pairs stride apart, stride halving: working threads packed first and each warp's loads consecutive (coalesced)",
        KernelSel::One(kernel_ref!(kernels::reduce::interleaved(a, b, n))),
        1,
    ),
    global(
        "unroll2",
        "each block first folds 2 data blocks: no idle threads in the first step, twice the loads in flight",
        KernelSel::One(kernel_ref!(kernels::reduce::unroll2(a, b, n))),
        2,
    ),
    global(
        "unroll4",
        "fold 4 data blocks per block: 4 independent loads in flight per thread, half the blocks of unroll2",
        KernelSel::One(kernel_ref!(kernels::reduce::unroll4(a, b, n))),
        4,
    ),
    global(
        "unroll8",
        "fold 8 data blocks per block: 8 independent loads in flight per thread, an eighth of the trees",
        KernelSel::One(kernel_ref!(kernels::reduce::unroll8(a, b, n))),
        8,
    ),
    global(
        "unroll_warps8",
        "unroll8 with the last warp's six rounds unrolled, separated by __syncwarp instead of block barriers",
        KernelSel::One(kernel_ref!(kernels::reduce::unroll_warps8(a, b, n))),
        8,
    ),
    global(
        "complete_unroll_warps8",
        "every block-wide round written out (blockDim <= 1024): no loop, constant offsets, then the warp rounds",
        KernelSel::One(kernel_ref!(kernels::reduce::complete_unroll_warps8(a, b, n))),
        8,
    ),
    global(
        "complete_unroll",
        "the block size as a const generic: each instantiation keeps only its rounds and barriers; the host picks one",
        KernelSel::PerBlock(COMPLETE_UNROLL),
        8,
    ),
    nested(
        "recursive_reduce",
        "dynamic parallelism: each block folds its half and launches a one-block child grid on the rest (tail launch)",
        Nesting::PerBlock(kernel_ref!(kernels::reduce::recursive_reduce(a, b, n)), Children::AfterTheGrid),
    ),
    nested(
        "recursive_reduce_nosync",
        "recursive_reduce with the children in the fire-and-forget stream: a block's chain need not wait for the grid",
        Nesting::PerBlock(kernel_ref!(kernels::reduce::recursive_reduce_nosync(a, b, n)), Children::AtOnce),
    ),
    nested(
        "recursive_reduce2",
        "one grid per level, launched by block 0 alone: log2(block) device-side launches instead of one per block per level",
        Nesting::PerLevel(kernel_ref!(kernels::reduce::recursive_reduce2(a, b, n, s, d))),
    ),
];

/// A chapter-3 nested reduction (dynamic parallelism): in place, one partial per block.
const fn nested(name: &'static str, concept: &'static str, nesting: Nesting) -> Variant {
    chapter3(name, concept, Finish::Nested(nesting), 1)
}
