//! Compiles the kernel crate of `examples/my_kernel.rs` (`examples/my-kernels/`) to PTX, as a
//! user's host crate compiles theirs (`reduce-scan-build`; sm_70 only, which every supported GPU
//! loads, so the suite's build compiles `core` for the GPU once more, not three times), and gives
//! the root package's tests and benches the run path to the stub libcuda that runtime/build.rs
//! built (empty where the machine has the NVIDIA driver).
fn main() {
    reduce_scan_build::Ptx::crate_at("examples/my-kernels").arches(&["sm_70"]).build();
    println!("cargo:rerun-if-env-changed=DEP_CUDASTUB_DIR");
    if let Ok(dir) = std::env::var("DEP_CUDASTUB_DIR")
        && !dir.is_empty()
    {
        println!("cargo:rustc-link-arg=-Wl,-rpath,{dir}");
    }
}
