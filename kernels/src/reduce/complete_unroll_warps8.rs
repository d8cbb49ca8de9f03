use crate::device::global::GlobalMut;
use crate::device::thread::{block_dim_x, block_idx_x, sync_threads, thread_idx_x};
use crate::device::warp::sync_warp;
use crate::device::{FULL_MASK, WARP_SIZE};
use crate::index::{block_segment, fold_count, fold_index};
use crate::kernel;

// The lesson's code, which the lesson before does not have (tests/source.rs): `if block >= 1024 {`
kernel! {
    /// `unroll_warps8` with every round of the tree unrolled: since a block has at most
    /// 1024 threads, the tree has at most four block-wide rounds (strides 512, 256, 128,
    /// 64) before the last warp, and each is written out, guarded by the block size (the
    /// book's `reduceCompleteUnrollWarps8`).
    ///
    /// # Concept
    /// **Complete unrolling of a loop whose trip count is bounded.** When the hardware caps
    /// the iterations (here `blockDim.x ≤ 1024`), the loop can be written as straight-line
    /// code: no counter, no test and branch per round, and every offset (`tid + 512`, …) is
    /// a constant the compiler folds into the load's address. The guards
    /// `blockDim.x >= 1024`, … have the same value in every thread of the block, so they
    /// cause no divergence.
    ///
    /// # Previous problem → fix
    /// `unroll_warps8` still runs its block-wide rounds as a loop: a runtime stride, a
    /// shift, a compare and a branch per round, and address arithmetic from a stride the
    /// compiler cannot see. Here the four possible block-wide rounds are written out, each
    /// with constant offsets.
    ///
    /// # Execution
    /// 1. Block `b` owns the segment `g_idata[8b*blockDim .. 8(b+1)*blockDim)` (`len` of
    ///    those exist; the last block may be short).
    /// 2. Fold (taught by `unroll8`): thread `tid` adds the elements
    ///    `tid + k*blockDim`, `k = 0..8`, that exist into `idata[tid]`; block barrier.
    /// 3. Block-wide rounds over `idata[0 .. min(len, blockDim))`, each followed by a block
    ///    barrier (outside the `if`, as in the book, so every thread reaches it):
    ///
    ///    ```text
    ///     if blockDim >= 1024:  tid < 512 adds idata[tid + 512]    sync_threads
    ///     if blockDim >=  512:  tid < 256 adds idata[tid + 256]    sync_threads
    ///     if blockDim >=  256:  tid < 128 adds idata[tid + 128]    sync_threads
    ///     if blockDim >=  128:  tid <  64 adds idata[tid +  64]    sync_threads
    ///    ```
    ///
    ///    each add only when `tid + stride < min(len, blockDim)`.
    /// 4. Warp 0 finishes with the unrolled last warp (taught by `unroll_warps8`):
    ///    strides 32 … 1 with `sync_warp` between rounds, never the book's unsynchronised
    ///    `volatile` code, which races on Volta and later (`unroll_warps8`'s docs say why).
    /// 5. Thread 0 writes `idata[0]` to `g_odata[b]`.
    ///
    /// What it leaves wrong: `blockDim.x` is still a runtime value, so the four guards are
    /// evaluated at run time and the barriers of the rounds a small block skips are still
    /// executed (`complete_unroll` makes the block size a compile-time constant).
    ///
    /// # Launch
    /// Grid `ceil(n / (8*blockDim))`, block a power of two in 32..=1024, no shared memory.
    /// Works **in place**: the host passes a scratch copy of the input, never the input.
    ///
    /// # Preconditions
    /// `g_idata` holds `n ≥ 1` elements and `g_odata` `gridDim.x`.
    ///
    /// # Safety
    /// The pointers are valid device memory of those lengths; `g_idata` may be overwritten.
    /// Every thread reaches every block barrier (threads past `n` fold nothing and idle
    /// through the rounds), and all 32 lanes of warp 0 reach every warp barrier.
    ///
    /// # Measured
    /// NVIDIA H100 80GB HBM3, block 512, median of 20 timed runs, every run checked (`docs/measurements/2026-11-25-h100/twins_2e24.csv`, `twins_2e28.csv`, commit e032fa9):
    ///
    /// | n | time | GB/s | × previous | × CUDA C twin |
    /// |---|---|---|---|---|
    /// | 2^24 | 32.96 µs | 2036.1 | 1.00 (`unroll_warps8`) | 1.070 |
    /// | 2^28 | 399.5 µs | 2687.6 | 1.00 (`unroll_warps8`) | 1.035 |
    pub unsafe fn complete_unroll_warps8(g_idata: GlobalMut<i32>, g_odata: GlobalMut<i32>, n: u32) {
        let tid = thread_idx_x();
        let block = block_dim_x();
        let (start, len) = block_segment(n, block_idx_x(), 8 * block);
        // SAFETY: `start < n` for every block of the grid, so this stays in the buffer.
        let idata = unsafe { g_idata.offset(start as usize) };

        // SAFETY: `idata` holds the `len` elements of this block's segment.
        unsafe { fold8(idata, tid, block, len) };
        sync_threads();

        let len = len.min(block);
        if block >= 1024 {
            // SAFETY: `idata` holds `len` elements, and a block barrier separates each round
            // from the next (the same holds for the three rounds below).
            unsafe { add_pair(idata, tid, 512, len) };
        }
        sync_threads();
        if block >= 512 {
            // SAFETY: as above.
            unsafe { add_pair(idata, tid, 256, len) };
        }
        sync_threads();
        if block >= 256 {
            // SAFETY: as above.
            unsafe { add_pair(idata, tid, 128, len) };
        }
        sync_threads();
        if block >= 128 {
            // SAFETY: as above.
            unsafe { add_pair(idata, tid, 64, len) };
        }
        sync_threads();

        if tid < WARP_SIZE {
            // SAFETY: exactly warp 0 enters (blockDim >= 32), len <= blockDim, and the block
            // barrier just above follows every other warp's writes.
            unsafe { last_warp(idata, tid, len) };
        }

        if tid == 0 {
            // SAFETY: len >= 1, and g_odata holds gridDim.x elements.
            unsafe { g_odata.write(block_idx_x() as usize, idata.read(0))};
        }
    }
}

