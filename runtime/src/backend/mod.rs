//! One launch API over two backends: a CUDA GPU (through the driver API, whose library the
//! crate's own driver layer opens at run time: no binary links the NVIDIA driver) and the CPU
//! emulator.
//!
//! Everything above this module (launchers, tests, benches, the CLI) is written once
//! against [`Backend`], [`DeviceBuffer`] and [`Kernel`]; the backend choice is a value.

pub mod devrt;
pub(crate) mod driver;
mod gpu;

use std::alloc::{Layout, alloc_zeroed, dealloc};
use std::ffi::c_void;
use std::fmt;
use std::sync::Arc;
use std::time::Instant;

pub use gpu::{AnswerWay, GRAPH_SEQ, Gpu, Graph};

use crate::emu::{Dim3, Emulator};
use crate::error::{CudaContext, CudaError, Error, Result};
use device::global::{Global, GlobalMut};

/// Which backend to use.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum BackendKind {
    /// The GPU when there is one, otherwise the emulator.
    #[default]
    Auto,
    /// The GPU, or an error saying why there is none.
    Gpu,
    /// The CPU emulator.
    Emulator,
}

/// What runs the kernels.
pub enum Backend {
    /// A CUDA GPU, and the stream this backend's work goes to.
    Gpu(GpuStream),
    /// The CPU emulator, and what it reports as its device.
    Emulator(Emulator, DeviceInfo),
}

/// A GPU and one of its streams: the device's default stream, or one of the backend's own
/// ([`Backend::with_new_stream`]).
pub struct GpuStream {
    gpu: &'static Gpu,
    own: Option<Arc<driver::Stream>>,
}

impl GpuStream {
    fn stream(&self) -> &driver::Stream {
        self.own.as_deref().unwrap_or_else(|| self.gpu.stream())
    }
}

/// The device a backend runs on.
#[derive(Clone, Debug)]
pub struct DeviceInfo {
    /// Marketing name (`NVIDIA H100 80GB HBM3`) or `CPU emulator`.
    pub name: String,
    /// A real GPU?
    pub is_gpu: bool,
    /// Compute capability (major, minor); the emulator reports 9.0 (it runs every kernel).
    pub compute_capability: (u32, u32),
    /// Which PTX build was loaded (`sm_90`), or `host` for the emulator.
    pub ptx_arch: &'static str,
    /// Streaming multiprocessors: for the emulator, the ones it plays (the committed GPU's by
    /// default: [`EmulatedSms`](crate::emu::EmulatedSms)).
    pub multiprocessors: u32,
    /// The emulator's worker threads, and where its multiprocessor count comes from; `None`
    /// on a GPU.
    pub emulator: Option<(usize, crate::emu::EmulatedSms)>,
    /// Resident threads per SM.
    pub max_threads_per_multiprocessor: u32,
    /// L2 cache bytes.
    pub l2_bytes: u64,
    /// Device memory bytes.
    pub memory_bytes: u64,
    /// Peak memory bandwidth in bytes/s (memory clock × 2 × bus width); none for the emulator.
    pub peak_bandwidth: Option<f64>,
}

impl fmt::Display for DeviceInfo {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.is_gpu {
            write!(
                f,
                "{} (compute capability {}.{}, {} SMs, {:.1} GiB, PTX {})",
                self.name,
                self.compute_capability.0,
                self.compute_capability.1,
                self.multiprocessors,
                self.memory_bytes as f64 / (1u64 << 30) as f64,
                self.ptx_arch
            )?;
            if let Some(bw) = self.peak_bandwidth {
                write!(f, ", peak {:.0} GB/s", bw / 1e9)?;
            }
            Ok(())
        } else {
            match self.emulator {
                Some((workers, sms)) => write!(
                    f,
                    "{} ({workers} worker threads; grids sized for {} SMs, {})",
                    self.name,
                    self.multiprocessors,
                    sms.describe()
                ),
                None => write!(f, "{} ({} SMs)", self.name, self.multiprocessors),
            }
        }
    }
}

impl Backend {
    /// GPU 0 on its default stream, or `Error::NoGpu` with the cause.
    pub fn gpu() -> Result<Self> {
        Self::gpu_device(0)
    }

    /// The GPU with this ordinal (as CUDA numbers them, after `CUDA_VISIBLE_DEVICES`) on its
    /// default stream, or `Error::NoGpu` with the cause.
    pub fn gpu_device(ordinal: u32) -> Result<Self> {
        Gpu::get(ordinal).map(|gpu| Backend::Gpu(GpuStream { gpu, own: None }))
    }

    /// The same device on a stream of its own: work queued through the new backend is ordered
    /// with itself only, so two backends can keep two independent queues busy. The emulator
    /// runs every launch to completion, so there it is simply another emulator.
    pub fn with_new_stream(&self) -> Result<Self> {
        match self {
            Backend::Gpu(g) => Ok(Backend::Gpu(GpuStream { gpu: g.gpu, own: Some(Arc::new(g.gpu.new_stream()?)) })),
            Backend::Emulator(emu, _) => Ok(Self::with_emulator(emu.clone())),
        }
    }

    /// The CPU emulator with default settings.
    pub fn emulator() -> Self {
        Self::with_emulator(Emulator::new())
    }

    /// The CPU emulator with the given settings. It reports the multiprocessors it plays
    /// ([`Emulator::with_sms`]; what sizes the grids that fill the device): by default the
    /// committed GPU's ([`COMMITTED_GPU_SMS`](crate::emu::COMMITTED_GPU_SMS), the H100's 132),
    /// so that a grid-stride variant launches the grid the GPU launched and its counters
    /// compare with ncu's; `REDUCE_EMULATED_SMS=cpu` (or `--emulated-sms cpu`) gives one per
    /// worker thread.
    pub fn with_emulator(emu: Emulator) -> Self {
        let (sms, from) = emu.sms();
        let info = DeviceInfo {
            name: "CPU emulator".into(),
            is_gpu: false,
            compute_capability: (9, 0),
            ptx_arch: "host",
            multiprocessors: sms,
            emulator: Some((emu.workers(), from)),
            max_threads_per_multiprocessor: 2048,
            l2_bytes: 0,
            memory_bytes: 0,
            peak_bandwidth: None,
        };
        Backend::Emulator(emu, info)
    }

