//! Deliberately broken kernels, kept as tests of the CPU emulator's fault reports. They are
//! compiled for the host only: none of them is in the PTX, so none can hang a GPU.
//!
//! The line of each kernel where its fault happens carries a `[fault-site: NAME]` comment;
//! the fault tests (`tests/faults.rs`) find those lines in this file and check that the
//! emulator reports exactly them, so keep each marker on its line when editing.
//!
//! # Safety (all of them)
//! `out` (or `flag`) is valid for one element per thread of the launch.
#![allow(clippy::missing_safety_doc)]

use crate::device::atomic::{atomic_add_u32, load_acquire_u32, load_relaxed_u32, thread_fence};
use crate::device::bulk::{Mbarrier, bulk_commit, bulk_wait_read, fence_proxy_async};
use crate::device::global::GlobalMut;
use crate::device::shared::copy_async_commit;
use crate::device::slice::AtomicSlice;
use crate::device::thread::{block_dim_x, block_idx_x, sync_threads, thread_idx_x};
use crate::device::warp::{shfl_down_sync, shfl_xor_sync};
use crate::device::{FULL_MASK, trap};
use crate::{kernel, static_shared};

kernel! {
    /// A barrier inside a branch that only the first 16 threads take: the CUDA rules for
    /// `__syncthreads` forbid it (on a GPU it hangs or silently misbehaves).
    pub unsafe fn divergent_barrier(out: GlobalMut<i32>) {
        if thread_idx_x() < 16 {
            sync_threads(); // [fault-site: divergent_barrier]
        }
        // SAFETY: out holds one element per thread.
        unsafe { out.write(thread_idx_x() as usize, 1)};
    }
}

kernel! {
    /// Threads past 16 return early, before a barrier the others wait at.
    pub unsafe fn early_return_barrier(out: GlobalMut<i32>) {
        if thread_idx_x() >= 16 {
            return;
        }
        sync_threads(); // [fault-site: early_return_barrier]
        // SAFETY: out holds one element per thread.
        unsafe { out.write(thread_idx_x() as usize, 1)};
    }
}

kernel! {
    /// The two halves of the block wait at two different barriers.
    pub unsafe fn split_barrier(out: GlobalMut<i32>) {
        if thread_idx_x().is_multiple_of(2) {
            sync_threads(); // even threads wait here… [fault-site: split_barrier/even]
        } else {
            #[allow(clippy::branches_sharing_code)]
            sync_threads(); // …odd threads here [fault-site: split_barrier/odd]
        }
        // SAFETY: out holds one element per thread.
        unsafe { out.write(thread_idx_x() as usize, 1)};
    }
}

kernel! {
    /// Writes one element past the end of a 32-element shared array.
    pub unsafe fn shared_out_of_bounds(out: GlobalMut<i32>) {
        let smem = static_shared!(SMEM: [i32; 32]);
        let tid = thread_idx_x() as usize;
        // SAFETY: deliberately wrong for the last thread: index 32 of 32.
        unsafe { smem.write(tid + 1, 1) }; // [fault-site: shared_out_of_bounds]
        sync_threads();
        // SAFETY: out holds one element per thread.
        unsafe { out.write(tid, smem.read(0))};
    }
}

kernel! {
    /// A full-mask shuffle that only half the warp executes.
    pub unsafe fn divergent_shuffle(out: GlobalMut<i32>) {
        let tid = thread_idx_x();
        let mut v = tid as i32;
        if tid % 32 < 16 {
            v = shfl_down_sync(FULL_MASK, v, 1); // [fault-site: divergent_shuffle]
        }
        // SAFETY: out holds one element per thread.
        unsafe { out.write(tid as usize, v)};
    }
}

kernel! {
    /// A full-mask shuffle in a block of 48 threads: the mask of warp 1 names lanes 16-31,
    /// which that warp does not have. Launch it with 48 threads per block.
    pub unsafe fn absent_lane_shuffle(out: GlobalMut<i32>) {
        let tid = thread_idx_x();
        let v = shfl_down_sync(FULL_MASK, tid as i32, 1); // [fault-site: absent_lane_shuffle]
        // SAFETY: out holds one element per thread.
        unsafe { out.write(tid as usize, v)};
    }
}

