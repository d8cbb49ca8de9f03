use crate::device::global::GlobalMut;
use crate::device::math::rem_u32;
use crate::device::thread::{block_dim_x, block_idx_x, sync_threads, thread_idx_x};
use crate::index::block_segment;
use crate::kernel;

// The lesson's code, which the lesson before does not have (tests/source.rs): `rem_u32(tid, 2 * stride) == 0`
kernel! {
    /// `neighbored` as the book's compiler runs it: the test `tid % (2*stride) == 0` is a
    /// real remainder (`rem.u32`), not the bit mask LLVM makes of it.
    ///
    /// # Concept
    /// **What an instruction costs in a divergent tree.** In `neighbored` every warp of the
    /// block evaluates the test at every round, even when one lane of it works. An integer
    /// remainder by a value the compiler cannot see as a power of two is not one instruction
    /// on the GPU: ptxas expands `rem.u32` into a multiply-based sequence of about twenty.
    /// The book's `reduceNeighbored` pays that, for every thread, in every round.
    ///
    /// # Previous problem → fix
    /// `neighbored` hides the book's first lesson in Rust: LLVM proves `2*stride` is a power
    /// of two and replaces the remainder by `tid & (2*stride - 1)`, so `neighbored` and
    /// `neighbored_less` run within a few percent of each other, where the book measures
    /// 8.46 ms against 7.86 ms. This kernel is not a fix but the faithful form: it keeps the
    /// remainder as the hardware instruction (`device::math::rem_u32`), so the cost the book
    /// measures — divergent warps that also spend their issue slots on a division — shows in
    /// the time and in the profiler (instructions executed), next to its CUDA C twin.
    ///
    /// # Execution
    /// 1. Block `b` owns the segment `g_idata[b*blockDim .. (b+1)*blockDim)` (`len` of
    ///    those exist; the last block may be short).
    /// 2. For `stride = 1, 2, 4, …, blockDim/2`: thread `tid` with
    ///    `rem(tid, 2*stride) == 0` adds `idata[tid + stride]` into `idata[tid]`, when that
    ///    element exists; then the block barrier.
    /// 3. Thread 0 writes `idata[0]`, the segment's sum, to `g_odata[b]`.
    ///
    /// ```text
    ///  per round, every thread:   r = rem.u32(tid, 2*stride)     (~20 SASS instructions)
    ///                             if r == 0 && tid + stride < len: idata[tid] += idata[tid + stride]
    ///                             bar.sync
    /// ```
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
    /// | 2^24 | 213.2 µs | 314.8 | 0.60 (`neighbored`) | 1.018 |
    /// | 2^28 | 3329.1 µs | 322.5 | 0.59 (`neighbored`) | 1.020 |
    ///
    /// Nsight Compute, one launch each at 2^24 (`docs/measurements/2026-11-25-h100/cache_levels_2e24.csv`, commit e032fa9): active threads per warp instruction 24.49 → 28.60, branch efficiency 70.31 % → 70.31 %; sectors asked of L1 16.7 M → 16.7 M, of L2 2.1 M → 2.1 M, DRAM bytes read 67.1 → 67.1 MB; warp instructions 80.2 M → 152.5 M.
    pub unsafe fn neighbored_modulo(g_idata: GlobalMut<i32>, g_odata: GlobalMut<i32>, n: u32) {
        let tid = thread_idx_x();
        let block = block_dim_x();
        let b = block_idx_x();
        // Block `b`'s segment: `len` elements from `start` (the last block's may be short).
        let (start, len) = block_segment(n, b, block);
        // SAFETY: `start < n` for every block of the grid, so this stays in the buffer.
        let idata = unsafe { g_idata.offset(start as usize) };

        // The tree: at stride 1, 2, 4, …, thread `tid` adds its neighbour `stride` places
        // away when `tid % (2*stride) == 0`, computed with a real remainder
        // (`rem_u32`: PTX `rem.u32`, which the compiler cannot turn into an AND).
        let works = |tid: u32, stride: u32| rem_u32(tid, 2 * stride) == 0;
        if len == block {
            // A full segment (every block but the short last one): a multiple of 2·stride
            // below the power of two `block` has its partner inside, so each round tests
            // `works` only, as the book's loop does.
            // SAFETY: as just said; every thread of the block calls it.
            unsafe { rounds(idata, tid, block, works) };
        } else {
            // The short last segment: the partner must exist too.
            // SAFETY: the partner test keeps j < len; every thread of the block calls it.
            unsafe { rounds(idata, tid, block, |tid, stride| works(tid, stride) && tid + stride < len) };
        }

        if tid == 0 {
            // SAFETY: len >= 1, and g_odata holds gridDim.x elements.
            unsafe { g_odata.write(b as usize, idata.read(0)) };
        }
    }
}

/// The rounds of the neighbored tree: at `stride = 1, 2, 4, …, block/2` thread `tid` adds
/// `idata[tid + stride]` into `idata[tid]` when `adds(tid, stride)`; a block barrier ends each
/// round.
///
/// # Safety
/// `adds(tid, stride)` is true only for multiples `tid` of `2 * stride` whose partner
/// `tid + stride` is one of `idata`'s elements; every thread of the block calls this (it has
/// barriers).
#[inline(always)]
unsafe fn rounds(idata: GlobalMut<i32>, tid: u32, block: u32, adds: impl Fn(u32, u32) -> bool) {
    let mut stride = 1;
    while stride < block {
        if adds(tid, stride) {
            let (i, j) = (tid as usize, (tid + stride) as usize);
            // SAFETY: i < j, both in `idata` (the caller's promise). In this round the writers
            // are multiples of 2*stride and the partners j = i + stride are not, so no slot is
            // both read and written, and each slot has one writer.
            unsafe { idata.write(i, idata.read(i).wrapping_add(idata.read(j))) };
        }
        sync_threads();
        stride *= 2;
    }
}
