//! A module of kernels that launch kernels (CUDA's dynamic parallelism), linked with the CUDA
//! device runtime (`libcudadevrt.a`) by the driver's JIT linker: what `nvcc -rdc=true …
//! -lcudadevrt` does for CUDA C. Such PTX (a [`Module`](crate::ptx::Module) marked
//! [`linked_with_device_runtime`](crate::ptx::Module::linked_with_device_runtime); the project's
//! nested reductions) calls `__cudaCDP2GetParameterBufferV2` and `__cudaCDP2LaunchDeviceV2`, which
//! only that library defines, so the module cannot load without this step; other modules never
//! need it.
//!
//! Where the library cannot be found or linked, the module is refused in one line
//! ([`super::Backend::nested_ready`]) and every other module loads as before.

use std::ffi::CString;
use std::path::{Path, PathBuf};

use super::driver::{Context, Linker, Module};

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

/// Links the PTX `text` of the module `name` with `libcudadevrt.a` and loads the result into
/// `ctx` (current on this thread), or says in one line why it cannot (no PTX in this build, no
/// toolkit, or the linker's own error log).
pub(crate) fn load_linked(ctx: &Context, name: &str, text: &str) -> Result<Module, String> {
    let cubin = linked(name, text)?;
    Module::from_image(ctx, &cubin).map_err(|e| format!("the driver refused the linked module `{name}` ({e})"))
}

/// `text` linked with `libcudadevrt.a` (the cubin), or why not.
fn linked(name: &str, text: &str) -> Result<Vec<u8>, String> {
    if text.is_empty() {
        return Err(format!("the module `{name}` was built without PTX (REDUCE_SCAN_NO_PTX=1)"));
    }
    let lib = find_cudadevrt().ok_or_else(|| {
        format!(
            "the module `{name}` launches kernels from the device and needs the CUDA toolkit's device runtime, \
             libcudadevrt.a (looked under $CUDA_HOME, $CUDA_PATH, /usr/local/cuda, /opt/cuda and /usr): none found"
        )
    })?;
    link(name, text, &lib)
}

/// The JIT link: `ptx` (as relocatable code) and the library at `lib`, into a cubin.
fn link(name: &str, ptx: &str, lib: &Path) -> Result<Vec<u8>, String> {
    let failed = |what: &str, r: crate::error::CudaError, log: String| {
        format!(
            "linking the module `{name}` with {}: {what} failed ({}){}",
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
    let ptx = CString::new(ptx).map_err(|_| format!("the PTX of `{name}` holds a NUL byte"))?;
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
        let e = linked("nested", "").map(|_| ()).unwrap_err();
        assert!(e.contains("`nested`") && e.contains("without PTX") && !e.contains('\n'), "{e}");
        let e = linked("nested", ".version 7.0\n.target sm_70\n").map(|_| ()).unwrap_err();
        assert!(!e.contains('\n'), "more than one line: {e}");
        match find_cudadevrt() {
            None => assert!(e.contains("libcudadevrt.a") && e.contains("none found"), "{e}"),
            Some(lib) => assert!(e.contains(&lib.display().to_string()), "{e}"),
        }
    }
}
