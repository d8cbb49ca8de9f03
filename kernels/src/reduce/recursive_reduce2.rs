use crate::device::global::GlobalMut;
use crate::device::launch::{DeviceStream, LAUNCH_OK};
use crate::device::thread::{block_idx_x, grid_dim_x, thread_idx_x};
use crate::device::trap;
use crate::index::block_segment;
use crate::{kernel, launch_device};

// The lesson's code, which the lesson before does not have (tests/source.rs): `if b == 0 && tid == 0 {`
kernel! {
    launches;
    /// The nested reduction with one launch per level: only block 0's thread 0 launches the
    /// next level, a grid as wide as this one (the book's `gpuRecursiveReduce2`).
    ///
    /// # Concept
    /// **Launch less.** A device-side launch costs about what a host launch costs. The way to
    /// make a nested algorithm fast is the way to make any GPU program fast: give each launch
    /// a lot of work. One grid per level does what a grid per block per level did.
    ///
    /// # Previous problem → fix
    /// `recursive_reduce` makes `gridDim × log2(blockDim)` launches, one one-block grid per
    /// block per level (16,384 for the book's 2,048 blocks of 512). Here each level is one
    /// grid of `gridDim` blocks, launched by block 0 alone, and each block's threads are the
    /// `stride` that still work, no idle half: `log2(blockDim)` launches in all. The launch
    /// goes to the tail-launch stream, so the next level starts once every block of this one
    /// has added (the book launches it at once, which CUDA 12 no longer orders).
    ///
    /// # Execution
    /// 1. Block `b` owns the segment `g_idata[b*dim ..]` (`len` of its `dim` elements exist);
    ///    `blockDim = stride`.
    /// 2. Base case, `stride = 1`: thread 0 writes `idata[0] + idata[1]` (or `idata[0]` when
    ///    `len` is 1) to `g_odata[b]`.
    /// 3. Thread `tid` adds `idata[tid + stride]` into `idata[tid]`, when that element exists.
    /// 4. Block 0's thread 0 launches `recursive_reduce2<<<gridDim, stride/2>>>(…, stride/2,
    ///    dim)` into the tail-launch stream.
    ///
    /// ```text
    ///  host:   recursive_reduce2<<<G, 256>>>(…, 256, 512)   G blocks fold 512 → 256
    ///  tail:   recursive_reduce2<<<G, 128>>>(…, 128, 512)   one launch per level
    ///  …       recursive_reduce2<<<G, 1>>>(…, 1, 512)       each block writes its sum
    ///          log2(512) = 9 grids in all, 8 of them launched on the device
    /// ```
    ///
    /// # Launch
    /// Grid `ceil(n / dim)`, block `stride = dim / 2` with `dim` a power of two in 2..=2048,
    /// no shared memory. Needs the device runtime. Works **in place**.
    ///
    /// # Preconditions
    /// `g_idata` holds `n ≥ 1` elements that may be overwritten, `g_odata` `gridDim.x`;
    /// `stride` is a power of two and `blockDim.x == stride`.
    ///
    /// # Safety
    /// Each thread touches its own element and its partner's, in its block's segment; no
    /// barrier. A failed device-side launch traps.
    ///
    /// # Measured
    /// NVIDIA H100 80GB HBM3, every run checked, `reduce --compare-c` with `interleaved` in the same rounds (`docs/measurements/2026-11-25-h100/nested/nested_7010bfc_room_one_per_block.csv`, commit 7010bfc, `docs/measurements/2026-11-25-h100/nested/nested_3411bfb_room_every_chain.csv`, commit 3411bfb, `docs/measurements/2026-11-25-h100/nested/nested_c7f6e9a_no_twins.csv`, commit c7f6e9a, `docs/measurements/2026-11-25-h100/nested/nested_8d3b524.csv`, commit 8d3b524, `docs/measurements/2026-11-25-h100/nested/nested_8d3b524_2e24_block128.csv`, commit 8d3b524, `docs/measurements/2026-11-25-h100/nested/nested_3a552df.csv`, commit 3a552df, `docs/measurements/2026-11-25-h100/nested/nested_3a552df_2e24_block128.csv`, commit 3a552df); the spread of the rounds' medians:
    ///
    /// | n | block | rounds | time | `interleaved` | time / interleaved's | CUDA C twin | × twin (C / ours) | device-side launches |
    /// |---|---|---|---|---|---|---|---|---|
    /// | 1,048,583 | 128 | 8 | 78.59 µs – 81.36 µs | 8.72 µs – 8.91 µs | 9.0 | 76.67 µs – 80.42 µs | 0.999 | 6 |
    /// | 1,048,583 | 512 | 8 | 97.04 µs – 102.9 µs | 8.38 µs – 8.61 µs | 11.6 | 94.96 µs – 99.87 µs | 0.986 | 8 |
    /// | 16,777,216 | 128 | 6 | 594.9 µs – 600.5 µs | 83.54 µs – 84.45 µs | 7.1 | 593.0 µs – 600.2 µs | 0.998 | 6 |
    /// | 16,777,216 | 512 | 6 | 257.3 µs – 264.0 µs | 101.5 µs – 101.8 µs | 2.5 | 256.5 µs – 261.2 µs | 1.003 | 8 |
    pub unsafe fn recursive_reduce2(g_idata: GlobalMut<i32>, g_odata: GlobalMut<i32>, n: u32, stride: u32, dim: u32) {
        let tid = thread_idx_x();
        let b = block_idx_x();
        let (start, len) = block_segment(n, b, dim);
        // SAFETY: `start < n` for every block of the grid.
        let idata = unsafe { g_idata.offset(start as usize) };
        if stride == 1 {
            if tid == 0 {
                // SAFETY: len ≥ 1 elements of the segment exist; g_odata holds gridDim.x words.
                unsafe {
                    let pair = if len >= 2 { idata.read(1) } else { 0 };
                    g_odata.write(b as usize, idata.read(0).wrapping_add(pair));
                }
            }
            return;
        }
        if tid + stride < len {
            let (i, j) = (tid as usize, (tid + stride) as usize);
            // SAFETY: i < j < len; only thread `tid` touches idata[i] and idata[j] here.
            unsafe { idata.write(i, idata.read(i).wrapping_add(idata.read(j))) };
        }
        if b == 0 && tid == 0 {
            let half = stride / 2;
            // SAFETY: the next level reads what every block of this grid wrote, and starts
            // once this grid has completed (tail launch).
            let status = unsafe {
                launch_device!(recursive_reduce2<<<(grid_dim_x(), half, DeviceStream::Tail)>>>(
                    g_idata, g_odata, n, half, dim
                ))
            };
            if status != LAUNCH_OK {
                trap("a device-side launch of recursive_reduce2 failed");
            }
        }
    }
}
