//! Deliberately broken kernels, kept as tests of the CPU emulator's fault reports. They are
//! compiled for the host only: none of them is in the PTX, so none can hang a GPU.
//!
//! # Safety (all of them)
//! `out` (or `flag`) is valid for one element per thread of the launch.
#![allow(clippy::missing_safety_doc)]

use crate::device::atomic::load_acquire_u32;
use crate::device::thread::{sync_threads, thread_idx_x};
use crate::device::warp::shfl_down_sync;
use crate::device::{FULL_MASK, trap};
use crate::{kernel, static_shared};

kernel! {
    /// A barrier inside a branch that only the first 16 threads take: the CUDA rules for
    /// `__syncthreads` forbid it (on a GPU it hangs or silently misbehaves).
    pub unsafe fn divergent_barrier(out: *mut i32) {
        if thread_idx_x() < 16 {
            sync_threads();
        }
        // SAFETY: out holds one element per thread.
        unsafe { *out.add(thread_idx_x() as usize) = 1 };
    }
}

kernel! {
    /// Threads past 16 return early, before a barrier the others wait at.
    pub unsafe fn early_return_barrier(out: *mut i32) {
        if thread_idx_x() >= 16 {
            return;
        }
        sync_threads();
        // SAFETY: out holds one element per thread.
        unsafe { *out.add(thread_idx_x() as usize) = 1 };
    }
}

kernel! {
    /// The two halves of the block wait at two different barriers.
    pub unsafe fn split_barrier(out: *mut i32) {
        if thread_idx_x().is_multiple_of(2) {
            sync_threads(); // even threads wait here…
        } else {
            #[allow(clippy::branches_sharing_code)]
            sync_threads(); // …odd threads here
        }
        // SAFETY: out holds one element per thread.
        unsafe { *out.add(thread_idx_x() as usize) = 1 };
    }
}

kernel! {
    /// Writes one element past the end of a 32-element shared array.
    pub unsafe fn shared_out_of_bounds(out: *mut i32) {
        let smem = static_shared!(SMEM: [i32; 32]);
        let tid = thread_idx_x() as usize;
        // SAFETY: deliberately wrong for the last thread: index 32 of 32.
        unsafe { smem.write(tid + 1, 1) };
        sync_threads();
        // SAFETY: out holds one element per thread.
        unsafe { *out.add(tid) = smem.read(0) };
    }
}

kernel! {
    /// A full-mask shuffle that only half the warp executes.
    pub unsafe fn divergent_shuffle(out: *mut i32) {
        let tid = thread_idx_x();
        let mut v = tid as i32;
        if tid % 32 < 16 {
            v = shfl_down_sync(FULL_MASK, v, 1);
        }
        // SAFETY: out holds one element per thread.
        unsafe { *out.add(tid as usize) = v };
    }
}

kernel! {
    /// Spins on a flag that nobody sets.
    pub unsafe fn spin_forever(flag: *mut u32) {
        // SAFETY: flag is a valid u32.
        while unsafe { load_acquire_u32(flag) } == 0 {}
    }
}

kernel! {
    /// Calls `trap` from thread 3.
    pub unsafe fn traps(out: *mut i32) {
        if thread_idx_x() == 3 {
            trap("thread 3 found an impossible value");
        }
        // SAFETY: out holds one element per thread.
        unsafe { *out.add(thread_idx_x() as usize) = 1 };
    }
}
