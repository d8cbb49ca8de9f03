//! Modern reductions: warp shuffles, `redux.sync`, grid-stride loops, vector loads, single pass
//! (last-block finish, or atomic accumulation).
//!
//! The grid-stride plans size their grid from the occupancy calculator (`blocks_per_sm:
//! None`): as many blocks as the GPU holds at once, never more than the data needs.

use super::{BlockRule, ByOp, Elem, Family, Finish, Grid, KernelSel, Op, Pairs, PerType, SharedMem, Variant};
use crate::kernel_ref;

/// A modern variant: every power-of-two block from Volta on unless `min_cc` says otherwise.
const fn modern(
    name: &'static str,
    concept: &'static str,
    min_cc: (u32, u32),
    finish: Finish,
    grid: Grid,
    items_per_thread: u32,
    shared_bytes: u32,
) -> Variant {
    Variant {
        name,
        family: Family::Modern,
        concept,
        op: Op::Sum,
        elem: Elem::I32,
        pairs: Pairs::Own,
        min_cc,
        finish,
        grid,
        items_per_thread,
        blocks_per_sm: None,
        shared: SharedMem::Static { bytes: shared_bytes },
        blocks: BlockRule::ANY,
    }
}

/// `v` with a row for every element type × operator besides its own: a generic variant.
const fn every(v: Variant, rows: &'static PerType<ByOp>) -> Variant {
    Variant { pairs: Pairs::Every(rows), ..v }
}

const EIGHT: u32 = kernels::reduce::ITEMS_PER_THREAD as u32;
const TRIP: u32 = kernels::reduce::ITEMS_PER_TRIP as u32;

/// `warp_shuffle`'s items per thread, whatever the type (eight elements in registers).
#[allow(clippy::extra_unused_type_parameters)] // the shape of `trip::<T>` for `every_pair!`
const fn eight<T>() -> usize {
    kernels::reduce::ITEMS_PER_THREAD
}

/// The grid-stride kernels' items per trip: four 128-bit loads (16 elements of 32 bits, 8 of 64).
const fn trip<T: kernels::types::Element>() -> usize {
    kernels::collective::thread::items_per_trip::<T>()
}

pub(super) static VARIANTS: &[Variant] = &[
    every(
        modern(
            "warp_shuffle",
            "warps reduce in registers with shfl.down; one shared slot per warp, one block barrier",
            (7, 0),
            Finish::HostAdds(KernelSel::One(kernel_ref!(kernels::reduce::warp_shuffle(a, b, n)))),
            Grid::PerItems,
            EIGHT,
            kernels::reduce::WARP_SHUFFLE_SHARED_BYTES,
        ),
        &every_pair!(warp_shuffle, HostAdds one (a, b, n), eight, warp_shuffle_shared_bytes),
    ),
    modern(
        "redux",
        "the warp step is one redux.sync.add instruction (sm_80+) instead of five shuffles and adds",
        (8, 0),
        Finish::HostAdds(KernelSel::One(kernel_ref!(kernels::reduce::redux(a, b, n)))),
        Grid::PerItems,
        EIGHT,
        kernels::reduce::REDUX_SHARED_BYTES,
    ),
    modern(
        "grid_stride",
        "a grid of resident blocks loops over any n: sized to the GPU, not to the data",
        (7, 0),
        Finish::HostAdds(KernelSel::One(kernel_ref!(kernels::reduce::grid_stride(a, b, n)))),
        Grid::Resident,
        1,
        kernels::reduce::GRID_STRIDE_SHARED_BYTES,
    ),
    every(
        modern(
            "vector_loads",
            "four independent 128-bit read-only loads per thread per trip; unaligned head and tail",
            (7, 0),
            Finish::HostAdds(KernelSel::One(kernel_ref!(kernels::reduce::vector_loads(a, b, n)))),
            Grid::Resident,
            TRIP,
            kernels::reduce::VECTOR_LOADS_SHARED_BYTES,
        ),
        &every_pair!(vector_loads, HostAdds one (a, b, n), trip, vector_loads_shared_bytes),
    ),
    every(
        modern(
            "single_pass",
            "vector_loads plus a last-block finish (fence + atomic ticket): one launch, one scalar",
            (7, 0),
            Finish::LastBlock(kernel_ref!(kernels::reduce::single_pass(a, p, t, o, n))),
            Grid::Resident,
            TRIP,
            // The warp slots plus the 16-byte-aligned "last block" flag.
            kernels::reduce::SINGLE_PASS_SHARED_BYTES,
        ),
        &every_pair!(single_pass, LastBlock kernel (a, b, t, o, n), trip, single_pass_shared_bytes),
    ),
    every(
        modern(
            "atomic_accumulate",
            "vector_loads plus one fire-and-forget red.add per block into the result: one launch, no last-block pass",
            (7, 0),
            Finish::AtomicAccumulate(kernel_ref!(kernels::reduce::atomic_accumulate(a, acc, n, e))),
            Grid::Resident,
            kernels::reduce::ATOMIC_ACCUMULATE_ITEMS_PER_TRIP as u32,
            kernels::reduce::ATOMIC_ACCUMULATE_SHARED_BYTES,
        ),
        &every_pair!(atomic_accumulate, AtomicAccumulate kernel (a, b, n, e), trip, atomic_accumulate_shared_bytes),
    ),
];
