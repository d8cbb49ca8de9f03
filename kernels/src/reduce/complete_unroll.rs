use crate::device::global::GlobalMut;
use crate::device::thread::{block_dim_x, block_idx_x, sync_threads, thread_idx_x};
use crate::device::warp::sync_warp;
use crate::device::{FULL_MASK, WARP_SIZE, trap};
use crate::index::{block_segment, fold_count, fold_index};
use crate::kernel;

// The lesson's code, which the lesson before does not have (tests/source.rs): `if BLOCK >= 1024 {`

/// `complete_unroll_warps8` with the block size a compile-time constant: the body of the
/// `complete_unroll_BLOCK` kernels (the book's template `reduceCompleteUnroll<iBlockSize>`).
///
/// # Concept
/// **Compile-time specialisation (templates → const generics).** A kernel parameterised
/// by a constant is compiled once per value; in each copy every test on that constant is
/// decided by the compiler, and the code it guards is kept or deleted outright. The host
/// chooses the copy at run time from the block size it launches (the book's `switch`,
/// here the registry's `KernelSel::PerBlock`).
///
/// # Previous problem → fix
/// `complete_unroll_warps8` tests `blockDim.x >= 1024`, … at run time, and executes the
/// block barrier after every one of the four rounds even where the block is too small for
/// the round to do anything (a 64-thread block passes four barriers with no work between
/// them). Here `BLOCK >= 1024`, … are constants: each instantiation contains only the
/// rounds its block size needs, each with its barrier, and nothing else.
///
/// # Execution
/// 1. Block `b` owns the segment `g_idata[8b*BLOCK .. 8(b+1)*BLOCK)` (`len` of those
///    exist; the last block may be short).
/// 2. Fold (taught by `unroll8`): thread `tid` adds the elements
///    `tid + k*BLOCK`, `k = 0..8`, that exist into `idata[tid]`; block barrier.
/// 3. The block-wide rounds this `BLOCK` needs, each followed by its barrier (a barrier
///    inside `if BLOCK >= …` keeps the CUDA rule: the condition is a constant, so it
///    evaluates identically across the block):
///
///    ```text
///     BLOCK = 256 keeps:   tid < 128 adds idata[tid + 128]    sync_threads
///                          tid <  64 adds idata[tid +  64]    sync_threads
///     BLOCK = 1024 adds the 512 and 256 rounds before them; BLOCK = 64 and 32 keep none
///    ```
///
///    each add only when `tid + stride < min(len, BLOCK)`.
/// 4. Warp 0 finishes with the unrolled last warp (taught by `unroll_warps8`): strides
///    32 … 1 with `sync_warp` between rounds — never the book's unsynchronised `volatile`
///    code, which races on Volta and later (`unroll_warps8`'s docs say why).
/// 5. Thread 0 writes `idata[0]` to `g_odata[b]`.
///
/// # Launch
/// Grid `ceil(n / (8*BLOCK))`, block **exactly** `BLOCK` (a power of two in 32..=1024;
/// another block size traps), no shared memory. Works **in place**: the host passes a
/// scratch copy of the input, never the input.
///
/// # Preconditions
/// `g_idata` holds `n ≥ 1` elements and `g_odata` `gridDim.x`; `blockDim.x == BLOCK`.
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
/// | 2^24 | 32.85 µs | 2043.0 | 1.00 (`complete_unroll_warps8`) | 1.070 |
/// | 2^28 | 399.0 µs | 2691.2 | 1.00 (`complete_unroll_warps8`) | 1.031 |
#[inline(always)]
pub unsafe fn complete_unroll<const BLOCK: u32>(g_idata: GlobalMut<i32>, g_odata: GlobalMut<i32>, n: u32) {
    const { assert!(BLOCK.is_power_of_two() && BLOCK >= 32 && BLOCK <= 1024, "BLOCK: a power of two in 32..=1024") };
    if block_dim_x() != BLOCK {
        // Uniform over the block, before any barrier: every thread traps.
        trap("complete_unroll::<BLOCK> launched with blockDim.x != BLOCK");
    }
    let tid = thread_idx_x();
    let (start, len) = block_segment(n, block_idx_x(), 8 * BLOCK);
    // SAFETY: `start < n` for every block of the grid, so this stays in the buffer.
    let idata = unsafe { g_idata.offset(start as usize) };

    // SAFETY: `idata` holds the `len` elements of this block's segment.
    unsafe { fold8(idata, tid, BLOCK, len) };
    sync_threads();

    let len = len.min(BLOCK);
    if BLOCK >= 1024 {
        // SAFETY: `idata` holds `len` elements, and a block barrier separates each round
        // from the next (the same holds for the three rounds below).
        unsafe { add_pair(idata, tid, 512, len) };
        sync_threads();
    }
    if BLOCK >= 512 {
        // SAFETY: as above.
        unsafe { add_pair(idata, tid, 256, len) };
        sync_threads();
    }
    if BLOCK >= 256 {
        // SAFETY: as above.
        unsafe { add_pair(idata, tid, 128, len) };
        sync_threads();
    }
    if BLOCK >= 128 {
        // SAFETY: as above.
        unsafe { add_pair(idata, tid, 64, len) };
        sync_threads();
    }

    if tid < WARP_SIZE {
        // SAFETY: exactly warp 0 enters (BLOCK >= 32), len <= BLOCK, and the last block
        // barrier (after the fold or the last round) follows every other warp's writes.
        unsafe { last_warp(idata, tid, len) };
    }

    if tid == 0 {
        // SAFETY: len >= 1, and g_odata holds gridDim.x elements.
        unsafe { g_odata.write(block_idx_x() as usize, idata.read(0)) };
    }
}

/// One kernel entry per block size: `complete_unroll_BLOCK` runs `complete_unroll::<BLOCK>`.
macro_rules! instantiate {
    ($($name:ident = $block:literal),* $(,)?) => {$(
        kernel! {
            #[doc = concat!("[`complete_unroll`] compiled for `blockDim.x = ", stringify!($block), "`.")]
            ///
            /// # Safety
            #[doc = concat!("As for [`complete_unroll`]; launched with `blockDim.x = ", stringify!($block), "`.")]
            pub unsafe fn $name(g_idata: GlobalMut<i32>, g_odata: GlobalMut<i32>, n: u32) {
                // SAFETY: forwarded from this kernel's caller.
                unsafe { complete_unroll::<$block>(g_idata, g_odata, n) }
            }
        }
    )*};
}

instantiate! {
    complete_unroll_32 = 32,
    complete_unroll_64 = 64,
    complete_unroll_128 = 128,
    complete_unroll_256 = 256,
    complete_unroll_512 = 512,
    complete_unroll_1024 = 1024,
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
