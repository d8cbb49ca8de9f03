//! Shared memory: per-block scratch that every thread of the block sees.
//!
//! * [`static_shared!`](crate::static_shared) declares an array whose size is fixed when
//!   the kernel is compiled (CUDA C: `__shared__ int a[N];`). On the GPU it is a
//!   kernel-scoped PTX `.shared` variable; ptxas reports its bytes.
//! * [`dynamic_shared`] returns the block's dynamic shared memory, whose size the host sets
//!   at launch (CUDA C: `extern __shared__ int a[];` plus the third launch parameter).
//!
//! Both hand out a [`Shared`] view. On the GPU its accessors of 4- and 8-byte elements are
//! `ld.shared` / `st.shared` instructions (SASS `LDS` / `STS`) on the array's shared-window
//! address: a static array is declared in inline PTX, so LLVM cannot know that a pointer to
//! it is shared memory and would otherwise emit generic loads (`LD.E`), which must first test
//! the address's state space. Static and dynamic arrays thus compile to the same accesses.
//! In the emulator the accessors check the index and report an out-of-bounds access with
//! the kernel, block, thread and source line.
//!
//! Arrays of 32-bit words also have 128-bit accessors ([`Shared::read_v4`],
//! [`Shared::write_v4`]) and asynchronous global-to-shared copies ([`Shared::copy_async_v4`]
//! with [`copy_async_commit`] and [`copy_async_wait`]: sm_80's `cp.async`), which fill shared
//! memory without staging the data in registers.

use super::global::Global;
#[cfg(not(target_arch = "nvptx64"))]
use super::global::Vec4;
use super::warp::Word;

#[cfg(not(target_arch = "nvptx64"))]
use super::emu::{Access, hooks};

/// A view of a shared-memory array of `T`.
///
/// Copying the view does not copy the memory: every copy names the same array.
#[derive(Clone, Copy)]
pub struct Shared<T> {
    ptr: *mut T,
    /// The same element's address in the shared window (GPU builds only).
    #[cfg(target_arch = "nvptx64")]
    window: u64,
    /// Length in elements (host builds only: the emulator checks bounds).
    #[cfg(not(target_arch = "nvptx64"))]
    len: usize,
}

/// The shared-window address of a generic pointer into shared memory (`cvta.to.shared`).
#[cfg(target_arch = "nvptx64")]
#[inline(always)]
fn to_window<T>(ptr: *mut T) -> u64 {
    let w: u64;
    // SAFETY: an address conversion; no memory is touched.
    unsafe {
        core::arch::asm!("cvta.to.shared.u64 {w}, {p};", w = out(reg64) w, p = in(reg64) ptr,
            options(pure, nomem, nostack, preserves_flags));
    }
    w
}

/// Loads and stores on the shared window, for 2-, 4- and 8-byte elements (the 2-byte ones since
/// the compaction's 16-bit index array, session 46); other sizes use the generic pointer.
#[cfg(target_arch = "nvptx64")]
mod window {
    use core::arch::asm;
    use core::mem::{size_of, transmute_copy};

    macro_rules! access {
        ($load:ident, $store:ident, $ld:literal, $st:literal, $($opt:ident),*) => {
            /// Loads the element at shared-window address `w`.
            ///
            /// # Safety
            /// `w` is a valid, aligned shared address of a `T`, and `p` the same element's
            /// generic address.
            #[inline(always)]
            pub unsafe fn $load<T: Copy>(w: u64, p: *mut T) -> T {
                // SAFETY (all arms): the caller guarantees a valid aligned element at `w`/`p`.
                unsafe {
                    match size_of::<T>() {
                        4 => {
                            let v: u32;
                            asm!(concat!($ld, ".b32 {v}, [{w}];"), v = out(reg32) v, w = in(reg64) w,
                                options($($opt,)* nostack, preserves_flags));
                            transmute_copy::<u32, T>(&v)
                        }
                        8 => {
                            let v: u64;
                            asm!(concat!($ld, ".b64 {v}, [{w}];"), v = out(reg64) v, w = in(reg64) w,
                                options($($opt,)* nostack, preserves_flags));
                            transmute_copy::<u64, T>(&v)
                        }
                        2 => {
                            let v: u16;
                            asm!(concat!($ld, ".b16 {v}, [{w}];"), v = out(reg16) v, w = in(reg64) w,
                                options($($opt,)* nostack, preserves_flags));
                            transmute_copy::<u16, T>(&v)
                        }
                        _ => p.read(),
                    }
                }
            }

            /// Stores `v` at shared-window address `w`.
            ///
            /// # Safety
            /// As for the load.
            #[inline(always)]
            pub unsafe fn $store<T: Copy>(w: u64, p: *mut T, v: T) {
                // SAFETY (all arms): the caller guarantees a valid aligned element at `w`/`p`.
                unsafe {
                    match size_of::<T>() {
                        4 => asm!(concat!($st, ".b32 [{w}], {v};"), w = in(reg64) w,
                            v = in(reg32) transmute_copy::<T, u32>(&v), options(nostack, preserves_flags)),
                        8 => asm!(concat!($st, ".b64 [{w}], {v};"), w = in(reg64) w,
                            v = in(reg64) transmute_copy::<T, u64>(&v), options(nostack, preserves_flags)),
                        2 => asm!(concat!($st, ".b16 [{w}], {v};"), w = in(reg64) w,
                            v = in(reg16) transmute_copy::<T, u16>(&v), options(nostack, preserves_flags)),
                        _ => p.write(v),
                    }
                }
            }
        };
    }

