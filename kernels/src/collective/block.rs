//! Block-level sums: every thread of the block takes part, and each function holds block
//! barriers, so every thread of the block must call it (never from divergent code).
//!
//! * [`block_sum`] — registers in, one total out, through one shared slot per warp: the
//!   block reduction of `warp_shuffle` and every kernel after it (CUB's
//!   `BlockReduce<…, BLOCK_REDUCE_WARP_REDUCTIONS>`).
//! * [`SHARED_TREE_SLOTS`] — the size of the one-slot-per-thread shared arrays of the
//!   chapter-5 kernels, whose trees are written out in their own files (`smem`,
//!   `smem_unroll4`, `smem_unroll4_dyn`).

use crate::device::WARP_SIZE;
use crate::device::shared::Shared;
use crate::device::thread::{block_dim_x, lane_id, sync_threads, warp_id};
use crate::types::{Element, Operator};

/// Warps in the largest block (1024 / 32): the shared slots [`block_sum`] needs, one `i32`
/// per warp. A kernel declares its slots as `static_shared!(NAME: [i32; BLOCK_SUM_SLOTS])`.
pub const BLOCK_SUM_SLOTS: usize = 32;

/// Bytes of static shared memory of [`BLOCK_SUM_SLOTS`] `i32` slots (128): what a kernel whose
/// only shared array is those slots reports (`ptxas -v`: "128 bytes smem").
pub const BLOCK_SUM_SMEM_BYTES: u32 = (BLOCK_SUM_SLOTS * core::mem::size_of::<i32>()) as u32;

/// The wrapping sum of `value` over the whole block, complete in **thread 0**: `warp_sum`
/// reduces each warp in registers, lane 0 of each warp parks its warp's sum in
/// `slots[warp]`, one block barrier, then warp 0 reduces the slots with `warp_sum` again.
///
/// ```text
///  registers   t0 t1 … t31 | t32 … t63 | …         one value per thread
///  warp_sum    warp 0 → lane 0 | warp 1 → lane 0 | …
///  shared      slots[0]  slots[1]  …  slots[W-1]    bar.sync
///  warp 0      lane w = slots[w] (0 past W) → warp_sum → thread 0
/// ```
///
/// `warp_sum` must leave the warp's sum at least in lane 0
/// ([`warp_sum_shfl`](super::warp::warp_sum_shfl), or `redux.sync`, which leaves it in
/// every lane).
///
/// # Safety
/// Every thread of the block calls it (it holds a block barrier), with the block a multiple
/// of 32 threads and at most `32 × slots.len()` of them; no thread calls it while another
/// thread of the block may still read `slots` from an earlier use (a barrier in between).
#[inline(always)]
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
pub unsafe fn block_sum(value: i32, slots: Shared<i32>, warp_sum: impl Fn(i32) -> i32) -> i32 {
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

/// Bytes of static shared memory of [`BLOCK_SUM_SLOTS`] slots of `T`: 128 for 32-bit types,
/// 256 for 64-bit ones (what `ptxas -v` reports for a generic kernel whose only shared array
/// is the slots of [`block_reduce`]).
pub const fn block_reduce_smem_bytes<T>() -> u32 {
    (BLOCK_SUM_SLOTS * core::mem::size_of::<T>()) as u32
}

/// [`block_sum`] for any element type and operator: `O::combine` over the whole block,
/// complete in **thread 0**. Each warp reduces with `O::warp_reduce` (shuffles), lane 0 of each
/// warp parks its warp's result in `slots[warp]`, one block barrier, then warp 0 reduces the
/// slots (lanes past the last warp hold `O::IDENTITY`).
///
/// # Safety
/// As for [`block_sum`]: every thread of the block calls it, the block is a multiple of 32
/// threads and at most `32 × slots.len()`, and no thread may still read `slots` from an
/// earlier use.
#[inline(always)]
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
pub unsafe fn block_reduce<T: Element, O: Operator<T>>(value: T, slots: Shared<T>) -> T {
    let warp_total = O::warp_reduce(value);
    if lane_id() == 0 {
        // SAFETY: warp_id < blockDim/32 <= slots.len(); each warp writes its own slot.
        unsafe { slots.write(warp_id() as usize, warp_total) };
    }
    sync_threads();
    let mut total = O::IDENTITY;
    if warp_id() == 0 {
        let warps = block_dim_x() / WARP_SIZE;
        let lane = lane_id();
        // SAFETY: lane < warps <= slots.len(); the barrier above ordered the writes.
        let parked = if lane < warps { unsafe { slots.read(lane as usize) } } else { O::IDENTITY };
        total = O::warp_reduce(parked);
    }
    total
}

/// Slots a kernel's shared array needs for its shared-memory tree at any block size: one `i32` per
/// thread of the largest block (1024).
pub const SHARED_TREE_SLOTS: usize = 1024;

/// Bytes of a static shared array of [`SHARED_TREE_SLOTS`] `i32` (4096, 4 KiB).
pub const SHARED_TREE_SMEM_BYTES: u32 = (SHARED_TREE_SLOTS * core::mem::size_of::<i32>()) as u32;
