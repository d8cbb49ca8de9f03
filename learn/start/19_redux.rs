//! Exercise 19: `redux`, from `warp_shuffle`. `./x learn 19` says what to change and why,
//! and checks this file; `./x learn 19 --solution` shows the project's kernel beside it.
//! The place to change is marked `EXERCISE`.
use kernels::collective::block::{BLOCK_SUM_SLOTS, block_sum};
use kernels::collective::thread::thread_sum_items;
use kernels::collective::warp::warp_sum_shfl;
use kernels::device::global::{Global, GlobalMut};
use kernels::device::thread::{block_dim_x, block_idx_x, thread_idx_x};
use kernels::index::segment_len;
use kernels::kernel;
use kernels::reduce::ITEMS_PER_THREAD;
use kernels::static_shared;

kernel! {
    pub unsafe fn redux(g_idata: Global<i32>, g_odata: GlobalMut<i32>, n: u32) {
        let slots = static_shared!(WARP_SHUFFLE_SLOTS: [i32; BLOCK_SUM_SLOTS]);
        let tid = thread_idx_x() as usize;
        let block = block_dim_x() as usize;
        let start = block_idx_x() as usize * ITEMS_PER_THREAD * block;
        let len = segment_len(n as usize, start, ITEMS_PER_THREAD * block);
        // SAFETY: start < n for every block of the grid, and the segment holds len elements.
        let sum = unsafe { thread_sum_items::<ITEMS_PER_THREAD>(g_idata.offset(start), len, tid, block) };
        // SAFETY: every thread gets here; the block is a multiple of 32, at most 1024.
        // EXERCISE 19: sum each warp with one instruction: give block_sum a warp step that returns reduce_add_sync(FULL_MASK, value) (redux.sync, sm_80 and newer).
        let total = unsafe { block_sum(sum, slots, warp_sum_shfl) };
        if tid == 0 {
            // SAFETY: g_odata holds gridDim.x elements.
            unsafe { g_odata.write(block_idx_x() as usize, total)};
        }
    }
}
