use crate::device::global::GlobalMut;
use crate::device::thread::{block_dim_x, block_idx_x, sync_threads, thread_idx_x};
use crate::device::warp::sync_warp;
use crate::device::{FULL_MASK, WARP_SIZE};
use crate::index::{block_segment, fold_count, fold_index};
use crate::kernel;

// The lesson's code, which the lesson before does not have (tests/source.rs): `sync_warp(FULL_MASK);`
kernel! {
    /// `unroll8` with the last warp unrolled: the tree runs with block barriers down to
    /// stride 64, then warp 0 alone does the strides 32, 16, 8, 4, 2, 1 with warp barriers
    /// (the book's `reduceUnrollWarps8`, made correct for Volta and later).
    ///
    /// # Concept
    /// **Warp-synchronous programming, done right.** Once at most 32 threads work, they are
    /// one warp; synchronising them needs no block barrier, only a warp barrier
    /// (`__syncwarp`, PTX `bar.warp.sync`), which involves nobody else. Unrolling those
    /// rounds also removes the loop's test and branch.
    ///
    /// Why the book's version is wrong on Volta and later. It writes
    ///
    /// ```text
    ///  if (tid < 32) {
    ///      volatile int *vmem = idata;
    ///      vmem[tid] += vmem[tid + 32];  vmem[tid] += vmem[tid + 16];  ...  vmem[tid] += vmem[tid + 1];
    ///  }
    /// ```
    ///
    /// with no synchronisation, assuming the 32 lanes run each statement in lockstep (all
    /// reads of a statement before any write, one statement after the other). Since Volta the
    /// lanes of a warp are scheduled independently: nothing in the programming model keeps
    /// them converged between two `.sync` operations, and the CUDA Programming Guide says
    /// code that assumes it must use `__syncwarp`. So lane 0 may read `vmem[16]` *before*
    /// lane 16 has added `vmem[48]` into it (the sum misses `vmem[48]`), or *after* lane 16
    /// has already done its next statement, `vmem[16] += vmem[32]` (the sum counts `vmem[32]`
    /// twice). `volatile` does not help: it makes the compiler emit every load and store and
    /// keep them in program order *within one thread*, but it orders nothing between lanes.
    /// Here each round is separated from the next by `sync_warp(FULL_MASK)` (see
    /// `last_warp` below), and only lanes `tid < stride` write.
    ///
    /// # Previous problem → fix
    /// `unroll8`'s tree runs its last rounds (stride 32 down to 1) with at most 32 working
    /// threads, yet each round still costs a `__syncthreads` that every warp of the block
    /// must reach, plus the loop's test and branch. Here the block loop stops at stride 64;
    /// the other warps are then done, and warp 0 finishes with six unrolled rounds and five
    /// warp barriers.
    ///
    /// # Execution
    /// 1. Block `b` owns the segment `g_idata[8b*blockDim .. 8(b+1)*blockDim)` (`len` of
    ///    those exist; the last block may be short).
    /// 2. Fold (taught by `unroll8`): thread `tid` adds the elements
    ///    `tid + k*blockDim`, `k = 0..8`, that exist into `idata[tid]`; block barrier.
    /// 3. For `stride = blockDim/2, …, 64`: thread `tid < stride` adds `idata[tid + stride]`
    ///    when that slot holds a sum; block barrier after each round.
    /// 4. Warp 0 (`tid < 32`), `last_warp` below:
    ///
    ///    ```text
    ///     stride 32: lanes 0-31  idata[t] += idata[t+32]    sync_warp
    ///     stride 16: lanes 0-15  idata[t] += idata[t+16]    sync_warp
    ///     stride  8: lanes 0-7   idata[t] += idata[t+8]     sync_warp
    ///     stride  4: lanes 0-3   idata[t] += idata[t+4]     sync_warp
    ///     stride  2: lanes 0-1   idata[t] += idata[t+2]     sync_warp
    ///     stride  1: lane  0     idata[0] += idata[1]
    ///    ```
    ///
    ///    every add guarded by `t + stride < min(len, blockDim)`: with `blockDim = 32` the
    ///    stride-32 round reads nothing (`idata[32..]` is the in-place segment's second
    ///    data block, already folded into `idata[0..32)`), and a last block shorter than 64
    ///    adds only the slots it has.
    /// 5. Thread 0 writes `idata[0]` to `g_odata[b]`.
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
    /// through the loop), and all 32 lanes of warp 0 reach every warp barrier.
    ///
    /// # Measured
    /// NVIDIA H100 80GB HBM3, block 512, median of 20 timed runs, every run checked (`docs/measurements/2026-11-25-h100/twins_2e24.csv`, `twins_2e28.csv`, commit e032fa9):
    ///
    /// | n | time | GB/s | × previous | × CUDA C twin |
    /// |---|---|---|---|---|
    /// | 2^24 | 32.93 µs | 2038.0 | 1.00 (`unroll8`) | 1.073 |
    /// | 2^28 | 399.2 µs | 2689.9 | 1.00 (`unroll8`) | 1.041 |
    pub unsafe fn unroll_warps8(g_idata: GlobalMut<i32>, g_odata: GlobalMut<i32>, n: u32) {
        let tid = thread_idx_x();
        let block = block_dim_x();
        let (start, len) = block_segment(n, block_idx_x(), 8 * block);
        // SAFETY: `start < n` for every block of the grid, so this stays in the buffer.
        let idata = unsafe { g_idata.offset(start as usize) };

        // SAFETY: `idata` holds the `len` elements of this block's segment.
        unsafe { fold8(idata, tid, block, len) };
        sync_threads();

        let len = len.min(block);
        let mut stride = block / 2;
        while stride > WARP_SIZE {
            // SAFETY: `idata` holds `len` elements; rounds are separated by the barrier below.
            unsafe { add_pair(idata, tid, stride, len) };
            sync_threads();
            stride >>= 1;
        }

        if tid < WARP_SIZE {
            // SAFETY: exactly warp 0 enters (blockDim >= 32), len <= blockDim, and the last
            // block barrier (after the fold or the loop) follows every other warp's writes.
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
// On the emulator a fault in a round names the line of `last_warp` that ran it.
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
unsafe fn add_pair(idata: GlobalMut<i32>, tid: u32, stride: u32, len: u32) {
    if tid < stride && tid + stride < len {
        let (i, j) = (tid as usize, (tid + stride) as usize);
        // SAFETY: i < j < len; slot i is written by thread `tid` only, slot j (>= stride) is
        // written by no thread of this round.
        unsafe { idata.write(i, idata.read(i).wrapping_add(idata.read(j))) };
    }
}

/// The unrolled last warp, the lesson of this kernel: the last six rounds of the tree
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
