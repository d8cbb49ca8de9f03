//! Warp-collective operations: shuffles, warp barrier, votes, and `redux.sync`.
//!
//! Since Volta, the threads of a warp are scheduled independently: lanes of one warp may
//! run apart and meet again only where the code says so. Every operation here therefore
//! takes a `mask` naming the lanes that take part; the CUDA C++ Programming Guide requires
//! that "all non-exited threads named in mask must execute the same intrinsic with the
//! same mask, or the result is undefined". The emulator reports a lane of the mask that
//! never arrives (it exited, or waits at another operation).
//!
//! Shuffled values are 32-bit words ([`Word`]: `i32`, `u32`, `f32`) or 64-bit values (`i64`,
//! `u64`, `f64`), which cross lanes as two 32-bit halves, two `shfl.sync` instructions, as
//! CUDA C's `__shfl_down_sync(unsigned, long long, …)` does ([`Shuffle`]).

#[cfg(not(target_arch = "nvptx64"))]
use super::emu::{ReduxOp, ShflMode, VoteMode, WarpOp, hooks};

/// A 32-bit value that can cross lanes.
pub trait Word: Copy {
    /// The value's bits.
    fn to_word(self) -> u32;
    /// The value back from its bits.
    fn from_word(w: u32) -> Self;
}

impl Word for u32 {
    #[inline(always)]
    fn to_word(self) -> u32 {
        self
    }
    #[inline(always)]
    fn from_word(w: u32) -> Self {
        w
    }
}

impl Word for i32 {
    #[inline(always)]
    fn to_word(self) -> u32 {
        self as u32
    }
    #[inline(always)]
    fn from_word(w: u32) -> Self {
        w as i32
    }
}

impl Word for f32 {
    #[inline(always)]
    fn to_word(self) -> u32 {
        self.to_bits()
    }
    #[inline(always)]
    fn from_word(w: u32) -> Self {
        f32::from_bits(w)
    }
}

/// A value that can cross lanes in a shuffle: one 32-bit word, or two (the low half first).
pub trait Shuffle: Copy {
    /// 1 for 32-bit values, 2 for 64-bit values: the `shfl.sync` instructions one shuffle takes.
    const WORDS: u32;
    /// The value's bits as `[low, high]` 32-bit halves (`high` is 0 for a 32-bit value).
    fn to_halves(self) -> [u32; 2];
    /// The value back from its halves.
    fn from_halves(h: [u32; 2]) -> Self;
}

macro_rules! shuffle_32 {
    ($($t:ty),*) => {$(
        impl Shuffle for $t {
            const WORDS: u32 = 1;
            #[inline(always)]
            fn to_halves(self) -> [u32; 2] {
                [self.to_word(), 0]
            }
            #[inline(always)]
            fn from_halves(h: [u32; 2]) -> Self {
                Self::from_word(h[0])
            }
        }
    )*};
}
shuffle_32!(u32, i32, f32);

macro_rules! shuffle_64 {
    ($($t:ty => $bits:expr, $back:expr);*) => {$(
        impl Shuffle for $t {
            const WORDS: u32 = 2;
            #[inline(always)]
            fn to_halves(self) -> [u32; 2] {
                let b: u64 = $bits(self);
                [b as u32, (b >> 32) as u32]
            }
            #[inline(always)]
            fn from_halves(h: [u32; 2]) -> Self {
                $back(h[0] as u64 | (h[1] as u64) << 32)
            }
        }
    )*};
}
// The three 64-bit types: their bits, and back.
#[rustfmt::skip]
shuffle_64!(u64 => |v: u64| v, |b: u64| b; i64 => |v: i64| v as u64, |b: u64| b as i64; f64 => f64::to_bits, f64::from_bits);

