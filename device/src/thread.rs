//! Thread, block and grid indices, and the block barrier.
//!
//! Only x is used by this crate's kernels (1-D grids of 1-D blocks); y and z are here for
//! kernels that need them.

#[cfg(not(target_arch = "nvptx64"))]
use super::emu::hooks;

macro_rules! special_register {
    ($(#[$m:meta])* $name:ident, $intrinsic:ident, $hook:ident, $field:ident) => {
        $(#[$m])*
        #[inline(always)]
        pub fn $name() -> u32 {
            #[cfg(target_arch = "nvptx64")]
            // SAFETY: reading a special register has no preconditions.
            unsafe {
                core::arch::nvptx::$intrinsic() as u32
            }
            #[cfg(not(target_arch = "nvptx64"))]
            hooks().$hook().$field
        }
    };
}

special_register!(
    /// `threadIdx.x`: this thread's index in its block.
    thread_idx_x, _thread_idx_x, thread_idx, x);
special_register!(
    /// `threadIdx.y`.
    thread_idx_y, _thread_idx_y, thread_idx, y);
special_register!(
    /// `threadIdx.z`.
    thread_idx_z, _thread_idx_z, thread_idx, z);
special_register!(
    /// `blockIdx.x`: this block's index in the grid.
    block_idx_x, _block_idx_x, block_idx, x);
special_register!(
    /// `blockIdx.y`.
    block_idx_y, _block_idx_y, block_idx, y);
special_register!(
    /// `blockIdx.z`.
    block_idx_z, _block_idx_z, block_idx, z);
special_register!(
    /// `blockDim.x`: threads per block.
    block_dim_x, _block_dim_x, block_dim, x);
special_register!(
    /// `blockDim.y`.
    block_dim_y, _block_dim_y, block_dim, y);
special_register!(
    /// `blockDim.z`.
    block_dim_z, _block_dim_z, block_dim, z);
special_register!(
    /// `gridDim.x`: blocks in the grid.
    grid_dim_x, _grid_dim_x, grid_dim, x);
special_register!(
    /// `gridDim.y`.
    grid_dim_y, _grid_dim_y, grid_dim, y);
special_register!(
    /// `gridDim.z`.
    grid_dim_z, _grid_dim_z, grid_dim, z);

/// This thread's lane in its warp (`threadIdx.x % 32` for the 1-D blocks used here).
#[inline(always)]
pub fn lane_id() -> u32 {
    thread_idx_x() % super::WARP_SIZE
}

/// This thread's warp in its block (`threadIdx.x / 32` for 1-D blocks).
#[inline(always)]
pub fn warp_id() -> u32 {
    thread_idx_x() / super::WARP_SIZE
}

/// The global index of this thread in a 1-D grid: `blockIdx.x * blockDim.x + threadIdx.x`,
/// widened to `usize` so that grids over 2^32 elements index correctly.
#[inline(always)]
pub fn global_idx_x() -> usize {
    block_idx_x() as usize * block_dim_x() as usize + thread_idx_x() as usize
}

/// `__syncthreads()`: the block barrier (PTX `bar.sync 0`).
///
/// The CUDA C++ Programming Guide's rules, which every kernel here keeps:
/// `__syncthreads()` "waits until all threads in the thread block have reached this point
/// and all global and shared memory accesses made by these threads prior to
/// `__syncthreads()` are visible to all threads in the block"; and it "is allowed in
/// conditional code but only if the conditional evaluates identically across the entire
/// thread block, otherwise the code execution is likely to hang or produce unintended
/// side effects."
///
/// A thread that has returned never reaches the barrier, so an early `return` before a
/// barrier breaks the second rule as surely as an `if`. The emulator reports either case
/// (kernel, block, the barrier's source line, which threads are missing).
#[inline(always)]
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
pub fn sync_threads() {
    #[cfg(target_arch = "nvptx64")]
    // SAFETY: `bar.sync 0` has no memory-safety preconditions; the rules above are about
    // progress and visibility, which callers keep.
    unsafe {
        core::arch::nvptx::_syncthreads()
    }
    #[cfg(not(target_arch = "nvptx64"))]
    hooks().sync_threads(core::panic::Location::caller())
}

/// A named barrier among `threads` threads of the block (PTX `bar.sync id, threads`; CUDA C
/// `asm("bar.sync %0, %1;")`, or `cuda::ptx::barrier_sync`): returns once `threads` threads have
/// arrived at barrier `id`, and orders their earlier shared and global accesses before their
/// later ones, as [`sync_threads`] does for the whole block. It lets a group of warps (the
/// compute warps of a warp-specialized kernel) synchronise among themselves while other warps
/// of the block (a producer, a look-ahead warp) go on.
///
/// The rules: `id` is 1 to 15 (barrier 0 is `sync_threads`'s); `threads` is a multiple of 32,
/// and every thread of a participating warp executes the same `named_barrier_sync` (the
/// instruction is `.aligned`); all users of one `id` agree on `threads`. The emulator reports a
/// barrier that not enough threads reach, or that two groups reach with different counts.
///
/// # Safety
/// The rules above: a barrier that fewer than `threads` threads reach hangs the block.
#[inline(always)]
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
pub unsafe fn named_barrier_sync(id: u32, threads: u32) {
    #[cfg(target_arch = "nvptx64")]
    // SAFETY: `bar.sync` has no memory-safety preconditions; the caller keeps the rules above.
    // No `nomem`: the compiler must not move memory accesses across it.
    unsafe {
        core::arch::asm!("bar.sync {i}, {n};", i = in(reg32) id, n = in(reg32) threads, options(nostack, preserves_flags));
    }
    #[cfg(not(target_arch = "nvptx64"))]
    hooks().named_barrier(id, threads, core::panic::Location::caller())
}
