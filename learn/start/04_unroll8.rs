//! Exercise 4: `unroll8`, from `unroll2`. `./x learn 4` says what to change and why,
//! and checks this file; `./x learn 4 --solution` shows the project's kernel beside it.
//! The place to change is marked `EXERCISE`.
use kernels::device::global::GlobalMut;
use kernels::device::thread::{block_dim_x, block_idx_x, sync_threads, thread_idx_x};
use kernels::index::{block_segment, fold_count, fold_index};
use kernels::kernel;

/// Elements each thread adds before the tree: the grid is ceil(n / (block × ITEMS_PER_THREAD)).
pub const ITEMS_PER_THREAD: u32 = 2;

kernel! {
    pub unsafe fn unroll8(g_idata: GlobalMut<i32>, g_odata: GlobalMut<i32>, n: u32) {
        let tid = thread_idx_x();
        let block = block_dim_x();
        let b = block_idx_x();
        // Block `b`'s segment: the 2 data blocks from `2b*blockDim`, `len` elements of them
        // (the last block's may be short).
        let (start, len) = block_segment(n, b, 2 * block);
        // SAFETY: `start < n` for every block of the grid, so this stays in the buffer.
        let idata = unsafe { g_idata.offset(start as usize) };

        // SAFETY: `idata` holds the `len` elements of this block's segment.
        unsafe { fold2(idata, tid, block, len) };
        sync_threads();

        // SAFETY: after the fold, slots 0..min(len, block) hold sums; every thread calls it.
        unsafe { interleaved_tree(idata, tid, block, len.min(block)) };

        if tid == 0 {
            // SAFETY: len >= 1, and g_odata holds gridDim.x elements.
            unsafe { g_odata.write(b as usize, idata.read(0)) };
        }
    }
}

#[inline(always)]
unsafe fn fold2(idata: GlobalMut<i32>, tid: u32, block: u32, len: u32) {
    let mut sum = 0i32;
    if fold_index(tid, block, 1) < len {
        // The whole stripe exists (every block but the short last one): two loads that do
        // not depend on each other, unguarded (the loop over a constant count is unrolled, so
        // they issue back to back), as the book's `if (idx + blockDim.x < n)`.
        // EXERCISE 4: fold 8 data blocks per block: ITEMS_PER_THREAD = 8, and each 2 of the factor says it.
        for k in 0..2 {
            // SAFETY: fold_index(tid, block, k) <= fold_index(tid, block, 1) < len.
            sum = sum.wrapping_add(unsafe { idata.read(fold_index(tid, block, k) as usize) });
        }
    } else {
        // The short last block: only the elements that exist (none for a thread past its end).
        let count = fold_count(len, block, tid, 2);
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
unsafe fn interleaved_tree(idata: GlobalMut<i32>, tid: u32, block: u32, len: u32) {
    let mut stride = block / 2;
    if len == block {
        // A full segment (every block but the short last one; the whole block takes this
        // path): `tid < stride` already puts the partner `tid + stride < 2 * stride <= block`
        // inside it, so each round tests one condition, as the book's loop does.
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
    // The short last segment: the partner must exist too.
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