    /// The backend `kind` asks for. For `Auto`, the GPU if usable, else the emulator plus
    /// the reason the GPU could not be used.
    pub fn select(kind: BackendKind) -> Result<(Self, Option<String>)> {
        match kind {
            BackendKind::Gpu => Ok((Self::gpu()?, None)),
            BackendKind::Emulator => Ok((Self::emulator(), None)),
            BackendKind::Auto => match Self::gpu() {
                Ok(b) => Ok((b, None)),
                Err(e) => Ok((Self::emulator(), Some(e.to_string()))),
            },
        }
    }

    /// The same backend with the emulator playing `sms` multiprocessors (a GPU backend is
    /// returned unchanged): what sizes the grids that fill the device.
    pub fn with_sms(self, sms: crate::emu::EmulatedSms) -> Self {
        match self {
            Backend::Emulator(emu, _) => Self::with_emulator(emu.with_sms(sms)),
            gpu => gpu,
        }
    }

    /// The same backend with the emulator's checks set to `checks` (a GPU backend is
    /// returned unchanged).
    pub fn with_checks(self, checks: crate::emu::Checks) -> Self {
        match self {
            Backend::Emulator(emu, info) => Backend::Emulator(emu.with_checks(checks), info),
            gpu => gpu,
        }
    }

    /// The emulator again (the same device memory, so its buffers are valid there), counting
    /// what every launch's warps do ([`Emulator::with_counting`](crate::emu::Emulator::with_counting));
    /// `None` on a GPU, whose counters come from ncu.
    pub fn counting(&self) -> Option<Backend> {
        match self {
            Backend::Emulator(emu, info) => Some(Backend::Emulator(emu.clone().with_counting(), info.clone())),
            _ => None,
        }
    }

    /// The emulator again (the same device memory), counting and keeping every access of block
    /// `block` of each launch, barrier interval by barrier interval
    /// ([`Emulator::with_trace`](crate::emu::Emulator::with_trace)): the access pictures. `None`
    /// on a GPU.
    pub fn tracing(&self, block: u64) -> Option<Backend> {
        match self {
            Backend::Emulator(emu, info) => Some(Backend::Emulator(emu.clone().with_trace(block), info.clone())),
            _ => None,
        }
    }

    /// The counters of the launches since the last call (empty on a GPU, or when not counting).
    pub fn take_counted(&self) -> Vec<crate::emu::Counted> {
        match self {
            Backend::Emulator(emu, _) => emu.take_counted(),
            _ => Vec::new(),
        }
    }

    /// The emulator's checks, or `None` on a GPU.
    pub fn emulator_checks(&self) -> Option<crate::emu::Checks> {
        match self {
            Backend::Emulator(emu, _) => Some(emu.checks()),
            _ => None,
        }
    }

    /// The device.
    pub fn info(&self) -> &DeviceInfo {
        match self {
            Backend::Gpu(g) => g.gpu.info(),
            Backend::Emulator(_, info) => info,
        }
    }

    /// Is this a real GPU?
    pub fn is_gpu(&self) -> bool {
        matches!(self, Backend::Gpu(_))
    }

    fn bind(&self) -> Result<()> {
        match self {
            Backend::Gpu(g) => g.gpu.bind(),
            Backend::Emulator(..) => Ok(()),
        }
    }

    /// A zero-filled buffer of `len` elements (at least one is allocated). On the emulator the
    /// buffer is registered with the emulator's memory check, which names it in a report by the
    /// `file:line` of this call.
    #[track_caller]
    pub fn alloc<T: Element>(&self, len: usize) -> Result<DeviceBuffer<T>> {
        self.alloc_filled(len, true)
    }

    /// A buffer of `len` elements whose contents are unspecified (`cudaMalloc` without a
    /// memset): on the GPU whatever the memory held, on the emulator `0xA5` bytes, and the
    /// emulator's initcheck reports a kernel's load of an element nothing wrote first.
    #[track_caller]
    pub fn alloc_uninit<T: Element>(&self, len: usize) -> Result<DeviceBuffer<T>> {
        self.alloc_filled(len, false)
    }

    #[track_caller]
    fn alloc_filled<T: Element>(&self, len: usize, zeroed: bool) -> Result<DeviceBuffer<T>> {
        let origin = std::panic::Location::caller();
        self.bind()?;
        let repr = match self {
            Backend::Gpu(g) => {
                let bytes = len
                    .max(1)
                    .checked_mul(size_of::<T>())
                    .ok_or_else(|| Error::Invalid(format!("a buffer of {len} elements is too large")))?;
                // `T` is plain data, valid for any bits; a zeroed buffer is filled right below,
                // before anyone reads it.
                let mut b =
                    g.gpu.alloc(bytes).map_err(|error| alloc_failed(bytes, driver::mem_get_info().ok(), error))?;
                if zeroed {
                    b.set_bytes(0).during("zero-filling a new GPU buffer")?;
                }
                Repr::Gpu(b)
            }
            Backend::Emulator(emu, _) => Repr::Host(HostAlloc::new(len.max(1), zeroed, emu, origin)?),
        };
        Ok(DeviceBuffer { repr, len })
    }

    /// A buffer holding a copy of `data`.
    #[track_caller]
    pub fn upload<T: Element>(&self, data: &[T]) -> Result<DeviceBuffer<T>> {
        let mut buf = self.alloc(data.len())?;
        self.write(&mut buf, data)?;
        Ok(buf)
    }

