use crate::collective::block::fold_then_tree;
use crate::device::global::GlobalMut;
use crate::kernel;

kernel! {
    /// Unrolling by four: each block first folds **four** data blocks into one (thread `tid`
    /// adds `idata[tid + k*blockDim]`, `k = 0..4`, into `idata[tid]`), then runs the
    /// interleaved tree (the book's `reduceUnrolling4`).
    ///
    /// # Concept
    /// **Memory-level parallelism.** A load takes hundreds of cycles; what hides that
    /// latency is how many independent loads are outstanding at once. With four
    /// independent loads per thread issued back to back, each thread keeps four requests in
    /// flight where `unroll2` kept two, at the same occupancy.
    ///
    /// # Previous problem → fix
    /// `unroll2` keeps only two loads per thread in flight in its fold and still launches
    /// `n / (2*blockDim)` blocks, each paying its own tree of `log2(blockDim)` barrier
    /// rounds for only `2*blockDim` elements. Here each thread folds four elements, so the
    /// fold has twice the bytes in flight and the grid (the number of trees, barriers and
    /// partial sums) halves again.
    ///
    /// # Execution
    /// 1. Block `b` owns the segment `g_idata[4b*blockDim .. 4(b+1)*blockDim)` (`len` of
    ///    those exist; the last block may be short).
    /// 2. Fold (`collective::thread::fold_blocks`): thread `tid` adds the elements `tid +
    ///    k*blockDim`, `k = 0..4`, that exist, and stores the sum in `idata[tid]`; block
    ///    barrier.
    ///
    ///    ```text
    ///    idata: | x0 .. xB-1 | xB .. x2B-1 | x2B .. x3B-1 | x3B .. x4B-1 |   B = blockDim
    ///             t            t+B           t+2B           t+3B     -> idata[t]
    ///    ```
    /// 3. The interleaved tree over `idata[0 .. min(len, blockDim))`: for
    ///    `stride = blockDim/2, …, 1`, thread `tid < stride` adds `idata[tid + stride]`
    ///    into `idata[tid]` when that slot holds a sum; block barrier after each round.
    /// 4. Thread 0 writes `idata[0]` to `g_odata[b]`.
    ///
    /// The book folds only when all four elements exist (`if (idx + 3*blockDim.x < n)`),
    /// which silently drops up to three of them per thread in a short last block; this fold
    /// adds exactly the elements that exist.
    ///
    /// # Launch
    /// Grid `ceil(n / (4*blockDim))`, block a power of two in 32..=1024, no shared memory.
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
    /// | 2^24 | 40.83 µs | 1643.5 | 1.47 (`unroll2`) | 0.991 |
    /// | 2^28 | 524.0 µs | 2049.1 | 1.69 (`unroll2`) | 0.997 |
    pub unsafe fn unroll4(g_idata: GlobalMut<i32>, g_odata: GlobalMut<i32>, n: u32) {
        // SAFETY: forwarded from this kernel's contract (see # Safety); every thread calls it.
        unsafe { fold_then_tree::<4>(g_idata, g_odata, n) }
    }
}
