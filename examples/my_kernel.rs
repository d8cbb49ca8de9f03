//! Experiment with kernel code: a kernel of your own, outside the curriculum, run next to the
//! registered ones, checked against the same CPU reference, on the GPU or on the CPU emulator.
//!
//! `cargo run --example my_kernel`
//!
//! The kernel, `two_loads`, is in a kernel crate of its own, `examples/my-kernels/`, as yours
//! would be in your own crate: the root package's `build.rs` compiles it to PTX with
//! `reduce-scan-build`, and this program names it once with `reduce_scan::module!` and launches
//! it on whatever [`Backend`] there is. Change the kernel, run the example, and see whether it
//! still agrees with the CPU; on the emulator, what it counted (the `--metrics` counters) and any
//! fault with your `file:line`; on a GPU, its time. The README's "Your kernel, your crate" makes
//! the same thing outside this repository. What a kernel can call, each beside its CUDA C name:
//! docs/device-layer.md.

use reduce_scan::backend::{Backend, BackendKind, LaunchConfig};
use reduce_scan::cpu::Reference;
use reduce_scan::experiment;
use reduce_scan::input::Input;
use reduce_scan::reduce::{Reduction, registry};

reduce_scan::module! {
    /// The kernels of `examples/my-kernels`.
    struct MyKernels(my_kernels) { two_loads }
}

fn main() -> reduce_scan::MainResult {
    let (backend, no_gpu) = Backend::select(BackendKind::Auto)?;
    println!("{}{}", backend.info(), no_gpu.map(|why| format!(" (no GPU: {why})")).unwrap_or_default());
    let (n, block) = (1_000_003usize, 256u32);
    let data = Input::small(n, 1).data;
    let want = Reference::of(&data).wrapped;
    let input = backend.upload(&data)?;

    let grid = n.div_ceil(2 * block as usize);
    let mut partials = backend.alloc::<i32>(grid)?;
    let cfg = LaunchConfig { grid: grid as u32, block, shared_bytes: 0 };
    let k = MyKernels::new(&backend);
    let mut launch = || {
        // SAFETY: `input` and `partials` are this backend's buffers, and the grid has one block
        // per slot of `partials`.
        unsafe { k.two_loads(cfg, (input.slice(), partials.per_block())) }
    };
    let runs = experiment::time(&backend, 5, &mut launch)?;
    let mine = backend.download(&partials)?.iter().fold(0i32, |a, &p| a.wrapping_add(p));
    let unit = if backend.is_gpu() { "device" } else { "emulator CPU" };
    println!("{:<14} {:>10.1} µs ({unit} time, median of 5)  sum {mine}", "two_loads", runs.median_us());

    for name in ["unroll2", "warp_shuffle"] {
        let v = registry::find(name)?;
        let mut r = Reduction::new(&backend, v, &input, n, block)?;
        r.reset()?;
        r.launch()?;
        let got = r.result()?;
        println!("{name:<14} {:>10} sum {got}", "");
        if got != want {
            return Err(reduce_scan::Error::Invalid(format!("{name}: {got}, the CPU says {want}")).into());
        }
    }
    if mine != want {
        return Err(reduce_scan::Error::Invalid(format!("two_loads: {mine}, the CPU says {want}")).into());
    }
    println!("two_loads agrees with the CPU reference ({want})");
    if !backend.is_gpu() {
        // SAFETY: as above, on the counting emulator (the same memory).
        let counted = experiment::count(&backend, |b| unsafe {
            MyKernels::new(b).two_loads(cfg, (input.slice(), partials.per_block()))
        })?;
        print!("{counted}");
    }
    Ok(())
}
