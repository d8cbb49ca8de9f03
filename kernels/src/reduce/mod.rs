//! Sum reductions of `i32` (wrapping, as the GPU's integer add is), and — for
//! `warp_shuffle`, `vector_loads` and `atomic_accumulate` — sums, minima and maxima of every
//! element type of [`crate::types`]: generic bodies (`warp_shuffle_generic`, …) instantiated
//! as the entries `{kernel}__{type}_{op}` (`warp_shuffle__f32_max`, …), each a module of the
//! kernel's own (`warp_shuffle::f32::max`: its `entry` and its `NAME`). Beside them, the
//! library's reductions that a CUB or PyTorch user reaches for next: the position of the
//! extreme (`arg_reduce_generic`, entries `arg_reduce__{type}_{min|max}`) and a transform
//! fused into the reduction (`transform_reduce_generic`, `transform_reduce__{type}_{product|square}_sum`),
//! and many reductions in one launch over CSR offsets or the rows of a matrix, for any fold
//! (`collective::fold`: sum, min, max, argmin, argmax): `segmented_warp_generic` (a warp per
//! segment), `segmented_tiles_generic` (blocks in proportion to each segment's length) and
//! `segmented_rows_generic` (a block per aligned row of a matrix).
//!
//! Every kernel of this family turns `n` inputs into one partial sum per block, written
//! to `g_odata[blockIdx.x]`; the host adds the partials (or, for the single-pass kernels,
//! a last block does it on the device). Each file teaches one idea and says which problem
//! of the previous kernel it fixes. What several kernels share (the per-thread loads, the
//! warp sums, the block reduction and the trees) lives in [`crate::collective`]; no kernel
//! file imports from another.
//!
//! Each kernel with static shared memory exports its size next to it
//! (`<KERNEL>_SHARED_BYTES`, e.g. [`WARP_SHUFFLE_SHARED_BYTES`]): the host's registry states
//! the kernel's shared memory with it, and `tests/ptx.rs` checks it against `ptxas -v`.

/// Elements each thread adds in registers before the block reduction (`warp_shuffle`,
/// `redux`): eight, the unrolling factor of the global-memory family's best kernels.
pub const ITEMS_PER_THREAD: usize = 8;

// Chapter 3: global memory.
mod complete_unroll;
mod complete_unroll_warps8;
mod interleaved;
mod neighbored;
mod neighbored_less;
mod neighbored_modulo;
mod unroll2;
mod unroll4;
mod unroll8;
mod unroll_warps8;

// Chapter 5: shared memory.
mod gmem;
mod smem;
mod smem_unroll4;
mod smem_unroll4_dyn;

// Modern: warp shuffles, redux.sync, grid-stride loops, vector loads, single pass. A generic
// kernel's file is a public module: its instantiations are modules in it, one per type and
// operator (`warp_shuffle::f32::max`, made by `typed_kernel!` and its kin).
/// `arg_reduce`: its generic body and its instantiations `arg_reduce::{type}::{min|max}`.
pub mod arg_reduce;
/// `atomic_accumulate`: the `i32` sum, the generic body and its instantiations
/// `atomic_accumulate::{type}::{op}`.
pub mod atomic_accumulate;
mod atomic_accumulate_to_host;
mod grid_stride;

