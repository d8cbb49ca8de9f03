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

/// `__nanosleep(ns)`: suspends the calling thread for roughly `ns` nanoseconds (PTX
/// `nanosleep.u32`, sm_70+; the hardware picks a delay in `[0, 2·ns]`, at most 1 ms). A
/// spinning thread that sleeps between its polls leaves the memory system's queues to the
/// threads that do useful work. In the emulator it only lets the other threads run, as a
/// spin's atomic load does.
#[inline(always)]
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
pub fn nanosleep(ns: u32) {
    #[cfg(target_arch = "nvptx64")]
    // SAFETY: `nanosleep` only delays the thread; it touches no memory.
    unsafe {
        core::arch::asm!("nanosleep.u32 {t};", t = in(reg32) ns, options(nostack));
    }
    #[cfg(not(target_arch = "nvptx64"))]
    {
        let _ = ns;
        super::emu::hooks().poll(core::panic::Location::caller());
    }
}
