//! Exercise 2: `interleaved`, from `neighbored_less`. `./x learn 2` says what to change and why,
//! and checks this file; `./x learn 2 --solution` shows the project's kernel beside it.
//! The place to change is marked `EXERCISE`.
use kernels::device::global::GlobalMut;
use kernels::device::thread::{block_dim_x, block_idx_x, sync_threads, thread_idx_x};
use kernels::index::block_segment;
use kernels::index::neighbored_less_index;
use kernels::kernel;

kernel! {
    pub unsafe fn interleaved(g_idata: GlobalMut<i32>, g_odata: GlobalMut<i32>, n: u32) {
        let tid = thread_idx_x();
        let block = block_dim_x();
        let b = block_idx_x();
        // Block `b`'s segment: `len` elements from `start` (the last block's may be short).
        let (start, len) = block_segment(n, b, block);
        // SAFETY: `start < n` for every block of the grid, so this stays in the buffer.
        let idata = unsafe { g_idata.offset(start as usize) };

        // The tree, its working threads packed first: thread `tid` adds the pair at
        // `index = 2*stride*tid`.
        if len == block {
            // A full segment (the whole block takes this path): the book's test. With `block`
            // a power of two, `index < block` puts the partner, `index + stride`, inside it too
            // (index is a multiple of 2*stride).
            // SAFETY: as just said, both slots are among the `len` of `idata`.
            unsafe { packed_rounds(idata, tid, block, |index, _| index < block) };
        } else {
            // A short last segment: the partner itself must exist (`index + stride < len`
            // implies `index < len <= blockDim`, the book's test).
            // SAFETY: both slots are below `len`.
            unsafe { packed_rounds(idata, tid, block, |index, stride| index + stride < len) };
        }

        if tid == 0 {
            // SAFETY: len >= 1, and g_odata holds gridDim.x elements.
            unsafe { g_odata.write(b as usize, idata.read(0)) };
        }
    }
}

#[inline(always)]
unsafe fn packed_rounds(idata: GlobalMut<i32>, tid: u32, block: u32, works: impl Fn(u32, u32) -> bool) {
    let mut stride = 1;
    while stride < block {
        // EXERCISE 2: pair elements `stride` apart, stride halving from block/2: thread tid adds idata[tid + stride].
        let index = neighbored_less_index(tid, stride);
        if works(index, stride) {
            let (i, j) = (index as usize, (index + stride) as usize);
            // SAFETY: index < j, both slots of `idata` (the caller's promise). In this round the
            // written slots are the multiples of 2*stride, one per thread, and the read
            // partners are not, so no slot is both read and written.
            unsafe { idata.write(i, idata.read(i).wrapping_add(idata.read(j))) };
        }
        sync_threads();
        stride *= 2;
    }
}
