//! What a reduction keeps per thread, as one axis: a plain value ([`Reduce`]`<Sum/Min/Max>`) or a
//! value and its index ([`ArgOf`]`<Min/Max>`: argmin, argmax). A kernel written over
//! `F: Fold<T>` runs all five with one body: the segmented reductions
//! (`segmented_warp`, `segmented_tiles`) are, for sums, minima, maxima, argmins and argmaxes
//! of every element type.
//!
//! | fold | keeps | thread | warp | block |
//! |---|---|---|---|---|
//! | [`Reduce<O>`] | `T` | `O::combine` | [`warp_reduce_shfl`](crate::warp::warp_reduce_shfl) (or `redux.sync`); logical warps: [`logical_warp_reduce_shfl`] | [`block_reduce`] |
//! | [`ArgOf<O>`] | [`Arg<T>`] | [`Arg::update`] | [`warp_arg_reduce`]; logical warps: [`logical_warp_arg_reduce`] | [`block_arg_reduce`] |
//!
//! A fold's result is written as a value and, for the indexed folds, an index ([`Fold::store`]),
//! so every kernel over a fold takes a values buffer and an indices buffer (unused, and may be
//! null, for a plain fold).

use core::marker::PhantomData;

use crate::block::{block_arg_reduce, block_reduce};
use crate::device::atomic::load_relaxed_u32;
use crate::device::global::{Global, GlobalMut};
use crate::device::shared::Shared;
use crate::types::{Arg, Element, Max, Min, NO_INDEX, Operator, Sum};
use crate::warp::{logical_warp_arg_reduce, logical_warp_reduce_shfl, warp_arg_reduce};

/// The shared memory of a fold's block reduction: one value and one index per warp of the
/// largest block (the indices unused by a plain fold).
#[derive(Clone, Copy)]
pub struct FoldSlots<T: Copy> {
    /// One value per warp.
    pub values: Shared<T>,
    /// One index per warp.
    pub indices: Shared<u32>,
}

/// What a reduction keeps per thread and how the levels combine it. `Acc` is the kept state;
/// [`step`](Self::step) takes the elements a thread meets in increasing index order.
pub trait Fold<T: Element>: 'static {
    /// The kept state: `T`, or [`Arg<T>`].
    type Acc: Copy;
    /// The name, as in PTX entry names (`sum`, `min`, `max`, `argmin`, `argmax`).
    const NAME: &'static str;
    /// Does it keep an index?
    const INDEXED: bool;
    /// Nothing seen yet (the result of an empty segment).
    fn identity() -> Self::Acc;
    /// `acc` with the element `value` at `index` (above every index `acc` has seen).
    fn step(acc: Self::Acc, value: T, index: u32) -> Self::Acc;
    /// Two states of disjoint elements, in any order.
    fn combine(a: Self::Acc, b: Self::Acc) -> Self::Acc;
    /// The combination over the 32 lanes of a full warp, complete in lane 0.
    fn warp(acc: Self::Acc) -> Self::Acc;
    /// The combination over each aligned group of `lanes` lanes (a power of two in 1..=32, the
    /// same in every lane), complete in the group's first lane; every lane of the warp calls it
    /// ([`logical_warp_reduce_shfl`], [`logical_warp_arg_reduce`]).
    fn logical_warp(acc: Self::Acc, lanes: u32) -> Self::Acc;
    /// The combination over the block, complete in thread 0.
    ///
    /// # Safety
    /// As [`block_reduce`]: every thread of the block calls it, the block is whole warps and at
    /// most 32 × the slots' length, and no thread still reads the slots from an earlier use.
    unsafe fn block(acc: Self::Acc, slots: FoldSlots<T>) -> Self::Acc;
    /// Writes `acc` as `values[i]` (and `indices[i]`).
    ///
    /// # Safety
    /// `values` (and, for an indexed fold, `indices`) are valid for writing element `i`.
    unsafe fn store(values: GlobalMut<T>, indices: GlobalMut<u32>, i: usize, acc: Self::Acc);
    /// Reads `values[i]` (and `indices[i]`) with strong loads: a state another block published.
    ///
    /// # Safety
    /// As [`Element::load_relaxed`], for `values[i]` (and `indices[i]`).
    unsafe fn load(values: Global<T>, indices: Global<u32>, i: usize) -> Self::Acc;
}

/// The plain reduction with the operator `O`: keeps a `T`.
pub struct Reduce<O>(PhantomData<O>);
/// The position of the extreme `O` (`Min`: argmin, `Max`: argmax): keeps an [`Arg<T>`].
pub struct ArgOf<O>(PhantomData<O>);

