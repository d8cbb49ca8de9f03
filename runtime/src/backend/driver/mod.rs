//! The project's own layer over the CUDA driver API: the NVIDIA driver (`libcuda.so.1`) is
//! opened at run time ([`sys`], through `dlopen`), never linked, so every binary starts on a
//! machine without it; the GPU backend ([`super::gpu`]) uses the safe types here: [`Context`],
//! [`Module`] (any PTX text or linked image), [`Function`], [`Stream`], [`Event`],
//! [`DeviceMemory`], [`MappedHost`], [`Graph`] and [`Linker`], each of which releases what it
//! holds when dropped. Every call answers `Result<_, CudaError>`.
//!
//! Every call into the driver is made here (the table's lookups in [`sys`]): what a call needs
//! (live handles, buffers as long as the sizes given) is what the types guarantee, except where
//! a method is itself `unsafe` (a launch's parameters, an asynchronous copy's addresses).
//!
//! A [`Module`] is any PTX text (or linked image) loaded into a context: the GPU backend holds
//! the kernels' module and the nested kernels' linked one, and looks kernels up by name in them.
//!
//! Ownership: a [`Context`] is a shared owner of one retain of a device's primary context
//! (`cuDevicePrimaryCtxRetain`), released (`cuDevicePrimaryCtxRelease`) when the last owner is
//! dropped. Every object made in a context holds such an owner, makes the context current
//! (`cuCtxSetCurrent`) in its constructor and again in its `Drop`, before the driver call that
//! frees it, so it can be made and dropped on any thread, in any order. A [`Function`] shares
//! its [`Module`]'s ownership, and a [`Graph`] holds its kernel's function: a module is unloaded
//! only when no function of it (nor graph of one) is left to launch. Where the driver cannot be
//! called in a `Drop` (no driver loaded, the context cannot be made current), nothing is freed.

mod sys;

use std::ffi::{CStr, CString, c_char, c_int, c_void};
use std::sync::Arc;

use sys::{Api, CUcontext, CUdevice, CUdeviceptr, CUresult};

use crate::error::CudaError;

/// The loaded driver, or why there is none (one line).
pub fn load() -> Result<(), String> {
    sys::api().map(|_| ()).map_err(str::to_string)
}

/// The driver's functions for a call: loaded on first use; where no driver can be loaded, every
/// call fails as an uninitialised driver's would.
fn api() -> Result<&'static Api, CudaError> {
    sys::api().map_err(|_| CudaError::NotInitialized)
}

fn check(r: CUresult) -> Result<(), CudaError> {
    if r == sys::CUDA_SUCCESS { Ok(()) } else { Err(CudaError::from_code(r)) }
}

/// The driver's description of error `code` (`cuGetErrorString`), where a driver is loaded
/// already (this never loads one).
pub fn error_string(code: u32) -> Option<&'static CStr> {
    let api = sys::loaded()?;
    let mut text: *const c_char = std::ptr::null();
    // SAFETY: an out-pointer to a local; the driver points it at a static string.
    let r = unsafe { (api.cuGetErrorString)(code, &mut text) };
    // SAFETY: on success the driver's string is NUL-terminated and lives for the process.
    (r == sys::CUDA_SUCCESS && !text.is_null()).then(|| unsafe { CStr::from_ptr(text) })
}

/// `cuInit(0)`.
pub fn init() -> Result<(), CudaError> {
    // SAFETY: no pointers.
    check(unsafe { (api()?.cuInit)(0) })
}

/// `cuDeviceGetCount`.
pub fn device_count() -> Result<u32, CudaError> {
    let mut count: c_int = 0;
    // SAFETY: an out-pointer to a local.
    check(unsafe { (api()?.cuDeviceGetCount)(&mut count) })?;
    Ok(count.max(0) as u32)
}

/// `cuMemGetInfo`: the current context's device's free and total memory, bytes.
pub fn mem_get_info() -> Result<(usize, usize), CudaError> {
    let (mut free, mut total) = (0usize, 0usize);
    // SAFETY: out-pointers to locals.
    check(unsafe { (api()?.cuMemGetInfo_v2)(&mut free, &mut total) })?;
    Ok((free, total))
}

/// A device attribute this crate reads (`CUdevice_attribute`).
#[derive(Clone, Copy, Debug)]
pub enum DeviceAttribute {
    /// `CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR`.
    ComputeCapabilityMajor,
    /// `CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR`.
    ComputeCapabilityMinor,
    /// `CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT`.
    MultiprocessorCount,
    /// `CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR`.
    MaxThreadsPerMultiprocessor,
    /// `CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE` (bytes).
    L2CacheSize,
    /// `CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE` (kHz).
    MemoryClockRate,
    /// `CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH` (bits).
    GlobalMemoryBusWidth,
}

