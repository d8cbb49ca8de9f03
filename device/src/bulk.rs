//! Hopper's bulk-copy engine (the Tensor Memory Accelerator, TMA, sm_90): one thread moves a
//! whole tile between global and shared memory, and an [`Mbarrier`] in shared memory counts
//! the bytes in, so the block knows when the tile has landed.
//!
//! | function | PTX (sm_90, ISA 8.0) | CUDA C |
//! |---|---|---|
//! | [`Mbarrier::init`] | `mbarrier.init.shared.b64` | `cuda::barrier` `init(&bar, count)` |
//! | [`Mbarrier::arrive_expect_tx`] | `mbarrier.arrive.expect_tx.shared::cta.b64` | `cuda::device::barrier_arrive_tx` |
//! | [`Mbarrier::wait_parity`] | `mbarrier.try_wait.parity.shared::cta.b64` in a loop | `bar.wait_parity(phase)` |
//! | [`Shared::copy_bulk`] | `cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes` | `cuda::memcpy_async(smem, gmem, bytes, bar)` |
//! | [`Shared::store_bulk`] | `cp.async.bulk.global.shared::cta.bulk_group` | `cuda::device::experimental::cp_async_bulk_shared_to_global` |
//! | [`bulk_commit`] / [`bulk_wait_read`] | `cp.async.bulk.commit_group` / `cp.async.bulk.wait_group.read` | `cp_async_bulk_commit_group` / `cp_async_bulk_wait_group_read` |
//! | [`fence_proxy_async`] | `fence.proxy.async.shared::cta` | `fence_proxy_async_shared_cta` |
//!
//! **How a tile arrives.** The `mbarrier` is a 64-bit word in shared memory with a *phase*:
//! it expects `count` arrivals and a number of bytes (the *transaction count*). The thread that
//! starts a copy first arrives with the bytes it expects ([`Mbarrier::arrive_expect_tx`]),
//! then issues the copy ([`Shared::copy_bulk`]); the copy engine subtracts the bytes as they
//! land. When every arrival is in and the bytes are all there, the phase completes, and
//! [`Mbarrier::wait_parity`] with that phase's parity (0, 1, 0, … for the 1st, 2nd, 3rd use)
//! returns. The copy runs while the thread goes on: the block can scan one tile while the
//! next one is in flight.
//!
//! **Two proxies.** The copy engine reads and writes shared memory through the *async proxy*,
//! the threads through the *generic proxy*. Shared memory that threads wrote (or read) must be
//! fenced with [`fence_proxy_async`] before the engine reads (or overwrites) it.
//!
//! **Off sm_90.** The sm_70 and sm_80 PTX carry no bulk copies: there [`Shared::copy_bulk`] and
//! [`Shared::store_bulk`] are synchronous 16-byte loops by the calling thread and the barrier
//! operations do nothing, so kernels built on them assemble everywhere; the host runs such a
//! kernel only on sm_90 (its `min_cc`).
//!
//! **In the emulator** a bulk copy is a synchronous copy by the thread that issues it, checked
//! like any access (bounds, alignment to 16 bytes, initialised source, races): its shared
//! bytes count as that thread's stores. The `mbarrier` keeps its arrivals, bytes and phase in
//! its word, so a wait whose bytes never arrive (a wrong byte count) hangs as it would on the
//! GPU, and the emulator's time budget reports it. Its waits poll: a waiter lets the other
//! threads run. The race checks order a copy's stores before another thread's loads only by a
//! barrier: kernels here wait on the `mbarrier` with the issuing thread, then `sync_threads`.

use super::global::{Global, GlobalMut};
use super::shared::Shared;
use super::warp::Word;

#[cfg(not(target_arch = "nvptx64"))]
use super::emu::{Access, hooks};

/// An `mbarrier`: a 64-bit word of shared memory that counts arrivals and bytes.
#[derive(Clone, Copy)]
#[cfg_attr(all(target_arch = "nvptx64", not(target_feature = "sm_90")), allow(dead_code))]
pub struct Mbarrier {
    word: Shared<u64>,
}

