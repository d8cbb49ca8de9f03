//! Global-memory loads wider or more specialised than a plain dereference.

use super::warp::Word;

/// Four 32-bit words, 16-byte aligned: one 128-bit memory transaction per thread.
#[derive(Clone, Copy)]
#[repr(C, align(16))]
pub struct Vec4<T>(pub [T; 4]);

/// Loads four consecutive words with one 128-bit load (PTX `ld.global.v4.b32`; CUDA C:
/// reading through an `int4*`). A warp then moves 512 bytes per instruction, four times
/// what scalar loads move, so fewer load instructions keep more bytes in flight.
///
/// # Safety
/// `ptr` is valid for reading four `T`, and is 16-byte aligned (the GPU faults with
/// `CUDA_ERROR_MISALIGNED_ADDRESS` otherwise; the emulator reports the address).
#[inline(always)]
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
pub unsafe fn load_v4<T: Word>(ptr: *const T) -> [T; 4] {
    #[cfg(not(target_arch = "nvptx64"))]
    if !(ptr as usize).is_multiple_of(16) {
        super::emu::hooks().fault(super::emu::Fault::Misaligned {
            addr: ptr as usize,
            align: 16,
            site: core::panic::Location::caller(),
        });
    }
    // SAFETY: the caller guarantees 16 readable, 16-byte aligned bytes.
    unsafe { ptr.cast::<Vec4<T>>().read().0 }
}

/// [`load_v4`] through the read-only (non-coherent) data path: PTX `ld.global.nc.v4.b32`,
/// CUDA C `__ldg(const int4*)`, what CUB's `LOAD_LDG` loads use. The load may be served
/// from the SM's read-only cache, which the hardware does not keep coherent with writes made
/// while the kernel runs; in exchange it needs no coherence bookkeeping. For a stream of
/// reads that no thread of the kernel writes (a reduction's input), it is the natural load.
///
/// # Safety
/// As for [`load_v4`] (valid for reading four `T`, 16-byte aligned, in **global** memory),
/// and no thread writes those 16 bytes while the kernel runs (the value read is otherwise
/// undefined: it may be stale).
#[inline(always)]
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
pub unsafe fn load_v4_nc<T: Word>(ptr: *const T) -> [T; 4] {
    #[cfg(target_arch = "nvptx64")]
    {
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
    // SAFETY: forwarded from the caller; the emulator's global memory is coherent host memory,
    // so the plain load (with its alignment check) is what the read-only path returns there.
    unsafe {
        load_v4(ptr)
    }
}

/// Stores four consecutive words with one 128-bit store (PTX `st.global.v4.b32`; CUDA C:
/// writing through an `int4*`): the store-side twin of [`load_v4`], so that a kernel that
/// writes as much as it reads (a scan) moves its output in as few instructions as its input.
///
/// # Safety
/// `ptr` is valid for writing four `T`, and is 16-byte aligned (the GPU faults with
/// `CUDA_ERROR_MISALIGNED_ADDRESS` otherwise; the emulator reports the address); no other
/// thread accesses those 16 bytes concurrently.
#[inline(always)]
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
pub unsafe fn store_v4<T: Word>(ptr: *mut T, value: [T; 4]) {
    #[cfg(not(target_arch = "nvptx64"))]
    if !(ptr as usize).is_multiple_of(16) {
        super::emu::hooks().fault(super::emu::Fault::Misaligned {
            addr: ptr as usize,
            align: 16,
            site: core::panic::Location::caller(),
        });
    }
    // SAFETY: the caller guarantees 16 writable, 16-byte aligned bytes that no other thread
    // touches meanwhile.
    unsafe { ptr.cast::<Vec4<T>>().write(Vec4(value)) }
}

/// [`store_v4`] with the *streaming* cache operator: PTX `st.global.cs.v4.b32` (CUDA C
/// `__stcs(int4*)`). `.cs` marks the line as likely written once and not read again, so L2
/// evicts it first and it does not push out lines other blocks are still loading. For a
/// scan's output, which nobody reads during the kernel, it is the natural store; whether it is
/// faster is measured (`lookback_stream_store`).
///
/// # Safety
/// As for [`store_v4`], and `ptr` is in **global** memory. (The hint is emitted for sm_90;
/// the sm_70/sm_80 builds, and the emulator, use [`store_v4`].)
#[inline(always)]
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
pub unsafe fn store_v4_streaming<T: Word>(ptr: *mut T, value: [T; 4]) {
    #[cfg(all(target_arch = "nvptx64", target_feature = "sm_90"))]
    // SAFETY: the caller guarantees 16 writable, 16-byte aligned bytes of global memory that
    // no other thread touches; `cvta.to.global` gives the global-window address.
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
    #[cfg(not(all(target_arch = "nvptx64", target_feature = "sm_90")))]
    // SAFETY: forwarded from the caller; the emulator has no caches, so the hint changes nothing.
    unsafe {
        store_v4(ptr, value)
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
