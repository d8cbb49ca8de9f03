//! The raw CUDA driver API: the C types of `cuda.h` that this crate passes, and [`Api`], the
//! table of the driver functions it calls, looked up by name in `libcuda.so.1` when the GPU
//! backend is first asked for (`dlopen`, as the `cudarc` crate does). Nothing links the
//! driver: a binary starts on any machine, and where no driver can be loaded
//! [`api`] says why in one line.
//!
//! Every function is looked up under the symbol the driver exports for the signature written
//! here: the `_v2` names where `cuda.h` maps the plain name to one (`cuMemAlloc` →
//! `cuMemAlloc_v2`, `cuLinkCreate` → `cuLinkCreate_v2`, …), the plain name elsewhere. These are
//! the symbols the runtime linked through `cust` 0.3.2 before (CUDA 11's `cuda.h`), which the
//! drivers of CUDA 12 and 13 still export; two of them have newer versions in CUDA 12/13's
//! header (`cuGraphAddKernelNode_v2` with a larger node struct, `cuEventElapsedTime_v2`) that
//! this table does not use.

#![allow(non_camel_case_types, non_snake_case)]

use std::ffi::{c_char, c_int, c_uchar, c_uint, c_ulonglong, c_void};
use std::sync::OnceLock;

/// A driver call's result: `CUDA_SUCCESS` (0) or a `CUDA_ERROR_*` code
/// ([`CudaError`](crate::error::CudaError)).
pub type CUresult = c_uint;
/// `CUDA_SUCCESS`.
pub const CUDA_SUCCESS: CUresult = 0;
/// `CUDA_ERROR_NOT_READY`: what a query of unfinished work answers.
pub const CUDA_ERROR_NOT_READY: CUresult = 600;
/// `CUDA_ERROR_NOT_SUPPORTED`: what the unit tests' fake table answers for a function it does
/// not fake ([`Api::refusing`]).
#[cfg(test)]
pub const CUDA_ERROR_NOT_SUPPORTED: CUresult = 801;

/// A device ordinal as the driver names it (`CUdevice`, an `int`).
pub type CUdevice = c_int;
/// A device address (`CUdeviceptr`, 64 bits).
pub type CUdeviceptr = c_ulonglong;
/// `CUcontext`: an opaque handle.
pub type CUcontext = *mut c_void;
/// `CUmodule`: an opaque handle.
pub type CUmodule = *mut c_void;
/// `CUfunction`: an opaque handle.
pub type CUfunction = *mut c_void;
/// `CUstream`: an opaque handle.
pub type CUstream = *mut c_void;
/// `CUhostFn`: a host function a stream runs in its order (`cuLaunchHostFunc`).
pub type CUhostFn = unsafe extern "C" fn(data: *mut c_void);
/// `CUevent`: an opaque handle.
pub type CUevent = *mut c_void;
/// `CUgraph`: an opaque handle.
pub type CUgraph = *mut c_void;
/// `CUgraphNode`: an opaque handle.
pub type CUgraphNode = *mut c_void;
/// `CUgraphExec`: an opaque handle.
pub type CUgraphExec = *mut c_void;
/// `CUlinkState`: an opaque handle.
pub type CUlinkState = *mut c_void;

/// `CUdevice_attribute` (a C enum, passed as an `int`-sized value).
pub type CUdevice_attribute = c_uint;
pub const CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT: CUdevice_attribute = 16;
pub const CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE: CUdevice_attribute = 36;
pub const CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH: CUdevice_attribute = 37;
pub const CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE: CUdevice_attribute = 38;
pub const CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR: CUdevice_attribute = 39;
pub const CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR: CUdevice_attribute = 75;
pub const CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR: CUdevice_attribute = 76;

/// `CUfunction_attribute`.
pub type CUfunction_attribute = c_uint;
pub const CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES: CUfunction_attribute = 8;

/// `CUlimit`.
pub type CUlimit = c_uint;
pub const CU_LIMIT_DEV_RUNTIME_PENDING_LAUNCH_COUNT: CUlimit = 4;

