//! What the measurements, and the host's waits, need on the device; no lesson here.

use crate::device::atomic::store_release_sys_u32;
use crate::device::clock::globaltimer;
use crate::device::global::{Global, GlobalMut};
use crate::kernel;

kernel! {
    /// Keeps the stream busy for `ns` nanoseconds, so that what the host enqueues behind it
    /// is queued before the GPU gets to it.
    ///
    /// The host's timing (`reduce_scan::Backend::time`) launches it (one thread) before the start
    /// event of every timed run. Without it the GPU is idle when the start event is recorded,
    /// and the window between the two events also holds the CPU's time to issue the launch
    /// (a few microseconds: most of a 2^20 reduction). With it the window holds the GPU's
    /// work only, which is what Nsight Compute measures and what the CUDA C harnesses measure
    /// the same way (`cub/harness_common.cuh`). nvbench calls the same device a blocking
    /// kernel.
    ///
    /// # Safety
    /// None beyond a launch of one thread: the kernel touches no memory.
    pub unsafe fn stream_hold(ns: u32) {
        let start = globaltimer();
        while globaltimer().wrapping_sub(start) < u64::from(ns) {}
    }
}

kernel! {
    /// Hands the answer of a synchronous call to the host without a copy or a stream
    /// synchronisation: reads the `bytes` (4 or 8) at `src`, writes them zero-extended into
    /// `value`, then stores `seq` into `flag` with a system-scope release (`st.release.sys`).
    /// `value` and `flag` are page-locked host memory mapped into the device; the host
    /// (`reduce_scan::Backend::read_element`) queues this one-thread launch behind the work and
    /// spins on `flag` until it reads `seq`, and the release makes `value` visible first.
    ///
    /// # Safety
    /// `src` holds `bytes` readable bytes, aligned to `bytes`; `value` and `flag` are mapped
    /// host words; one thread.
    pub unsafe fn publish_answer(src: Global<u8>, value: GlobalMut<u64>, flag: GlobalMut<u32>, seq: u32, bytes: u32) {
        // SAFETY: the caller's buffers and alignment.
        unsafe {
            let v = if bytes == 8 { src.cast::<u64>().read(0) } else { u64::from(src.cast::<u32>().read(0)) };
            value.write(0, v);
            store_release_sys_u32(flag, seq);
        }
    }
}
