use super::{square, start_block_clock, stop_block_clock};
use crate::device::global::{Global, GlobalMut};
use crate::device::thread::{block_dim_x, block_idx_x, global_idx_x, grid_dim_x, sync_threads, thread_idx_x};
use crate::kernel;
use crate::static_shared;

/// Slots of [`squares_block_tree`]'s shared array: one `i32` per thread of the largest block.
const SLOTS: usize = 1024;

/// Static shared memory of [`squares_block_tree`] per block: one `i32` per thread of the
/// largest block (1024), 4096 bytes.
pub const SQUARES_BLOCK_TREE_SHARED_BYTES: u32 = (SLOTS * core::mem::size_of::<i32>()) as u32;

kernel! {
    /// Step 5 of the sum-of-squares tutorial: `squares_grid_stride`, then each block adds its
    /// threads' sums with a **tree in shared memory** and writes **one** partial sum.
    ///
    /// # Concept
    /// **Reduce inside the block, on chip.** The threads of a block share a fast on-chip
    /// memory and a barrier, so they can combine their results themselves: `T` sums become
    /// one in `log2(T)` rounds of pairwise adds, with the barrier between rounds. The host
    /// (or a second pass) is left with one number per block instead of one per thread.
    ///
    /// # Previous problem → fix
    /// `squares_grid_stride` writes one partial per thread: `G` numbers (hundreds of
    /// thousands on a large GPU) go back to the host, and the host adds them one after
    /// another. Here the grid writes `gridDim` numbers (`T` times fewer); the extra cost
    /// is a few barriers per block, paid once.
    ///
    /// # Execution
    /// 1. `clock64()`; block barrier.
    /// 2. Grid-stride loop as in `squares_grid_stride`; thread `t` stores its sum in
    ///    `smem[t]`; block barrier.
    /// 3. For `s = T/2, T/4, …, 1`: `t < s` adds `smem[t + s]` into `smem[t]`; block barrier.
    /// 4. Thread 0 writes `smem[0]` to `g_result[blockIdx]`; block barrier; thread 0 writes
    ///    both clocks.
    ///
    /// ```text
    ///  T = 8     smem: s0 s1 s2 s3 s4 s5 s6 s7
    ///  s = 4           ^--+--+--+--'  '  '  '     s0+=s4 s1+=s5 s2+=s6 s3+=s7
    ///  s = 2           ^--+--'  '                 s0+=s2 s1+=s3
    ///  s = 1           ^--'                       s0+=s1  → g_result[blockIdx]
    /// ```
    ///
    /// # Launch
    /// Grid `k × SMs` (`k = 4`, as in `squares_grid_stride`; any grid works), block a power
    /// of two in 32..=1024, 4096 bytes of static shared memory
    /// ([`SQUARES_BLOCK_TREE_SHARED_BYTES`]).
    ///
    /// # Preconditions
    /// `g_idata` holds `n ≥ 1` elements, `g_result` `gridDim.x`, `g_clocks` `2 · gridDim.x`;
    /// `blockDim.x` is a power of two ≤ 1024.
    ///
    /// # Safety
    /// The pointers are valid device memory of those lengths; `g_idata` is only read.
    /// Every thread reaches every barrier (a thread with no element stores 0 and takes part
    /// in the tree).
    ///
    /// # Measured
    /// NVIDIA H100 80GB HBM3, block 512, median of 20 timed runs, every run checked (`docs/measurements/2026-11-25-h100/twins_2e24.csv`, `twins_2e28.csv`, commit e032fa9):
    ///
    /// | n | time | GB/s | × previous | × CUDA C twin |
    /// |---|---|---|---|---|
    /// | 2^24 | 33.66 µs | 1993.5 | 1.02 (`squares_grid_stride`) | 1.025 |
    /// | 2^28 | 465.9 µs | 2304.5 | 1.00 (`squares_grid_stride`) | 1.002 |
    pub unsafe fn squares_block_tree(g_idata: Global<i32>, g_result: GlobalMut<i32>, g_clocks: GlobalMut<u64>, n: u32) {
        let smem = static_shared!(SQUARES: [i32; SLOTS]);
        let tid = thread_idx_x();
        let block = block_dim_x();
        let g = global_idx_x();
        let threads = grid_dim_x() as usize * block as usize;
        let start = start_block_clock();

        let mut sum = 0i32;
        let mut i = g;
        while i < n as usize {
            // SAFETY: i < n.
            sum = sum.wrapping_add(square(unsafe { g_idata.read(i) }));
            i += threads;
        }
        // SAFETY: tid < blockDim <= 1024; each thread writes its own slot.
        unsafe { smem.write(tid as usize, sum) };
        sync_threads();

        let mut s = block / 2;
        while s > 0 {
            if tid < s {
                let (a, b) = (tid as usize, (tid + s) as usize);
                // SAFETY: a < b < 2s <= blockDim. Thread `tid` alone writes smem[tid];
                // smem[b] (b >= s) is written by no thread in this round.
                unsafe { smem.write(a, smem.read(a).wrapping_add(smem.read(b))) };
            }
            sync_threads();
            s >>= 1;
        }

        if tid == 0 {
            // SAFETY: smem[0] is final after the last barrier; g_result holds gridDim.x
            // elements.
            unsafe { g_result.write(block_idx_x() as usize, smem.read(0))};
        }

        // SAFETY: g_clocks holds 2 * gridDim.x elements.
        unsafe { stop_block_clock(g_clocks, start) };
    }
}