impl DeviceAttribute {
    fn raw(self) -> sys::CUdevice_attribute {
        match self {
            DeviceAttribute::ComputeCapabilityMajor => sys::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR,
            DeviceAttribute::ComputeCapabilityMinor => sys::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR,
            DeviceAttribute::MultiprocessorCount => sys::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT,
            DeviceAttribute::MaxThreadsPerMultiprocessor => sys::CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR,
            DeviceAttribute::L2CacheSize => sys::CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE,
            DeviceAttribute::MemoryClockRate => sys::CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE,
            DeviceAttribute::GlobalMemoryBusWidth => sys::CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH,
        }
    }
}

/// A device, by the driver's handle (`CUdevice`).
#[derive(Clone, Copy, Debug)]
pub struct Device(CUdevice);

impl Device {
    /// `cuDeviceGet`.
    pub fn get(ordinal: u32) -> Result<Device, CudaError> {
        let mut device: CUdevice = 0;
        // SAFETY: an out-pointer to a local.
        check(unsafe { (api()?.cuDeviceGet)(&mut device, ordinal as c_int) })?;
        Ok(Device(device))
    }

    /// `cuDeviceGetAttribute`.
    pub fn attribute(self, attribute: DeviceAttribute) -> Result<i32, CudaError> {
        let mut value: c_int = 0;
        // SAFETY: an out-pointer to a local.
        check(unsafe { (api()?.cuDeviceGetAttribute)(&mut value, attribute.raw(), self.0) })?;
        Ok(value)
    }

    /// `cuDeviceGetName`: the marketing name (`NVIDIA H100 80GB HBM3`).
    pub fn name(self) -> Result<String, CudaError> {
        let mut name = [0u8; 256];
        // SAFETY: the driver writes at most `len` bytes, NUL-terminated, into the array.
        check(unsafe { (api()?.cuDeviceGetName)(name.as_mut_ptr().cast(), name.len() as c_int, self.0) })?;
        let end = name.iter().position(|&b| b == 0).unwrap_or(name.len());
        Ok(String::from_utf8_lossy(&name[..end]).into_owned())
    }

    /// `cuDeviceTotalMem`: device memory, bytes.
    pub fn total_memory(self) -> Result<usize, CudaError> {
        let mut bytes = 0usize;
        // SAFETY: an out-pointer to a local.
        check(unsafe { (api()?.cuDeviceTotalMem_v2)(&mut bytes, self.0) })?;
        Ok(bytes)
    }
}

/// What the owners of a [`Context`] share: the retained primary context, released
/// (`cuDevicePrimaryCtxRelease`) when the last of them is dropped.
#[derive(Debug)]
struct ContextInner {
    raw: CUcontext,
    device: CUdevice,
}

// SAFETY: a context handle may be made current on, and used from, any thread; the type has no
// interior state of its own.
unsafe impl Send for ContextInner {}
// SAFETY: as above.
unsafe impl Sync for ContextInner {}

impl Drop for ContextInner {
    fn drop(&mut self) {
        if let Ok(api) = api() {
            // SAFETY: the one retain made in `Context::primary` for this value, released once,
            // after every owner of the context (each holds the `Arc`) has been dropped.
            unsafe { (api.cuDevicePrimaryCtxRelease_v2)(self.device) };
        }
    }
}

/// A device's primary context (`cuDevicePrimaryCtxRetain`: the one the CUDA runtime uses too),
/// shared: a clone is another owner of the same retain, and every driver object made in the
/// context ([`Module`], [`Function`], [`Stream`], [`Event`], [`DeviceMemory`], [`MappedHost`],
/// [`Graph`], [`Linker`]) holds one, so the context is released
/// (`cuDevicePrimaryCtxRelease`) only when the last of them is dropped.
#[derive(Clone, Debug)]
pub struct Context(Arc<ContextInner>);

impl Context {
    /// `cuDevicePrimaryCtxRetain` of `device`'s primary context, made current on this thread
    /// (`cuCtxSetCurrent`).
    pub fn primary(device: Device) -> Result<Context, CudaError> {
        let mut raw: CUcontext = std::ptr::null_mut();
        // SAFETY: an out-pointer to a local.
        check(unsafe { (api()?.cuDevicePrimaryCtxRetain)(&mut raw, device.0) })?;
        // From here the retain is owned: a failed bind below releases it.
        let ctx = Context(Arc::new(ContextInner { raw, device: device.0 }));
        ctx.set_current()?;
        Ok(ctx)
    }

    /// `cuCtxSetCurrent`: makes the context current on the calling thread.
    pub fn set_current(&self) -> Result<(), CudaError> {
        // SAFETY: a context this value's retain keeps alive.
        check(unsafe { (api()?.cuCtxSetCurrent)(self.0.raw) })
    }