    /// Copies `data` into the start of `buf`.
    pub fn write<T: Element>(&self, buf: &mut DeviceBuffer<T>, data: &[T]) -> Result<()> {
        if data.len() > buf.len {
            return Err(Error::Invalid(format!("{} elements do not fit a buffer of {}", data.len(), buf.len)));
        }
        self.bind()?;
        match &mut buf.repr {
            Repr::Gpu(b) if !data.is_empty() => {
                b.copy_from_host(bytemuck::cast_slice(data)).during("copying to the GPU")
            }
            Repr::Gpu(_) => Ok(()),
            Repr::Host(h) => {
                h.as_mut_slice()[..data.len()].copy_from_slice(data);
                h.registered.mark_init(0, size_of_val(data));
                Ok(())
            }
        }
    }

    /// The first `buf.len()` elements of `buf`, after all work queued before.
    pub fn download<T: Element>(&self, buf: &DeviceBuffer<T>) -> Result<Vec<T>> {
        self.download_prefix(buf, buf.len)
    }

    /// The first `len` elements of `buf`.
    pub fn download_prefix<T: Element>(&self, buf: &DeviceBuffer<T>, len: usize) -> Result<Vec<T>> {
        let mut out = vec![T::default(); len.min(buf.len)];
        self.download_into(buf, &mut out)?;
        Ok(out)
    }

    /// The first `out.len()` elements of `buf` into `out`, after all work queued before (CUDA
    /// C's `cudaMemcpy(out, buf, bytes, cudaMemcpyDeviceToHost)`; the driver's `cuMemcpyDtoH`):
    /// a download into memory the caller keeps (a check that runs after every timed run reuses
    /// one host buffer instead of allocating and faulting in a new one each time). More
    /// elements than `buf` holds is an [`Error::Invalid`], nothing copied.
    ///
    /// ```
    /// # fn main() -> reduce_scan_runtime::Result<()> {
    /// let backend = reduce_scan_runtime::Backend::emulator();
    /// let buf = backend.upload(&[3u32, 1, 4, 1, 5])?;
    /// let mut kept = vec![0u32; 3]; // allocated once, refilled by every check
    /// for _ in 0..2 {
    ///     backend.download_into(&buf, &mut kept)?;
    ///     assert_eq!(kept, [3, 1, 4]);
    /// }
    /// # Ok(())
    /// # }
    /// ```
    pub fn download_into<T: Element>(&self, buf: &DeviceBuffer<T>, out: &mut [T]) -> Result<()> {
        if out.len() > buf.len {
            return Err(Error::Invalid(format!("{} elements asked of a buffer of {}", out.len(), buf.len)));
        }
        self.synchronize()?;
        match &buf.repr {
            Repr::Gpu(b) if !out.is_empty() => {
                b.copy_to_host(bytemuck::cast_slice_mut(out)).during("copying from the GPU")
            }
            Repr::Gpu(_) => Ok(()),
            Repr::Host(h) => {
                out.copy_from_slice(&h.as_slice()[..out.len()]);
                Ok(())
            }
        }
    }

    /// Element `index` of `buf`, after all work queued before: what a synchronous call needs of
    /// its answer. On the GPU a one-thread launch publishes it into mapped page-locked host
    /// memory and the host spins on a flag ([`Gpu::read_word`]: no copy, no stream
    /// synchronisation), the fastest of the ways measured (`examples/time_to_answer.rs`).
    pub fn read_element<T: Element>(&self, buf: &DeviceBuffer<T>, index: usize) -> Result<T> {
        if index >= buf.len {
            return Err(Error::Invalid(format!("element {index} of a buffer of {}", buf.len)));
        }
        let size = std::mem::size_of::<T>();
        match (self, &buf.repr) {
            (Backend::Gpu(g), Repr::Gpu(b)) if size == 4 || size == 8 => {
                g.gpu.bind()?;
                let src = b.address() + (index * size) as u64;
                let word = g.gpu.read_word(g.stream(), src, size)?;
                // SAFETY: `T` is a plain `Element` of at most 8 bytes, and the word's first
                // `size` bytes are the element's (little-endian host, copied byte for byte).
                Ok(unsafe { std::mem::transmute_copy::<u64, T>(&word) })
            }
            _ => Ok(self.download_prefix(buf, index + 1)?[index]),
        }
    }

    /// Does a kernel that publishes its own answer ([`answer_from`](Self::answer_from)) give
    /// synchronous calls their answers here? Always on the emulator; on a GPU unless
    /// `REDUCE_SCAN_ANSWER` asks for another way ([`AnswerWay`]).
    pub fn answers_in_kernel(&self) -> bool {
        match self {
            Backend::Gpu(g) => matches!(g.gpu.answer_way(), AnswerWay::Graph | AnswerWay::InKernel),
            Backend::Emulator(..) => true,
        }
    }

    /// A CUDA graph of one launch of `kernel` at `cfg` with the arguments `args(slot)`, for
    /// repeated calls of one shape ([`Gpu::kernel_graph`]; the slot's flag value is
    /// [`GRAPH_SEQ`]); `None` where graphs are not used: on the emulator, and on
    /// a GPU whose `REDUCE_SCAN_ANSWER` asks for another way.
    ///
    /// # Safety
    /// As [`launch`](Self::launch), for every launch of the graph.
    pub unsafe fn answer_graph<A: KernelArgs>(
        &self,
        kernel: &Kernel<A>,
        cfg: LaunchConfig,
        args: impl FnOnce(AnswerSlot) -> A,
    ) -> Result<Option<Graph>> {
        match self {
            Backend::Gpu(g) if g.gpu.answer_way() == AnswerWay::Graph => {
                g.gpu.bind()?;
                let (value, flag) = g.gpu.answer_words();
                let args = args(AnswerSlot { value: value as *mut u64, flag: flag as *mut u32, seq: gpu::GRAPH_SEQ });
                args.with_param_ptrs(|params| {
                    // SAFETY: forwarded from the caller; `params` points into `args`, alive here
                    // (the driver copies them into the graph).
                    unsafe {
                        g.gpu.kernel_graph(kernel.module, kernel.name, cfg.grid, cfg.block, cfg.shared_bytes, params)
                    }
                })
                .map(Some)
            }
            _ => Ok(None),
        }
    }

