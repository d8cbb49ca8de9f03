//! Exercise 20: `grid_stride`, from `warp_shuffle`. `./x learn 20` says what to change and why,
//! and checks this file; `./x learn 20 --solution` shows the project's kernel beside it.
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

/// The grid the host launches: `false`, one block per `ITEMS_PER_THREAD × blockDim` elements (the
/// grid sized to the data, which this kernel needs); `true`, as many blocks as the GPU holds at
/// once, whatever n (`Grid::Resident`, the grid sized to the machine: the project's kernel is
/// registered so). Read by `./x learn`, not by the kernel.
pub const RESIDENT_GRID: bool = false;

kernel! {
    pub unsafe fn grid_stride(g_idata: Global<i32>, g_odata: GlobalMut<i32>, n: u32) {
        let slots = static_shared!(WARP_SHUFFLE_SLOTS: [i32; BLOCK_SUM_SLOTS]);
        let tid = thread_idx_x() as usize;
        let block = block_dim_x() as usize;
        // EXERCISE 20: set RESIDENT_GRID to true (a grid of the GPU's size, whatever n) and loop: thread g adds elements g, g + gridDim*blockDim, … below n.
        let start = block_idx_x() as usize * ITEMS_PER_THREAD * block;
        let len = segment_len(n as usize, start, ITEMS_PER_THREAD * block);
        // SAFETY: start < n for every block of the grid, and the segment holds len elements.
        let sum = unsafe { thread_sum_items::<ITEMS_PER_THREAD>(g_idata.offset(start), len, tid, block) };
        // SAFETY: every thread gets here; the block is a multiple of 32, at most 1024.
        let total = unsafe { block_sum(sum, slots, warp_sum_shfl) };
        if tid == 0 {
            // SAFETY: g_odata holds gridDim.x elements.
            unsafe { g_odata.write(block_idx_x() as usize, total)};
        }
    }
}
