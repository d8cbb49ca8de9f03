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
//! | [`atomic_add_i32`] / [`atomic_add_u32`] | `atom.relaxed.gpu.add` | `atomicAdd` |
//! | [`red_add_i32`] | `red.relaxed.gpu.add` | `atomicAdd` whose result is unused |
//! | [`load_acquire_u32`] / [`load_acquire_u64`] | `ld.acquire.gpu` | `cuda::atomic_ref::load(memory_order_acquire)` |
//! | [`store_release_u32`] / [`store_release_u64`] | `st.release.gpu` | `cuda::atomic_ref::store(memory_order_release)` |
//! | [`load_relaxed_u64`] / [`store_relaxed_u64`] | `ld/st.relaxed.gpu` | `memory_order_relaxed` |
//! | [`thread_fence`] | `fence.acq_rel.gpu` | `__threadfence()` |
//!
//! A release store makes every write the thread did before it visible to a thread whose
//! acquire load reads the stored value; relaxed operations are atomic but order nothing.
//!
//! In the emulator these map to `core::sync::atomic` with the same orderings, and every
//! load also lets the emulator's scheduler run other threads, so spin loops make progress
//! and a kernel stuck spinning past its time budget is stopped with an error.

#[cfg(not(target_arch = "nvptx64"))]
use core::sync::atomic::{AtomicI32, AtomicU32, AtomicU64, Ordering, fence};

#[cfg(not(target_arch = "nvptx64"))]
use super::emu::hooks;

/// Atomically adds `value` to `*ptr` (wrapping) and returns the old value.
///
/// # Safety
/// `ptr` is valid, 4-byte aligned, global memory.
#[inline(always)]
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
pub unsafe fn atomic_add_i32(ptr: *mut i32, value: i32) -> i32 {
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
        hooks().poll(core::panic::Location::caller());
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
pub unsafe fn atomic_add_u32(ptr: *mut u32, value: u32) -> u32 {
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
        hooks().poll(core::panic::Location::caller());
        // SAFETY: as above.
        unsafe { AtomicU32::from_ptr(ptr) }.fetch_add(value, Ordering::Relaxed)
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
pub unsafe fn red_add_i32(ptr: *mut i32, value: i32) {
    #[cfg(target_arch = "nvptx64")]
    // SAFETY: the caller guarantees a valid aligned global address.
    unsafe {
        core::arch::asm!("red.relaxed.gpu.add.s32 [{p}], {v};", p = in(reg64) ptr, v = in(reg32) value, options(nostack));
    }
    #[cfg(not(target_arch = "nvptx64"))]
    {
        hooks().poll(core::panic::Location::caller());
        // SAFETY: the caller guarantees a valid aligned address; all concurrent accesses to it
        // are atomic.
        unsafe { AtomicI32::from_ptr(ptr) }.fetch_add(value, Ordering::Relaxed);
    }
}

macro_rules! load_op {
    ($(#[$m:meta])* $name:ident, $ty:ty, $atomic:ident, $ptx:literal, $reg:ident, $ord:ident) => {
        $(#[$m])*
        ///
        /// # Safety
        /// `ptr` is valid, naturally aligned, global memory.
        #[inline(always)]
        #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
        pub unsafe fn $name(ptr: *const $ty) -> $ty {
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
                hooks().poll(core::panic::Location::caller());
                // SAFETY: the caller guarantees a valid aligned address.
                unsafe { $atomic::from_ptr(ptr as *mut $ty) }.load(Ordering::$ord)
            }
        }
    };
}

macro_rules! store_op {
    ($(#[$m:meta])* $name:ident, $ty:ty, $atomic:ident, $ptx:literal, $reg:ident, $ord:ident) => {
        $(#[$m])*
        ///
        /// # Safety
        /// `ptr` is valid, naturally aligned, global memory.
        #[inline(always)]
        #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
        pub unsafe fn $name(ptr: *mut $ty, value: $ty) {
            #[cfg(target_arch = "nvptx64")]
            // SAFETY: the caller guarantees a valid aligned global address.
            unsafe {
                core::arch::asm!(concat!($ptx, " [{p}], {v};"),
                    p = in(reg64) ptr, v = in($reg) value, options(nostack));
            }
            #[cfg(not(target_arch = "nvptx64"))]
            // SAFETY: the caller guarantees a valid aligned address.
            unsafe { $atomic::from_ptr(ptr) }.store(value, Ordering::$ord)
        }
    };
}

load_op!(
    /// Load with acquire semantics at GPU scope: later reads of this thread see every write
    /// that the thread which stored this value made before its release store.
    load_acquire_u32, u32, AtomicU32, "ld.acquire.gpu.b32", reg32, Acquire);
load_op!(
    /// 64-bit [`load_acquire_u32`].
    load_acquire_u64, u64, AtomicU64, "ld.acquire.gpu.b64", reg64, Acquire);
load_op!(
    /// Atomic load at GPU scope that orders nothing (it cannot tear, and it is not cached
    /// in a register: each call reads memory).
    load_relaxed_u32, u32, AtomicU32, "ld.relaxed.gpu.b32", reg32, Relaxed);
load_op!(
    /// 64-bit [`load_relaxed_u32`].
    load_relaxed_u64, u64, AtomicU64, "ld.relaxed.gpu.b64", reg64, Relaxed);
store_op!(
    /// Store with release semantics at GPU scope: every write this thread made before it is
    /// visible to a thread that reads this value with an acquire load.
    store_release_u32, u32, AtomicU32, "st.release.gpu.b32", reg32, Release);
store_op!(
    /// 64-bit [`store_release_u32`].
    store_release_u64, u64, AtomicU64, "st.release.gpu.b64", reg64, Release);
store_op!(
    /// Atomic store at GPU scope that orders nothing.
    store_relaxed_u32, u32, AtomicU32, "st.relaxed.gpu.b32", reg32, Relaxed);
store_op!(
    /// 64-bit [`store_relaxed_u32`].
    store_relaxed_u64, u64, AtomicU64, "st.relaxed.gpu.b64", reg64, Relaxed);

/// `__threadfence()` (PTX `fence.acq_rel.gpu`): this thread's memory accesses before the
/// fence are ordered before its accesses after it, as seen by every thread of the device.
#[inline(always)]
pub fn thread_fence() {
    #[cfg(target_arch = "nvptx64")]
    // SAFETY: a fence has no preconditions.
    unsafe {
        core::arch::asm!("fence.acq_rel.gpu;", options(nostack))
    }
    #[cfg(not(target_arch = "nvptx64"))]
    fence(Ordering::AcqRel)
}