kernel! {
    /// Every lane shuffles with the mask of lanes 0-15, which lanes 16-31 are not in: a lane
    /// must be in the mask it passes.
    pub unsafe fn shuffle_without_own_lane(out: GlobalMut<i32>) {
        let tid = thread_idx_x();
        let v = shfl_down_sync(0x0000_ffff, tid as i32, 1); // [fault-site: shuffle_without_own_lane]
        // SAFETY: out holds one element per thread.
        unsafe { out.write(tid as usize, v)};
    }
}

kernel! {
    /// Even lanes call a full-mask `shfl_down`, odd lanes a full-mask `shfl_xor`: the lanes of
    /// a mask must meet at the same warp operation.
    pub unsafe fn mismatched_shuffles(out: GlobalMut<i32>) {
        let tid = thread_idx_x();
        let v = if tid.is_multiple_of(2) {
            shfl_down_sync(FULL_MASK, tid as i32, 1) // [fault-site: mismatched_shuffles/down]
        } else {
            shfl_xor_sync(FULL_MASK, tid as i32, 1) // [fault-site: mismatched_shuffles/xor]
        };
        // SAFETY: out holds one element per thread.
        unsafe { out.write(tid as usize, v)};
    }
}

kernel! {
    /// Thread 5 of block 1 spins on a flag that nobody sets; every other thread returns.
    pub unsafe fn spin_forever(flag: GlobalMut<u32>) {
        if block_idx_x() == 1 && thread_idx_x() == 5 {
            // SAFETY: flag is a valid u32.
            while unsafe { load_acquire_u32(flag.as_const()) } == 0 {} // [fault-site: spin_forever]
        }
    }
}

kernel! {
    /// Calls `trap` from thread 3.
    pub unsafe fn traps(out: GlobalMut<i32>) {
        if thread_idx_x() == 3 {
            trap("found an impossible value"); // [fault-site: traps]
        }
        // SAFETY: out holds one element per thread.
        unsafe { out.write(thread_idx_x() as usize, 1)};
    }
}

kernel! {
    /// A 128-bit load (`load_v4`) that thread 5 of block 1 makes 4 bytes past a 16-byte
    /// boundary; every other thread loads from the (aligned) start of `out`.
    pub unsafe fn misaligned_load(out: GlobalMut<i32>) {
        let skew = usize::from(block_idx_x() == 1 && thread_idx_x() == 5);
        // SAFETY: deliberately wrong for one thread: `out + 1` is 4-byte, not 16-byte, aligned.
        let v = unsafe { out.as_const().load_v4(skew) }; // [fault-site: misaligned_load]
        core::hint::black_box(v);
    }
}

kernel! {
    /// Thread 7 of block 1 indexes past the end of a four-element table: Rust's bounds
    /// check panics (on a GPU the panic traps).
    pub unsafe fn panics(out: GlobalMut<i32>) {
        let tid = thread_idx_x();
        let table = [10, 20, 30, 40];
        let i = if block_idx_x() == 1 && tid == 7 { 4 } else { tid as usize % 4 };
        let v = table[i]; // [fault-site: panics]
        // SAFETY: out holds one element per thread of the grid.
        unsafe { out.write(global_index(), v)};
    }
}

// ---------------------------------------------------------------------------------------
// memcheck, racecheck and initcheck: the bugs compute-sanitizer finds on a GPU.

/// `blockIdx.x * blockDim.x + threadIdx.x`, the global index of the calling thread.
fn global_index() -> usize {
    block_idx_x() as usize * block_dim_x() as usize + thread_idx_x() as usize
}