/// The emulator's `mbarrier` word: pending bytes (low 32 bits, signed), pending arrivals
/// (bits 32..43), expected arrivals (bits 43..54), phase parity (bit 63).
#[cfg(not(target_arch = "nvptx64"))]
mod emulated {
    pub(super) const ARRIVALS: u32 = 32;
    pub(super) const EXPECTED: u32 = 43;
    pub(super) const PHASE: u32 = 63;
    pub(super) const FIELD: u64 = (1 << 11) - 1;

    /// The word after `arrivals` arrivals and `bytes` more (or, negative, fewer) pending
    /// bytes: when both reach zero the phase completes and the counts start over.
    pub(super) fn step(word: u64, arrivals: u64, bytes: i64) -> u64 {
        let tx = (word as u32 as i32 as i64) + bytes;
        let pending = ((word >> ARRIVALS) & FIELD) - arrivals;
        let expected = (word >> EXPECTED) & FIELD;
        let phase = word >> PHASE;
        if pending == 0 && tx == 0 {
            ((phase ^ 1) << PHASE) | (expected << EXPECTED) | (expected << ARRIVALS)
        } else {
            (phase << PHASE) | (expected << EXPECTED) | (pending << ARRIVALS) | (tx as i32 as u32 as u64)
        }
    }
}

impl Mbarrier {
    /// The `mbarrier` in element `i` of `words` (a shared array of 64-bit words).
    ///
    /// # Safety
    /// `i` is in bounds; the word is used only as an `mbarrier` from [`init`](Self::init) on.
    #[inline(always)]
    #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
    pub unsafe fn at(words: Shared<u64>, i: usize) -> Self {
        // SAFETY: the caller keeps `i` in bounds.
        Self { word: unsafe { words.offset(i) } }
    }

    /// Sets the barrier up for `count` arrivals per phase, in phase 0 (PTX `mbarrier.init`).
    /// One thread calls it; then [`fence_proxy_async`] and a barrier before any thread, or the
    /// copy engine, uses it.
    ///
    /// # Safety
    /// No thread uses the barrier concurrently; `1 ≤ count ≤ 1024`.
    #[inline(always)]
    #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
    pub unsafe fn init(self, count: u32) {
        #[cfg(all(target_arch = "nvptx64", target_feature = "sm_90"))]
        // SAFETY: a valid shared word, initialised by this thread alone.
        unsafe {
            core::arch::asm!("mbarrier.init.shared.b64 [{w}], {c};", w = in(reg64) self.word.window_at(0),
                c = in(reg32) count, options(nostack, preserves_flags));
        }
        #[cfg(all(target_arch = "nvptx64", not(target_feature = "sm_90")))]
        let _ = count;
        #[cfg(not(target_arch = "nvptx64"))]
        {
            let c = u64::from(count) & emulated::FIELD;
            let p = self.word.emulated(0, 1, Access::Write);
            // SAFETY: in bounds (checked by `emulated`); nobody uses the barrier meanwhile.
            unsafe { p.write((c << emulated::EXPECTED) | (c << emulated::ARRIVALS)) };
        }
    }

    /// Arrives on the barrier, and adds `bytes` to the bytes the current phase waits for
    /// (PTX `mbarrier.arrive.expect_tx`): what the thread that starts a bulk copy does first.
    ///
    /// # Safety
    /// The barrier was initialised; `bytes < 2^20`.
    #[inline(always)]
    #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
    pub unsafe fn arrive_expect_tx(self, bytes: u32) {
        #[cfg(all(target_arch = "nvptx64", target_feature = "sm_90"))]
        // SAFETY: an initialised barrier; the state result is discarded.
        unsafe {
            core::arch::asm!(
                "{{",
                ".reg .b64 %st;",
                "mbarrier.arrive.expect_tx.shared::cta.b64 %st, [{w}], {b};",
                "}}",
                w = in(reg64) self.word.window_at(0),
                b = in(reg32) bytes,
                options(nostack, preserves_flags),
            );
        }
        #[cfg(all(target_arch = "nvptx64", not(target_feature = "sm_90")))]
        let _ = bytes;
        #[cfg(not(target_arch = "nvptx64"))]
        // SAFETY: an initialised barrier.
        unsafe {
            self.update(1, i64::from(bytes))
        }
    }