    /// Launches `graph` ([`answer_graph`](Self::answer_graph)) and returns the answer its
    /// kernel publishes.
    pub fn answer_from_graph(&self, graph: &Graph) -> Result<u64> {
        match self {
            Backend::Gpu(g) => {
                g.gpu.bind()?;
                g.gpu.answer_from_graph(g.stream(), graph)
            }
            Backend::Emulator(..) => Err(Error::Invalid("the emulator runs no CUDA graphs".into())),
        }
    }

    /// Queues, through `launch(slot)`, a kernel that writes its answer into `slot.value` and
    /// then `slot.seq` into `slot.flag` with a release, and returns the answer once the flag
    /// says so: on a GPU the words are mapped page-locked host memory and the host spins on the
    /// flag ([`Gpu::answer_from`]); on the emulator they are a fresh buffer, read after the
    /// launch. A kernel that ends without setting the flag is an error.
    pub fn answer_from(&self, launch: impl FnOnce(AnswerSlot) -> Result<()>) -> Result<u64> {
        match self {
            Backend::Gpu(g) => {
                g.gpu.bind()?;
                g.gpu.answer_from(g.stream(), |value, flag, seq| {
                    launch(AnswerSlot { value: value as *mut u64, flag: flag as *mut u32, seq })
                })
            }
            Backend::Emulator(..) => {
                let mut words = self.alloc::<u64>(2)?;
                let value = words.as_mut_ptr();
                launch(AnswerSlot { value, flag: value.wrapping_add(1).cast(), seq: 1 })?;
                match self.download(&words)?[..] {
                    [value, 1] => Ok(value),
                    _ => Err(Error::Invalid("the kernel finished without publishing its answer".into())),
                }
            }
        }
    }

    /// Device-to-device copy of all of `src` into the start of `dst`.
    pub fn copy<T: Element>(&self, src: &DeviceBuffer<T>, dst: &mut DeviceBuffer<T>) -> Result<()> {
        self.copy_range(src, 0..src.len, dst)
    }

    /// Device-to-device copy of `src[range]` into the start of `dst`, queued on this backend's
    /// stream (ordered with its launches).
    pub fn copy_range<T: Element>(
        &self,
        src: &DeviceBuffer<T>,
        range: std::ops::Range<usize>,
        dst: &mut DeviceBuffer<T>,
    ) -> Result<()> {
        if range.start > range.end || range.end > src.len {
            return Err(Error::Invalid(format!(
                "cannot copy elements {}..{} of a buffer of {}",
                range.start, range.end, src.len
            )));
        }
        let len = range.len();
        if len > dst.len {
            return Err(Error::Invalid(format!("cannot copy {len} elements into a buffer of {}", dst.len)));
        }
        self.bind()?;
        match (&src.repr, &mut dst.repr) {
            (Repr::Gpu(s), Repr::Gpu(d)) => {
                if len == 0 {
                    return Ok(());
                }
                let Backend::Gpu(g) = self else {
                    return Err(Error::Invalid("GPU buffers given to an emulator backend".into()));
                };
                let size = size_of::<T>();
                let src = s.address() + (range.start * size) as u64;
                // SAFETY: both ranges lie in live allocations (checked above against their
                // lengths), distinct buffers (`dst` is borrowed mutably); the stream orders the
                // copy with the launches, and a buffer is freed only after the work queued on it.
                unsafe { driver::copy_device_async(d.address(), src, len * size, g.stream()) }
                    .during("copying on the GPU")
            }
            (Repr::Host(s), Repr::Host(d)) => {
                d.as_mut_slice()[..len].copy_from_slice(&s.as_slice()[range.clone()]);
                let size = size_of::<T>();
                d.registered.copy_init_from(&s.registered, range.start * size, len * size);
                Ok(())
            }
            _ => Err(Error::Invalid("buffers of two different backends".into())),
        }
    }

    /// Launches `kernel` over `cfg` with `args`.
    ///
    /// On the GPU the launch is queued (errors inside the kernel surface at the next
    /// synchronisation); on the emulator it runs to completion before this returns.
    ///
    /// # Safety
    /// `args` are what the kernel expects: every pointer is a buffer of this backend, long
    /// enough for what the kernel reads and writes, and `cfg` satisfies the kernel's
    /// documented launch preconditions.
    pub unsafe fn launch<A: KernelArgs>(&self, kernel: &Kernel<A>, cfg: LaunchConfig, args: A) -> Result<()> {
        match self {
            Backend::Gpu(g) => {
                g.gpu.bind()?;
                args.with_param_ptrs(|params| {
                    // SAFETY: forwarded from the caller; `params` points into `args`, alive here.
                    unsafe {
                        g.gpu.launch_in(
                            g.stream(),
                            kernel.module,
                            kernel.name,
                            cfg.grid,
                            cfg.block,
                            cfg.shared_bytes,
                            params,
                        )
                    }
                })
            }
            Backend::Emulator(emu, _) => {
                let run = kernel.emu;
                let body = AssertSync(move || {
                    args.enter_thread();
                    // SAFETY: the caller guarantees the arguments are valid for this kernel.
                    unsafe { run(args) }
                });
                let body = &body;
                // SAFETY: as above; the kernel's pointers are live emulator buffers.
                unsafe {
                    emu.launch(kernel.name, Dim3::x(cfg.grid), Dim3::x(cfg.block), cfg.shared_bytes as usize, &|| {
                        (body.0)()
                    })
                }
                .map_err(Error::from)
            }
        }
    }

