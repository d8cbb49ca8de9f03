//! Element types and operators: what a generic reduction reduces, and with what.
//!
//! * [`Element`] — the six element types `i32`, `u32`, `i64`, `u64`, `f32`, `f64`: their
//!   arithmetic as the GPU does it, how they cross lanes ([`Shuffle`]: 64-bit values as two
//!   32-bit halves), how many fit in one 128-bit load, and their fire-and-forget atomics.
//! * [`Operator`] — [`Sum`], [`Min`], [`Max`]: the identity, the combine, the atomic that
//!   folds a block's result into the answer, and the warp-level step.
//! * [`Extreme`] and [`Arg`] — [`Min`] and [`Max`] as the extreme whose *position* is asked
//!   (argmin, argmax): a value and its index, ties to the lowest index, NaN the extreme.
//! * [`Transform`] — [`Product`] (`a·b`) and [`Square`] (`a²`): what a transform-reduce
//!   applies to each element (or pair of elements) before the operator combines them, an axis
//!   of its own beside the operator.
//!
//! Kernels are written once, generic over `T: Element` and `O: Operator<T>`, and instantiated
//! by the kernels crate's `typed_kernel!` as one PTX entry per type and operator, named
//! `{kernel}__{type}_{op}` (`warp_shuffle__f32_max`, the module `warp_shuffle::f32::max`).
//!
//! # What each operator computes
//!
//! * **Sum of integers** wraps (two's complement, modulo 2^32 or 2^64), as the GPU's `add`
//!   does: the result is exact modulo 2^bits, whatever the order of the adds.
//! * **Sum of floats** rounds each add to nearest (IEEE 754, no flush to zero). Float addition
//!   is not associative, so the result depends on the order of the adds (the tree of the
//!   kernel, and for the atomic finish the order the blocks reach L2); it is within the
//!   bound `reduce_scan::cpu::float_sum_bound` states of the exact sum.
//! * **Min and max of integers** are exact.
//! * **Min and max of floats** are exact and independent of the order, because they are
//!   defined as a min/max in a total order:
//!   * **NaN propagates**: if any element is NaN the result is NaN — for max the positive
//!     quiet NaN (`f32` bits `0x7fc0_0000`, `f64` `0x7ff8_0000_0000_0000`), for min the
//!     negative one (`0xffc0_0000`, `0xfff8_…`), whatever the payloads of the NaNs in the
//!     input. (Those are the two NaNs the atomic finish's integer trick can make win:
//!     [`crate::device::atomic`], "Float min and max".)
//!   * **−0.0 < +0.0**: max(−0.0, +0.0) = +0.0 and min(−0.0, +0.0) = −0.0.
//!
//!   This differs from CUDA C's `fminf`/`fmaxf` (and PTX `min.f32` without `.NaN`), which
//!   return the non-NaN operand, and from IEEE 754-2019 `minimumNumber`; it is IEEE 754-2019
//!   `minimum`/`maximum` with one canonical NaN.
//!
//!   **How it compiles**: PTX `min`/`max` already order −0.0 < +0.0, so a step is that
//!   instruction ([`crate::device::math::min_f32`] and the others) beside one `setp.nan` of
//!   both operands and a `selp` of the NaN: three instructions, no branch (SASS `FMNMX`,
//!   `FSETP.NAN`, `FSEL`). The rule written out (a NaN test, an equality test for the zeros,
//!   a compare) compiled to a branch an element and kept `segmented_tiles__f32_min` at 36
//!   registers against the sum's 32; since session 57 it is 32, and the 10^4 equal segments'
//!   f32 minima take 64.4–65.2 µs on an NVIDIA H200 against 71.1–71.2 before
//!   (`docs/measurements/2026-12-01-h200/session57/`, 2 interleaved rounds).
//! * The **identity** of sum is 0, of min the largest value (`MAX`, or +inf), of max the
//!   smallest (`MIN`, or −inf): the result of an empty reduction, and what padding lanes hold.

use crate::device::global::{Global, GlobalMut};
pub use crate::device::warp::Shuffle;
use crate::device::{atomic, math};
use crate::warp::warp_reduce_shfl;