    /// The emulator's read-modify-write of the barrier word: `arrivals` arrivals, `bytes`
    /// more pending bytes (negative: bytes that landed).
    ///
    /// # Safety
    /// The barrier was initialised.
    #[cfg(not(target_arch = "nvptx64"))]
    #[track_caller]
    unsafe fn update(self, arrivals: u64, bytes: i64) {
        let p = self.word.emulated(0, 1, Access::AtomicRmw);
        // SAFETY: in bounds (checked by `emulated`), 8-byte aligned shared memory; the
        // emulator runs one thread of a block at a time, and every access to the word is
        // through these atomics.
        let word = unsafe { core::sync::atomic::AtomicU64::from_ptr(p) };
        let old = word.load(core::sync::atomic::Ordering::Relaxed);
        word.store(emulated::step(old, arrivals, bytes), core::sync::atomic::Ordering::Relaxed);
    }

    /// Whether the phase of parity `parity` has completed (PTX `mbarrier.try_wait.parity`,
    /// which may also wait a while in hardware before it answers no).
    ///
    /// # Safety
    /// The barrier was initialised; the phase asked for is the current or the previous one.
    #[inline(always)]
    #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
    pub unsafe fn try_wait_parity(self, parity: u32) -> bool {
        #[cfg(all(target_arch = "nvptx64", target_feature = "sm_90"))]
        {
            let done: u32;
            // SAFETY: an initialised barrier.
            unsafe {
                core::arch::asm!(
                    "{{",
                    ".reg .pred %p;",
                    "mbarrier.try_wait.parity.shared::cta.b64 %p, [{w}], {q};",
                    "selp.u32 {d}, 1, 0, %p;",
                    "}}",
                    w = in(reg64) self.word.window_at(0),
                    q = in(reg32) parity,
                    d = out(reg32) done,
                    options(nostack, preserves_flags),
                );
            }
            done != 0
        }
        #[cfg(all(target_arch = "nvptx64", not(target_feature = "sm_90")))]
        {
            let _ = parity;
            true
        }
        #[cfg(not(target_arch = "nvptx64"))]
        {
            let site = core::panic::Location::caller();
            hooks().poll(site);
            let p = self.word.emulated(0, 1, Access::AtomicLoad { acquire: false });
            // SAFETY: as in `update`.
            let word =
                unsafe { core::sync::atomic::AtomicU64::from_ptr(p) }.load(core::sync::atomic::Ordering::Relaxed);
            (word >> emulated::PHASE) as u32 != (parity & 1)
        }
    }

    /// Waits until the phase of parity `parity` has completed.
    ///
    /// # Safety
    /// As for [`try_wait_parity`](Self::try_wait_parity).
    #[inline(always)]
    #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
    pub unsafe fn wait_parity(self, parity: u32) {
        // SAFETY: forwarded from the caller.
        while !unsafe { self.try_wait_parity(parity) } {}
    }
}

/// Orders this thread's earlier shared-memory accesses (generic proxy) before later bulk
/// copies (async proxy) that read or overwrite the same bytes: PTX
/// `fence.proxy.async.shared::cta`. Nothing to do off sm_90 and in the emulator.
#[inline(always)]
pub fn fence_proxy_async() {
    #[cfg(all(target_arch = "nvptx64", target_feature = "sm_90"))]
    // SAFETY: a fence has no preconditions.
    unsafe {
        core::arch::asm!("fence.proxy.async.shared::cta;", options(nostack, preserves_flags))
    }
}

/// Closes this thread's current group of [`Shared::store_bulk`] copies (PTX
/// `cp.async.bulk.commit_group`). Nothing to do off sm_90 and in the emulator, where the
/// copies are synchronous.
#[inline(always)]
pub fn bulk_commit() {
    #[cfg(all(target_arch = "nvptx64", target_feature = "sm_90"))]
    // SAFETY: closing a group has no preconditions.
    unsafe {
        core::arch::asm!("cp.async.bulk.commit_group;", options(nostack, preserves_flags))
    }
}

