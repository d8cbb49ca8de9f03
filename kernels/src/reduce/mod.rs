//! Sum reductions of `i32` (wrapping, as the GPU's integer add is).
//!
//! Every kernel of this family turns `n` inputs into one partial sum per block, written
//! to `g_odata[blockIdx.x]`; the host adds the partials (or, for the single-pass kernels,
//! a last block does it on the device). Each file teaches one idea and says which problem
//! of the previous kernel it fixes.

mod interleaved;

pub use interleaved::interleaved;