/// The positions of extremes (argmin, argmax), in a file of their own: [`Extreme`], [`Arg`],
/// [`NO_INDEX`] (`crate::arg`).
pub use crate::arg::{Arg, Extreme, NO_INDEX};

/// An element type of the generic reductions.
pub trait Element: Shuffle + PartialEq + PartialOrd + 'static {
    /// The Rust name, as in PTX entry names and on the command line (`f32`).
    const NAME: &'static str;
    /// 0: the identity of [`Sum`].
    const ZERO: Self;
    /// The smallest value (`MIN`, or −inf): the identity of [`Max`].
    const LOWEST: Self;
    /// The largest value (`MAX`, or +inf): the identity of [`Min`].
    const HIGHEST: Self;
    /// Elements in one 128-bit (16-byte) load: 4 of 32 bits, 2 of 64 bits.
    const PER_128: usize;
    /// An IEEE 754 float (`f32`, `f64`: NaNs, two zeros), or not (`false`, the default: the
    /// integers); C++'s `std::numeric_limits<T>::is_iec559`, CUB's `Traits<T>::CATEGORY ==
    /// FLOATING_POINT`. Argmin and argmax choose how a thread updates its state by it
    /// ([`Arg::update`]: a choice of speed, the answer is the same).
    const FLOAT: bool = false;

    /// `a + b` as the GPU adds: wrapping for integers, rounded to nearest for floats.
    fn plus(a: Self, b: Self) -> Self;
    /// `a × b` as the GPU multiplies: wrapping for integers (the low half of the product, CUDA
    /// C's `a * b` on unsigned types), rounded to nearest for floats (`mul.rn`, no fused add).
    fn times(a: Self, b: Self) -> Self;
    /// The smaller of `a` and `b` (floats: NaN propagates, −0.0 < +0.0; module docs).
    fn minimum(a: Self, b: Self) -> Self;
    /// The larger of `a` and `b` (floats: NaN propagates, −0.0 < +0.0; module docs).
    fn maximum(a: Self, b: Self) -> Self;
    /// The low 32 bits of the value's bits: all of them for a 32-bit type (what the packed
    /// status word of the look-back scan carries).
    fn low_bits(self) -> u32;
    /// The value whose bits are `bits`, zero-extended: the inverse of [`low_bits`](Self::low_bits)
    /// for a 32-bit type.
    fn from_low_bits(bits: u32) -> Self;
    /// `a − b` where it undoes [`plus`](Self::plus) exactly (`(a + b) − b = a`): the
    /// wrapping difference of integers. `None` for floats, whose adds round.
    fn minus_exact(a: Self, b: Self) -> Option<Self>;
    /// Element `i < PER_128` of 16 bytes loaded as four 32-bit words (little-endian: a
    /// 64-bit element is words `2i` and `2i + 1`).
    fn from_128(words: [u32; 4], i: usize) -> Self;

    /// `*ptr += value`, fire and forget (`red.add`).
    ///
    /// # Safety
    /// `ptr` is valid, aligned, global memory; every concurrent access to it is atomic.
    unsafe fn red_plus(ptr: GlobalMut<Self>, value: Self);
    /// `*ptr = minimum(*ptr, value)`, fire and forget.
    ///
    /// # Safety
    /// As for [`red_plus`](Self::red_plus).
    unsafe fn red_minimum(ptr: GlobalMut<Self>, value: Self);
    /// `*ptr = maximum(*ptr, value)`, fire and forget.
    ///
    /// # Safety
    /// As for [`red_plus`](Self::red_plus).
    unsafe fn red_maximum(ptr: GlobalMut<Self>, value: Self);
    /// Stores `value` with a relaxed atomic store at GPU scope.
    ///
    /// # Safety
    /// As for [`red_plus`](Self::red_plus).
    unsafe fn store_relaxed(ptr: GlobalMut<Self>, value: Self);

    /// Loads the value with a strong load of its width at GPU scope (`ld.relaxed.gpu.b32` or
    /// `.b64`): never a stale line of this SM's L1. How a last block reads the partials other
    /// blocks published.
    ///
    /// # Safety
    /// `ptr` is valid and aligned global memory, and its writer's store happens-before this load.
    #[inline(always)]
    #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
    unsafe fn load_relaxed(ptr: Global<Self>) -> Self {
        if Self::WORDS == 1 {
            // SAFETY: forwarded; a 32-bit element is one aligned u32.
            Self::from_halves([unsafe { atomic::load_relaxed_u32(ptr.cast()) }, 0])
        } else {
            // SAFETY: forwarded; a 64-bit element is one aligned u64.
            let w = unsafe { atomic::load_relaxed_u64(ptr.cast()) };
            Self::from_halves([w as u32, (w >> 32) as u32])
        }
    }

    /// Is it a NaN? Never, for an integer; `x != x` for a float (`setp.nan`).
    #[inline(always)]
    #[allow(clippy::eq_op)]
    fn is_nan_value(self) -> bool {
        self != self
    }

    /// The smaller of `a` and `b` as PTX `min` computes it (CUDA C's `fminf`): the same as
    /// [`minimum`](Self::minimum) where neither is a NaN, and for integers always; a float NaN
    /// operand is ignored. A chain of them and a "NaN seen" flag beside it
    /// ([`minimum_nan`](Self::minimum_nan) at the end) give [`minimum`](Self::minimum)'s
    /// answer with the NaN test off the chain ([`Operator::CARRIES_NAN`]).
    #[inline(always)]
    #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
    fn minimum_loose(a: Self, b: Self) -> Self {
        Self::minimum(a, b)
    }
    /// The larger of `a` and `b` as PTX `max` computes it (CUDA C's `fmaxf`), as
    /// [`minimum_loose`](Self::minimum_loose).
    #[inline(always)]
    #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
    fn maximum_loose(a: Self, b: Self) -> Self {
        Self::maximum(a, b)
    }
    /// `value`, or the NaN [`minimum`](Self::minimum) gives (the negative quiet NaN) where
    /// `seen`: the end of a [`minimum_loose`](Self::minimum_loose) chain. `value` for integers.
    #[inline(always)]
    fn minimum_nan(value: Self, seen: bool) -> Self {
        let _ = seen;
        value
    }
    /// `value`, or the NaN [`maximum`](Self::maximum) gives (the positive quiet NaN) where
    /// `seen`, as [`minimum_nan`](Self::minimum_nan).
    #[inline(always)]
    fn maximum_nan(value: Self, seen: bool) -> Self {
        let _ = seen;
        value
    }

    /// The sum over the 32 lanes of a full warp, complete in lane 0 (at least): five
    /// `shfl.down` steps ([`warp_reduce_shfl`]), or, for 32-bit integers on sm_80 and newer,
    /// one `redux.sync.add` that gives every lane the result.
    #[inline(always)]
    #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
    fn warp_plus(value: Self) -> Self {
        warp_reduce_shfl::<Self, Sum>(value)
    }
    /// The minimum over a full warp, as [`warp_plus`](Self::warp_plus) (`redux.sync.min`).
    #[inline(always)]
    #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
    fn warp_minimum(value: Self) -> Self {
        warp_reduce_shfl::<Self, Min>(value)
    }
    /// The maximum over a full warp, as [`warp_plus`](Self::warp_plus) (`redux.sync.max`).
    #[inline(always)]
    #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
    fn warp_maximum(value: Self) -> Self {
        warp_reduce_shfl::<Self, Max>(value)
    }
}

