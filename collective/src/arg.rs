//! Positions of extremes: [`Min`] and [`Max`] as the extreme an argmin or argmax looks for
//! ([`Extreme`]), and the value-and-index pair the thread, warp and block layers carry ([`Arg`]).
//! Re-exported by [`crate::types`].

use crate::types::{Element, Max, Min, Operator};

/// [`Min`] or [`Max`] as the extreme whose position an argmin or argmax asks for: which of two
/// values *beats* the other. The order is IEEE 754's `<` and `>` (so −0.0 and +0.0 tie, as in
/// CUB and PyTorch), except that **a NaN beats every number**, for argmin and argmax alike
/// (PyTorch's rule: a NaN is the extreme); two NaNs tie. Ties go to the lowest index
/// ([`Arg::combine`]).
pub trait Extreme<T: Element>: Operator<T> {
    /// Does `a` beat `b` (strictly)?
    fn beats(a: T, b: T) -> bool;
}

// For 32-bit types, written as "not at least `b`, and `b` no NaN" (`!(a <= b) &&
// !b.is_nan_value()` for the maximum): the same answer as "a NaN over a number, or strictly
// beyond" for every pair (a test below checks it), in two dependent float compares (sm_90 SASS:
// `FSETP.GE`, then `FSETP.NUM.AND` of its negation) where that form took three. 64-bit types keep
// the stated form ([`Arg::update`] says why).
impl<T: Element> Extreme<T> for Min {
    #[inline(always)]
    #[allow(clippy::neg_cmp_op_on_partial_ord)] // the NaN case is the point
    fn beats(a: T, b: T) -> bool {
        if T::WORDS == 1 { !(a >= b) && !b.is_nan_value() } else { (a.is_nan_value() && !b.is_nan_value()) || a < b }
    }
}

impl<T: Element> Extreme<T> for Max {
    #[inline(always)]
    #[allow(clippy::neg_cmp_op_on_partial_ord)] // the NaN case is the point
    fn beats(a: T, b: T) -> bool {
        if T::WORDS == 1 { !(a <= b) && !b.is_nan_value() } else { (a.is_nan_value() && !b.is_nan_value()) || a > b }
    }
}

/// The index an [`Arg`] holds before it has seen an element: `u32::MAX`, which no element has
/// (a kernel's length is a `u32`, so the last index is at most `u32::MAX − 1`).
pub const NO_INDEX: u32 = u32::MAX;

/// A value and its index: what an argmin or argmax carries through the thread, warp and block
/// layers (CUB's `KeyValuePair<int, T>`, key = index). The index is a `u32`: every length a
/// kernel takes fits.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Arg<T> {
    /// The value.
    pub value: T,
    /// Its index in the input.
    pub index: u32,
}

impl<T: Element> Arg<T> {
    /// Nothing seen yet: `O::IDENTITY` at [`NO_INDEX`], which any element replaces.
    #[inline(always)]
    pub fn identity<O: Extreme<T>>() -> Self {
        Arg { value: O::IDENTITY, index: NO_INDEX }
    }

    /// The winner of two: the value that beats the other, and on a tie (equal values, ±0.0, two
    /// NaNs) the lower index. Associative and commutative, so any tree of combines gives the
    /// same answer as a left-to-right scan: the first index of the extreme.
    #[inline(always)]
    pub fn combine<O: Extreme<T>>(self, other: Self) -> Self {
        if O::beats(other.value, self.value) || (!O::beats(self.value, other.value) && other.index < self.index) {
            other
        } else {
            self
        }
    }