/// `Fold` for [`Reduce<O>`] with the name `$name`.
macro_rules! plain_fold {
    ($op:ident, $name:literal) => {
        impl<T: Element> Fold<T> for Reduce<$op> {
            type Acc = T;
            const NAME: &'static str = $name;
            const INDEXED: bool = false;
            #[inline(always)]
            fn identity() -> T {
                <$op as Operator<T>>::IDENTITY
            }
            #[inline(always)]
            fn step(acc: T, value: T, _: u32) -> T {
                <$op as Operator<T>>::combine(acc, value)
            }
            #[inline(always)]
            fn combine(a: T, b: T) -> T {
                <$op as Operator<T>>::combine(a, b)
            }
            #[inline(always)]
            #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
            fn warp(acc: T) -> T {
                <$op as Operator<T>>::warp_reduce(acc)
            }
            #[inline(always)]
            #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
            fn logical_warp(acc: T, lanes: u32) -> T {
                logical_warp_reduce_shfl::<T, $op>(acc, lanes)
            }
            #[inline(always)]
            #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
            unsafe fn block(acc: T, slots: FoldSlots<T>) -> T {
                // SAFETY: forwarded.
                unsafe { block_reduce::<T, $op>(acc, slots.values) }
            }
            #[inline(always)]
            #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
            unsafe fn store(values: GlobalMut<T>, _: GlobalMut<u32>, i: usize, acc: T) {
                // SAFETY: forwarded.
                unsafe { values.write(i, acc) }
            }
            #[inline(always)]
            #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
            unsafe fn load(values: Global<T>, _: Global<u32>, i: usize) -> T {
                // SAFETY: forwarded.
                unsafe { T::load_relaxed(values.offset(i)) }
            }
        }
    };
}
plain_fold!(Sum, "sum");
plain_fold!(Min, "min");
plain_fold!(Max, "max");

/// `Fold` for [`ArgOf<O>`] with the name `$name`.
macro_rules! arg_fold {
    ($op:ident, $name:literal) => {
        impl<T: Element> Fold<T> for ArgOf<$op> {
            type Acc = Arg<T>;
            const NAME: &'static str = $name;
            const INDEXED: bool = true;
            #[inline(always)]
            fn identity() -> Arg<T> {
                Arg::identity::<$op>()
            }
            #[inline(always)]
            fn step(acc: Arg<T>, value: T, index: u32) -> Arg<T> {
                acc.update::<$op>(value, index)
            }
            #[inline(always)]
            fn combine(a: Arg<T>, b: Arg<T>) -> Arg<T> {
                a.combine::<$op>(b)
            }
            #[inline(always)]
            #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
            fn warp(acc: Arg<T>) -> Arg<T> {
                warp_arg_reduce::<T, $op>(acc)
            }
            #[inline(always)]
            #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
            fn logical_warp(acc: Arg<T>, lanes: u32) -> Arg<T> {
                logical_warp_arg_reduce::<T, $op>(acc, lanes)
            }
            #[inline(always)]
            #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
            unsafe fn block(acc: Arg<T>, slots: FoldSlots<T>) -> Arg<T> {
                // SAFETY: forwarded.
                unsafe { block_arg_reduce::<T, $op>(acc, slots.values, slots.indices) }
            }
            #[inline(always)]
            #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
            unsafe fn store(values: GlobalMut<T>, indices: GlobalMut<u32>, i: usize, acc: Arg<T>) {
                // SAFETY: forwarded.
                unsafe {
                    values.write(i, acc.value);
                    indices.write(i, acc.index);
                }
            }
            #[inline(always)]
            #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
            unsafe fn load(values: Global<T>, indices: Global<u32>, i: usize) -> Arg<T> {
                // SAFETY: forwarded.
                unsafe { Arg { value: T::load_relaxed(values.offset(i)), index: load_relaxed_u32(indices.offset(i)) } }
            }
        }
    };
}
arg_fold!(Min, "argmin");
arg_fold!(Max, "argmax");

/// The index an indexed fold holds for an empty segment: [`NO_INDEX`].
pub const EMPTY_INDEX: u32 = NO_INDEX;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn folds_step_and_combine() {
        let sum = [3i32, 4, 5].iter().enumerate().fold(<Reduce<Sum> as Fold<i32>>::identity(), |a, (i, &x)| {
            <Reduce<Sum> as Fold<i32>>::step(a, x, i as u32)
        });
        assert_eq!(sum, 12);
        let arg = [3.0f32, 7.0, 7.0]
            .iter()
            .enumerate()
            .fold(<ArgOf<Max> as Fold<f32>>::identity(), |a, (i, &x)| <ArgOf<Max> as Fold<f32>>::step(a, x, i as u32));
        assert_eq!((arg.value, arg.index), (7.0, 1));
        assert_eq!(<ArgOf<Min> as Fold<u64>>::identity().index, EMPTY_INDEX);
        let indexed = [<ArgOf<Min> as Fold<u64>>::INDEXED, <Reduce<Max> as Fold<u64>>::INDEXED];
        assert_eq!(indexed, [true, false], "ArgOf keeps an index, Reduce does not");
        assert_eq!(<Reduce<Min> as Fold<u32>>::combine(3, 9), 3);
    }
}