    access!(load, store, "ld.shared", "st.shared", pure, readonly);
    access!(load_volatile, store_volatile, "ld.volatile.shared", "st.volatile.shared", readonly);
}

impl<T: Copy> Shared<T> {
    /// Wraps a pointer to shared memory holding at least `len` elements.
    ///
    /// # Safety
    /// `ptr` points to shared memory of this block with room for `len` elements of `T`,
    /// aligned for `T`, for as long as the kernel runs.
    #[inline(always)]
    pub unsafe fn from_raw(ptr: *mut T, len: usize) -> Self {
        #[cfg(target_arch = "nvptx64")]
        let _ = len;
        Self {
            ptr,
            #[cfg(target_arch = "nvptx64")]
            window: to_window(ptr),
            #[cfg(not(target_arch = "nvptx64"))]
            len,
        }
    }

    /// The raw pointer to element 0.
    #[inline(always)]
    pub fn as_ptr(self) -> *mut T {
        self.ptr
    }

    /// A view starting at element `offset` (CUDA C: `smem + offset`).
    ///
    /// # Safety
    /// `offset` is at most the array's length.
    #[inline(always)]
    #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
    pub unsafe fn offset(self, offset: usize) -> Self {
        #[cfg(not(target_arch = "nvptx64"))]
        if offset > self.len {
            self.out_of_bounds(offset);
        }
        Self {
            // SAFETY: the caller keeps `offset` within the array.
            ptr: unsafe { self.ptr.add(offset) },
            #[cfg(target_arch = "nvptx64")]
            window: self.window + (offset * core::mem::size_of::<T>()) as u64,
            #[cfg(not(target_arch = "nvptx64"))]
            len: self.len - offset,
        }
    }

    /// The shared-window address of element `i` (GPU builds): what the device layer's own
    /// instructions on shared memory take (`bulk`: the bulk copies and the `mbarrier`).
    #[cfg(target_arch = "nvptx64")]
    #[cfg_attr(not(target_feature = "sm_90"), allow(dead_code))]
    #[inline(always)]
    pub(super) fn window_at(self, i: usize) -> u64 {
        self.window + (i * core::mem::size_of::<T>()) as u64
    }

    /// The emulator's side of a device-layer operation on elements `i .. i + count` (`bulk`) on
    /// `path` (a bulk copy's shared side, an `mbarrier`'s word): the index checked like any
    /// access, the access reported, and the elements' host pointer returned for the operation to
    /// do its work.
    #[cfg(not(target_arch = "nvptx64"))]
    #[track_caller]
    pub(super) fn emulated_on(self, i: usize, count: usize, access: Access, path: super::emu::Path) -> *mut T {
        if i + count > self.len {
            self.out_of_bounds(i + count - 1);
        }
        let (addr, bytes) = (self.ptr.wrapping_add(i) as usize, count * core::mem::size_of::<T>());
        let site = core::panic::Location::caller();
        match path {
            super::emu::Path::Lsu => hooks().shared_access(addr, bytes, access, site),
            path => hooks().copy_access(false, addr, bytes, access, path, site),
        }
        self.ptr.wrapping_add(i)
    }

