use super::ITEMS_PER_THREAD;
use crate::collective::block::{BLOCK_SUM_SLOTS, BLOCK_SUM_SMEM_BYTES, block_reduce, block_sum};
use crate::collective::thread::{thread_reduce_items, thread_sum_items};
use crate::collective::warp::warp_sum_shfl;
use crate::device::global::{Global, GlobalMut};
use crate::device::thread::{block_dim_x, block_idx_x, thread_idx_x};
use crate::index::segment_len;
use crate::static_shared;
use crate::types::{Element, Operator};
use crate::{kernel, typed_kernel};

/// Static shared memory of [`warp_shuffle`] per block: the block reduction's slots, one
/// `i32` per warp of the largest block (128 bytes).
pub const WARP_SHUFFLE_SHARED_BYTES: u32 = BLOCK_SUM_SMEM_BYTES;

kernel! {
    /// Block reduction with **warp shuffles**: each thread adds eight elements in
    /// registers, each warp sums its 32 values with `shfl.down` without touching memory,
    /// and one shared slot per warp carries the warp sums to warp 0.
    ///
    /// # Concept
    /// **Warp shuffles move registers between the lanes of a warp.**
    /// `__shfl_down_sync(mask, v, d)` hands lane `i` the value of `v` in lane `i + d`, in one
    /// instruction, with no shared memory, no bank conflicts and no barrier: the `.sync`
    /// instruction itself waits for the lanes of `mask`. A warp sums 32 values in five
    /// shuffle-and-add steps.
    ///
    /// # Previous problem → fix
    /// The shared-memory kernels run the whole tree through shared memory: every level is
    /// a store, a barrier (`__syncthreads`, or `__syncwarp` for the unrolled last warp)
    /// and a load, `log2(blockDim)` levels per block, and they need `blockDim` slots of
    /// shared memory. Here the 32 values of a warp never leave registers, the block
    /// needs one barrier and 32 slots (one per warp), and the last level is again a warp
    /// of shuffles. The per-thread work is the global family's unroll-by-8 (eight
    /// independent loads in flight per thread), so the tree is short relative to it.
    /// Shuffles are also correct under Volta's independent thread scheduling by
    /// construction (the book's `volatile` last-warp code is not: it relies on lanes
    /// running in lock-step).
    ///
    /// # Execution
    /// 1. Block `b` owns `g_idata[b*8*blockDim ..)` (`len` of those exist). Thread `tid` adds
    ///    `segment[tid + j*blockDim]`, `j = 0..8`, in a register (coalesced: a warp reads
    ///    128 consecutive bytes per load; `collective::thread::thread_sum_items`).
    /// 2. Each warp: five `shfl.down` steps (offsets 16, 8, 4, 2, 1;
    ///    `collective::warp::warp_sum_shfl`); lane 0 holds the warp's sum and writes it to
    ///    `slots[warp]`. Block barrier.
    /// 3. Warp 0 (steps 2 and 3 are `collective::block::block_sum`) reads `slots[lane]` (0
    ///    past the last warp) and shuffles again; thread 0 holds the block's sum and writes
    ///    it to `g_odata[b]`.
    ///
    /// ```text
    ///  registers   t0 t1 t2 … t31 | t32 … t63 | …        (each: 8 elements)
    ///  shfl.down   warp 0 → lane 0 | warp 1 → lane 0 | …   (16, 8, 4, 2, 1)
    ///  shared      slots[0]  slots[1]  …  slots[W-1]       bar.sync
    ///  warp 0      lane w = slots[w] → shfl.down → thread 0 → g_odata[b]
    /// ```
    ///
    /// # Launch
    /// Grid `ceil(n / (8*blockDim))`, block a power of two in 32..=1024, 128 bytes of static
    /// shared memory ([`WARP_SHUFFLE_SHARED_BYTES`]). Reads its input; the host adds the
    /// partials.
    ///
    /// # Preconditions
    /// `g_idata` holds `n ≥ 1` elements and `g_odata` `gridDim.x`.
    ///
    /// # Safety
    /// The pointers are valid device memory of those lengths. Every thread reaches the one
    /// block barrier (there is no early return), and every lane of every warp takes part in
    /// every shuffle (the block is a multiple of 32, and no shuffle sits in divergent code).
    ///
    /// # Measured
    /// NVIDIA H100 80GB HBM3, block 512, median of 20 timed runs, every run checked (`docs/measurements/2026-11-25-h100/twins_2e24.csv`, `twins_2e28.csv`, commit e032fa9):
    ///
    /// | n | time | GB/s | × previous | × CUDA C twin |
    /// |---|---|---|---|---|
    /// | 2^24 | 24.86 µs | 2699.0 | 1.20 (`smem_unroll4_dyn`) | — |
    /// | 2^28 | 337.9 µs | 3177.4 | 1.12 (`smem_unroll4_dyn`) | — |
    pub unsafe fn warp_shuffle(g_idata: Global<i32>, g_odata: GlobalMut<i32>, n: u32) {
        let slots = static_shared!(WARP_SHUFFLE_SLOTS: [i32; BLOCK_SUM_SLOTS]);
        let tid = thread_idx_x() as usize;
        let block = block_dim_x() as usize;
        let start = block_idx_x() as usize * ITEMS_PER_THREAD * block;
        let len = segment_len(n as usize, start, ITEMS_PER_THREAD * block);
        // SAFETY: start < n for every block of the grid, and the segment holds len elements.
        let sum = unsafe { thread_sum_items::<ITEMS_PER_THREAD>(g_idata.offset(start), len, tid, block) };
        // SAFETY: every thread gets here; the block is a multiple of 32, at most 1024.
        let total = unsafe { block_sum(sum, slots, warp_sum_shfl) };
        if tid == 0 {
            // SAFETY: g_odata holds gridDim.x elements.
            unsafe { g_odata.write(block_idx_x() as usize, total)};
        }
    }
}

