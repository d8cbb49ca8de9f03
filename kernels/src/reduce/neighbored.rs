use crate::device::global::GlobalMut;
use crate::device::thread::{block_dim_x, block_idx_x, sync_threads, thread_idx_x};
use crate::index::block_segment;
use crate::kernel;

// The lesson's code, which the lesson before does not have (tests/source.rs): `tid.is_multiple_of(2 * stride)`
kernel! {
    /// Neighbored-pair tree reduction in global memory: at stride `s = 1, 2, 4, …` thread
    /// `tid` adds its neighbour `s` places away when `tid % (2s) == 0` (the book's
    /// `reduceNeighbored`).
    ///
    /// # Concept
    /// **Parallel reduction as a tree.** Addition is associative, so `n` numbers can be
    /// added pairwise in `log2(n)` rounds instead of `n - 1` dependent steps. Each block
    /// reduces its own segment with a tree, separating the rounds with the block barrier
    /// (`__syncthreads`), and writes one partial sum; the partials are added afterwards.
    ///
    /// # Previous problem → fix
    /// The sequential sum on the CPU (or one GPU thread) is a chain of `n - 1` dependent
    /// adds: no parallelism at all. Here every block works at once, and inside a block the
    /// adds of a round are independent, so a block of `B` threads needs only `log2(B)`
    /// rounds. What it leaves wrong: the working thread of each pair is `tid` with
    /// `tid % (2*stride) == 0` — at stride 1 every other thread, at stride 2 every fourth,
    /// and so on. The busy threads are spread over **every** warp, so every warp of the block
    /// diverges (runs the `if` with most lanes masked off) at every round: at stride 16 a
    /// warp issues the add for one lane out of 32, and no warp ever retires early.
    ///
    /// # Execution
    /// 1. Block `b` owns the segment `g_idata[b*blockDim .. (b+1)*blockDim)` (`len` of
    ///    those exist; the last block may be short).
    /// 2. For `stride = 1, 2, 4, …, blockDim/2`: thread `tid` with `tid % (2*stride) == 0`
    ///    adds `idata[tid + stride]` into `idata[tid]`, when that element exists; then the
    ///    block barrier.
    /// 3. Thread 0 writes `idata[0]`, the segment's sum, to `g_odata[b]`.
    ///
    /// ```text
    ///  blockDim = 8      idata: a0 a1 a2 a3 a4 a5 a6 a7
    ///  stride 1 (t0,2,4,6)      ^--'  ^--'  ^--'  ^--'    a0+=a1  a2+=a3  a4+=a5  a6+=a7
    ///  stride 2 (t0,4)          ^-----'     ^-----'       a0+=a2  a4+=a6
    ///  stride 4 (t0)            ^-----------'             a0+=a4
    ///  blockDim = 1024, working lanes per warp at stride 1, 2, 4, 8, 16: 16, 8, 4, 2, 1
    ///  — all 32 warps issue the add in each of those rounds; then lane 0 of every 2nd,
    ///  4th, … warp
    /// ```
    ///
    /// In a short segment the tree still holds: after the round of stride `s`, slot `i`
    /// (a multiple of `2s`) holds the sum of the elements `i .. min(i + 2s, len)`; a slot
    /// whose partner `i + s` lies past `len` has nothing to add and keeps its value.
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
    /// | 2^24 | 127.1 µs | 528.0 | — | 1.707 |
    /// | 2^28 | 1961.7 µs | 547.3 | — | 1.730 |
    pub unsafe fn neighbored(g_idata: GlobalMut<i32>, g_odata: GlobalMut<i32>, n: u32) {
        let tid = thread_idx_x();
        let block = block_dim_x();
        let b = block_idx_x();
        // Block `b`'s segment: `len` elements from `start` (the last block's may be short).
        let (start, len) = block_segment(n, b, block);
        // SAFETY: `start < n` for every block of the grid, so this stays in the buffer.
        let idata = unsafe { g_idata.offset(start as usize) };

        // The tree: at stride 1, 2, 4, …, thread `tid` adds its neighbour `stride` places
        // away when `tid % (2*stride) == 0` (`is_multiple_of` is that remainder without a
        // divide-by-zero panic path; LLVM turns it into `tid & (2*stride - 1) == 0`, which
        // `neighbored_modulo` does not let it do).
        let works = |tid: u32, stride: u32| tid.is_multiple_of(2 * stride);
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
