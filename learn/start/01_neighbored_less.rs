//! Exercise 1: `neighbored_less`, from `neighbored`. `./x learn 1` says what to change and why,
//! and checks this file; `./x learn 1 --solution` shows the project's kernel beside it.
//! The place to change is marked `EXERCISE`.
use kernels::device::global::GlobalMut;
use kernels::device::thread::{block_dim_x, block_idx_x, sync_threads, thread_idx_x};
use kernels::index::block_segment;
use kernels::kernel;

kernel! {
    pub unsafe fn neighbored_less(g_idata: GlobalMut<i32>, g_odata: GlobalMut<i32>, n: u32) {
        let tid = thread_idx_x();
        let block = block_dim_x();
        let b = block_idx_x();
        // Block `b`'s segment: `len` elements from `start` (the last block's may be short).
        let (start, len) = block_segment(n, b, block);
        // SAFETY: `start < n` for every block of the grid, so this stays in the buffer.
        let idata = unsafe { g_idata.offset(start as usize) };

        // The tree: at stride 1, 2, 4, …, thread `tid` adds its neighbour `stride` places
        // away when `tid % (2*stride) == 0` (`is_multiple_of` is that remainder without a
        // divide-by-zero panic path; LLVM turns it into `tid & (2*stride - 1) == 0`, which
        // `neighbored_modulo` does not let it do).
        // EXERCISE 1: map the working threads to the first ones: thread tid works on index 2*stride*tid.
        let works = |tid: u32, stride: u32| tid.is_multiple_of(2 * stride);
        if len == block {
            // A full segment (every block but the short last one): a multiple of 2·stride
            // below the power of two `block` has its partner inside, so each round tests
            // `works` only, as the book's loop does.
            // SAFETY: as just said; every thread of the block calls it.
            unsafe { rounds(idata, tid, block, works) };
        } else {
            // The short last segment: the partner must exist too.
            // SAFETY: the partner test keeps j < len; every thread of the block calls it.
            unsafe { rounds(idata, tid, block, |tid, stride| works(tid, stride) && tid + stride < len) };
        }

        if tid == 0 {
            // SAFETY: len >= 1, and g_odata holds gridDim.x elements.
            unsafe { g_odata.write(b as usize, idata.read(0)) };
        }
    }
}

#[inline(always)]
unsafe fn rounds(idata: GlobalMut<i32>, tid: u32, block: u32, adds: impl Fn(u32, u32) -> bool) {
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
