use crate::device::FULL_MASK;
use crate::device::global::{Global, GlobalMut};
use crate::device::shared::{Shared, dynamic_shared};
use crate::device::thread::{block_dim_x, block_idx_x, sync_threads, thread_idx_x};
use crate::device::warp::sync_warp;
use crate::index::{block_segment, fold_index};
use crate::kernel;

// The lesson's code, which the lesson before does not have (tests/source.rs): `let smem = unsafe { dynamic_shared::<i32>(block_dim_x() as usize) };`

kernel! {
    /// `smem_unroll4` with **dynamic** shared memory: the same kernel, but the shared array's
    /// size is chosen by the host at each launch (the book's `reduceSmemUnrollDyn`).
    ///
    /// # Concept
    /// **Static vs dynamic shared memory.** A static array (`__shared__ int smem[1024];`)
    /// has a size fixed when the kernel is compiled; a dynamic one (`extern __shared__ int
    /// smem[];`) has no size in the kernel: the launch's third parameter (`<<<grid, block,
    /// bytes>>>`) says how many bytes the block gets. Both are the same on-chip memory; in
    /// CUDA C both compile to the same shared-memory loads and stores (SASS `LDS`/`STS`),
    /// so they run at the same speed. What differs is who decides the size, and when.
    ///
    /// In this crate both compile to `ld.shared`/`st.shared` too: the device layer's
    /// [`Shared`](crate::device::shared::Shared) accessors address the shared window directly,
    /// whether the array was declared statically (in inline PTX, which LLVM cannot see into)
    /// or comes from the launch. A timing difference between `smem_unroll4` and this kernel
    /// is then the difference between the two kinds of shared memory, which should be none.
    ///
    /// # Previous problem → fix
    /// `smem_unroll4` declares 1024 `i32` (4 KiB) per block whatever the block size, because
    /// the size must be known at compile time: a block of 128 threads reserves 4 KiB and
    /// uses 512 bytes. The reserved shared memory counts against the multiprocessor's
    /// shared memory when the hardware decides how many blocks fit on it, and a kernel that
    /// needed a larger array per block than its largest block would have to be recompiled
    /// (or instantiated once per size, as the const-generic kernels are). Here the host
    /// asks for exactly `4 · blockDim` bytes at launch: one kernel for every block size,
    /// sized to fit.
    ///
    /// # Execution
    /// Identical to `smem_unroll4` (the same code on another array): four guarded loads per
    /// thread into `smem[tid]` (`stripe4` below), the shared-memory
    /// tree with `__syncwarp` in the last warp (`shared_tree` below), thread 0
    /// writes the block's sum.
    ///
    /// ```text
    ///  static  (smem_unroll4):      [ smem: 1024 × i32 = 4096 B, fixed at compile time ]
    ///  dynamic (this kernel), B=128: [ smem: 128 × i32 = 512 B ]  ← set at launch
    /// ```
    ///
    /// # Launch
    /// Grid `ceil(n / (4·blockDim))`, block a power of two in 32..=1024, dynamic shared
    /// memory `4 · blockDim` bytes (`blockDim` `i32`s), no static shared memory.
    ///
    /// # Preconditions
    /// `g_idata` holds `n ≥ 1` elements and `g_odata` `gridDim.x`; `blockDim.x` is a power
    /// of two in 32..=1024; the launch provides at least `4 · blockDim.x` bytes of dynamic
    /// shared memory.
    ///
    /// # Safety
    /// The pointers are valid device memory of those lengths; `g_idata` is only read.
    /// Every thread reaches every block barrier, and all 32 lanes of warp 0 reach every
    /// `__syncwarp` (see `smem_unroll4`).
    ///
    /// # Measured
    /// NVIDIA H100 80GB HBM3, block 512, median of 20 timed runs, every run checked (`docs/measurements/2026-11-25-h100/twins_2e24.csv`, `twins_2e28.csv`, commit e032fa9):
    ///
    /// | n | time | GB/s | × previous | × CUDA C twin |
    /// |---|---|---|---|---|
    /// | 2^24 | 29.94 µs | 2241.7 | 1.00 (`smem_unroll4`) | 0.995 |
    /// | 2^28 | 379.4 µs | 2829.9 | 1.00 (`smem_unroll4`) | 0.992 |
    pub unsafe fn smem_unroll4_dyn(g_idata: Global<i32>, g_odata: GlobalMut<i32>, n: u32) {
        // SAFETY: the launch provides blockDim.x i32s of dynamic shared memory (precondition).
        let smem = unsafe { dynamic_shared::<i32>(block_dim_x() as usize) };
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

/// The four loads per thread (taught by `smem_unroll4`): the sum of the elements `tid`,
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
