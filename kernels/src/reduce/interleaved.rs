use crate::device::global::GlobalMut;
use crate::device::thread::{block_dim_x, block_idx_x, sync_threads, thread_idx_x};
use crate::index::block_segment;
use crate::kernel;

// The lesson's code, which the lesson before does not have (tests/source.rs): `if tid < stride && tid + stride < len {`
kernel! {
    /// Interleaved-pair tree reduction in global memory: each step, the first half of the
    /// active threads adds the element `stride` places away (the book's `reduceInterleaved`).
    ///
    /// # Concept
    /// **Coalesced memory access.** A warp's 32 loads are served together, in 32-byte
    /// sectors: when the lanes read consecutive words, one warp-wide load moves 128 bytes in
    /// four sectors and uses all of them; when they read words far apart, it moves a sector
    /// per lane and uses 4 bytes of each. The order in which a tree pairs its elements
    /// decides which of the two the warps see.
    ///
    /// # Previous problem → fix
    /// `neighbored_less` packed the working threads into the first warps (the divergence
    /// fix), but thread `tid` still adds the pair at `2*stride*tid` and `2*stride*tid +
    /// stride`: a warp's loads are `2*stride` words apart, so from stride 4 on every lane
    /// touches its own sector. Here the pairs are interleaved instead: thread `tid < stride`
    /// adds `idata[tid + stride]` into `idata[tid]`, with `stride` halving from
    /// `blockDim/2`. The working threads are still the first ones (no divergence until
    /// fewer than 32 remain), and a warp's loads of `idata[tid]` and of
    /// `idata[tid + stride]` are each 32 consecutive words: coalesced.
    ///
    /// # Execution
    /// 1. Block `b` owns the segment `g_idata[b*blockDim .. (b+1)*blockDim)` (`len` of
    ///    those exist; the last block may be short).
    /// 2. The interleaved tree: for
    ///    `stride = blockDim/2, blockDim/4, …, 1`, thread `tid < stride` adds
    ///    `idata[tid + stride]` into `idata[tid]`, when that element exists; then the
    ///    block barrier.
    /// 3. Thread 0 writes `idata[0]`, the segment's sum, to `g_odata[b]`.
    ///
    /// ```text
    ///  blockDim = 8      idata: a0 a1 a2 a3 a4 a5 a6 a7
    ///  stride 4 (t0-3)          ^--+--+--+--'  '  '  '      a0+=a4  a1+=a5  a2+=a6  a3+=a7
    ///  stride 2 (t0-1)          ^--+--'  '                  a0+=a2  a1+=a3
    ///  stride 1 (t0)            ^--'                        a0+=a1
    /// ```
    ///
    /// What it leaves wrong: already in the first round only half the threads add — the
    /// other half of the launched threads never load anything — and a working thread has
    /// only its pair's two loads in flight (`unroll2` fixes that).
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
    /// | 2^24 | 101.6 µs | 660.2 | 1.18 (`neighbored_less`) | 1.005 |
    /// | 2^28 | 1550.8 µs | 692.4 | 1.19 (`neighbored_less`) | 1.002 |
    ///
    /// Nsight Compute, one launch each at 2^24 (`docs/measurements/2026-11-25-h100/cache_levels_2e24.csv`, commit e032fa9): active threads per warp instruction 31.36 → 31.41, branch efficiency 98.44 % → 98.44 %; sectors asked of L1 16.7 M → 4.4 M, of L2 2.1 M → 2.1 M, DRAM bytes read 67.1 → 67.1 MB; warp instructions 62.6 M → 52.9 M.
    ///
    /// **Why only 1.18× faster for 3.84× fewer sectors:** the same sectors reach L2 and the same bytes come from DRAM (the input once) in both kernels; the extra sectors of `neighbored_less` were L1 hits (87.5 % of the sectors asked of L1 hit there, against 51.9 % here). Neither kernel is bound by memory (DRAM at 25.4 % and 22.9 % of its peak): the time follows the warp instructions (1.18× fewer) and the barrier waits (11.76 → 10.04 warps waiting per issue), not the sectors.
    pub unsafe fn interleaved(g_idata: GlobalMut<i32>, g_odata: GlobalMut<i32>, n: u32) {
        let tid = thread_idx_x();
        let block = block_dim_x();
        let b = block_idx_x();
        // Block `b`'s segment: `len` elements from `start` (the last block's may be short).
        let (start, len) = block_segment(n, b, block);
        // SAFETY: `start < n` for every block of the grid, so this stays in the buffer.
        let idata = unsafe { g_idata.offset(start as usize) };

        // SAFETY: idata holds this block's `len` elements; every thread of the block calls it.
        unsafe { interleaved_tree(idata, tid, block, len) };

        if tid == 0 {
            // SAFETY: len >= 1, and g_odata holds gridDim.x elements.
            unsafe { g_odata.write(b as usize, idata.read(0)) };
        }
    }
}

/// The interleaved tree over the `len ≤ block` slots `idata[0..len)`: for
/// `stride = block/2, …, 1`, thread `tid < stride` adds `idata[tid + stride]` into `idata[tid]`
/// when that slot exists; a block barrier ends every round. Afterwards `idata[0]` holds the sum.
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
