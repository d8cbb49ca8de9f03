//! Atomics and memory fences, with their PTX memory-model semantics spelled out.
//!
//! All operations act at **GPU scope** (`.gpu`): they order memory among all threads of the
//! device, which is what cross-block protocols need (the last-block ticket of a single-pass
//! reduction, the tile flags of a decoupled look-back scan). System scope (`.sys`, what a
//! plain `atomicAdd` in C++ with `cuda::std::atomic` defaults to) would also order against
//! the CPU and costs more.
//!
//! | function | PTX | CUDA C |
//! |---|---|---|
//! | [`atomic_add_i32`] / [`atomic_add_u32`] / [`atomic_add_u64`] | `atom.relaxed.gpu.add` | `atomicAdd` |
//! | [`atomic_cas_u64`] | `atom.relaxed.gpu.cas.b64` | `atomicCAS` |
//! | [`red_add_i32`] | `red.relaxed.gpu.add` | `atomicAdd` whose result is unused |
//! | [`red_add_u32`], [`red_add_u64`], [`red_add_f32`], [`red_add_f64`] | `red.relaxed.gpu.add.{u32,u64,f32,f64}` | `atomicAdd` (`f64`: sm_60+) |
//! | [`red_min_s32`] … [`red_max_u64`] | `red.relaxed.gpu.{min,max}.{s32,u32,s64,u64}` | `atomicMin` / `atomicMax` (64-bit: sm_32+) |
//! | [`red_min_f32`] … [`red_max_f64`] | two integer `red.min`/`red.max`, by sign | none: PTX has no float atomic min/max |
//! | [`load_acquire_u32`] / [`load_acquire_u64`] | `ld.acquire.gpu` | `cuda::atomic_ref::load(memory_order_acquire)` |
//! | [`store_release_u32`] / [`store_release_u64`] | `st.release.gpu` | `cuda::atomic_ref::store(memory_order_release)` |
//! | [`store_release_sys_u32`] | `st.release.sys` | `cuda::atomic_ref<T, thread_scope_system>::store(memory_order_release)` |
//! | [`load_relaxed_u64`] / [`store_relaxed_u64`] | `ld/st.relaxed.gpu` | `memory_order_relaxed` |
//! | [`thread_fence`] | `fence.acq_rel.gpu` | `__threadfence()` |
//!
//! A release store makes every write the thread did before it visible to a thread whose
//! acquire load reads the stored value; relaxed operations are atomic but order nothing.
//!
//! # Float min and max
//!
//! Float atomic min/max from integer ones (**the sign-magnitude trick**). PTX has no
//! `atom.min.f32`/`.f64`; but an IEEE float is sign and magnitude, so
//!
//! * among floats with the sign bit clear (+0.0 … +inf, and positive NaNs above +inf), the
//!   bits ordered as **signed** integers are ordered as the floats;
//! * among floats with the sign bit set (−0.0 … −inf, negative NaNs below −inf), the bits
//!   ordered as **unsigned** integers are ordered *opposite* to the floats;
//! * every bit pattern with the sign bit set is a negative signed integer and a larger
//!   unsigned one than any with the sign bit clear.
//!
//! So `max(*p, v)` is `red.max.s32` when `v`'s sign bit is clear (a negative `*p` is a
//! negative integer and loses; a positive one compares as floats do) and `red.min.u32`
//! when it is set (a positive `*p` is the smaller unsigned integer and stays; a negative one
//! keeps the smaller magnitude). Min is the mirror. One instruction, no compare-and-swap
//! loop to retry under contention; the word always holds a plain float.
//!
//! **NaN and ±0.0.** `value` is first made canonical: any NaN becomes the NaN that sorts
//! *above* every number in the order of max (`+NaN`, bits `0x7fc0_0000`) or *below* every
//! number in the order of min (`−NaN`, `0xffc0_0000`), so a NaN anywhere in the input wins:
//! NaN propagates, as `kernels::types` defines min and max. −0.0 has the sign bit and +0.0
//! does not, so the trick orders −0.0 < +0.0: max(−0.0, +0.0) = +0.0, min = −0.0 — again
//! as `kernels::types` defines them, whatever order the blocks arrive in.
//!
//! In the emulator these map to `core::sync::atomic` with the same orderings, and every
//! load also lets the emulator's scheduler run other threads, so spin loops make progress
//! and a kernel stuck spinning past its time budget is stopped with an error.

