use crate::device::FULL_MASK;
use crate::device::global::GlobalMut;
use crate::device::thread::{block_dim_x, block_idx_x, sync_threads, thread_idx_x};
use crate::device::warp::sync_warp;
use crate::index::block_segment;
use crate::kernel;

// The lesson's code, which the lesson before does not have (tests/source.rs): `for s in [512u32, 256, 128, 64] {`

kernel! {
    /// Tree reduction in **global** memory with the last warp unrolled (the book's
    /// `reduceGmem`): the baseline that the shared-memory kernels of chapter 5 are measured
    /// against.
    ///
    /// # Concept
    /// **Every round of a tree in global memory is a round trip to DRAM (or L2).** A
    /// tree reduction reads and writes its working array once per level: `log2(blockDim)`
    /// levels, each a load of the partner, a load of the own slot and a store, all to
    /// global memory, with a block barrier in between. This kernel does exactly that, so
    /// its time and its global loads and stores (Nsight Compute's memory workload
    /// analysis) are the yardstick for `smem`, which does the same tree on chip.
    ///
    /// # Previous problem → fix
    /// It is the chapter's starting point, the global-memory kernels of chapter 3 in their
    /// best form: interleaved pairs (no divergence above the last warp), the levels above
    /// the last warp written out (`blockDim ≥ 1024, 512, 256, 128`) and the last warp's
    /// six levels unrolled without block barriers. The problem it leaves, which `smem`
    /// fixes: every level goes through global memory.
    ///
    /// **The book's last warp is wrong on Volta and later.** It runs, for `tid < 32`,
    /// `vsmem[tid] += vsmem[tid + 32]; vsmem[tid] += vsmem[tid + 16]; …` through a
    /// `volatile` pointer, counting on the 32 lanes executing each statement together
    /// (lock-step). Since Volta the lanes of a warp are scheduled independently: lane 0 may
    /// read `vsmem[16]` at the `+16` step before lane 16 has stored its `+32` result there
    /// (or after lane 16 has already stored its `+16` result), and the sum is wrong.
    /// `volatile` only stops the compiler from keeping values in registers; it orders
    /// nothing between lanes. Here each level is `if tid < s { idata[tid] += idata[tid+s] }`
    /// followed by `__syncwarp()` (the warp barrier, which also makes the stores of the
    /// level visible to the whole warp): within a level the lanes write `[0, s)` and read
    /// `[s, 2s)` besides their own slot, so no slot is read and written by different
    /// lanes, and the warp barrier orders each level after the previous one.
    ///
    /// # Execution
    /// 1. Block `b` owns the segment `g_idata[b*blockDim .. (b+1)*blockDim)` (`len` of
    ///    those exist; the last block may be short).
    /// 2. Levels `s = 512, 256, 128, 64` (those with `2s ≤ blockDim`): thread `tid < s`
    ///    adds `idata[tid + s]` into `idata[tid]` when that element exists; after every
    ///    level, whether the block took part or not, the block barrier.
    /// 3. Warp 0 alone, levels `s = 32, 16, 8, 4, 2, 1`: lane `tid < s` adds
    ///    `idata[tid + s]` when it exists (`tid + s < len`, which also keeps a block of 32
    ///    from reading `idata[tid + 32]` past its segment); after each level `__syncwarp()`
    ///    of all 32 lanes.
    /// 4. Thread 0 writes `idata[0]`, the segment's sum, to `g_odata[b]`.
    ///
    /// ```text
    ///  blockDim = 256, every arrow a global-memory load + store:
    ///  s = 128 (t0-127)   idata[0..128)  += idata[128..256)    bar.sync
    ///  s =  64 (t0-63)    idata[0..64)   += idata[64..128)     bar.sync
    ///  warp 0:
    ///  s =  32 (t0-31)    idata[0..32)   += idata[32..64)      bar.warp.sync
    ///  s =  16 (t0-15)    idata[0..16)   += idata[16..32)      bar.warp.sync
    ///   …                                                      …
    ///  s =   1 (t0)       idata[0]       += idata[1]           bar.warp.sync
    /// ```
    ///
    /// # Launch
    /// Grid `ceil(n / blockDim)`, block a power of two in 32..=1024, no shared memory.
    /// Works **in place**: the host passes a scratch copy of the input, never the input.
    ///
    /// # Preconditions
    /// `g_idata` holds `n ≥ 1` elements and `g_odata` `gridDim.x`; `blockDim.x` is a power
    /// of two in 32..=1024 (so warp 0 is a full warp and the levels halve exactly).
    ///
    /// # Safety
    /// The pointers are valid device memory of those lengths; `g_idata` may be overwritten.
    /// Every thread reaches every block barrier (threads past `n` and threads with no pair
    /// idle through them; the book returns early, which the CUDA rules for
    /// `__syncthreads` do not allow), and all 32 lanes of warp 0 reach every `__syncwarp`.
    ///
    /// # Measured
    /// NVIDIA H100 80GB HBM3, block 512, median of 20 timed runs, every run checked (`docs/measurements/2026-11-25-h100/twins_2e24.csv`, `twins_2e28.csv`, commit e032fa9):
    ///
    /// | n | time | GB/s | × previous | × CUDA C twin |
    /// |---|---|---|---|---|
    /// | 2^24 | 87.89 µs | 763.6 | 0.37 (`complete_unroll`) | 1.180 |
    /// | 2^28 | 1331.8 µs | 806.2 | 0.30 (`complete_unroll`) | 1.156 |
    pub unsafe fn gmem(g_idata: GlobalMut<i32>, g_odata: GlobalMut<i32>, n: u32) {
        let tid = thread_idx_x();
        let block = block_dim_x();
        let b = block_idx_x();
        // Block `b`'s segment: `len` elements from `start` (the last block's may be short).
        let (start, len) = block_segment(n, b, block);
        // SAFETY: `start < n` for every block of the grid, so this stays in the buffer.
        let idata = unsafe { g_idata.offset(start as usize) };

        // Levels above the last warp, written out as in the book (`blockDim >= 2s`). The
        // barrier is outside the `if`, so every thread of the block reaches it.
        for s in [512u32, 256, 128, 64] {
            if 2 * s <= block && tid < s && tid + s < len {
                let (i, j) = (tid as usize, (tid + s) as usize);
                // SAFETY: i < j < len. Thread `tid` alone writes idata[tid]; idata[j]
                // (j >= s) is written by no thread at this level.
                unsafe { idata.write(i, idata.read(i).wrapping_add(idata.read(j)))};
            }
            sync_threads();
        }
        // The last warp: no block barrier, a warp barrier per level (see the docs for
        // why the book's lock-step `volatile` version races on Volta and later).
        if tid < 32 {
            for s in [32u32, 16, 8, 4, 2, 1] {
                if tid < s && tid + s < len {
                    let (i, j) = (tid as usize, (tid + s) as usize);
                    // SAFETY: i < j < len. Lanes write [0, s) and read [s, 2s) besides
                    // their own slot: no slot has a writer and a different reader at
                    // this level; the warp barrier below orders the levels.
                    unsafe { idata.write(i, idata.read(i).wrapping_add(idata.read(j)))};
                }
                sync_warp(FULL_MASK);
            }
        }

        if tid == 0 {
            // SAFETY: len >= 1, and g_odata holds gridDim.x elements.
            unsafe { g_odata.write(b as usize, idata.read(0)) };
        }
    }
}
