//! Exercise 26: `histogram_shared`, from `histogram_global`. `./x learn 26` says what to change and why,
//! and checks this file; `./x learn 26 --solution` shows the project's kernel beside it.
//! The place to change is marked `EXERCISE`.
use kernels::device::kernel;
use kernels::device::slice::{AtomicSlice, Slice, ThreadIndex};

/// Bins: one per byte value.
pub const HISTOGRAM_BINS: usize = 256;

kernel! {
    pub fn histogram_shared(input: Slice<u8>, hist: AtomicSlice<u32>) {
        // EXERCISE 26: count into a histogram of the block's own in shared memory (zeroed, a barrier), then add its non-zero bins into `hist` after a second barrier: 256 global atomics a block, not one a byte.
        for i in ThreadIndex::grid_stride(input.len()) {
            hist.atomic_add(input.at(i.get()) as usize, 1);
        }
    }
}
