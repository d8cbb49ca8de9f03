//! The driver layer's unit tests: its function list, and who frees what, when and in which
//! context, against a fake driver ([`sys::fake`]) that logs what it is asked and in which
//! context (the one made current last on the test's thread).

use std::any::Any;
use std::cell::RefCell;
use std::ffi::{c_char, c_uint, c_ulonglong, c_void};

use super::sys::{self, CUDA_KERNEL_NODE_PARAMS, CUdevice, CUgraphNode, CUjit_option, CUresult, FUNCTIONS};
use super::*;

/// The tests' stand-in driver (built by the root package's build script) defines the
/// functions of `runtime/cuda-stub/functions.txt`: the same list as the table's.
#[test]
fn the_function_list_is_the_tables() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/cuda-stub/functions.txt");
    let text = std::fs::read_to_string(path).unwrap();
    let listed: Vec<&str> = text.lines().map(str::trim).filter(|l| !l.is_empty() && !l.starts_with('#')).collect();
    assert_eq!(listed, FUNCTIONS, "{path} lists other functions than driver/sys.rs loads");
}

/// What the fake driver of this thread knows.
#[derive(Default)]
struct State {
    /// The current context's handle (0: none).
    current: usize,
    /// The last handle handed out for an object (contexts have their own, [`context_handle`]).
    last: usize,
    /// Retains of each device's primary context not released yet.
    retained: [i32; 2],
    /// Modules loaded and not unloaded.
    loaded: Vec<usize>,
    /// A function that fails (`CUDA_ERROR_INVALID_VALUE`) while named here.
    fail: &'static str,
    /// What was done, in order: `load #1 in ctx0`, `unload #1 in ctx0`, `release ctx0`, ….
    log: Vec<String>,
}

thread_local! {
    static STATE: RefCell<State> = RefCell::new(State::default());
}

/// The fake driver installed on this test's thread, with a fresh state; uninstalled when dropped.
struct Fake {
    _installed: sys::fake::Installed,
}

impl Fake {
    fn new() -> Fake {
        STATE.with_borrow_mut(|s| *s = State::default());
        Fake { _installed: sys::fake::install(fake_api()) }
    }

    /// The log so far, emptied.
    fn take_log(&self) -> Vec<String> {
        STATE.with_borrow_mut(|s| std::mem::take(&mut s.log))
    }

    /// Makes `function` fail from now on ("" for none).
    fn fail(&self, function: &'static str) {
        STATE.with_borrow_mut(|s| s.fail = function);
    }

    /// Every retain released and every module unloaded?
    fn all_released(&self) -> bool {
        STATE.with_borrow(|s| s.retained == [0, 0] && s.loaded.is_empty())
    }
}

/// The fake context handle of device `device`'s primary context.
fn context_handle(device: CUdevice) -> usize {
    0x1000 * (device as usize + 1)
}

/// `ctx0` for a context handle, `#3` for another handle.
fn name(handle: usize) -> String {
    match handle {
        0 => "no context".into(),
        h if h % 0x1000 == 0 => format!("ctx{}", h / 0x1000 - 1),
        h => format!("#{h}"),
    }
}

/// Logs `what` with the current context: `what in ctx0`.
fn log_in_context(what: String) {
    STATE.with_borrow_mut(|s| {
        let entry = format!("{what} in {}", name(s.current));
        s.log.push(entry);
    });
}

fn log(what: String) {
    STATE.with_borrow_mut(|s| s.log.push(what));
}

/// `CUDA_ERROR_INVALID_VALUE` where `function` is the one that fails, else `CUDA_SUCCESS`.
fn result_of(function: &str) -> CUresult {
    STATE.with_borrow(|s| if s.fail == function { 1 } else { sys::CUDA_SUCCESS })
}

/// A new object handle of kind `kind`, logged as made in the current context.
fn make(kind: &str) -> *mut c_void {
    let handle = STATE.with_borrow_mut(|s| {
        s.last += 1;
        s.last
    });
    log_in_context(format!("{kind} {}", name(handle)));
    std::ptr::without_provenance_mut(handle)
}

/// Logs the freeing of object `handle` of kind `kind` in the current context.
fn free(kind: &str, handle: *mut c_void) -> CUresult {
    log_in_context(format!("free {kind} {}", name(handle.addr())));
    sys::CUDA_SUCCESS
}

