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
    /// Not measured on a GPU yet.
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
