use crate::collective::block::{SHARED_TREE_SLOTS, SHARED_TREE_SMEM_BYTES};
use crate::device::FULL_MASK;
use crate::device::global::{Global, GlobalMut};
use crate::device::shared::Shared;
use crate::device::thread::{block_dim_x, block_idx_x, sync_threads, thread_idx_x};
use crate::device::warp::sync_warp;
use crate::index::{block_segment, fold_index};
use crate::kernel;
use crate::static_shared;

// The lesson's code, which the lesson before does not have (tests/source.rs): `let sum = unsafe { stripe4(idata, tid, block, len) };`

/// Static shared memory of [`smem_unroll4`] per block: one `i32` slot per thread of the
/// largest block, 4096 bytes.
pub const SMEM_UNROLL4_SHARED_BYTES: u32 = SHARED_TREE_SMEM_BYTES;

kernel! {
    /// Shared-memory tree reduction with 4-way unrolled loads (the book's
    /// `reduceSmemUnroll`): each thread first adds 4 elements from global memory, a
    /// quarter of the blocks' worth apart, into its shared slot; then the same tree as
    /// `smem`.
    ///
    /// # Concept
    /// **Memory-level parallelism: more independent loads in flight per thread.** A load
    /// from DRAM takes hundreds of cycles; a warp that issues one load and then needs the
    /// value waits all that time. Four loads whose addresses do not depend on each other
    /// are issued back to back and wait together, so each thread keeps four requests in
    /// flight where `smem` had one, and every thread is busy in the first phase where
    /// `smem`'s tree leaves half of them idle at its first level.
    ///
    /// # Previous problem → fix
    /// In `smem` each thread loads **one** element and then half of the threads idle at
    /// the first level, three quarters at the second, …: a block of `B` threads reduces
    /// only `B` elements, the grid is `n / B` blocks, and each of them pays for a whole tree
    /// (barriers, shared-memory traffic) for a single load per thread. Here a block reduces
    /// `4B` elements: the grid is four times smaller, every thread issues four independent
    /// coalesced loads before the first barrier, and the tree runs once per `4B` elements.
    /// The last warp of the tree is unrolled with `__syncwarp` between levels (the book's
    /// lock-step `volatile` version races on Volta and later; see `gmem`).
    ///
    /// # Execution
    /// 1. Block `b` owns the segment of `4·blockDim` elements from `b·4·blockDim` (`len` of
    ///    them exist; the last block may be short). Thread `tid`
    ///    (`stripe4` below) adds the segment's
    ///    elements `tid`, `tid + blockDim`, `tid + 2·blockDim`, `tid + 3·blockDim`: all
    ///    four with unguarded, independent loads when the last one exists, else only those
    ///    below `len` (the book loads nothing at all in that case and drops the tail).
    ///    The thread's sum, 0 if it had no element, goes to `smem[tid]`; block barrier.
    /// 2. The tree of `smem` (`shared_tree` below) on `smem[0..blockDim)`
    ///    (levels 512…64 with block barriers, then warp 0 alone with `__syncwarp`).
    /// 3. Thread 0 writes `smem[0]` to `g_odata[b]`.
    ///
    /// ```text
    ///  block b's segment, blockDim = B:
    ///   [ data block 0 ][ data block 1 ][ data block 2 ][ data block 3 ]
    ///     t0 t1 … tB-1    t0 t1 … tB-1    t0 t1 … tB-1    t0 t1 … tB-1
    ///  smem[t] = a[t] + a[t+B] + a[t+2B] + a[t+3B]      (4 loads in flight per thread)
    ///  then the tree of `smem` over smem[0..B)
    /// ```
    ///
    /// # Launch
    /// Grid `ceil(n / (4·blockDim))`, block a power of two in 32..=1024, 4096 bytes of
    /// static shared memory ([`SMEM_UNROLL4_SHARED_BYTES`]; no dynamic shared memory).
    ///
    /// # Preconditions
    /// `g_idata` holds `n ≥ 1` elements and `g_odata` `gridDim.x`; `blockDim.x` is a power
    /// of two in 32..=1024.
    ///
    /// # Safety
    /// The pointers are valid device memory of those lengths; `g_idata` is only read.
    /// Every thread reaches every block barrier (threads with no element store 0 and take
    /// part in the tree), and all 32 lanes of warp 0 reach every `__syncwarp`.
    ///
    /// # Measured
    /// NVIDIA H100 80GB HBM3, block 512, median of 20 timed runs, every run checked (`docs/measurements/2026-11-25-h100/twins_2e24.csv`, `twins_2e28.csv`, commit e032fa9):
    ///
    /// | n | time | GB/s | × previous | × CUDA C twin |
    /// |---|---|---|---|---|
    /// | 2^24 | 29.97 µs | 2239.4 | 2.47 (`smem`) | 0.990 |
    /// | 2^28 | 380.1 µs | 2824.8 | 2.95 (`smem`) | 0.988 |
    pub unsafe fn smem_unroll4(g_idata: Global<i32>, g_odata: GlobalMut<i32>, n: u32) {
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

/// The four loads per thread, the lesson of this kernel: the sum of the elements `tid`,
/// `tid + block`, `tid + 2·block`, `tid + 3·block` of a segment of which `len` elements exist
/// (0 if none does). When the last of the four exists, all four are loaded unguarded and
/// independently, issued before any of their values is used; otherwise (the short last block)
/// only those below `len`.
///
/// ```text
///   [ data block 0 ][ data block 1 ][ data block 2 ][ data block 3 ]    block = B
///     t0 t1 … tB-1    t0 t1 … tB-1    t0 t1 … tB-1    t0 t1 … tB-1
///  sum(t) = a[t] + a[t+B] + a[t+2B] + a[t+3B]      (4 loads in flight per thread)
/// ```
///
/// # Safety
/// `idata` is valid for reading `len` elements.
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

/// The shared-memory tree (taught by `smem`): sums `smem[0..block)` into `smem[0]`
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