#[cfg(target_arch = "nvptx64")]
#[allow(improper_ctypes)]
unsafe extern "C" {
    #[link_name = "llvm.nvvm.shfl.sync.idx.i32"]
    fn nvvm_shfl_idx(mask: u32, value: u32, b: u32, c: u32) -> u32;
    #[link_name = "llvm.nvvm.shfl.sync.up.i32"]
    fn nvvm_shfl_up(mask: u32, value: u32, b: u32, c: u32) -> u32;
    #[link_name = "llvm.nvvm.shfl.sync.down.i32"]
    fn nvvm_shfl_down(mask: u32, value: u32, b: u32, c: u32) -> u32;
    #[link_name = "llvm.nvvm.shfl.sync.bfly.i32"]
    fn nvvm_shfl_bfly(mask: u32, value: u32, b: u32, c: u32) -> u32;
    #[link_name = "llvm.nvvm.bar.warp.sync"]
    fn nvvm_bar_warp_sync(mask: u32);
    #[link_name = "llvm.nvvm.vote.ballot.sync"]
    fn nvvm_vote_ballot(mask: u32, pred: bool) -> u32;
    #[link_name = "llvm.nvvm.vote.all.sync"]
    fn nvvm_vote_all(mask: u32, pred: bool) -> bool;
    #[link_name = "llvm.nvvm.vote.any.sync"]
    fn nvvm_vote_any(mask: u32, pred: bool) -> bool;
}

#[cfg(all(target_arch = "nvptx64", target_feature = "sm_80"))]
unsafe extern "C" {
    #[link_name = "llvm.nvvm.redux.sync.add"]
    fn nvvm_redux_add(value: u32, mask: u32) -> u32;
    #[link_name = "llvm.nvvm.redux.sync.min"]
    fn nvvm_redux_min(value: u32, mask: u32) -> u32;
    #[link_name = "llvm.nvvm.redux.sync.max"]
    fn nvvm_redux_max(value: u32, mask: u32) -> u32;
    #[link_name = "llvm.nvvm.redux.sync.umin"]
    fn nvvm_redux_umin(value: u32, mask: u32) -> u32;
    #[link_name = "llvm.nvvm.redux.sync.umax"]
    fn nvvm_redux_umax(value: u32, mask: u32) -> u32;
}

/// PTX `c` operand for a full-warp shuffle that clamps at lane 31 (idx, down, xor).
const CLAMP_HIGH: u32 = 0x1f;
/// PTX `c` operand for a full-warp shuffle up (clamps at lane 0).
const CLAMP_LOW: u32 = 0;

