use crate::device::global::GlobalMut;
use crate::device::thread::{block_dim_x, block_idx_x, sync_threads, thread_idx_x};
use crate::index::{block_segment, fold_count, fold_index};
use crate::kernel;

// The lesson's code, which the lesson before does not have (tests/source.rs): `for k in 0..8 {`
kernel! {
    /// Unrolling by eight: each block first folds **eight** data blocks into one (thread
    /// `tid` adds `idata[tid + k*blockDim]`, `k = 0..8`, into `idata[tid]`), then runs the
    /// interleaved tree (the book's `reduceUnrolling8`).
    ///
    /// # Concept
    /// **Enough bytes in flight to saturate memory bandwidth.** By Little's law the bytes
    /// that must be in flight are bandwidth × latency; eight independent loads per thread
    /// get much closer to that than one or two, and the per-element share of the tree (its
    /// barriers, its idle threads) shrinks with every doubling of the fold.
    ///
    /// # Previous problem → fix
    /// `unroll4` keeps four loads per thread in flight and runs one tree per `4*blockDim`
    /// elements. Here each thread has eight independent loads outstanding and a block
    /// covers `8*blockDim` elements, so a quarter of `unroll2`'s trees, barriers and
    /// partial sums remain.
    ///
    /// # Execution
    /// 1. Block `b` owns the segment `g_idata[8b*blockDim .. 8(b+1)*blockDim)` (`len` of
    ///    those exist; the last block may be short).
    /// 2. Fold: thread `tid` adds the elements `tid +
    ///    k*blockDim`, `k = 0..8`, that exist, and stores the sum in `idata[tid]`; block
    ///    barrier.
    ///
    ///    ```text
    ///    idata: | data block 0 | data block 1 | ... | data block 7 |   each blockDim long
    ///             t              t+B                  t+7B   -> a1 + a2 + ... + a8 -> idata[t]
    ///    ```
    /// 3. The interleaved tree over `idata[0 .. min(len, blockDim))`: for
    ///    `stride = blockDim/2, …, 1`, thread `tid < stride` adds `idata[tid + stride]`
    ///    into `idata[tid]` when that slot holds a sum; block barrier after each round.
    /// 4. Thread 0 writes `idata[0]` to `g_odata[b]`.
    ///
    /// The book folds only when all eight elements exist (`if (idx + 7*blockDim.x < n)`),
    /// which silently drops up to seven of them per thread in a short last block; this fold
    /// adds exactly the elements that exist.
    ///
    /// What it leaves wrong: the tree's last five rounds run with fewer than 32 working
    /// threads, yet each still pays a full block barrier and a loop test (`unroll_warps8`
    /// fixes that).
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
    /// Every thread reaches every barrier: threads past `n` fold nothing and idle through
    /// the tree instead of returning early.
    ///
    /// # Measured
    /// NVIDIA H100 80GB HBM3, block 512, median of 20 timed runs, every run checked (`docs/measurements/2026-11-25-h100/twins_2e24.csv`, `twins_2e28.csv`, commit e032fa9):
    ///
    /// | n | time | GB/s | × previous | × CUDA C twin |
    /// |---|---|---|---|---|
    /// | 2^24 | 33.09 µs | 2028.2 | 1.22 (`unroll4`) | 1.000 |
    /// | 2^28 | 399.3 µs | 2688.8 | 1.31 (`unroll4`) | 1.000 |
    pub unsafe fn unroll8(g_idata: GlobalMut<i32>, g_odata: GlobalMut<i32>, n: u32) {
        let tid = thread_idx_x();
        let block = block_dim_x();
        let b = block_idx_x();
        // Block `b`'s segment: the 8 data blocks from `8b*blockDim`, `len` elements of them
        // (the last block's may be short).
        let (start, len) = block_segment(n, b, 8 * block);
        // SAFETY: `start < n` for every block of the grid, so this stays in the buffer.
        let idata = unsafe { g_idata.offset(start as usize) };

        // SAFETY: `idata` holds the `len` elements of this block's segment.
        unsafe { fold8(idata, tid, block, len) };
        sync_threads();

        // SAFETY: after the fold, slots 0..min(len, block) hold sums; every thread calls it.
        unsafe { interleaved_tree(idata, tid, block, len.min(block)) };

        if tid == 0 {
            // SAFETY: len >= 1, and g_odata holds gridDim.x elements.
            unsafe { g_odata.write(b as usize, idata.read(0)) };
        }
    }
}

/// The fold, the lesson of this kernel: thread `tid` adds the elements `tid + k*block`,
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

/// The interleaved tree (taught by `interleaved`) over the `len ≤ block` slots `idata[0..len)`:
/// for `stride = block/2, …, 1`, thread `tid < stride` adds `idata[tid + stride]` into
/// `idata[tid]` when that slot exists; a block barrier ends every round. Afterwards `idata[0]` holds the sum.
/// In a round the written slots are `[0, stride)` and the read ones `[stride, 2*stride)`:
/// disjoint, so the threads of a round never race.
///
/// # Safety
/// `idata` holds `len` elements (`1 ≤ len ≤ block`), and every thread of the block calls this
/// with the same `idata`, `block` and `len` (it contains barriers).
#[inline(always)]
unsafe fn interleaved_tree(idata: GlobalMut<i32>, tid: u32, block: u32, len: u32) {
    let mut stride = block / 2;
    if len == block {
        // A full segment (every block but the short last one; the whole block takes this
        // path): `tid < stride` already puts the partner `tid + stride < 2 * stride <= block`
        // inside it, so each round tests one condition, as the book's loop does.
        while stride > 0 {
            if tid < stride {
                let (i, j) = (tid as usize, (tid + stride) as usize);
                // SAFETY: i < j < block = len; only thread `tid` writes idata[tid] in this
                // round, and idata[j] (j >= stride) is written by no thread in this round.
                unsafe { idata.write(i, idata.read(i).wrapping_add(idata.read(j))) };
            }
            sync_threads();
            stride >>= 1;
        }
        return;
    }
    // The short last segment: the partner must exist too.
    while stride > 0 {
        if tid < stride && tid + stride < len {
            let (i, j) = (tid as usize, (tid + stride) as usize);
            // SAFETY: i < j < len; as above.
            unsafe { idata.write(i, idata.read(i).wrapping_add(idata.read(j))) };
        }
        sync_threads();
        stride >>= 1;
    }
}
