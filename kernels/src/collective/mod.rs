//! The collectives: the building blocks that several kernels share, in three layers, as
//! CUB's `ThreadReduce` / `WarpReduce` / `BlockReduce`.
//!
//! A kernel of [`crate::reduce`] or [`crate::sumsq`] is a lesson: one file, one idea, and the
//! problem of the previous kernel it fixes. What a later lesson reuses from an earlier one
//! lives here, never in the earlier lesson's file, so no lesson imports from another. A
//! lesson that *teaches* a collective may keep its own explained copy of it (the chapter-3
//! trees are written out where they are introduced); the kernels that come after it call the
//! version here.
//!
//! | layer | who takes part | functions |
//! |---|---|---|
//! | [`thread`] | one thread, its share of the input in registers | [`fold_blocks`](thread::fold_blocks), [`thread_sum_items`](thread::thread_sum_items), [`thread_sum_stripe4`](thread::thread_sum_stripe4), [`thread_sum_v4`](thread::thread_sum_v4) |
//! | [`warp`] | the 32 lanes of a warp | [`warp_sum_shfl`](warp::warp_sum_shfl), [`last_warp`](warp::last_warp) |
//! | [`block`] | every thread of the block (they contain block barriers) | [`block_sum`](block::block_sum), [`add_pair`](block::add_pair), [`interleaved_tree`](block::interleaved_tree), [`shared_tree`](block::shared_tree) |
//!
//! Every function is `#[inline(always)]`: a collective is a piece of its kernel's code, not
//! a call, so the PTX is what it would be with the code written out in the kernel.
//!
//! Shared memory stays declared in the kernel (`static_shared!` names the array in the PTX
//! after the kernel); a block collective that needs some says how much with a constant
//! ([`block::BLOCK_SUM_SLOTS`], [`block::BLOCK_SUM_SMEM_BYTES`]), which the kernel uses to
//! size its array and the host's registry to state the kernel's shared memory.

pub mod block;
pub mod thread;
pub mod warp;
