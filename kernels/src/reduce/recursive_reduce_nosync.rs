use crate::device::atomic::thread_fence;
use crate::device::global::GlobalMut;
use crate::device::launch::{DeviceStream, LAUNCH_OK};
use crate::device::thread::{block_dim_x, block_idx_x, sync_threads, thread_idx_x};
use crate::device::trap;
use crate::index::block_segment;
use crate::{kernel, launch_device};

// The lesson's code, which the lesson before does not have (tests/source.rs): `launch_device!(recursive_reduce_nosync<<<(1, stride, DeviceStream::FireAndForget)>>>(`
kernel! {
    launches;
    /// `recursive_reduce` whose children start at once instead of after their parent grid
    /// (the book's `gpuRecursiveReduceNosync`).
    ///
    /// # Concept
    /// **Where a child grid goes decides what it waits for.** CUDA 12's device runtime has two
    /// named streams for device-side launches: the tail-launch stream (after the parent grid
    /// completes) and the fire-and-forget stream (at once, unordered with the parent).
    ///
    /// # Previous problem → fix
    /// In `recursive_reduce` every child waits for its whole parent grid, and the tail
    /// launches of one grid run one after another, so the chains of the blocks do not overlap.
    /// The book removes the parent's wait (`cudaDeviceSynchronize()` and the barriers around
    /// it). Here the children go to the fire-and-forget stream: a block's chain goes on
    /// while other blocks still run. A child sees what its launching thread wrote before the
    /// launch, so the block's threads fence, and meet at one barrier before thread 0
    /// launches: the child then sees every thread's sum.
    ///
    /// # Execution
    /// 1. As `recursive_reduce`, steps 1–3.
    /// 2. Every thread fences (`__threadfence()`); the block meets at a barrier.
    /// 3. Thread 0 launches `recursive_reduce_nosync<<<1, blockDim/2>>>` into the
    ///    fire-and-forget stream.
    ///
    /// # Launch
    /// As `recursive_reduce`.
    ///
    /// # Preconditions
    /// As `recursive_reduce`.
    ///
    /// # Safety
    /// As `recursive_reduce`; every thread of the block reaches the one barrier (the base case
    /// returns for the whole block).
    ///
    /// # Measured
    /// NVIDIA H100 80GB HBM3, every run checked, `reduce --compare-c` with `interleaved` in the same rounds (`docs/measurements/2026-11-25-h100/nested/nested_3411bfb_room_every_chain.csv`, commit 3411bfb, `docs/measurements/2026-11-25-h100/nested/nested_c7f6e9a_no_twins.csv`, commit c7f6e9a, `docs/measurements/2026-11-25-h100/nested/nested_8d3b524.csv`, commit 8d3b524, `docs/measurements/2026-11-25-h100/nested/nested_8d3b524_2e24_block128.csv`, commit 8d3b524, `docs/measurements/2026-11-25-h100/nested/nested_3a552df.csv`, commit 3a552df, `docs/measurements/2026-11-25-h100/nested/nested_3a552df_2e24_block128.csv`, commit 3a552df); the spread of the rounds' medians:
    ///
    /// | n | block | rounds | time | `interleaved` | time / interleaved's | CUDA C twin | × twin (C / ours) | device-side launches |
    /// |---|---|---|---|---|---|---|---|---|
    /// | 1,048,583 | 128 | 6 | 29.1 ms – 29.4 ms | 8.72 µs – 8.91 µs | 3,313.0 | 29.2 ms – 29.5 ms | 1.002 | 49,158 |
    /// | 1,048,583 | 512 | 6 | 10.2 ms – 10.5 ms | 8.50 µs – 8.61 µs | 1,211.3 | 10.1 ms – 10.5 ms | 0.990 | 16,392 |
    /// | 16,777,216 | 128 | 2 | 2.38 s – 2.40 s | 83.65 µs – 84.45 µs | 28,450.6 | 2.38 s – 2.40 s | 1.000 | 786,432 |
    /// | 16,777,216 | 512 | 4 | 401.0 ms – 405.7 ms | 101.6 µs – 101.8 µs | 3,950.2 | 396.2 ms – 405.0 ms | 0.997 | 262,144 |
    ///
    /// 2^24 in blocks of 128 runs as two host launches of 65,536 blocks, in Rust and in the C twin: its 131,072 chains may keep 786,456 launches pending, and the H100's driver grants room for at most 599,186 (`limits.txt`; `reduce::plan::blocks_per_nested_launch`). One timed run of each side per round.
    pub unsafe fn recursive_reduce_nosync(g_idata: GlobalMut<i32>, g_odata: GlobalMut<i32>, n: u32) {
        let tid = thread_idx_x();
        let block = block_dim_x();
        let b = block_idx_x();
        let (start, len) = block_segment(n, b, block);
        // SAFETY: `start < n` for every block of the grid, and g_odata holds gridDim.x words.
        let (idata, odata) = unsafe { (g_idata.offset(start as usize), g_odata.offset(b as usize)) };
        if block <= 2 {
            if tid == 0 {
                // SAFETY: len ≥ 1 elements of the segment exist; odata is this block's word.
                unsafe {
                    let pair = if len == 2 { idata.read(1) } else { 0 };
                    odata.write(0, idata.read(0).wrapping_add(pair));
                }
            }
            return;
        }
        let stride = block / 2;
        if tid < stride && tid + stride < len {
            let (i, j) = (tid as usize, (tid + stride) as usize);
            // SAFETY: i < j < len; only thread `tid` touches idata[i] and idata[j] here.
            unsafe { idata.write(i, idata.read(i).wrapping_add(idata.read(j))) };
        }
        thread_fence();
        sync_threads();
        if tid == 0 {
            let child_len = if len < stride { len } else { stride };
            // SAFETY: the child's segment is this block's first `child_len` elements, whose
            // sums every thread wrote and fenced before the barrier above.
            let status = unsafe {
                launch_device!(recursive_reduce_nosync<<<(1, stride, DeviceStream::FireAndForget)>>>(
                    idata, odata, child_len
                ))
            };
            if status != LAUNCH_OK {
                trap("a device-side launch of recursive_reduce_nosync failed");
            }
        }
    }
}