/// The warp steps of a 32-bit integer: one `redux.sync` each where the GPU has it (sm_80+, and
/// the emulator), the shuffle tree in the sm_70 PTX.
macro_rules! redux_warp_steps {
    ($plus:ident, $min:ident, $max:ident) => {
        redux_warp_steps!(@one warp_plus, $plus, Sum);
        redux_warp_steps!(@one warp_minimum, $min, Min);
        redux_warp_steps!(@one warp_maximum, $max, Max);
    };
    (@one $name:ident, $redux:ident, $op:ident) => {
        #[inline(always)]
        #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
        fn $name(value: Self) -> Self {
            #[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_80"))]
            {
                crate::device::warp::$redux(crate::device::FULL_MASK, value)
            }
            #[cfg(all(target_arch = "nvptx64", not(target_feature = "sm_80")))]
            {
                warp_reduce_shfl::<Self, $op>(value)
            }
        }
    };
}

/// `red_minimum` and `red_maximum` forwarded to the device layer's atomics `$min` and `$max`
/// (the integers' own; the floats' two-integer-atomic versions).
macro_rules! min_max_reds {
    ($min:path, $max:path) => {
        #[inline(always)]
        #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
        unsafe fn red_minimum(ptr: GlobalMut<Self>, value: Self) {
            // SAFETY: forwarded.
            unsafe { $min(ptr, value) }
        }
        #[inline(always)]
        #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
        unsafe fn red_maximum(ptr: GlobalMut<Self>, value: Self) {
            // SAFETY: forwarded.
            unsafe { $max(ptr, value) }
        }
    };
}

