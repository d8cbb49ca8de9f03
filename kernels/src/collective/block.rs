//! Block-level sums: every thread of the block takes part, and each function holds block
//! barriers, so every thread of the block must call it (never from divergent code).
//!
//! * [`block_sum`] — registers in, one total out, through one shared slot per warp: the
//!   block reduction of `warp_shuffle` and every kernel after it (CUB's
//!   `BlockReduce<…, BLOCK_REDUCE_WARP_REDUCTIONS>`).
//! * [`add_pair`], [`interleaved_tree`], [`shared_tree`] — trees over an array of one slot
//!   per thread, in global or shared memory: the chapter-3 and chapter-5 kernels.

use crate::device::global::{Global, GlobalMut};
use crate::device::shared::Shared;
use crate::device::thread::{block_dim_x, lane_id, sync_threads, warp_id};
use crate::device::warp::sync_warp;
use crate::device::{FULL_MASK, WARP_SIZE};
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

/// One round of the interleaved tree for one thread: thread `tid < stride` adds
/// `idata[tid + stride]` into `idata[tid]` when `tid + stride < len` (the slot holds a sum).
/// In a round the written slots are `[0, stride)` and the read ones `[stride, 2*stride)`:
/// disjoint, so the threads of one round never race with each other.
///
/// # Safety
/// `idata` holds `len` elements. Between two rounds the caller puts a barrier that covers
/// every thread of the later round's readers and the earlier round's writers.
#[inline(always)]
pub unsafe fn add_pair(idata: GlobalMut<i32>, tid: u32, stride: u32, len: u32) {
    if tid < stride && tid + stride < len {
        let (i, j) = (tid as usize, (tid + stride) as usize);
        // SAFETY: i < j < len; slot i is written by thread `tid` only, slot j (>= stride) is
        // written by no thread of this round.
        unsafe { idata.write(i, idata.read(i).wrapping_add(idata.read(j))) };
    }
}

/// The interleaved tree (taught by `interleaved`; phase 3 of `unroll2`/`unroll4`/`unroll8`)
/// over the `len ≤ blockDim` slots `idata[0..len)`. For `stride = block/2, …, 1`, thread
/// `tid < stride` adds `idata[tid + stride]` into `idata[tid]` when that slot exists; a block
/// barrier ends every round. Afterwards `idata[0]` holds the sum of the `len` slots.
///
/// ```text
///  block = 8       idata: a0 a1 a2 a3 a4 a5 a6 a7
///  stride 4 (t0-3)        ^--+--+--+--'  '  '  '      a0+=a4  a1+=a5  a2+=a6  a3+=a7
///  stride 2 (t0-1)        ^--+--'  '                  a0+=a2  a1+=a3
///  stride 1 (t0)          ^--'                        a0+=a1
/// ```
///
/// # Safety
/// `idata` holds `len` elements (`1 ≤ len ≤ block`), and every thread of the block calls this
/// with the same `idata`, `block` and `len` (it contains barriers).
#[inline(always)]
pub unsafe fn interleaved_tree(idata: GlobalMut<i32>, tid: u32, block: u32, len: u32) {
    let mut stride = block / 2;
    if len == block {
        // A full segment (every block but the short last one; `len` is the same for every
        // thread, so the whole block takes this path): `tid < stride` already puts the
        // partner `tid + stride < 2 * stride <= block` inside it, so the loop tests one
        // condition per round, as the book's does.
        while stride > 0 {
            if tid < stride {
                let (i, j) = (tid as usize, (tid + stride) as usize);
                // SAFETY: i < j < block = len; only thread `tid` writes idata[tid] in this
                // round, and idata[j] (j >= stride) is written by no thread in this round.
                unsafe { idata.write(i, idata.read(i).wrapping_add(idata.read(j))) };
            }
            sync_threads();
            stride >>= 1;
        }
        return;
    }
    while stride > 0 {
        if tid < stride && tid + stride < len {
            let (i, j) = (tid as usize, (tid + stride) as usize);
            // SAFETY: i < j < len; as above.
            unsafe { idata.write(i, idata.read(i).wrapping_add(idata.read(j))) };
        }
        sync_threads();
        stride >>= 1;
    }
}