/// Waits until at most `PENDING` of this thread's committed [`Shared::store_bulk`] groups
/// still have shared memory to *read* (PTX `cp.async.bulk.wait_group.read PENDING`): after
/// it, the shared bytes of the older groups may be overwritten (or the block may exit). The
/// global writes themselves may still be in flight; they complete by the end of the kernel.
#[inline(always)]
pub fn bulk_wait_read<const PENDING: u32>() {
    #[cfg(all(target_arch = "nvptx64", target_feature = "sm_90"))]
    // SAFETY: waiting has no preconditions.
    unsafe {
        core::arch::asm!("cp.async.bulk.wait_group.read {n};", n = const PENDING, options(nostack, preserves_flags))
    }
}

/// Bulk copies of whole tiles for arrays of 32-bit words.
impl<T: Word> Shared<T> {
    /// Starts copying `count` elements from global `src` into elements `i .. i + count`,
    /// through the copy engine (PTX `cp.async.bulk.shared::cluster.global.mbarrier::
    /// complete_tx::bytes`, with an L2 cache `policy`, for example
    /// [`l2_evict_first_policy`](super::global::l2_evict_first_policy)). The bytes land
    /// asynchronously and are counted into `bar`'s current phase: the caller first calls
    /// [`Mbarrier::arrive_expect_tx`] with `count × 4` bytes, and the data is there once that
    /// phase completes.
    ///
    /// # Safety
    /// `i + count` is in bounds; both addresses are 16-byte aligned and `count` is a multiple
    /// of 4 (16 bytes); `count × 4 < 2^20`; `src` holds `count` readable elements that nobody
    /// writes until the phase completes; no thread touches the destination until then, and
    /// every generic-proxy access to it before the copy was fenced ([`fence_proxy_async`]).
    #[inline(always)]
    #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
    pub unsafe fn copy_bulk(self, i: usize, src: Global<T>, count: usize, bar: Mbarrier, policy: u64) {
        #[cfg(all(target_arch = "nvptx64", target_feature = "sm_90"))]
        // SAFETY: the caller's promise; `cvta.to.global` gives the global-window address.
        unsafe {
            core::arch::asm!(
                "{{",
                ".reg .b64 %g;",
                "cvta.to.global.u64 %g, {p};",
                "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes.L2::cache_hint [{d}], [%g], {n}, [{b}], {c};",
                "}}",
                d = in(reg64) self.window_at(i),
                p = in(reg64) src.raw(),
                n = in(reg32) (count * 4) as u32,
                b = in(reg64) bar.word.window_at(0),
                c = in(reg64) policy,
                options(nostack, preserves_flags),
            );
        }
        #[cfg(all(target_arch = "nvptx64", not(target_feature = "sm_90")))]
        // SAFETY: as above; 16-byte loads and stores of the same bytes, by this thread.
        unsafe {
            let _ = (bar, policy);
            for k in (0..count).step_by(4) {
                self.write_v4(i + k, src.wrapping_offset(k).load_v4(0));
            }
        }
        #[cfg(not(target_arch = "nvptx64"))]
        // SAFETY: both sides checked by the emulator before the copy.
        unsafe {
            let _ = policy;
            let dst = self.emulated_bulk(i, count, src.raw() as usize, true);
            core::ptr::copy_nonoverlapping(src.raw(), dst, count);
            bar.update(0, -((count * core::mem::size_of::<T>()) as i64));
        }
    }

