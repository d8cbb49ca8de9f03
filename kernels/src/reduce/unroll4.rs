use crate::device::global::GlobalMut;
use crate::device::thread::{block_dim_x, block_idx_x, sync_threads, thread_idx_x};
use crate::index::{block_segment, fold_count, fold_index};
use crate::kernel;

// The lesson's code, which the lesson before does not have (tests/source.rs): `for k in 0..4 {`
kernel! {
    /// Unrolling by four: each block first folds **four** data blocks into one (thread `tid`
    /// adds `idata[tid + k*blockDim]`, `k = 0..4`, into `idata[tid]`), then runs the
    /// interleaved tree (the book's `reduceUnrolling4`).
    ///
    /// # Concept
    /// **Memory-level parallelism.** A load takes hundreds of cycles; what hides that
    /// latency is how many independent loads are outstanding at once. With four
    /// independent loads per thread issued back to back, each thread keeps four requests in
    /// flight where `unroll2` kept two, at the same occupancy.
    ///
    /// # Previous problem → fix
    /// `unroll2` keeps only two loads per thread in flight in its fold and still launches
    /// `n / (2*blockDim)` blocks, each paying its own tree of `log2(blockDim)` barrier
    /// rounds for only `2*blockDim` elements. Here each thread folds four elements, so the
    /// fold has twice the bytes in flight and the grid (the number of trees, barriers and
    /// partial sums) halves again.
    ///
    /// # Execution
    /// 1. Block `b` owns the segment `g_idata[4b*blockDim .. 4(b+1)*blockDim)` (`len` of
    ///    those exist; the last block may be short).
    /// 2. Fold: thread `tid` adds the elements `tid +
    ///    k*blockDim`, `k = 0..4`, that exist, and stores the sum in `idata[tid]`; block
    ///    barrier.
    ///
    ///    ```text
    ///    idata: | x0 .. xB-1 | xB .. x2B-1 | x2B .. x3B-1 | x3B .. x4B-1 |   B = blockDim
    ///             t            t+B           t+2B           t+3B     -> idata[t]
    ///    ```
    /// 3. The interleaved tree over `idata[0 .. min(len, blockDim))`: for
    ///    `stride = blockDim/2, …, 1`, thread `tid < stride` adds `idata[tid + stride]`
    ///    into `idata[tid]` when that slot holds a sum; block barrier after each round.
    /// 4. Thread 0 writes `idata[0]` to `g_odata[b]`.
    ///
    /// The book folds only when all four elements exist (`if (idx + 3*blockDim.x < n)`),
    /// which silently drops up to three of them per thread in a short last block; this fold
    /// adds exactly the elements that exist.
    ///
    /// # Launch
    /// Grid `ceil(n / (4*blockDim))`, block a power of two in 32..=1024, no shared memory.
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
    /// | 2^24 | 40.53 µs | 1655.9 | 1.49 (`unroll2`) | 0.998 |
    /// | 2^28 | 523.5 µs | 2051.1 | 1.68 (`unroll2`) | 0.997 |
    pub unsafe fn unroll4(g_idata: GlobalMut<i32>, g_odata: GlobalMut<i32>, n: u32) {
        let tid = thread_idx_x();
        let block = block_dim_x();
        let b = block_idx_x();
        // Block `b`'s segment: the 4 data blocks from `4b*blockDim`, `len` elements of them
        // (the last block's may be short).
        let (start, len) = block_segment(n, b, 4 * block);
        // SAFETY: `start < n` for every block of the grid, so this stays in the buffer.
        let idata = unsafe { g_idata.offset(start as usize) };

        // SAFETY: `idata` holds the `len` elements of this block's segment.
        unsafe { fold4(idata, tid, block, len) };
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
/// `k = 0..4`, of its block's segment that exist (one per data block) and stores the sum in
/// `idata[tid]`.
///
/// # Safety
/// `idata` holds the `len` elements of the segment. Each thread of the block calls this once;
/// the caller puts a block barrier between it and the tree (the tree reads slots other
/// threads wrote here).
#[inline(always)]
unsafe fn fold4(idata: GlobalMut<i32>, tid: u32, block: u32, len: u32) {
    let mut sum = 0i32;
    if fold_index(tid, block, 3) < len {
        // The whole stripe exists (every block but the short last one): four loads that do
        // not depend on each other, unguarded (the loop over a constant count is unrolled, so
        // they issue back to back), as the book's `if (idx + 3 * blockDim.x < n)`.
        for k in 0..4 {
            // SAFETY: fold_index(tid, block, k) <= fold_index(tid, block, 3) < len.
            sum = sum.wrapping_add(unsafe { idata.read(fold_index(tid, block, k) as usize) });
        }
    } else {
        // The short last block: only the elements that exist (none for a thread past its end).
        let count = fold_count(len, block, tid, 4);
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