    /// Waits for all queued work; reports a kernel's failure.
    pub fn synchronize(&self) -> Result<()> {
        match self {
            Backend::Gpu(g) => {
                g.gpu.bind()?;
                g.gpu.synchronize(g.stream())
            }
            Backend::Emulator(..) => Ok(()),
        }
    }

    /// Time of the work `f` does, in microseconds: CUDA events around it on the GPU (the
    /// GPU's time, with the launches queued before the window opens: see [`Gpu::time`]),
    /// wall-clock time in the emulator.
    pub fn time(&self, f: &mut dyn FnMut() -> Result<()>) -> Result<f64> {
        match self {
            Backend::Gpu(g) => {
                g.gpu.bind()?;
                g.gpu.time(g.stream(), f)
            }
            Backend::Emulator(..) => {
                let t = Instant::now();
                f()?;
                Ok(t.elapsed().as_secs_f64() * 1e6)
            }
        }
    }

    /// Lets `kernel` launch with `bytes` of dynamic shared memory, more than the 48 KiB a
    /// launch gets without asking (CUDA C `cudaFuncSetAttribute(…,
    /// cudaFuncAttributeMaxDynamicSharedMemorySize, bytes)`). Call it before
    /// [`occupancy`](Self::occupancy) and [`launch`](Self::launch) of such a kernel.
    pub fn allow_dynamic_shared(&self, kernel: Entry, bytes: usize) -> Result<()> {
        match self {
            Backend::Gpu(g) => g.gpu.allow_dynamic_shared(kernel.module, kernel.name, bytes),
            Backend::Emulator(emu, _) => emu.allow_dynamic_shared(kernel.name, bytes).map_err(Error::from),
        }
    }

    /// Asks for room for `launches` device-side launches pending at once (queued, not yet
    /// completed): CUDA C's `cudaDeviceSetLimit(cudaLimitDevRuntimePendingLaunchCount, …)`, 2048
    /// by default. Past it a device-side launch fails (on the emulator: a fault, reported where it
    /// was made). Returns the room the device grants, which may be less than asked: the H100's
    /// driver grants at most 599,186, and the emulator as much
    /// ([`MAX_PENDING_LAUNCHES`](crate::emu::nested::MAX_PENDING_LAUNCHES)). The limit is only
    /// ever raised: a smaller request leaves it as it is, so a call for a small grid never takes
    /// room from a large grid's launches still pending on another thread.
    /// A GPU remembers what its driver granted, so the call that precedes each launch of a nested
    /// kernel asks the driver nothing once the room is there (or the driver's ceiling is reached).
    pub fn raise_pending_launch_limit(&self, launches: usize) -> Result<usize> {
        match self {
            Backend::Gpu(g) => g.gpu.raise_pending_launch_limit(launches),
            Backend::Emulator(emu, _) => Ok(emu.raise_pending_launch_limit(launches)),
        }
    }

    /// `Ok` where the kernels of `module` that launch from the device can run: always on the
    /// emulator; on a GPU once `module`'s nested module ([`Module::with_nested`](crate::ptx::Module::with_nested))
    /// has been linked with the CUDA device runtime (`libcudadevrt.a`, found by
    /// [`devrt::find_cudadevrt`]), else [`Error::Unsupported`] saying in one line why not.
    pub fn nested_ready(&self, module: &'static crate::ptx::Module) -> Result<()> {
        match self {
            Backend::Gpu(g) => {
                let nested = module.nested().ok_or_else(|| {
                    Error::Invalid(format!(
                        "the PTX module `{}` has no kernels that launch from the device",
                        module.name
                    ))
                })?;
                g.gpu.module_of(nested).map(|_| ())
            }
            Backend::Emulator(..) => Ok(()),
        }
    }

    /// Blocks of kernel `kernel` with `block` threads (and `shared` dynamic bytes) that fit on
    /// one SM at once.
    /// The emulator answers for the committed GPU's SM, by threads and by shared memory
    /// ([`emu::blocks_per_sm`](crate::emu::blocks_per_sm)).
    pub fn occupancy(&self, kernel: Entry, block: u32, shared: usize) -> Result<u32> {
        match self {
            Backend::Gpu(g) => g.gpu.occupancy(kernel.module, kernel.name, block, shared),
            Backend::Emulator(..) => Ok(crate::emu::blocks_per_sm(block, shared)),
        }
    }
}

/// The error of a failed device allocation: the bytes asked for and, where the driver can say
/// (`cuMemGetInfo`), the bytes free and in all.
fn alloc_failed(bytes: usize, free_total: Option<(usize, usize)>, error: CudaError) -> Error {
    let room = match free_total {
        Some((free, total)) => format!("{free} of its {total} bytes are free"),
        None => "the driver cannot say how many are free".into(),
    };
    Error::Cuda { during: format!("allocating {bytes} bytes on the GPU ({room})"), error }
}

/// Wraps a closure that captures raw device pointers so the emulator may call it from
/// several OS threads.
struct AssertSync<F>(F);
// SAFETY: the closure only copies plain values (integers, device pointers) into the kernel
// call; concurrent use of those pointers is the kernel's business, as on the GPU.
unsafe impl<F> Sync for AssertSync<F> {}

/// Grid and block sizes (1-D) and dynamic shared memory of one launch.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LaunchConfig {
    /// Blocks in the grid.
    pub grid: u32,
    /// Threads per block.
    pub block: u32,
    /// Dynamic shared memory per block, bytes.
    pub shared_bytes: u32,
}

