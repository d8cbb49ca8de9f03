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
