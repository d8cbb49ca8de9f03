//! The per-multiprocessor cycle counter.

#[cfg(target_arch = "nvptx64")]
unsafe extern "C" {
    #[link_name = "llvm.nvvm.read.ptx.sreg.clock64"]
    fn nvvm_clock64() -> u64;
}

/// `clock64()`: the multiprocessor's 64-bit cycle counter (PTX `%clock64`).
///
/// Each multiprocessor has its own counter, so differences are meaningful within one SM;
/// the sum-of-squares kernels take the earliest start and the latest end over all blocks,
/// as the tutorial they follow does. In the emulator the counter is host nanoseconds since
/// the launch began: comparable between threads, but not GPU cycles.
#[inline(always)]
pub fn clock64() -> u64 {
    #[cfg(target_arch = "nvptx64")]
    // SAFETY: reading a special register has no preconditions.
    unsafe {
        nvvm_clock64()
    }
    #[cfg(not(target_arch = "nvptx64"))]
    super::emu::hooks().clock64()
}

#[cfg(target_arch = "nvptx64")]
unsafe extern "C" {
    #[link_name = "llvm.nvvm.read.ptx.sreg.globaltimer"]
    fn nvvm_globaltimer() -> u64;
}

/// `%globaltimer`: the GPU's nanosecond clock, the same on every multiprocessor (it ticks in
/// steps of up to a microsecond on some GPUs). In the emulator: host nanoseconds since the
/// launch began, as [`clock64`].
#[inline(always)]
pub fn globaltimer() -> u64 {
    #[cfg(target_arch = "nvptx64")]
    // SAFETY: reading a special register has no preconditions.
    unsafe {
        nvvm_globaltimer()
    }
    #[cfg(not(target_arch = "nvptx64"))]
    super::emu::hooks().clock64()
}
