use crate::collective::block::{SHARED_TREE_SLOTS, SHARED_TREE_SMEM_BYTES};
use crate::device::FULL_MASK;
use crate::device::global::{Global, GlobalMut};
use crate::device::shared::Shared;
use crate::device::thread::{block_dim_x, block_idx_x, sync_threads, thread_idx_x};
use crate::device::warp::sync_warp;
use crate::kernel;
use crate::static_shared;

// The lesson's code, which the lesson before does not have (tests/source.rs): `unsafe { smem.write(tid as usize, x) };`

/// Static shared memory of [`smem`] per block: one `i32` slot per thread of the largest
/// block, 4096 bytes.
pub const SMEM_SHARED_BYTES: u32 = SHARED_TREE_SMEM_BYTES;

kernel! {
    /// Tree reduction in **shared** memory with the last warp unrolled (the book's
    /// `reduceSmem`): each block copies its segment on chip once, reduces it there, and
    /// writes one partial sum.
    ///
    /// # Concept
    /// **Shared memory is a program-managed cache on the multiprocessor.** A
    /// `__shared__` array is visible to every thread of the block, lives on chip (tens of
    /// cycles away instead of hundreds), and is served by 32 banks at once. Data that a
    /// block touches several times is loaded into it from global memory once and reused
    /// from there. Here the array is **static**: its size (1024 `i32`, 4 KiB, enough for
    /// the largest block) is fixed when the kernel is compiled, like `__shared__ int
    /// smem[DIM];` in CUDA C.
    ///
    /// # Previous problem → fix
    /// `gmem` runs its tree in global memory: every one of the `log2(blockDim)` levels
    /// loads and stores the working array through L1/L2/DRAM. Here global memory is read
    /// exactly once per element (coalesced: thread `tid` reads element `tid` of the
    /// segment) and written once per block; all levels of the tree read and write shared
    /// memory. The input is only read, so no scratch copy is needed either.
    ///
    /// The last warp is unrolled as in the book but made correct for Volta's independent
    /// thread scheduling: the book's lock-step `volatile` code lets lane 0 read `smem[16]`
    /// before (or after the next store of) lane 16; here each level is
    /// `if tid < s { smem[tid] += smem[tid + s] }` followed by `__syncwarp()`, so within a
    /// level no slot is written by one lane and read by another, and the warp barrier
    /// orders the levels (see `gmem` for the full argument).
    ///
    /// # Execution
    /// 1. Thread `tid` of block `b` copies `g_idata[b*blockDim + tid]` into `smem[tid]`, or
    ///    the identity 0 when that index is `≥ n`; block barrier.
    /// 2. The shared-memory tree (`shared_tree` below), levels `s = 512, 256,
    ///    128, 64` (those with `2s ≤ blockDim`): `tid < s` adds
    ///    `smem[tid + s]` into `smem[tid]`; block barrier after every level.
    /// 3. Warp 0 alone, levels `s = 32, …, 1` (those with `2s ≤ blockDim`, so a block of
    ///    32 never reads `smem[tid + 32]`, past its data): `tid < s` adds `smem[tid + s]`;
    ///    `__syncwarp()` of all 32 lanes after every level.
    /// 4. Thread 0 writes `smem[0]` to `g_odata[b]`.
    ///
    /// ```text
    ///  global  g_idata[b*256 .. b*256+256)        read once, coalesced
    ///             |  |  |  …  |
    ///  shared  smem[0..256)
    ///  s = 128   smem[0..128) += smem[128..256)   bar.sync
    ///  s =  64   smem[0..64)  += smem[64..128)    bar.sync
    ///  s =  32   smem[0..32)  += smem[32..64)     bar.warp.sync   (warp 0)
    ///   …
    ///  s =   1   smem[0]      += smem[1]          bar.warp.sync
    ///  global  g_odata[b] = smem[0]               written once
    /// ```
    ///
    /// # Launch
    /// Grid `ceil(n / blockDim)`, block a power of two in 32..=1024, 4096 bytes of static
    /// shared memory ([`SMEM_SHARED_BYTES`]; no dynamic shared memory).
    ///
    /// # Preconditions
    /// `g_idata` holds `n ≥ 1` elements and `g_odata` `gridDim.x`; `blockDim.x` is a power
    /// of two in 32..=1024.
    ///
    /// # Safety
    /// The pointers are valid device memory of those lengths; `g_idata` is only read.
    /// Every thread reaches every block barrier (threads past `n` load 0 and take part in
    /// the tree), and all 32 lanes of warp 0 reach every `__syncwarp`.
    ///
    /// # Measured
    /// NVIDIA H100 80GB HBM3, block 512, median of 20 timed runs, every run checked (`docs/measurements/2026-11-25-h100/twins_2e24.csv`, `twins_2e28.csv`, commit e032fa9):
    ///
    /// | n | time | GB/s | × previous | × CUDA C twin |
    /// |---|---|---|---|---|
    /// | 2^24 | 73.89 µs | 908.3 | 1.19 (`gmem`) | 0.992 |
    /// | 2^28 | 1121.4 µs | 957.5 | 1.19 (`gmem`) | 0.991 |
    pub unsafe fn smem(g_idata: Global<i32>, g_odata: GlobalMut<i32>, n: u32) {
        let smem = static_shared!(SMEM: [i32; SHARED_TREE_SLOTS]);
        let tid = thread_idx_x();
        let block = block_dim_x();
        let idx = block_idx_x() as usize * block as usize + tid as usize;

        // SAFETY: idx < n, so the load stays in the input.
        let x = if idx < n as usize { unsafe { g_idata.read(idx) } } else { 0 };
        // SAFETY: tid < blockDim <= 1024; each thread writes its own slot.
        unsafe { smem.write(tid as usize, x) };
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

/// The shared-memory tree, the lesson of this kernel: sums `smem[0..block)` into `smem[0]`
/// (interleaved pairs; block barriers above the last warp, `__syncwarp` within it). Afterwards
/// thread 0 may read `smem[0]`, which it wrote itself.
///
/// # Safety
/// `smem` holds at least `block` elements, all written and made visible by a block barrier
/// before the call; `block` is `blockDim.x`, a power of two in 32..=1024; every thread of the
/// block calls this (it contains block barriers).
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