/// A kernel by its PTX module and symbol, without its parameters: what a GPU looks up
/// (`cuModuleGetFunction`) to ask about it or set its attributes ([`Backend::occupancy`],
/// [`Backend::allow_dynamic_shared`]); [`Kernel::entry`] gives a launchable kernel's.
#[derive(Clone, Copy, Debug)]
pub struct Entry {
    /// The PTX module the GPU finds it in.
    pub module: &'static crate::ptx::Module,
    /// The PTX symbol.
    pub name: &'static str,
}

impl Entry {
    /// The kernel `name` of `module`.
    pub const fn of(module: &'static crate::ptx::Module, name: &'static str) -> Self {
        Entry { module, name }
    }
}

/// A kernel, as both backends know it: its PTX symbol and module, and its host function.
///
/// A kernel crate's kernels are named with [`Kernel::of`] (or the typed methods of
/// [`module!`](crate::module!)), from the handle its `kernel!` made, or with
/// [`kernel_in!`](crate::kernel_in) from the kernel function itself.
pub struct Kernel<A> {
    /// The PTX symbol (= the Rust function's name).
    pub name: &'static str,
    /// The host function the emulator calls for every CUDA thread.
    pub emu: unsafe fn(A),
    /// The PTX module the GPU finds it in.
    pub module: &'static crate::ptx::Module,
}

impl<A: 'static> Kernel<A> {
    /// The kernel of a kernel crate's PTX `module` that the crate's `kernel!` describes by
    /// `handle` (`my_kernels::dot::KERNEL`, or `<f32 as my_kernels::dot::Instance>::KERNEL`): its
    /// arguments are the kernel's own parameter types (`Slice<f32>`, `GlobalMut<u32>`, `u32`, …),
    /// which the host makes from its buffers ([`DeviceBuffer::slice`] and the like).
    pub const fn of(module: &'static crate::ptx::Module, handle: device::kernel::KernelFn<A>) -> Self {
        Kernel { name: handle.name, emu: handle.run, module }
    }

    /// Its module and symbol.
    pub const fn entry(&self) -> Entry {
        Entry { module: self.module, name: self.name }
    }
}

impl<A> Clone for Kernel<A> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<A> Copy for Kernel<A> {}

impl<A> fmt::Debug for Kernel<A> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Kernel({})", self.name)
    }
}

/// Builds a [`Kernel`] of the PTX module `module` from a kernel function of the crate it was
/// built from, named by its path and its parameters, whose name is the PTX entry's:
/// `kernel_in!(&KERNELS, kernels::reduce::interleaved(a, b, c))`; or from an instantiation of a
/// generic kernel (the kernels crate's `typed_kernel!` and its kin), named by its module, whose
/// `entry` is the function and `NAME` the PTX entry's name:
/// `kernel_in!(&KERNELS, instance kernels::reduce::warp_shuffle::f32::max(a, b, c))` (the entry
/// `warp_shuffle__f32_max`). The `reduce-scan` library's `kernel_ref!` is this for its own module.
#[macro_export]
macro_rules! kernel_in {
    ($module:expr, instance $($path:ident)::+ ($($arg:ident),* $(,)?)) => {
        $crate::backend::Kernel {
            name: $($path)::+::NAME,
            // SAFETY: the launcher that holds this Kernel checked the arguments.
            emu: |($($arg,)*)| unsafe { $($path)::+::entry($($crate::backend::FromHost::from_host($arg)),*) },
            module: $module,
        }
    };
    ($module:expr, $($path:ident)::+ ($($arg:ident),* $(,)?)) => {
        $crate::backend::Kernel {
            name: $crate::__last_ident!($($path)::+),
            // SAFETY: the launcher that holds this Kernel checked the arguments.
            emu: |($($arg,)*)| unsafe { $($path)::+($($crate::backend::FromHost::from_host($arg)),*) },
            module: $module,
        }
    };
}

#[doc(hidden)]
#[macro_export]
macro_rules! __last_ident {
    ($last:ident) => { stringify!($last) };
    ($first:ident :: $($rest:ident)::+) => { $crate::__last_ident!($($rest)::+) };
}

/// Where a kernel publishes a synchronous call's answer ([`Backend::answer_from`]): the value
/// (8 bytes), then `seq` into the flag (4 bytes) with a release. Device addresses.
#[derive(Clone, Copy, Debug)]
pub struct AnswerSlot {
    /// The answer, zero-extended to 8 bytes.
    pub value: *mut u64,
    /// Set to `seq` once `value` is written.
    pub flag: *mut u32,
    /// What the flag must read.
    pub seq: u32,
}

/// A value that can be a kernel parameter: the bytes of the value are the parameter.
///
/// # Safety
/// The type's layout is what PTX expects for the matching `.param`: a 4- or 8-byte scalar, a
/// 64-bit pointer, or a `#[repr(C)]` pointer and length (the device layer's checked buffers: a
/// 16-byte `.param .align 8 .b8 p[16]`).
pub unsafe trait KernelParam: Copy {
    /// Called in each emulated thread before the kernel runs: a parameter the kernel may write
    /// through tells the emulator so (as the device layer's `GlobalMut::from` does for a pointer
    /// the kernel receives raw). Nothing for the others.
    fn enter_thread(&self) {}
}
// SAFETY: 4-byte and 8-byte scalars, and 64-bit pointers, as PTX params expect.
unsafe impl KernelParam for u32 {}
// SAFETY: as above.
unsafe impl KernelParam for i32 {}
// SAFETY: as above.
unsafe impl KernelParam for u64 {}
// SAFETY: as above.
unsafe impl KernelParam for i64 {}
// SAFETY: as above.
unsafe impl KernelParam for f32 {}
// SAFETY: as above.
unsafe impl<T> KernelParam for *const T {}
// SAFETY: as above.
unsafe impl<T> KernelParam for *mut T {}
// SAFETY: as above.
unsafe impl KernelParam for f64 {}
// SAFETY: `#[repr(transparent)]` over a 64-bit pointer.
unsafe impl<T> KernelParam for Global<T> {}
// SAFETY: as above.
unsafe impl<T> KernelParam for GlobalMut<T> {
    fn enter_thread(&self) {
        device::emu::hooks().writable(self.addr());
    }
}
// SAFETY: `#[repr(C)]`: a 64-bit pointer, then a 64-bit length.
unsafe impl<T> KernelParam for device::slice::Slice<T> {}
// SAFETY: as above.
unsafe impl<T: Copy> KernelParam for device::slice::DisjointSlice<T> {
    fn enter_thread(&self) {
        device::emu::hooks().writable(self.as_global_mut().addr());
    }
}
// SAFETY: as above.
unsafe impl<T: Copy> KernelParam for device::slice::PerBlock<T> {
    fn enter_thread(&self) {
        device::emu::hooks().writable(self.as_global_mut().addr());
    }
}
// SAFETY: as above.
unsafe impl<T: Copy> KernelParam for device::slice::AtomicSlice<T> {
    fn enter_thread(&self) {
        device::emu::hooks().writable(self.as_global_mut().addr());
    }
}

