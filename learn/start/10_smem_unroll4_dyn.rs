//! Exercise 10: `smem_unroll4_dyn`, from `smem_unroll4`. `./x learn 10` says what to change and why,
//! and checks this file; `./x learn 10 --solution` shows the project's kernel beside it.
//! The place to change is marked `EXERCISE`.
use kernels::collective::block::SHARED_TREE_SLOTS;
use kernels::device::FULL_MASK;
use kernels::device::global::{Global, GlobalMut};
use kernels::device::shared::Shared;
use kernels::device::thread::{block_dim_x, block_idx_x, sync_threads, thread_idx_x};
use kernels::device::warp::sync_warp;
use kernels::index::{block_segment, fold_index};
use kernels::kernel;
use kernels::static_shared;

kernel! {
    pub unsafe fn smem_unroll4_dyn(g_idata: Global<i32>, g_odata: GlobalMut<i32>, n: u32) {
        // EXERCISE 10: size the shared array at launch: dynamic_shared::<i32>(block_dim_x() as usize).
        let smem = static_shared!(SMEM: [i32; SHARED_TREE_SLOTS]);
        let tid = thread_idx_x();
        let block = block_dim_x();
        let b = block_idx_x();
        // Block `b`'s segment: the four data blocks from `4b*blockDim`, `len` elements of them
        // (the last block's may be short).
        let (start, len) = block_segment(n, b, 4 * block);
        // SAFETY: `start < n` for every block of the grid, so this stays in the buffer.
        let idata = unsafe { g_idata.offset(start as usize) };
        // SAFETY: the segment at `idata` holds `len` elements.
        let sum = unsafe { stripe4(idata, tid, block, len) };
        // SAFETY: tid < blockDim <= smem's length; each thread writes its own slot.
        unsafe { smem.write(tid as usize, sum) };
        sync_threads();

        // SAFETY: smem holds blockDim slots, all written before the barrier above.
        unsafe { shared_tree(smem, tid, block) };

        if tid == 0 {
            // SAFETY: thread 0 wrote smem[0] last and reads it back; g_odata holds gridDim.x
            // elements.
            unsafe { g_odata.write(b as usize, smem.read(0)) };
        }
    }
}

#[inline(always)]
unsafe fn stripe4(idata: Global<i32>, tid: u32, block: u32, len: u32) -> i32 {
    if fold_index(tid, block, 3) < len {
        // The whole stripe exists: four loads that do not depend on each other, issued
        // before any of their values is used.
        // SAFETY: fold_index(tid, block, k) <= fold_index(tid, block, 3) < len for k < 4.
        let (a0, a1, a2, a3) = unsafe {
            (
                idata.read(fold_index(tid, block, 0) as usize),
                idata.read(fold_index(tid, block, 1) as usize),
                idata.read(fold_index(tid, block, 2) as usize),
                idata.read(fold_index(tid, block, 3) as usize),
            )
        };
        a0.wrapping_add(a1).wrapping_add(a2).wrapping_add(a3)
    } else {
        // The short last block: only the elements that exist (maybe none).
        let mut sum = 0i32;
        for k in 0..4 {
            let i = fold_index(tid, block, k);
            if i < len {
                // SAFETY: i < len.
                sum = sum.wrapping_add(unsafe { idata.read(i as usize) });
            }
        }
        sum
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