/// The integers: wrapping sums, `Ord` min and max, integer atomics.
macro_rules! integer {
    ($t:ident, $per:expr, $add:path, $min:path, $max:path, $store:path, $bits:ty
     $(; redux $rplus:ident, $rmin:ident, $rmax:ident)?) => {
        impl Element for $t {
            $(redux_warp_steps!($rplus, $rmin, $rmax);)?
            const NAME: &'static str = stringify!($t);
            const ZERO: Self = 0;
            const LOWEST: Self = $t::MIN;
            const HIGHEST: Self = $t::MAX;
            const PER_128: usize = $per;
            #[inline(always)]
            fn plus(a: Self, b: Self) -> Self {
                a.wrapping_add(b)
            }
            #[inline(always)]
            fn times(a: Self, b: Self) -> Self {
                a.wrapping_mul(b)
            }
            #[inline(always)]
            fn minimum(a: Self, b: Self) -> Self {
                if b < a { b } else { a }
            }
            #[inline(always)]
            fn maximum(a: Self, b: Self) -> Self {
                if b > a { b } else { a }
            }
            #[inline(always)]
            fn low_bits(self) -> u32 {
                self as u32
            }
            #[inline(always)]
            fn from_low_bits(bits: u32) -> Self {
                bits as $bits as Self
            }
            #[inline(always)]
            fn minus_exact(a: Self, b: Self) -> Option<Self> {
                Some(a.wrapping_sub(b))
            }
            #[inline(always)]
            fn from_128(words: [u32; 4], i: usize) -> Self {
                Self::from_halves(if $per == 4 { [words[i], 0] } else { [words[2 * i], words[2 * i + 1]] })
            }
            #[inline(always)]
            #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
            unsafe fn red_plus(ptr: GlobalMut<Self>, value: Self) {
                // SAFETY: forwarded; a two's-complement add is the same on the signed bits.
                unsafe { $add(ptr.cast(), value as _) }
            }
            min_max_reds!($min, $max);
            #[inline(always)]
            #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
            unsafe fn store_relaxed(ptr: GlobalMut<Self>, value: Self) {
                // SAFETY: forwarded; the same bits as the unsigned type of this width.
                unsafe { $store(ptr.cast::<$bits>(), value as $bits) }
            }
        }
    };
}

integer!(i32, 4, atomic::red_add_i32, atomic::red_min_s32, atomic::red_max_s32, atomic::store_relaxed_u32, u32;
    redux reduce_add_sync, reduce_min_sync, reduce_max_sync);
integer!(u32, 4, atomic::red_add_u32, atomic::red_min_u32, atomic::red_max_u32, atomic::store_relaxed_u32, u32;
    redux reduce_add_sync_u32, reduce_min_sync_u32, reduce_max_sync_u32);
integer!(i64, 2, atomic::red_add_u64, atomic::red_min_s64, atomic::red_max_s64, atomic::store_relaxed_u64, u64);
integer!(u64, 2, atomic::red_add_u64, atomic::red_min_u64, atomic::red_max_u64, atomic::store_relaxed_u64, u64);

