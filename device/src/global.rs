//! Global memory: the device buffers a kernel receives as arguments.
//!
//! A kernel never holds a raw pointer to global memory. Its parameters are
//! [`Global<T>`] (memory it only reads: CUDA C `const T *g_idata`) and [`GlobalMut<T>`]
//! (memory it may write: `T *g_odata`), and every access is a method of those types:
//!
//! | method | PTX | CUDA C |
//! |---|---|---|
//! | [`read`](Global::read) / [`write`](GlobalMut::write) | `ld` / `st` (`ld.global` / `st.global` where LLVM can tell the address is global, below) | `g_idata[i]`, `g_odata[i] = v` |
//! | [`offset`](Global::offset) | `add` | `g_idata + i` |
//! | [`load_v4`](Global::load_v4) / [`store_v4`](GlobalMut::store_v4) | `ld.v4.b32` / `st.v4.b32` (`.global` where LLVM can tell) | `reinterpret_cast<const int4 *>(p)[i]` |
//! | [`load_v4_nc`](Global::load_v4_nc) | `ld.global.nc.v4.b32` | `__ldg(const int4 *)` |
//! | [`store_v4_streaming`](GlobalMut::store_v4_streaming) | `st.global.cs.v4.b32` | `__stcs(int4 *)` |
//!
//! `read`, `write`, `load_v4` and `store_v4` are plain loads and stores: LLVM's NVPTX backend
//! gives them the `.global` state space where it can prove the address global (a pointer that
//! is a kernel's own parameter), and otherwise the generic form (`ld.v4.b32`, `LD.E.128` in the
//! SASS), which the hardware resolves to global memory. A [`Slice`](super::slice::Slice)'s
//! pointer, which travels in a struct with its length, gets the generic form: the README's
//! histogram reads that way, and on an H200 it measured faster than with `ld.global.v4.b32`
//! forced by inline PTX (21.15 against 19.85 µs at 2^24,
//! `docs/measurements/2026-11-29-h200/hist-lean-c580121/call4`). nvcc, which knows that a kernel's
//! pointers are global, writes `ld.global` for the same C. The `_nc` and `_streaming` forms are
//! inline PTX, always `.global`.
//!
//! Atomics on global words ([`atomic`](super::atomic)) and asynchronous copies into shared
//! memory ([`Shared::copy_async_v4`](super::shared::Shared::copy_async_v4)) take these types
//! too, so nothing outside the device layer dereferences a global address.
//!
//! Both types are `#[repr(transparent)]` over the pointer: a kernel parameter of either type
//! is the same 64-bit `.param` as a raw pointer, and on the GPU every method is the plain
//! pointer operation it replaces, always inlined: the PTX is what `*p.add(i)` gave.
//!
//! **In the emulator** every access first goes to the emulator ([`emu::Hooks::global_access`]),
//! which checks it against the live device allocations before any host memory is touched:
//! out of bounds, use after free, misaligned, a read of memory nothing wrote, and a race with
//! another thread of the block (or another block) are reported with the kernel, block,
//! thread and source line; the access does not happen.
//!
//! [`emu::Hooks::global_access`]: super::emu::Hooks::global_access

use super::warp::Word;

/// Four 32-bit words, 16-byte aligned: one 128-bit memory transaction per thread.
#[derive(Clone, Copy)]
#[repr(C, align(16))]
pub struct Vec4<T>(pub [T; 4]);

/// Global memory a kernel reads: a pointer to element 0 of a device buffer (or of a part of
/// one), CUDA C `const T *`. Copying it copies the pointer, not the memory.
#[repr(transparent)]
pub struct Global<T> {
    ptr: *const T,
}

/// Global memory a kernel may read and write: CUDA C `T *`. Copying it copies the pointer.
#[repr(transparent)]
pub struct GlobalMut<T> {
    ptr: *mut T,
}

impl<T> Clone for Global<T> {
    #[inline(always)]
    fn clone(&self) -> Self {
        *self
    }
}
impl<T> Copy for Global<T> {}
impl<T> Clone for GlobalMut<T> {
    #[inline(always)]
    fn clone(&self) -> Self {
        *self
    }
}
impl<T> Copy for GlobalMut<T> {}

/// The host passes device addresses as raw pointers (`DeviceBuffer::as_ptr`); a launch turns
/// them into kernel parameters with `into()`.
impl<T> From<*const T> for Global<T> {
    #[inline(always)]
    fn from(ptr: *const T) -> Self {
        Self { ptr }
    }
}
impl<T> From<*mut T> for Global<T> {
    #[inline(always)]
    fn from(ptr: *mut T) -> Self {
        Self { ptr }
    }
}
impl<T> From<*mut T> for GlobalMut<T> {
    #[inline(always)]
    fn from(ptr: *mut T) -> Self {
        // In an emulated thread, the emulator learns that the kernel may write the buffer (host
        // code that makes a parameter runs without the emulator, or outside its threads).
        #[cfg(not(target_arch = "nvptx64"))]
        if let Some(hooks) = super::emu::try_hooks() {
            hooks.writable(ptr as usize);
        }
        Self { ptr }
    }
}