    /// `cuCtxGetLimit(CU_LIMIT_DEV_RUNTIME_PENDING_LAUNCH_COUNT)` of this context (made current
    /// on this thread first, `cuCtxSetCurrent`).
    pub fn limit_pending_launches(&self) -> Result<usize, CudaError> {
        self.set_current()?;
        let mut value = 0usize;
        // SAFETY: an out-pointer to a local.
        check(unsafe { (api()?.cuCtxGetLimit)(&mut value, sys::CU_LIMIT_DEV_RUNTIME_PENDING_LAUNCH_COUNT) })?;
        Ok(value)
    }

    /// `cuCtxSetLimit(CU_LIMIT_DEV_RUNTIME_PENDING_LAUNCH_COUNT, launches)` of this context (made
    /// current on this thread first, `cuCtxSetCurrent`).
    pub fn set_limit_pending_launches(&self, launches: usize) -> Result<(), CudaError> {
        self.set_current()?;
        // SAFETY: a plain setting; the driver checks the value.
        check(unsafe { (api()?.cuCtxSetLimit)(sys::CU_LIMIT_DEV_RUNTIME_PENDING_LAUNCH_COUNT, launches) })
    }
}

/// Runs `free` with `ctx` current on this thread (`cuCtxSetCurrent`): how every owner of a
/// driver object frees it when dropped, on whichever thread that is. Where no driver is loaded
/// or the context cannot be made current, nothing is freed (a drop cannot report an error).
fn in_context(ctx: &Context, free: impl FnOnce(&'static Api)) {
    if let Ok(api) = api()
        && ctx.set_current().is_ok()
    {
        free(api);
    }
}

/// What the owners of a [`Module`] share: the loaded module, unloaded (`cuModuleUnload`) in its
/// context when the last of them (the module's clones and its [`Function`]s) is dropped.
#[derive(Debug)]
struct ModuleInner {
    raw: sys::CUmodule,
    ctx: Context,
}

// SAFETY: a module handle of a context, usable from any thread where that context is current
// (the owners bind it); lookups do not mutate the handle.
unsafe impl Send for ModuleInner {}
// SAFETY: as above.
unsafe impl Sync for ModuleInner {}

impl Drop for ModuleInner {
    fn drop(&mut self) {
        in_context(&self.ctx, |api| {
            // SAFETY: the module loaded in `Module::load`, unloaded once, in its own context, after
            // every function looked up in it (each holds the `Arc`) has been dropped.
            unsafe { (api.cuModuleUnload)(self.raw) };
        });
    }
}

/// A loaded module (`CUmodule`, `cuModuleLoadData`): PTX, which the driver compiles for the
/// device, or a linked image (cubin). A clone shares the same loaded module, which is unloaded
/// (`cuModuleUnload`) when the last clone and the last of its [`Function`]s are dropped; it keeps
/// its [`Context`] alive until then.
#[derive(Clone, Debug)]
pub struct Module(Arc<ModuleInner>);

impl Module {
    /// `cuModuleLoadData` of a PTX text into `ctx` (made current on this thread first,
    /// `cuCtxSetCurrent`). A NUL byte in the text is [`CudaError::InvalidPtx`].
    pub fn from_ptx(ctx: &Context, ptx: &str) -> Result<Module, CudaError> {
        let text = CString::new(ptx).map_err(|_| CudaError::InvalidPtx)?;
        Self::load(ctx, text.as_bytes_with_nul())
    }

    /// `cuModuleLoadData` of a cubin or fatbin image into `ctx` (made current on this thread
    /// first, `cuCtxSetCurrent`).
    pub fn from_image(ctx: &Context, image: &[u8]) -> Result<Module, CudaError> {
        // A NUL after the image, as for a text: the driver reads the image's own length from
        // its header, and a PTX image needs its terminator.
        let mut bytes = image.to_vec();
        bytes.push(0);
        Self::load(ctx, &bytes)
    }

    fn load(ctx: &Context, image: &[u8]) -> Result<Module, CudaError> {
        ctx.set_current()?;
        let mut raw: sys::CUmodule = std::ptr::null_mut();
        // SAFETY: an out-pointer to a local and an image that ends in NUL, alive for the call
        // (the driver copies what it keeps); `ctx` is current, so the module is loaded into it.
        check(unsafe { (api()?.cuModuleLoadData)(&mut raw, image.as_ptr().cast()) })?;
        Ok(Module(Arc::new(ModuleInner { raw, ctx: ctx.clone() })))
    }

    /// `cuModuleGetFunction`: the kernel entry `name`, which keeps this module loaded for as
    /// long as it lives.
    pub fn function(&self, name: &str) -> Result<Function, CudaError> {
        let name = CString::new(name).map_err(|_| CudaError::InvalidValue)?;
        let mut raw: sys::CUfunction = std::ptr::null_mut();
        // SAFETY: an out-pointer to a local, a live module and a NUL-terminated name.
        check(unsafe { (api()?.cuModuleGetFunction)(&mut raw, self.0.raw, name.as_ptr()) })?;
        Ok(Function { raw, module: Arc::clone(&self.0) })
    }

    /// The context the module is loaded into.
    pub fn context(&self) -> &Context {
        &self.0.ctx
    }
}

/// A kernel of a loaded [`Module`] (`CUfunction`, `cuModuleGetFunction`). It shares the
/// module's ownership: the module stays loaded, and its context retained, while any clone of
/// the function lives, so a launch can never name an unloaded kernel. Cloning is cheap (one
/// reference count).
#[derive(Clone, Debug)]
pub struct Function {
    raw: sys::CUfunction,
    module: Arc<ModuleInner>,
}

// SAFETY: a function handle may be used from any thread where its context is current; the
// module it belongs to is kept loaded by `module`.
unsafe impl Send for Function {}
// SAFETY: as above; the handle is never mutated.
unsafe impl Sync for Function {}

impl Function {
    /// `cuFuncSetAttribute(CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, bytes)`.
    pub fn set_max_dynamic_shared(&self, bytes: i32) -> Result<(), CudaError> {
        // SAFETY: a function handle whose module `self` keeps loaded; the driver checks the value.
        check(unsafe {
            (api()?.cuFuncSetAttribute)(self.raw, sys::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, bytes)
        })
    }

    /// `cuOccupancyMaxActiveBlocksPerMultiprocessor`: blocks of `block` threads with `shared`
    /// dynamic bytes resident on one SM at once.
    pub fn max_active_blocks_per_multiprocessor(&self, block: u32, shared: usize) -> Result<u32, CudaError> {
        let mut blocks: c_int = 0;
        // SAFETY: an out-pointer to a local and a function handle whose module `self` keeps loaded.
        check(unsafe {
            (api()?.cuOccupancyMaxActiveBlocksPerMultiprocessor)(&mut blocks, self.raw, block as c_int, shared)
        })?;
        Ok(blocks.max(0) as u32)
    }

    /// The context of the function's module.
    pub fn context(&self) -> &Context {
        &self.module.ctx
    }
}

/// A stream (`CUstream`, `cuStreamCreate`), destroyed (`cuStreamDestroy`) in its context when
/// dropped; it keeps the context alive until then.
pub struct Stream {
    raw: sys::CUstream,
    ctx: Context,
}

// SAFETY: a stream handle may be used from any thread where its context is current.
unsafe impl Send for Stream {}
// SAFETY: as above; the driver serialises work queued on one stream from several threads.
unsafe impl Sync for Stream {}

impl Stream {
    /// `cuStreamCreate(CU_STREAM_DEFAULT)` in `ctx` (made current on this thread first,
    /// `cuCtxSetCurrent`): ordered with the legacy default stream, where synchronous copies and
    /// memsets go, so a launch queued after them sees them done (cust 0.3.2 made its streams so
    /// too, whatever flags it was given).
    pub fn new(ctx: &Context) -> Result<Stream, CudaError> {
        ctx.set_current()?;
        let mut raw: sys::CUstream = std::ptr::null_mut();
        // SAFETY: an out-pointer to a local; `ctx` is current, so the stream is made in it.
        check(unsafe { (api()?.cuStreamCreate)(&mut raw, sys::CU_STREAM_DEFAULT) })?;
        Ok(Stream { raw, ctx: ctx.clone() })
    }

    /// `cuLaunchKernel` of `function` over a 1-D grid, with the packed parameter pointers
    /// `params`.
    ///
    /// # Safety
    /// `params` match the kernel's parameter list in number, order and size, and every device
    /// address among them is valid for what the kernel does with it.
    pub unsafe fn launch(
        &self,
        function: &Function,
        grid: u32,
        block: u32,
        shared: u32,
        params: &[*mut c_void],
    ) -> Result<(), CudaError> {
        let api = api()?;
        // SAFETY: a function whose module `function` keeps loaded and a live stream; the
        // parameters are the caller's promise; the driver reads them before returning.
        check(unsafe {
            (api.cuLaunchKernel)(
                function.raw,
                grid,
                1,
                1,
                block,
                1,
                1,
                shared,
                self.raw,
                params.as_ptr().cast_mut(),
                std::ptr::null_mut(),
            )
        })
    }

    /// `cuStreamQuery`: `Ok(true)` once the stream's work has finished, `Ok(false)` while it
    /// runs, or the error the work raised.
    pub fn query(&self) -> Result<bool, CudaError> {
        // SAFETY: a live stream handle.
        match unsafe { (api()?.cuStreamQuery)(self.raw) } {
            sys::CUDA_ERROR_NOT_READY => Ok(false),
            r => check(r).map(|()| true),
        }
    }

    /// `cuStreamSynchronize`: waits for the stream's work; reports an error a kernel raised.
    pub fn synchronize(&self) -> Result<(), CudaError> {
        // SAFETY: a live stream handle.
        check(unsafe { (api()?.cuStreamSynchronize)(self.raw) })
    }

    /// `cuLaunchHostFunc`: queues `function(data)`, which a thread of the driver runs once the
    /// stream's work before it has finished; the stream's later work waits for it to return.
    ///
    /// # Safety
    /// `function` may make no CUDA call, and `data` stays valid until `function` has run with it
    /// (it owns it, or it outlives the stream's work).
    pub unsafe fn launch_host_func(
        &self,
        function: sys::CUhostFn,
        data: *mut std::ffi::c_void,
    ) -> Result<(), CudaError> {
        // SAFETY: a live stream handle; the function and its data as the caller promised.
        check(unsafe { (api()?.cuLaunchHostFunc)(self.raw, function, data) })
    }
}

impl Drop for Stream {
    fn drop(&mut self) {
        in_context(&self.ctx, |api| {
            // SAFETY: the stream made in `new`, destroyed once, in its own context.
            unsafe { (api.cuStreamDestroy_v2)(self.raw) };
        });
    }
}

/// An event that records timing (`CUevent`, `cuEventCreate`), destroyed (`cuEventDestroy`) in
/// its context when dropped; it keeps the context alive until then.
pub struct Event {
    raw: sys::CUevent,
    ctx: Context,
}

// SAFETY: an event handle may be used from any thread where its context is current.
unsafe impl Send for Event {}

impl Event {
    /// `cuEventCreate(CU_EVENT_DEFAULT)` in `ctx` (made current on this thread first,
    /// `cuCtxSetCurrent`).
    pub fn new(ctx: &Context) -> Result<Event, CudaError> {
        ctx.set_current()?;
        let mut raw: sys::CUevent = std::ptr::null_mut();
        // SAFETY: an out-pointer to a local; `ctx` is current, so the event is made in it.
        check(unsafe { (api()?.cuEventCreate)(&mut raw, sys::CU_EVENT_DEFAULT) })?;
        Ok(Event { raw, ctx: ctx.clone() })
    }

    /// `cuEventRecord` on `stream`.
    pub fn record(&self, stream: &Stream) -> Result<(), CudaError> {
        // SAFETY: live event and stream handles.
        check(unsafe { (api()?.cuEventRecord)(self.raw, stream.raw) })
    }

    /// `cuEventQuery`: `Ok(true)` once the work before the record has finished.
    pub fn query(&self) -> Result<bool, CudaError> {
        // SAFETY: a live event handle.
        match unsafe { (api()?.cuEventQuery)(self.raw) } {
            sys::CUDA_ERROR_NOT_READY => Ok(false),
            r => check(r).map(|()| true),
        }
    }

    /// `cuEventSynchronize`.
    pub fn synchronize(&self) -> Result<(), CudaError> {
        // SAFETY: a live event handle.
        check(unsafe { (api()?.cuEventSynchronize)(self.raw) })
    }

    /// `cuEventElapsedTime(start, self)`: milliseconds between two recorded events.
    pub fn elapsed_ms_since(&self, start: &Event) -> Result<f32, CudaError> {
        let mut ms = 0f32;
        // SAFETY: an out-pointer to a local and two live event handles.
        check(unsafe { (api()?.cuEventElapsedTime)(&mut ms, start.raw, self.raw) })?;
        Ok(ms)
    }
}

impl Drop for Event {
    fn drop(&mut self) {
        in_context(&self.ctx, |api| {
            // SAFETY: the event made in `new`, destroyed once, in its own context.
            unsafe { (api.cuEventDestroy_v2)(self.raw) };
        });
    }
}

/// Device memory (`cuMemAlloc`), freed (`cuMemFree`) in its context when dropped; it keeps the
/// context alive until then.
pub struct DeviceMemory {
    address: CUdeviceptr,
    bytes: usize,
    ctx: Context,
}

// SAFETY: a device allocation is reachable from any thread of the process; access to its
// contents goes through the driver's calls, which the owner orders.
unsafe impl Send for DeviceMemory {}
// SAFETY: as above; `&DeviceMemory` only reads or hands out the address.
unsafe impl Sync for DeviceMemory {}

impl DeviceMemory {
    /// `cuMemAlloc` of `bytes` (at least 1) in `ctx` (made current on this thread first,
    /// `cuCtxSetCurrent`): contents unspecified.
    pub fn alloc(ctx: &Context, bytes: usize) -> Result<DeviceMemory, CudaError> {
        ctx.set_current()?;
        let mut address: CUdeviceptr = 0;
        // SAFETY: an out-pointer to a local; `ctx` is current, so the memory is its.
        check(unsafe { (api()?.cuMemAlloc_v2)(&mut address, bytes) })?;
        Ok(DeviceMemory { address, bytes, ctx: ctx.clone() })
    }

    /// The device address of the first byte.
    pub fn address(&self) -> u64 {
        self.address
    }

    /// `cuMemsetD8` of every byte (on the legacy default stream).
    pub fn set_bytes(&mut self, value: u8) -> Result<(), CudaError> {
        // SAFETY: the allocation's own address and size.
        check(unsafe { (api()?.cuMemsetD8_v2)(self.address, value, self.bytes) })
    }

    /// `cuMemcpyHtoD` of `src` into the start of the allocation.
    pub fn copy_from_host(&mut self, src: &[u8]) -> Result<(), CudaError> {
        if src.len() > self.bytes {
            return Err(CudaError::InvalidValue);
        }
        // SAFETY: `src` is readable for its length, which fits the allocation.
        check(unsafe { (api()?.cuMemcpyHtoD_v2)(self.address, src.as_ptr().cast(), src.len()) })
    }

    /// `cuMemcpyDtoH` of the start of the allocation into `dst`.
    pub fn copy_to_host(&self, dst: &mut [u8]) -> Result<(), CudaError> {
        if dst.len() > self.bytes {
            return Err(CudaError::InvalidValue);
        }
        // SAFETY: `dst` is writable for its length, which fits the allocation.
        check(unsafe { (api()?.cuMemcpyDtoH_v2)(dst.as_mut_ptr().cast(), self.address, dst.len()) })
    }
}

impl Drop for DeviceMemory {
    fn drop(&mut self) {
        in_context(&self.ctx, |api| {
            // SAFETY: the allocation made in `alloc`, freed once, in its own context.
            unsafe { (api.cuMemFree_v2)(self.address) };
        });
    }
}

/// `cuMemcpyDtoDAsync` of `bytes` from device address `src` to `dst`, queued on `stream`.
///
/// # Safety
/// Both ranges are live device memory of the stream's context for as long as the copy runs,
/// and do not overlap.
pub unsafe fn copy_device_async(dst: u64, src: u64, bytes: usize, stream: &Stream) -> Result<(), CudaError> {
    let api = api()?;
    // SAFETY: forwarded from the caller; a live stream handle.
    check(unsafe { (api.cuMemcpyDtoDAsync_v2)(dst, src, bytes, stream.raw) })
}

/// `cuMemcpyDtoHAsync` of `bytes` from device address `src` to `dst`, queued on `stream`.
///
/// # Safety
/// `src` holds `bytes` readable device bytes, and `dst` is page-locked host memory writable for
/// `bytes` that stays so until the copy has completed.
pub unsafe fn copy_to_host_async(dst: *mut c_void, src: u64, bytes: usize, stream: &Stream) -> Result<(), CudaError> {
    let api = api()?;
    // SAFETY: forwarded from the caller; a live stream handle.
    check(unsafe { (api.cuMemcpyDtoHAsync_v2)(dst, src, bytes, stream.raw) })
}

/// Page-locked host memory mapped into the device's address space (`cuMemHostAlloc` with
/// `CU_MEMHOSTALLOC_DEVICEMAP`), freed (`cuMemFreeHost`) in its context when dropped; it keeps
/// the context alive until then.
pub struct MappedHost {
    host: *mut c_void,
    device: CUdeviceptr,
    ctx: Context,
}

// SAFETY: process-wide page-locked memory; its owner orders the accesses.
unsafe impl Send for MappedHost {}

impl MappedHost {
    /// `bytes` of mapped memory in `ctx` (made current on this thread first, `cuCtxSetCurrent`),
    /// and its device address (`cuMemHostGetDevicePointer`). The error says which of the three
    /// calls failed (`cuCtxSetCurrent`, `cuMemHostAlloc`, `cuMemHostGetDevicePointer`).
    pub fn alloc(ctx: &Context, bytes: usize) -> Result<MappedHost, (&'static str, CudaError)> {
        ctx.set_current().map_err(|e| ("cuCtxSetCurrent", e))?;
        let api = api().map_err(|e| ("cuMemHostAlloc", e))?;
        let mut host: *mut c_void = std::ptr::null_mut();
        // SAFETY: an out-pointer to a local; `ctx` is current, so the memory is mapped into it.
        check(unsafe { (api.cuMemHostAlloc)(&mut host, bytes, sys::CU_MEMHOSTALLOC_DEVICEMAP) })
            .map_err(|e| ("cuMemHostAlloc", e))?;
        // Owned from here: a failure below frees it.
        let mut mapped = MappedHost { host, device: 0, ctx: ctx.clone() };
        // SAFETY: an out-pointer into `mapped`, and the mapped allocation just made.
        check(unsafe { (api.cuMemHostGetDevicePointer_v2)(&mut mapped.device, host, 0) })
            .map_err(|e| ("cuMemHostGetDevicePointer", e))?;
        Ok(mapped)
    }

    /// The host address.
    pub fn host(&self) -> *mut c_void {
        self.host
    }

    /// The device address of the same bytes.
    pub fn device(&self) -> u64 {
        self.device
    }
}

impl Drop for MappedHost {
    fn drop(&mut self) {
        in_context(&self.ctx, |api| {
            // SAFETY: the allocation made in `alloc`, freed once, in its own context.
            unsafe { (api.cuMemFreeHost)(self.host) };
        });
    }
}

/// A CUDA graph of one kernel launch and its executable form (`cuGraphCreate`,
/// `cuGraphInstantiateWithFlags`), both destroyed (`cuGraphExecDestroy`, `cuGraphDestroy`) in
/// the kernel's context when dropped. It holds its kernel's `Function`, so the module stays
/// loaded (and the context retained) while the graph can launch it.
pub struct Graph {
    graph: sys::CUgraph,
    exec: sys::CUgraphExec,
    function: Function,
}

// SAFETY: driver handles of the function's context, usable from any thread where it is current;
// `Graph` only launches and destroys them.
unsafe impl Send for Graph {}

/// Which step of [`Graph::of_kernel`] failed: making the context current or `cuGraphCreate`, or
/// adding the node and instantiating.
#[derive(Debug)]
pub enum GraphError {
    /// `cuCtxSetCurrent` or `cuGraphCreate` failed.
    Create(CudaError),
    /// `cuGraphAddKernelNode` or `cuGraphInstantiateWithFlags` failed.
    Build(CudaError),
}

impl Graph {
    /// A graph of one node, a launch of `function` over a 1-D grid with the packed parameter
    /// pointers `params` (the driver copies them), instantiated in the function's context (made
    /// current on this thread first, `cuCtxSetCurrent`): built node by node (`cuGraphCreate`,
    /// `cuGraphAddKernelNode`, `cuGraphInstantiateWithFlags`), not by capturing a stream.
    ///
    /// # Safety
    /// As [`Stream::launch`], for every launch of the graph.
    pub(crate) unsafe fn of_kernel(
        function: &Function,
        grid: u32,
        block: u32,
        shared: u32,
        params: &[*mut c_void],
    ) -> Result<Graph, GraphError> {
        function.context().set_current().map_err(GraphError::Create)?;
        let api = api().map_err(GraphError::Create)?;
        let node = sys::CUDA_KERNEL_NODE_PARAMS {
            func: function.raw,
            gridDimX: grid,
            gridDimY: 1,
            gridDimZ: 1,
            blockDimX: block,
            blockDimY: 1,
            blockDimZ: 1,
            sharedMemBytes: shared,
            kernelParams: params.as_ptr().cast_mut(),
            extra: std::ptr::null_mut(),
        };
        let mut graph: sys::CUgraph = std::ptr::null_mut();
        // SAFETY: an out-pointer for a new, empty graph.
        check(unsafe { (api.cuGraphCreate)(&mut graph, 0) }).map_err(GraphError::Create)?;
        // Owned from here: a failure below destroys what was made.
        let mut made = Graph { graph, exec: std::ptr::null_mut(), function: function.clone() };
        let mut added: sys::CUgraphNode = std::ptr::null_mut();
        // SAFETY: the graph just made; `node` names a function whose module `made` keeps loaded
        // and points to `params`, which the driver copies; no dependencies.
        check(unsafe { (api.cuGraphAddKernelNode)(&mut added, graph, std::ptr::null(), 0, &node) })
            .map_err(GraphError::Build)?;
        // SAFETY: the graph just made, with its one node; an out-pointer into `made`.
        check(unsafe { (api.cuGraphInstantiateWithFlags)(&mut made.exec, graph, 0) }).map_err(GraphError::Build)?;
        Ok(made)
    }

    /// `cuGraphLaunch` on `stream`.
    pub(crate) fn launch(&self, stream: &Stream) -> Result<(), CudaError> {
        // SAFETY: an instantiated graph, whose kernel's module `self` keeps loaded, and a live
        // stream; what its kernel touches was promised valid by the caller of `of_kernel`.
        check(unsafe { (api()?.cuGraphLaunch)(self.exec, stream.raw) })
    }
}

impl Drop for Graph {
    fn drop(&mut self) {
        in_context(self.function.context(), |api| {
            // SAFETY: handles made by `of_kernel`, destroyed once, here, in their context (the
            // executable graph only where instantiation succeeded); the function's module is
            // unloaded only after (the `function` field drops after this).
            unsafe {
                if !self.exec.is_null() {
                    (api.cuGraphExecDestroy)(self.exec);
                }
                (api.cuGraphDestroy)(self.graph);
            }
        });
    }
}

/// The driver's JIT linker (`cuLinkCreate`): PTX and libraries in, one cubin out; the link
/// state is destroyed (`cuLinkDestroy`) in its context when dropped, and keeps the context alive
/// until then. Its error log is kept in a buffer of its own.
pub struct Linker {
    state: sys::CUlinkState,
    /// The error log the driver writes (its address was given to `cuLinkCreate`); freed after
    /// the link state (fields drop after `Drop::drop`).
    log: Box<[u8]>,
    /// The option arrays given to `cuLinkCreate`, which the driver keeps for the life of the
    /// link state and writes back into (the log's filled size, into the size option's value,
    /// when a step ends in an error or the link completes): on the heap, freed after the state. Kept on
    /// `new`'s stack, as they once were, the write-back landed in a stack frame long gone: a
    /// test thread returned to an address whose low half was zero (seen on the H200, a failed
    /// link of the nested module).
    _options: Box<[sys::CUjit_option; 2]>,
    _values: Box<[*mut c_void; 2]>,
    ctx: Context,
}

impl Linker {
    /// `cuLinkCreate` with an error log of 16 KiB, in `ctx` (made current on this thread first,
    /// `cuCtxSetCurrent`).
    pub fn new(ctx: &Context) -> Result<Linker, CudaError> {
        ctx.set_current()?;
        let api = api()?;
        let mut log = vec![0u8; 16 * 1024].into_boxed_slice();
        let mut options = Box::new([sys::CU_JIT_ERROR_LOG_BUFFER, sys::CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES]);
        let mut values = Box::new([log.as_mut_ptr().cast::<c_void>(), log.len() as *mut c_void]);
        let mut state: sys::CUlinkState = std::ptr::null_mut();
        // SAFETY: two options whose arrays and values (the log buffer and its size) are on the
        // heap and outlive the link state: they move into the `Linker` with it, and are freed
        // after `cuLinkDestroy`.
        check(unsafe {
            (api.cuLinkCreate_v2)(options.len() as u32, options.as_mut_ptr(), values.as_mut_ptr(), &mut state)
        })?;
        Ok(Linker { state, log, _options: options, _values: values, ctx: ctx.clone() })
    }
    /// `cuLinkAddData(CU_JIT_INPUT_PTX)`: `ptx` as relocatable code, under `name`.
    pub fn add_ptx(&mut self, ptx: &CStr, name: &CStr) -> Result<(), CudaError> {
        let text = ptx.to_bytes_with_nul();
        // SAFETY: a live link state; the NUL-terminated text and name outlive the call, which
        // copies them.
        check(unsafe {
            (api()?.cuLinkAddData_v2)(
                self.state,
                sys::CU_JIT_INPUT_PTX,
                text.as_ptr().cast_mut().cast(),
                text.len(),
                name.as_ptr(),
                0,
                std::ptr::null_mut(),
                std::ptr::null_mut(),
            )
        })
    }

    /// `cuLinkAddFile(CU_JIT_INPUT_LIBRARY)`: the static library at `path` (`libcudadevrt.a`).
    pub fn add_library(&mut self, path: &CStr) -> Result<(), CudaError> {
        // SAFETY: a live link state and a NUL-terminated path.
        check(unsafe {
            (api()?.cuLinkAddFile_v2)(
                self.state,
                sys::CU_JIT_INPUT_LIBRARY,
                path.as_ptr(),
                0,
                std::ptr::null_mut(),
                std::ptr::null_mut(),
            )
        })
    }

    /// `cuLinkComplete`: the linked cubin, copied out of the link state.
    pub fn complete(&mut self) -> Result<Vec<u8>, CudaError> {
        let mut cubin: *mut c_void = std::ptr::null_mut();
        let mut size = 0usize;
        // SAFETY: a live link state and out-pointers to locals.
        check(unsafe { (api()?.cuLinkComplete)(self.state, &mut cubin, &mut size) })?;
        // SAFETY: the cubin belongs to the link state, alive until `self` drops: copied now.
        Ok(unsafe { std::slice::from_raw_parts(cubin.cast::<u8>(), size) }.to_vec())
    }

    /// The error log so far, as one line (its lines joined with "; ").
    pub fn log(&self) -> String {
        let text = self.log.split(|&b| b == 0).next().unwrap_or_default();
        String::from_utf8_lossy(text).trim().replace('\n', "; ")
    }
}

impl Drop for Linker {
    fn drop(&mut self) {
        in_context(&self.ctx, |api| {
            // SAFETY: the link state made in `new`, destroyed once, in its own context, before
            // the log buffer it writes to is freed.
            unsafe { (api.cuLinkDestroy)(self.state) };
        });
    }
}

#[cfg(test)]
mod tests;
