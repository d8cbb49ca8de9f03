//! Exercise 21: `vector_loads`, from `grid_stride`. `./x learn 21` says what to change and why,
//! and checks this file; `./x learn 21 --solution` shows the project's kernel beside it.
//! The place to change is marked `EXERCISE`.
use kernels::collective::block::{BLOCK_SUM_SLOTS, block_sum};
use kernels::collective::warp::warp_sum_shfl;
use kernels::device::global::{Global, GlobalMut};
use kernels::device::thread::{block_dim_x, block_idx_x, global_idx_x, grid_dim_x, thread_idx_x};
use kernels::kernel;
use kernels::static_shared;

kernel! {
    pub unsafe fn vector_loads(g_idata: Global<i32>, g_odata: GlobalMut<i32>, n: u32) {
        let slots = static_shared!(GRID_STRIDE_SLOTS: [i32; BLOCK_SUM_SLOTS]);
        let n = n as usize;
        let stride = grid_dim_x() as usize * block_dim_x() as usize;
        // EXERCISE 21: read 16 bytes per load: split the input at its 16-byte boundaries (split_for_v4), load the aligned body with load_v4_nc, four vectors per thread per trip, and the unaligned head and tail one element at a time.
        let mut i = global_idx_x();
        let mut sum = 0i32;
        while i < n {
            // SAFETY: i < n.
            sum = sum.wrapping_add(unsafe { g_idata.read(i) });
            i += stride;
        }
        // SAFETY: every thread gets here; the block is a multiple of 32, at most 1024.
        let total = unsafe { block_sum(sum, slots, warp_sum_shfl) };
        if thread_idx_x() == 0 {
            // SAFETY: g_odata holds gridDim.x elements.
            unsafe { g_odata.write(block_idx_x() as usize, total)};
        }
    }
}
