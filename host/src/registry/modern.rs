//! Modern reductions: warp shuffles, `redux.sync`, grid-stride loops, vector loads, single pass
//! (last-block finish, or atomic accumulation).
//!
//! The grid-stride plans size their grid from the occupancy calculator (`blocks_per_sm:
//! None`): as many blocks as the GPU holds at once, never more than the data needs.

use super::{BlockRule, Elem, Family, KernelSel, Op, PartialsKernel, Plan, SharedMem, Variant};
use crate::kernel_ref;

pub(super) static VARIANTS: &[Variant] = &[
    Variant {
        name: "warp_shuffle",
        family: Family::Modern,
        concept: "warps reduce in registers with shfl.down; one shared slot per warp, one block barrier",
        op: Op::Sum,
        elem: Elem::I32,
        min_cc: (7, 0),
        plan: Plan::Partials {
            kernel: PartialsKernel::Reads(KernelSel::One(kernel_ref!(kernels::reduce::warp_shuffle(a, b, n)))),
            items_per_thread: kernels::reduce::ITEMS_PER_THREAD as u32,
            shared: SharedMem::Static { bytes: kernels::reduce::WARP_SHUFFLE_SHARED_BYTES },
            blocks: BlockRule::ANY,
        },
    },
    Variant {
        name: "redux",
        family: Family::Modern,
        concept: "the warp step is one redux.sync.add instruction (sm_80+) instead of five shuffles and adds",
        op: Op::Sum,
        elem: Elem::I32,
        min_cc: (8, 0),
        plan: Plan::Partials {
            kernel: PartialsKernel::Reads(KernelSel::One(kernel_ref!(kernels::reduce::redux(a, b, n)))),
            items_per_thread: kernels::reduce::ITEMS_PER_THREAD as u32,
            shared: SharedMem::Static { bytes: kernels::reduce::REDUX_SHARED_BYTES },
            blocks: BlockRule::ANY,
        },
    },
    Variant {
        name: "grid_stride",
        family: Family::Modern,
        concept: "a grid of resident blocks loops over any n: sized to the GPU, not to the data",
        op: Op::Sum,
        elem: Elem::I32,
        min_cc: (7, 0),
        plan: Plan::GridStride {
            kernel: kernel_ref!(kernels::reduce::grid_stride(a, b, n)),
            items_per_thread: 1,
            blocks_per_sm: None,
            shared: SharedMem::Static { bytes: kernels::reduce::GRID_STRIDE_SHARED_BYTES },
            blocks: BlockRule::ANY,
        },
    },
    Variant {
        name: "vector_loads",
        family: Family::Modern,
        concept: "four independent 128-bit read-only loads per thread per trip; unaligned head and tail",
        op: Op::Sum,
        elem: Elem::I32,
        min_cc: (7, 0),
        plan: Plan::GridStride {
            kernel: kernel_ref!(kernels::reduce::vector_loads(a, b, n)),
            items_per_thread: kernels::reduce::ITEMS_PER_TRIP as u32,
            blocks_per_sm: None,
            shared: SharedMem::Static { bytes: kernels::reduce::VECTOR_LOADS_SHARED_BYTES },
            blocks: BlockRule::ANY,
        },
    },
    Variant {
        name: "single_pass",
        family: Family::Modern,
        concept: "vector_loads plus a last-block finish (fence + atomic ticket): one launch, one scalar",
        op: Op::Sum,
        elem: Elem::I32,
        min_cc: (7, 0),
        plan: Plan::SinglePass {
            kernel: kernel_ref!(kernels::reduce::single_pass(a, p, t, o, n)),
            items_per_thread: kernels::reduce::ITEMS_PER_TRIP as u32,
            blocks_per_sm: None,
            // The warp slots plus the 16-byte-aligned "last block" flag.
            shared: SharedMem::Static { bytes: kernels::reduce::SINGLE_PASS_SHARED_BYTES },
            blocks: BlockRule::ANY,
        },
    },
    Variant {
        name: "atomic_accumulate",
        family: Family::Modern,
        concept: "vector_loads plus one fire-and-forget red.add per block into the result: one launch, no last-block pass",
        op: Op::Sum,
        elem: Elem::I32,
        min_cc: (7, 0),
        plan: Plan::Accumulate {
            kernel: kernel_ref!(kernels::reduce::atomic_accumulate(a, acc, n, e)),
            items_per_thread: kernels::reduce::ITEMS_PER_TRIP as u32,
            blocks_per_sm: None,
            shared: SharedMem::Static { bytes: kernels::reduce::ATOMIC_ACCUMULATE_SHARED_BYTES },
            blocks: BlockRule::ANY,
        },
    },
];