    /// The host address of element `i` for an atomic named `name` (CUDA C), which reaches shared
    /// memory only when `i` is in bounds: an index at or past the length is reported, naming the
    /// atomic, the array and the address, and the thread unwinds.
    #[cfg(not(target_arch = "nvptx64"))]
    #[track_caller]
    pub(super) fn atomic_at(self, i: usize, name: &'static str) -> *mut T {
        if i >= self.len {
            hooks().fault(super::emu::Fault::AtomicOutOfBounds {
                name,
                global: false,
                base: self.ptr as usize,
                index: i,
                len: self.len,
                bytes: core::mem::size_of::<T>(),
                site: core::panic::Location::caller(),
            })
        }
        self.ptr.wrapping_add(i)
    }

    /// Tells the emulator about an in-bounds access of `count` elements at `i` (for its race
    /// and initialisation checks) before it happens.
    #[cfg(not(target_arch = "nvptx64"))]
    #[inline(always)]
    #[track_caller]
    fn observe(self, i: usize, count: usize, access: Access) {
        let addr = self.ptr.wrapping_add(i) as usize;
        hooks().shared_access(addr, count * core::mem::size_of::<T>(), access, core::panic::Location::caller());
    }

    #[cfg(not(target_arch = "nvptx64"))]
    #[cold]
    #[track_caller]
    fn out_of_bounds(self, index: usize) -> ! {
        super::emu::hooks().fault(super::emu::Fault::SharedOutOfBounds {
            index,
            len: self.len,
            site: core::panic::Location::caller(),
        })
    }

    /// Reads element `i`.
    ///
    /// # Safety
    /// `i` is in bounds, and no other thread writes element `i` concurrently (a barrier
    /// separates a write by another thread from this read).
    #[inline(always)]
    #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
    pub unsafe fn read(self, i: usize) -> T {
        #[cfg(not(target_arch = "nvptx64"))]
        if i >= self.len {
            self.out_of_bounds(i);
        }
        #[cfg(not(target_arch = "nvptx64"))]
        self.observe(i, 1, Access::Read);
        #[cfg(target_arch = "nvptx64")]
        // SAFETY: in bounds by the caller's promise; element i's window and generic addresses.
        unsafe {
            window::load(self.window + (i * core::mem::size_of::<T>()) as u64, self.ptr.add(i))
        }
        #[cfg(not(target_arch = "nvptx64"))]
        // SAFETY: in bounds (checked just above).
        unsafe {
            self.ptr.add(i).read()
        }
    }

    /// Writes element `i`.
    ///
    /// # Safety
    /// As for [`read`](Self::read), with no concurrent read or write of element `i`.
    #[inline(always)]
    #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
    pub unsafe fn write(self, i: usize, value: T) {
        #[cfg(not(target_arch = "nvptx64"))]
        if i >= self.len {
            self.out_of_bounds(i);
        }
        #[cfg(not(target_arch = "nvptx64"))]
        self.observe(i, 1, Access::Write);
        #[cfg(target_arch = "nvptx64")]
        // SAFETY: in bounds by the caller's promise; element i's window and generic addresses.
        unsafe {
            window::store(self.window + (i * core::mem::size_of::<T>()) as u64, self.ptr.add(i), value)
        }
        #[cfg(not(target_arch = "nvptx64"))]
        // SAFETY: in bounds (checked just above).
        unsafe {
            self.ptr.add(i).write(value)
        }
    }

    /// Reads element `i` with a volatile load (`ld.volatile.shared`): the compiler may not
    /// keep the value in a register or merge the load with another.
    ///
    /// # Safety
    /// As for [`read`](Self::read). Volatile does not order memory between threads: it is
    /// no substitute for a barrier or `__syncwarp` (see the warp-unrolled kernels).
    #[inline(always)]
    #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
    pub unsafe fn read_volatile(self, i: usize) -> T {
        #[cfg(not(target_arch = "nvptx64"))]
        if i >= self.len {
            self.out_of_bounds(i);
        }
        #[cfg(not(target_arch = "nvptx64"))]
        self.observe(i, 1, Access::Read);
        #[cfg(target_arch = "nvptx64")]
        // SAFETY: in bounds by the caller's promise; element i's window and generic addresses.
        unsafe {
            window::load_volatile(self.window + (i * core::mem::size_of::<T>()) as u64, self.ptr.add(i))
        }
        #[cfg(not(target_arch = "nvptx64"))]
        // SAFETY: in bounds (checked just above).
        unsafe {
            self.ptr.add(i).read_volatile()
        }
    }

