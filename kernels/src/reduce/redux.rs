use super::ITEMS_PER_THREAD;
use crate::collective::block::{BLOCK_SUM_SLOTS, BLOCK_SUM_SMEM_BYTES, block_sum};
use crate::collective::thread::thread_sum_items;
use crate::device::FULL_MASK;
use crate::device::global::{Global, GlobalMut};
use crate::device::thread::{block_dim_x, block_idx_x, thread_idx_x};
use crate::device::warp::reduce_add_sync;
use crate::index::segment_len;
use crate::kernel;
use crate::static_shared;

/// Static shared memory of [`redux`] per block: the block reduction's slots, one `i32`
/// per warp of the largest block (128 bytes).
pub const REDUX_SHARED_BYTES: u32 = BLOCK_SUM_SMEM_BYTES;

/// The warp step of [`redux`]: one `redux.sync.add.s32`, the warp's wrapping sum in every
/// lane. Every lane of the warp must call it.
#[inline(always)]
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
fn warp_sum_redux(value: i32) -> i32 {
    reduce_add_sync(FULL_MASK, value)
}

kernel! {
    /// Block reduction whose warp step is **one instruction**: `redux.sync.add.s32`
    /// (sm_80+, CUDA C `__reduce_add_sync`) sums a value over the 32 lanes of a warp.
    ///
    /// # Concept
    /// **Warp-wide reductions in hardware.** Since Ampere (compute capability 8.0) the
    /// warp has reduction instructions for 32-bit integers: `redux.sync.{add,min,max,and,
    /// or,xor}` returns the reduction of one register over the lanes of the mask to every
    /// one of them. Where shuffles move values and the program adds them, `redux` does the
    /// whole tree. Its `add` exists for 32-bit integers only: `f32` sums still need
    /// shuffles.
    ///
    /// # Previous problem → fix
    /// `warp_shuffle` spends ten dependent instructions per warp step (five shuffles, five
    /// adds, each waiting for the one before) and runs the step twice per block. Here each
    /// step is one instruction. The rest is `warp_shuffle`: eight elements per thread, one
    /// shared slot per warp, one block barrier. The block reduction is a small part of the
    /// kernel's time next to the loads, so the gain shows most where blocks are short.
    ///
    /// The kernel exists only in the PTX built for sm_80 and newer: the host loads the
    /// PTX matching the GPU (`runtime/src/ptx.rs`) and the registry marks this variant
    /// `min_cc (8, 0)`, so older GPUs report it as unsupported instead of failing to load.
    ///
    /// # Execution
    /// 1. As `warp_shuffle`: thread `tid` of block `b` adds
    ///    `g_idata[b*8*blockDim + tid + j*blockDim]`, `j = 0..8`, in a register.
    /// 2. Each warp: `redux.sync.add` gives every lane the warp's sum; lane 0 writes it to
    ///    `slots[warp]`. Block barrier.
    /// 3. Warp 0: lane `w` takes `slots[w]` (0 past the last warp), `redux.sync.add` again;
    ///    thread 0 writes the block's sum to `g_odata[b]`.
    ///
    /// ```text
    ///  registers  t0 … t31 | t32 … t63 | …      (each: 8 elements)
    ///  redux.sync      Σ warp 0 | Σ warp 1 | …    one instruction per warp
    ///  shared     slots[0] slots[1] …            bar.sync
    ///  warp 0     redux.sync over the slots → thread 0 → g_odata[b]
    /// ```
    ///
    /// # Launch
    /// Grid `ceil(n / (8*blockDim))`, block a power of two in 32..=1024, 128 bytes of static
    /// shared memory ([`REDUX_SHARED_BYTES`]); compute capability 8.0 or newer. Reads its
    /// input; the host adds the partials.
    ///
    /// # Preconditions
    /// `g_idata` holds `n ≥ 1` elements and `g_odata` `gridDim.x`.
    ///
    /// # Safety
    /// The pointers are valid device memory of those lengths. Every thread reaches the one
    /// block barrier, and every lane of every warp takes part in every `redux.sync` (the
    /// block is a multiple of 32, and none sits in divergent code).
    ///
    /// # Measured
    /// NVIDIA H100 80GB HBM3, block 512, median of 20 timed runs, every run checked (`docs/measurements/2026-11-25-h100/twins_2e24.csv`, `twins_2e28.csv`, commit e032fa9):
    ///
    /// | n | time | GB/s | × previous | × CUDA C twin |
    /// |---|---|---|---|---|
    /// | 2^24 | 24.67 µs | 2720.0 | 1.01 (`warp_shuffle`) | — |
    /// | 2^28 | 337.6 µs | 3180.4 | 1.00 (`warp_shuffle`) | — |
    pub unsafe fn redux(g_idata: Global<i32>, g_odata: GlobalMut<i32>, n: u32) {
        let slots = static_shared!(REDUX_SLOTS: [i32; BLOCK_SUM_SLOTS]);
        let tid = thread_idx_x() as usize;
        let block = block_dim_x() as usize;
        let start = block_idx_x() as usize * ITEMS_PER_THREAD * block;
        let len = segment_len(n as usize, start, ITEMS_PER_THREAD * block);
        // SAFETY: start < n for every block of the grid, and the segment holds len elements.
        let sum = unsafe { thread_sum_items::<ITEMS_PER_THREAD>(g_idata.offset(start), len, tid, block) };
        // SAFETY: every thread gets here; the block is a multiple of 32, at most 1024.
        let total = unsafe { block_sum(sum, slots, warp_sum_redux) };
        if tid == 0 {
            // SAFETY: g_odata holds gridDim.x elements.
            unsafe { g_odata.write(block_idx_x() as usize, total)};
        }
    }
}
