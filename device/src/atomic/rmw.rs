//! Every CUDA atomic read-modify-write, on shared and global memory, for the types CUDA has it.
//!
//! Each operation is a method of the three places a kernel holds memory, and a trait that the
//! element types it exists for implement (a type without it is a compile error naming the CUDA
//! function and the types that have it):
//!
//! | method | CUDA C | PTX (global / shared) | types ([trait](AtomicAdd)) |
//! |---|---|---|---|
//! | `atomic_add(i, v)` | `atomicAdd` | `atom.relaxed.gpu.global.add` / `atom.relaxed.cta.shared.add` | `i32`, `u32`, `i64`, `u64`, `f32`, `f64` ([`AtomicAdd`]) |
//! | `atomic_sub(i, v)` | `atomicSub` | `atom….add` of `-v` (PTX has no `sub`) | `i32`, `u32`, `i64`, `u64` ([`AtomicSub`]) |
//! | `atomic_min(i, v)` / `atomic_max(i, v)` | `atomicMin` / `atomicMax` | `atom….min` / `.max` `.s32` `.u32` `.s64` `.u64` | `i32`, `u32`, `i64`, `u64` ([`AtomicMin`], [`AtomicMax`]) |
//! | `atomic_and(i, v)` / `atomic_or` / `atomic_xor` | `atomicAnd` / `atomicOr` / `atomicXor` | `atom….and` / `.or` / `.xor` `.b32` `.b64` | `i32`, `u32`, `i64`, `u64` ([`AtomicAnd`], [`AtomicOr`], [`AtomicXor`]) |
//! | `atomic_exch(i, v)` | `atomicExch` | `atom….exch.b32` / `.b64` | `i32`, `u32`, `i64`, `u64`, `f32`, `f64` ([`AtomicExch`]) |
//! | `atomic_cas(i, compare, v)` | `atomicCAS` | `atom….cas.b32` / `.b64` | `i32`, `u32`, `i64`, `u64` ([`AtomicCas`]) |
//! | `atomic_inc(i, limit)` / `atomic_dec(i, limit)` | `atomicInc` / `atomicDec` | `atom….inc.u32` / `.dec.u32` | `u32` ([`AtomicInc`], [`AtomicDec`]) |
//!
//! Every one returns the value the word held before (the old value), as CUDA's do.
//!
//! **Where.** [`GlobalMut::atomic_add`]`(i, v)` and the rest are the raw forms on a global
//! buffer (CUDA C `atomicAdd(p + i, v)`), [`Shared::atomic_add`] on a shared array
//! (`atomicAdd(&smem[i], v)`): `unsafe`, the index the caller's promise (the emulator still checks
//! it). [`AtomicSlice::atomic_add`] and the rest are the safe forms: a buffer with its length that
//! the launch touches only through atomics, every index checked (past the end the kernel stops:
//! `trap` on the GPU, a fault in the emulator). The project has no checked shared array, so shared
//! atomics are raw only.
//!
//! **Scope and order.** Global atomics are `.relaxed.gpu`, as the module's older functions
//! (`atomic_add_u32`, `red_add_u32`, …) are: atomic among every thread of the device, ordering
//! nothing else (a `__threadfence()` or a release store does that). Shared atomics are
//! `.relaxed.cta`: a shared array is seen by the threads of one block alone, so block scope is all
//! there is to be atomic with, and the narrowest scope is the cheapest. That is what CUDA C's
//! `atomicAdd` means too (relaxed; its scope is the device, which for shared memory is the
//! block). Every one of these exists from sm_70 on (`.relaxed` and scopes: sm_70, PTX ISA 6.0;
//! `add.f64`: sm_60; 64-bit `min`/`max`/`and`/`or`/`xor`: sm_32), the project's oldest target, so
//! no build lacks one.
//!
//! **Semantics** (the PTX ISA's, which the emulator follows): integer `add`/`sub` wrap;
//! `atomicInc` stores `old >= limit ? 0 : old + 1`, `atomicDec` stores `old == 0 || old > limit ?
//! limit : old - 1`; `atomicCAS` stores `v` only where the word equals `compare`; float `add` rounds
//! to nearest even; in global memory `f32` `add` flushes subnormal inputs and results to zero of
//! the same sign (SASS `REDG`/`ATOMG.E.ADD.F32.FTZ.RN`, as the PTX ISA says of `atom.add.f32`),
//! while in shared memory it keeps them (the H200 runs it as an `ATOMS.CAST` loop around an add
//! that does not flush: a subnormal sum stayed subnormal there, for CUDA C's `atomicAdd` and for
//! this layer's `atom.relaxed.cta.shared.add.f32` alike). The emulator does both as seen.
//!
//! **In the emulator** the operation is the same `core::sync::atomic` one on the host word, so it
//! is atomic among all emulated threads, whatever OS thread runs them. Before it, the emulator
//! checks it ([`emu::Hooks::atomic`](super::super::emu::Hooks::atomic)): bounds (which buffer or
//! array, which index), alignment, a plain access of another thread to the same word in the same
//! barrier interval (a race; two atomics never race), and counts it where Nsight Compute does
//! (`docs/counters.md`).

