//! *Professional CUDA C Programming*, chapter 5: reduction in shared memory.

use super::{BlockRule, Elem, Family, KernelSel, Op, PartialsKernel, Plan, SharedMem, Variant};
use crate::kernel_ref;

pub(super) static VARIANTS: &[Variant] = &[
    Variant {
        name: "gmem",
        family: Family::SharedMemory,
        concept: "baseline: the unrolled tree in global memory, one global load and store per level",
        op: Op::Sum,
        elem: Elem::I32,
        min_cc: (7, 0),
        plan: Plan::Partials {
            kernel: PartialsKernel::InPlace(KernelSel::One(kernel_ref!(kernels::reduce::gmem(a, b, n)))),
            items_per_thread: 1,
            shared: SharedMem::None,
            blocks: BlockRule::ANY,
        },
    },
    Variant {
        name: "smem",
        family: Family::SharedMemory,
        concept: "the same tree in a static shared array: global memory read once, every level on chip",
        op: Op::Sum,
        elem: Elem::I32,
        min_cc: (7, 0),
        plan: Plan::Partials {
            kernel: PartialsKernel::Reads(KernelSel::One(kernel_ref!(kernels::reduce::smem(a, b, n)))),
            items_per_thread: 1,
            shared: SharedMem::Static { bytes: kernels::reduce::SMEM_SHARED_BYTES },
            blocks: BlockRule::ANY,
        },
    },
    Variant {
        name: "smem_unroll4",
        family: Family::SharedMemory,
        concept: "each thread adds 4 elements before the shared tree: 4 loads in flight, a quarter of the blocks",
        op: Op::Sum,
        elem: Elem::I32,
        min_cc: (7, 0),
        plan: Plan::Partials {
            kernel: PartialsKernel::Reads(KernelSel::One(kernel_ref!(kernels::reduce::smem_unroll4(a, b, n)))),
            items_per_thread: 4,
            shared: SharedMem::Static { bytes: kernels::reduce::SMEM_UNROLL4_SHARED_BYTES },
            blocks: BlockRule::ANY,
        },
    },
    Variant {
        name: "smem_unroll4_dyn",
        family: Family::SharedMemory,
        concept: "smem_unroll4 with dynamic shared memory sized at launch: same speed, one kernel for every block",
        op: Op::Sum,
        elem: Elem::I32,
        min_cc: (7, 0),
        plan: Plan::Partials {
            kernel: PartialsKernel::Reads(KernelSel::One(kernel_ref!(kernels::reduce::smem_unroll4_dyn(a, b, n)))),
            items_per_thread: 4,
            shared: SharedMem::DynamicPerThread(4),
            blocks: BlockRule::ANY,
        },
    },
];