kernel! {
    /// The off-by-one store: each thread means to write its own element of a buffer of one
    /// element per thread of the grid, but writes element `gid + 1`, so the last thread of
    /// the last block stores one past the end.
    pub unsafe fn global_store_past_end(out: GlobalMut<i32>) {
        let gid = global_index();
        // SAFETY: deliberately wrong for the grid's last thread: element `len`.
        unsafe { out.write(gid + 1, 1) }; // [fault-site: global_store_past_end]
    }
}

kernel! {
    /// Asks L2 for the element after its own (`prefetch.global.L2`, a read-ahead) without the
    /// `gid + 1 < len` test, then stores its own: the grid's last thread prefetches one past the
    /// end. Harmless on a GPU when the line happens to be mapped, undefined when it is not; the
    /// emulator reports it as it reports a read out of bounds.
    pub unsafe fn global_prefetch_past_end(out: GlobalMut<i32>) {
        let gid = global_index();
        // SAFETY: deliberately wrong for the grid's last thread: element `len`.
        unsafe { out.as_const().prefetch_l2(gid + 1) }; // [fault-site: global_prefetch_past_end]
        // SAFETY: `out` holds one element per thread of the grid.
        unsafe { out.write(gid, 1) };
    }
}

kernel! {
    /// A stencil that reads its left neighbour without the `gid > 0` test: thread 0 of
    /// block 0 loads the element before the start of the buffer.
    pub unsafe fn global_load_before_start(out: GlobalMut<i32>) {
        let gid = global_index();
        // SAFETY: deliberately wrong for thread 0 of block 0: element -1.
        let left = unsafe { out.as_const().read(gid.wrapping_sub(1)) }; // [fault-site: global_load_before_start]
        core::hint::black_box(left);
    }
}

kernel! {
    /// Correct on its own: every thread stores to its own element. The fault tests launch it
    /// on a buffer the host has already freed (a use after free).
    pub unsafe fn store_each(out: GlobalMut<i32>) {
        // SAFETY: `out` holds one element per thread of the grid.
        unsafe { out.write(global_index(), 1) }; // [fault-site: store_each]
    }
}

kernel! {
    /// The interleaved tree in shared memory with its barrier forgotten: a thread adds
    /// `smem[tid + s]` for the next, smaller `s` before the thread that owns that slot has
    /// added into it. Launch it with 64 threads per block.
    pub unsafe fn missing_barrier_shared_tree(out: GlobalMut<i32>) {
        let smem = static_shared!(TREE: [i32; 64]);
        let tid = thread_idx_x();
        // SAFETY: tid < 64, each thread its own slot.
        unsafe { smem.write(tid as usize, 1) };
        sync_threads();
        let mut s = block_dim_x() / 2;
        while s > 0 {
            if tid < s {
                let (i, j) = (tid as usize, (tid + s) as usize);
                // SAFETY: i < j < 64. No barrier orders this round after the previous one.
                unsafe { smem.write(i, smem.read(i) + smem.read(j)) }; // [fault-site: missing_barrier_shared_tree]
            }
            // (sync_threads() belongs here)
            s >>= 1;
        }
        if tid == 0 {
            // SAFETY: out holds one element per block.
            unsafe { out.write(block_idx_x() as usize, smem.read(0)) };
        }
    }
}

