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
use crate::error::CudaError;

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

/// Links the PTX `text` of the module `name` with `libcudadevrt.a` in `ctx` and loads the
/// result into it (each step makes `ctx` current on this thread), or says in one line why it
/// cannot (no PTX in this build, no toolkit, or the linker's own error log).
pub(crate) fn load_linked(ctx: &Context, name: &str, text: &str) -> Result<Module, String> {
    let lib = device_runtime(name, text)?;
    let cubin = link(ctx, name, text, &lib)?;
    Module::from_image(ctx, &cubin).map_err(|e| format!("the driver refused the linked module `{name}` ({e})"))
}

/// The device runtime library to link the module `name` (PTX `text`) with, or why there is
/// nothing to link.
fn device_runtime(name: &str, text: &str) -> Result<PathBuf, String> {
    if text.is_empty() {
        return Err(format!("the module `{name}` was built without PTX (REDUCE_SCAN_NO_PTX=1)"));
    }
    find_cudadevrt().ok_or_else(|| {
        format!(
            "the module `{name}` launches kernels from the device and needs the CUDA toolkit's device runtime, \
             libcudadevrt.a (looked under $CUDA_HOME, $CUDA_PATH, /usr/local/cuda, /opt/cuda and /usr): none found"
        )
    })
}

/// The one line of a failed step `what` of the link of the module `name` with `lib`, with the
/// linker's log.
fn link_failed(name: &str, lib: &Path, what: &str, r: CudaError, log: &str) -> String {
    format!(
        "linking the module `{name}` with {}: {what} failed ({}){}",
        lib.display(),
        r.cuda_name(),
        if log.is_empty() { String::new() } else { format!(": {log}") }
    )
}

/// The JIT link in `ctx`: `ptx` (as relocatable code) and the library at `lib`, into a cubin.
fn link(ctx: &Context, name: &str, ptx: &str, lib: &Path) -> Result<Vec<u8>, String> {
    let mut linker = Linker::new(ctx).map_err(|r| link_failed(name, lib, "cuLinkCreate", r, ""))?;
    let path = CString::new(lib.as_os_str().as_encoded_bytes())
        .map_err(|_| format!("{}: a NUL in the path", lib.display()))?;
    // The JIT reads PTX as a C string: without its NUL, ptxas reads past the end ("Unexpected
    // non-ASCII character" on the line after the last).
    let ptx = CString::new(ptx).map_err(|_| format!("the PTX of `{name}` holds a NUL byte"))?;
    let linked =
        linker.add_ptx(&ptx, c"nested.ptx").and_then(|()| linker.add_library(&path)).and_then(|()| linker.complete());
    linked.map_err(|r| link_failed(name, lib, "the link", r, &linker.log()))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What is missing before a link is tried says so in one line: no PTX, no toolkit (CI,
    /// laptops); where both are there, the library is what the link is given.
    #[test]
    fn loading_says_in_one_line_what_is_missing() {
        let e = device_runtime("nested", "").unwrap_err();
        assert!(e.contains("`nested`") && e.contains("without PTX") && !e.contains('\n'), "{e}");
        match (device_runtime("nested", ".version 7.0\n"), find_cudadevrt()) {
            (Ok(lib), found) => assert_eq!(Some(lib), found),
            (Err(e), found) => {
                assert!(found.is_none() && !e.contains('\n'), "more than one line, or a library found: {e}");
                assert!(e.contains("libcudadevrt.a") && e.contains("none found"), "{e}");
            }
        }
    }

    /// A failed link step is one line naming the module, the library, the step, the code and
    /// the log.
    #[test]
    fn a_failed_link_names_the_library_the_step_and_the_log() {
        let lib = Path::new("/opt/cuda/lib64/libcudadevrt.a");
        let e = link_failed("nested", lib, "the link", CudaError::InvalidPtx, "ptxas fatal; undefined symbol");
        assert_eq!(
            e,
            "linking the module `nested` with /opt/cuda/lib64/libcudadevrt.a: the link failed \
             (CUDA_ERROR_INVALID_PTX): ptxas fatal; undefined symbol"
        );
        assert!(
            link_failed("n", lib, "cuLinkCreate", CudaError::InvalidContext, "")
                .ends_with("(CUDA_ERROR_INVALID_CONTEXT)")
        );
    }
}