/// Static shared memory of `warp_shuffle__{type}_{op}` per block: one `T` per warp of the
/// largest block (128 bytes for 32-bit types, 256 for 64-bit ones).
pub const fn warp_shuffle_shared_bytes<T>() -> u32 {
    crate::collective::block::block_reduce_smem_bytes::<T>()
}

typed_kernel!(warp_shuffle = warp_shuffle_generic(g_idata: Global<T>, g_odata: GlobalMut<T>, n: u32));

/// [`warp_shuffle`] for any element type and operator: each thread combines eight elements
/// in registers, each warp combines its 32 values with `shfl.down`, one shared slot per warp
/// carries the warp results to warp 0. Instantiated by `typed_kernel!` as
/// `warp_shuffle__{type}_{op}` for every type × operator but `i32` × sum (which is
/// [`warp_shuffle`] itself).
///
/// # Concept
/// **One kernel, many types and operators.** A reduction needs of its operator only an
/// identity and an associative combine; of its element type, a way across lanes. A 32-bit
/// value crosses in one `shfl.sync`, a 64-bit value in two (its halves), as CUDA C's
/// `__shfl_down_sync` on a `double` does.
///
/// # Previous problem → fix
/// [`warp_shuffle`] sums `i32` only. Here the same code is generic over
/// [`Element`] and [`Operator`]: min and max need their identity (not 0) in the lanes and
/// warps that have nothing to contribute, and 64-bit types double the shuffles and the shared
/// slots.
///
/// # Execution
/// 1. Block `b` owns `g_idata[b*8*blockDim ..)`; thread `tid` combines
///    `segment[tid + j*blockDim]`, `j < 8` (`collective::thread::thread_reduce_items`).
/// 2. Each warp: five `shfl.down` steps (`collective::warp::warp_reduce_shfl`); lane 0 writes
///    `slots[warp]`. Block barrier.
/// 3. Warp 0 combines the slots (the identity past the last warp;
///    `collective::block::block_reduce`); thread 0 writes `g_odata[b]`.
///
/// # Launch
/// Grid `ceil(n / (8*blockDim))`, block a power of two in 32..=1024,
/// [`warp_shuffle_shared_bytes`]`::<T>()` bytes of static shared memory. The host combines the
/// partials.
///
/// # Preconditions
/// `g_idata` holds `n ≥ 1` elements and `g_odata` `gridDim.x`.
///
/// # Safety
/// As for [`warp_shuffle`]: valid pointers of those lengths; every thread reaches the block
/// barrier and every shuffle.
///
/// # Measured
/// NVIDIA H100 80GB HBM3, block 512, median of 20 timed runs, every run checked (`docs/measurements/2026-11-22-h100/twins_2e24.csv`, `twins_2e28.csv`, commit b17aeb5):
///
/// | n | time | GB/s | × previous | × CUDA C twin |
/// |---|---|---|---|---|
/// | 2^24 | 24.74 µs | 2713.0 | 1.20 (`smem_unroll4_dyn`) | — |
/// | 2^28 | 338.2 µs | 3174.9 | 1.12 (`smem_unroll4_dyn`) | — |
#[inline(always)]
pub unsafe fn warp_shuffle_generic<T: Element, O: Operator<T>>(g_idata: Global<T>, g_odata: GlobalMut<T>, n: u32) {
    let slots = static_shared!(WARP_SHUFFLE_TYPED_SLOTS: [T; BLOCK_SUM_SLOTS]);
    let tid = thread_idx_x() as usize;
    let block = block_dim_x() as usize;
    let start = block_idx_x() as usize * ITEMS_PER_THREAD * block;
    let len = segment_len(n as usize, start, ITEMS_PER_THREAD * block);
    // SAFETY: start < n for every block of the grid, and the segment holds len elements.
    let mine = unsafe { thread_reduce_items::<T, O, ITEMS_PER_THREAD>(g_idata.offset(start), len, tid, block) };
    // SAFETY: every thread gets here; the block is a multiple of 32, at most 1024.
    let total = unsafe { block_reduce::<T, O>(mine, slots) };
    if tid == 0 {
        // SAFETY: g_odata holds gridDim.x elements.
        unsafe { g_odata.write(block_idx_x() as usize, total) };
    }
}
