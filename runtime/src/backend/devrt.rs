//! The nested kernels' PTX module, linked with the CUDA device runtime (`libcudadevrt.a`) by
//! the driver's JIT linker: what `nvcc -rdc=true … -lcudadevrt` does for CUDA C. Their PTX
//! ([`crate::ptx::NESTED_PTX`]) calls `__cudaCDP2GetParameterBufferV2` and
//! `__cudaCDP2LaunchDeviceV2`, which only that library defines, so the module cannot load
//! without this step; the other kernels' modules never need it.
//!
//! Where the library cannot be found or linked, the plan refuses the nested variants in one
//! line ([`super::Backend::nested_ready`]) and every other variant runs as before.

use std::ffi::{CString, c_void};
use std::path::{Path, PathBuf};

use cust::module::Module;
use cust::sys::{CUjit_option, CUjitInputType, CUresult};

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

/// Links [`NESTED_PTX`] with `libcudadevrt.a` and loads the result, or says in one line why it
/// cannot (no PTX in this build, no toolkit, or the linker's own error log).
pub fn load_nested_module() -> Result<Module, String> {
    if NESTED_PTX.is_empty() {
        return Err("this binary was built without PTX (REDUCE_SCAN_NO_PTX=1)".into());
    }
    let lib = find_cudadevrt().ok_or(
        "the nested variants need the CUDA toolkit's device runtime, libcudadevrt.a (looked under $CUDA_HOME, \
         $CUDA_PATH, /usr/local/cuda, /opt/cuda and /usr): none found",
    )?;
    let cubin = link(NESTED_PTX, &lib)?;
    Module::from_cubin(cubin, &[]).map_err(|e| format!("the driver refused the linked nested module ({e})"))
}

/// The JIT link: `ptx` (as relocatable code) and the library at `lib`, into a cubin.
fn link(ptx: &str, lib: &Path) -> Result<Vec<u8>, String> {
    let mut log = vec![0u8; 16 * 1024];
    let mut options = [CUjit_option::CU_JIT_ERROR_LOG_BUFFER, CUjit_option::CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES];
    let mut values = [log.as_mut_ptr().cast::<c_void>(), log.len() as *mut c_void];
    let failed = |what: &str, r: CUresult, log: &[u8]| {
        let text =
            String::from_utf8_lossy(log.split(|&b| b == 0).next().unwrap_or_default()).trim().replace('\n', "; ");
        format!(
            "linking the nested module with {}: {what} failed ({r:?}){}",
            lib.display(),
            if text.is_empty() { String::new() } else { format!(": {text}") }
        )
    };
    let mut state = std::ptr::null_mut();
    // SAFETY: two options whose values (the log buffer and its size) outlive the link state,
    // which is destroyed below on every path.
    let r = unsafe {
        cust::sys::cuLinkCreate_v2(options.len() as u32, options.as_mut_ptr(), values.as_mut_ptr(), &mut state)
    };
    if r != CUresult::CUDA_SUCCESS {
        return Err(failed("cuLinkCreate", r, &log));
    }
    let path = CString::new(lib.as_os_str().as_encoded_bytes())
        .map_err(|_| format!("{}: a NUL in the path", lib.display()))?;
    let name = c"nested.ptx";
    // The JIT reads PTX as a C string: without its NUL, ptxas reads past the end ("Unexpected
    // non-ASCII character" on the line after the last).
    let ptx = CString::new(ptx).map_err(|_| "the nested PTX holds a NUL byte".to_string())?;
    let ptx = ptx.as_bytes_with_nul();
    // SAFETY: a live link state; the PTX and the path outlive the calls, which copy them.
    let result = unsafe {
        let mut r = cust::sys::cuLinkAddData_v2(
            state,
            CUjitInputType::CU_JIT_INPUT_PTX,
            ptx.as_ptr().cast_mut().cast(),
            ptx.len(),
            name.as_ptr(),
            0,
            std::ptr::null_mut(),
            std::ptr::null_mut(),
        );
        if r == CUresult::CUDA_SUCCESS {
            r = cust::sys::cuLinkAddFile_v2(
                state,
                CUjitInputType::CU_JIT_INPUT_LIBRARY,
                path.as_ptr(),
                0,
                std::ptr::null_mut(),
                std::ptr::null_mut(),
            );
        }
        let mut cubin = std::ptr::null_mut();
        let mut size = 0usize;
        if r == CUresult::CUDA_SUCCESS {
            r = cust::sys::cuLinkComplete(state, &mut cubin, &mut size);
        }
        // The cubin belongs to the link state: copied out before the state is destroyed.
        let out = (r == CUresult::CUDA_SUCCESS).then(|| std::slice::from_raw_parts(cubin.cast::<u8>(), size).to_vec());
        cust::sys::cuLinkDestroy(state);
        out.ok_or(r)
    };
    result.map_err(|r| failed("the link", r, &log))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// No test thread has a CUDA context, so loading fails everywhere; what matters is the line
    /// it fails with: no PTX, no toolkit (CI, laptops), or the link step naming the library.
    #[test]
    fn loading_says_in_one_line_what_is_missing() {
        let e = load_nested_module().map(|_| ()).unwrap_err();
        assert!(!e.contains('\n'), "more than one line: {e}");
        match find_cudadevrt() {
            None if NESTED_PTX.is_empty() => assert!(e.contains("without PTX"), "{e}"),
            None => assert!(e.contains("libcudadevrt.a") && e.contains("none found"), "{e}"),
            Some(lib) => assert!(e.contains(&lib.display().to_string()), "{e}"),
        }
    }
}