    /// Writes element `i` with a volatile store (`st.volatile.shared`).
    ///
    /// # Safety
    /// As for [`read_volatile`](Self::read_volatile).
    #[inline(always)]
    #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
    pub unsafe fn write_volatile(self, i: usize, value: T) {
        #[cfg(not(target_arch = "nvptx64"))]
        if i >= self.len {
            self.out_of_bounds(i);
        }
        #[cfg(not(target_arch = "nvptx64"))]
        self.observe(i, 1, Access::Write);
        #[cfg(target_arch = "nvptx64")]
        // SAFETY: in bounds by the caller's promise; element i's window and generic addresses.
        unsafe {
            window::store_volatile(self.window + (i * core::mem::size_of::<T>()) as u64, self.ptr.add(i), value)
        }
        #[cfg(not(target_arch = "nvptx64"))]
        // SAFETY: in bounds (checked just above).
        unsafe {
            self.ptr.add(i).write_volatile(value)
        }
    }
}

/// 128-bit accesses and asynchronous copies (`cp.async`) for arrays of 32-bit words.
impl<T: Word> Shared<T> {
    /// Reports a vector access at element `i` that is out of bounds or not 16-byte aligned.
    #[cfg(not(target_arch = "nvptx64"))]
    #[track_caller]
    fn check_v4(self, i: usize) {
        if i + 4 > self.len {
            self.out_of_bounds(i + 3);
        }
        // SAFETY: only the address is computed (in bounds, checked above).
        let addr = unsafe { self.ptr.add(i) } as usize;
        if !addr.is_multiple_of(16) {
            super::emu::hooks().fault(super::emu::Fault::Misaligned {
                addr,
                align: 16,
                site: core::panic::Location::caller(),
            });
        }
    }

    /// Reads elements `i .. i + 4` with one 128-bit shared load (`ld.shared.v4.b32`,
    /// SASS `LDS.128`). A quarter warp (8 lanes) is served per cycle; its accesses are
    /// conflict-free when their 16-byte chunks fall in distinct groups of 4 banks (for
    /// example consecutive chunks, or chunks an odd number of chunks apart).
    ///
    /// # Safety
    /// `i + 4` is at most the length; the element `i` is 16-byte aligned; no other thread
    /// writes these elements concurrently (a barrier separates such a write from this read).
    #[inline(always)]
    #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
    pub unsafe fn read_v4(self, i: usize) -> [T; 4] {
        #[cfg(target_arch = "nvptx64")]
        {
            let (a, b, c, d): (u32, u32, u32, u32);
            // SAFETY: in bounds and aligned by the caller's promise; a shared-window address.
            unsafe {
                core::arch::asm!(
                    "ld.shared.v4.b32 {{{a}, {b}, {c}, {d}}}, [{w}];",
                    w = in(reg64) self.window + (i * 4) as u64,
                    a = out(reg32) a,
                    b = out(reg32) b,
                    c = out(reg32) c,
                    d = out(reg32) d,
                    options(pure, readonly, nostack, preserves_flags),
                );
            }
            [T::from_word(a), T::from_word(b), T::from_word(c), T::from_word(d)]
        }
        #[cfg(not(target_arch = "nvptx64"))]
        {
            self.check_v4(i);
            self.observe(i, 4, Access::Read);
            // SAFETY: in bounds and aligned (checked just above).
            unsafe { self.ptr.add(i).cast::<Vec4<T>>().read().0 }
        }
    }

