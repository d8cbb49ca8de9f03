use crate::device::global::GlobalMut;
use crate::device::launch::{DeviceStream, LAUNCH_OK};
use crate::device::thread::{block_dim_x, block_idx_x, thread_idx_x};
use crate::device::trap;
use crate::index::block_segment;
use crate::{kernel, launch_device};

// The lesson's code, which the lesson before does not have (tests/source.rs): `launch_device!(recursive_reduce<<<(1, stride, DeviceStream::Tail)>>>(idata, odata, child_len))`
kernel! {
    launches;
    /// The interleaved pair sum written as recursion: each block folds its segment in half,
    /// then launches a one-block child grid on the half that is left (the book's
    /// `gpuRecursiveReduce`, chapter 3, "Nested reduction").
    ///
    /// # Concept
    /// **Dynamic parallelism.** A kernel can launch kernels: the device runtime
    /// (`libcudadevrt`) queues a child grid from a GPU thread, with no trip to the host. The
    /// recursion a CPU programmer would write becomes a chain of launches. Every launch costs
    /// the GPU time to set up a grid, so the lesson is to count them.
    ///
    /// # Previous problem → fix
    /// This starts the nested family; it does what `interleaved` does with a loop, by a chain
    /// of launches instead, to show what a launch costs. The book's thread 0 launches the child
    /// and waits for it (`cudaDeviceSynchronize()` in device code). CUDA 12's device runtime
    /// ("CDP2") removed that wait: a parent can no longer wait for its child. The same order
    /// comes from the **tail-launch stream**: the child starts once the launching grid has
    /// completed. So each level still runs after the one before, as in the book.
    ///
    /// # Execution
    /// 1. Block `b` owns the segment `g_idata[b*blockDim ..]` (`len` elements of it exist);
    ///    its answer goes to `g_odata[b]`.
    /// 2. Base case, `blockDim ≤ 2`: thread 0 writes `idata[0] + idata[1]` (or `idata[0]`
    ///    when `len` is 1) and the block is done.
    /// 3. Thread `tid < blockDim/2` adds `idata[tid + blockDim/2]` into `idata[tid]`, when
    ///    that element exists.
    /// 4. Thread 0 launches `recursive_reduce<<<1, blockDim/2>>>` on the same segment and
    ///    answer word, with `min(len, blockDim/2)` elements, into the tail-launch stream.
    ///
    /// ```text
    ///  host:   recursive_reduce<<<G, 512>>>      G blocks fold 512 → 256
    ///  tail:   G × recursive_reduce<<<1, 256>>>   each folds 256 → 128 …
    ///  …       G × recursive_reduce<<<1, 2>>>     each writes its segment's sum
    ///          G × 8 device-side launches in all (block 512)
    /// ```
    ///
    /// # Launch
    /// Grid `ceil(n / blockDim)`, block a power of two in 2..=1024, no shared memory. Needs
    /// the device runtime: the PTX is linked with `libcudadevrt.a`. Works **in place**.
    ///
    /// # Preconditions
    /// `g_idata` holds `n ≥ 1` elements that may be overwritten, `g_odata` `gridDim.x`. The
    /// device runtime's pending-launch limit covers `gridDim.x` launches.
    ///
    /// # Safety
    /// Each thread touches its own element and its partner's, in its block's segment; no
    /// barrier (the child grid, not a barrier, orders the levels). A failed device-side launch
    /// traps rather than leaving a partial sum.
    ///
    /// # Measured
    /// NVIDIA H100 80GB HBM3, every run checked, `reduce --compare-c` with `interleaved` in the same rounds (`docs/measurements/2026-11-25-h100/nested/nested_7010bfc_room_one_per_block.csv`, commit 7010bfc, `docs/measurements/2026-11-25-h100/nested/nested_c7f6e9a_no_twins.csv`, commit c7f6e9a, `docs/measurements/2026-11-25-h100/nested/nested_8d3b524.csv`, commit 8d3b524, `docs/measurements/2026-11-25-h100/nested/nested_8d3b524_2e24_block128.csv`, commit 8d3b524, `docs/measurements/2026-11-25-h100/nested/nested_3a552df.csv`, commit 3a552df, `docs/measurements/2026-11-25-h100/nested/nested_3a552df_2e24_block128.csv`, commit 3a552df); the spread of the rounds' medians:
    ///
    /// | n | block | rounds | time | `interleaved` | time / interleaved's | CUDA C twin | × twin (C / ours) | device-side launches |
    /// |---|---|---|---|---|---|---|---|---|
    /// | 1,048,583 | 128 | 6 | 647.6 ms – 654.3 ms | 8.72 µs – 8.91 µs | 73,683.3 | 620.3 ms – 627.3 ms | 0.960 | 49,158 |
    /// | 1,048,583 | 512 | 6 | 183.2 ms – 186.4 ms | 8.38 µs – 8.61 µs | 21,743.4 | 189.2 ms – 191.8 ms | 1.031 | 16,392 |
    /// | 16,777,216 | 128 | 3 | 36.58 s – 36.90 s | 83.54 µs – 84.45 µs | 437,845.9 | 36.63 s – 36.94 s | 1.001 | 786,432 |
    /// | 16,777,216 | 512 | 5 | 5.11 s – 5.17 s | 101.5 µs – 101.8 µs | 50,608.4 | 5.28 s – 5.32 s | 1.030 | 262,144 |
    ///
    /// At 2^24 in blocks of 128 one call takes 37 s, so its rounds have few timed runs: 8d3b524's and 3a552df's have one each, in Rust and in C.
    pub unsafe fn recursive_reduce(g_idata: GlobalMut<i32>, g_odata: GlobalMut<i32>, n: u32) {
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
        if tid == 0 {
            let child_len = if len < stride { len } else { stride };
            // SAFETY: the child's segment is this block's first `child_len` elements, whose
            // sums this grid completes before the tail-launched child starts.
            let status = unsafe {
                launch_device!(recursive_reduce<<<(1, stride, DeviceStream::Tail)>>>(idata, odata, child_len))
            };
            if status != LAUNCH_OK {
                trap("a device-side launch of recursive_reduce failed");
            }
        }
    }
}
