//! What the measurements need on the device; no lesson here.

use crate::device::clock::globaltimer;
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
