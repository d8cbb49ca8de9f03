//! Gives the `reduce` binary and this crate's tests the run path to the stub libcuda that the runtime's build script
//! built (runtime/build.rs; empty where the machine has the NVIDIA driver), as the root package
//! does for its tests and benches.
fn main() {
    println!("cargo:rerun-if-env-changed=DEP_CUDASTUB_DIR");
    if let Ok(dir) = std::env::var("DEP_CUDASTUB_DIR")
        && !dir.is_empty()
    {
        println!("cargo:rustc-link-arg=-Wl,-rpath,{dir}");
    }
}