use super::super::global::GlobalMut;
use super::super::shared::Shared;
use super::super::slice::AtomicSlice;

#[cfg(not(target_arch = "nvptx64"))]
use super::super::emu::{AtomicOp, hooks};
#[cfg(not(target_arch = "nvptx64"))]
use core::sync::atomic::Ordering::Relaxed;

mod sealed {
    /// Only the element types CUDA has atomics for.
    pub trait Sealed {}
    impl Sealed for i32 {}
    impl Sealed for u32 {}
    impl Sealed for i64 {}
    impl Sealed for u64 {}
    impl Sealed for f32 {}
    impl Sealed for f64 {}
}

/// One operation's trait: the PTX of each space on the GPU, the host's operation in the emulator.
macro_rules! op_trait {
    ($(#[$m:meta])* $Trait:ident ($($arg:ident),*), $message:literal, $note:literal) => {
        $(#[$m])*
        #[diagnostic::on_unimplemented(message = $message, note = $note)]
        pub trait $Trait: Copy + sealed::Sealed {
            /// Done as a compare-and-swap in shared memory (`AtomicOp::compare`).
            #[doc(hidden)]
            const COMPARE: bool;
            /// The PTX on global memory at generic address `p`.
            ///
            /// # Safety
            /// `p` is an aligned element of global memory.
            #[doc(hidden)]
            #[cfg(target_arch = "nvptx64")]
            unsafe fn global(p: *mut Self, $($arg: Self),*) -> Self;
            /// The PTX on shared memory at shared-window address `w`.
            ///
            /// # Safety
            /// `w` is an aligned element of this block's shared memory.
            #[doc(hidden)]
            #[cfg(target_arch = "nvptx64")]
            unsafe fn shared(w: u64, $($arg: Self),*) -> Self;
            /// The emulator's operation on the host word at `p`.
            ///
            /// # Safety
            /// `p` is an aligned, live element that every concurrent access reaches atomically.
            #[doc(hidden)]
            #[cfg(not(target_arch = "nvptx64"))]
            unsafe fn host(p: *mut Self, $($arg: Self),*) -> Self;
            /// The emulator's operation on a shared word: [`host`](Self::host)'s, but for the
            /// `f32` add, which keeps subnormals in shared memory (seen on the H200).
            ///
            /// # Safety
            /// As for `host`.
            #[doc(hidden)]
            #[cfg(not(target_arch = "nvptx64"))]
            #[inline(always)]
            unsafe fn host_shared(p: *mut Self, $($arg: Self),*) -> Self {
                // SAFETY: forwarded from the caller.
                unsafe { Self::host(p, $($arg),*) }
            }
        }
    };
}

op_trait!(
    /// The types of `atomicAdd`: `i32`, `u32`, `i64`, `u64` (wrapping), `f32`, `f64` (rounded to
    /// nearest; `f32` flushes subnormals).
    AtomicAdd(v), "CUDA has no `atomicAdd` for `{Self}`", "`atomicAdd` exists for i32, u32, i64, u64, f32 and f64");
op_trait!(
    /// The types of `atomicSub`: `i32`, `u32`, `i64`, `u64` (wrapping).
    AtomicSub(v), "CUDA has no `atomicSub` for `{Self}`", "`atomicSub` exists for i32, u32, i64 and u64");
op_trait!(
    /// The types of `atomicMin`: `i32`, `u32`, `i64`, `u64` (signed or unsigned order by type).
    AtomicMin(v), "CUDA has no `atomicMin` for `{Self}`", "`atomicMin` exists for i32, u32, i64 and u64");
op_trait!(
    /// The types of `atomicMax`: `i32`, `u32`, `i64`, `u64`.
    AtomicMax(v), "CUDA has no `atomicMax` for `{Self}`", "`atomicMax` exists for i32, u32, i64 and u64");
op_trait!(
    /// The types of `atomicAnd`: `i32`, `u32`, `i64`, `u64`.
    AtomicAnd(v), "CUDA has no `atomicAnd` for `{Self}`", "`atomicAnd` exists for i32, u32, i64 and u64");
op_trait!(
    /// The types of `atomicOr`: `i32`, `u32`, `i64`, `u64`.
    AtomicOr(v), "CUDA has no `atomicOr` for `{Self}`", "`atomicOr` exists for i32, u32, i64 and u64");
op_trait!(
    /// The types of `atomicXor`: `i32`, `u32`, `i64`, `u64`.
    AtomicXor(v), "CUDA has no `atomicXor` for `{Self}`", "`atomicXor` exists for i32, u32, i64 and u64");
op_trait!(
    /// The types of `atomicExch`: `i32`, `u32`, `i64`, `u64`, `f32`, `f64` (the bits are swapped).
    AtomicExch(v), "CUDA has no `atomicExch` for `{Self}`", "`atomicExch` exists for i32, u32, i64, u64, f32 and f64");
op_trait!(
    /// The types of `atomicCAS`: `i32`, `u32`, `i64`, `u64`.
    AtomicCas(compare, v), "CUDA has no `atomicCAS` for `{Self}`", "`atomicCAS` exists for i32, u32, i64 and u64");
op_trait!(
    /// The type of `atomicInc`: `u32`.
    AtomicInc(limit), "CUDA has no `atomicInc` for `{Self}`", "`atomicInc` exists for u32 only");
op_trait!(
    /// The type of `atomicDec`: `u32`.
    AtomicDec(limit), "CUDA has no `atomicDec` for `{Self}`", "`atomicDec` exists for u32 only");

/// One type's implementation of a one-operand operation: `$ptx` is the PTX's `op` and `type` (after
/// the space), `$map` the value's change on the GPU (`atomicSub` adds the negated value),
/// `$host` the emulator's operation on `&$a` (the host atomic) with the value `$v`.
macro_rules! op_impl {
    ($Trait:ident, $t:ty, $op:literal . $ty:literal, $reg:ident, $compare:literal, $map:expr, |$a:ident, $v:ident| $host:expr
        $(, shared |$sa:ident, $sv:ident| $shared:expr)?) => {
        impl $Trait for $t {
            const COMPARE: bool = $compare;
            #[cfg(target_arch = "nvptx64")]
            #[inline(always)]
            unsafe fn global(p: *mut Self, v: Self) -> Self {
                let old: Self;
                // SAFETY: the caller's contract: an aligned element of global memory;
                // `cvta.to.global` gives the global-window address the `.global` form takes.
                unsafe {
                    core::arch::asm!(
                        "{{",
                        ".reg .b64 %g;",
                        "cvta.to.global.u64 %g, {p};",
                        concat!("atom.relaxed.gpu.global.", $op, ".", $ty, " {o}, [%g], {v};"),
                        "}}",
                        p = in(reg64) p, v = in($reg) ($map)(v), o = out($reg) old, options(nostack),
                    );
                }
                old
            }
            #[cfg(target_arch = "nvptx64")]
            #[inline(always)]
            unsafe fn shared(w: u64, v: Self) -> Self {
                let old: Self;
                // SAFETY: the caller's contract: an aligned element of this block's shared memory.
                unsafe {
                    core::arch::asm!(
                        concat!("atom.relaxed.cta.shared.", $op, ".", $ty, " {o}, [{w}], {v};"),
                        w = in(reg64) w, v = in($reg) ($map)(v), o = out($reg) old, options(nostack),
                    );
                }
                old
            }
            #[cfg(not(target_arch = "nvptx64"))]
            #[inline(always)]
            unsafe fn host(p: *mut Self, $v: Self) -> Self {
                // SAFETY: the caller's contract: an aligned live word that every concurrent access
                // reaches atomically.
                let $a = unsafe { &*p.cast::<<$t as super::EmuAtomic>::Atomic>() };
                $host
            }
            $(
                #[cfg(not(target_arch = "nvptx64"))]
                #[inline(always)]
                unsafe fn host_shared(p: *mut Self, $sv: Self) -> Self {
                    // SAFETY: as for `host`.
                    let $sa = unsafe { &*p.cast::<<$t as super::EmuAtomic>::Atomic>() };
                    $shared
                }
            )?
        }
    };
}

/// `op_impl!` for the integer types, with one host method of `core::sync::atomic` (`fetch_add`,
/// `fetch_min`, …), the PTX type suffixes of `i32`, `u32`, `i64`, `u64`, and whether the 64-bit
/// shared form is a compare-and-swap loop (`$c64`).
macro_rules! int_impls {
    ($Trait:ident, $op:literal, [$s32:literal, $u32:literal, $s64:literal, $u64:literal], $c64:literal, $fetch:ident) => {
        op_impl!($Trait, i32, $op.$s32, reg32, false, same, |a, v| a.$fetch(v, Relaxed));
        op_impl!($Trait, u32, $op.$u32, reg32, false, same, |a, v| a.$fetch(v, Relaxed));
        op_impl!($Trait, i64, $op.$s64, reg64, $c64, same, |a, v| a.$fetch(v, Relaxed));
        op_impl!($Trait, u64, $op.$u64, reg64, $c64, same, |a, v| a.$fetch(v, Relaxed));
    };
}

/// The value unchanged (the operand of every atomic but `atomicSub`).
#[cfg(target_arch = "nvptx64")]
#[inline(always)]
fn same<T>(v: T) -> T {
    v
}

// PTX has no `atom.add.s64`: the `i64` add is `add.u64` (the same bits). In shared memory the
// 64-bit add, min, max, and, or and xor are compare-and-swap loops (SASS `ATOMS.CAST.SPIN.64` on
// the H200, sm_90); the 64-bit exch is a native `ATOMS.EXCH.64`.
int_impls!(AtomicAdd, "add", ["s32", "u32", "u64", "u64"], true, fetch_add);
int_impls!(AtomicMin, "min", ["s32", "u32", "s64", "u64"], true, fetch_min);
int_impls!(AtomicMax, "max", ["s32", "u32", "s64", "u64"], true, fetch_max);
int_impls!(AtomicAnd, "and", ["b32", "b32", "b64", "b64"], true, fetch_and);
int_impls!(AtomicOr, "or", ["b32", "b32", "b64", "b64"], true, fetch_or);
int_impls!(AtomicXor, "xor", ["b32", "b32", "b64", "b64"], true, fetch_xor);
int_impls!(AtomicExch, "exch", ["b32", "b32", "b64", "b64"], false, swap);
op_impl!(AtomicSub, i32, "add" . "s32", reg32, false, i32::wrapping_neg, |a, v| a.fetch_sub(v, Relaxed));
op_impl!(AtomicSub, u32, "add" . "u32", reg32, false, u32::wrapping_neg, |a, v| a.fetch_sub(v, Relaxed));
op_impl!(AtomicSub, i64, "add" . "u64", reg64, false, i64::wrapping_neg, |a, v| a.fetch_sub(v, Relaxed));
op_impl!(AtomicSub, u64, "add" . "u64", reg64, false, u64::wrapping_neg, |a, v| a.fetch_sub(v, Relaxed));
op_impl!(AtomicExch, f32, "exch" . "b32", reg32, false, same, |a, v| f32::from_bits(a.swap(v.to_bits(), Relaxed)));
op_impl!(AtomicExch, f64, "exch" . "b64", reg64, false, same, |a, v| f64::from_bits(a.swap(v.to_bits(), Relaxed)));
// The f32 add flushes subnormal inputs and results in global memory (`REDG`/`ATOMG.E.ADD.F32.FTZ.RN`)
// and keeps them in shared memory (the `ATOMS.CAST` loop): both seen on the H200 (sm_90).
op_impl!(AtomicAdd, f32, "add" . "f32", reg32, true, same, |a, v| f32::from_bits(update(a, |old| add_f32(old, v))),
    shared |a, v| f32::from_bits(update(a, |old| (f32::from_bits(old) + v).to_bits())));
op_impl!(AtomicAdd, f64, "add" . "f64", reg64, true, same, |a, v| f64::from_bits(update(a, |old| add_f64(old, v))));
op_impl!(AtomicInc, u32, "inc" . "u32", reg32, false, same, |a, v| update(a, |old| if old >= v { 0 } else { old + 1 }));
op_impl!(AtomicDec, u32, "dec" . "u32", reg32, false, same, |a, v| update(
    a,
    |old| if old == 0 || old > v { v } else { old - 1 }
));

/// `atomicCAS` for one type: `$b` is the PTX bit size's type (`b32`, `b64`).
macro_rules! cas_impl {
    ($t:ty, $b:literal, $reg:ident) => {
        impl AtomicCas for $t {
            const COMPARE: bool = true;
            #[cfg(target_arch = "nvptx64")]
            #[inline(always)]
            unsafe fn global(p: *mut Self, compare: Self, v: Self) -> Self {
                let old: Self;
                // SAFETY: as for the other global atomics: an aligned element of global memory.
                unsafe {
                    core::arch::asm!(
                        "{{",
                        ".reg .b64 %g;",
                        "cvta.to.global.u64 %g, {p};",
                        concat!("atom.relaxed.gpu.global.cas.", $b, " {o}, [%g], {c}, {v};"),
                        "}}",
                        p = in(reg64) p, c = in($reg) compare, v = in($reg) v, o = out($reg) old,
                        options(nostack),
                    );
                }
                old
            }
            #[cfg(target_arch = "nvptx64")]
            #[inline(always)]
            unsafe fn shared(w: u64, compare: Self, v: Self) -> Self {
                let old: Self;
                // SAFETY: an aligned element of this block's shared memory (the caller's contract).
                unsafe {
                    core::arch::asm!(
                        concat!("atom.relaxed.cta.shared.cas.", $b, " {o}, [{w}], {c}, {v};"),
                        w = in(reg64) w, c = in($reg) compare, v = in($reg) v, o = out($reg) old,
                        options(nostack),
                    );
                }
                old
            }
            #[cfg(not(target_arch = "nvptx64"))]
            #[inline(always)]
            unsafe fn host(p: *mut Self, compare: Self, v: Self) -> Self {
                // SAFETY: the caller's contract, as for the other host operations.
                let a = unsafe { &*p.cast::<<$t as super::EmuAtomic>::Atomic>() };
                match a.compare_exchange(compare, v, Relaxed, Relaxed) {
                    Ok(old) | Err(old) => old,
                }
            }
        }
    };
}
cas_impl!(i32, "b32", reg32);
cas_impl!(u32, "b32", reg32);
cas_impl!(i64, "b64", reg64);
cas_impl!(u64, "b64", reg64);

/// The emulator's read-modify-write by `f` on an atomic word: a compare-and-swap loop. Returns
/// the old value.
#[cfg(not(target_arch = "nvptx64"))]
#[inline(always)]
fn update<A: HostWord>(a: &A, f: impl Fn(A::Bits) -> A::Bits) -> A::Bits {
    let mut old = a.load_relaxed();
    loop {
        match a.cas_weak(old, f(old)) {
            Ok(old) => return old,
            Err(now) => old = now,
        }
    }
}

/// The host atomics [`update`] works on.
#[cfg(not(target_arch = "nvptx64"))]
trait HostWord {
    type Bits: Copy;
    fn load_relaxed(&self) -> Self::Bits;
    fn cas_weak(&self, old: Self::Bits, new: Self::Bits) -> Result<Self::Bits, Self::Bits>;
}

#[cfg(not(target_arch = "nvptx64"))]
macro_rules! host_word {
    ($($a:ty => $b:ty),*) => {$(
        impl HostWord for $a {
            type Bits = $b;
            #[inline(always)]
            fn load_relaxed(&self) -> $b {
                self.load(Relaxed)
            }
            #[inline(always)]
            fn cas_weak(&self, old: $b, new: $b) -> Result<$b, $b> {
                self.compare_exchange_weak(old, new, Relaxed, Relaxed)
            }
        }
    )*};
}
#[cfg(not(target_arch = "nvptx64"))]
host_word!(core::sync::atomic::AtomicU32 => u32, core::sync::atomic::AtomicU64 => u64);

/// `x`, or zero of its sign where it is subnormal (the flush of `atom.add.f32`).
#[cfg(not(target_arch = "nvptx64"))]
#[inline(always)]
fn flush(x: f32) -> f32 {
    if x.is_subnormal() { 0.0f32.copysign(x) } else { x }
}

/// The bits of `old + v` as `atom.add.f32` computes them: round to nearest even, subnormal inputs
/// and result flushed to zero of the same sign.
#[cfg(not(target_arch = "nvptx64"))]
#[inline(always)]
pub(super) fn add_f32(old: u32, v: f32) -> u32 {
    flush(flush(f32::from_bits(old)) + flush(v)).to_bits()
}

/// The bits of `old + v` as `atom.add.f64` computes them: round to nearest even (no flush).
#[cfg(not(target_arch = "nvptx64"))]
#[inline(always)]
fn add_f64(old: u64, v: f64) -> u64 {
    (f64::from_bits(old) + v).to_bits()
}

/// The three places' methods of one operation: the raw forms on [`GlobalMut`] and [`Shared`]
/// (`unsafe`, an index), the checked form on [`AtomicSlice`].
macro_rules! methods {
    ($(#[$m:meta])* $method:ident: $Trait:ident, $cuda:literal, ($($arg:ident),*)) => {
        impl<T: $Trait> GlobalMut<T> {
            $(#[$m])*
            ///
            /// On global element `i` (CUDA C: `p + i`), at GPU scope.
            ///
            /// # Safety
            /// Element `i` is in the buffer and every access to it while this runs is atomic
            /// (the emulator reports it otherwise, and the GPU's result is undefined).
            #[inline(always)]
            #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
            pub unsafe fn $method(self, i: usize, $($arg: T),*) -> T {
                // SAFETY: the caller puts element `i` in the buffer.
                let p = unsafe { self.offset(i) }.raw();
                #[cfg(target_arch = "nvptx64")]
                // SAFETY: an aligned element of global memory, by the caller's promise.
                unsafe {
                    T::global(p, $($arg),*)
                }
                #[cfg(not(target_arch = "nvptx64"))]
                {
                    let op = AtomicOp { name: $cuda, returns: true, compare: T::COMPARE };
                    let site = core::panic::Location::caller();
                    hooks().atomic(true, p as usize, core::mem::size_of::<T>(), op, site);
                    // SAFETY: the emulator checked the element (live, in bounds, aligned) first.
                    unsafe { T::host(p, $($arg),*) }
                }
            }
        }

        impl<T: $Trait> Shared<T> {
            $(#[$m])*
            ///
            /// On shared element `i` (CUDA C: `&smem[i]`), at block scope.
            ///
            /// # Safety
            /// `i` is in bounds (the emulator reports it otherwise), and every access to the
            /// element while this runs is atomic.
            #[inline(always)]
            #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
            pub unsafe fn $method(self, i: usize, $($arg: T),*) -> T {
                #[cfg(target_arch = "nvptx64")]
                // SAFETY: in bounds by the caller's promise; the element's shared-window address.
                unsafe {
                    T::shared(self.window_at(i), $($arg),*)
                }
                #[cfg(not(target_arch = "nvptx64"))]
                {
                    let p = self.atomic_at(i, $cuda);
                    let op = AtomicOp { name: $cuda, returns: true, compare: T::COMPARE };
                    let site = core::panic::Location::caller();
                    hooks().atomic(false, p as usize, core::mem::size_of::<T>(), op, site);
                    // SAFETY: in bounds (checked by `atomic_at`) and checked by the emulator.
                    unsafe { T::host_shared(p, $($arg),*) }
                }
            }
        }

        impl<T: $Trait> AtomicSlice<T> {
            $(#[$m])*
            ///
            /// On element `i` of the buffer, at GPU scope. An index at or past the length stops
            /// the kernel (`trap` on the GPU, a fault naming it in the emulator).
            #[inline(always)]
            #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
            pub fn $method(self, i: usize, $($arg: T),*) -> T {
                let p = self.checked(i, $cuda);
                // SAFETY: `checked` put `i` in the buffer, and every access to an
                // `AtomicSlice`'s memory during the launch is atomic (its `from_raw_parts`).
                unsafe { p.$method(i, $($arg),*) }
            }
        }
    };
}

methods!(
    /// `atomicAdd`: `*p = *p + v` (integers wrap; floats round to nearest, `f32` flushing
    /// subnormals); returns the old value. PTX `atom.add` (`atom.relaxed.gpu.global.add.u32`,
    /// `….shared.add.f32`, …).
    atomic_add: AtomicAdd, "atomicAdd", (v));
methods!(
    /// `atomicSub`: `*p = *p - v` (wrapping); returns the old value. PTX has no `atom.sub`: it is
    /// `atom.add` of `-v`, as CUDA C compiles it.
    atomic_sub: AtomicSub, "atomicSub", (v));
methods!(
    /// `atomicMin`: `*p = min(*p, v)`, signed or unsigned by the type; returns the old value.
    /// PTX `atom.min.{s32,u32,s64,u64}`.
    atomic_min: AtomicMin, "atomicMin", (v));
methods!(
    /// `atomicMax`: `*p = max(*p, v)`; returns the old value. PTX `atom.max.{s32,u32,s64,u64}`.
    atomic_max: AtomicMax, "atomicMax", (v));
methods!(
    /// `atomicAnd`: `*p = *p & v`; returns the old value. PTX `atom.and.{b32,b64}`.
    atomic_and: AtomicAnd, "atomicAnd", (v));
methods!(
    /// `atomicOr`: `*p = *p | v`; returns the old value. PTX `atom.or.{b32,b64}`.
    atomic_or: AtomicOr, "atomicOr", (v));
methods!(
    /// `atomicXor`: `*p = *p ^ v`; returns the old value. PTX `atom.xor.{b32,b64}`.
    atomic_xor: AtomicXor, "atomicXor", (v));
methods!(
    /// `atomicExch`: `*p = v`; returns the old value. PTX `atom.exch.{b32,b64}`.
    atomic_exch: AtomicExch, "atomicExch", (v));
methods!(
    /// `atomicCAS`: `*p = (*p == compare) ? v : *p`; returns the old value (equal to `compare`
    /// when the swap happened). PTX `atom.cas.{b32,b64}`.
    atomic_cas: AtomicCas, "atomicCAS", (compare, v));
methods!(
    /// `atomicInc`: `*p = (*p >= limit) ? 0 : *p + 1`; returns the old value. PTX
    /// `atom.inc.u32`.
    atomic_inc: AtomicInc, "atomicInc", (limit));
methods!(
    /// `atomicDec`: `*p = (*p == 0 || *p > limit) ? limit : *p - 1`; returns the old value. PTX
    /// `atom.dec.u32`.
    atomic_dec: AtomicDec, "atomicDec", (limit));

/// `red_add` on a shared element: the add without its old value.
macro_rules! shared_red_add {
    ($($t:ty => $ty:literal, $reg:ident);*) => {$(
        impl Shared<$t> {
            /// `atomicAdd` whose result is not used: `smem[i] += v`, atomically, at block scope,
            /// returning nothing. PTX `red.relaxed.cta.shared.add`. ptxas compiles an `atom`
            /// whose old value is never read to the same instruction (on sm_90, `ATOMS.POPC.INC`
            /// for an add of 1: the lanes of a warp that add to one word counted in one
            /// operation), so the two run alike (`examples/histogram.rs`, H200); this one says in
            /// the code that no old value is wanted. The emulator checks and counts it as a shared
            /// atomic.
            ///
            /// # Safety
            /// `i` is in bounds (the emulator reports it otherwise), and every access to the
            /// element while this runs is atomic.
            #[inline(always)]
            #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
            pub unsafe fn red_add(self, i: usize, v: $t) {
                #[cfg(target_arch = "nvptx64")]
                // SAFETY: in bounds by the caller's promise; the element's shared-window address.
                unsafe {
                    core::arch::asm!(
                        concat!("red.relaxed.cta.shared.add.", $ty, " [{w}], {v};"),
                        w = in(reg64) self.window_at(i), v = in($reg) v, options(nostack),
                    );
                }
                #[cfg(not(target_arch = "nvptx64"))]
                {
                    let p = self.atomic_at(i, "atomicAdd");
                    let op = AtomicOp { name: "atomicAdd", returns: false, compare: false };
                    let site = core::panic::Location::caller();
                    hooks().atomic(false, p as usize, core::mem::size_of::<$t>(), op, site);
                    // SAFETY: in bounds (checked by `atomic_at`) and checked by the emulator.
                    unsafe { <$t as AtomicAdd>::host_shared(p, v) };
                }
            }
        }
    )*};
}
shared_red_add!(u32 => "u32", reg32; i32 => "s32", reg32; u64 => "u64", reg64; i64 => "s64", reg64);

/// The emulator's operation of every atomic on every type it exists for, from a fixed word and
/// operand: the old value returned and the word after, exactly.
#[cfg(test)]
mod tests {
    use super::*;

    /// `op` on a word holding `word`: (old value returned, the word after).
    fn run<T: Copy>(word: T, op: impl FnOnce(*mut T) -> T) -> (T, T) {
        let mut w = [0u64; 1];
        let p = w.as_mut_ptr().cast::<T>();
        // SAFETY: 8 aligned bytes of our own, one thread.
        unsafe { p.write(word) };
        let old = op(p);
        // SAFETY: as above.
        (old, unsafe { p.read() })
    }

    /// `$Trait::host` on `$word` with the operands: asserts the old value and the word after.
    macro_rules! check {
        ($Trait:ident, $t:ty, $word:expr, ($($arg:expr),*) => $after:expr) => {{
            let (word, after): ($t, $t) = ($word, $after);
            // SAFETY: `run` hands an aligned word of its own.
            let got = run::<$t>(word, |p| unsafe { <$t as $Trait>::host(p, $($arg),*) });
            assert_eq!(got, (word, after), "{} on {} at {:?}", stringify!($Trait), stringify!($t), word);
        }};
    }

    #[test]
    fn add_sub_wrap_and_return_the_old_value() {
        check!(AtomicAdd, i32, 7, (-10) => -3);
        check!(AtomicAdd, i32, i32::MAX, (1) => i32::MIN);
        check!(AtomicAdd, u32, u32::MAX, (2) => 1);
        check!(AtomicAdd, i64, -5, (3) => -2);
        check!(AtomicAdd, u64, u64::MAX, (1) => 0);
        check!(AtomicSub, i32, 7, (10) => -3);
        check!(AtomicSub, u32, 1, (2) => u32::MAX);
        check!(AtomicSub, i64, i64::MIN, (1) => i64::MAX);
        check!(AtomicSub, u64, 10, (3) => 7);
    }

    #[test]
    fn float_add_rounds_to_nearest_and_f32_flushes_subnormals() {
        check!(AtomicAdd, f32, 1.5, (2.25) => 3.75);
        // 1 + 2^-24 is halfway between 1 and the next f32: to even, 1.
        check!(AtomicAdd, f32, 1.0, (f32::EPSILON / 2.0) => 1.0);
        // 1 + 3·2^-24 rounds to nearest even: 1 + 2^-22.
        check!(AtomicAdd, f32, 1.0, (3.0 * f32::EPSILON / 2.0) => 1.0 + 2.0 * f32::EPSILON);
        // A subnormal operand is zero; a subnormal result is zero of its sign.
        check!(AtomicAdd, f32, 1.0, (f32::from_bits(1)) => 1.0);
        let tiny = f32::MIN_POSITIVE;
        // SAFETY: `run` hands an aligned word of its own.
        let (old, after) = run::<f32>(1.5 * tiny, |p| unsafe { <f32 as AtomicAdd>::host(p, -tiny) });
        assert_eq!((old, after.to_bits()), (1.5 * tiny, 0), "1.5 MIN_POSITIVE − MIN_POSITIVE is subnormal: +0");
        // SAFETY: as above.
        let (_, after) = run::<f32>(-1.5 * tiny, |p| unsafe { <f32 as AtomicAdd>::host(p, tiny) });
        assert_eq!(after.to_bits(), 0x8000_0000, "a negative subnormal result: −0");
        // In shared memory the f32 add keeps subnormals (the H200's ATOMS.CAST loop).
        // SAFETY: `run` hands an aligned word of its own.
        let (_, after) = run::<f32>(1.5 * tiny, |p| unsafe { <f32 as AtomicAdd>::host_shared(p, -tiny) });
        assert_eq!(after, 0.5 * tiny, "shared: 1.5 MIN_POSITIVE − MIN_POSITIVE stays subnormal");
        // SAFETY: as above.
        let (_, after) = run::<f32>(0.0, |p| unsafe { <f32 as AtomicAdd>::host_shared(p, f32::from_bits(1)) });
        assert_eq!(after.to_bits(), 1, "shared: a subnormal operand is added");
        check!(AtomicAdd, f64, 0.1, (0.2) => 0.1 + 0.2);
        // f64 keeps subnormals.
        check!(AtomicAdd, f64, 0.0, (f64::from_bits(1)) => f64::from_bits(1));
    }

    #[test]
    fn min_max_order_by_the_type() {
        check!(AtomicMin, i32, 5, (-3) => -3);
        check!(AtomicMin, u32, 5, (u32::MAX) => 5);
        check!(AtomicMin, i64, -1, (0) => -1);
        check!(AtomicMin, u64, 9, (2) => 2);
        check!(AtomicMax, i32, 5, (-3) => 5);
        check!(AtomicMax, u32, 5, (u32::MAX) => u32::MAX);
        check!(AtomicMax, i64, -1, (0) => 0);
        check!(AtomicMax, u64, 9, (2) => 9);
    }

    #[test]
    fn bitwise_ops() {
        check!(AtomicAnd, i32, 0b1100, (0b1010) => 0b1000);
        check!(AtomicAnd, u32, 0xffff_0000, (0x0ff0_0ff0) => 0x0ff0_0000);
        check!(AtomicAnd, i64, -1, (0x1234) => 0x1234);
        check!(AtomicAnd, u64, 0xf0f0, (0xff00) => 0xf000);
        check!(AtomicOr, i32, 0b1100, (0b1010) => 0b1110);
        check!(AtomicOr, u32, 0xffff_0000, (0x0ff0_0ff0) => 0xffff_0ff0);
        check!(AtomicOr, i64, i64::MIN, (1) => i64::MIN + 1);
        check!(AtomicOr, u64, 1 << 40, (1) => (1 << 40) + 1);
        check!(AtomicXor, i32, 0b1100, (0b1010) => 0b0110);
        check!(AtomicXor, u32, 0xffff_0000, (0x0ff0_0ff0) => 0xf00f_0ff0);
        check!(AtomicXor, i64, -1, (1) => -2);
        check!(AtomicXor, u64, u64::MAX, (u64::MAX) => 0);
    }

    #[test]
    fn exch_swaps_the_bits() {
        check!(AtomicExch, i32, -4, (9) => 9);
        check!(AtomicExch, u32, 4, (9) => 9);
        check!(AtomicExch, i64, -4, (i64::MAX) => i64::MAX);
        check!(AtomicExch, u64, 4, (9) => 9);
        check!(AtomicExch, f32, 1.5, (-0.25) => -0.25);
        check!(AtomicExch, f64, 1.5, (f64::INFINITY) => f64::INFINITY);
        let nan = f32::from_bits(0x7fc0_1234);
        // SAFETY: `run` hands an aligned word of its own.
        let (old, after) = run::<f32>(1.0, |p| unsafe { <f32 as AtomicExch>::host(p, nan) });
        assert_eq!((old, after.to_bits()), (1.0, 0x7fc0_1234), "exch keeps a NaN's payload");
    }

    #[test]
    fn cas_swaps_only_on_equal_and_returns_the_old_value() {
        check!(AtomicCas, i32, 3, (3, -7) => -7);
        check!(AtomicCas, i32, 3, (4, -7) => 3);
        check!(AtomicCas, u32, 0, (0, 1) => 1);
        check!(AtomicCas, u32, 5, (0, 1) => 5);
        check!(AtomicCas, i64, -1, (-1, 2) => 2);
        check!(AtomicCas, i64, -1, (1, 2) => -1);
        check!(AtomicCas, u64, u64::MAX, (u64::MAX, 0) => 0);
        check!(AtomicCas, u64, 1, (2, 0) => 1);
    }

    #[test]
    fn inc_wraps_to_zero_at_the_limit_and_dec_to_the_limit() {
        check!(AtomicInc, u32, 3, (9) => 4);
        check!(AtomicInc, u32, 9, (9) => 0);
        check!(AtomicInc, u32, 12, (9) => 0);
        check!(AtomicInc, u32, 0, (0) => 0);
        check!(AtomicInc, u32, u32::MAX - 1, (u32::MAX) => u32::MAX);
        check!(AtomicDec, u32, 3, (9) => 2);
        check!(AtomicDec, u32, 0, (9) => 9);
        check!(AtomicDec, u32, 12, (9) => 9);
        check!(AtomicDec, u32, 9, (9) => 8);
        check!(AtomicDec, u32, 1, (0) => 0);
    }
}
