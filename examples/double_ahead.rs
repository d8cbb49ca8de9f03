//! An L2 prefetch from a kernel crate of your own: `examples/my-kernels`'s `double_ahead`
//! doubles every element in a grid-stride loop, each thread first asking L2 for the element its
//! next step reads (`Slice::prefetch_l2`, CUDA C++ `cuda::ptx::prefetch_L2`). The grid here is
//! smaller than the input, so the threads take several steps, and the last step's prefetches
//! fall past the end, where the slice drops them. Checked against the CPU bit for bit, on the GPU
//! or on the emulator (which checks every prefetch's address as it checks a read's).
//!
//! `cargo run --example double_ahead`

use reduce_scan::backend::{Backend, BackendKind, LaunchConfig};

reduce_scan::module! {
    /// The prefetching kernel of `examples/my-kernels`.
    struct Ahead(my_kernels) { double_ahead }
}

fn main() -> reduce_scan::MainResult {
    let (backend, no_gpu) = Backend::select(BackendKind::Auto)?;
    println!("{}{}", backend.info(), no_gpu.map(|why| format!(" (no GPU: {why})")).unwrap_or_default());
    let n = 1_000_003usize;
    let data: Vec<f32> = (0..n as u64).map(|i| (i.wrapping_mul(2_654_435_761) % 1000) as f32 / 8.0).collect();
    let input = backend.upload(&data)?;
    let mut out = backend.alloc::<f32>(n)?;
    // 64 blocks of 256 threads: 16,384 a stride, 62 steps for the last thread of the grid.
    let cfg = LaunchConfig { grid: 64, block: 256, shared_bytes: 0 };
    // SAFETY: `input` and `out` are this backend's buffers; the kernel takes any grid.
    unsafe { Ahead::new(&backend).double_ahead(cfg, (input.slice(), out.disjoint())) }?;
    let got = backend.download(&out)?;
    if let Some(i) = (0..n).find(|&i| got[i].to_bits() != (2.0 * data[i]).to_bits()) {
        return Err(reduce_scan::Error::Invalid(format!(
            "double_ahead: out[{i}] = {}, the CPU's 2 × {} = {}",
            got[i],
            data[i],
            2.0 * data[i]
        ))
        .into());
    }
    println!(
        "double_ahead: {n} elements doubled, each thread prefetching its next step's element into L2, as the CPU doubles them"
    );
    Ok(())
}