macro_rules! shuffle {
    ($(#[$m:meta])* $name:ident, $intrinsic:ident, $mode:ident, $c:expr, $b:ident) => {
        $(#[$m])*
        ///
        /// A 64-bit value takes two shuffles, one per 32-bit half, with the same lanes.
        #[inline(always)]
        #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
        pub fn $name<T: Shuffle>(mask: u32, value: T, $b: u32) -> T {
            let [low, high] = value.to_halves();
            #[cfg(target_arch = "nvptx64")]
            // SAFETY: shfl.sync reads only registers; the mask rule in the module docs is a
            // correctness rule, not a memory-safety one.
            let one = |half: u32| unsafe { $intrinsic(mask, half, $b, $c) };
            #[cfg(not(target_arch = "nvptx64"))]
            let site = core::panic::Location::caller();
            #[cfg(not(target_arch = "nvptx64"))]
            let one = |half: u32| {
                hooks().warp_op(mask, WarpOp::Shfl { mode: ShflMode::$mode, value: half, b: $b, c: $c }, site)
            };
            let low = one(low);
            let high = if T::WORDS == 2 { one(high) } else { 0 };
            T::from_halves([low, high])
        }
    };
}

shuffle!(
    /// `__shfl_sync(mask, value, src_lane)`: every lane reads `value` from `src_lane`.
    shfl_sync, nvvm_shfl_idx, Idx, CLAMP_HIGH, src_lane);
shuffle!(
    /// `__shfl_up_sync(mask, value, delta)`: lane `i` reads lane `i - delta`; lanes below
    /// `delta` keep their own value.
    shfl_up_sync, nvvm_shfl_up, Up, CLAMP_LOW, delta);
shuffle!(
    /// `__shfl_down_sync(mask, value, delta)`: lane `i` reads lane `i + delta`; lanes at or
    /// past `32 - delta` keep their own value.
    shfl_down_sync, nvvm_shfl_down, Down, CLAMP_HIGH, delta);
shuffle!(
    /// `__shfl_xor_sync(mask, value, lane_mask)`: lane `i` reads lane `i ^ lane_mask` (the
    /// butterfly exchange).
    shfl_xor_sync, nvvm_shfl_bfly, Bfly, CLAMP_HIGH, lane_mask);

/// `__syncwarp(mask)`: the lanes of `mask` wait for each other, and their shared and global
/// memory accesses before it are visible to each other after it.
#[inline(always)]
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
pub fn sync_warp(mask: u32) {
    #[cfg(target_arch = "nvptx64")]
    // SAFETY: bar.warp.sync has no memory-safety preconditions.
    unsafe {
        nvvm_bar_warp_sync(mask)
    }
    #[cfg(not(target_arch = "nvptx64"))]
    {
        hooks().warp_op(mask, WarpOp::Sync, core::panic::Location::caller());
    }
}

/// `__ballot_sync(mask, pred)`: bit `i` is set when lane `i` of `mask` has `pred` true.
#[inline(always)]
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
pub fn ballot_sync(mask: u32, pred: bool) -> u32 {
    #[cfg(target_arch = "nvptx64")]
    // SAFETY: vote.sync reads only registers.
    unsafe {
        nvvm_vote_ballot(mask, pred)
    }
    #[cfg(not(target_arch = "nvptx64"))]
    hooks().warp_op(mask, WarpOp::Vote { mode: VoteMode::Ballot, pred }, core::panic::Location::caller())
}

/// `__all_sync(mask, pred)`: true when `pred` holds on every lane of `mask`.
#[inline(always)]
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
pub fn all_sync(mask: u32, pred: bool) -> bool {
    #[cfg(target_arch = "nvptx64")]
    // SAFETY: vote.sync reads only registers.
    unsafe {
        nvvm_vote_all(mask, pred)
    }
    #[cfg(not(target_arch = "nvptx64"))]
    {
        hooks().warp_op(mask, WarpOp::Vote { mode: VoteMode::All, pred }, core::panic::Location::caller()) != 0
    }
}

/// `__any_sync(mask, pred)`: true when `pred` holds on some lane of `mask`.
#[inline(always)]
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
pub fn any_sync(mask: u32, pred: bool) -> bool {
    #[cfg(target_arch = "nvptx64")]
    // SAFETY: vote.sync reads only registers.
    unsafe {
        nvvm_vote_any(mask, pred)
    }
    #[cfg(not(target_arch = "nvptx64"))]
    {
        hooks().warp_op(mask, WarpOp::Vote { mode: VoteMode::Any, pred }, core::panic::Location::caller()) != 0
    }
}

macro_rules! redux {
    ($(#[$m:meta])* $name:ident, $ty:ty, $intrinsic:ident, $op:ident) => {
        $(#[$m])*
        ///
        /// Needs sm_80 or newer: in the PTX built for older GPUs this function does not exist,
        /// so a kernel that calls it must be compiled only where
        /// `any(not(target_arch = "nvptx64"), target_feature = "sm_80")`.
        #[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_80"))]
        #[inline(always)]
        #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
        pub fn $name(mask: u32, value: $ty) -> $ty {
            #[cfg(target_arch = "nvptx64")]
            // SAFETY: redux.sync reads only registers; this is compiled for sm_80+ only.
            let w = unsafe { $intrinsic(value as u32, mask) };
            #[cfg(not(target_arch = "nvptx64"))]
            let w = hooks().warp_op(
                mask,
                WarpOp::Redux { op: ReduxOp::$op, value: value as u32 },
                core::panic::Location::caller(),
            );
            w as $ty
        }
    };
}

redux!(
    /// `__reduce_add_sync(mask, value)` (PTX `redux.sync.add.s32`): the wrapping sum of
    /// `value` over the lanes of `mask`, returned to each of them. One instruction instead of
    /// five shuffle-and-add steps.
    reduce_add_sync, i32, nvvm_redux_add, Add);
redux!(
    /// `__reduce_min_sync(mask, value)` for `i32` (PTX `redux.sync.min.s32`).
    reduce_min_sync, i32, nvvm_redux_min, MinS32);
redux!(
    /// `__reduce_max_sync(mask, value)` for `i32` (PTX `redux.sync.max.s32`).
    reduce_max_sync, i32, nvvm_redux_max, MaxS32);
redux!(
    /// `__reduce_add_sync(mask, value)` for `unsigned` (PTX `redux.sync.add.u32`: the same
    /// wrapping sum as for `i32`, on the same bits).
    reduce_add_sync_u32, u32, nvvm_redux_add, Add);
redux!(
    /// `__reduce_min_sync(mask, value)` for `unsigned` (PTX `redux.sync.min.u32`).
    reduce_min_sync_u32, u32, nvvm_redux_umin, MinU32);
redux!(
    /// `__reduce_max_sync(mask, value)` for `unsigned` (PTX `redux.sync.max.u32`).
    reduce_max_sync_u32, u32, nvvm_redux_umax, MaxU32);