impl<T> Global<T> {
    /// The buffer at an address the host holds with its element type erased (a typed
    /// registry keeps one pointer type for every element type).
    #[inline(always)]
    pub fn from_erased(ptr: *const u8) -> Self {
        Self { ptr: ptr.cast() }
    }
}
impl<T> GlobalMut<T> {
    /// As [`Global::from_erased`], writable.
    #[inline(always)]
    pub fn from_erased(ptr: *mut u8) -> Self {
        #[cfg(not(target_arch = "nvptx64"))]
        super::emu::hooks().writable(ptr as usize);
        Self { ptr: ptr.cast() }
    }
}

/// Reports an access to the emulator, which refuses (reports and unwinds) a bad one before it
/// happens. Host builds only.
#[cfg(not(target_arch = "nvptx64"))]
#[inline(always)]
#[track_caller]
fn observe<T>(ptr: *const T, bytes: usize, access: super::emu::Access) {
    super::emu::hooks().global_access(ptr as usize, bytes, access, core::panic::Location::caller());
}

/// The methods both types share, on their pointer `self.ptr`.
macro_rules! common {
    ($ty:ident, $ptr:ty) => {
        impl<T> $ty<T> {
            /// The address, for alignment arithmetic (`addr % 16`).
            #[inline(always)]
            pub fn addr(self) -> usize {
                self.ptr as usize
            }

            /// Whether the host passed a null pointer (an optional buffer left out).
            #[inline(always)]
            pub fn is_null(self) -> bool {
                self.ptr.is_null()
            }

            /// The same address as a buffer of `U` (CUDA C `reinterpret_cast<U *>`).
            #[inline(always)]
            pub fn cast<U>(self) -> $ty<U> {
                $ty { ptr: self.ptr.cast() }
            }

            /// The pointer to element `i` (CUDA C `p + i`).
            ///
            /// # Safety
            /// `i` is at most the buffer's length (one past the end is allowed, as in C).
            #[inline(always)]
            pub unsafe fn offset(self, i: usize) -> Self {
                #[cfg(target_arch = "nvptx64")]
                // SAFETY: the caller keeps the result within the buffer or one past its end.
                let ptr = unsafe { self.ptr.add(i) };
                // The emulator checks each access, not the arithmetic: a pointer past the end
                // is reported when it is used, as on the GPU.
                #[cfg(not(target_arch = "nvptx64"))]
                let ptr = self.ptr.wrapping_add(i);
                Self { ptr }
            }

            /// [`offset`](Self::offset) with wrapping arithmetic (CUDA C `p + i` where the
            /// result may be past the buffer and is used only when it is not): no
            /// precondition, since nothing is accessed.
            #[inline(always)]
            pub fn wrapping_offset(self, i: usize) -> Self {
                Self { ptr: self.ptr.wrapping_add(i) }
            }

            /// The address of element `i`, without a check (the emulator checks the access).
            #[inline(always)]
            fn at(self, i: usize) -> $ptr {
                #[cfg(target_arch = "nvptx64")]
                // SAFETY: every caller is an access whose own contract puts `i` in the buffer.
                let p = unsafe { self.ptr.add(i) };
                #[cfg(not(target_arch = "nvptx64"))]
                let p = self.ptr.wrapping_add(i);
                p
            }
        }

        impl<T: Copy> $ty<T> {
            /// Reads element `i` (CUDA C `p[i]`).
            ///
            /// # Safety
            /// Element `i` is in the buffer, aligned, and no other thread writes it concurrently.
            #[inline(always)]
            #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
            pub unsafe fn read(self, i: usize) -> T {
                let p = self.at(i);
                #[cfg(not(target_arch = "nvptx64"))]
                observe(p, core::mem::size_of::<T>(), super::emu::Access::Read);
                // SAFETY: in the buffer by the caller's promise (and, in the emulator, checked).
                unsafe { p.read() }
            }
        }

        impl<T: Word> $ty<T> {
            /// Loads elements `i .. i + 4` with one 128-bit load (PTX `ld.v4.b32`, `.global`
            /// where LLVM can tell: the module's table above; CUDA C: reading through an
            /// `int4 *`). A warp then moves 512 bytes per instruction, four
            /// times what scalar loads move, so fewer load instructions keep more bytes in flight.
            ///
            /// # Safety
            /// The four elements are in the buffer and element `i` is 16-byte aligned (the GPU
            /// faults with `CUDA_ERROR_MISALIGNED_ADDRESS` otherwise; the emulator reports it).
            #[inline(always)]
            #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
            pub unsafe fn load_v4(self, i: usize) -> [T; 4] {
                let p = self.at(i);
                #[cfg(not(target_arch = "nvptx64"))]
                observe(p, 16, super::emu::Access::Read);
                // SAFETY: 16 readable, 16-byte aligned bytes by the caller's promise.
                unsafe { p.cast::<Vec4<T>>().read().0 }
            }
        }
    };
}

