//! Warp-level sums and scans: the 32 lanes of one warp combine their values in registers
//! ([`warp_sum_shfl`], [`warp_reduce_shfl`], [`warp_scan_inclusive`], and for a value with its
//! index [`warp_arg_reduce`]), or each aligned group of lanes its own ("logical warps":
//! [`logical_warp_reduce_shfl`], [`logical_warp_arg_reduce`]). (The chapter-3 kernels' unrolled
//! last warp, in memory with warp barriers, is written out in `unroll_warps8` and the kernels
//! after it.)
//!
//! `redux.sync` (sm_80+), the hardware's one-instruction warp sum, is taught and used in
//! `reduce/redux.rs` alone, so it stays there.

use crate::device::thread::lane_id;
use crate::device::warp::{shfl_down_sync, shfl_up_sync};
use crate::device::{FULL_MASK, WARP_SIZE};
use crate::types::{Arg, Element, Extreme, Operator};

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
    logical_warp_reduce_shfl::<T, O>(value, WARP_SIZE)
}

/// [`warp_reduce_shfl`] over **logical warps** of `lanes` lanes: every aligned group of `lanes`
/// lanes (`0..lanes`, `lanes..2·lanes`, …) combines its own values, complete in the group's
/// **first lane** (CUB's `WarpReduce<T, LOGICAL_WARP_THREADS>::Reduce`), in `log2(lanes)`
/// `shfl.down` steps, offsets `lanes / 2`, …, 1. A group's first lane `g` only ever collects
/// lanes `g..g + 2·offset`, which stay in its group, so the groups never mix though every lane
/// of the warp shuffles together:
///
/// ```text
///  lanes = 8    offset 4   lane 8g+i ⊕= lane 8g+i+4     offset 2, 1   lane 8g holds its 8
/// ```
///
/// `lanes` is a power of two in 1..=32 (1: each lane its own value), the same in every lane.
/// Every lane of the warp must call it (the mask is the full warp).
#[inline(always)]
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
pub fn logical_warp_reduce_shfl<T: Element, O: Operator<T> + ?Sized>(value: T, lanes: u32) -> T {
    let mut v = value;
    let mut offset = lanes / 2;
    while offset > 0 {
        // As in warp_sum_shfl: the clamped reads of the high lanes never reach lane 0.
        v = O::combine(v, shfl_down_sync(FULL_MASK, v, offset));
        offset /= 2;
    }
    v
}

/// The inclusive scan of `value` over the 32 lanes of the warp: lane `i` gets
/// `O::combine` of lanes `0..=i`, in lane order (CUB's `WarpScan<T>::InclusiveScan`,
/// `WARP_SCAN_SHFL`).
///
/// Five `shfl.up` steps double the distance each time (1, 2, 4, 8, 16, Hillis and Steele's
/// scan in registers); a lane whose partner would be below lane 0 keeps its value:
///
/// ```text
///  offset 1    lane i ⊕= lane i-1 (i ≥ 1)      each lane holds 2 values' result
///  offset 2    lane i ⊕= lane i-2 (i ≥ 2)      … 4
///  offset 4, 8, 16                              lane i holds lanes 0..=i
/// ```
///
/// Every lane of the warp must call it (the mask is the full warp).
#[inline(always)]
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
pub fn warp_scan_inclusive<T: Element, O: Operator<T> + ?Sized>(value: T) -> T {
    let lane = lane_id() % WARP_SIZE;
    let mut v = value;
    let mut offset = 1;
    while offset < WARP_SIZE {
        let below = shfl_up_sync(FULL_MASK, v, offset);
        if lane >= offset {
            v = O::combine(below, v);
        }
        offset *= 2;
    }
    v
}

/// [`warp_reduce_shfl`] for a value and its index (an argmin or argmax): [`Arg::combine`] over
/// the 32 lanes, complete in **lane 0**, in five `shfl.down` steps; each step shuffles the value
/// (one or two 32-bit words) and the index. The winner is the extreme with the lowest index,
/// whatever the lanes' order (CUB's `WarpReduce<KeyValuePair<int, T>>::Reduce` with
/// `ArgMin`/`ArgMax`).
///
/// Every lane of the warp must call it (the mask is the full warp).
#[inline(always)]
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
pub fn warp_arg_reduce<T: Element, O: Extreme<T>>(arg: Arg<T>) -> Arg<T> {
    logical_warp_arg_reduce::<T, O>(arg, WARP_SIZE)
}

/// [`warp_arg_reduce`] over logical warps of `lanes` lanes, complete in each group's first lane
/// (as [`logical_warp_reduce_shfl`]; CUB's `WarpReduce<KeyValuePair<int, T>,
/// LOGICAL_WARP_THREADS>`). `lanes` is a power of two in 1..=32, the same in every lane; every
/// lane of the warp must call it.
#[inline(always)]
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
pub fn logical_warp_arg_reduce<T: Element, O: Extreme<T>>(arg: Arg<T>, lanes: u32) -> Arg<T> {
    let mut a = arg;
    let mut offset = lanes / 2;
    while offset > 0 {
        // As in warp_sum_shfl: the clamped reads of the high lanes never reach lane 0.
        let value = shfl_down_sync(FULL_MASK, a.value, offset);
        let index = shfl_down_sync(FULL_MASK, a.index, offset);
        a = a.combine::<O>(Arg { value, index });
        offset /= 2;
    }
    a
}
