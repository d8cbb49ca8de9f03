//! Exercise 12: `squares_coalesced`, from `squares_chunked`. `./x learn 12` says what to change and why,
//! and checks this file; `./x learn 12 --solution` shows the project's kernel beside it.
//! The place to change is marked `EXERCISE`.
use helpers::{square, start_block_clock, stop_block_clock};
use kernels::device::global::{Global, GlobalMut};
use kernels::device::thread::{block_dim_x, thread_idx_x};
use kernels::index::chunk_bounds;
use kernels::kernel;

kernel! {
    pub unsafe fn squares_coalesced(g_idata: Global<i32>, g_result: GlobalMut<i32>, g_clocks: GlobalMut<u64>, n: u32) {
        let tid = thread_idx_x() as usize;
        let start = start_block_clock();

        // EXERCISE 12: let thread t read elements t, t + blockDim, t + 2·blockDim, …: each warp load one line.
        let (first, end) = chunk_bounds(n as usize, block_dim_x() as usize, tid);
        let mut sum = 0i32;
        for i in first..end {
            // SAFETY: i < end <= n.
            sum = sum.wrapping_add(square(unsafe { g_idata.read(i) }));
        }
        // SAFETY: tid < blockDim, and g_result holds blockDim elements.
        unsafe { g_result.write(tid, sum)};

        // SAFETY: g_clocks holds 2 = 2 * gridDim.x elements.
        unsafe { stop_block_clock(g_clocks, start) };
    }
}

// Helpers of kernels/src/sumsq/mod.rs, copied so that this file compiles on its own:
mod helpers {
    use kernels::device::clock::clock64;
    use kernels::device::global::GlobalMut;
    use kernels::device::thread::{block_idx_x, sync_threads, thread_idx_x};

    #[inline(always)]
    pub(super) fn square(x: i32) -> i32 {
        x.wrapping_mul(x)
    }

    #[inline(always)]
    #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
    pub(super) fn start_block_clock() -> u64 {
        let start = clock64();
        sync_threads();
        start
    }

    #[inline(always)]
    #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
    pub(super) unsafe fn stop_block_clock(g_clocks: GlobalMut<u64>, start: u64) {
        sync_threads();
        if thread_idx_x() == 0 {
            let end = clock64();
            let b = block_idx_x() as usize;
            // SAFETY: 2b + 1 < 2 * gridDim.x, the caller's promise; thread 0 of block b alone
            // writes these two slots.
            unsafe {
                g_clocks.write(2 * b, start);
                g_clocks.write(2 * b + 1, end);
            }
        }
    }
}