common!(Global, *const T);
common!(GlobalMut, *mut T);

impl<T> GlobalMut<T> {
    /// The same memory, read-only.
    #[inline(always)]
    pub fn as_const(self) -> Global<T> {
        Global { ptr: self.ptr }
    }
}

impl<T> Global<T> {
    /// The raw address, for the device layer's own instructions (`cp.async`, bulk copies).
    #[inline(always)]
    pub(super) fn raw(self) -> *const T {
        self.ptr
    }
}

impl<T> Global<T> {
    /// Asks L2 to fetch the line holding element `i` (PTX `prefetch.global.L2`; CUDA C++
    /// `cuda::ptx::prefetch_L2(p)` of libcu++). A hint: it moves no
    /// data into registers or shared memory, and the kernel goes on without waiting for it.
    /// The emulator, which has no caches, checks that the element is in a buffer (an
    /// out-of-bounds prefetch is reported as an out-of-bounds read is) and moves nothing.
    ///
    /// # Safety
    /// Element `i` is in the buffer.
    #[inline(always)]
    #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
    pub unsafe fn prefetch_l2(self, i: usize) {
        #[cfg(target_arch = "nvptx64")]
        {
            let ptr = self.at(i);
            // SAFETY: an address in the buffer (the caller's promise); a prefetch reads nothing
            // the kernel sees and writes nothing.
            unsafe {
                core::arch::asm!(
                    "{{",
                    ".reg .b64 %g;",
                    "cvta.to.global.u64 %g, {p};",
                    "prefetch.global.L2 [%g];",
                    "}}",
                    p = in(reg64) ptr,
                    options(nostack, preserves_flags),
                );
            }
        }
        #[cfg(not(target_arch = "nvptx64"))]
        super::emu::hooks().copy_access(
            true,
            self.at(i) as usize,
            core::mem::size_of::<T>(),
            super::emu::Access::Read,
            super::emu::Path::Prefetch,
            core::panic::Location::caller(),
        );
    }
}

impl<T> GlobalMut<T> {
    /// The raw address, for the device layer's own instructions (atomics).
    #[inline(always)]
    pub(super) fn raw(self) -> *mut T {
        self.ptr
    }
}

impl<T: Copy> GlobalMut<T> {
    /// Writes element `i` (CUDA C `p[i] = value`).
    ///
    /// # Safety
    /// Element `i` is in the buffer, aligned, and no other thread reads or writes it
    /// concurrently.
    #[inline(always)]
    #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
    pub unsafe fn write(self, i: usize, value: T) {
        let p = self.at(i);
        #[cfg(not(target_arch = "nvptx64"))]
        observe(p, core::mem::size_of::<T>(), super::emu::Access::Write);
        // SAFETY: in the buffer by the caller's promise (and, in the emulator, checked).
        unsafe { p.write(value) }
    }
}