#[cfg(not(target_arch = "nvptx64"))]
use core::sync::atomic::{AtomicI32, AtomicI64, AtomicU32, AtomicU64, Ordering, fence};

use super::global::{Global, GlobalMut};

#[cfg(not(target_arch = "nvptx64"))]
use super::emu::{Access, AtomicOp, hooks};

mod rmw;
pub use rmw::{
    AtomicAdd, AtomicAnd, AtomicCas, AtomicDec, AtomicExch, AtomicInc, AtomicMax, AtomicMin, AtomicOr, AtomicSub,
    AtomicXor,
};

/// The emulator's side of an atomic at `ptr`: let other emulated threads run (spin loops make
/// progress, a kernel past its budget stops here), then have the access checked.
#[cfg(not(target_arch = "nvptx64"))]
#[inline(always)]
#[track_caller]
fn observe<T>(ptr: *const T, access: Access) {
    let site = core::panic::Location::caller();
    hooks().poll(site);
    hooks().global_access(ptr as usize, core::mem::size_of::<T>(), access, site);
}

/// [`observe`] for a read-modify-write: the CUDA C `name` of the atomic, and whether it returns
/// the old value (`atom`) or not (`red`), which the profiler counts apart.
#[cfg(not(target_arch = "nvptx64"))]
#[inline(always)]
#[track_caller]
fn observe_rmw<T>(ptr: *const T, name: &'static str, returns: bool) {
    let site = core::panic::Location::caller();
    hooks().poll(site);
    let op = AtomicOp { name, returns, compare: name == "atomicCAS" };
    hooks().atomic(true, ptr as usize, core::mem::size_of::<T>(), op, site);
}

/// Atomically adds `value` to `*ptr` (wrapping) and returns the old value.
///
/// # Safety
/// `ptr` is valid, 4-byte aligned, global memory.
#[inline(always)]
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
pub unsafe fn atomic_add_i32(ptr: GlobalMut<i32>, value: i32) -> i32 {
    let ptr = ptr.raw();
    #[cfg(target_arch = "nvptx64")]
    {
        let old: i32;
        // SAFETY: the caller guarantees a valid aligned global address.
        unsafe {
            core::arch::asm!("atom.relaxed.gpu.add.s32 {o}, [{p}], {v};",
                o = out(reg32) old, p = in(reg64) ptr, v = in(reg32) value, options(nostack));
        }
        old
    }
    #[cfg(not(target_arch = "nvptx64"))]
    {
        observe_rmw(ptr, "atomicAdd", true);
        // SAFETY: the caller guarantees a valid aligned address; all concurrent accesses to
        // it are atomic.
        unsafe { AtomicI32::from_ptr(ptr) }.fetch_add(value, Ordering::Relaxed)
    }
}

/// Atomically adds `value` to `*ptr` (wrapping) and returns the old value.
///
/// # Safety
/// `ptr` is valid, 4-byte aligned, global memory.
#[inline(always)]
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
pub unsafe fn atomic_add_u32(ptr: GlobalMut<u32>, value: u32) -> u32 {
    let ptr = ptr.raw();
    #[cfg(target_arch = "nvptx64")]
    {
        let old: u32;
        // SAFETY: the caller guarantees a valid aligned global address.
        unsafe {
            core::arch::asm!("atom.relaxed.gpu.add.u32 {o}, [{p}], {v};",
                o = out(reg32) old, p = in(reg64) ptr, v = in(reg32) value, options(nostack));
        }
        old
    }
    #[cfg(not(target_arch = "nvptx64"))]
    {
        observe_rmw(ptr, "atomicAdd", true);
        // SAFETY: as above.
        unsafe { AtomicU32::from_ptr(ptr) }.fetch_add(value, Ordering::Relaxed)
    }
}

