use super::{square, start_block_clock, stop_block_clock};
use crate::device::global::{Global, GlobalMut};
use crate::device::thread::{block_dim_x, thread_idx_x};
use crate::kernel;

kernel! {
    /// Step 3 of the sum-of-squares tutorial: **one block**, thread `t` sums the squares of
    /// elements `t, t + T, t + 2T, …` (a block-wide stride), so that each warp load is
    /// **coalesced**.
    ///
    /// # Concept
    /// **Coalesced access.** When the 32 lanes of a warp read 32 consecutive words, the
    /// memory system serves the load with four 32-byte sectors (one 128-byte line): every
    /// byte fetched is used. Assigning elements to threads *interleaved* (`i = t + k·T`)
    /// instead of in contiguous chunks makes every warp load consecutive.
    ///
    /// # Previous problem → fix
    /// In `squares_chunked` the lanes of a warp read addresses a chunk apart: one sector
    /// per lane per load, 32 transactions for 32 words, and the lines fetched must stay in
    /// L1 until the lane comes back for the rest of them. Here trip `k` of the loop has
    /// the block read `T` consecutive elements `k·T .. (k+1)·T`: each warp reads one line,
    /// 4 sectors for 32 words. What is left: one block runs on one multiprocessor, and the
    /// rest of the GPU idles — step 4 (`squares_grid_stride`) uses them all.
    ///
    /// **What a Hopper GPU shows** (NVIDIA H200, n = 2^24, block 512, docs/notes.md): this
    /// step takes 11.3 ms and `squares_chunked` 8.5 ms — the opposite of the tutorial's
    /// result on older GPUs. With a single block the limit is not wasted bytes but bytes in
    /// flight: L1 keeps each lane's line between trips, so one warp load of
    /// `squares_chunked` starts 32 line fetches where one of this kernel starts one (and the
    /// chunked loop, whose trip count is known, is unrolled by the compiler). Coalescing
    /// pays once the whole GPU is busy and bandwidth, not latency, is the limit — steps 4
    /// and 5, which take 34 µs at the same size.
    ///
    /// # Execution
    /// 1. `clock64()`; block barrier.
    /// 2. Thread `t` sums `x²` over `i = t, t + T, t + 2T, … < n`.
    /// 3. `g_result[t] = sum`; block barrier; thread 0 writes both clocks.
    ///
    /// ```text
    ///  T = 4, n = 16               g_idata: 0 1 2 3 | 4 5 6 7 | 8 9 10 11 | 12 13 14 15
    ///  trip 0: threads 0 1 2 3 read         0 1 2 3
    ///  trip 1:                                         4 5 6 7
    ///  one warp load = 32 consecutive words = one 128-byte line
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
    /// Every thread reaches both barriers (a thread with no element writes 0).
    ///
    /// # Measured
    /// NVIDIA H100 80GB HBM3, block 512, median of 20 timed runs, every run checked (`docs/measurements/2026-11-25-h100/twins_2e24.csv`, `twins_2e28.csv`, commit e032fa9):
    ///
    /// | n | time | GB/s | × previous | × CUDA C twin |
    /// |---|---|---|---|---|
    /// | 2^24 | 12233.5 µs | 5.5 | 0.70 (`squares_chunked`) | 1.006 |
    /// | 2^28 | 194558.2 µs | 5.5 | 0.70 (`squares_chunked`) | 1.004 |
    pub unsafe fn squares_coalesced(g_idata: Global<i32>, g_result: GlobalMut<i32>, g_clocks: GlobalMut<u64>, n: u32) {
        let tid = thread_idx_x() as usize;
        let block = block_dim_x() as usize;
        let start = start_block_clock();

        let mut sum = 0i32;
        let mut i = tid;
        while i < n as usize {
            // SAFETY: i < n.
            sum = sum.wrapping_add(square(unsafe { g_idata.read(i) }));
            i += block;
        }
        // SAFETY: tid < blockDim, and g_result holds blockDim elements.
        unsafe { g_result.write(tid, sum)};

        // SAFETY: g_clocks holds 2 = 2 * gridDim.x elements.
        unsafe { stop_block_clock(g_clocks, start) };
    }
}
