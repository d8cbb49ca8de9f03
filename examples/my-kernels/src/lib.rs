//! The kernel of `examples/my_kernel.rs`: a kernel crate of its own, as yours would be (the
//! README's "Your kernel, your crate" makes one outside this repository the same way). The root
//! package's `build.rs` compiles it to PTX with `reduce-scan-build`; the example launches it with
//! `reduce_scan::module!` on the GPU, or on the emulator where there is none.
//!
//! Change it, run `cargo run --example my_kernel`, and see whether it still agrees with the CPU,
//! what the emulator counted, and (on a GPU) how long it took.
#![no_std]

use reduce_scan_collective::prelude::*;

kernel! {
    /// Block `b` sums the `2 × blockDim` elements from `2 × b × blockDim` (two loads per thread,
    /// a block apart, as `unroll2` does), reduces them with the collective layer's block sum (as
    /// `warp_shuffle` does), and thread 0 writes the block's sum into `partials[b]`. Integers wrap.
    ///
    /// Launch: a grid of `ceil(n / (2 × blockDim))` blocks, a block of whole warps; `partials`
    /// holds a slot per block. No `unsafe`: reads past the input are `None`, and each block's slot
    /// is written by its leader alone.
    pub fn two_loads(input: Slice<i32>, partials: PerBlock<i32>) {
        let (tid, block) = (thread_idx_x() as usize, block_dim_x() as usize);
        let start = block_idx_x() as usize * 2 * block;
        let mut v = 0i32;
        for i in [start + tid, start + block + tid] {
            v = v.wrapping_add(input.get(i).unwrap_or(0));
        }
        if let Some(total) = BlockReduce::new(block_slots!(TWO_LOADS_SLOTS: i32)).sum(v)
            && let Some(leader) = BlockLeader::get()
        {
            partials.set(leader, total);
        }
    }
}
