use crate::device::global::GlobalMut;
use crate::device::thread::{block_dim_x, block_idx_x, sync_threads, thread_idx_x};
use crate::index::block_segment;
use crate::index::neighbored_less_index;
use crate::kernel;

// The lesson's code, which the lesson before does not have (tests/source.rs): `let index = neighbored_less_index(tid, stride);`
kernel! {
    /// Neighbored-pair tree reduction with the working threads packed first: at stride
    /// `s = 1, 2, 4, …` thread `tid` adds the pair at `index = 2*s*tid` while that slot is
    /// inside the block (the book's `reduceNeighboredLess`).
    ///
    /// # Concept
    /// **Warp divergence is per warp, so choose which threads work.** A warp issues one
    /// instruction for its 32 lanes; when a branch splits them it runs both paths with the
    /// other lanes masked off. Only a warp whose lanes disagree pays; a warp whose lanes
    /// all skip the `if` costs nothing and, once done, frees its scheduler slot. Mapping the
    /// same work onto the *first* threads, not every `2s`-th one, keeps whole warps either
    /// all busy or all idle.
    ///
    /// # Previous problem → fix
    /// `neighbored` lets thread `tid` work when `tid % (2*stride) == 0`: the busy threads
    /// are scattered over every warp, so every warp diverges at every round. Here the same
    /// slots (the same tree, the same adds) are handed to threads `0, 1, 2, …` by
    /// computing the slot from the thread, `index = 2*stride*tid`
    /// ([`neighbored_less_index`]). With 512 threads the first round keeps warps 0–7 fully
    /// busy and warps 8–15 fully idle; divergence is left only in the last five rounds, when
    /// fewer than 32 threads work.
    ///
    /// # Execution
    /// 1. Block `b` owns the segment `g_idata[b*blockDim .. (b+1)*blockDim)` (`len` of
    ///    those exist; the last block may be short).
    /// 2. For `stride = 1, 2, 4, …, blockDim/2`: thread `tid` computes
    ///    `index = 2*stride*tid` and, when `index < blockDim` (the book's test; in a short
    ///    last segment, when `index + stride < len`), adds `idata[index + stride]` into
    ///    `idata[index]`; then the block barrier.
    /// 3. Thread 0 writes `idata[0]`, the segment's sum, to `g_odata[b]`.
    ///
    /// ```text
    ///  blockDim = 8      idata: a0 a1 a2 a3 a4 a5 a6 a7
    ///  stride 1: t0 t1 t2 t3    ^--'  ^--'  ^--'  ^--'    index = 0, 2, 4, 6
    ///  stride 2: t0 t1          ^-----'     ^-----'       index = 0, 4
    ///  stride 4: t0             ^-----------'             index = 0
    ///  (neighbored used t0,t2,t4,t6 / t0,t4 / t0 for the same adds)
    /// ```
    ///
    /// What it leaves wrong: thread `tid` touches `idata[2*stride*tid]`, so the 32 loads of
    /// a warp are `2*stride` words apart. At stride 1 they span 256 bytes to use 128; from
    /// stride 4 on each lane's word sits in its own 32-byte sector, so one warp-wide load
    /// touches 32 sectors (1 KiB) for 128 useful bytes. The accesses are strided, never
    /// coalesced (`interleaved` fixes that).
    ///
    /// # Launch
    /// Grid `ceil(n / blockDim)`, block a power of two in 32..=1024, no shared memory.
    /// Works **in place**: the host passes a scratch copy of the input, never the input.
    ///
    /// # Preconditions
    /// `g_idata` holds `n ≥ 1` elements and `g_odata` `gridDim.x`.
    ///
    /// # Safety
    /// The pointers are valid device memory of those lengths; `g_idata` may be overwritten.
    /// Every thread reaches every barrier: threads past `n` idle through the loop instead
    /// of returning early (the book returns early, which the CUDA rules for
    /// `__syncthreads` do not allow).
    ///
    /// # Measured
    /// NVIDIA H100 80GB HBM3, block 512, median of 20 timed runs, every run checked (`docs/measurements/2026-11-25-h100/twins_2e24.csv`, `twins_2e28.csv`, commit e032fa9):
    ///
    /// | n | time | GB/s | × previous | × CUDA C twin |
    /// |---|---|---|---|---|
    /// | 2^24 | 120.1 µs | 558.7 | 1.77 (`neighbored_modulo`) | 1.001 |
    /// | 2^28 | 1850.7 µs | 580.2 | 1.80 (`neighbored_modulo`) | 0.999 |
    ///
    /// Nsight Compute, one launch each at 2^24 (`docs/measurements/2026-11-25-h100/cache_levels_2e24.csv`, commit e032fa9): active threads per warp instruction 28.60 → 31.36, branch efficiency 70.31 % → 98.44 %; sectors asked of L1 16.7 M → 16.7 M, of L2 2.1 M → 2.1 M, DRAM bytes read 67.1 → 67.1 MB; warp instructions 152.5 M → 62.6 M.
    pub unsafe fn neighbored_less(g_idata: GlobalMut<i32>, g_odata: GlobalMut<i32>, n: u32) {
        let tid = thread_idx_x();
        let block = block_dim_x();
        let b = block_idx_x();
        // Block `b`'s segment: `len` elements from `start` (the last block's may be short).
        let (start, len) = block_segment(n, b, block);
        // SAFETY: `start < n` for every block of the grid, so this stays in the buffer.
        let idata = unsafe { g_idata.offset(start as usize) };

        // The tree, its working threads packed first: thread `tid` adds the pair at
        // `index = 2*stride*tid`.
        if len == block {
            // A full segment (the whole block takes this path): the book's test. With `block`
            // a power of two, `index < block` puts the partner, `index + stride`, inside it too
            // (index is a multiple of 2*stride).
            // SAFETY: as just said, both slots are among the `len` of `idata`.
            unsafe { packed_rounds(idata, tid, block, |index, _| index < block) };
        } else {
            // A short last segment: the partner itself must exist (`index + stride < len`
            // implies `index < len <= blockDim`, the book's test).
            // SAFETY: both slots are below `len`.
            unsafe { packed_rounds(idata, tid, block, |index, stride| index + stride < len) };
        }

        if tid == 0 {
            // SAFETY: len >= 1, and g_odata holds gridDim.x elements.
            unsafe { g_odata.write(b as usize, idata.read(0)) };
        }
    }
}

/// The rounds of `neighbored_less`: at `stride = 1, 2, 4, …` thread `tid` adds the pair at
/// `index = 2*stride*tid` when `works(index, stride)`; a block barrier ends each round.
///
/// # Safety
/// `works(index, stride)` is true only when `index + stride` is one of `idata`'s slots; every
/// thread of the block calls this (it has barriers).
#[inline(always)]
unsafe fn packed_rounds(idata: GlobalMut<i32>, tid: u32, block: u32, works: impl Fn(u32, u32) -> bool) {
    let mut stride = 1;
    while stride < block {
        let index = neighbored_less_index(tid, stride);
        if works(index, stride) {
            let (i, j) = (index as usize, (index + stride) as usize);
            // SAFETY: index < j, both slots of `idata` (the caller's promise). In this round the
            // written slots are the multiples of 2*stride, one per thread, and the read
            // partners are not, so no slot is both read and written.
            unsafe { idata.write(i, idata.read(i).wrapping_add(idata.read(j))) };
        }
        sync_threads();
        stride *= 2;
    }
}