    /// Writes elements `i .. i + 4` with one 128-bit shared store (`st.shared.v4.b32`).
    ///
    /// # Safety
    /// As for [`read_v4`](Self::read_v4), with no concurrent read or write of these elements.
    #[inline(always)]
    #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
    pub unsafe fn write_v4(self, i: usize, value: [T; 4]) {
        #[cfg(target_arch = "nvptx64")]
        // SAFETY: in bounds and aligned by the caller's promise; a shared-window address.
        unsafe {
            core::arch::asm!(
                "st.shared.v4.b32 [{w}], {{{a}, {b}, {c}, {d}}};",
                w = in(reg64) self.window + (i * 4) as u64,
                a = in(reg32) value[0].to_word(),
                b = in(reg32) value[1].to_word(),
                c = in(reg32) value[2].to_word(),
                d = in(reg32) value[3].to_word(),
                options(nostack, preserves_flags),
            );
        }
        #[cfg(not(target_arch = "nvptx64"))]
        {
            self.check_v4(i);
            self.observe(i, 4, Access::Write);
            // SAFETY: in bounds and aligned (checked just above).
            unsafe { self.ptr.add(i).cast::<Vec4<T>>().write(Vec4(value)) }
        }
    }

    /// Starts copying the 16 bytes at global address `src` into elements `i .. i + 4`
    /// without going through registers: PTX `cp.async.cg.shared.global [dst], [src], 16`
    /// (sm_80+; CUDA C `__pipeline_memcpy_async` / `cuda::memcpy_async`). The thread does not
    /// wait for the data: it goes on issuing instructions while the copy is in flight, and
    /// the `.cg` variant caches it in L2 only. The copy belongs to the thread's current
    /// *group*, which [`copy_async_commit`] closes; [`copy_async_wait`] waits for groups.
    /// The data is visible to this thread once its group is complete, and to the other
    /// threads of the block after a barrier that follows that wait.
    ///
    /// Built for sm_70 (no `cp.async`) it is a plain 128-bit global load followed by a
    /// 128-bit shared store: the same result, synchronously. In the emulator both sides are
    /// checked here (as that load and that store, by this thread), and the 16 bytes land only
    /// at the [`copy_async_wait`] that covers the copy's group: until then they are *in
    /// flight*, and any thread's access to them is reported (a missing wait).
    ///
    /// # Safety
    /// As for [`write_v4`](Self::write_v4) at `i`, until the copy's group is waited for
    /// (no thread touches these elements in between); `src` is 16 readable, 16-byte aligned
    /// bytes of **global** memory that nobody writes while the copy runs.
    #[inline(always)]
    #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
    pub unsafe fn copy_async_v4(self, i: usize, src: Global<T>) {
        #[cfg(all(target_arch = "nvptx64", target_feature = "sm_80"))]
        // SAFETY: the caller guarantees the destination (in bounds, aligned, untouched until
        // the wait) and 16 aligned readable global bytes at `src`; `cvta.to.global` gives the
        // global-window address `cp.async` requires.
        unsafe {
            core::arch::asm!(
                "{{",
                ".reg .b64 %g;",
                "cvta.to.global.u64 %g, {p};",
                "cp.async.cg.shared.global [{w}], [%g], 16;",
                "}}",
                w = in(reg64) self.window + (i * 4) as u64,
                p = in(reg64) src.raw(),
                options(nostack, preserves_flags),
            );
        }
        #[cfg(all(target_arch = "nvptx64", not(target_feature = "sm_80")))]
        // SAFETY: as above; a synchronous load and store of the same 16 bytes.
        unsafe {
            self.write_v4(i, src.load_v4(0))
        }
        #[cfg(not(target_arch = "nvptx64"))]
        {
            use super::emu::Path;
            let site = core::panic::Location::caller();
            // Both sides checked and counted now, as the GPU's `LDGSTS`
            // ([`Path::AsyncCopy`](super::emu::Path::AsyncCopy)), not as a load and a store; the
            // bytes move at the wait.
            hooks().copy_access(true, src.raw() as usize, 16, Access::Read, Path::AsyncCopy, site);
            self.check_v4(i);
            let dst = self.ptr.wrapping_add(i) as usize;
            hooks().copy_access(false, dst, 16, Access::Write, Path::AsyncCopy, site);
            let copy =
                super::emu::AsyncCopy { dst, src: src.raw() as usize, bytes: 16, done: super::emu::CopyDone::Group };
            hooks().async_copy(copy, site);
        }
    }