/// The floats: IEEE adds; min and max in the total order of the module docs.
macro_rules! float {
    ($t:ident, $per:expr, $bits:ty, $sign:expr, $fmin:path, $fmax:path, $add:path, $min:path, $max:path, $store:path) => {
        impl Element for $t {
            const NAME: &'static str = stringify!($t);
            const ZERO: Self = 0.0;
            const LOWEST: Self = $t::NEG_INFINITY;
            const HIGHEST: Self = $t::INFINITY;
            const PER_128: usize = $per;
            const FLOAT: bool = true;
            #[inline(always)]
            fn plus(a: Self, b: Self) -> Self {
                a + b
            }
            #[inline(always)]
            fn times(a: Self, b: Self) -> Self {
                a * b
            }
            #[inline(always)]
            fn minimum(a: Self, b: Self) -> Self {
                // PTX `min` orders ±0.0 as wanted and ignores a NaN; the NaN is chosen here, beside
                // it (one `setp.nan` of both operands and a `selp`, no branch).
                let smaller = $fmin(a, b);
                if a.is_nan() || b.is_nan() { $t::from_bits($t::NAN.to_bits() | $sign) } else { smaller }
            }
            #[inline(always)]
            fn maximum(a: Self, b: Self) -> Self {
                let larger = $fmax(a, b);
                if a.is_nan() || b.is_nan() { $t::from_bits($t::NAN.to_bits() & !$sign) } else { larger }
            }
            #[inline(always)]
            fn minimum_loose(a: Self, b: Self) -> Self {
                $fmin(a, b)
            }
            #[inline(always)]
            fn maximum_loose(a: Self, b: Self) -> Self {
                $fmax(a, b)
            }
            #[inline(always)]
            fn minimum_nan(value: Self, seen: bool) -> Self {
                if seen { $t::from_bits($t::NAN.to_bits() | $sign) } else { value }
            }
            #[inline(always)]
            fn maximum_nan(value: Self, seen: bool) -> Self {
                if seen { $t::from_bits($t::NAN.to_bits() & !$sign) } else { value }
            }
            #[inline(always)]
            fn low_bits(self) -> u32 {
                self.to_bits() as u32
            }
            #[inline(always)]
            fn from_low_bits(bits: u32) -> Self {
                Self::from_bits(bits.into())
            }
            #[inline(always)]
            fn minus_exact(_: Self, _: Self) -> Option<Self> {
                None
            }
            #[inline(always)]
            fn from_128(words: [u32; 4], i: usize) -> Self {
                Self::from_halves(if $per == 4 { [words[i], 0] } else { [words[2 * i], words[2 * i + 1]] })
            }
            #[inline(always)]
            #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
            unsafe fn red_plus(ptr: GlobalMut<Self>, value: Self) {
                // SAFETY: forwarded.
                unsafe { $add(ptr, value) }
            }
            min_max_reds!($min, $max);
            #[inline(always)]
            #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
            unsafe fn store_relaxed(ptr: GlobalMut<Self>, value: Self) {
                // SAFETY: forwarded; the float's bits.
                unsafe { $store(ptr.cast::<$bits>(), value.to_bits()) }
            }
        }
    };
}

float!(
    f32,
    4,
    u32,
    0x8000_0000,
    math::min_f32,
    math::max_f32,
    atomic::red_add_f32,
    atomic::red_min_f32,
    atomic::red_max_f32,
    atomic::store_relaxed_u32
);
float!(
    f64,
    2,
    u64,
    1 << 63,
    math::min_f64,
    math::max_f64,
    atomic::red_add_f64,
    atomic::red_min_f64,
    atomic::red_max_f64,
    atomic::store_relaxed_u64
);

/// The 16 bytes (four 32-bit words, little-endian) that hold the first
/// [`PER_128`](Element::PER_128) elements of `values`: the inverse of
/// [`Element::from_128`]. Elements past `PER_128` (the last two of a 64-bit type) are ignored.
#[inline(always)]
pub fn to_128<T: Element>(values: [T; 4]) -> [u32; 4] {
    if T::PER_128 == 4 {
        [values[0].to_halves()[0], values[1].to_halves()[0], values[2].to_halves()[0], values[3].to_halves()[0]]
    } else {
        let (a, b) = (values[0].to_halves(), values[1].to_halves());
        [a[0], a[1], b[0], b[1]]
    }
}