/// `CUjit_option`.
pub type CUjit_option = c_uint;
pub const CU_JIT_ERROR_LOG_BUFFER: CUjit_option = 5;
pub const CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES: CUjit_option = 6;

/// `CUjitInputType`.
pub type CUjitInputType = c_uint;
pub const CU_JIT_INPUT_PTX: CUjitInputType = 1;
pub const CU_JIT_INPUT_LIBRARY: CUjitInputType = 4;

/// `cuMemHostAlloc`'s flag for page-locked memory mapped into the device's address space.
pub const CU_MEMHOSTALLOC_DEVICEMAP: c_uint = 0x02;
/// `CU_STREAM_DEFAULT`: a stream that orders with the legacy default (NULL) stream, where the
/// synchronous copies and memsets go.
pub const CU_STREAM_DEFAULT: c_uint = 0;
/// `CU_EVENT_DEFAULT`: an event that records timing.
pub const CU_EVENT_DEFAULT: c_uint = 0;

/// `CUDA_KERNEL_NODE_PARAMS` as `cuGraphAddKernelNode` (the unversioned symbol) takes it: the
/// first version of the struct, without CUDA 12's `kern` and `ctx` fields.
#[repr(C)]
pub struct CUDA_KERNEL_NODE_PARAMS {
    pub func: CUfunction,
    pub gridDimX: c_uint,
    pub gridDimY: c_uint,
    pub gridDimZ: c_uint,
    pub blockDimX: c_uint,
    pub blockDimY: c_uint,
    pub blockDimZ: c_uint,
    pub sharedMemBytes: c_uint,
    pub kernelParams: *mut *mut c_void,
    pub extra: *mut *mut c_void,
}

/// The table: one field per driver function, named as the symbol it is looked up by, with its
/// C signature from `cuda.h`. [`FUNCTIONS`] lists the names (the tests' stand-in driver is
/// built from the same list, `runtime/cuda-stub/functions.txt`).
macro_rules! driver_api {
    ($($name:ident($($arg:ident: $ty:ty),* $(,)?);)*) => {
        /// The driver's functions, looked up in the loaded `libcuda.so.1`, which the table keeps
        /// open for the life of the process (a unit test's fake table has no library).
        pub struct Api {
            $(pub $name: unsafe extern "C" fn($($ty),*) -> CUresult,)*
            pub(super) _library: Option<libloading::Library>,
        }

        /// The name of every function in [`Api`] (for the test that keeps
        /// `runtime/cuda-stub/functions.txt` the same).
        #[cfg(test)]
        pub const FUNCTIONS: &[&str] = &[$(stringify!($name)),*];

        impl Api {
            /// Looks every function up in `library` (loaded from `from`).
            fn resolve(library: libloading::Library, from: &str) -> Result<Api, String> {
                $(
                    // SAFETY: the symbol is the driver's function of this name, whose C
                    // signature (cuda.h) is the one the field is typed with.
                    let $name = unsafe {
                        library.get::<unsafe extern "C" fn($($ty),*) -> CUresult>(
                            concat!(stringify!($name), "\0").as_bytes(),
                        )
                    }
                    .map(|symbol| *symbol)
                    .map_err(|e| missing(stringify!($name), from, e))?;
                )*
                Ok(Api { $($name,)* _library: Some(library) })
            }

            /// A table for unit tests whose every function answers `CUDA_ERROR_NOT_SUPPORTED`
            /// (the fields a test replaces are its fake driver, [`fake`]).
            #[cfg(test)]
            pub fn refusing() -> Api {
                $(
                    #[allow(unused_variables)]
                    unsafe extern "C" fn $name($($arg: $ty),*) -> CUresult {
                        CUDA_ERROR_NOT_SUPPORTED
                    }
                )*
                Api { $($name,)* _library: None }
            }
        }
    };
}