kernel! {
    /// The book's unrolled last warp (`reduceUnrollWarps8`), `volatile` and all, without
    /// `__syncwarp`: correct only if the 32 lanes run in lock step, which no GPU since Volta
    /// promises. Lane 0 reads `smem[1]` in its last step; nothing orders that after lane 1's
    /// first step, which writes it. Launch it with 64 threads per block.
    pub unsafe fn last_warp_unsynced(out: GlobalMut<i32>) {
        let smem = static_shared!(LAST_WARP: [i32; 64]);
        let tid = thread_idx_x();
        // SAFETY: tid < 64, each thread its own slot.
        unsafe { smem.write(tid as usize, 1) };
        sync_threads();
        if tid < 32 {
            let t = tid as usize;
            // SAFETY: every index is below 64; deliberately unsynchronised between lanes.
            unsafe {
                smem.write_volatile(t, smem.read_volatile(t) + smem.read_volatile(t + 32)); // [fault-site: last_warp/32]
                smem.write_volatile(t, smem.read_volatile(t) + smem.read_volatile(t + 16));
                smem.write_volatile(t, smem.read_volatile(t) + smem.read_volatile(t + 8));
                smem.write_volatile(t, smem.read_volatile(t) + smem.read_volatile(t + 4));
                smem.write_volatile(t, smem.read_volatile(t) + smem.read_volatile(t + 2));
                smem.write_volatile(t, smem.read_volatile(t) + smem.read_volatile(t + 1)); // [fault-site: last_warp/1]
            }
        }
        if tid == 0 {
            // SAFETY: out holds one element per block.
            unsafe { out.write(block_idx_x() as usize, smem.read(0)) };
        }
    }
}

kernel! {
    /// The interleaved tree in global memory with its barrier forgotten (as
    /// `missing_barrier_shared_tree`, on the kernel's buffer): a race in global memory
    /// between threads of one block. Launch it with 64 threads per block.
    pub unsafe fn missing_barrier_global_tree(out: GlobalMut<i32>) {
        let tid = thread_idx_x();
        // SAFETY: this block's 64 elements.
        let idata = unsafe { out.offset(block_idx_x() as usize * 64) };
        let mut s = block_dim_x() / 2;
        while s > 0 {
            if tid < s {
                let (i, j) = (tid as usize, (tid + s) as usize);
                // SAFETY: i < j < 64. No barrier orders this round after the previous one.
                unsafe { idata.write(i, idata.read(i) + idata.read(j)) }; // [fault-site: missing_barrier_global_tree]
            }
            s >>= 1;
        }
    }
}

kernel! {
    /// Block 1 reads the element block 0 writes, in the same launch, with nothing between
    /// them: blocks are not ordered (only a later launch, or a release and an acquire, orders
    /// them).
    pub unsafe fn cross_block_race(out: GlobalMut<i32>) {
        if thread_idx_x() == 0 {
            if block_idx_x() == 0 {
                // SAFETY: out holds at least one element.
                unsafe { out.write(0, 7) }; // [fault-site: cross_block_race/write]
            } else {
                // SAFETY: as above.
                let v = unsafe { out.as_const().read(0) }; // [fault-site: cross_block_race/read]
                core::hint::black_box(v);
            }
        }
    }
}

kernel! {
    /// Thread 0 of each block makes a global `atomicAdd` at index 128 of the 128-element buffer:
    /// one past its end (issue #59).
    pub unsafe fn atomic_past_end(out: GlobalMut<i32>) {
        if thread_idx_x() == 0 {
            // SAFETY: none: index 128 is past the end, on purpose.
            unsafe { out.atomic_add(128, 1) }; // [fault-site: atomic_past_end]
        }
    }
}

kernel! {
    /// Thread 0 of each block makes a 4-byte `atomicAdd` at byte offset 2 of the buffer: not a
    /// multiple of 4 (on a GPU, `CUDA_ERROR_MISALIGNED_ADDRESS`).
    pub unsafe fn atomic_misaligned(out: GlobalMut<i32>) {
        let skewed = out.cast::<u8>().wrapping_offset(2).cast::<i32>();
        if thread_idx_x() == 0 {
            // SAFETY: none: misaligned on purpose.
            unsafe { skewed.atomic_add(0, 1) }; // [fault-site: atomic_misaligned]
        }
    }
}

kernel! {
    /// Thread 0 of each block makes a shared `atomicAdd` at index 64 of a 64-element array.
    pub unsafe fn shared_atomic_past_end(out: GlobalMut<i32>) {
        let counts = static_shared!(ATOMIC_COUNTS: [i32; 64]);
        if thread_idx_x() == 0 {
            // SAFETY: none: index 64 is past the end, on purpose.
            unsafe { counts.atomic_add(64, 1) }; // [fault-site: shared_atomic_past_end]
        }
        core::hint::black_box(out);
    }
}