/// A reduction operator on `T`: associative and commutative (float sums up to rounding).
pub trait Operator<T: Element>: 'static {
    /// The name, as in PTX entry names and on the command line (`sum`, `min`, `max`).
    const NAME: &'static str;
    /// `identity ⊕ x = x` for every `x`: the value of an empty reduction, and what lanes or
    /// warps with nothing to contribute hold.
    const IDENTITY: T;
    /// `a ⊕ b`.
    fn combine(a: T, b: T) -> T;
    /// The combination of the values before `own` from the combination up to and including
    /// it (`inclusive ⊖ own`), where the operator has an exact inverse: integer sums (the
    /// wrapping difference, [`Element::minus_exact`]). `None` for the others (min and max have
    /// no inverse, float sums round), which shift an inclusive scan one lane up instead.
    #[inline(always)]
    fn exclusive_from(inclusive: T, own: T) -> Option<T> {
        let _ = (inclusive, own);
        None
    }
    /// `*ptr = *ptr ⊕ value` with one fire-and-forget atomic (`red`): the finish of
    /// `atomic_accumulate`.
    ///
    /// # Safety
    /// `ptr` is valid, aligned, global memory; every concurrent access to it is atomic.
    unsafe fn red(ptr: GlobalMut<T>, value: T);
    /// The warp-level step: `⊕` over the 32 lanes of a full warp, complete in lane 0: the
    /// element's own warp step for this operator ([`Element::warp_plus`], `warp_minimum`,
    /// `warp_maximum`): one `redux.sync` for 32-bit integers on sm_80+, five `shfl.down` steps
    /// otherwise.
    fn warp_reduce(value: T) -> T;

    /// Does a chain of [`combine_loose`](Self::combine_loose) need a "NaN seen" flag beside it
    /// to give [`combine`](Self::combine)'s answer? `true` for [`Min`] and [`Max`] of floats,
    /// whose loose step is PTX `min`/`max` alone (one instruction where `combine` is three:
    /// the NaN test and select off the chain); `false` (the default) where the loose step is
    /// `combine` itself. A chain `x₀ ⊕ … ⊕ xₖ` is then `poisoned(loose chain, poisons(x₀) | …
    /// | poisons(xₖ))`.
    const CARRIES_NAN: bool = false;
    /// `a ⊕ b` but for NaNs, which the step may drop ([`CARRIES_NAN`](Self::CARRIES_NAN)):
    /// `combine` by default.
    #[inline(always)]
    #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
    fn combine_loose(a: T, b: T) -> T {
        Self::combine(a, b)
    }
    /// Does `x` make every chain it enters a NaN that the loose step would drop? `false` by
    /// default.
    #[inline(always)]
    fn poisons(x: T) -> bool {
        let _ = x;
        false
    }
    /// A loose chain's `value` made `combine`'s answer: the operator's NaN where one was `seen`.
    /// `value` by default.
    #[inline(always)]
    fn poisoned(value: T, seen: bool) -> T {
        let _ = seen;
        value
    }
}

/// `+`: the sum (wrapping for integers).
pub struct Sum;
/// The minimum.
pub struct Min;
/// The maximum.
pub struct Max;