    /// Starts copying elements `i .. i + count` to global `dst` through the copy engine (PTX
    /// `cp.async.bulk.global.shared::cta.bulk_group`, with an L2 cache `policy`); the copy
    /// joins the thread's current bulk group ([`bulk_commit`]). The shared bytes must stay
    /// as they are until [`bulk_wait_read`] says the group has read them.
    ///
    /// # Safety
    /// `i + count` is in bounds; both addresses are 16-byte aligned and `count` is a multiple
    /// of 4; `dst` holds `count` writable elements that no other thread accesses; the threads
    /// that wrote these shared elements fenced them ([`fence_proxy_async`]) before a barrier
    /// that precedes this call, and nobody writes them until the group has been read.
    #[inline(always)]
    #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
    pub unsafe fn store_bulk(self, i: usize, dst: GlobalMut<T>, count: usize, policy: u64) {
        #[cfg(all(target_arch = "nvptx64", target_feature = "sm_90"))]
        // SAFETY: the caller's promise; `cvta.to.global` gives the global-window address.
        unsafe {
            core::arch::asm!(
                "{{",
                ".reg .b64 %g;",
                "cvta.to.global.u64 %g, {p};",
                "cp.async.bulk.global.shared::cta.bulk_group.L2::cache_hint [%g], [{s}], {n}, {c};",
                "}}",
                s = in(reg64) self.window_at(i),
                p = in(reg64) dst.raw(),
                n = in(reg32) (count * 4) as u32,
                c = in(reg64) policy,
                options(nostack, preserves_flags),
            );
        }
        #[cfg(all(target_arch = "nvptx64", not(target_feature = "sm_90")))]
        // SAFETY: as above; 16-byte loads and stores of the same bytes, by this thread.
        unsafe {
            let _ = policy;
            for k in (0..count).step_by(4) {
                dst.store_v4(k, self.read_v4(i + k));
            }
        }
        #[cfg(not(target_arch = "nvptx64"))]
        // SAFETY: both sides checked by the emulator before the copy.
        unsafe {
            let _ = policy;
            let src = self.emulated_bulk(i, count, dst.raw() as usize, false);
            core::ptr::copy_nonoverlapping(src, dst.raw(), count);
        }
    }

    /// The emulator's side of a bulk copy between elements `i .. i + count` and the global
    /// address `global` (into shared memory, or out of it): the global side checked and reported
    /// first (it names the buffer), then the shared side, then the copy's size and shared
    /// alignment. Returns the shared elements' host pointer.
    #[cfg(not(target_arch = "nvptx64"))]
    #[track_caller]
    fn emulated_bulk(self, i: usize, count: usize, global: usize, into_shared: bool) -> *mut T {
        let site = core::panic::Location::caller();
        let bytes = count * core::mem::size_of::<T>();
        let (global_side, shared_side) =
            if into_shared { (Access::Read, Access::Write) } else { (Access::Write, Access::Read) };
        hooks().copy_access(true, global, bytes, global_side, super::emu::Path::Bulk, site);
        let p = self.emulated_on(i, count, shared_side, super::emu::Path::Bulk);
        check_bulk(p as usize, bytes, site);
        p
    }
}

/// The emulator's check of a bulk copy's shared address and size: both multiples of 16 bytes
/// (the global address is checked with the access itself, which reports the buffer).
#[cfg(not(target_arch = "nvptx64"))]
fn check_bulk(shared_addr: usize, bytes: usize, site: super::emu::Site) {
    if !bytes.is_multiple_of(16) {
        let reason = "a bulk copy moves a multiple of 16 bytes (cp.async.bulk's size operand)";
        hooks().fault(super::emu::Fault::Trap { reason, site });
    }
    if !shared_addr.is_multiple_of(16) {
        hooks().fault(super::emu::Fault::Misaligned { addr: shared_addr, align: 16, site });
    }
}

#[cfg(all(test, not(target_arch = "nvptx64")))]
mod tests {
    use super::emulated::{ARRIVALS, EXPECTED, PHASE, step};

    fn fresh(count: u64) -> u64 {
        (count << EXPECTED) | (count << ARRIVALS)
    }

    #[test]
    fn a_phase_completes_when_its_arrivals_and_bytes_are_in() {
        let w = step(fresh(1), 1, 4096); // arrive, expecting 4096 bytes
        assert_eq!(w >> PHASE, 0, "bytes still pending");
        let w = step(w, 0, -4000);
        assert_eq!(w >> PHASE, 0, "96 bytes still pending");
        let w = step(w, 0, -96);
        assert_eq!(w, (1 << PHASE) | fresh(1), "phase 1 starts with the counts reset");
        // The bytes may land before the arrival that expects them.
        let w = step(step(w, 0, -64), 1, 64);
        assert_eq!(w, fresh(1), "phase 2 (parity 0) starts");
    }

    #[test]
    fn a_phase_waits_for_every_arrival() {
        let w = step(fresh(3), 1, 0);
        let w = step(w, 1, 0);
        assert_eq!(w >> PHASE, 0);
        assert_eq!(step(w, 1, 0) >> PHASE, 1);
    }
}