crate::device::kernel! {
    /// The checked form, with no `unsafe`: thread 0 of each block calls `atomic_max` at index
    /// 128 of a 128-element `AtomicSlice`, which stops the kernel.
    pub fn atomic_slice_past_end(counts: AtomicSlice<i32>) {
        if thread_idx_x() == 0 {
            counts.atomic_max(128, 1); // [fault-site: atomic_slice_past_end]
        }
    }
}

kernel! {
    /// Thread 0 stores a shared word plainly while thread 1 adds to it atomically, in the same
    /// barrier interval: a plain access racing an atomic (two atomics would not race).
    pub unsafe fn store_races_shared_atomic(out: GlobalMut<i32>) {
        let word = static_shared!(RACED_WORD: [i32; 1]);
        let t = thread_idx_x();
        if t == 0 {
            // SAFETY: in bounds; the race with thread 1 is the planted fault.
            unsafe { word.write(0, 5) }; // [fault-site: store_races_shared_atomic/store]
        } else if t == 1 {
            // SAFETY: in bounds; as above.
            unsafe { word.atomic_add(0, 1) }; // [fault-site: store_races_shared_atomic/atomic]
        }
        core::hint::black_box(out);
    }
}

kernel! {
    /// Thread 0 stores `out[0]` plainly while thread 1 adds to it atomically, in the same barrier
    /// interval: a plain access racing an atomic in global memory.
    pub unsafe fn store_races_global_atomic(out: GlobalMut<i32>) {
        let t = thread_idx_x();
        if t == 0 {
            // SAFETY: in bounds; the race with thread 1 is the planted fault.
            unsafe { out.write(0, 5) }; // [fault-site: store_races_global_atomic/store]
        } else if t == 1 {
            // SAFETY: in bounds; as above.
            unsafe { out.atomic_add(0, 1) }; // [fault-site: store_races_global_atomic/atomic]
        }
    }
}

kernel! {
    /// The last-block finish without its release fence: thread 0 of each block stores its
    /// partial to `out[1 + b]` and draws a ticket from `out[0]` with an atomic, no
    /// `__threadfence()` between the two; the block that draws the last ticket fences (its
    /// acquire) and reads the other blocks' partials with `ld.relaxed`. Nothing orders block 0's
    /// plain store before block 1's load: a race between blocks. Launch it with 2 blocks, on
    /// one worker (block 0 runs first and block 1 draws the last ticket).
    pub unsafe fn unfenced_publish(out: GlobalMut<i32>) {
        if thread_idx_x() == 0 {
            let b = block_idx_x() as usize;
            // SAFETY: out holds 1 + gridDim.x elements; element 1 + b is this block's.
            unsafe { out.write(1 + b, 7) }; // [fault-site: unfenced_publish/write]
            // SAFETY: out[0] is an aligned word, used only as the ticket.
            let ticket = unsafe { atomic_add_u32(out.cast::<u32>(), 1) };
            if ticket == 1 {
                thread_fence();
                // SAFETY: element 1 holds block 0's partial.
                let v = unsafe { load_relaxed_u32(out.cast::<u32>().as_const().offset(1)) }; // [fault-site: unfenced_publish/read]
                core::hint::black_box(v);
            }
        }
    }
}

kernel! {
    /// Only the first 32 threads fill their shared slot (the `if (idx < n)` of a short last
    /// block, without the `else smem[tid] = 0`), and then every thread reads its slot:
    /// thread 32 reads a slot no thread wrote. Launch it with 64 threads per block.
    pub unsafe fn uninit_shared_read(out: GlobalMut<i32>) {
        let smem = static_shared!(HALF_FILLED: [i32; 64]);
        let tid = thread_idx_x() as usize;
        if tid < 32 {
            // SAFETY: tid < 32 < 64.
            unsafe { smem.write(tid, 1) };
        }
        sync_threads();
        // SAFETY: tid < 64; deliberately unwritten for tid >= 32.
        let v = unsafe { smem.read(tid) }; // [fault-site: uninit_shared_read]
        // SAFETY: out holds one element per thread of the grid.
        unsafe { out.write(global_index(), v) };
    }
}