/// The neighbored-pair tree over the `len ≤ block` slots `idata[0..len)` (taught by
/// `neighbored`): for `stride = 1, 2, 4, …, block/2`, thread `tid` adds `idata[tid + stride]`
/// into `idata[tid]` when `works(tid, stride)` (the book's `tid % (2 * stride) == 0`) and the
/// partner exists; a block barrier ends every round. Afterwards `idata[0]` holds the sum.
/// `neighbored` and `neighbored_modulo` differ only in how `works` computes the remainder.
///
/// # Safety
/// `idata` holds `len` elements (`1 ≤ len ≤ block`); `block` is a power of two;
/// `works(tid, stride)` is true only for multiples of `2 * stride`; every thread of the block
/// calls this with the same `idata`, `block` and `len` (it contains barriers).
#[inline(always)]
pub unsafe fn neighbored_tree(idata: GlobalMut<i32>, tid: u32, block: u32, len: u32, works: impl Fn(u32, u32) -> bool) {
    if len == block {
        // A full segment (the whole block takes this path, `len` being the same for every
        // thread): a multiple of 2·stride below the power of two `block` is at most
        // block − 2·stride, so its partner is inside, and each round tests `works` only, as
        // the book's loop does.
        // SAFETY: forwarded; the partner test is implied, as just said.
        unsafe { neighbored_rounds(idata, tid, block, works) };
    } else {
        // SAFETY: forwarded; the partner test keeps j < len.
        unsafe { neighbored_rounds(idata, tid, block, |tid, stride| works(tid, stride) && tid + stride < len) };
    }
}

/// The rounds of [`neighbored_tree`]: thread `tid` adds its partner when `adds(tid, stride)`.
///
/// # Safety
/// `adds(tid, stride)` is true only for multiples `tid` of `2 * stride` whose partner
/// `tid + stride` is one of `idata`'s elements; every thread calls this (it has barriers).
#[inline(always)]
unsafe fn neighbored_rounds(idata: GlobalMut<i32>, tid: u32, block: u32, adds: impl Fn(u32, u32) -> bool) {
    let mut stride = 1;
    while stride < block {
        if adds(tid, stride) {
            let (i, j) = (tid as usize, (tid + stride) as usize);
            // SAFETY: i < j, both in `idata` (the caller's promise). In this round the writers
            // are multiples of 2*stride and the partners j = i + stride are not, so no slot is
            // both read and written, and each slot has one writer.
            unsafe { idata.write(i, idata.read(i).wrapping_add(idata.read(j))) };
        }
        sync_threads();
        stride *= 2;
    }
}

/// The frame of the one-element-per-thread tree kernels of chapters 3 and 5 (`neighbored`,
/// `neighbored_modulo`, `neighbored_less`, `interleaved`, `gmem`): block `b` owns the
/// `blockDim` elements from `b × blockDim` (`len` of them exist; the last block may be short),
/// `tree(idata, tid, blockDim, len)` — the lesson of each kernel — adds them into `idata[0]`,
/// and thread 0 writes that to `g_odata[b]`.
///
/// # Safety
/// As for those kernels: `g_idata` holds `n ≥ 1` elements (overwritten), `g_odata` one per
/// block of a grid of `ceil(n / blockDim)`; every thread of the block calls it; `tree` leaves
/// the sum of `idata[0..len)` in `idata[0]`, touching only those slots.
#[inline(always)]
pub unsafe fn segment_tree(
    g_idata: GlobalMut<i32>,
    g_odata: GlobalMut<i32>,
    n: u32,
    tree: impl FnOnce(GlobalMut<i32>, u32, u32, u32),
) {
    let tid = crate::device::thread::thread_idx_x();
    let block = block_dim_x();
    let b = crate::device::thread::block_idx_x();
    let (start, len) = crate::index::block_segment(n, b, block);
    // SAFETY: `start < n` for every block of the grid, so this stays in the buffer.
    let idata = unsafe { g_idata.offset(start as usize) };
    tree(idata, tid, block, len);
    if tid == 0 {
        // SAFETY: len >= 1, and g_odata holds gridDim.x elements.
        unsafe { g_odata.write(b as usize, idata.read(0)) };
    }
}

/// The body of `smem_unroll4` and `smem_unroll4_dyn` (taught by `smem_unroll4`), whatever
/// shared array `smem` they use: each thread adds its stripe of four elements
/// ([`thread_sum_stripe4`](super::thread::thread_sum_stripe4)) into its slot, a block
/// barrier, the shared tree ([`shared_tree`]), and thread 0 writes the block's sum.
///
/// # Safety
/// As for those kernels: `g_idata` holds `n ≥ 1` elements, `g_odata` one per block of a grid
/// of `ceil(n / (4 × blockDim))`; `smem` holds at least `blockDim` slots; every thread calls it.
#[inline(always)]
pub unsafe fn stripe4_shared_tree(g_idata: Global<i32>, g_odata: GlobalMut<i32>, n: u32, smem: Shared<i32>) {
    use super::thread::{STRIPE4, thread_sum_stripe4};
    let tid = crate::device::thread::thread_idx_x();
    let block = block_dim_x();
    let b = crate::device::thread::block_idx_x();
    let (start, len) = crate::index::block_segment(n, b, STRIPE4 as u32 * block);
    // SAFETY: `start < n` for every block of the grid, so this stays in the buffer.
    let idata = unsafe { g_idata.offset(start as usize) };
    // SAFETY: the segment at `idata` holds `len` elements.
    let sum = unsafe { thread_sum_stripe4(idata, tid, block, len) };
    // SAFETY: tid < blockDim <= smem's length; each thread writes its own slot.
    unsafe { smem.write(tid as usize, sum) };
    sync_threads();
    // SAFETY: smem holds blockDim slots, all written before the barrier above.
    unsafe { shared_tree(smem, tid, block) };
    if tid == 0 {
        // SAFETY: thread 0 wrote smem[0] last and reads it back; g_odata holds gridDim.x
        // elements.
        unsafe { g_odata.write(b as usize, smem.read(0)) };
    }
}