/// A kernel parameter type and the host value it is made from: a device buffer's address
/// ([`DeviceBuffer::as_ptr`]) becomes a [`Global`]/[`GlobalMut`] parameter, a scalar stays itself.
/// [`kernel_in!`](crate::kernel_in) uses it to call a kernel on the emulator with the tuple
/// the GPU launch passes.
pub trait FromHost: Sized {
    /// What the host passes for this parameter.
    type Host: KernelParam;
    /// The parameter, from what the host passes (the same bits).
    fn from_host(host: Self::Host) -> Self;
}

impl<T> FromHost for Global<T> {
    type Host = *const T;
    fn from_host(host: *const T) -> Self {
        host.into()
    }
}

impl<T> FromHost for GlobalMut<T> {
    type Host = *mut T;
    fn from_host(host: *mut T) -> Self {
        host.into()
    }
}

macro_rules! scalar_from_host {
    ($($t:ty),*) => {$(
        impl FromHost for $t {
            type Host = $t;
            fn from_host(host: $t) -> Self {
                host
            }
        }
    )*};
}
scalar_from_host!(u32, i32, u64, i64, f32);

/// A kernel's whole argument list, as a tuple of [`KernelParam`]s.
pub trait KernelArgs: Copy {
    /// Calls `f` with pointers to each argument, in order, as `cuLaunchKernel` wants them (on
    /// the stack: no allocation per launch).
    fn with_param_ptrs<R>(&self, f: impl FnOnce(&[*mut c_void]) -> R) -> R;
    /// [`KernelParam::enter_thread`] of each argument.
    fn enter_thread(&self);
}

macro_rules! tuple_args {
    ($($T:ident $i:tt),+) => {
        impl<$($T: KernelParam),+> KernelArgs for ($($T,)+) {
            fn with_param_ptrs<R>(&self, f: impl FnOnce(&[*mut c_void]) -> R) -> R {
                f(&[$(&self.$i as *const $T as *mut c_void),+])
            }
            fn enter_thread(&self) {
                $(self.$i.enter_thread();)+
            }
        }
    };
}
tuple_args!(A 0);
tuple_args!(A 0, B 1);
tuple_args!(A 0, B 1, C 2);
tuple_args!(A 0, B 1, C 2, D 3);
tuple_args!(A 0, B 1, C 2, D 3, E 4);
tuple_args!(A 0, B 1, C 2, D 3, E 4, F 5);
tuple_args!(A 0, B 1, C 2, D 3, E 4, F 5, G 6);
tuple_args!(A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7);
tuple_args!(A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7, I 8);
tuple_args!(A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7, I 8, J 9);
tuple_args!(A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7, I 8, J 9, K 10);
tuple_args!(A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7, I 8, J 9, K 10, L 11);

impl KernelArgs for () {
    fn with_param_ptrs<R>(&self, f: impl FnOnce(&[*mut c_void]) -> R) -> R {
        f(&[])
    }
    fn enter_thread(&self) {}
}

/// An element type a device buffer can hold: plain data ([`bytemuck::Pod`]: any bits are a
/// value, no padding, no pointers), copied to and from the GPU byte for byte.
pub trait Element: bytemuck::Pod + Default + fmt::Debug + PartialEq + Send + Sync + 'static {}
impl<T> Element for T where T: bytemuck::Pod + Default + fmt::Debug + PartialEq + Send + Sync + 'static {}

/// Memory of one backend: GPU memory, or 256-byte aligned host memory for the emulator.
pub struct DeviceBuffer<T: Element> {
    repr: Repr<T>,
    len: usize,
}

enum Repr<T: Element> {
    Gpu(driver::DeviceMemory),
    Host(HostAlloc<T>),
}

impl<T: Element> DeviceBuffer<T> {
    /// Elements.
    pub fn len(&self) -> usize {
        self.len
    }

    /// No elements?
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The device address of element 0, as a kernel parameter.
    pub fn as_ptr(&self) -> *const T {
        match &self.repr {
            Repr::Gpu(b) => b.address() as *const T,
            Repr::Host(h) => h.ptr,
        }
    }

    /// The device address of element 0, for kernels that write.
    pub fn as_mut_ptr(&mut self) -> *mut T {
        self.as_ptr() as *mut T
    }

    /// The buffer as a kernel parameter the kernel reads: CUDA C `const T *p`
    /// ([`Global`]).
    pub fn global(&self) -> Global<T> {
        self.as_ptr().into()
    }

    /// The buffer as a kernel parameter the kernel may write: CUDA C `T *p`
    /// ([`GlobalMut`]).
    pub fn global_mut(&mut self) -> GlobalMut<T> {
        self.as_mut_ptr().into()
    }