impl<T: Word> Global<T> {
    /// [`load_v4`](Self::load_v4) through the read-only (non-coherent) data path: PTX
    /// `ld.global.nc.v4.b32`, CUDA C `__ldg(const int4 *)`, what CUB's `LOAD_LDG` loads use.
    /// The load may be served from the SM's read-only cache, which the hardware does not keep
    /// coherent with writes made while the kernel runs; in exchange it needs no coherence
    /// bookkeeping. For a stream of reads that no thread of the kernel writes (a reduction's
    /// input), it is the natural load.
    ///
    /// # Safety
    /// As for [`load_v4`](Self::load_v4), and no thread writes those 16 bytes while the kernel
    /// runs (the value read is otherwise undefined: it may be stale).
    #[inline(always)]
    #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
    pub unsafe fn load_v4_nc(self, i: usize) -> [T; 4] {
        #[cfg(target_arch = "nvptx64")]
        {
            let ptr = self.at(i);
            let (a, b, c, d): (u32, u32, u32, u32);
            // SAFETY: the caller guarantees 16 readable, 16-byte aligned bytes of global memory
            // that nobody writes during the kernel. `cvta.to.global` turns the generic address
            // into the global window's address (the same number on every GPU so far; the
            // conversion is what PTX requires before a `.global` access and costs nothing).
            unsafe {
                core::arch::asm!(
                    "{{",
                    ".reg .b64 %g;",
                    "cvta.to.global.u64 %g, {p};",
                    "ld.global.nc.v4.b32 {{{a}, {b}, {c}, {d}}}, [%g];",
                    "}}",
                    p = in(reg64) ptr,
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
        // SAFETY: forwarded from the caller; the emulator's global memory is coherent host
        // memory, so the plain load (with its checks) is what the read-only path returns there.
        unsafe {
            self.load_v4(i)
        }
    }
}

impl<T: Word> GlobalMut<T> {
    /// Stores elements `i .. i + 4` with one 128-bit store (PTX `st.v4.b32`, `.global` where
    /// LLVM can tell; CUDA C: writing through an `int4 *`): the store-side twin of [`load_v4`](Self::load_v4), so that
    /// a kernel that writes as much as it reads (a scan) moves its output in as few instructions
    /// as its input.
    ///
    /// # Safety
    /// The four elements are in the buffer, element `i` is 16-byte aligned (the GPU faults with
    /// `CUDA_ERROR_MISALIGNED_ADDRESS` otherwise; the emulator reports it), and no other thread
    /// accesses those 16 bytes concurrently.
    #[inline(always)]
    #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
    pub unsafe fn store_v4(self, i: usize, value: [T; 4]) {
        let p = self.at(i);
        #[cfg(not(target_arch = "nvptx64"))]
        observe(p, 16, super::emu::Access::Write);
        // SAFETY: 16 writable, 16-byte aligned bytes that no other thread touches meanwhile.
        unsafe { p.cast::<Vec4<T>>().write(Vec4(value)) }
    }

    /// [`store_v4`](Self::store_v4) with the *streaming* cache operator: PTX
    /// `st.global.cs.v4.b32` (CUDA C `__stcs(int4 *)`). `.cs` marks the line as likely written
    /// once and not read again, so L2 evicts it first and it does not push out lines other
    /// blocks are still loading. For a scan's output, which nobody reads during the kernel, it
    /// is the natural store; whether it is faster is measured (`lookback_stream_store`).
    ///
    /// # Safety
    /// As for [`store_v4`](Self::store_v4). (The hint is emitted for sm_90; the sm_70/sm_80
    /// builds, and the emulator, use [`store_v4`](Self::store_v4).)
    #[inline(always)]
    #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
    pub unsafe fn store_v4_streaming(self, i: usize, value: [T; 4]) {
        #[cfg(all(target_arch = "nvptx64", target_feature = "sm_90"))]
        // SAFETY: forwarded from the caller.
        unsafe {
            store_v4_streaming(self.at(i), value)
        }
        #[cfg(not(all(target_arch = "nvptx64", target_feature = "sm_90")))]
        // SAFETY: forwarded from the caller; the emulator has no caches, so the hint changes
        // nothing.
        unsafe {
            self.store_v4(i, value)
        }
    }
}

/// `st.global.cs.v4.b32` at `ptr` (sm_90 builds).
///
/// # Safety
/// `ptr` is 16 writable, 16-byte aligned bytes of global memory that no other thread touches.
#[cfg(all(target_arch = "nvptx64", target_feature = "sm_90"))]
#[inline(always)]
unsafe fn store_v4_streaming<T: Word>(ptr: *mut T, value: [T; 4]) {
    // SAFETY: the caller's promise; `cvta.to.global` gives the global-window address.
    unsafe {
        core::arch::asm!(
            "{{",
            ".reg .b64 %g;",
            "cvta.to.global.u64 %g, {p};",
            "st.global.cs.v4.b32 [%g], {{{a}, {b}, {c}, {d}}};",
            "}}",
            p = in(reg64) ptr,
            a = in(reg32) value[0].to_word(),
            b = in(reg32) value[1].to_word(),
            c = in(reg32) value[2].to_word(),
            d = in(reg32) value[3].to_word(),
            options(nostack, preserves_flags),
        );
    }
}

/// An L2 cache policy that marks every line it is applied to as *evict first* (PTX
/// `createpolicy.fractional.L2::evict_first.b64 policy, 1.0`): the operand of
/// [`Shared::copy_async_v4_evict_first`](super::shared::Shared::copy_async_v4_evict_first).
/// An opaque 64-bit value; 0 in the emulator, which has no caches, and in the sm_70/sm_80
/// builds (PTX ISA 7.0 has no `createpolicy`).
#[inline(always)]
pub fn l2_evict_first_policy() -> u64 {
    #[cfg(all(target_arch = "nvptx64", target_feature = "sm_90"))]
    {
        let policy: u64;
        // SAFETY: creating a policy value reads and writes no memory.
        unsafe {
            core::arch::asm!(
                "createpolicy.fractional.L2::evict_first.b64 {p}, 1.0;",
                p = out(reg64) policy,
                options(pure, nomem, nostack, preserves_flags),
            );
        }
        policy
    }
    #[cfg(not(all(target_arch = "nvptx64", target_feature = "sm_90")))]
    {
        0
    }
}
