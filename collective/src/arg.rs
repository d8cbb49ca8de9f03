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

impl<T: Element> Extreme<T> for Min {
    #[inline(always)]
    fn beats(a: T, b: T) -> bool {
        (a.is_nan_value() && !b.is_nan_value()) || a < b
    }
}

impl<T: Element> Extreme<T> for Max {
    #[inline(always)]
    fn beats(a: T, b: T) -> bool {
        (a.is_nan_value() && !b.is_nan_value()) || a > b
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
    /// beats the held value, or where nothing is held yet.
    #[inline(always)]
    pub fn update<O: Extreme<T>>(self, value: T, index: u32) -> Self {
        if self.index == NO_INDEX || O::beats(value, self.value) { Arg { value, index } } else { self }
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
}
