use crate::collective::block::{SHARED_TREE_SLOTS, SHARED_TREE_SMEM_BYTES, stripe4_shared_tree};
use crate::device::global::{Global, GlobalMut};
use crate::kernel;
use crate::static_shared;

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
    ///    (`collective::thread::thread_sum_stripe4`) adds the segment's
    ///    elements `tid`, `tid + blockDim`, `tid + 2·blockDim`, `tid + 3·blockDim`: all
    ///    four with unguarded, independent loads when the last one exists, else only those
    ///    below `len` (the book loads nothing at all in that case and drops the tail).
    ///    The thread's sum, 0 if it had no element, goes to `smem[tid]`; block barrier.
    /// 2. The tree of `smem` (`collective::block::shared_tree`) on `smem[0..blockDim)`
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
    /// NVIDIA H100 80GB HBM3, block 512, median of 20 timed runs, every run checked (`docs/measurements/2026-11-23-h100/twins_2e24.csv`, `twins_2e28.csv`, commit bfef8f2):
    ///
    /// | n | time | GB/s | × previous | × CUDA C twin |
    /// |---|---|---|---|---|
    /// | 2^24 | 29.79 µs | 2252.6 | 2.50 (`smem`) | 1.009 |
    /// | 2^28 | 380.4 µs | 2822.8 | 2.95 (`smem`) | 0.993 |
    pub unsafe fn smem_unroll4(g_idata: Global<i32>, g_odata: GlobalMut<i32>, n: u32) {
        let smem = static_shared!(SMEM: [i32; SHARED_TREE_SLOTS]);
        // SAFETY: forwarded from this kernel's contract; `smem` holds blockDim slots.
        unsafe { stripe4_shared_tree(g_idata, g_odata, n, smem) }
    }
}