    /// [`copy_async_v4`](Self::copy_async_v4) with an L2 cache policy (`cp.async.cg …
    /// .L2::cache_hint [dst], [src], 16, policy`), typically
    /// [`l2_evict_first_policy`](super::global::l2_evict_first_policy): the input of a
    /// single-pass kernel is read once, so its lines may go first. Built for sm_90 only (the hint
    /// needs PTX ISA 7.4; the sm_70/sm_80 PTX is ISA 7.0); there and in the emulator it is
    /// `copy_async_v4` (the hint only changes what L2 keeps).
    ///
    /// # Safety
    /// As for [`copy_async_v4`](Self::copy_async_v4); `policy` comes from `createpolicy`.
    #[inline(always)]
    #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
    pub unsafe fn copy_async_v4_evict_first(self, i: usize, src: Global<T>, policy: u64) {
        #[cfg(all(target_arch = "nvptx64", target_feature = "sm_90"))]
        // SAFETY: as for copy_async_v4; the policy operand only steers L2 replacement.
        unsafe {
            core::arch::asm!(
                "{{",
                ".reg .b64 %g;",
                "cvta.to.global.u64 %g, {p};",
                "cp.async.cg.shared.global.L2::cache_hint [{w}], [%g], 16, {c};",
                "}}",
                w = in(reg64) self.window + (i * 4) as u64,
                p = in(reg64) src.raw(),
                c = in(reg64) policy,
                options(nostack, preserves_flags),
            );
        }
        #[cfg(not(all(target_arch = "nvptx64", target_feature = "sm_90")))]
        // SAFETY: forwarded from the caller.
        unsafe {
            let _ = policy;
            self.copy_async_v4(i, src)
        }
    }

    /// [`copy_async_v4`](Self::copy_async_v4) that asks L2 to fetch the whole 256-byte
    /// block around `src` from DRAM (`cp.async.cg … .L2::256B`), not only the 32-byte sectors
    /// requested: fewer, larger DRAM requests for a stream read in order. Built for sm_90 only
    /// (PTX ISA 7.4); for sm_70/sm_80 and in the emulator it is `copy_async_v4`.
    ///
    /// # Safety
    /// As for [`copy_async_v4`](Self::copy_async_v4).
    #[inline(always)]
    #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
    pub unsafe fn copy_async_v4_prefetch256(self, i: usize, src: Global<T>) {
        #[cfg(all(target_arch = "nvptx64", target_feature = "sm_90"))]
        // SAFETY: as for copy_async_v4; the prefetch size only widens what L2 fetches.
        unsafe {
            core::arch::asm!(
                "{{",
                ".reg .b64 %g;",
                "cvta.to.global.u64 %g, {p};",
                "cp.async.cg.shared.global.L2::256B [{w}], [%g], 16;",
                "}}",
                w = in(reg64) self.window + (i * 4) as u64,
                p = in(reg64) src.raw(),
                options(nostack, preserves_flags),
            );
        }
        #[cfg(not(all(target_arch = "nvptx64", target_feature = "sm_90")))]
        // SAFETY: forwarded from the caller.
        unsafe {
            self.copy_async_v4(i, src)
        }
    }
}

/// Closes this thread's current group of [`Shared::copy_async_v4`] copies (PTX
/// `cp.async.commit_group`; CUDA C `__pipeline_commit()`). A group may be empty; groups
/// complete in the order they were committed. A no-op for sm_70, where the copies are
/// synchronous; the emulator keeps the groups as the GPU does.
#[inline(always)]
pub fn copy_async_commit() {
    #[cfg(all(target_arch = "nvptx64", target_feature = "sm_80"))]
    // SAFETY: closing a copy group has no preconditions.
    unsafe {
        core::arch::asm!("cp.async.commit_group;", options(nostack, preserves_flags))
    }
    #[cfg(not(target_arch = "nvptx64"))]
    hooks().async_commit(false);
}

/// Waits until at most `PENDING` of this thread's committed copy groups are still in flight
/// (PTX `cp.async.wait_group PENDING`; CUDA C `__pipeline_wait_prior(PENDING)`): with `k`
/// groups committed, groups `0 .. k - PENDING` are complete and their data is visible to
/// this thread. Other threads see it after a barrier that follows their own waits.
/// `PENDING` is 0, 1, 2 or 3 (a compile error otherwise). A no-op for sm_70; in the emulator
/// the covered groups' copies land here (copies not yet committed stay in flight, as on the
/// GPU).
#[inline(always)]
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
pub fn copy_async_wait<const PENDING: u32>() {
    const { assert!(PENDING <= 3, "copy_async_wait: PENDING is 0, 1, 2 or 3") };
    #[cfg(all(target_arch = "nvptx64", target_feature = "sm_80"))]
    // SAFETY: waiting has no preconditions; the asm is a memory clobber (no `nomem`), so the
    // compiler does not move shared loads above it.
    unsafe {
        match PENDING {
            0 => core::arch::asm!("cp.async.wait_group 0;", options(nostack, preserves_flags)),
            1 => core::arch::asm!("cp.async.wait_group 1;", options(nostack, preserves_flags)),
            2 => core::arch::asm!("cp.async.wait_group 2;", options(nostack, preserves_flags)),
            _ => core::arch::asm!("cp.async.wait_group 3;", options(nostack, preserves_flags)),
        }
    }
    #[cfg(not(target_arch = "nvptx64"))]
    hooks().async_wait(false, PENDING, core::panic::Location::caller());
}