/// Writes `value` through the out-pointer `out`, where the fake call succeeds.
///
/// # Safety
/// `out` is writable (every out-pointer the layer passes is).
unsafe fn give<T>(function: &str, out: *mut T, value: impl FnOnce() -> T) -> CUresult {
    let r = result_of(function);
    if r == sys::CUDA_SUCCESS {
        // SAFETY: the caller's promise.
        unsafe { out.write(value()) };
    }
    r
}

/// The fake driver: the functions the ownership tests reach; every other answers
/// `CUDA_ERROR_NOT_SUPPORTED`.
fn fake_api() -> Api {
    Api {
        cuDevicePrimaryCtxRetain: retain,
        cuDevicePrimaryCtxRelease_v2: release,
        cuCtxSetCurrent: set_current,
        cuModuleLoadData: module_load,
        cuModuleUnload: module_unload,
        cuModuleGetFunction: module_function,
        cuLaunchKernel: launch,
        cuStreamCreate: stream_create,
        cuStreamDestroy_v2: stream_destroy,
        cuEventCreate: event_create,
        cuEventDestroy_v2: event_destroy,
        cuMemAlloc_v2: mem_alloc,
        cuMemFree_v2: mem_free,
        cuMemHostAlloc: host_alloc,
        cuMemHostGetDevicePointer_v2: host_device_pointer,
        cuMemFreeHost: host_free,
        cuGraphCreate: graph_create,
        cuGraphAddKernelNode: add_kernel_node,
        cuGraphInstantiateWithFlags: graph_instantiate,
        cuGraphExecDestroy: exec_destroy,
        cuGraphDestroy: graph_destroy,
        cuLinkCreate_v2: link_create,
        cuLinkDestroy: link_destroy,
        ..Api::refusing()
    }
}

/// [`give`] for the fake's closures, whose out-pointers are the layer's (always writable).
fn unsafe_give<T>(function: &str, out: *mut T, value: impl FnOnce() -> T) -> CUresult {
    // SAFETY: every out-pointer the driver layer passes points to a local or a field.
    unsafe { give(function, out, value) }
}

extern "C" fn retain(out: *mut CUcontext, device: CUdevice) -> CUresult {
    let handle = context_handle(device);
    let r = unsafe_give("cuDevicePrimaryCtxRetain", out, || std::ptr::without_provenance_mut(handle));
    if r == sys::CUDA_SUCCESS {
        STATE.with_borrow_mut(|s| s.retained[device as usize] += 1);
        log(format!("retain {}", name(handle)));
    }
    r
}

extern "C" fn release(device: CUdevice) -> CUresult {
    STATE.with_borrow_mut(|s| s.retained[device as usize] -= 1);
    log(format!("release {}", name(context_handle(device))));
    sys::CUDA_SUCCESS
}

extern "C" fn set_current(ctx: CUcontext) -> CUresult {
    let r = result_of("cuCtxSetCurrent");
    if r == sys::CUDA_SUCCESS {
        STATE.with_borrow_mut(|s| s.current = ctx.addr());
    }
    r
}

extern "C" fn module_load(out: *mut sys::CUmodule, _image: *const c_void) -> CUresult {
    let r = unsafe_give("cuModuleLoadData", out, || make("load"));
    if r == sys::CUDA_SUCCESS {
        // SAFETY: just written.
        let module = unsafe { out.read() }.addr();
        STATE.with_borrow_mut(|s| s.loaded.push(module));
    }
    r
}

extern "C" fn module_unload(module: sys::CUmodule) -> CUresult {
    STATE.with_borrow_mut(|s| s.loaded.retain(|&m| m != module.addr()));
    log_in_context(format!("unload {}", name(module.addr())));
    sys::CUDA_SUCCESS
}

/// A function's handle is its module's, plus 0x10000.
extern "C" fn module_function(out: *mut sys::CUfunction, module: sys::CUmodule, _name: *const c_char) -> CUresult {
    unsafe_give("cuModuleGetFunction", out, || std::ptr::without_provenance_mut(module.addr() + 0x10000))
}

/// A launch of a function whose module is unloaded is `CUDA_ERROR_INVALID_HANDLE` (400).
extern "C" fn launch(
    function: sys::CUfunction,
    _: c_uint,
    _: c_uint,
    _: c_uint,
    _: c_uint,
    _: c_uint,
    _: c_uint,
    _: c_uint,
    _: sys::CUstream,
    _: *mut *mut c_void,
    _: *mut *mut c_void,
) -> CUresult {
    let module = function.addr() - 0x10000;
    log(format!("launch a kernel of {}", name(module)));
    if STATE.with_borrow(|s| s.loaded.contains(&module)) { sys::CUDA_SUCCESS } else { 400 }
}

