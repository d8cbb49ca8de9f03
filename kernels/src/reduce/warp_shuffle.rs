use crate::device::shared::Shared;
use crate::device::thread::{block_dim_x, block_idx_x, lane_id, sync_threads, thread_idx_x, warp_id};
use crate::device::warp::shfl_down_sync;
use crate::device::{FULL_MASK, WARP_SIZE};
use crate::index::segment_len;
use crate::kernel;
use crate::static_shared;

/// Elements each thread adds in registers before the block reduction (`warp_shuffle`,
/// `redux`): eight, the unrolling factor of the global-memory family's best kernels.
pub const ITEMS_PER_THREAD: usize = 8;

/// Warps in the largest block (1024 / 32): the slots the block reduction needs.
pub const MAX_WARPS: usize = 32;

/// The warp step of [`warp_shuffle`]: the wrapping sum of `value` over the 32 lanes of the
/// warp, complete in **lane 0** (the other lanes end with partial sums).
///
/// Five `shfl.down` steps halve the distance each time; every lane adds the value of the
/// lane `offset` above it, so lane 0 collects the whole warp:
///
/// ```text
///  offset 16   lane i += lane i+16      lanes 0..15 hold sums of 2
///  offset  8   lane i += lane i+8       lanes 0..7  hold sums of 4
///  offset  4, 2, 1                      lane 0 holds the sum of 32
/// ```
///
/// Every lane of the warp must call it (the mask is the full warp).
#[inline(always)]
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
pub(crate) fn warp_sum_shfl(value: i32) -> i32 {
    let mut v = value;
    let mut offset = WARP_SIZE / 2;
    while offset > 0 {
        // Lanes at or past 32 - offset read their own value back (clamped); lane 0's sum
        // never includes those reads, because lane i only ever collects lanes i..i+2*offset.
        v = v.wrapping_add(shfl_down_sync(FULL_MASK, v, offset));
        offset /= 2;
    }
    v
}

/// The wrapping sum of `value` over the whole block, complete in **thread 0**: `warp_sum`
/// reduces each warp in registers, lane 0 of each warp parks its warp's sum in
/// `slots[warp]`, one block barrier, then warp 0 reduces the slots with `warp_sum` again.
///
/// `warp_sum` must leave the warp's sum at least in lane 0 ([`warp_sum_shfl`], or
/// `redux.sync`, which leaves it in every lane).
///
/// # Safety
/// Every thread of the block calls it (it holds a block barrier), with the block a multiple
/// of 32 threads and at most `32 × slots.len()` of them; no thread calls it while another
/// thread of the block may still read `slots` from an earlier use (a barrier in between).
#[inline(always)]
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
pub(crate) unsafe fn block_sum(value: i32, slots: Shared<i32>, warp_sum: impl Fn(i32) -> i32) -> i32 {
    let warp_total = warp_sum(value);
    if lane_id() == 0 {
        // SAFETY: warp_id < blockDim/32 <= slots.len(); each warp writes its own slot.
        unsafe { slots.write(warp_id() as usize, warp_total) };
    }
    sync_threads();
    let mut total = 0;
    if warp_id() == 0 {
        let warps = block_dim_x() / WARP_SIZE;
        let lane = lane_id();
        // SAFETY: lane < warps <= slots.len(); the barrier above ordered the writes.
        let parked = if lane < warps { unsafe { slots.read(lane as usize) } } else { 0 };
        total = warp_sum(parked);
    }
    total
}

/// Sum of the `len` elements at `segment` that thread `tid` of a `block`-thread block owns:
/// `segment[tid + j*block]` for `j < ITEMS_PER_THREAD`. A full segment takes the unrolled path (eight
/// independent loads issued back to back, then the adds); the last, short segment checks
/// every index.
///
/// # Safety
/// `segment` is valid for reading `len` elements, `len <= ITEMS_PER_THREAD * block`, `tid < block`.
#[inline(always)]
pub(crate) unsafe fn thread_sum_items(segment: *const i32, len: usize, tid: usize, block: usize) -> i32 {
    let mut sum = 0i32;
    if len == ITEMS_PER_THREAD * block {
        let mut x = [0i32; ITEMS_PER_THREAD];
        for (j, slot) in x.iter_mut().enumerate() {
            // SAFETY: tid + j*block < ITEMS_PER_THREAD*block = len.
            *slot = unsafe { *segment.add(tid + j * block) };
        }
        for v in x {
            sum = sum.wrapping_add(v);
        }
    } else {
        let mut i = tid;
        while i < len {
            // SAFETY: i < len.
            sum = sum.wrapping_add(unsafe { *segment.add(i) });
            i += block;
        }
    }
    sum
}

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
    ///    128 consecutive bytes per load).
    /// 2. Each warp: five `shfl.down` steps (offsets 16, 8, 4, 2, 1); lane 0 holds the
    ///    warp's sum and writes it to `slots[warp]`. Block barrier.
    /// 3. Warp 0 reads `slots[lane]` (0 past the last warp) and shuffles again; thread 0
    ///    holds the block's sum and writes it to `g_odata[b]`.
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
    /// shared memory. Reads its input; the host adds the partials.
    ///
    /// # Preconditions
    /// `g_idata` holds `n ≥ 1` elements and `g_odata` `gridDim.x`.
    ///
    /// # Safety
    /// The pointers are valid device memory of those lengths. Every thread reaches the one
    /// block barrier (there is no early return), and every lane of every warp takes part in
    /// every shuffle (the block is a multiple of 32, and no shuffle sits in divergent code).
    pub unsafe fn warp_shuffle(g_idata: *const i32, g_odata: *mut i32, n: u32) {
        let slots = static_shared!(WARP_SHUFFLE_SLOTS: [i32; MAX_WARPS]);
        let tid = thread_idx_x() as usize;
        let block = block_dim_x() as usize;
        let start = block_idx_x() as usize * ITEMS_PER_THREAD * block;
        let len = segment_len(n as usize, start, ITEMS_PER_THREAD * block);
        // SAFETY: start < n for every block of the grid, and the segment holds len elements.
        let sum = unsafe { thread_sum_items(g_idata.add(start), len, tid, block) };
        // SAFETY: every thread gets here; the block is a multiple of 32, at most 1024.
        let total = unsafe { block_sum(sum, slots, warp_sum_shfl) };
        if tid == 0 {
            // SAFETY: g_odata holds gridDim.x elements.
            unsafe { *g_odata.add(block_idx_x() as usize) = total };
        }
    }
}
