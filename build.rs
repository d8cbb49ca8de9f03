//! Gives the root package's tests and benches the run path to the stub libcuda that
//! runtime/build.rs built (empty where the machine has the NVIDIA driver).
fn main() {
    println!("cargo:rerun-if-env-changed=DEP_CUDASTUB_DIR");
    if let Ok(dir) = std::env::var("DEP_CUDASTUB_DIR")
        && !dir.is_empty()
    {
        println!("cargo:rustc-link-arg=-Wl,-rpath,{dir}");
    }
}