/// The block's dynamic shared memory as an array of `T` (CUDA C:
/// `extern __shared__ T smem[];`). Its size is the launch's shared-memory bytes, which the
/// host sets per launch; on the GPU the length is not known to the kernel, so the caller
/// states how many elements it will use.
///
/// # Safety
/// The launch gave at least `len * size_of::<T>()` bytes of dynamic shared memory. In the
/// emulator a larger `len` than the launch provides is reported at the first access past
/// the real size.
#[inline(always)]
pub unsafe fn dynamic_shared<T: Copy>(len: usize) -> Shared<T> {
    #[cfg(target_arch = "nvptx64")]
    {
        let ptr = core::intrinsics::gpu::gpu_launch_sized_workgroup_mem::<T>();
        // SAFETY: the caller promises the launch provided `len` elements.
        unsafe { Shared::from_raw(ptr, len) }
    }
    #[cfg(not(target_arch = "nvptx64"))]
    {
        let (ptr, bytes) = super::emu::hooks().dynamic_shared(core::mem::size_of::<T>());
        let real = bytes / core::mem::size_of::<T>().max(1);
        // SAFETY: the emulator allocated `bytes` bytes of block-shared memory, aligned to
        // 16; the view is clamped to what exists, so accesses past it are reported.
        unsafe { Shared::from_raw(ptr.cast::<T>(), len.min(real)) }
    }
}

/// Declares a statically sized shared array and evaluates to its [`Shared`] view
/// (CUDA C: `__shared__ T NAME[LEN];`).
///
/// ```text
/// let smem = static_shared!(SMEM: [i32; 1024]);
/// ```
///
/// Use it once per array, at the top level of a kernel body (not in a loop or a helper
/// that two kernels inline twice): on the GPU it declares a PTX `.shared` variable named
/// `NAME` in the kernel's scope. `LEN` may use const generic parameters of the kernel.
#[cfg_attr(target_arch = "nvptx64", allow_internal_unstable(asm_experimental_arch))]
#[macro_export]
macro_rules! static_shared {
    ($name:ident : [$ty:ty; $len:expr]) => {{
        #[cfg(target_arch = "nvptx64")]
        {
            let ptr: *mut $ty;
            // SAFETY: declares a kernel-scoped `.shared` array of the given size, aligned to
            // 16, and converts its address to a generic pointer; no memory is touched.
            unsafe {
                ::core::arch::asm!(
                    concat!(
                        ".shared .align 16 .b8 ", stringify!($name), "[{bytes}];\n\t",
                        "cvta.shared.u64 {ptr}, ", stringify!($name), ";"
                    ),
                    bytes = const ($len) * ::core::mem::size_of::<$ty>(),
                    ptr = out(reg64) ptr,
                    options(nomem, nostack, preserves_flags),
                );
            }
            // SAFETY: `ptr` is the array just declared, `$len` elements long.
            unsafe { $crate::shared::Shared::<$ty>::from_raw(ptr, $len) }
        }
        #[cfg(not(target_arch = "nvptx64"))]
        {
            let len: usize = $len;
            let ptr = $crate::emu::hooks().static_shared(
                concat!(module_path!(), "::", stringify!($name)),
                len * ::core::mem::size_of::<$ty>(),
                ::core::mem::size_of::<$ty>(),
                16,
            );
            // SAFETY: the emulator allocated `len` elements for this block, aligned to 16.
            unsafe { $crate::shared::Shared::<$ty>::from_raw(ptr.cast::<$ty>(), len) }
        }
    }};
}
