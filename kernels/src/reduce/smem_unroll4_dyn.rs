use crate::collective::block::stripe4_shared_tree;
use crate::device::global::{Global, GlobalMut};
use crate::device::shared::dynamic_shared;
use crate::device::thread::block_dim_x;
use crate::kernel;

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
    /// thread into `smem[tid]` (`collective::thread::thread_sum_stripe4`), the shared-memory
    /// tree with `__syncwarp` in the last warp (`collective::block::shared_tree`), thread 0
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
    /// NVIDIA H100 80GB HBM3, block 512, median of 20 timed runs, every run checked (`docs/measurements/2026-11-23-h100/twins_2e24.csv`, `twins_2e28.csv`, commit bfef8f2):
    ///
    /// | n | time | GB/s | × previous | × CUDA C twin |
    /// |---|---|---|---|---|
    /// | 2^24 | 29.95 µs | 2240.5 | 0.99 (`smem_unroll4`) | 0.997 |
    /// | 2^28 | 379.9 µs | 2826.6 | 1.00 (`smem_unroll4`) | 0.990 |
    pub unsafe fn smem_unroll4_dyn(g_idata: Global<i32>, g_odata: GlobalMut<i32>, n: u32) {
        // SAFETY: the launch provides blockDim.x i32s of dynamic shared memory (precondition).
        let smem = unsafe { dynamic_shared::<i32>(block_dim_x() as usize) };
        // SAFETY: forwarded from this kernel's contract; `smem` holds blockDim slots.
        unsafe { stripe4_shared_tree(g_idata, g_odata, n, smem) }
    }
}
