//! Exercise 8: `smem`, from `gmem`. `./x learn 8` says what to change and why,
//! and checks this file; `./x learn 8 --solution` shows the project's kernel beside it.
//! The place to change is marked `EXERCISE`.
use kernels::device::FULL_MASK;
use kernels::device::global::GlobalMut;
use kernels::device::thread::{block_dim_x, block_idx_x, sync_threads, thread_idx_x};
use kernels::device::warp::sync_warp;
use kernels::index::block_segment;
use kernels::kernel;

kernel! {
    pub unsafe fn smem(g_idata: GlobalMut<i32>, g_odata: GlobalMut<i32>, n: u32) {
        let tid = thread_idx_x();
        let block = block_dim_x();
        let b = block_idx_x();
        // Block `b`'s segment: `len` elements from `start` (the last block's may be short).
        let (start, len) = block_segment(n, b, block);
        // SAFETY: `start < n` for every block of the grid, so this stays in the buffer.
        // EXERCISE 8: copy the block's segment into a shared array and run the tree there; only thread 0 writes to global memory.
        let idata = unsafe { g_idata.offset(start as usize) };

        // Levels above the last warp, written out as in the book (`blockDim >= 2s`). The
        // barrier is outside the `if`, so every thread of the block reaches it.
        for s in [512u32, 256, 128, 64] {
            if 2 * s <= block && tid < s && tid + s < len {
                let (i, j) = (tid as usize, (tid + s) as usize);
                // SAFETY: i < j < len. Thread `tid` alone writes idata[tid]; idata[j]
                // (j >= s) is written by no thread at this level.
                unsafe { idata.write(i, idata.read(i).wrapping_add(idata.read(j)))};
            }
            sync_threads();
        }
        // The last warp: no block barrier, a warp barrier per level (the book's lock-step `volatile`
        // version, without it, races on Volta and later: exercise 17).
        if tid < 32 {
            for s in [32u32, 16, 8, 4, 2, 1] {
                if tid < s && tid + s < len {
                    let (i, j) = (tid as usize, (tid + s) as usize);
                    // SAFETY: i < j < len. Lanes write [0, s) and read [s, 2s) besides
                    // their own slot: no slot has a writer and a different reader at
                    // this level; the warp barrier below orders the levels.
                    unsafe { idata.write(i, idata.read(i).wrapping_add(idata.read(j)))};
                }
                sync_warp(FULL_MASK);
            }
        }

        if tid == 0 {
            // SAFETY: len >= 1, and g_odata holds gridDim.x elements.
            unsafe { g_odata.write(b as usize, idata.read(0)) };
        }
    }
}
