use crate::device::thread::{block_dim_x, block_idx_x, sync_threads, thread_idx_x};
use crate::index::segment_len;
use crate::kernel;

kernel! {
    /// Interleaved-pair tree reduction in global memory: each step, the first half of the
    /// active threads adds the element `stride` places away (the book's `reduceInterleaved`).
    ///
    /// # Concept
    /// **Warp divergence and its cure by re-indexing.** A warp executes one instruction for
    /// all 32 lanes; when an `if` splits the lanes, the warp runs both paths. Choosing
    /// *which* threads work, so that whole warps either all work or all idle, removes the
    /// divergence without changing the arithmetic.
    ///
    /// # Previous problem → fix
    /// `neighbored` keeps thread `tid` busy when `tid % (2*stride) == 0`: the busy threads
    /// are spread over every warp, so every warp diverges at every step, and the pairs
    /// `idata[tid]`, `idata[tid+stride]` are ever further apart. Here thread `tid` works
    /// when `tid < stride`: the busy threads are packed into the first warps (no divergence
    /// until fewer than 32 remain), and a warp's loads of `idata[tid + stride]` are
    /// consecutive, hence coalesced.
    ///
    /// # Execution
    /// 1. Block `b` owns the segment `g_idata[b*blockDim .. (b+1)*blockDim)` (`len` of
    ///    those exist; the last block may be short).
    /// 2. For `stride = blockDim/2, blockDim/4, …, 1`: thread `tid < stride` adds
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
    pub unsafe fn interleaved(g_idata: *mut i32, g_odata: *mut i32, n: u32) {
        let tid = thread_idx_x();
        let block = block_dim_x();
        let start = block_idx_x() as usize * block as usize;
        let len = segment_len(n as usize, start, block as usize);
        // SAFETY: `start < n` for every block of the grid, so this stays in the buffer.
        let idata = unsafe { g_idata.add(start) };

        let mut stride = block / 2;
        while stride > 0 {
            if tid < stride && ((tid + stride) as usize) < len {
                let (i, j) = (tid as usize, (tid + stride) as usize);
                // SAFETY: i < j < len; only thread `tid` writes idata[tid] in this step, and
                // idata[j] (j >= stride) is written by no thread in this step.
                unsafe { *idata.add(i) = (*idata.add(i)).wrapping_add(*idata.add(j)) };
            }
            sync_threads();
            stride >>= 1;
        }

        if tid == 0 {
            // SAFETY: len >= 1, and g_odata holds gridDim.x elements.
            unsafe { *g_odata.add(block_idx_x() as usize) = *idata };
        }
    }
}