/// The body of the unrolled chapter-3 kernels (`unroll2`, `unroll4`, `unroll8`, taught by
/// `unroll2`): block `b` owns the `N × blockDim` elements from `b × N × blockDim`; each
/// thread first folds its `N` elements (one per data block) into its slot
/// ([`fold_blocks`](super::thread::fold_blocks)), a block barrier, then the interleaved tree
/// over the first `blockDim` slots, and thread 0 writes the block's sum to `g_odata[b]`.
///
/// # Safety
/// As for the kernels: `g_idata` holds `n ≥ 1` elements (overwritten), `g_odata` one per
/// block of a grid of `ceil(n / (N × blockDim))`; every thread of the block calls it.
#[inline(always)]
pub unsafe fn fold_then_tree<const N: usize>(g_idata: GlobalMut<i32>, g_odata: GlobalMut<i32>, n: u32) {
    let tid = crate::device::thread::thread_idx_x();
    let block = block_dim_x();
    let b = crate::device::thread::block_idx_x();
    let (start, len) = crate::index::block_segment(n, b, N as u32 * block);
    // SAFETY: `start < n` for every block of the grid, so this stays in the buffer.
    let idata = unsafe { g_idata.offset(start as usize) };
    // SAFETY: `idata` holds the `len` elements of this block's segment.
    unsafe { super::thread::fold_blocks::<N>(idata, tid, block, len) };
    sync_threads();
    // SAFETY: after the fold, slots 0..min(len, block) hold sums; every thread calls it.
    unsafe { interleaved_tree(idata, tid, block, len.min(block)) };
    if tid == 0 {
        // SAFETY: len >= 1, and g_odata holds gridDim.x elements.
        unsafe { g_odata.write(b as usize, idata.read(0)) };
    }
}

/// Slots a kernel's shared array needs for [`shared_tree`] at any block size: one `i32` per
/// thread of the largest block (1024).
pub const SHARED_TREE_SLOTS: usize = 1024;

/// Bytes of a static shared array of [`SHARED_TREE_SLOTS`] `i32` (4096, 4 KiB).
pub const SHARED_TREE_SMEM_BYTES: u32 = (SHARED_TREE_SLOTS * core::mem::size_of::<i32>()) as u32;

/// The in-block tree of the shared-memory kernels (taught by `smem`): sums
/// `smem[0..blockDim)` into `smem[0]` (interleaved pairs; block barriers above the last warp,
/// `__syncwarp` within it).
///
/// Called by every thread of the block; afterwards thread 0 may read `smem[0]`, which it
/// wrote itself. No other thread may read `smem[0]` without a further block barrier.
///
/// # Safety
/// `smem` holds at least `block` elements, all written and made visible by a block barrier
/// before the call; `block` is `blockDim.x`, a power of two in 32..=1024; every thread of
/// the block calls this (it contains block barriers).
#[inline(always)]
pub unsafe fn shared_tree(smem: Shared<i32>, tid: u32, block: u32) {
    for s in [512u32, 256, 128, 64] {
        if 2 * s <= block && tid < s {
            let (i, j) = (tid as usize, (tid + s) as usize);
            // SAFETY: i < j < 2s <= block. Thread `tid` alone writes smem[tid]; smem[j]
            // (j >= s) is written by no thread at this level.
            unsafe { smem.write(i, smem.read(i).wrapping_add(smem.read(j))) };
        }
        sync_threads();
    }
    if tid < 32 {
        for s in [32u32, 16, 8, 4, 2, 1] {
            if 2 * s <= block && tid < s {
                let (i, j) = (tid as usize, (tid + s) as usize);
                // SAFETY: i < j < 2s <= block. Lanes write [0, s) and read [s, 2s) besides
                // their own slot; the warp barrier below orders the levels.
                unsafe { smem.write(i, smem.read(i).wrapping_add(smem.read(j))) };
            }
            sync_warp(FULL_MASK);
        }
    }
}
