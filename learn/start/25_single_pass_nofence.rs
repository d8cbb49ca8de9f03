//! Exercise 25: a bug hunt in `single_pass_nofence`, the project's `single_pass` with one bug planted. `./x learn 25`
//! checks this file under the emulator's checks; `./x learn 25 --solution` shows the project's kernel beside it.
//! The place to change is marked `EXERCISE`.
use kernels::collective::block::{BLOCK_SUM_SLOTS, block_sum};
use kernels::collective::thread::{LOADS_PER_TRIP, thread_sum_v4};
use kernels::collective::warp::warp_sum_shfl;
use kernels::device::atomic::{atomic_add_u32, load_relaxed_u32, store_relaxed_u32, thread_fence};
use kernels::device::global::{Global, GlobalMut};
use kernels::device::shared::Shared;
use kernels::device::thread::{block_dim_x, block_idx_x, grid_dim_x, sync_threads, thread_idx_x};
use kernels::{kernel, static_shared};

#[inline(always)]
unsafe fn publish_and_draw<T: Copy>(
    g_partials: GlobalMut<T>,
    g_ticket: GlobalMut<u32>,
    total: T,
    last_flag: Shared<u32>,
) -> bool {
    if thread_idx_x() == 0 {
        // SAFETY: g_partials holds gridDim.x elements; g_ticket is one aligned u32.
        let ticket = unsafe {
            g_partials.write(block_idx_x() as usize, total);
            atomic_add_u32(g_ticket, 1)
        };
        let last = ticket == grid_dim_x() - 1;
        if last {
            thread_fence(); // acquire: every other block's partial before our reads
        }
        // SAFETY: index 0 of a 1-element array; read by others only after the barrier.
        unsafe { last_flag.write(0, last as u32) };
    }
    sync_threads();
    // SAFETY: written by thread 0 before the barrier; not written again in this launch.
    unsafe { last_flag.read(0) != 0 }
}

// EXERCISE 25: a bug hunt. This kernel looks right and is wrong: `./x learn 25` runs it under the emulator's checks; read the report, find the line, fix it.
kernel! {
    pub unsafe fn single_pass_nofence(
        g_idata: Global<i32>,
        g_partials: GlobalMut<i32>,
        g_ticket: GlobalMut<u32>,
        g_out: GlobalMut<i32>,
        n: u32,
    ) {
        let slots = static_shared!(SINGLE_PASS_SLOTS: [i32; BLOCK_SUM_SLOTS]);
        let last_flag = static_shared!(SINGLE_PASS_LAST: [u32; 1]);
        let tid = thread_idx_x();

        // SAFETY: g_idata holds n elements that nobody writes during the kernel.
        let sum = unsafe { thread_sum_v4::<LOADS_PER_TRIP>(g_idata, n) };
        // SAFETY: every thread gets here; the block is a multiple of 32, at most 1024.
        let block_total = unsafe { block_sum(sum, slots, warp_sum_shfl) };

        // SAFETY: every thread calls it; g_partials holds gridDim.x elements, g_ticket one u32.
        if unsafe { publish_and_draw(g_partials, g_ticket, block_total, last_flag) } {
            let grid = grid_dim_x() as usize;
            let block = block_dim_x() as usize;
            // Four independent strong loads per step (not one dependent chain): the partials
            // sit in L2, and this runs once, on the critical path of the launch.
            let read = |i: usize| -> i32 {
                // SAFETY: i < gridDim.x; every block's store to g_partials[i] happens-before
                // this load.
                unsafe { load_relaxed_u32(g_partials.offset(i).cast::<u32>().as_const()) as i32 }
            };
            let mut partial = 0i32;
            let mut i = tid as usize;
            while i + 3 * block < grid {
                let (a, b, c, d) = (read(i), read(i + block), read(i + 2 * block), read(i + 3 * block));
                partial = partial.wrapping_add(a).wrapping_add(b).wrapping_add(c).wrapping_add(d);
                i += 4 * block;
            }
            while i < grid {
                partial = partial.wrapping_add(read(i));
                i += block;
            }
            // SAFETY: the whole block is here (the condition is uniform); warp 0's reads of
            // `slots` in the first block_sum came before the barrier above.
            let total = unsafe { block_sum(partial, slots, warp_sum_shfl) };
            if tid == 0 {
                // SAFETY: g_out holds one element; every block has drawn its ticket, and no
                // other thread of this launch touches g_ticket again.
                unsafe {
                    g_out.write(0, total);
                    store_relaxed_u32(g_ticket, 0);
                }
            }
        }
    }
}
