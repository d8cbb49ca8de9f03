//! Sum reductions of `i32` (wrapping, as the GPU's integer add is).
//!
//! Every kernel of this family turns `n` inputs into one partial sum per block, written
//! to `g_odata[blockIdx.x]`; the host adds the partials (or, for the single-pass kernels,
//! a last block does it on the device). Each file teaches one idea and says which problem
//! of the previous kernel it fixes.

// Chapter 3: global memory.
mod complete_unroll;
mod complete_unroll_warps8;
mod interleaved;
mod neighbored;
mod neighbored_less;
mod unroll2;
mod unroll4;
mod unroll8;
mod unroll_warps8;

// Chapter 5: shared memory.
mod gmem;
mod smem;
mod smem_unroll4;
mod smem_unroll4_dyn;

// Modern: warp shuffles, redux.sync, grid-stride loops, vector loads, single pass.
mod atomic_accumulate;
mod grid_stride;
#[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_80"))]
mod redux;
mod single_pass;
mod vector_loads;
mod warp_shuffle;

pub use complete_unroll::{
    complete_unroll, complete_unroll_32, complete_unroll_64, complete_unroll_128, complete_unroll_256,
    complete_unroll_512, complete_unroll_1024,
};
pub use complete_unroll_warps8::complete_unroll_warps8;
pub use interleaved::interleaved;
pub use neighbored::neighbored;
pub use neighbored_less::neighbored_less;
pub use unroll_warps8::unroll_warps8;
pub use unroll2::unroll2;
pub use unroll4::unroll4;
pub use unroll8::unroll8;

pub use gmem::gmem;
pub use smem::smem;
pub use smem_unroll4::smem_unroll4;
pub use smem_unroll4_dyn::smem_unroll4_dyn;

pub use atomic_accumulate::atomic_accumulate;
pub use grid_stride::grid_stride;
#[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_80"))]
pub use redux::redux;
pub use single_pass::single_pass;
pub use vector_loads::{ITEMS_PER_TRIP, V4Split, split_for_v4, vector_loads};
pub use warp_shuffle::{ITEMS_PER_THREAD, warp_shuffle};