driver_api! {
    cuInit(flags: c_uint);
    cuGetErrorString(error: CUresult, string: *mut *const c_char);
    cuDeviceGetCount(count: *mut c_int);
    cuDeviceGet(device: *mut CUdevice, ordinal: c_int);
    cuDeviceGetAttribute(value: *mut c_int, attribute: CUdevice_attribute, device: CUdevice);
    cuDeviceGetName(name: *mut c_char, len: c_int, device: CUdevice);
    cuDeviceTotalMem_v2(bytes: *mut usize, device: CUdevice);
    cuDevicePrimaryCtxRetain(context: *mut CUcontext, device: CUdevice);
    cuDevicePrimaryCtxRelease_v2(device: CUdevice);
    cuCtxSetCurrent(context: CUcontext);
    cuCtxGetLimit(value: *mut usize, limit: CUlimit);
    cuCtxSetLimit(limit: CUlimit, value: usize);
    cuModuleLoadData(module: *mut CUmodule, image: *const c_void);
    cuModuleUnload(module: CUmodule);
    cuModuleGetFunction(function: *mut CUfunction, module: CUmodule, name: *const c_char);
    cuFuncSetAttribute(function: CUfunction, attribute: CUfunction_attribute, value: c_int);
    cuOccupancyMaxActiveBlocksPerMultiprocessor(
        blocks: *mut c_int,
        function: CUfunction,
        block_size: c_int,
        dynamic_shared_bytes: usize,
    );
    cuLaunchKernel(
        function: CUfunction,
        grid_x: c_uint,
        grid_y: c_uint,
        grid_z: c_uint,
        block_x: c_uint,
        block_y: c_uint,
        block_z: c_uint,
        shared_bytes: c_uint,
        stream: CUstream,
        params: *mut *mut c_void,
        extra: *mut *mut c_void,
    );
    cuStreamCreate(stream: *mut CUstream, flags: c_uint);
    cuStreamDestroy_v2(stream: CUstream);
    cuStreamQuery(stream: CUstream);
    cuStreamSynchronize(stream: CUstream);
    cuLaunchHostFunc(stream: CUstream, function: CUhostFn, data: *mut c_void);
    cuEventCreate(event: *mut CUevent, flags: c_uint);
    cuEventDestroy_v2(event: CUevent);
    cuEventRecord(event: CUevent, stream: CUstream);
    cuEventQuery(event: CUevent);
    cuEventSynchronize(event: CUevent);
    cuEventElapsedTime(milliseconds: *mut f32, start: CUevent, end: CUevent);
    cuMemAlloc_v2(address: *mut CUdeviceptr, bytes: usize);
    cuMemFree_v2(address: CUdeviceptr);
    cuMemGetInfo_v2(free: *mut usize, total: *mut usize);
    cuMemsetD8_v2(address: CUdeviceptr, value: c_uchar, count: usize);
    cuMemcpyHtoD_v2(dst: CUdeviceptr, src: *const c_void, bytes: usize);
    cuMemcpyDtoH_v2(dst: *mut c_void, src: CUdeviceptr, bytes: usize);
    cuMemcpyDtoHAsync_v2(dst: *mut c_void, src: CUdeviceptr, bytes: usize, stream: CUstream);
    cuMemcpyDtoDAsync_v2(dst: CUdeviceptr, src: CUdeviceptr, bytes: usize, stream: CUstream);
    cuMemHostAlloc(host: *mut *mut c_void, bytes: usize, flags: c_uint);
    cuMemHostGetDevicePointer_v2(address: *mut CUdeviceptr, host: *mut c_void, flags: c_uint);
    cuMemFreeHost(host: *mut c_void);
    cuGraphCreate(graph: *mut CUgraph, flags: c_uint);
    cuGraphAddKernelNode(
        node: *mut CUgraphNode,
        graph: CUgraph,
        dependencies: *const CUgraphNode,
        dependency_count: usize,
        params: *const CUDA_KERNEL_NODE_PARAMS,
    );
    cuGraphInstantiateWithFlags(exec: *mut CUgraphExec, graph: CUgraph, flags: c_ulonglong);
    cuGraphLaunch(exec: CUgraphExec, stream: CUstream);
    cuGraphExecDestroy(exec: CUgraphExec);
    cuGraphDestroy(graph: CUgraph);
    cuLinkCreate_v2(
        option_count: c_uint,
        options: *mut CUjit_option,
        option_values: *mut *mut c_void,
        state: *mut CUlinkState,
    );
    cuLinkAddData_v2(
        state: CUlinkState,
        kind: CUjitInputType,
        data: *mut c_void,
        size: usize,
        name: *const c_char,
        option_count: c_uint,
        options: *mut CUjit_option,
        option_values: *mut *mut c_void,
    );
    cuLinkAddFile_v2(
        state: CUlinkState,
        kind: CUjitInputType,
        path: *const c_char,
        option_count: c_uint,
        options: *mut CUjit_option,
        option_values: *mut *mut c_void,
    );
    cuLinkComplete(state: CUlinkState, cubin: *mut *mut c_void, size: *mut usize);
    cuLinkDestroy(state: CUlinkState);
}

