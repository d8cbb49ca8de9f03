use super::{square, start_block_clock, stop_block_clock};
use crate::device::global::{Global, GlobalMut};
use crate::device::thread::{block_dim_x, thread_idx_x};
use crate::index::chunk_bounds;
use crate::kernel;

kernel! {
    /// Step 2 of the sum-of-squares tutorial: **one block**, each thread sums the squares of
    /// its own **contiguous chunk** of `ceil(n / blockDim)` elements.
    ///
    /// # Concept
    /// **Threads in parallel — and why the access pattern matters (coalescing).** The
    /// threads of a warp issue each load together; the memory system serves the warp's 32
    /// addresses with as few 32-byte sectors as cover them. Here lane `t` reads element
    /// `t·chunk + j` at loop trip `j`: the 32 addresses of one warp load are a chunk apart,
    /// 32 different sectors for 32 useful words, so each warp load is 32 memory
    /// transactions where a coalesced one is 4.
    ///
    /// # Previous problem → fix
    /// `squares_one_thread` keeps one lane busy. Here a whole block of `T` threads works,
    /// each on `n / T` elements, so up to `T` loads are in flight. The pattern it chooses —
    /// thread `t` owns the `t`-th contiguous slice, the natural CPU way to split a loop —
    /// is the problem that step 3 (`squares_coalesced`) fixes.
    ///
    /// # Execution
    /// 1. `clock64()`; block barrier.
    /// 2. Thread `t` sums `x²` over its chunk `[t·c, min((t+1)·c, n))`, `c = ceil(n / T)`
    ///    (the last chunks may be short or empty when `T` does not divide `n`).
    /// 3. `g_result[t] = sum`; block barrier; thread 0 writes both clocks.
    ///
    /// ```text
    ///  T = 4, n = 16, c = 4        g_idata: 0 1 2 3 | 4 5 6 7 | 8 9 10 11 | 12 13 14 15
    ///  trip 0: threads 0 1 2 3 read           0       4         8           12
    ///  trip 1:                                  1       5         9           13
    ///  one warp load touches addresses c elements apart: a sector per lane
    /// ```
    ///
    /// # Launch
    /// Grid 1, block a power of two in 32..=1024, no shared memory.
    ///
    /// # Preconditions
    /// `g_idata` holds `n ≥ 1` elements, `g_result` `blockDim.x`, `g_clocks` 2; the grid
    /// is one block.
    ///
    /// # Safety
    /// The pointers are valid device memory of those lengths; `g_idata` is only read.
    /// Every thread reaches both barriers (a thread with an empty chunk writes 0).
    ///
    /// # Measured
    /// NVIDIA H100 80GB HBM3, block 512, median of 20 timed runs, every run checked (`docs/measurements/2026-11-25-h100/twins_2e24.csv`, `twins_2e28.csv`, commit e032fa9):
    ///
    /// | n | time | GB/s | × previous | × CUDA C twin |
    /// |---|---|---|---|---|
    /// | 2^24 | 8515.2 µs | 7.9 | 47.04 (`squares_one_thread`) | 0.996 |
    /// | 2^28 | 136185.4 µs | 7.9 | 47.05 (`squares_one_thread`) | 0.996 |
    pub unsafe fn squares_chunked(g_idata: Global<i32>, g_result: GlobalMut<i32>, g_clocks: GlobalMut<u64>, n: u32) {
        let tid = thread_idx_x() as usize;
        let start = start_block_clock();

        let (first, end) = chunk_bounds(n as usize, block_dim_x() as usize, tid);
        let mut sum = 0i32;
        for i in first..end {
            // SAFETY: i < end <= n.
            sum = sum.wrapping_add(square(unsafe { g_idata.read(i) }));
        }
        // SAFETY: tid < blockDim, and g_result holds blockDim elements.
        unsafe { g_result.write(tid, sum)};

        // SAFETY: g_clocks holds 2 = 2 * gridDim.x elements.
        unsafe { stop_block_clock(g_clocks, start) };
    }
}