/// The fold (taught by `unroll8`): thread `tid` adds the elements `tid + k*block`,
/// `k = 0..8`, of its block's segment that exist (one per data block) and stores the sum in
/// `idata[tid]`.
///
/// # Safety
/// `idata` holds the `len` elements of the segment. Each thread of the block calls this once;
/// the caller puts a block barrier between it and the tree (the tree reads slots other
/// threads wrote here).
#[inline(always)]
unsafe fn fold8(idata: GlobalMut<i32>, tid: u32, block: u32, len: u32) {
    let mut sum = 0i32;
    if fold_index(tid, block, 7) < len {
        // The whole stripe exists (every block but the short last one): eight loads that do
        // not depend on each other, unguarded (the loop over a constant count is unrolled, so
        // they issue back to back), as the book's `if (idx + 7 * blockDim.x < n)`.
        for k in 0..8 {
            // SAFETY: fold_index(tid, block, k) <= fold_index(tid, block, 7) < len.
            sum = sum.wrapping_add(unsafe { idata.read(fold_index(tid, block, k) as usize) });
        }
    } else {
        // The short last block: only the elements that exist (none for a thread past its end).
        let count = fold_count(len, block, tid, 8);
        if count == 0 {
            return;
        }
        for k in 0..count {
            // SAFETY: k < count means fold_index(tid, block, k) < len (index::fold_count).
            sum = sum.wrapping_add(unsafe { idata.read(fold_index(tid, block, k) as usize) });
        }
    }
    // SAFETY: tid < len here (fold_index(tid, block, 0) = tid). Slot tid is read and written
    // by thread tid only in this phase (the other indices it reads are >= blockDim, which no
    // thread writes).
    unsafe { idata.write(tid as usize, sum) };
}

/// One round of the tree for one thread: thread `tid < stride` adds `idata[tid + stride]` into
/// `idata[tid]` when `tid + stride < len`. In a round the written slots are `[0, stride)` and
/// the read ones `[stride, 2*stride)`: disjoint, so the threads of one round never race.
///
/// # Safety
/// `idata` holds `len` elements. Between two rounds the caller puts a barrier that covers
/// every thread of the later round's readers and the earlier round's writers.
#[inline(always)]
unsafe fn add_pair(idata: GlobalMut<i32>, tid: u32, stride: u32, len: u32) {
    if tid < stride && tid + stride < len {
        let (i, j) = (tid as usize, (tid + stride) as usize);
        // SAFETY: i < j < len; slot i is written by thread `tid` only, slot j (>= stride) is
        // written by no thread of this round.
        unsafe { idata.write(i, idata.read(i).wrapping_add(idata.read(j))) };
    }
}

/// The unrolled last warp (taught by `unroll_warps8`): the last six rounds of the tree
/// (strides 32, 16, 8, 4, 2, 1), done by warp 0 alone with warp barriers (`__syncwarp`)
/// instead of block barriers. Afterwards `idata[0]` holds the sum of `idata[0 .. len)`.
///
/// Round `s` writes the slots `[0, s)` and reads `[s, 2s)`; round `s/2` reads `[s/2, s)`,
/// which other lanes wrote in round `s`. `__syncwarp` makes every lane of the mask wait there
/// and makes their earlier accesses visible to each other after it: that is all a round needs
/// of the previous one. (The book's version relies on the warp's lanes running in lock step,
/// with `volatile` loads; no GPU since Volta promises lock step, and that version races —
/// the emulator reports it, `faults::last_warp_unsynced`.)
///
/// # Safety
/// Called by all 32 threads of warp 0 (`tid < 32`) and by no other thread; `idata` holds
/// `len ≤ blockDim` elements; a block barrier separates the last writes of the other warps to
/// `idata[0 .. 64)` from this call.
#[inline(always)]
unsafe fn last_warp(idata: GlobalMut<i32>, tid: u32, len: u32) {
    // SAFETY: the caller's contract, and the `sync_warp` between two rounds is the barrier
    // `add_pair` asks for (only warp 0 reads or writes in these rounds).
    unsafe {
        add_pair(idata, tid, 32, len);
        sync_warp(FULL_MASK);
        add_pair(idata, tid, 16, len);
        sync_warp(FULL_MASK);
        add_pair(idata, tid, 8, len);
        sync_warp(FULL_MASK);
        add_pair(idata, tid, 4, len);
        sync_warp(FULL_MASK);
        add_pair(idata, tid, 2, len);
        sync_warp(FULL_MASK);
        add_pair(idata, tid, 1, len);
    }
}
