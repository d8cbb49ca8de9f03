//! Exercise 18: a bug hunt in `smem_uninit`, the project's `smem` with one bug planted. `./x learn 18`
//! checks this file under the emulator's checks; `./x learn 18 --solution` shows the project's kernel beside it.
//! The place to change is marked `EXERCISE`.
use kernels::collective::block::SHARED_TREE_SLOTS;
use kernels::device::FULL_MASK;
use kernels::device::global::{Global, GlobalMut};
use kernels::device::shared::Shared;
use kernels::device::thread::{block_dim_x, block_idx_x, sync_threads, thread_idx_x};
use kernels::device::warp::sync_warp;
use kernels::kernel;
use kernels::static_shared;

// EXERCISE 18: a bug hunt. This kernel looks right and is wrong: `./x learn 18` runs it under the emulator's checks; read the report, find the line, fix it.
kernel! {
    pub unsafe fn smem_uninit(g_idata: Global<i32>, g_odata: GlobalMut<i32>, n: u32) {
        let smem = static_shared!(SMEM: [i32; SHARED_TREE_SLOTS]);
        let tid = thread_idx_x();
        let block = block_dim_x();
        let idx = block_idx_x() as usize * block as usize + tid as usize;

        // SAFETY: idx < n, so the load stays in the input.
        if idx < n as usize {
            // SAFETY: tid < blockDim <= 1024; each thread writes its own slot.
            unsafe { smem.write(tid as usize, g_idata.read(idx)) };
        }
        sync_threads();

        // SAFETY: smem holds blockDim slots, all written before the barrier above.
        unsafe { shared_tree(smem, tid, block) };

        if tid == 0 {
            // SAFETY: thread 0 wrote smem[0] last (at level 1) and reads it back; g_odata
            // holds gridDim.x elements.
            unsafe { g_odata.write(block_idx_x() as usize, smem.read(0))};
        }
    }
}

#[inline(always)]
unsafe fn shared_tree(smem: Shared<i32>, tid: u32, block: u32) {
    for s in [512u32, 256, 128, 64] {
        if 2 * s <= block && tid < s {
            let (i, j) = (tid as usize, (tid + s) as usize);
            // SAFETY: i < j < 2s <= block. Thread `tid` alone writes smem[tid]; smem[j]
            // (j >= s) is written by no thread at this level.
            unsafe { smem.write(i, smem.read(i).wrapping_add(smem.read(j))) };
        }
        sync_threads();
    }
    if tid < 32 {
        for s in [32u32, 16, 8, 4, 2, 1] {
            if 2 * s <= block && tid < s {
                let (i, j) = (tid as usize, (tid + s) as usize);
                // SAFETY: i < j < 2s <= block. Lanes write [0, s) and read [s, 2s) besides
                // their own slot; the warp barrier below orders the levels.
                unsafe { smem.write(i, smem.read(i).wrapping_add(smem.read(j))) };
            }
            sync_warp(FULL_MASK);
        }
    }
}
