//! Exercise 15: a bug hunt in `interleaved_nobarrier`, the project's `interleaved` with one bug planted. `./x learn 15`
//! checks this file under the emulator's checks; `./x learn 15 --solution` shows the project's kernel beside it.
//! The place to change is marked `EXERCISE`.
use kernels::device::global::GlobalMut;
use kernels::device::thread::{block_dim_x, block_idx_x, sync_threads, thread_idx_x};
use kernels::index::block_segment;
use kernels::kernel;

// EXERCISE 15: a bug hunt. This kernel looks right and is wrong: `./x learn 15` runs it under the emulator's checks; read the report, find the line, fix it.
kernel! {
    pub unsafe fn interleaved_nobarrier(g_idata: GlobalMut<i32>, g_odata: GlobalMut<i32>, n: u32) {
        let tid = thread_idx_x();
        let block = block_dim_x();
        let b = block_idx_x();
        // Block `b`'s segment: `len` elements from `start` (the last block's may be short).
        let (start, len) = block_segment(n, b, block);
        // SAFETY: `start < n` for every block of the grid, so this stays in the buffer.
        let idata = unsafe { g_idata.offset(start as usize) };

        // SAFETY: idata holds this block's `len` elements; every thread of the block calls it.
        unsafe { interleaved_tree(idata, tid, block, len) };

        if tid == 0 {
            // SAFETY: len >= 1, and g_odata holds gridDim.x elements.
            unsafe { g_odata.write(b as usize, idata.read(0)) };
        }
    }
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
