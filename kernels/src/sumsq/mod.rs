//! Σ x² over an `i32` array (wrapping), step by step as in the classic "CUDA sum of
//! squares" tutorial: from one thread doing everything to many blocks that each reduce
//! their threads' sums in shared memory.
//!
//! | step | kernel | what changes |
//! |---|---|---|
//! | 1 | [`squares_one_thread`] | one thread reads the whole array |
//! | 2 | [`squares_chunked`] | one block; each thread sums a contiguous chunk (uncoalesced) |
//! | 3 | [`squares_coalesced`] | one block; thread `i` reads `i, i+T, i+2T, …` (coalesced) |
//! | 4 | [`squares_grid_stride`] | many blocks; a grid-wide stride |
//! | 5 | [`squares_block_tree`] | many blocks; a shared-memory tree per block |
//!
//! Every kernel has the arguments `(g_idata, g_result, g_clocks, n)`: it writes its partial
//! sums to `g_result` (one per thread in steps 1–4, one per block in step 5; the host adds
//! them) and times itself as the tutorial does.
//!
//! # The kernel's own clock
//! Thread 0 of block `b` writes `clock64()` taken at the block's start to `g_clocks[2b]`
//! and at its end to `g_clocks[2b + 1]`; the host reports (latest end − earliest start).
//! The start is read **before** a block barrier that precedes the block's first load, and
//! the end **after** a block barrier that follows the block's last write of a result, so
//! the interval covers all of the block's work (a barrier also keeps the compiler from
//! moving loads or stores across the clock reads).
//!
//! `clock64()` counts the cycles of the multiprocessor the block runs on. Each SM has its
//! own counter and they are not synchronised, so only a difference taken on one SM is
//! exact; the earliest start and latest end over blocks on different SMs is what the
//! tutorial reports, and it is an approximation of the kernel's span (good to the offsets
//! between the SMs' counters). The counter also runs at the SM clock, which changes with
//! load and temperature: compare cycles only between runs on the same GPU. In the CPU
//! emulator, `clock64()` is host nanoseconds since the launch began, not GPU cycles.

mod squares_block_tree;
mod squares_chunked;
mod squares_coalesced;
mod squares_grid_stride;
mod squares_one_thread;

pub use squares_block_tree::{SQUARES_BLOCK_TREE_SHARED_BYTES, squares_block_tree};
pub use squares_chunked::squares_chunked;
pub use squares_coalesced::squares_coalesced;
pub use squares_grid_stride::squares_grid_stride;
pub use squares_one_thread::squares_one_thread;

use crate::device::clock::clock64;
use crate::device::global::GlobalMut;
use crate::device::thread::{block_idx_x, sync_threads, thread_idx_x};

/// `x²`, wrapping as the GPU's 32-bit multiply does.
#[inline(always)]
fn square(x: i32) -> i32 {
    x.wrapping_mul(x)
}

/// Starts the block's clock: reads `clock64()`, then the block barrier, so that no thread
/// of the block loads anything before the start was taken. Returns the start (meaningful
/// in thread 0, which records it). Every thread of the block must call it.
#[inline(always)]
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
fn start_block_clock() -> u64 {
    let start = clock64();
    sync_threads();
    start
}

/// Stops the block's clock: the block barrier (every thread has written its results),
/// then thread 0 writes `start` and `clock64()` to `g_clocks[2b]` and `g_clocks[2b + 1]`.
/// Every thread of the block must call it.
///
/// # Safety
/// `g_clocks` holds `2 * gridDim.x` elements.
#[inline(always)]
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
unsafe fn stop_block_clock(g_clocks: GlobalMut<u64>, start: u64) {
    sync_threads();
    if thread_idx_x() == 0 {
        let end = clock64();
        let b = block_idx_x() as usize;
        // SAFETY: 2b + 1 < 2 * gridDim.x, the caller's promise; thread 0 of block b alone
        // writes these two slots.
        unsafe {
            g_clocks.write(2 * b, start);
            g_clocks.write(2 * b + 1, end);
        }
    }
}
