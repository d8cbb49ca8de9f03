//! Warp-level sums: the 32 lanes of one warp add their values, in registers
//! ([`warp_sum_shfl`]) or in memory with warp barriers ([`last_warp`]).
//!
//! `redux.sync` (sm_80+), the hardware's one-instruction warp sum, is taught and used in
//! `reduce/redux.rs` alone, so it stays there.

use super::block::add_pair;
use crate::device::global::GlobalMut;
use crate::device::warp::{shfl_down_sync, sync_warp};
use crate::device::{FULL_MASK, WARP_SIZE};
use crate::types::{Element, Operator};

/// The warp step of `warp_shuffle` and of every kernel after it: the wrapping sum of `value`
/// over the 32 lanes of the warp, complete in **lane 0** (the other lanes end with partial
/// sums).
///
/// Five `shfl.down` steps halve the distance each time; every lane adds the value of the
/// lane `offset` above it, so lane 0 collects the whole warp:
///
/// ```text
///  offset 16   lane i += lane i+16      lanes 0..15 hold sums of 2
///  offset  8   lane i += lane i+8       lanes 0..7  hold sums of 4
///  offset  4, 2, 1                      lane 0 holds the sum of 32
/// ```
///
/// Every lane of the warp must call it (the mask is the full warp).
#[inline(always)]
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
pub fn warp_sum_shfl(value: i32) -> i32 {
    let mut v = value;
    let mut offset = WARP_SIZE / 2;
    while offset > 0 {
        // Lanes at or past 32 - offset read their own value back (clamped); lane 0's sum
        // never includes those reads, because lane i only ever collects lanes i..i+2*offset.
        v = v.wrapping_add(shfl_down_sync(FULL_MASK, v, offset));
        offset /= 2;
    }
    v
}

/// [`warp_sum_shfl`] for any element type and operator: `O::combine` over the 32 lanes of
/// the warp, complete in **lane 0**, in five `shfl.down` steps (offsets 16, 8, 4, 2, 1). A
/// 64-bit value crosses lanes as two 32-bit halves, so each step is two shuffles for `i64`,
/// `u64` and `f64`. The order of the combines is a fixed tree (lane 0 combines with lane 16's
/// partial, …), the same on every run: a float sum of one warp is deterministic.
///
/// Every lane of the warp must call it (the mask is the full warp).
#[inline(always)]
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
pub fn warp_reduce_shfl<T: Element, O: Operator<T> + ?Sized>(value: T) -> T {
    let mut v = value;
    let mut offset = WARP_SIZE / 2;
    while offset > 0 {
        // As in warp_sum_shfl: the clamped reads of the high lanes never reach lane 0.
        v = O::combine(v, shfl_down_sync(FULL_MASK, v, offset));
        offset /= 2;
    }
    v
}

/// The last six rounds of the interleaved tree (strides 32, 16, 8, 4, 2, 1), done by warp 0
/// alone with warp barriers (`__syncwarp`) instead of block barriers. Afterwards `idata[0]`
/// holds the sum of `idata[0 .. len)`. Taught by `unroll_warps8`; also the end of
/// `complete_unroll_warps8` and `complete_unroll`.
///
/// Why a `sync_warp` between rounds, and why one is enough: round `s` writes the slots
/// `[0, s)` and reads `[s, 2s)` (see [`add_pair`]), so inside a round nothing is both read
/// and written. Round `s/2` reads `[s/2, s)`, which lanes `s/2 .. s` wrote in round `s`:
/// other lanes, so lane `t` must not read before they have written, and their writes must
/// be visible to it. `__syncwarp` gives both: every lane of the mask waits there, and their
/// memory accesses before it are visible to each other after it. (The book's version has
/// all 32 lanes add in every round, so lane `t + 16` rewrites the slot lane `t` reads in
/// the same round; that form needs a sync between each round's reads and its writes too.)
///
/// The CPU emulator runs each lane up to its next warp or block operation, so without these
/// syncs lane 0 would do all six rounds before lane 1 starts and the sums come out wrong
/// there too; but a passing emulator run is no proof of race freedom — the argument above
/// is.
///
/// # Safety
/// Called by all 32 threads of warp 0 (`tid < 32`) and by no other thread; `idata` holds
/// `len ≤ blockDim` elements (so `idata[tid + 32]` is read only where it is a slot of this
/// block's tree); a block barrier separates the last writes of the other warps to
/// `idata[0 .. 64)` from this call.
#[inline(always)]
pub unsafe fn last_warp(idata: GlobalMut<i32>, tid: u32, len: u32) {
    // SAFETY: the caller's contract, and the `sync_warp` between two rounds is the barrier
    // `add_pair` asks for (only warp 0 reads or writes in these rounds).
    unsafe {
        add_pair(idata, tid, 32, len);
        sync_warp(FULL_MASK);
        add_pair(idata, tid, 16, len);
        sync_warp(FULL_MASK);
        add_pair(idata, tid, 8, len);
        sync_warp(FULL_MASK);
        add_pair(idata, tid, 4, len);
        sync_warp(FULL_MASK);
        add_pair(idata, tid, 2, len);
        sync_warp(FULL_MASK);
        add_pair(idata, tid, 1, len);
    }
}
