//! Exercise 23: `atomic_accumulate`, from `atomic_accumulate` with an atomic per thread and no block sum. `./x learn 23` says what to change and why,
//! and checks this file; `./x learn 23 --solution` shows the project's kernel beside it.
//! The place to change is marked `EXERCISE`.
use kernels::collective::block::{BLOCK_SUM_SLOTS, block_sum};
use kernels::collective::thread::{VEC, thread_sum_v4};
use kernels::collective::warp::warp_sum_shfl;
use kernels::device::atomic::{red_add_i32, store_relaxed_u32};
use kernels::device::global::{Global, GlobalMut};
use kernels::device::thread::{block_idx_x, thread_idx_x};
use kernels::{kernel, static_shared};

pub const ATOMIC_ACCUMULATE_LOADS: usize = 4;
pub const ATOMIC_ACCUMULATE_ITEMS_PER_TRIP: usize = ATOMIC_ACCUMULATE_LOADS * VEC;

kernel! {
    pub unsafe fn atomic_accumulate(g_idata: Global<i32>, g_acc: GlobalMut<i32>, n: u32, epoch: u32) {
        let slots = static_shared!(ATOMIC_ACCUMULATE_SLOTS: [i32; BLOCK_SUM_SLOTS]);
        if block_idx_x() == 0 && thread_idx_x() == 0 {
            let next = ((epoch + 1) % 2) as usize;
            // SAFETY: g_acc holds two elements; no block of this launch touches this one.
            unsafe { store_relaxed_u32(g_acc.offset(next).cast::<u32>(), 0) };
        }
        // SAFETY: g_idata holds n elements that nobody writes during the kernel.
        let sum = unsafe { thread_sum_v4::<ATOMIC_ACCUMULATE_LOADS>(g_idata, n) };
        // EXERCISE 23: sum the block first (block_sum), then let thread 0 alone add the block's sum into the result: one atomic per block.
        // SAFETY: g_acc holds two elements, and the precondition made this one 0.
        unsafe { red_add_i32(g_acc.offset((epoch % 2) as usize), sum) };
    }
}