/// Atomically adds `value` to the 64-bit `*ptr` (wrapping) and returns the old value.
///
/// # Safety
/// `ptr` is valid, 8-byte aligned, global memory.
#[inline(always)]
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
pub unsafe fn atomic_add_u64(ptr: GlobalMut<u64>, value: u64) -> u64 {
    let ptr = ptr.raw();
    #[cfg(target_arch = "nvptx64")]
    {
        let old: u64;
        // SAFETY: the caller guarantees a valid aligned global address.
        unsafe {
            core::arch::asm!("atom.relaxed.gpu.add.u64 {o}, [{p}], {v};",
                o = out(reg64) old, p = in(reg64) ptr, v = in(reg64) value, options(nostack));
        }
        old
    }
    #[cfg(not(target_arch = "nvptx64"))]
    {
        observe_rmw(ptr, "atomicAdd", true);
        // SAFETY: as above.
        unsafe { AtomicU64::from_ptr(ptr) }.fetch_add(value, Ordering::Relaxed)
    }
}

/// Compare and swap (CUDA C `atomicCAS`): if the 64-bit `*ptr` is `expected`, it becomes
/// `new`; returns the old value either way (equal to `expected` when the swap happened).
///
/// # Safety
/// `ptr` is valid, 8-byte aligned, global memory.
#[inline(always)]
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
pub unsafe fn atomic_cas_u64(ptr: GlobalMut<u64>, expected: u64, new: u64) -> u64 {
    let ptr = ptr.raw();
    #[cfg(target_arch = "nvptx64")]
    {
        let old: u64;
        // SAFETY: the caller guarantees a valid aligned global address.
        unsafe {
            core::arch::asm!("atom.relaxed.gpu.cas.b64 {o}, [{p}], {e}, {n};",
                o = out(reg64) old, p = in(reg64) ptr, e = in(reg64) expected, n = in(reg64) new, options(nostack));
        }
        old
    }
    #[cfg(not(target_arch = "nvptx64"))]
    {
        observe_rmw(ptr, "atomicCAS", true);
        // SAFETY: as above.
        let a = unsafe { AtomicU64::from_ptr(ptr) };
        match a.compare_exchange(expected, new, Ordering::Relaxed, Ordering::Relaxed) {
            Ok(old) | Err(old) => old,
        }
    }
}

/// Atomically adds `value` to `*ptr` (wrapping) **without returning the old value**: PTX
/// `red` ("reduction to memory") instead of `atom`. The thread does not wait for the memory
/// system to answer — the add is performed in L2 while the thread goes on (or exits) — so
/// thousands of blocks can fold their results into one word at no cost to their own
/// latency. The adds themselves are serialised at that word, and since integer addition is
/// associative and commutative the final value does not depend on their order.
///
/// # Safety
/// `ptr` is valid, 4-byte aligned, global memory.
#[inline(always)]
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
pub unsafe fn red_add_i32(ptr: GlobalMut<i32>, value: i32) {
    let ptr = ptr.raw();
    #[cfg(target_arch = "nvptx64")]
    // SAFETY: the caller guarantees a valid aligned global address.
    unsafe {
        core::arch::asm!("red.relaxed.gpu.add.s32 [{p}], {v};", p = in(reg64) ptr, v = in(reg32) value, options(nostack));
    }
    #[cfg(not(target_arch = "nvptx64"))]
    {
        observe_rmw(ptr, "atomicAdd", false);
        // SAFETY: the caller guarantees a valid aligned address; all concurrent accesses to it
        // are atomic.
        unsafe { AtomicI32::from_ptr(ptr) }.fetch_add(value, Ordering::Relaxed);
    }
}

