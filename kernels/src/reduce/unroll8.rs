use crate::collective::block::fold_then_tree;
use crate::device::global::GlobalMut;
use crate::kernel;

kernel! {
    /// Unrolling by eight: each block first folds **eight** data blocks into one (thread
    /// `tid` adds `idata[tid + k*blockDim]`, `k = 0..8`, into `idata[tid]`), then runs the
    /// interleaved tree (the book's `reduceUnrolling8`).
    ///
    /// # Concept
    /// **Enough bytes in flight to saturate memory bandwidth.** By Little's law the bytes
    /// that must be in flight are bandwidth × latency; eight independent loads per thread
    /// get much closer to that than one or two, and the per-element share of the tree (its
    /// barriers, its idle threads) shrinks with every doubling of the fold.
    ///
    /// # Previous problem → fix
    /// `unroll4` keeps four loads per thread in flight and runs one tree per `4*blockDim`
    /// elements. Here each thread has eight independent loads outstanding and a block
    /// covers `8*blockDim` elements, so a quarter of `unroll2`'s trees, barriers and
    /// partial sums remain.
    ///
    /// # Execution
    /// 1. Block `b` owns the segment `g_idata[8b*blockDim .. 8(b+1)*blockDim)` (`len` of
    ///    those exist; the last block may be short).
    /// 2. Fold (`collective::thread::fold_blocks`): thread `tid` adds the elements `tid +
    ///    k*blockDim`, `k = 0..8`, that exist, and stores the sum in `idata[tid]`; block
    ///    barrier.
    ///
    ///    ```text
    ///    idata: | data block 0 | data block 1 | ... | data block 7 |   each blockDim long
    ///             t              t+B                  t+7B   -> a1 + a2 + ... + a8 -> idata[t]
    ///    ```
    /// 3. The interleaved tree over `idata[0 .. min(len, blockDim))`: for
    ///    `stride = blockDim/2, …, 1`, thread `tid < stride` adds `idata[tid + stride]`
    ///    into `idata[tid]` when that slot holds a sum; block barrier after each round.
    /// 4. Thread 0 writes `idata[0]` to `g_odata[b]`.
    ///
    /// The book folds only when all eight elements exist (`if (idx + 7*blockDim.x < n)`),
    /// which silently drops up to seven of them per thread in a short last block; this fold
    /// adds exactly the elements that exist.
    ///
    /// What it leaves wrong: the tree's last five rounds run with fewer than 32 working
    /// threads, yet each still pays a full block barrier and a loop test (`unroll_warps8`
    /// fixes that).
    ///
    /// # Launch
    /// Grid `ceil(n / (8*blockDim))`, block a power of two in 32..=1024, no shared memory.
    /// Works **in place**: the host passes a scratch copy of the input, never the input.
    ///
    /// # Preconditions
    /// `g_idata` holds `n ≥ 1` elements and `g_odata` `gridDim.x`.
    ///
    /// # Safety
    /// The pointers are valid device memory of those lengths; `g_idata` may be overwritten.
    /// Every thread reaches every barrier: threads past `n` fold nothing and idle through
    /// the tree instead of returning early.
    ///
    /// # Measured
    /// NVIDIA H100 80GB HBM3, block 512, median of 20 timed runs, every run checked (`docs/measurements/2026-11-23-h100/twins_2e24.csv`, `twins_2e28.csv`, commit bfef8f2):
    ///
    /// | n | time | GB/s | × previous | × CUDA C twin |
    /// |---|---|---|---|---|
    /// | 2^24 | 33.01 µs | 2033.1 | 1.24 (`unroll4`) | 0.999 |
    /// | 2^28 | 399.5 µs | 2687.6 | 1.31 (`unroll4`) | 1.000 |
    pub unsafe fn unroll8(g_idata: GlobalMut<i32>, g_odata: GlobalMut<i32>, n: u32) {
        // SAFETY: forwarded from this kernel's contract (see # Safety); every thread calls it.
        unsafe { fold_then_tree::<8>(g_idata, g_odata, n) }
    }
}
