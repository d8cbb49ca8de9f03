//! *Professional CUDA C Programming*, chapter 3: reduction in global memory.

use super::{BlockRule, Elem, Family, KernelSel, Op, PartialsKernel, Plan, SharedMem, Variant};
use crate::kernel_ref;

pub(super) static VARIANTS: &[Variant] = &[Variant {
    name: "interleaved",
    family: Family::GlobalMemory,
    concept: "re-index so the working threads are packed into the first warps: no divergence, coalesced pairs",
    op: Op::Sum,
    elem: Elem::I32,
    min_cc: (7, 0),
    plan: Plan::Partials {
        kernel: PartialsKernel::InPlace(KernelSel::One(kernel_ref!(kernels::reduce::interleaved(a, b, n)))),
        items_per_thread: 1,
        shared: SharedMem::None,
        blocks: BlockRule::ANY,
    },
}];
