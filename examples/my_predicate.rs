//! Select with a predicate of your own: a Rust closure compiled into your kernel crate
//! (`examples/my-kernels`'s `keep_flags`) writes one flag byte per element, and the library's
//! one-pass [`Select::flagged`] (`cub::DeviceSelect::Flagged`) keeps the flagged elements in
//! order; checked against the same rule on the CPU (`my_kernels::in_band`), on the GPU or on
//! the emulator.
//!
//! `cargo run --example my_predicate`
//!
//! The predicates the library compiles itself (`lt:X`, `nonzero`, …: [`Predicate`]) need no
//! flags and read the input once; a predicate of your own costs one more pass here (the input
//! read twice, the flags written and read), since the one-pass kernel's body lives in the
//! curriculum's kernels crate, which a kernel crate of yours does not build.
//!
//! [`Predicate`]: reduce_scan::select::predicate

use reduce_scan::Select;
use reduce_scan::backend::{Backend, BackendKind, LaunchConfig};

reduce_scan::module! {
    /// The flag kernel of `examples/my-kernels`.
    struct Predicates(my_kernels) { keep_flags }
}

fn main() -> reduce_scan::MainResult {
    let (backend, no_gpu) = Backend::select(BackendKind::Auto)?;
    println!("{}{}", backend.info(), no_gpu.map(|why| format!(" (no GPU: {why})")).unwrap_or_default());
    let n = 1_000_003usize;
    // Values in [0, 1): about half of them in the band.
    let data: Vec<f32> = (0..n as u64).map(|i| (i.wrapping_mul(2_654_435_761) % 1000) as f32 / 1000.0).collect();
    let input = backend.upload(&data)?;
    let mut flags = backend.alloc::<u8>(n)?;
    let cfg = LaunchConfig { grid: n.div_ceil(256).min(1024) as u32, block: 256, shared_bytes: 0 };
    // SAFETY: `input` and `flags` are this backend's buffers; the kernel takes any grid.
    unsafe { Predicates::new(&backend).keep_flags(cfg, (input.slice(), flags.disjoint())) }?;
    let mut out = backend.alloc::<f32>(n)?;
    let kept = Select::<f32>::new(&backend).flagged(&input, &flags, &mut out)?;
    let got = backend.download_prefix(&out, kept)?;
    let want: Vec<f32> = data.iter().copied().filter(|&x| my_kernels::in_band(x)).collect();
    if got.len() != want.len() || got.iter().zip(&want).any(|(g, w)| g.to_bits() != w.to_bits()) {
        let at =
            got.iter().zip(&want).position(|(g, w)| g.to_bits() != w.to_bits()).unwrap_or(got.len().min(want.len()));
        return Err(reduce_scan::Error::Invalid(format!(
            "keep_flags + Select::flagged kept {} of {n}, the CPU {}; first difference at output {at}",
            got.len(),
            want.len()
        ))
        .into());
    }
    println!("kept {kept} of {n} elements in (0.25, 0.75), in order, as the CPU does");
    Ok(())
}
