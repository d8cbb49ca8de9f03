//! Hopper's bulk-copy engine (the Tensor Memory Accelerator, TMA, sm_90): one thread moves a
//! whole tile between global and shared memory, and an [`Mbarrier`] in shared memory counts
//! the bytes in, so the block knows when the tile has landed.
//!
//! | function | PTX (sm_90, ISA 8.0) | CUDA C |
//! |---|---|---|
//! | [`Mbarrier::init`] | `mbarrier.init.shared.b64` | `cuda::barrier` `init(&bar, count)` |
//! | [`Mbarrier::arrive_expect_tx`] | `mbarrier.arrive.expect_tx.shared::cta.b64` | `cuda::device::barrier_arrive_tx` |
//! | [`Mbarrier::arrive`] | `mbarrier.arrive.shared::cta.b64` | `bar.arrive()` |
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
//! **In the emulator** a bulk copy is checked where it is issued, like any access by the issuing
//! thread (bounds, alignment to 16 bytes, initialised source, races), and its bytes move
//! later, as on the GPU: a copy into shared memory lands at a wait on its `mbarrier`
//! ([`Mbarrier::try_wait_parity`]), a bulk store reads its shared bytes (and writes global
//! memory) at the issuing thread's [`bulk_wait_read`]. Until then the bytes are *in flight*: a
//! thread that touches a copy's destination, or writes a bulk store's source, is reported (a
//! missing wait), and so is a block that exits before its bulk stores were read. The `mbarrier`
//! keeps its arrivals, bytes and phase in its word, so a wait whose bytes never arrive (a wrong
//! byte count) hangs as it would on the GPU, and the emulator's time budget reports it. Its
//! arrivals release and its completed waits acquire (the race checks order a thread's accesses
//! after the phase it waited for), and the bytes of a copy count as stores of the copy engine
//! that the phase's completion publishes. Its waits poll: a waiter lets the other threads run.

use super::global::{Global, GlobalMut};
use super::shared::Shared;
use super::warp::Word;

#[cfg(not(target_arch = "nvptx64"))]
use super::emu::{Access, AsyncCopy, CopyDone, MbarrierOp, hooks};

/// An `mbarrier`: a 64-bit word of shared memory that counts arrivals and bytes.
#[derive(Clone, Copy)]
#[cfg_attr(all(target_arch = "nvptx64", not(target_feature = "sm_90")), allow(dead_code))]
pub struct Mbarrier {
    word: Shared<u64>,
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
        self.emulate(Access::Write, MbarrierOp::Init { count });
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
        self.emulate(Access::AtomicRmw, MbarrierOp::Arrive { tx: bytes });
    }

    /// Arrives on the barrier (PTX `mbarrier.arrive.shared::cta.b64`, CUDA C `bar.arrive()`):
    /// one of the phase's expected arrivals, with release semantics (this thread's earlier
    /// accesses are visible to whoever sees the phase complete). What a consumer does to hand a
    /// buffer back to its producer, and a producer that fills a buffer itself does to hand it on.
    ///
    /// # Safety
    /// The barrier was initialised; the current phase still expects an arrival.
    #[inline(always)]
    #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
    pub unsafe fn arrive(self) {
        #[cfg(all(target_arch = "nvptx64", target_feature = "sm_90"))]
        // SAFETY: an initialised barrier; the state result is discarded.
        unsafe {
            core::arch::asm!(
                "{{",
                ".reg .b64 %st;",
                "mbarrier.arrive.shared::cta.b64 %st, [{w}];",
                "}}",
                w = in(reg64) self.word.window_at(0),
                options(nostack, preserves_flags),
            );
        }
        #[cfg(not(target_arch = "nvptx64"))]
        self.emulate(Access::AtomicRmw, MbarrierOp::Arrive { tx: 0 });
    }

    /// The emulator's side of an operation on the barrier: the word's access checked and
    /// reported as `access` by this thread, then the operation done by the emulator, which keeps
    /// the word's arrivals, bytes and phase. Returns what a try-wait found.
    #[cfg(not(target_arch = "nvptx64"))]
    #[track_caller]
    fn emulate(self, access: Access, op: MbarrierOp) -> bool {
        let site = core::panic::Location::caller();
        let p = self.word.emulated_on(0, 1, access, super::emu::Path::Barrier);
        hooks().mbarrier(p as usize, op, site)
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
            hooks().poll(core::panic::Location::caller());
            self.emulate(Access::AtomicLoad { acquire: true }, MbarrierOp::TryWait { parity })
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
/// `cp.async.bulk.commit_group`). Nothing to do off sm_90, where the copies are synchronous;
/// the emulator keeps the groups as the GPU does.
#[inline(always)]
pub fn bulk_commit() {
    #[cfg(all(target_arch = "nvptx64", target_feature = "sm_90"))]
    // SAFETY: closing a group has no preconditions.
    unsafe {
        core::arch::asm!("cp.async.bulk.commit_group;", options(nostack, preserves_flags))
    }
    #[cfg(not(target_arch = "nvptx64"))]
    hooks().async_commit(true);
}

/// Waits until at most `PENDING` of this thread's committed [`Shared::store_bulk`] groups
/// still have shared memory to *read* (PTX `cp.async.bulk.wait_group.read PENDING`): after
/// it, the shared bytes of the older groups may be overwritten (or the block may exit). The
/// global writes themselves may still be in flight; they complete by the end of the kernel (in
/// the emulator, the covered stores read shared memory and write global memory here).
#[inline(always)]
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
pub fn bulk_wait_read<const PENDING: u32>() {
    #[cfg(all(target_arch = "nvptx64", target_feature = "sm_90"))]
    // SAFETY: waiting has no preconditions.
    unsafe {
        core::arch::asm!("cp.async.bulk.wait_group.read {n};", n = const PENDING, options(nostack, preserves_flags))
    }
    #[cfg(not(target_arch = "nvptx64"))]
    hooks().async_wait(true, PENDING, core::panic::Location::caller());
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
        {
            let _ = policy;
            let dst = self.emulated_bulk(i, count, src.raw() as usize, true) as usize;
            let bytes = count * core::mem::size_of::<T>();
            let done = CopyDone::Mbarrier(bar.word.as_ptr() as usize);
            hooks()
                .async_copy(AsyncCopy { dst, src: src.raw() as usize, bytes, done }, core::panic::Location::caller());
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
        {
            let _ = policy;
            let src = self.emulated_bulk(i, count, dst.raw() as usize, false) as usize;
            let bytes = count * core::mem::size_of::<T>();
            let copy = AsyncCopy { dst: dst.raw() as usize, src, bytes, done: CopyDone::BulkGroup };
            hooks().async_copy(copy, core::panic::Location::caller());
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
