use crate::device::kernel;
use crate::device::slice::{AtomicSlice, Slice, ThreadIndex};

kernel! {
    /// The 256-bin histogram of `input`'s bytes, every byte counted with an `atomicAdd` on
    /// its bin in global memory (*CUDA by Example*, §9.4, its first `histo_kernel`).
    ///
    /// # Concept
    /// **Atomics make a scatter safe.** Two threads that read a bin's count, add one and write
    /// it back at the same time lose one of the two counts; an atomic read-modify-write
    /// (`atomicAdd`, PTX `red.global.add`) is one indivisible step at the memory (L2 for global
    /// memory), so every count lands, in whatever order the threads come.
    ///
    /// # Previous problem → fix
    /// The first kernel of the histogram lesson: what a histogram needs that a sum does not is
    /// a write to a place the data chooses, so the threads' writes collide. This kernel makes
    /// them atomic, and pays for it: one global atomic per byte, `n` in all, onto 256 words,
    /// which L2 applies one after another on each word (a skewed input queues them all on
    /// one). `histogram_shared` counts in shared memory first.
    ///
    /// # Execution
    /// 1. Thread `g` of the grid takes bytes `g`, `g + G`, `g + 2G`, … (`G` the grid's
    ///    threads: a grid-stride loop).
    /// 2. For each, `atomicAdd(&hist[byte], 1)`.
    ///
    /// ```text
    ///  byte 7 ──► atomicAdd(hist[7]) ─┐
    ///  byte 7 ──► atomicAdd(hist[7]) ─┼─► L2: one add after another on hist[7]
    ///  byte 3 ──► atomicAdd(hist[3]) ─┘
    /// ```
    ///
    /// # Launch
    /// Any grid and block (a grid of the GPU's size, as `grid_stride`'s); no shared memory.
    ///
    /// # Preconditions
    /// `hist` holds 256 counters ([`HISTOGRAM_BINS`](super::HISTOGRAM_BINS)), zeroed by the
    /// host (the kernel adds to them).
    ///
    /// # Safety
    /// A safe function: the input is read through its slice (in bounds by the loop), and each
    /// count goes in through the atomic slice, whose index (a byte) is below its 256 counters.
    ///
    /// # Measured
    /// `./x learn 26 --gpu` with this kernel as the learner's file, NVIDIA H200, 2^24 random
    /// bytes, block 512, a grid of the GPU's size (`docs/measurements/2026-11-30-h200/learn-gpu-00ff4ce/learn-gpu.txt`, commit 00ff4ce; two rounds, each the
    /// median of 10 timed runs): 4315.2 and 4321.4 µs; `histogram_shared` 22.0 and 21.7 µs. The
    /// lesson's counter, the emulator's global atomics per byte: 1.
    pub fn histogram_global(input: Slice<u8>, hist: AtomicSlice<u32>) {
        for i in ThreadIndex::grid_stride(input.len()) {
            hist.atomic_add(input.at(i.get()) as usize, 1);
        }
    }
}