// Nested reduction (dynamic parallelism). Their PTX needs the device runtime (libcudadevrt) at
// link time, so they are not in the module every other kernel loads from: the nvptx build has
// them only with the `device-runtime` feature (their own module, runtime/build.rs).
#[cfg(any(not(target_arch = "nvptx64"), feature = "device-runtime"))]
mod recursive_reduce;
#[cfg(any(not(target_arch = "nvptx64"), feature = "device-runtime"))]
mod recursive_reduce2;
#[cfg(any(not(target_arch = "nvptx64"), feature = "device-runtime"))]
mod recursive_reduce_nosync;
#[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_80"))]
mod redux;
/// `segmented_rows`: its generic body and its instantiations `segmented_rows::{type}::{fold}`.
pub mod segmented_rows;
/// `segmented_tiles`: its generic body and its instantiations `segmented_tiles::{type}::{fold}`.
pub mod segmented_tiles;
/// `segmented_warp`: its generic body and its instantiations `segmented_warp::{type}::{fold}`.
pub mod segmented_warp;
/// `single_pass`: the `i32` sum, the generic body and its instantiations
/// `single_pass::{type}::{op}`.
pub mod single_pass;
/// `transform_reduce`: its generic body and its instantiations
/// `transform_reduce::{type}::{transform}::{op}`.
pub mod transform_reduce;
/// `vector_loads`: the `i32` sum, the generic body and its instantiations
/// `vector_loads::{type}::{op}`.
pub mod vector_loads;
/// `warp_shuffle`: the `i32` sum, the generic body and its instantiations
/// `warp_shuffle::{type}::{op}`.
pub mod warp_shuffle;

pub use complete_unroll::{
    complete_unroll, complete_unroll_32, complete_unroll_64, complete_unroll_128, complete_unroll_256,
    complete_unroll_512, complete_unroll_1024,
};
pub use complete_unroll_warps8::complete_unroll_warps8;
pub use interleaved::interleaved;
pub use neighbored::neighbored;
pub use neighbored_less::neighbored_less;
pub use neighbored_modulo::neighbored_modulo;
pub use unroll_warps8::unroll_warps8;
pub use unroll2::unroll2;
pub use unroll4::unroll4;
pub use unroll8::unroll8;

pub use gmem::gmem;
pub use smem::{SMEM_SHARED_BYTES, smem};
pub use smem_unroll4::{SMEM_UNROLL4_SHARED_BYTES, smem_unroll4};
pub use smem_unroll4_dyn::smem_unroll4_dyn;

pub use arg_reduce::{arg_reduce_generic, arg_reduce_shared_bytes};
pub use atomic_accumulate::{
    ATOMIC_ACCUMULATE_ITEMS_PER_TRIP, ATOMIC_ACCUMULATE_LOADS, ATOMIC_ACCUMULATE_SHARED_BYTES, atomic_accumulate,
    atomic_accumulate_generic, atomic_accumulate_shared_bytes,
};
pub use atomic_accumulate_to_host::atomic_accumulate_to_host;
pub use grid_stride::{GRID_STRIDE_SHARED_BYTES, grid_stride};
#[cfg(any(not(target_arch = "nvptx64"), feature = "device-runtime"))]
pub use recursive_reduce::recursive_reduce;
#[cfg(any(not(target_arch = "nvptx64"), feature = "device-runtime"))]
pub use recursive_reduce_nosync::recursive_reduce_nosync;
#[cfg(any(not(target_arch = "nvptx64"), feature = "device-runtime"))]
pub use recursive_reduce2::recursive_reduce2;
#[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_80"))]
pub use redux::{REDUX_SHARED_BYTES, redux};
pub use segmented_rows::{segmented_rows_generic, segmented_rows_shared_bytes};
pub use segmented_tiles::{segmented_tiles_generic, segmented_tiles_shared_bytes};
pub use segmented_warp::segmented_warp_generic;
pub use single_pass::{SINGLE_PASS_SHARED_BYTES, single_pass, single_pass_generic, single_pass_shared_bytes};
pub use transform_reduce::{transform_reduce_generic, transform_reduce_shared_bytes};
pub use vector_loads::{VECTOR_LOADS_SHARED_BYTES, vector_loads, vector_loads_generic, vector_loads_shared_bytes};
pub use warp_shuffle::{WARP_SHUFFLE_SHARED_BYTES, warp_shuffle, warp_shuffle_generic, warp_shuffle_shared_bytes};

/// The per-thread loads of `vector_loads`, `single_pass` and `atomic_accumulate` (in
/// [`crate::collective::thread`]), re-exported where the host has always found them.
pub use crate::collective::thread::{ITEMS_PER_TRIP, V4Split, split_for_v4};