/// A fire-and-forget atomic to global memory (`red`, see [`red_add_i32`]): on the GPU the PTX
/// instruction, in the emulator the `core::sync::atomic` operation `$emu` on the same word.
macro_rules! red_op {
    ($(#[$m:meta])* $name:ident, $ty:ty, $ptx:literal, $reg:ident, $cuda:literal, |$a:ident, $v:ident| $emu:expr) => {
        $(#[$m])*
        ///
        /// # Safety
        /// `ptr` is valid, naturally aligned, global memory; every concurrent access to it is
        /// atomic.
        #[inline(always)]
        #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
        pub unsafe fn $name(ptr: GlobalMut<$ty>, value: $ty) {
            let ptr = ptr.raw();
            #[cfg(target_arch = "nvptx64")]
            // SAFETY: the caller guarantees a valid aligned global address.
            unsafe {
                core::arch::asm!(concat!($ptx, " [{p}], {v};"), p = in(reg64) ptr,
                    v = in($reg) value, options(nostack));
            }
            #[cfg(not(target_arch = "nvptx64"))]
            {
                observe_rmw(ptr, $cuda, false);
                let $v = value;
                // SAFETY: the caller guarantees a valid aligned address; all concurrent accesses
                // to it are atomic.
                let $a = unsafe { &*ptr.cast::<<$ty as EmuAtomic>::Atomic>() };
                $emu;
            }
        }
    };
}

/// The `core::sync::atomic` type the emulator uses for each element type (floats: their bits).
#[cfg(not(target_arch = "nvptx64"))]
trait EmuAtomic {
    type Atomic;
}
#[cfg(not(target_arch = "nvptx64"))]
macro_rules! emu_atomic {
    ($($t:ty => $a:ty),*) => {$(impl EmuAtomic for $t { type Atomic = $a; })*};
}
#[cfg(not(target_arch = "nvptx64"))]
emu_atomic!(i32 => AtomicI32, u32 => AtomicU32, i64 => AtomicI64, u64 => AtomicU64, f32 => AtomicU32, f64 => AtomicU64);

/// The emulator's float add: a compare-and-swap loop on the bits (the GPU adds in L2), of
/// `$add(old bits, value)`: rounded to nearest, and for `f32` with subnormals flushed to zero as
/// `red.add.f32` flushes them (SASS `REDG.E.ADD.F32.FTZ.RN`).
#[cfg(not(target_arch = "nvptx64"))]
macro_rules! emu_float_add {
    ($a:ident, $v:ident, $add:expr) => {{
        let mut old = $a.load(Ordering::Relaxed);
        while let Err(now) = $a.compare_exchange_weak(old, $add(old, $v), Ordering::Relaxed, Ordering::Relaxed) {
            old = now;
        }
    }};
}

red_op!(
    /// `*ptr += value` (wrapping), result unused: `red.relaxed.gpu.add.u32`.
    red_add_u32, u32, "red.relaxed.gpu.add.u32", reg32, "atomicAdd", |a, v| a.fetch_add(v, Ordering::Relaxed));
red_op!(
    /// `*ptr += value` (wrapping), result unused: `red.relaxed.gpu.add.u64`. Two's complement
    /// makes it the `i64` add too: pass the `i64`'s bits.
    red_add_u64, u64, "red.relaxed.gpu.add.u64", reg64, "atomicAdd", |a, v| a.fetch_add(v, Ordering::Relaxed));
red_op!(
    /// `*ptr += value` rounded to nearest, result unused: `red.relaxed.gpu.add.f32`. The order
    /// of the adds is the order they reach L2, so the rounding of a sum of many differs run to
    /// run.
    red_add_f32, f32, "red.relaxed.gpu.add.f32", reg32, "atomicAdd", |a, v| emu_float_add!(a, v, rmw::add_f32));
red_op!(
    /// `*ptr += value` rounded to nearest, result unused: `red.relaxed.gpu.add.f64` (sm_60+).
    red_add_f64, f64, "red.relaxed.gpu.add.f64", reg64, "atomicAdd", |a, v| emu_float_add!(a, v, |old, v: f64| (f64::from_bits(old) + v).to_bits()));
red_op!(
    /// `*ptr = min(*ptr, value)` as signed integers: `red.relaxed.gpu.min.s32`.
    red_min_s32, i32, "red.relaxed.gpu.min.s32", reg32, "atomicMin", |a, v| a.fetch_min(v, Ordering::Relaxed));
red_op!(
    /// `*ptr = max(*ptr, value)` as signed integers: `red.relaxed.gpu.max.s32`.
    red_max_s32, i32, "red.relaxed.gpu.max.s32", reg32, "atomicMax", |a, v| a.fetch_max(v, Ordering::Relaxed));
red_op!(
    /// `*ptr = min(*ptr, value)` as unsigned integers: `red.relaxed.gpu.min.u32`.
    red_min_u32, u32, "red.relaxed.gpu.min.u32", reg32, "atomicMin", |a, v| a.fetch_min(v, Ordering::Relaxed));
red_op!(
    /// `*ptr = max(*ptr, value)` as unsigned integers: `red.relaxed.gpu.max.u32`.
    red_max_u32, u32, "red.relaxed.gpu.max.u32", reg32, "atomicMax", |a, v| a.fetch_max(v, Ordering::Relaxed));
red_op!(
    /// `*ptr = min(*ptr, value)` as signed 64-bit integers: `red.relaxed.gpu.min.s64`. The PTX
    /// ISA requires sm_32 for 64-bit `atom`/`red` `min`/`max` (every build here is sm_70+).
    red_min_s64, i64, "red.relaxed.gpu.min.s64", reg64, "atomicMin", |a, v| a.fetch_min(v, Ordering::Relaxed));
red_op!(
    /// `*ptr = max(*ptr, value)` as signed 64-bit integers: `red.relaxed.gpu.max.s64` (sm_32+).
    red_max_s64, i64, "red.relaxed.gpu.max.s64", reg64, "atomicMax", |a, v| a.fetch_max(v, Ordering::Relaxed));
red_op!(
    /// `*ptr = min(*ptr, value)` as unsigned 64-bit integers: `red.relaxed.gpu.min.u64` (sm_32+).
    red_min_u64, u64, "red.relaxed.gpu.min.u64", reg64, "atomicMin", |a, v| a.fetch_min(v, Ordering::Relaxed));
red_op!(
    /// `*ptr = max(*ptr, value)` as unsigned 64-bit integers: `red.relaxed.gpu.max.u64` (sm_32+).
    red_max_u64, u64, "red.relaxed.gpu.max.u64", reg64, "atomicMax", |a, v| a.fetch_max(v, Ordering::Relaxed));

// Float min/max from two integer atomics: the module docs, "Float min and max".
macro_rules! red_float_minmax {
    ($(#[$m:meta])* $name:ident, $f:ty, $nan:expr, $sign:expr, $clear:ident, $set:ident, $si:ty, $ui:ty) => {
        $(#[$m])*
        ///
        /// # Safety
        /// `ptr` is valid, naturally aligned, global memory holding a float; every concurrent
        /// access to it is atomic.
        #[inline(always)]
        #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
        pub unsafe fn $name(ptr: GlobalMut<$f>, value: $f) {
            let bits = if value.is_nan() { $nan } else { value.to_bits() };
            // SAFETY: the caller's contract; the word holds a float's bits, read as an integer.
            unsafe {
                if bits & $sign == 0 {
                    $clear(ptr.cast::<$si>(), bits as $si)
                } else {
                    $set(ptr.cast::<$ui>(), bits as $ui)
                }
            }
        }
    };
}

red_float_minmax!(
    /// `*ptr = min(*ptr, value)` for `f32`, NaN propagating, −0.0 < +0.0 (see the module
    /// docs, "Float min and max").
    red_min_f32, f32, 0xffc0_0000u32, 0x8000_0000u32, red_min_s32, red_max_u32, i32, u32);
red_float_minmax!(
    /// `*ptr = max(*ptr, value)` for `f32`, NaN propagating, −0.0 < +0.0.
    red_max_f32, f32, 0x7fc0_0000u32, 0x8000_0000u32, red_max_s32, red_min_u32, i32, u32);
red_float_minmax!(
    /// `*ptr = min(*ptr, value)` for `f64`, NaN propagating, −0.0 < +0.0.
    red_min_f64, f64, 0xfff8_0000_0000_0000u64, 1u64 << 63, red_min_s64, red_max_u64, i64, u64);
red_float_minmax!(
    /// `*ptr = max(*ptr, value)` for `f64`, NaN propagating, −0.0 < +0.0.
    red_max_f64, f64, 0x7ff8_0000_0000_0000u64, 1u64 << 63, red_max_s64, red_min_u64, i64, u64);

macro_rules! load_op {
    ($(#[$m:meta])* $name:ident, $ty:ty, $atomic:ident, $ptx:literal, $reg:ident, $ord:ident, $acq:literal) => {
        $(#[$m])*
        ///
        /// # Safety
        /// `ptr` is valid, naturally aligned, global memory.
        #[inline(always)]
        #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
        pub unsafe fn $name(ptr: Global<$ty>) -> $ty {
            let ptr = ptr.raw();
            #[cfg(target_arch = "nvptx64")]
            {
                let v: $ty;
                // SAFETY: the caller guarantees a valid aligned global address.
                unsafe {
                    core::arch::asm!(concat!($ptx, " {v}, [{p}];"),
                        v = out($reg) v, p = in(reg64) ptr, options(nostack));
                }
                v
            }
            #[cfg(not(target_arch = "nvptx64"))]
            {
                observe(ptr, Access::AtomicLoad { acquire: $acq });
                // SAFETY: the caller guarantees a valid aligned address.
                unsafe { $atomic::from_ptr(ptr as *mut $ty) }.load(Ordering::$ord)
            }
        }
    };
}

macro_rules! store_op {
    ($(#[$m:meta])* $name:ident, $ty:ty, $atomic:ident, $ptx:literal, $reg:ident, $ord:ident, $rel:literal) => {
        $(#[$m])*
        ///
        /// # Safety
        /// `ptr` is valid, naturally aligned, global memory.
        #[inline(always)]
        #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
        pub unsafe fn $name(ptr: GlobalMut<$ty>, value: $ty) {
            let ptr = ptr.raw();
            #[cfg(target_arch = "nvptx64")]
            // SAFETY: the caller guarantees a valid aligned global address.
            unsafe {
                core::arch::asm!(concat!($ptx, " [{p}], {v};"),
                    p = in(reg64) ptr, v = in($reg) value, options(nostack));
            }
            #[cfg(not(target_arch = "nvptx64"))]
            {
                observe(ptr, Access::AtomicStore { release: $rel });
                // SAFETY: the caller guarantees a valid aligned address.
                unsafe { $atomic::from_ptr(ptr) }.store(value, Ordering::$ord)
            }
        }
    };
}

load_op!(
    /// Load with acquire semantics at GPU scope: later reads of this thread see every write
    /// that the thread which stored this value made before its release store.
    load_acquire_u32, u32, AtomicU32, "ld.acquire.gpu.b32", reg32, Acquire, true);
load_op!(
    /// 64-bit [`load_acquire_u32`].
    load_acquire_u64, u64, AtomicU64, "ld.acquire.gpu.b64", reg64, Acquire, true);
load_op!(
    /// Atomic load at GPU scope that orders nothing (it cannot tear, and it is not cached
    /// in a register: each call reads memory).
    load_relaxed_u32, u32, AtomicU32, "ld.relaxed.gpu.b32", reg32, Relaxed, false);
load_op!(
    /// 64-bit [`load_relaxed_u32`].
    load_relaxed_u64, u64, AtomicU64, "ld.relaxed.gpu.b64", reg64, Relaxed, false);
store_op!(
    /// Store with release semantics at GPU scope: every write this thread made before it is
    /// visible to a thread that reads this value with an acquire load.
    store_release_u32, u32, AtomicU32, "st.release.gpu.b32", reg32, Release, true);
store_op!(
    /// 64-bit [`store_release_u32`].
    store_release_u64, u64, AtomicU64, "st.release.gpu.b64", reg64, Release, true);
store_op!(
    /// [`store_release_u32`] at **system** scope (`st.release.sys`): the writes before it are
    /// visible to the CPU (and other devices) that sees the stored value, for a word of host
    /// memory mapped into the device.
    store_release_sys_u32, u32, AtomicU32, "st.release.sys.b32", reg32, Release, true);
store_op!(
    /// Atomic store at GPU scope that orders nothing.
    store_relaxed_u32, u32, AtomicU32, "st.relaxed.gpu.b32", reg32, Relaxed, false);
store_op!(
    /// 64-bit [`store_relaxed_u32`].
    store_relaxed_u64, u64, AtomicU64, "st.relaxed.gpu.b64", reg64, Relaxed, false);

/// `__threadfence()` (PTX `fence.acq_rel.gpu`): this thread's memory accesses before the
/// fence are ordered before its accesses after it, as seen by every thread of the device.
#[inline(always)]
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
pub fn thread_fence() {
    #[cfg(target_arch = "nvptx64")]
    // SAFETY: a fence has no preconditions.
    unsafe {
        core::arch::asm!("fence.acq_rel.gpu;", options(nostack))
    }
    #[cfg(not(target_arch = "nvptx64"))]
    {
        hooks().fence(core::panic::Location::caller());
        fence(Ordering::AcqRel)
    }
}
