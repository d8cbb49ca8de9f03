use super::{square, start_block_clock, stop_block_clock};
use crate::device::global::{Global, GlobalMut};
use crate::device::thread::{block_dim_x, global_idx_x, grid_dim_x};
use crate::kernel;

kernel! {
    /// Step 4 of the sum-of-squares tutorial: **many blocks**; thread `g` of the grid sums the
    /// squares of elements `g, g + G, g + 2G, …` with `G` the number of threads in the grid
    /// (a grid-stride loop).
    ///
    /// # Concept
    /// **Use every multiprocessor.** A block runs on one SM, so a one-block kernel uses one
    /// SM out of dozens (132 on an H100 SXM). A grid of several blocks per SM keeps all of them
    /// busy, and enough resident warps per SM to hide memory latency. A **grid-stride loop**
    /// lets a grid of any size cover any `n`: the grid as a whole reads `G` consecutive
    /// elements per trip, so the loads stay coalesced.
    ///
    /// # Previous problem → fix
    /// `squares_coalesced` reads coalesced, but with one block on one SM. Here the grid is
    /// `k` blocks per SM (the registry picks `k = 4`: at the CLI's default block of 512
    /// threads that is 2048 threads per SM, the most a Volta, A100 or Hopper SM holds, so
    /// one wave fills the GPU). What is left: every thread still writes its own partial sum,
    /// so the host has `G` numbers (hundreds of thousands) to copy back and add — step 5
    /// (`squares_block_tree`) adds them per block on the GPU.
    ///
    /// # Execution
    /// 1. `clock64()`; block barrier.
    /// 2. Thread `g = blockIdx·T + t` sums `x²` over `i = g, g + G, g + 2G, … < n`.
    /// 3. `g_result[g] = sum`; block barrier; thread 0 of each block writes its two clocks.
    ///
    /// ```text
    ///  2 blocks of T = 4, G = 8     g_idata: 0 1 2 3 4 5 6 7 | 8 9 10 11 12 13 14 15
    ///  trip 0: block 0 reads 0-3, block 1 reads 4-7
    ///  trip 1: block 0 reads 8-11, block 1 reads 12-15
    /// ```
    ///
    /// # Launch
    /// Grid `k × SMs` (any grid works), block a power of two in 32..=1024, no shared memory.
    ///
    /// # Preconditions
    /// `g_idata` holds `n ≥ 1` elements, `g_result` `gridDim.x · blockDim.x`, `g_clocks`
    /// `2 · gridDim.x`.
    ///
    /// # Safety
    /// The pointers are valid device memory of those lengths; `g_idata` is only read.
    /// Every thread reaches both barriers (a thread with no element writes 0).
    ///
    /// # Measured
    /// NVIDIA H100 80GB HBM3, block 512, median of 20 timed runs, every run checked (`docs/measurements/2026-11-25-h100/twins_2e24.csv`, `twins_2e28.csv`, commit e032fa9):
    ///
    /// | n | time | GB/s | × previous | × CUDA C twin |
    /// |---|---|---|---|---|
    /// | 2^24 | 34.30 µs | 1956.3 | 356.62 (`squares_coalesced`) | 1.013 |
    /// | 2^28 | 465.6 µs | 2305.9 | 417.82 (`squares_coalesced`) | 1.002 |
    pub unsafe fn squares_grid_stride(g_idata: Global<i32>, g_result: GlobalMut<i32>, g_clocks: GlobalMut<u64>, n: u32) {
        let g = global_idx_x();
        let threads = grid_dim_x() as usize * block_dim_x() as usize;
        let start = start_block_clock();

        let mut sum = 0i32;
        let mut i = g;
        while i < n as usize {
            // SAFETY: i < n.
            sum = sum.wrapping_add(square(unsafe { g_idata.read(i) }));
            i += threads;
        }
        // SAFETY: g < gridDim · blockDim, the length of g_result.
        unsafe { g_result.write(g, sum)};

        // SAFETY: g_clocks holds 2 * gridDim.x elements.
        unsafe { stop_block_clock(g_clocks, start) };
    }
}
