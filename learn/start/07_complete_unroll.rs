//! Exercise 7: `complete_unroll`, from `complete_unroll_warps8`. `./x learn 7` says what to change and why,
//! and checks this file; `./x learn 7 --solution` shows the project's kernel beside it.
//! The place to change is marked `EXERCISE`.
use kernels::device::global::GlobalMut;
use kernels::device::thread::{block_dim_x, block_idx_x, sync_threads, thread_idx_x};
use kernels::device::warp::sync_warp;
use kernels::device::{FULL_MASK, WARP_SIZE};
use kernels::index::{block_segment, fold_count, fold_index};

#[inline(always)]
pub unsafe fn complete_unroll<const BLOCK: u32>(g_idata: GlobalMut<i32>, g_odata: GlobalMut<i32>, n: u32) {
    let tid = thread_idx_x();
    // EXERCISE 7: use the compile-time BLOCK instead of block_dim_x(), and put each barrier inside its `if BLOCK >= …`.
    let block = block_dim_x();
    let (start, len) = block_segment(n, block_idx_x(), 8 * block);
    // SAFETY: `start < n` for every block of the grid, so this stays in the buffer.
    let idata = unsafe { g_idata.offset(start as usize) };

    // SAFETY: `idata` holds the `len` elements of this block's segment.
    unsafe { fold8(idata, tid, block, len) };
    sync_threads();

    let len = len.min(block);
    if block >= 1024 {
        // SAFETY: `idata` holds `len` elements, and a block barrier separates each round
        // from the next (the same holds for the three rounds below).
        unsafe { add_pair(idata, tid, 512, len) };
    }
    sync_threads();
    if block >= 512 {
        // SAFETY: as above.
        unsafe { add_pair(idata, tid, 256, len) };
    }
    sync_threads();
    if block >= 256 {
        // SAFETY: as above.
        unsafe { add_pair(idata, tid, 128, len) };
    }
    sync_threads();
    if block >= 128 {
        // SAFETY: as above.
        unsafe { add_pair(idata, tid, 64, len) };
    }
    sync_threads();

    if tid < WARP_SIZE {
        // SAFETY: exactly warp 0 enters (blockDim >= 32), len <= blockDim, and the block
        // barrier just above follows every other warp's writes.
        unsafe { last_warp(idata, tid, len) };
    }

    if tid == 0 {
        // SAFETY: len >= 1, and g_odata holds gridDim.x elements.
        unsafe { g_odata.write(block_idx_x() as usize, idata.read(0)) };
    }
}

#[inline(always)]
unsafe fn fold8(idata: GlobalMut<i32>, tid: u32, block: u32, len: u32) {
    let mut sum = 0i32;
    if fold_index(tid, block, 7) < len {
        // The whole stripe exists (every block but the short last one): eight loads that do
        // not depend on each other, unguarded (the loop over a constant count is unrolled, so
        // they issue back to back), as the book's `if (idx + 7 * blockDim.x < n)`.
        for k in 0..8 {
            // SAFETY: fold_index(tid, block, k) <= fold_index(tid, block, 7) < len.
            sum = sum.wrapping_add(unsafe { idata.read(fold_index(tid, block, k) as usize) });
        }
    } else {
        // The short last block: only the elements that exist (none for a thread past its end).
        let count = fold_count(len, block, tid, 8);
        if count == 0 {
            return;
        }
        for k in 0..count {
            // SAFETY: k < count means fold_index(tid, block, k) < len (index::fold_count).
            sum = sum.wrapping_add(unsafe { idata.read(fold_index(tid, block, k) as usize) });
        }
    }
    // SAFETY: tid < len here (fold_index(tid, block, 0) = tid). Slot tid is read and written
    // by thread tid only in this phase (the other indices it reads are >= blockDim, which no
    // thread writes).
    unsafe { idata.write(tid as usize, sum) };
}

#[inline(always)]
unsafe fn add_pair(idata: GlobalMut<i32>, tid: u32, stride: u32, len: u32) {
    if tid < stride && tid + stride < len {
        let (i, j) = (tid as usize, (tid + stride) as usize);
        // SAFETY: i < j < len; slot i is written by thread `tid` only, slot j (>= stride) is
        // written by no thread of this round.
        unsafe { idata.write(i, idata.read(i).wrapping_add(idata.read(j))) };
    }
}

#[inline(always)]
unsafe fn last_warp(idata: GlobalMut<i32>, tid: u32, len: u32) {
    // SAFETY: the caller's contract, and the `sync_warp` between two rounds is the barrier
    // `add_pair` asks for (only warp 0 reads or writes in these rounds).
    unsafe {
        add_pair(idata, tid, 32, len);
        sync_warp(FULL_MASK);
        add_pair(idata, tid, 16, len);
        sync_warp(FULL_MASK);
        add_pair(idata, tid, 8, len);
        sync_warp(FULL_MASK);
        add_pair(idata, tid, 4, len);
        sync_warp(FULL_MASK);
        add_pair(idata, tid, 2, len);
        sync_warp(FULL_MASK);
        add_pair(idata, tid, 1, len);
    }
}
