//! Exercise 17: a bug hunt in `unroll_warps8_volatile`, the project's `unroll_warps8` with one bug planted. `./x learn 17`
//! checks this file under the emulator's checks; `./x learn 17 --solution` shows the project's kernel beside it.
//! The place to change is marked `EXERCISE`.
use kernels::device::global::GlobalMut;
use kernels::device::thread::{block_dim_x, block_idx_x, sync_threads, thread_idx_x};
use kernels::device::warp::sync_warp;
use kernels::device::{FULL_MASK, WARP_SIZE};
use kernels::index::{block_segment, fold_count, fold_index};
use kernels::kernel;

// EXERCISE 17: a bug hunt. This kernel looks right and is wrong: `./x learn 17` runs it under the emulator's checks; read the report, find the line, fix it.
kernel! {
    pub unsafe fn unroll_warps8_volatile(g_idata: GlobalMut<i32>, g_odata: GlobalMut<i32>, n: u32) {
        let tid = thread_idx_x();
        let block = block_dim_x();
        let (start, len) = block_segment(n, block_idx_x(), 8 * block);
        // SAFETY: `start < n` for every block of the grid, so this stays in the buffer.
        let idata = unsafe { g_idata.offset(start as usize) };

        // SAFETY: `idata` holds the `len` elements of this block's segment.
        unsafe { fold8(idata, tid, block, len) };
        sync_threads();

        let len = len.min(block);
        let mut stride = block / 2;
        while stride > WARP_SIZE {
            // SAFETY: `idata` holds `len` elements; rounds are separated by the barrier below.
            unsafe { add_pair(idata, tid, stride, len) };
            sync_threads();
            stride >>= 1;
        }

        if tid < WARP_SIZE {
            // SAFETY: exactly warp 0 enters (blockDim >= 32), len <= blockDim, and the last
            // block barrier (after the fold or the loop) follows every other warp's writes.
            unsafe { last_warp(idata, tid, len) };
        }

        if tid == 0 {
            // SAFETY: len >= 1, and g_odata holds gridDim.x elements.
            unsafe { g_odata.write(block_idx_x() as usize, idata.read(0))};
        }
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
// On the emulator a fault in a round names the line of `last_warp` that ran it.
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
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
        add_pair(idata, tid, 16, len);
        add_pair(idata, tid, 8, len);
        add_pair(idata, tid, 4, len);
        sync_warp(FULL_MASK);
        add_pair(idata, tid, 2, len);
        sync_warp(FULL_MASK);
        add_pair(idata, tid, 1, len);
    }
}
