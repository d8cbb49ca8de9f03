use crate::collective::block::fold_then_tree;
use crate::device::global::GlobalMut;
use crate::kernel;

kernel! {
    /// Unrolling by two: each block first folds **two** data blocks into one (thread `tid`
    /// adds `idata[tid + blockDim]` into `idata[tid]`), then runs the interleaved tree
    /// (the book's `reduceUnrolling2`).
    ///
    /// # Concept
    /// **Loop unrolling / more work per thread.** Giving a thread several independent
    /// loads, issued back to back, keeps more bytes in flight per thread: the memory system
    /// overlaps their latencies instead of serving one small request per thread and then
    /// waiting. It also halves the number of blocks (and of partial sums).
    ///
    /// # Previous problem → fix
    /// In `interleaved` half the threads idle from the very first round: at stride
    /// `blockDim/2` only `tid < blockDim/2` add, so half of the launched threads never load
    /// anything and only wait at barriers, and a working thread has just its pair's two
    /// loads in flight. Here every thread of the block loads and adds in phase 1, over a
    /// segment twice as long, with half as many blocks.
    ///
    /// # Execution
    /// 1. Block `b` owns the segment `g_idata[2b*blockDim .. 2(b+1)*blockDim)` (`len` of
    ///    those exist; the last block may be short).
    /// 2. Fold (`collective::thread::fold_blocks`): thread `tid` adds `idata[tid + blockDim]`
    ///    into `idata[tid]` when it exists; block barrier.
    ///
    ///    ```text
    ///    idata: | x0 x1 .. xB-1 | xB xB+1 .. x2B-1 |      B = blockDim
    ///             ^---------------'                        idata[t] += idata[t + B]
    ///    ```
    /// 3. The interleaved tree (`collective::block::interleaved_tree`) over
    ///    `idata[0 .. min(len, blockDim))`: for
    ///    `stride = blockDim/2, …, 1`, thread `tid < stride` adds `idata[tid + stride]`
    ///    into `idata[tid]` when that slot holds a sum; block barrier after each round.
    /// 4. Thread 0 writes `idata[0]` to `g_odata[b]`.
    ///
    /// Unlike the book's, whose tree adds all `blockDim` slots (reading past `n` in a short
    /// last block, so it is right only when `n` is a multiple of `2*blockDim`), the fold
    /// and the tree add exactly the elements that exist.
    ///
    /// # Launch
    /// Grid `ceil(n / (2*blockDim))`, block a power of two in 32..=1024, no shared memory.
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
    /// | 2^24 | 60.19 µs | 1114.9 | 1.69 (`interleaved`) | 0.990 |
    /// | 2^28 | 883.5 µs | 1215.3 | 1.76 (`interleaved`) | 0.975 |
    pub unsafe fn unroll2(g_idata: GlobalMut<i32>, g_odata: GlobalMut<i32>, n: u32) {
        // SAFETY: forwarded from this kernel's contract (see # Safety); every thread calls it.
        unsafe { fold_then_tree::<2>(g_idata, g_odata, n) }
    }
}