/// `impl Operator<T>` for an operator: its name, identity, combining step and atomic, all
/// from the element's own functions.
macro_rules! operator {
    ($op:ident, $name:literal, $identity:ident, $combine:ident, $red:ident, $warp:ident $(, $inverse:ident)?
     $(; loose $loose:ident, $nan:ident)?) => {
        impl<T: Element> Operator<T> for $op {
            const NAME: &'static str = $name;
            const IDENTITY: T = T::$identity;
            #[inline(always)]
            fn combine(a: T, b: T) -> T {
                T::$combine(a, b)
            }
            $(
            #[inline(always)]
            fn exclusive_from(inclusive: T, own: T) -> Option<T> {
                T::$inverse(inclusive, own)
            }
            )?
            #[inline(always)]
            #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
            unsafe fn red(ptr: GlobalMut<T>, value: T) {
                // SAFETY: forwarded.
                unsafe { T::$red(ptr, value) }
            }
            #[inline(always)]
            #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
            fn warp_reduce(value: T) -> T {
                T::$warp(value)
            }
            $(
            const CARRIES_NAN: bool = T::FLOAT;
            #[inline(always)]
            #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
            fn combine_loose(a: T, b: T) -> T {
                T::$loose(a, b)
            }
            #[inline(always)]
            fn poisons(x: T) -> bool {
                T::FLOAT && x.is_nan_value()
            }
            #[inline(always)]
            fn poisoned(value: T, seen: bool) -> T {
                T::$nan(value, seen)
            }
            )?
        }
    };
}

operator!(Sum, "sum", ZERO, plus, red_plus, warp_plus, minus_exact);
operator!(Min, "min", HIGHEST, minimum, red_minimum, warp_minimum; loose minimum_loose, minimum_nan);
operator!(Max, "max", LOWEST, maximum, red_maximum, warp_maximum; loose maximum_loose, maximum_nan);

/// What a transform-reduce applies before the operator combines: `apply(a, b)` for an element
/// `a` of the first input and `b` of the second. A unary transform (one of
/// [`INPUTS`](Self::INPUTS)) ignores `b`, and its kernel never reads a second input. The axis
/// beside the operator:
/// `Product` × `Sum` is a dot product, `Square` × `Sum` a sum of squares (CUB's
/// `DeviceReduce::TransformReduce` with a transform functor, `thrust::inner_product`).
pub trait Transform<T: Element>: 'static {
    /// The name, as in PTX entry names (`product`, `square`).
    const NAME: &'static str;
    /// Inputs it reads: 2 for a product, 1 for a square.
    const INPUTS: u32;
    /// The transformed element.
    fn apply(a: T, b: T) -> T;
}

/// `a · b` (wrapping for integers, rounded for floats: `mul.rn`, [`Element::times`]).
pub struct Product;
/// `a²` ([`Element::times`] of `a` with itself).
pub struct Square;

impl<T: Element> Transform<T> for Product {
    const NAME: &'static str = "product";
    const INPUTS: u32 = 2;
    #[inline(always)]
    fn apply(a: T, b: T) -> T {
        T::times(a, b)
    }
}

