use crate::collective::block::{BLOCK_SUM_SLOTS, BLOCK_SUM_SMEM_BYTES, block_sum};
use crate::collective::warp::warp_sum_shfl;
use crate::device::global::{Global, GlobalMut};
use crate::device::thread::{block_dim_x, block_idx_x, global_idx_x, grid_dim_x, thread_idx_x};
use crate::kernel;
use crate::static_shared;

/// Static shared memory of [`grid_stride`] per block: the block reduction's slots, one `i32`
/// per warp of the largest block (128 bytes).
pub const GRID_STRIDE_SHARED_BYTES: u32 = BLOCK_SUM_SMEM_BYTES;

kernel! {
    /// Grid-stride loop: a grid no larger than the GPU holds at once walks the whole
    /// input, each thread adding every `gridDim*blockDim`-th element; then the
    /// warp-shuffle block reduction.
    ///
    /// # Concept
    /// **Size the grid to the machine, not to the data.** A multiprocessor holds a fixed
    /// number of resident blocks (its *occupancy*: limited by threads, registers and shared
    /// memory per SM). A grid of exactly `SMs × resident blocks` runs in one wave: every
    /// block starts at once, none waits to be scheduled, and a loop lets each thread cover
    /// as many elements as it takes — `for (i = global id; i < n; i += gridDim*blockDim)`.
    /// The host asks the occupancy calculator (`cuOccupancyMaxActiveBlocksPerMultiprocessor`)
    /// for the resident count.
    ///
    /// # Previous problem → fix
    /// `warp_shuffle` launches one block per `8 × blockDim` elements: 32 768 blocks of 512
    /// at n = 2^27. Blocks are created, scheduled and retired in waves, every block pays its
    /// tree and its partial sum (32 768 partials for the host to add), and the eight-element
    /// unrolling is fixed at compile time. Here the grid is the GPU's size whatever `n`; the
    /// per-thread loop absorbs any length, and there is one partial per resident block. Each
    /// trip still loads one 4-byte word per thread — `vector_loads` fixes that.
    ///
    /// # Execution
    /// 1. Thread `g = blockIdx*blockDim + tid` adds `g_idata[g]`, `g_idata[g + G]`,
    ///    `g_idata[g + 2G]`, … below `n`, where `G = gridDim*blockDim` (each trip, the grid
    ///    reads `G` consecutive elements: coalesced).
    /// 2. Block reduction as in `warp_shuffle` (`collective::block::block_sum`): shuffles in
    ///    each warp, one slot per warp, one barrier, shuffles in warp 0.
    /// 3. Thread 0 writes the block's sum to `g_odata[blockIdx]`.
    ///
    /// ```text
    ///  g_idata  [ block0 | block1 | … | blockB-1 ][ block0 | block1 | … ][ …      n
    ///           └──────── trip 0: G elements ───┘└──── trip 1 ─────────┘
    ///  thread g reads g, g+G, g+2G, …  then the block reduction → g_odata[blockIdx]
    /// ```
    ///
    /// # Launch
    /// Grid `min(ceil(n / blockDim), SMs × resident blocks per SM)`, block a power of two in
    /// 32..=1024, 128 bytes of static shared memory
    /// ([`GRID_STRIDE_SHARED_BYTES`]). Reads its input; the host adds the
    /// partials.
    ///
    /// # Preconditions
    /// `g_idata` holds `n ≥ 1` elements and `g_odata` `gridDim.x`.
    ///
    /// # Safety
    /// The pointers are valid device memory of those lengths. Threads with nothing to add
    /// (global index past `n`) add nothing and still reach the block barrier and the
    /// shuffles.
    ///
    /// # Measured
    /// NVIDIA H100 80GB HBM3, block 512, median of 20 timed runs, every run checked (`docs/measurements/2026-11-25-h100/twins_2e24.csv`, `twins_2e28.csv`, commit e032fa9):
    ///
    /// | n | time | GB/s | × previous | × CUDA C twin |
    /// |---|---|---|---|---|
    /// | 2^24 | 33.34 µs | 2012.6 | 0.74 (`redux`) | — |
    /// | 2^28 | 464.0 µs | 2313.9 | 0.73 (`redux`) | — |
    pub unsafe fn grid_stride(g_idata: Global<i32>, g_odata: GlobalMut<i32>, n: u32) {
        let slots = static_shared!(GRID_STRIDE_SLOTS: [i32; BLOCK_SUM_SLOTS]);
        let n = n as usize;
        let stride = grid_dim_x() as usize * block_dim_x() as usize;
        let mut i = global_idx_x();
        let mut sum = 0i32;
        while i < n {
            // SAFETY: i < n.
            sum = sum.wrapping_add(unsafe { g_idata.read(i) });
            i += stride;
        }
        // SAFETY: every thread gets here; the block is a multiple of 32, at most 1024.
        let total = unsafe { block_sum(sum, slots, warp_sum_shfl) };
        if thread_idx_x() == 0 {
            // SAFETY: g_odata holds gridDim.x elements.
            unsafe { g_odata.write(block_idx_x() as usize, total)};
        }
    }
}