    /// The whole buffer as a checked parameter the kernel reads, with its length
    /// ([`Slice`](device::slice::Slice)).
    pub fn slice(&self) -> device::slice::Slice<T> {
        // SAFETY: the buffer holds `len` aligned elements; what the launch does with them is the
        // launch's promise (it is `unsafe`).
        unsafe { device::slice::Slice::from_raw_parts(self.global(), self.len) }
    }

    /// The whole buffer as a checked parameter that each thread writes at its own indices
    /// ([`DisjointSlice`](device::slice::DisjointSlice)).
    pub fn disjoint(&mut self) -> device::slice::DisjointSlice<T> {
        // SAFETY: as for `slice`.
        unsafe { device::slice::DisjointSlice::from_raw_parts(self.global_mut(), self.len) }
    }

    /// The whole buffer as one slot per block, which thread 0 of each block writes
    /// ([`PerBlock`](device::slice::PerBlock)).
    pub fn per_block(&mut self) -> device::slice::PerBlock<T> {
        // SAFETY: as for `slice`.
        unsafe { device::slice::PerBlock::from_raw_parts(self.global_mut(), self.len) }
    }

    /// The whole buffer as a checked parameter that every thread updates through atomics only
    /// (`atomicAdd(&hist[i], v)` and the rest: [`AtomicSlice`](device::slice::AtomicSlice)).
    pub fn atomic(&mut self) -> device::slice::AtomicSlice<T> {
        // SAFETY: as for `slice`.
        unsafe { device::slice::AtomicSlice::from_raw_parts(self.global_mut(), self.len) }
    }
}

/// 256-byte aligned host memory (what `cudaMalloc` guarantees on a GPU), registered with its
/// emulator's device memory for as long as it lives.
struct HostAlloc<T> {
    ptr: *mut T,
    len: usize,
    memory: Arc<crate::emu::memory::DeviceMemory>,
    registered: Arc<crate::emu::memory::Alloc>,
}

// SAFETY: HostAlloc owns its memory like a Box<[T]>.
unsafe impl<T: Send> Send for HostAlloc<T> {}
// SAFETY: as above.
unsafe impl<T: Sync> Sync for HostAlloc<T> {}

impl<T> HostAlloc<T> {
    fn layout(len: usize) -> Result<Layout> {
        Layout::from_size_align(len.saturating_mul(size_of::<T>()), 256)
            .map_err(|_| Error::Invalid(format!("a buffer of {len} elements is too large")))
    }

    /// `len` elements, zeroed (and initialised, for initcheck) or filled with `0xA5` bytes.
    fn new(len: usize, zeroed: bool, emu: &Emulator, origin: &'static std::panic::Location<'static>) -> Result<Self> {
        let layout = Self::layout(len)?;
        // SAFETY: the layout has a non-zero size (len >= 1, T is not zero-sized here).
        let ptr = unsafe { alloc_zeroed(layout) }.cast::<T>();
        if ptr.is_null() {
            return Err(Error::Invalid(format!("cannot allocate {} bytes of host memory", layout.size())));
        }
        if !zeroed {
            // SAFETY: `ptr` holds `layout.size()` bytes, just allocated.
            unsafe { ptr.cast::<u8>().write_bytes(0xA5, layout.size()) };
        }
        let memory = emu.memory_handle();
        let registered = memory.register(ptr as usize, layout.size(), size_of::<T>(), origin, zeroed);
        Ok(Self { ptr, len, memory, registered })
    }

    fn as_slice(&self) -> &[T] {
        // SAFETY: ptr holds len initialised (zeroed, then written) elements of a plain type.
        unsafe { std::slice::from_raw_parts(self.ptr, self.len) }
    }

    fn as_mut_slice(&mut self) -> &mut [T] {
        // SAFETY: as above, and we hold &mut self.
        unsafe { std::slice::from_raw_parts_mut(self.ptr, self.len) }
    }
}

impl<T> Drop for HostAlloc<T> {
    fn drop(&mut self) {
        self.memory.unregister(&self.registered);
        // SAFETY: allocated in `zeroed` with this layout.
        unsafe { dealloc(self.ptr.cast(), Self::layout(self.len).expect("layout was valid at allocation")) }
    }
}

#[cfg(test)]
mod tests {
    use super::{Backend, alloc_failed};
    use crate::error::CudaError;

    #[test]
    fn a_download_into_a_kept_buffer_copies_the_prefix_and_refuses_more_than_the_buffer() {
        let b = Backend::emulator();
        let buf = b.upload(&[3u16, 1, 4, 1, 5]).unwrap();
        let mut out = [0u16; 3];
        b.download_into(&buf, &mut out).unwrap();
        assert_eq!(out, [3, 1, 4]);
        b.download_into(&buf, &mut []).unwrap();
        let mut long = [7u16; 6];
        let e = b.download_into(&buf, &mut long).unwrap_err().to_string();
        assert!(e.contains("6 elements asked of a buffer of 5"), "{e}");
        assert_eq!(long, [7; 6], "nothing copied");
        assert_eq!(b.download_prefix(&buf, 9).unwrap(), [3, 1, 4, 1, 5], "a prefix past the end is the whole buffer");
    }

    #[test]
    fn a_failed_allocation_names_the_bytes_asked_for_and_free() {
        let e = alloc_failed(8 << 30, Some((1 << 30, 80 << 30)), CudaError::OutOfMemory).to_string();
        let head =
            "CUDA error while allocating 8589934592 bytes on the GPU (1073741824 of its 85899345920 bytes are free): ";
        assert!(e.starts_with(head) && e.ends_with("(OutOfMemory)") && !e.contains('\n'), "{e}");
        let e = alloc_failed(64, None, CudaError::OutOfMemory).to_string();
        assert!(e.contains("allocating 64 bytes on the GPU (the driver cannot say how many are free)"), "{e}");
    }
}