impl<T: Element> Transform<T> for Square {
    const NAME: &'static str = "square";
    const INPUTS: u32 = 1;
    #[inline(always)]
    fn apply(a: T, _: T) -> T {
        T::times(a, a)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn float_min_max_propagate_nan_and_order_zeros() {
        let nan = f32::from_bits(0x7fc0_1234);
        assert_eq!(<Max as Operator<f32>>::combine(1.0, nan).to_bits(), 0x7fc0_0000);
        assert_eq!(<Max as Operator<f32>>::combine(-nan, 1.0).to_bits(), 0x7fc0_0000);
        assert_eq!(<Min as Operator<f32>>::combine(nan, 1.0).to_bits(), 0xffc0_0000);
        assert_eq!(<Min as Operator<f64>>::combine(2.0, f64::NAN).to_bits(), 0xfff8_0000_0000_0000);
        assert_eq!(<Max as Operator<f32>>::combine(-0.0, 0.0).to_bits(), 0);
        assert_eq!(<Max as Operator<f32>>::combine(0.0, -0.0).to_bits(), 0);
        assert_eq!(<Min as Operator<f64>>::combine(0.0, -0.0).to_bits(), 1 << 63);
        assert_eq!(<Min as Operator<f64>>::combine(-0.0, 0.0).to_bits(), 1 << 63);
        assert_eq!(<Min as Operator<f32>>::combine(f32::INFINITY, -3.5), -3.5);
        assert_eq!(<Max as Operator<f32>>::combine(f32::NEG_INFINITY, -3.5), -3.5);
    }

    /// A loose chain with its NaN flag (`CARRIES_NAN`) gives `combine`'s chain, bit for bit, on
    /// every ordered sequence of three of the awkward values, for both operators and both floats.
    fn loose_chains_agree<T: Element + core::fmt::Debug, O: Operator<T>>(values: &[T]) {
        assert!(O::CARRIES_NAN, "{} {}", T::NAME, O::NAME);
        for &a in values {
            for &b in values {
                for &c in values {
                    let exact = O::combine(O::combine(O::combine(O::IDENTITY, a), b), c);
                    let loose = O::combine_loose(O::combine_loose(O::combine_loose(O::IDENTITY, a), b), c);
                    let seen = O::poisons(a) | O::poisons(b) | O::poisons(c);
                    let got = O::poisoned(loose, seen);
                    assert_eq!(got.to_halves(), exact.to_halves(), "{} {} of {a:?}, {b:?}, {c:?}", T::NAME, O::NAME);
                }
            }
        }
    }

    #[test]
    fn loose_chains_with_a_nan_flag_are_the_operator() {
        let f32s =
            [f32::NAN, -f32::NAN, f32::from_bits(0x7f80_0001), 0.0, -0.0, 1.5, -2.0, f32::INFINITY, f32::NEG_INFINITY];
        loose_chains_agree::<f32, Min>(&f32s);
        loose_chains_agree::<f32, Max>(&f32s);
        let f64s = f32s.map(f64::from);
        loose_chains_agree::<f64, Min>(&f64s);
        loose_chains_agree::<f64, Max>(&f64s);
        // The integers and the sums keep `combine` on the chain, with no flag.
        const { assert!(!<Min as Operator<i32>>::CARRIES_NAN && !<Max as Operator<u64>>::CARRIES_NAN) };
        const { assert!(!<Sum as Operator<f32>>::CARRIES_NAN) };
        assert_eq!(<Min as Operator<i32>>::combine_loose(3, -4), -4);
        assert!(!<Sum as Operator<f32>>::poisons(f32::NAN));
        assert_eq!(<Max as Operator<i64>>::poisoned(7, true), 7);
    }

    #[test]
    fn transforms() {
        assert_eq!(<Product as Transform<i32>>::apply(i32::MAX, 2), -2); // wraps
        assert_eq!(<Square as Transform<f64>>::apply(-3.0, 100.0), 9.0);
        assert!(f32::NAN.is_nan_value() && !1.5f32.is_nan_value() && !3u32.is_nan_value());
    }

    #[test]
    fn identities_are_identities() {
        for x in [i64::MIN, -1, 0, 7, i64::MAX] {
            assert_eq!(<Min as Operator<i64>>::combine(<Min as Operator<i64>>::IDENTITY, x), x);
            assert_eq!(<Max as Operator<i64>>::combine(<Max as Operator<i64>>::IDENTITY, x), x);
            assert_eq!(<Sum as Operator<i64>>::combine(<Sum as Operator<i64>>::IDENTITY, x), x);
        }
        assert_eq!(<Sum as Operator<u32>>::combine(u32::MAX, 2), 1);
    }

    #[test]
    fn wide_elements_come_from_word_pairs() {
        let words = [0x89ab_cdef, 0x0123_4567, 0xffff_ffff, 0xffff_ffff];
        assert_eq!(u64::from_128(words, 0), 0x0123_4567_89ab_cdef);
        assert_eq!(i64::from_128(words, 1), -1);
        assert_eq!(u32::from_128(words, 2), 0xffff_ffff);
        assert_eq!(f64::from_128([0, 0x3ff0_0000, 0, 0], 0), 1.0);
    }

    #[test]
    fn to_128_inverts_from_128() {
        let words = [0x89ab_cdef, 0x0123_4567, 0xffff_ffff, 0x7ff8_0000];
        let wide = [u64::from_128(words, 0), u64::from_128(words, 1), 0, 0];
        assert_eq!(to_128(wide), words);
        let narrow = [0, 1, 2, 3].map(|i| f32::from_128(words, i));
        assert_eq!(to_128(narrow), words);
        assert_eq!(to_128([-1i32, 2, -3, 4]).map(|w| w as i32), [-1, 2, -3, 4]);
    }
}
