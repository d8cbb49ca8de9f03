//! The collective layer: what several kernels share, in three layers, as CUB's
//! `ThreadReduce` / `WarpReduce` / `BlockReduce` (and `WarpScan` / `BlockScan`), and the element
//! types and operators they combine ([`types`]).
//!
//! A kernel crate, this project's (`reduce-scan-kernels`) or a user's own, depends on this
//! crate for its collectives and reaches the device layer through it ([`device`], the crate
//! `reduce-scan-device`, re-exported): `use reduce_scan_collective::prelude::*;` brings in
//! everything a kernel needs. The project's own lessons are one file each, and write out in that
//! file what their lesson teaches (the loop, the index, the unrolled loads, the rounds and the
//! unrolled last warp), as the book's kernels do; what stays here is what the modern kernels
//! share: the per-thread loads, the warp shuffles, the block reduction and scan.
//!
//! | layer | who takes part | functions |
//! |---|---|---|
//! | [`thread`] | one thread, its share of the input in registers | [`thread_sum_items`](thread::thread_sum_items), [`thread_sum_v4`](thread::thread_sum_v4), [`thread_reduce_items`](thread::thread_reduce_items), [`thread_reduce_v128`](thread::thread_reduce_v128) |
//! | [`warp`] | the 32 lanes of a warp | [`warp_sum_shfl`](warp::warp_sum_shfl), [`warp_reduce_shfl`](warp::warp_reduce_shfl), [`warp_scan_inclusive`](warp::warp_scan_inclusive) |
//! | [`block`] | every thread of the block (they contain block barriers) | [`block_sum`](block::block_sum), [`block_reduce`](block::block_reduce), [`block_arg_reduce`](block::block_arg_reduce), [`BlockReduce`](block::BlockReduce), [`BlockScan`](block::BlockScan), [`is_last_block`](block::is_last_block) |
//!
//! [`fold`] makes "what a thread keeps" an axis of its own — a plain value, or a value and its
//! index (argmin, argmax) — over the three layers, so one kernel body serves both.
//!
//! The CUDA C and CUB name of each, and what it compiles to:
//!
//! | here | CUB / CUDA C | on the GPU |
//! |---|---|---|
//! | [`thread::thread_reduce_items`] | `cub::ThreadReduce` over `BlockLoad`'s striped items | `ITEMS` coalesced `ld.global` per thread |
//! | [`thread::thread_reduce_v128`] | `cub::ThreadReduce` over `BlockLoad<…, BLOCK_LOAD_VECTORIZE>` | `ld.global.v4` (128-bit) per step |
//! | [`warp::warp_reduce_shfl`] | `cub::WarpReduce<T>::Reduce` (`WARP_REDUCE_SHFL`) | five `shfl.sync.down` steps |
//! | [`warp::warp_scan_inclusive`] | `cub::WarpScan<T>::InclusiveScan` (`WARP_SCAN_SHFL`) | five `shfl.sync.up` steps |
//! | [`block::BlockReduce`] | `cub::BlockReduce<T, THREADS, BLOCK_REDUCE_WARP_REDUCTIONS>` and its `TempStorage` | warp reductions, one shared slot per warp, `bar.sync` |
//! | [`block::BlockScan`] | `cub::BlockScan<T, THREADS, BLOCK_SCAN_WARP_SCANS>` and its `TempStorage` | warp scans, one shared slot per warp, `bar.sync` |
//! | [`types::Sum`], [`types::Min`], [`types::Max`] | `cuda::std::plus<>`, `cuda::minimum<>`, `cuda::maximum<>` | `add`, `min`/`max` (floats: NaN-propagating) |
//!
//! Every function is `#[inline(always)]`: a collective is a piece of its kernel's code, not
//! a call, so the PTX is what it would be with the code written out in the kernel.
//!
//! Shared memory stays declared in the kernel (`static_shared!` names the array in the PTX
//! after the kernel); a block collective that needs some says how much with a constant
//! ([`block::BLOCK_SUM_SLOTS`], [`block::BLOCK_SUM_SMEM_BYTES`]), which the kernel uses to
//! size its array and the host's registry to state the kernel's shared memory.

#![no_std]

#[cfg(test)]
extern crate std;

pub mod arg;
pub mod block;
pub mod fold;
pub mod thread;
pub mod types;
pub mod warp;

/// The device layer (crate `reduce-scan-device`): indices, barriers, warps, shared and global
/// memory, atomics, and the [`kernel!`](device::kernel!) macro.
pub use device;
pub use device::{kernel, static_shared};

/// What a kernel crate needs, in one `use`: the device layer's prelude (indices, barriers,
/// buffers, [`kernel!`](device::kernel!), [`static_shared!`](device::static_shared)), the
/// element types and operators, and the block and warp collectives.
pub mod prelude {
    pub use crate::block::{BLOCK_SLOTS, BlockReduce, BlockScan, BlockSlots};
    pub use crate::block_slots;
    pub use crate::types::{Element, Max, Min, Operator, Sum};
    pub use crate::warp::{warp_reduce_shfl, warp_scan_inclusive};
    pub use device::prelude::*;
}
