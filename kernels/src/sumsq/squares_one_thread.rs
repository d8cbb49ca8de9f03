use super::{square, start_block_clock, stop_block_clock};
use crate::device::global::{Global, GlobalMut};
use crate::kernel;

kernel! {
    /// Step 1 of the sum-of-squares tutorial: **one GPU thread** adds up every `x²`.
    ///
    /// # Concept
    /// **A GPU thread is slow; a GPU is fast only with many of them.** This is the CPU loop
    /// moved to the GPU unchanged. One thread issues one load at a time (a few, if the
    /// compiler unrolls the loop) and waits hundreds of cycles for each miss in the
    /// caches; one warp lane of one multiprocessor works while the rest of the GPU idles.
    /// Its clock is the yardstick for the next steps.
    ///
    /// # Previous problem → fix
    /// The starting point: correct, and as slow as a GPU can be. Step 2
    /// (`squares_chunked`) puts a block of threads to work.
    ///
    /// # Execution
    /// 1. `clock64()`; block barrier (of one thread).
    /// 2. `sum = Σ g_idata[i]²` for `i = 0 .. n`, wrapping.
    /// 3. `g_result[0] = sum`; block barrier; `clock64()`; both clocks to `g_clocks[0..2]`.
    ///
    /// # Launch
    /// Grid 1, block 1 (the requested block size is ignored), no shared memory.
    ///
    /// # Preconditions
    /// `g_idata` holds `n ≥ 1` elements, `g_result` 1, `g_clocks` 2; the launch is one
    /// block of one thread.
    ///
    /// # Safety
    /// The pointers are valid device memory of those lengths; `g_idata` is only read.
    ///
    /// # Measured
    /// NVIDIA H100 80GB HBM3, block 512, median of 20 timed runs, every run checked (`docs/measurements/2026-11-25-h100/twins_2e24.csv`, `twins_2e28.csv`, commit e032fa9):
    ///
    /// | n | time | GB/s | × previous | × CUDA C twin |
    /// |---|---|---|---|---|
    /// | 2^24 | 400520.7 µs | 0.2 | 0.00 (`atomic_accumulate`) | 1.082 |
    /// | 2^28 | 6407721.2 µs | 0.2 | 0.00 (`atomic_accumulate`) | 1.082 |
    pub unsafe fn squares_one_thread(g_idata: Global<i32>, g_result: GlobalMut<i32>, g_clocks: GlobalMut<u64>, n: u32) {
        let start = start_block_clock();

        let mut sum = 0i32;
        for i in 0..n as usize {
            // SAFETY: i < n.
            sum = sum.wrapping_add(square(unsafe { g_idata.read(i) }));
        }
        // SAFETY: g_result holds one element.
        unsafe { g_result.write(0, sum) };

        // SAFETY: g_clocks holds 2 = 2 * gridDim.x elements.
        unsafe { stop_block_clock(g_clocks, start) };
    }
}
