//! *Professional CUDA C Programming*, chapter 5: reduction in shared memory.

use super::{BlockRule, Elem, Family, Finish, Grid, KernelSel, Op, Pairs, SharedMem, Variant};
use crate::kernel_ref;

/// A chapter-5 variant: one block per `block × items` elements, every power-of-two block.
const fn chapter5(
    name: &'static str,
    concept: &'static str,
    finish: Finish,
    items_per_thread: u32,
    shared: SharedMem,
) -> Variant {
    Variant {
        name,
        family: Family::SharedMemory,
        concept,
        op: Op::Sum,
        elem: Elem::I32,
        pairs: Pairs::Own,
        min_cc: (7, 0),
        finish,
        grid: Grid::PerItems,
        items_per_thread,
        blocks_per_sm: None,
        shared,
        blocks: BlockRule::ANY,
    }
}

pub(super) static VARIANTS: &[Variant] = &[
    chapter5(
        "gmem",
        "baseline: the unrolled tree in global memory, one global load and store per level",
        Finish::HostAddsInPlace(KernelSel::One(kernel_ref!(kernels::reduce::gmem(a, b, n)))),
        1,
        SharedMem::None,
    ),
    chapter5(
        "smem",
        "the same tree in a static shared array: global memory read once, every level on chip",
        Finish::HostAdds(KernelSel::One(kernel_ref!(kernels::reduce::smem(a, b, n)))),
        1,
        SharedMem::Static { bytes: kernels::reduce::SMEM_SHARED_BYTES },
    ),
    chapter5(
        "smem_unroll4",
        "each thread adds 4 elements before the shared tree: 4 loads in flight, a quarter of the blocks",
        Finish::HostAdds(KernelSel::One(kernel_ref!(kernels::reduce::smem_unroll4(a, b, n)))),
        4,
        SharedMem::Static { bytes: kernels::reduce::SMEM_UNROLL4_SHARED_BYTES },
    ),
    chapter5(
        "smem_unroll4_dyn",
        "smem_unroll4 with dynamic shared memory sized at launch: same speed, one kernel for every block",
        Finish::HostAdds(KernelSel::One(kernel_ref!(kernels::reduce::smem_unroll4_dyn(a, b, n)))),
        4,
        SharedMem::DynamicPerThread(4),
    ),
];
