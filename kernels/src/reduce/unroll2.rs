use super::interleaved::interleaved_tree;
use crate::device::thread::{block_dim_x, block_idx_x, sync_threads, thread_idx_x};
use crate::index::{fold_count, fold_index, segment_len};
use crate::kernel;

/// Phase 1 of the unrolled kernels (`unroll2` … `complete_unroll`): thread `tid` adds the
/// elements `tid + k*block`, `k < N`, of its block's segment — those that exist, see
/// [`fold_count`] — and stores their sum in `idata[tid]`. A thread past the segment's end
/// does nothing. The `N` loads are independent, so a thread issues them all before it
/// waits for the first one.
///
/// ```text
///  N = 4, blockDim = 4: block b owns 16 elements
///  idata: | x0  x1  x2  x3 | x4  x5  x6  x7 | x8  x9  x10 x11 | x12 x13 x14 x15 |
///           t0  t1  t2  t3   t0  t1  t2  t3   t0  t1  t2  t3    t0  t1  t2  t3
///  afterwards idata[t] = x[t] + x[t+4] + x[t+8] + x[t+12] for t = 0..4
/// ```
///
/// Afterwards slot `tid` of `idata[0..blockDim)` holds a sum exactly when `tid < len`, so
/// the tree that follows runs over `min(len, blockDim)` elements.
///
/// # Safety
/// `idata` points at a segment of which `len` elements exist. Each thread of the block
/// calls this once; the caller puts a block barrier between it and the tree (the tree reads
/// slots other threads wrote here).
#[inline(always)]
pub(super) unsafe fn fold_blocks<const N: usize>(idata: *mut i32, tid: u32, block: u32, len: usize) {
    let count = fold_count(len, block, tid, N);
    if count > 0 {
        let mut sum = 0i32;
        for k in 0..N {
            if k < count {
                // SAFETY: k < count means fold_index(tid, block, k) < len (index::fold_count).
                sum = sum.wrapping_add(unsafe { *idata.add(fold_index(tid, block, k)) });
            }
        }
        // SAFETY: count > 0 means tid < len. Slot tid is read and written by thread tid only
        // in this phase (the other indices it reads are >= blockDim, which no thread writes).
        unsafe { *idata.add(tid as usize) = sum };
    }
}

kernel! {
    /// Unrolling by two: each block first folds **two** data blocks into one (thread `tid`
    /// adds `idata[tid + blockDim]` into `idata[tid]`), then runs the interleaved tree
    /// (the book's `reduceUnrolling2`).
    ///
    /// # Concept
    /// **Loop unrolling / more work per thread.** Giving a thread several independent
    /// loads, issued back to back, keeps more bytes in flight per thread: the memory system
    /// overlaps their latencies instead of serving one small request per thread and then
    /// waiting. It also halves the number of blocks (and of partial sums).
    ///
    /// # Previous problem → fix
    /// In `interleaved` half the threads idle from the very first round: at stride
    /// `blockDim/2` only `tid < blockDim/2` add, so half of the launched threads never load
    /// anything and only wait at barriers, and a working thread has just its pair's two
    /// loads in flight. Here every thread of the block loads and adds in phase 1, over a
    /// segment twice as long, with half as many blocks.
    ///
    /// # Execution
    /// 1. Block `b` owns the segment `g_idata[2b*blockDim .. 2(b+1)*blockDim)` (`len` of
    ///    those exist; the last block may be short).
    /// 2. Fold (`fold_blocks`, above): thread `tid` adds `idata[tid + blockDim]` into
    ///    `idata[tid]` when it exists; block barrier.
    ///
    ///    ```text
    ///    idata: | x0 x1 .. xB-1 | xB xB+1 .. x2B-1 |      B = blockDim
    ///             ^---------------'                        idata[t] += idata[t + B]
    ///    ```
    /// 3. The interleaved tree over `idata[0 .. min(len, blockDim))`: for
    ///    `stride = blockDim/2, …, 1`, thread `tid < stride` adds `idata[tid + stride]`
    ///    into `idata[tid]` when that slot holds a sum; block barrier after each round.
    /// 4. Thread 0 writes `idata[0]` to `g_odata[b]`.
    ///
    /// Unlike the book's, whose tree adds all `blockDim` slots (reading past `n` in a short
    /// last block, so it is right only when `n` is a multiple of `2*blockDim`), the fold
    /// and the tree add exactly the elements that exist.
    ///
    /// # Launch
    /// Grid `ceil(n / (2*blockDim))`, block a power of two in 32..=1024, no shared memory.
    /// Works **in place**: the host passes a scratch copy of the input, never the input.
    ///
    /// # Preconditions
    /// `g_idata` holds `n ≥ 1` elements and `g_odata` `gridDim.x`.
    ///
    /// # Safety
    /// The pointers are valid device memory of those lengths; `g_idata` may be overwritten.
    /// Every thread reaches every barrier: threads past `n` fold nothing and idle through
    /// the tree instead of returning early.
    pub unsafe fn unroll2(g_idata: *mut i32, g_odata: *mut i32, n: u32) {
        // SAFETY: forwarded; the launch follows this kernel's preconditions.
        unsafe { unrolled::<2>(g_idata, g_odata, n) }
    }
}

/// The body of `unroll2`, `unroll4` and `unroll8`: block `b` owns the `N * blockDim` elements
/// from `N * b * blockDim`; phase 1 folds them into `idata[0..blockDim)` ([`fold_blocks`]),
/// phase 2 runs the interleaved tree over the slots that hold a sum
/// ([`interleaved_tree`](super::interleaved::interleaved_tree)), and thread 0 writes the
/// block's sum to `g_odata[b]`.
///
/// # Safety
/// As for the kernels: `g_idata` holds `n ≥ 1` elements and may be overwritten, `g_odata`
/// holds `gridDim.x ≥ ceil(n / (N * blockDim))` elements; every thread of the block calls it.
#[inline(always)]
pub(super) unsafe fn unrolled<const N: usize>(g_idata: *mut i32, g_odata: *mut i32, n: u32) {
    let tid = thread_idx_x();
    let block = block_dim_x();
    let seg = N * block as usize;
    let start = block_idx_x() as usize * seg;
    let len = segment_len(n as usize, start, seg);
    // SAFETY: `start < n` for every block of the grid, so this stays in the buffer.
    let idata = unsafe { g_idata.add(start) };

    // SAFETY: `idata` holds the `len` elements of this block's segment.
    unsafe { fold_blocks::<N>(idata, tid, block, len) };
    sync_threads();

    // SAFETY: after the fold, slots 0..min(len, block) hold sums; every thread calls it.
    unsafe { interleaved_tree(idata, tid, block, len.min(block as usize)) };

    if tid == 0 {
        // SAFETY: len >= 1, and g_odata holds gridDim.x elements.
        unsafe { *g_odata.add(block_idx_x() as usize) = *idata };
    }
}
