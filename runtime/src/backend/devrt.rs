//! The nested kernels' PTX module, linked with the CUDA device runtime (`libcudadevrt.a`) by
//! the driver's JIT linker: what `nvcc -rdc=true … -lcudadevrt` does for CUDA C. Their PTX
//! ([`crate::ptx::NESTED_PTX`]) calls `__cudaCDP2GetParameterBufferV2` and
//! `__cudaCDP2LaunchDeviceV2`, which only that library defines, so the module cannot load
//! without this step; the other kernels' modules never need it.
//!
//! Where the library cannot be found or linked, the plan refuses the nested variants in one
//! line ([`super::Backend::nested_ready`]) and every other variant runs as before.

use std::ffi::CString;
use std::path::{Path, PathBuf};

use super::driver::{Context, Linker, Module};
use crate::ptx::NESTED_PTX;

/// Where the CUDA toolkit keeps `libcudadevrt.a`: `$CUDA_HOME` or `$CUDA_PATH` first, then the
/// usual install places.
pub fn find_cudadevrt() -> Option<PathBuf> {
    let roots = ["CUDA_HOME", "CUDA_PATH"].into_iter().filter_map(|v| std::env::var_os(v).map(PathBuf::from));
    let fixed = ["/usr/local/cuda", "/opt/cuda", "/usr"].into_iter().map(PathBuf::from);
    roots
        .chain(fixed)
        .flat_map(|root| ["lib64", "lib", "lib/x86_64-linux-gnu", "targets/x86_64-linux/lib"].map(|d| root.join(d)))
        .map(|dir| dir.join("libcudadevrt.a"))
        .find(|p| p.is_file())
}

/// Links [`NESTED_PTX`] with `libcudadevrt.a` and loads the result into `ctx` (current on this
/// thread), or says in one line why it cannot (no PTX in this build, no toolkit, or the linker's
/// own error log).
pub(crate) fn load_nested_module(ctx: &Context) -> Result<Module, String> {
    let cubin = linked_nested()?;
    Module::from_image(ctx, &cubin).map_err(|e| format!("the driver refused the linked nested module ({e})"))
}

/// [`NESTED_PTX`] linked with `libcudadevrt.a` (the cubin), or why not.
fn linked_nested() -> Result<Vec<u8>, String> {
    if NESTED_PTX.is_empty() {
        return Err("this binary was built without PTX (REDUCE_SCAN_NO_PTX=1)".into());
    }
    let lib = find_cudadevrt().ok_or(
        "the nested variants need the CUDA toolkit's device runtime, libcudadevrt.a (looked under $CUDA_HOME, \
         $CUDA_PATH, /usr/local/cuda, /opt/cuda and /usr): none found",
    )?;
    link(NESTED_PTX, &lib)
}

/// The JIT link: `ptx` (as relocatable code) and the library at `lib`, into a cubin.
fn link(ptx: &str, lib: &Path) -> Result<Vec<u8>, String> {
    let failed = |what: &str, r: crate::error::CudaError, log: String| {
        format!(
            "linking the nested module with {}: {what} failed ({}){}",
            lib.display(),
            r.cuda_name(),
            if log.is_empty() { String::new() } else { format!(": {log}") }
        )
    };
    let mut linker = Linker::new().map_err(|r| failed("cuLinkCreate", r, String::new()))?;
    let path = CString::new(lib.as_os_str().as_encoded_bytes())
        .map_err(|_| format!("{}: a NUL in the path", lib.display()))?;
    // The JIT reads PTX as a C string: without its NUL, ptxas reads past the end ("Unexpected
    // non-ASCII character" on the line after the last).
    let ptx = CString::new(ptx).map_err(|_| "the nested PTX holds a NUL byte".to_string())?;
    let linked =
        linker.add_ptx(&ptx, c"nested.ptx").and_then(|()| linker.add_library(&path)).and_then(|()| linker.complete());
    linked.map_err(|r| failed("the link", r, linker.log()))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// No test thread has a CUDA context, so the link fails everywhere; what matters is the line
    /// it fails with: no PTX, no toolkit (CI, laptops), or the link step naming the library.
    #[test]
    fn loading_says_in_one_line_what_is_missing() {
        let e = linked_nested().map(|_| ()).unwrap_err();
        assert!(!e.contains('\n'), "more than one line: {e}");
        match find_cudadevrt() {
            None if NESTED_PTX.is_empty() => assert!(e.contains("without PTX"), "{e}"),
            None => assert!(e.contains("libcudadevrt.a") && e.contains("none found"), "{e}"),
            Some(lib) => assert!(e.contains(&lib.display().to_string()), "{e}"),
        }
    }
}