    /// [`combine`](Self::combine) with the element `value` at `index`, where `index` is above
    /// every index this one has seen (a thread's own elements, in order): it wins only where it
    /// beats the held value, or where nothing is held yet. A state holding [`NO_INDEX`] is
    /// [`identity`](Self::identity)'s (`O::IDENTITY` as its value), as every kernel makes it.
    #[inline(always)]
    pub fn update<O: Extreme<T>>(self, value: T, index: u32) -> Self {
        if T::WORDS == 1 || !T::FLOAT {
            // The value needs no test of "nothing held": an element that does not beat the
            // identity equals it. So the value's chain is the compare and a select. With `beats`'
            // two compares: NVIDIA H200, 10^4 equal segments of f32 over 2^26, 2 interleaved
            // rounds, argmax 71.8–71.9 → 70.6–70.8 µs, argmin 71.9–72.0 → 71.1–71.3 µs
            // (`docs/measurements/2026-12-02-h200/session59/r59a/arg/ab.csv`).
            let beats = O::beats(value, self.value);
            Arg {
                value: if beats { value } else { self.value },
                index: if T::WORDS == 1 {
                    // NO_INDEX is above every index: `min` keeps a held index and replaces
                    // NO_INDEX, one instruction for a compare and a select. 10^4 segments' f32
                    // argmax 70.8–71.0 → 70.5–70.6 µs, i32 69.8–69.9 → 69.2–69.4, 10^6
                    // segments' f32 73.8–73.9 → 73.1–73.2 (H200, 3 interleaved rounds,
                    // `session60/r60b/lean/`, `r60c/lean/`).
                    if beats { index } else { self.index.min(index) }
                } else if beats || self.index == NO_INDEX {
                    // 64-bit integers (since session 60; `min` here cost them 2 registers
                    // and 4.5 % at 10^6 segments): 32 registers instead of 34 in
                    // `segmented_tiles`, 8 blocks of 256 an SM instead of 6; `i64` argmin of
                    // 10^4 segments 131.5–131.8 → 128.2–128.5 µs, `u64` argmax 131.6–132.0 →
                    // 127.8–128.4 (the same CSVs).
                    index
                } else {
                    self.index
                },
            }
        } else if self.index == NO_INDEX || O::beats(value, self.value) {
            // f64: the lean value select made the argmax of those segments slower (127.0–127.4
            // → 131.3–131.6 µs, `session59/r59a/arg/ab.csv`; ptxas issued half of a trip's
            // 128-bit loads after the compares). This form keeps them at their speed
            // (`session59/r59b/arg3/ab.csv`).
            Arg { value, index }
        } else {
            self
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arg_combine_takes_the_first_extreme_and_nan_wins() {
        let a = |value: f32, index: u32| Arg { value, index };
        let nan = f32::NAN;
        assert_eq!(a(1.0, 3).combine::<Max>(a(2.0, 7)), a(2.0, 7));
        assert_eq!(a(2.0, 7).combine::<Max>(a(2.0, 3)).index, 3);
        assert_eq!(a(-0.0, 5).combine::<Max>(a(0.0, 2)).index, 2); // ±0.0 tie: lower index
        assert_eq!(a(9.0, 0).combine::<Max>(a(nan, 4)).index, 4); // NaN beats every number
        assert_eq!(a(-9.0, 0).combine::<Min>(a(nan, 4)).index, 4); // for argmin too
        assert_eq!(a(nan, 8).combine::<Min>(a(nan, 4)).index, 4); // two NaNs tie
        let id = Arg::<i64>::identity::<Max>();
        assert_eq!(id.combine::<Max>(Arg { value: i64::MIN, index: 9 }).index, 9);
        assert_eq!(id.update::<Max>(i64::MIN, 9).index, 9);
        assert_eq!(Arg { value: 5u32, index: 1 }.update::<Min>(5, 2).index, 1);
        assert!(<Max as Extreme<u64>>::beats(3, 2) && !<Min as Extreme<u64>>::beats(3, 2));
    }

    /// `beats` against the rule as the trait states it ("a NaN over a number, else strictly
    /// beyond"), and `update` against "nothing held, or beats", for every pair of a set of
    /// awkward values: NaNs of both signs, ±0.0, ±inf, the extremes, a subnormal.
    #[test]
    fn beats_and_update_follow_the_stated_rule() {
        // The rule as stated; `min` picks the direction.
        fn rule<T: Element>(a: T, b: T, min: bool) -> bool {
            (a.is_nan_value() && !b.is_nan_value()) || if min { a < b } else { a > b }
        }
        // Equal as values, or both NaN (a NaN's payload is not compared here).
        fn same<T: Element>(a: T, b: T) -> bool {
            a == b || (a.is_nan_value() && b.is_nan_value())
        }
        fn update_follows<T: Element + core::fmt::Debug, O: Extreme<T>>(held: Arg<T>, v: T, min: bool) {
            let take = held.index == NO_INDEX || rule(v, held.value, min);
            let want = if take { Arg { value: v, index: 7 } } else { held };
            let got = held.update::<O>(v, 7);
            assert!(got.index == want.index && same(got.value, want.value), "{held:?} {v:?} min {min}");
        }
        fn check<T: Element + core::fmt::Debug>(values: &[T]) {
            for &a in values {
                for &b in values {
                    assert_eq!(<Min as Extreme<T>>::beats(a, b), rule(a, b, true), "min {a:?} {b:?}");
                    assert_eq!(<Max as Extreme<T>>::beats(a, b), rule(a, b, false), "max {a:?} {b:?}");
                    update_follows::<T, Min>(Arg { value: a, index: 3 }, b, true);
                    update_follows::<T, Max>(Arg { value: a, index: 3 }, b, false);
                }
                update_follows::<T, Min>(Arg::identity::<Min>(), a, true);
                update_follows::<T, Max>(Arg::identity::<Max>(), a, false);
            }
        }
        let f = [f32::NAN, -f32::NAN, 0.0, -0.0, 1.5, -2.0, f32::INFINITY, f32::NEG_INFINITY, f32::MAX, f32::MIN];
        check(&[f.as_slice(), &[f32::from_bits(1)]].concat());
        check(&[f64::NAN, -f64::NAN, 0.0, -0.0, 1.5, f64::INFINITY, f64::NEG_INFINITY, f64::MIN_POSITIVE / 4.0]);
        check(&[i32::MIN, -1, 0, 1, i32::MAX]);
        check(&[0u32, 1, u32::MAX]);
        check(&[i64::MIN, 0, i64::MAX]);
        check(&[0u64, u64::MAX]);
        const { assert!(f32::FLOAT && f64::FLOAT && !i32::FLOAT && !u32::FLOAT && !i64::FLOAT && !u64::FLOAT) };
    }
}