extern "C" fn add_kernel_node(
    out: *mut CUgraphNode,
    _: sys::CUgraph,
    _: *const CUgraphNode,
    _: usize,
    _: *const CUDA_KERNEL_NODE_PARAMS,
) -> CUresult {
    unsafe_give("cuGraphAddKernelNode", out, || std::ptr::without_provenance_mut(1))
}

extern "C" fn link_create(
    _: c_uint,
    _: *mut CUjit_option,
    _: *mut *mut c_void,
    out: *mut sys::CUlinkState,
) -> CUresult {
    unsafe_give("cuLinkCreate_v2", out, || make("link"))
}

extern "C" fn stream_create(out: *mut sys::CUstream, _: c_uint) -> CUresult {
    unsafe_give("cuStreamCreate", out, || make("stream"))
}

extern "C" fn stream_destroy(stream: sys::CUstream) -> CUresult {
    free("stream", stream)
}

extern "C" fn event_create(out: *mut sys::CUevent, _: c_uint) -> CUresult {
    unsafe_give("cuEventCreate", out, || make("event"))
}

extern "C" fn event_destroy(event: sys::CUevent) -> CUresult {
    free("event", event)
}

extern "C" fn mem_alloc(out: *mut sys::CUdeviceptr, _: usize) -> CUresult {
    unsafe_give("cuMemAlloc_v2", out, || make("memory").addr() as u64)
}

extern "C" fn mem_free(address: sys::CUdeviceptr) -> CUresult {
    free("memory", std::ptr::without_provenance_mut(address as usize))
}

extern "C" fn host_alloc(out: *mut *mut c_void, _: usize, _: c_uint) -> CUresult {
    unsafe_give("cuMemHostAlloc", out, || make("host"))
}

extern "C" fn host_device_pointer(out: *mut sys::CUdeviceptr, host: *mut c_void, _: c_uint) -> CUresult {
    unsafe_give("cuMemHostGetDevicePointer_v2", out, || host.addr() as u64)
}

extern "C" fn host_free(host: *mut c_void) -> CUresult {
    free("host", host)
}

extern "C" fn graph_create(out: *mut sys::CUgraph, _: c_uint) -> CUresult {
    unsafe_give("cuGraphCreate", out, || make("graph"))
}

extern "C" fn graph_instantiate(out: *mut sys::CUgraphExec, _: sys::CUgraph, _: c_ulonglong) -> CUresult {
    unsafe_give("cuGraphInstantiateWithFlags", out, || make("exec"))
}

extern "C" fn exec_destroy(exec: sys::CUgraphExec) -> CUresult {
    free("exec", exec)
}

extern "C" fn graph_destroy(graph: sys::CUgraph) -> CUresult {
    free("graph", graph)
}

extern "C" fn link_destroy(state: sys::CUlinkState) -> CUresult {
    free("link", state)
}

/// Makes `ctx` current (so that a drop that follows must bind its own).
fn bind_other(ctx: &Context) {
    ctx.set_current().unwrap();
}

/// A function keeps its module loaded after the module (and its context) is dropped: a launch
/// of it still finds the module, which is unloaded, in its own context, with the last function;
/// then the context is released.
#[test]
fn a_function_keeps_its_module_loaded_and_the_module_its_context() {
    let fake = Fake::new();
    let ctx = Context::primary(Device(0)).unwrap();
    let module = Module::from_ptx(&ctx, ".version 7.0").unwrap();
    let f = module.function("k").unwrap();
    let g = f.clone();
    drop((module, ctx));
    let other = Context::primary(Device(1)).unwrap();
    let stream = Stream::new(f.context()).unwrap();
    // SAFETY: the fake driver reads no parameters.
    unsafe { stream.launch(&f, 1, 1, 0, &[]) }.unwrap();
    bind_other(&other);
    drop((stream, f));
    assert_eq!(
        fake.take_log(),
        [
            "retain ctx0",
            "load #1 in ctx0",
            "retain ctx1",
            "stream #2 in ctx0",
            "launch a kernel of #1",
            "free stream #2 in ctx0"
        ]
    );
    drop(g);
    assert_eq!(fake.take_log(), ["unload #1 in ctx0", "release ctx0"]);
    drop(other);
    assert_eq!(fake.take_log(), ["release ctx1"]);
    assert!(fake.all_released());
}

