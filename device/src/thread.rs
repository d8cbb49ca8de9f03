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
