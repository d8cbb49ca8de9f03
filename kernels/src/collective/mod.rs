//! The collectives: the building blocks that several kernels share, in three layers, as
//! CUB's `ThreadReduce` / `WarpReduce` / `BlockReduce`.
//!
//! A kernel of [`crate::reduce`] or [`crate::sumsq`] is a lesson: one file, one idea, and the
//! problem of the previous kernel it fixes. The chapter-3 and chapter-5 lessons are written
//! out in full in their own files, as the book's kernels are: the loop, the index, the
//! unrolled loads, the rounds and the unrolled last warp are in the file that teaches them and
//! again in each later file that keeps them, so that a diff of two consecutive lessons shows
//! the fix. What stays here is what the modern kernels share: the per-thread loads, the warp
//! shuffles and the block reduction.
//!
//! | layer | who takes part | functions |
//! |---|---|---|
//! | [`thread`] | one thread, its share of the input in registers | [`thread_sum_items`](thread::thread_sum_items), [`thread_sum_v4`](thread::thread_sum_v4), [`thread_reduce_items`](thread::thread_reduce_items), [`thread_reduce_v128`](thread::thread_reduce_v128) |
//! | [`warp`] | the 32 lanes of a warp | [`warp_sum_shfl`](warp::warp_sum_shfl), [`warp_reduce_shfl`](warp::warp_reduce_shfl) |
//! | [`block`] | every thread of the block (they contain block barriers) | [`block_sum`](block::block_sum), [`block_reduce`](block::block_reduce) |
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
