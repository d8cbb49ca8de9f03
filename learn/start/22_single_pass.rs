//! Exercise 22: `single_pass`, from `vector_loads` with `single_pass`'s arguments. `./x learn 22` says what to change and why,
//! and checks this file; `./x learn 22 --solution` shows the project's kernel beside it.
//! The place to change is marked `EXERCISE`.
use kernels::collective::block::{BLOCK_SUM_SLOTS, block_sum};
use kernels::collective::thread::{LOADS_PER_TRIP, thread_sum_v4};
use kernels::collective::warp::warp_sum_shfl;
use kernels::device::global::{Global, GlobalMut};
use kernels::device::thread::{block_idx_x, thread_idx_x};
use kernels::kernel;
use kernels::static_shared;

kernel! {
    pub unsafe fn single_pass(
        g_idata: Global<i32>,
        g_partials: GlobalMut<i32>,
        g_ticket: GlobalMut<u32>,
        g_out: GlobalMut<i32>,
        n: u32,
    ) {
        let slots = static_shared!(VECTOR_LOADS_SLOTS: [i32; BLOCK_SUM_SLOTS]);
        // SAFETY: g_idata holds n elements that nobody writes during the kernel.
        let sum = unsafe { thread_sum_v4::<LOADS_PER_TRIP>(g_idata, n) };
        // SAFETY: every thread gets here; the block is a multiple of 32, at most 1024.
        let total = unsafe { block_sum(sum, slots, warp_sum_shfl) };
        // EXERCISE 22: finish on the device: thread 0 publishes the block's sum to g_partials, fences, draws a ticket; the block that draws the last ticket adds every partial into g_out[0] and puts the ticket back to 0.
        if thread_idx_x() == 0 {
            // SAFETY: g_partials holds gridDim.x elements.
            unsafe { g_partials.write(block_idx_x() as usize, total)};
        }
    }
}
