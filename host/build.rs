//! Build script of the library (`reduce-scan`).
//!
//! **Kernels → PTX.** Compiles `../kernels` (package `reduce-scan-kernels`) to PTX through
//! `reduce-scan-build`, the crate any kernel crate's host uses (one PTX build path for the
//! project and its users): one module per architecture (sm_70, sm_80, sm_90), left in `OUT_DIR`
//! as `kernels_sm_XX.ptx` for `src/ptx.rs` to embed, and a fourth for sm_70 with the kernels
//! crate's `no-entries` and `device-runtime` features, `kernels_nested_sm_70.ptx`: the kernels
//! that launch from the device, alone, since their PTX needs the CUDA device runtime at link
//! time. Kernel compile errors come out as rustc diagnostics with file:line. With
//! `REDUCE_SCAN_NO_PTX=1` (the emulator's build, `./x run` without a GPU) it builds none: the
//! PTX files are empty and the GPU backend refuses them with one line.
//!
//! Nothing here touches libcuda: the GPU backend opens the NVIDIA driver at run time
//! (the runtime's `src/backend/driver`), so the build needs no CUDA folder and links no library for it.

use std::env;
use std::path::PathBuf;

fn main() {
    let manifest_dir = PathBuf::from(env::var("CARGO_MANIFEST_DIR").unwrap());
    let workspace = manifest_dir.parent().unwrap().to_path_buf();
    println!("cargo:rerun-if-changed={}", workspace.join("rust-toolchain.toml").display());
    println!("cargo:rerun-if-changed={}", workspace.join("Cargo.toml").display());
    let kernels = workspace.join("kernels");
    reduce_scan_build::Ptx::crate_at(&kernels).name("kernels").build();
    reduce_scan_build::Ptx::crate_at(&kernels)
        .name("kernels_nested")
        .arches(&["sm_70"])
        .features(&["no-entries", "device-runtime"])
        .build();
}