kernel! {
    /// Adds one to each element in place. Correct on its own; the fault tests launch it on
    /// a buffer that was allocated (`Backend::alloc_uninit`, `cudaMalloc` without a copy or
    /// a memset) but never written, so its first load reads garbage.
    pub unsafe fn increment_each(out: GlobalMut<i32>) {
        let gid = global_index();
        // SAFETY: out holds one element per thread of the grid.
        let v = unsafe { out.as_const().read(gid) }; // [fault-site: increment_each]
        // SAFETY: as above.
        unsafe { out.write(gid, v + 1) };
    }
}

kernel! {
    /// Thread 0 of each block starts a bulk copy of 64 elements (256 bytes) into shared
    /// memory but tells the `mbarrier` to expect 512: the phase never completes, and the wait
    /// hangs (on a GPU, until the watchdog; in the emulator, until the launch's time budget).
    pub unsafe fn bulk_wrong_bytes(out: GlobalMut<i32>) {
        let bars = static_shared!(BARS: [u64; 1]);
        let tile = static_shared!(TILE: [i32; 64]);
        if thread_idx_x() == 0 {
            // SAFETY: one barrier, one thread; deliberately wrong: 512 bytes expected, 256 copied.
            unsafe {
                let bar = Mbarrier::at(bars, 0);
                bar.init(1);
                bar.arrive_expect_tx(512);
                tile.copy_bulk(0, out.as_const(), 64, bar, 0);
                bar.wait_parity(0); // [fault-site: bulk_wrong_bytes]
            }
        }
        sync_threads();
    }
}

kernel! {
    /// Thread 0 of block 1 starts a bulk copy from one element past the start of `out`: the
    /// copy engine needs 16-byte aligned addresses (on a GPU: a misaligned-address error).
    pub unsafe fn bulk_misaligned(out: GlobalMut<i32>) {
        let bars = static_shared!(BARS: [u64; 1]);
        let tile = static_shared!(TILE: [i32; 64]);
        if thread_idx_x() == 0 {
            let skew = usize::from(block_idx_x() == 1);
            // SAFETY: deliberately wrong for block 1: `out + 1` is not 16-byte aligned.
            unsafe {
                let bar = Mbarrier::at(bars, 0);
                bar.init(1);
                bar.arrive_expect_tx(256);
                tile.copy_bulk(0, out.as_const().wrapping_offset(skew), 64, bar, 0); // [fault-site: bulk_misaligned]
                bar.wait_parity(0);
            }
        }
        sync_threads();
    }
}

kernel! {
    /// The first 32 threads each start a `cp.async` of 16 bytes into shared memory and close its
    /// group, but never wait for it (no `cp.async.wait_group`); after the barrier every thread
    /// reads its word. The copies are still in flight: on the GPU thread 0 may read the poison
    /// that was there before; the emulator reports the read. Launch it with 64 threads.
    pub unsafe fn cp_async_without_wait(out: GlobalMut<i32>) {
        let staged = static_shared!(STAGED: [i32; 128]);
        let tid = thread_idx_x() as usize;
        if tid < 32 {
            // SAFETY: chunk tid of out's 128 elements, 16-byte aligned; deliberately never waited for.
            unsafe { staged.copy_async_v4(4 * tid, out.as_const().wrapping_offset(4 * tid)) }; // [fault-site: cp_async_issued]
            copy_async_commit();
        }
        sync_threads();
        // SAFETY: tid < 128.
        let v = unsafe { staged.read(tid) }; // [fault-site: cp_async_without_wait]
        // SAFETY: out holds one element per thread of the grid.
        unsafe { out.write(global_index(), v) };
    }
}