/// Every owner of a context makes it current to be made and again to be freed, whatever is
/// current then, and the context is released after the last of them, not before.
#[test]
fn every_owner_binds_its_context_and_the_last_releases_it() {
    let fake = Fake::new();
    let ctx = Context::primary(Device(0)).unwrap();
    let other = Context::primary(Device(1)).unwrap();
    let mut owners: Vec<Box<dyn Any>> = Vec::new();
    bind_other(&other);
    owners.push(Box::new(Stream::new(&ctx).unwrap()));
    bind_other(&other);
    owners.push(Box::new(Event::new(&ctx).unwrap()));
    bind_other(&other);
    owners.push(Box::new(DeviceMemory::alloc(&ctx, 64).unwrap()));
    bind_other(&other);
    owners.push(Box::new(MappedHost::alloc(&ctx, 16).unwrap()));
    bind_other(&other);
    owners.push(Box::new(Linker::new(&ctx).unwrap()));
    drop(ctx);
    let kinds = ["stream", "event", "memory", "host", "link"];
    let made: Vec<String> = kinds.iter().enumerate().map(|(i, k)| format!("{k} #{} in ctx0", i + 1)).collect();
    assert_eq!(fake.take_log(), [&["retain ctx0".to_string(), "retain ctx1".into()][..], &made].concat());
    for owner in owners {
        bind_other(&other);
        drop(owner);
    }
    let mut freed: Vec<String> =
        kinds.iter().enumerate().map(|(i, k)| format!("free {k} #{} in ctx0", i + 1)).collect();
    freed.push("release ctx0".into());
    assert_eq!(fake.take_log(), freed);
    drop(other);
    assert!(fake.all_released());
}

/// A graph holds its kernel: its module stays loaded until the graph is destroyed, executable
/// first, in the kernel's context; one that failed to instantiate destroys the graph alone.
#[test]
fn a_graph_keeps_its_kernel_and_is_destroyed_in_its_context() {
    let fake = Fake::new();
    let ctx = Context::primary(Device(0)).unwrap();
    let module = Module::from_ptx(&ctx, ".version 7.0").unwrap();
    let f = module.function("k").unwrap();
    // SAFETY: the fake driver launches nothing.
    let graph = unsafe { Graph::of_kernel(&f, 1, 1, 0, &[]) }.unwrap();
    fake.fail("cuGraphInstantiateWithFlags");
    // SAFETY: as above.
    let failed = unsafe { Graph::of_kernel(&f, 1, 1, 0, &[]) };
    assert!(matches!(failed, Err(GraphError::Build(CudaError::InvalidValue))));
    fake.fail("");
    drop((f, module, ctx));
    let other = Context::primary(Device(1)).unwrap();
    drop(graph);
    let log = ["retain ctx0", "load #1 in ctx0", "graph #2 in ctx0", "exec #3 in ctx0", "graph #4 in ctx0"];
    let freed = ["free graph #4 in ctx0", "retain ctx1", "free exec #3 in ctx0", "free graph #2 in ctx0"];
    assert_eq!(fake.take_log(), [&log[..], &freed, &["unload #1 in ctx0", "release ctx0"]].concat());
    drop(other);
    assert!(fake.all_released());
}

/// What a constructor made before a later step failed is freed, and a context whose binding
/// fails is released: nothing is left retained.
#[test]
fn a_failed_step_frees_what_was_made() {
    let fake = Fake::new();
    let ctx = Context::primary(Device(0)).unwrap();
    fake.fail("cuMemHostGetDevicePointer_v2");
    let Err((call, e)) = MappedHost::alloc(&ctx, 16) else { panic!("the mapping did not fail") };
    assert_eq!((call, e), ("cuMemHostGetDevicePointer", CudaError::InvalidValue));
    fake.fail("cuCtxSetCurrent");
    assert!(matches!(Stream::new(&ctx), Err(CudaError::InvalidValue)));
    assert!(matches!(Context::primary(Device(1)), Err(CudaError::InvalidValue)));
    fake.fail("");
    drop(ctx);
    let log = ["retain ctx0", "host #1 in ctx0", "free host #1 in ctx0", "retain ctx1", "release ctx1", "release ctx0"];
    assert_eq!(fake.take_log(), log);
    assert!(fake.all_released());
}

/// The `Send`/`Sync` of the owners: a function, module, context and stream cross threads.
#[test]
fn the_owners_cross_threads() {
    fn shared<T: Send + Sync>() {}
    fn sent<T: Send>() {}
    shared::<Context>();
    shared::<Module>();
    shared::<Function>();
    shared::<Stream>();
    shared::<DeviceMemory>();
    sent::<Event>();
    sent::<MappedHost>();
    sent::<Graph>();
}