/// The one line for a function the loaded library lacks.
fn missing(name: &str, from: &str, e: libloading::Error) -> String {
    format!("{from} has no `{name}`, which this program needs: an NVIDIA driver that old is not supported ({e})")
}

/// The file name of the NVIDIA driver's library, as its loader finds it (its SONAME).
pub const LIBCUDA: &str = "libcuda.so.1";

/// Names a library to load instead of [`LIBCUDA`]: the test suite's stand-ins for a driver on
/// a machine without a device (a path to a file). Not for normal use.
pub const LIBCUDA_OVERRIDE: &str = "REDUCE_SCAN_LIBCUDA";

static API: OnceLock<Result<Api, String>> = OnceLock::new();

/// The driver's functions, loaded on the first call; or why they cannot be (one line: no
/// `libcuda.so.1` on this machine, or one that lacks a function). In a unit test that installed
/// a fake table on its thread ([`fake`]), that table.
pub fn api() -> Result<&'static Api, &'static str> {
    #[cfg(test)]
    if let Some(api) = fake::installed() {
        return Ok(api);
    }
    API.get_or_init(load).as_ref().map_err(String::as_str)
}

/// The driver's functions where they are loaded already (this never loads them).
pub fn loaded() -> Option<&'static Api> {
    API.get()?.as_ref().ok()
}

fn load() -> Result<Api, String> {
    let wanted = std::env::var_os(LIBCUDA_OVERRIDE).filter(|v| !v.is_empty());
    let (file, from) = match &wanted {
        Some(path) => (path.clone(), format!("{LIBCUDA_OVERRIDE}={}", path.to_string_lossy())),
        None => (LIBCUDA.into(), LIBCUDA.to_string()),
    };
    // SAFETY: loading runs the library's initialisers: those of the NVIDIA driver's own
    // libcuda.so.1 as the system's loader finds it, or of the file the test suite names in
    // LIBCUDA_OVERRIDE (a stand-in it built).
    let library = unsafe { libloading::Library::new(&file) }.map_err(|e| match &wanted {
        Some(_) => format!("{from} cannot be loaded ({e})"),
        None => format!("no NVIDIA driver: {LIBCUDA} was not found ({e})"),
    })?;
    Api::resolve(library, &from)
}

/// A fake driver for unit tests, per thread: the tests run in parallel in one process, and a
/// fake installed on one test's thread is what [`api`] answers there and nowhere else.
#[cfg(test)]
pub mod fake {
    use std::cell::Cell;

    use super::Api;

    thread_local! {
        static INSTALLED: Cell<Option<&'static Api>> = const { Cell::new(None) };
    }

    /// The table [`api`](super::api) answers on this thread until the guard is dropped.
    pub fn install(api: Api) -> Installed {
        INSTALLED.set(Some(Box::leak(Box::new(api))));
        Installed(())
    }

    /// The fake table installed on this thread, if any.
    pub fn installed() -> Option<&'static Api> {
        INSTALLED.get()
    }

    /// Uninstalls the fake table when dropped.
    pub struct Installed(());

    impl Drop for Installed {
        fn drop(&mut self) {
            INSTALLED.set(None);
        }
    }
}
