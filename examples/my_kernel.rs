//! Experiment with kernel code: write a new reduction kernel here and run it next to the
//! registered ones, on the CPU emulator, checked against the same CPU reference.
//!
//! `cargo run --example my_kernel`
//!
//! The kernel below, `two_loads`, gives each thread two elements a block apart (like
//! `unroll2`) and then uses the shared block reduction of the collective layer (like
//! `warp_shuffle`). Change it, run the example, and see whether it still agrees with the CPU.
//! To run it on a GPU, move it into `kernels/src/reduce/two_loads.rs` inside `kernel! { … }`
//! and register it: docs/adding-a-variant.md. What a kernel can call (indices, barriers, warp
//! operations and masks, shared and global memory, atomics), each beside its CUDA C name:
//! docs/device-layer.md.

use kernels::collective::block::{BLOCK_SUM_SLOTS, block_sum};
use kernels::collective::warp::warp_sum_shfl;
use kernels::device::global::{Global, GlobalMut};
use kernels::device::thread::{block_dim_x, block_idx_x, thread_idx_x};
use kernels::static_shared;
use reduce_scan::backend::{Backend, Kernel, LaunchConfig};
use reduce_scan::cpu::Reference;
use reduce_scan::input::Input;
use reduce_scan::reduce::{Reduction, registry};

/// Block `b` sums `2 × blockDim` elements from `2 × b × blockDim`; thread 0 writes `out[b]`.
///
/// # Safety
/// `input` holds `n` elements, `out` one per block of a grid of `ceil(n / (2 × blockDim))`.
unsafe fn two_loads(input: Global<i32>, out: GlobalMut<i32>, n: u32) {
    let slots = static_shared!(TWO_LOADS_SLOTS: [i32; BLOCK_SUM_SLOTS]);
    let (tid, block) = (thread_idx_x() as usize, block_dim_x() as usize);
    let start = block_idx_x() as usize * 2 * block;
    let mut v = 0i32;
    for i in [start + tid, start + block + tid] {
        if i < n as usize {
            // SAFETY: i < n.
            v = v.wrapping_add(unsafe { input.read(i) });
        }
    }
    // SAFETY: every thread of the block calls it; the block is a multiple of 32 and ≤ 1024.
    let total = unsafe { block_sum(v, slots, warp_sum_shfl) };
    if tid == 0 {
        // SAFETY: `out` holds one element per block.
        unsafe { out.write(block_idx_x() as usize, total) };
    }
}

fn main() -> reduce_scan::MainResult {
    let backend = Backend::emulator();
    let (n, block) = (1_000_003usize, 256u32);
    let data = Input::small(n, 1).data;
    let want = Reference::of(&data).wrapped;
    let input = backend.upload(&data)?;

    let grid = n.div_ceil(2 * block as usize);
    let mut partials = backend.alloc::<i32>(grid)?;
    let kernel: Kernel<(*const i32, *mut i32, u32)> = reduce_scan::kernel_ref!(two_loads(i, o, n));
    let cfg = LaunchConfig { grid: grid as u32, block, shared_bytes: 0 };
    let t = std::time::Instant::now();
    // SAFETY: `input` holds n elements and `partials` one per block of the grid.
    unsafe { backend.launch(&kernel, cfg, (input.as_ptr(), partials.as_mut_ptr(), n as u32)) }?;
    let mine = backend.download(&partials)?.iter().fold(0i32, |a, &p| a.wrapping_add(p));
    println!("{:<14} {:>8.1} ms (emulator)  sum {mine}", "two_loads", t.elapsed().as_secs_f64() * 1e3);

    for name in ["unroll2", "warp_shuffle"] {
        let v = registry::find(name)?;
        let mut r = Reduction::new(&backend, v, &input, n, block)?;
        let t = std::time::Instant::now();
        r.reset()?;
        r.launch()?;
        let got = r.result()?;
        println!("{name:<14} {:>8.1} ms (emulator)  sum {got}", t.elapsed().as_secs_f64() * 1e3);
        assert_eq!(got, want, "{name}");
    }
    assert_eq!(mine, want, "two_loads disagrees with the CPU reference {want}");
    println!("two_loads agrees with the CPU reference ({want})");
    Ok(())
}