kernel! {
    /// Thread 0 starts a bulk copy of 64 elements into shared memory on an `mbarrier`, and then,
    /// instead of waiting on the barrier, goes straight to the block barrier: every thread reads
    /// its element of the tile while the copy is in flight (a missing `mbarrier.try_wait`).
    pub unsafe fn bulk_without_wait(out: GlobalMut<i32>) {
        let bars = static_shared!(BARS: [u64; 1]);
        let tile = static_shared!(TILE: [i32; 64]);
        if thread_idx_x() == 0 {
            // SAFETY: one barrier, one thread; the bytes expected are the bytes copied, but
            // nobody waits for them.
            unsafe {
                let bar = Mbarrier::at(bars, 0);
                bar.init(1);
                bar.arrive_expect_tx(256);
                tile.copy_bulk(0, out.as_const(), 64, bar, 0); // [fault-site: bulk_issued]
            }
        }
        sync_threads();
        // SAFETY: tid < 64.
        let v = unsafe { tile.read(thread_idx_x() as usize) }; // [fault-site: bulk_without_wait]
        // SAFETY: out holds one element per thread of the grid.
        unsafe { out.write(global_index(), v) };
    }
}

kernel! {
    /// Every thread writes its element of a shared tile; thread 0 stores the tile to global
    /// memory with one bulk store, and then writes the tile again before the store has read it
    /// (its `cp.async.bulk.wait_group.read` comes one line too late).
    pub unsafe fn bulk_store_overwritten(out: GlobalMut<i32>) {
        let tile = static_shared!(OUTGOING: [i32; 64]);
        let tid = thread_idx_x() as usize;
        // SAFETY: tid < 64.
        unsafe { tile.write(tid, tid as i32) };
        fence_proxy_async();
        sync_threads();
        if tid == 0 {
            // SAFETY: 64 elements at block 0's or 1's half of out (16-byte aligned), fenced and
            // behind the barrier; deliberately overwritten before the wait.
            unsafe {
                tile.store_bulk(0, out.offset(64 * block_idx_x() as usize), 64, 0); // [fault-site: bulk_store_issued]
                bulk_commit();
                tile.write(0, -1); // [fault-site: bulk_store_overwritten]
            }
            bulk_wait_read::<0>();
        }
    }
}

/// Kernels that launch from the device, broken on purpose (host builds only: a module with a
/// device-side launch needs the device runtime at link time).
#[cfg(not(target_arch = "nvptx64"))]
pub mod nested {
    use crate::device::global::GlobalMut;
    use crate::device::launch::DeviceStream;
    use crate::device::thread::thread_idx_x;
    use crate::{kernel, launch_device};

    kernel! {
        /// Launches itself with no base case: the chain ends at CUDA's nesting limit.
        pub unsafe fn endless_recursion(out: GlobalMut<i32>, depth: u32) {
            if thread_idx_x() == 0 {
                // SAFETY: out holds one element.
                unsafe {
                    out.write(0, depth as i32);
                    launch_device!(endless_recursion<<<(1, 32, DeviceStream::Tail)>>>(out, depth + 1));
                }
            }
        }
    }

    kernel! {
        /// Block 1's thread 3 launches `reads_past_the_end` on one element with 64 threads.
        pub unsafe fn launches_a_bad_child(buf: GlobalMut<i32>) {
            if crate::device::thread::block_idx_x() == 1 && thread_idx_x() == 3 {
                // SAFETY: none: the child reads past `buf`'s one element, on purpose.
                unsafe { launch_device!(reads_past_the_end<<<(1, 64, DeviceStream::Tail)>>>(buf)) };
            }
        }
    }

    kernel! {
        /// Every thread reads element `threadIdx.x`.
        pub unsafe fn reads_past_the_end(buf: GlobalMut<i32>) {
            // SAFETY: none: past the buffer's length on purpose.
            let v = unsafe { buf.read(thread_idx_x() as usize) };
            if v == i32::MIN {
                // SAFETY: element 0 exists.
                unsafe { buf.write(0, v) };
            }
        }
    }
}
