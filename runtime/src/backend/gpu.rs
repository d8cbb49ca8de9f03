//! The GPU backend, through the CUDA driver API ([`super::driver`], which opens `libcuda.so.1`
//! at run time): one CUDA context per device this process opens (each with a default stream,
//! and the PTX modules its launches named, loaded on first use), kept for the life of the
//! process.

use std::collections::HashMap;
use std::ffi::c_void;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Mutex, OnceLock};

use super::DeviceInfo;
use super::driver::{
    self, Context, Device, DeviceAttribute, DeviceMemory, Event, Function, MappedHost, Module, Stream,
};
use crate::error::{CudaContext, CudaError, Error, Result};
use crate::ptx;

/// The GPU: context, one stream, the modules its launches named, and a cache of kernel handles.
pub struct Gpu {
    stream: Stream,
    /// Kernel handles by module name and kernel name, looked up once (each keeps its module
    /// loaded; the cache keeps them for the process).
    functions: Mutex<HashMap<(&'static str, &'static str), Function>>,
    /// The kernel crates' modules ([`ptx::Module`]), loaded on first use (the newest build the
    /// device runs; linked with the device runtime first where the module says so), by name,
    /// and kept for the process (the cache holds one owner of each); or why one could not be.
    modules: Mutex<HashMap<&'static str, std::result::Result<Module, String>>>,
    /// Where [`read_word`](Self::read_word) receives answers.
    answer: Mutex<Answer>,
    /// How answers come (`REDUCE_SCAN_ANSWER`, for the measurements), fixed at [`Gpu::new`].
    answer_way: AnswerWay,
    /// Kernels (by module and name) whose dynamic shared-memory limit was raised, and to how
    /// much.
    raised: Mutex<HashMap<(&'static str, &'static str), u32>>,
    /// The room for pending device-side launches the driver has granted (0: not asked yet), and
    /// whether that is its ceiling (a larger request was clamped to it): what
    /// [`raise_pending_launch_limit`](Self::raise_pending_launch_limit) answers without asking
    /// the driver again, on every timed launch of a nested kernel.
    pending_room: Mutex<(usize, bool)>,
    info: DeviceInfo,
    events: Mutex<(Event, Event)>,
    /// The first loaded module with the runtime's `stream_hold` ([`ptx::Module::helper`]), which
    /// [`Gpu::time`] holds the stream with; none: a host function holds it.
    hold_module: Mutex<Option<&'static ptx::Module>>,
    /// The first loaded module with the runtime's `publish_answer`, which
    /// [`read_word`](Self::read_word) publishes answers with; none: answers are copied.
    publish_module: Mutex<Option<&'static ptx::Module>>,
    /// How long [`Gpu::time`] holds the stream before the start event (ns); doubled, up to
    /// [`HOLD_MAX_NS`], whenever a run's launches were not all queued before the hold ended.
    hold_ns: AtomicU32,
    /// The device's primary context (every driver object above holds it too, and keeps it
    /// retained while it lives).
    ctx: Context,
}

/// Page-locked host memory mapped into the device: an answer word and its flag (8 bytes each).
struct Answer {
    host: *mut u64,
    device: u64,
    /// The flag value of the last answer asked for.
    seq: u32,
    /// The allocation `host` and `device` address.
    _memory: MappedHost,
}

/// How a synchronous call gets its answer to the host, measured in `docs/time-to-answer.md`.
/// `REDUCE_SCAN_ANSWER=in-kernel`, `=launch` or `=copy` picks one of the slower ways, for
/// that measurement.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AnswerWay {
    /// The default: as `InKernel`, and a call that repeats the previous call's shape (same
    /// input, size and launch) launches a CUDA graph of that launch instead
    /// ([`Gpu::kernel_graph`], [`Gpu::answer_from_graph`]): one `cuGraphLaunch`, cheaper to issue
    /// than `cuLaunchKernel`.
    Graph,
    /// The sum's own last block writes the answer and a flag into the mapped words
    /// (`atomic_accumulate_to_host`); the typed sums and the scans' results, whose kernels do
    /// not, come the `Launch` way.
    InKernel,
    /// A one-thread `publish_answer` launch behind the work writes them.
    Launch,
    /// An asynchronous copy into page-locked memory, then a stream synchronisation.
    Copy,
}

impl AnswerWay {
    /// `REDUCE_SCAN_ANSWER`: `copy`, `launch` or `in-kernel`; anything else is the default.
    fn from_env() -> Self {
        match std::env::var("REDUCE_SCAN_ANSWER").as_deref() {
            Ok("copy") => AnswerWay::Copy,
            Ok("launch") => AnswerWay::Launch,
            Ok("in-kernel") => AnswerWay::InKernel,
            _ => AnswerWay::Graph,
        }
    }
}

/// The flag value a graph's kernel publishes ([`Gpu::kernel_graph`]): fixed, since a graph's
/// parameters are, so the host clears the flag before each graph launch. Other answers use
/// other values.
pub const GRAPH_SEQ: u32 = 1;

/// A CUDA graph of one kernel launch, instantiated ([`Gpu::kernel_graph`]); destroyed when
/// dropped.
pub use driver::Graph;

// SAFETY: the words are process-wide page-locked memory, only touched under the Mutex.
unsafe impl Send for Answer {}

impl Answer {
    fn new(ctx: &Context) -> Result<Self> {
        let memory = MappedHost::alloc(ctx, 16).map_err(|(call, e)| match call {
            "cuCtxSetCurrent" => {
                Error::Invalid(format!("the driver cannot make the CUDA context current ({})", e.cuda_name()))
            }
            "cuMemHostAlloc" => {
                Error::Invalid(format!("the driver refused 16 bytes of mapped page-locked memory ({})", e.cuda_name()))
            }
            _ => Error::Invalid(format!("the driver has no device address for mapped memory ({})", e.cuda_name())),
        })?;
        let host = memory.host().cast::<u64>();
        // SAFETY: 16 writable bytes: the value and the flag start at 0.
        unsafe {
            host.write_volatile(0);
            host.add(1).write_volatile(0);
        }
        Ok(Self { host, device: memory.device(), seq: 0, _memory: memory })
    }

    /// Spins until the flag reads `seq`, then returns the value; every 256 reads asks the
    /// stream whether it failed (its error is returned) or finished without the flag (an error).
    fn wait(&self, stream: &Stream, seq: u32) -> Result<u64> {
        let flag = self.host.wrapping_add(1).cast::<u32>();
        // SAFETY: the mapped words live for the process; the device writes them.
        let read = || unsafe { flag.read_volatile() };
        let mut reads = 0u32;
        while read() != seq {
            reads = reads.wrapping_add(1);
            if reads.is_multiple_of(256) {
                match stream.query() {
                    Ok(false) => {}
                    Ok(true) => {
                        // Finished: the flag's store is visible now, or it never came.
                        if read() == seq {
                            break;
                        }
                        return Err(Error::Invalid("the GPU finished without publishing the answer".into()));
                    }
                    Err(r) => {
                        return Err(stream.synchronize().during("waiting for the GPU").err().unwrap_or_else(|| {
                            Error::Invalid(format!("the GPU failed while computing the answer ({})", r.cuda_name()))
                        }));
                    }
                }
            }
            std::hint::spin_loop();
        }
        std::sync::atomic::fence(Ordering::Acquire);
        // SAFETY: the flag says the value was written before it (release on the device).
        Ok(unsafe { self.host.read_volatile() })
    }
}

/// The first hold before a timed run: far longer than the CPU takes to issue a run's launches
/// (a few µs each), short next to the runs themselves.
pub const HOLD_START_NS: u32 = 50_000;
/// The longest hold: a run whose issue takes longer (one that waits for the GPU itself) is
/// timed with the CPU's share in the window, as without a hold.
pub const HOLD_MAX_NS: u32 = 2_000_000;

/// The GPUs this process opened, by ordinal (each opened once, kept for the process's life).
static GPUS: Mutex<Vec<(u32, &'static Gpu)>> = Mutex::new(Vec::new());
/// Why the driver could not be used at all (no driver, cuInit failed), found once.
static DRIVER: OnceLock<std::result::Result<u32, String>> = OnceLock::new();

impl Gpu {
    /// The GPU with this ordinal, opened on first use; `Error::NoGpu` says why there is none.
    pub fn get(ordinal: u32) -> Result<&'static Gpu> {
        let count = DRIVER.get_or_init(Gpu::driver).clone().map_err(Error::NoGpu)?;
        if ordinal >= count {
            return Err(Error::NoGpu(format!("there is no device {ordinal}; the driver reports {count} device(s)")));
        }
        let mut open = GPUS.lock().unwrap();
        if let Some((_, g)) = open.iter().find(|(o, _)| *o == ordinal) {
            g.bind()?;
            return Ok(g);
        }
        let g: &'static Gpu = Box::leak(Box::new(Gpu::init(ordinal).map_err(|e| match e {
            Error::NoGpu(cause) => Error::NoGpu(cause),
            other => Error::NoGpu(other.to_string()),
        })?));
        open.push((ordinal, g));
        Ok(g)
    }

    /// The driver's device count, or why the driver cannot be used: no `libcuda.so.1` on this
    /// machine ([`driver::load`]), or a driver that fails or finds no device.
    fn driver() -> std::result::Result<u32, String> {
        driver::load()?;
        driver::init().map_err(|e| format!("cuInit failed: {e} ({e:?})"))?;
        let count = driver::device_count().map_err(|e| format!("cannot count devices: {e}"))?;
        if count == 0 {
            return Err("the driver reports no CUDA device".into());
        }
        Ok(count)
    }

    fn init(ordinal: u32) -> Result<Gpu> {
        let device = Device::get(ordinal).during(format!("opening device {ordinal}"))?;
        let attr = |a: DeviceAttribute| device.attribute(a).during("reading a device attribute");
        let cc = (
            attr(DeviceAttribute::ComputeCapabilityMajor)? as u32,
            attr(DeviceAttribute::ComputeCapabilityMinor)? as u32,
        );
        if cc.0 < 7 {
            return Err(Error::NoGpu(format!(
                "device {ordinal} has compute capability {}.{}; the kernels need 7.0 (Volta) or newer",
                cc.0, cc.1
            )));
        }
        let ctx = Context::primary(device).during("creating the CUDA context")?;
        let stream = Stream::new(&ctx).during("creating a stream")?;
        let mem_clock_khz = attr(DeviceAttribute::MemoryClockRate)? as f64;
        let bus_bits = attr(DeviceAttribute::GlobalMemoryBusWidth)? as f64;
        let info = DeviceInfo {
            name: device.name().during("reading the device name")?,
            is_gpu: true,
            compute_capability: cc,
            ptx_arch: newest_default_arch(cc),
            multiprocessors: attr(DeviceAttribute::MultiprocessorCount)? as u32,
            emulator: None,
            max_threads_per_multiprocessor: attr(DeviceAttribute::MaxThreadsPerMultiprocessor)? as u32,
            l2_bytes: attr(DeviceAttribute::L2CacheSize)? as u64,
            memory_bytes: device.total_memory().during("reading the memory size")? as u64,
            // Double data rate: two transfers per memory clock, bus width in bits.
            peak_bandwidth: Some(2.0 * mem_clock_khz * 1e3 * bus_bits / 8.0),
        };
        let events = (Event::new(&ctx).during("creating an event")?, Event::new(&ctx).during("creating an event")?);
        let answer = Answer::new(&ctx)?;
        Ok(Gpu {
            ctx,
            stream,
            functions: Mutex::new(HashMap::new()),
            modules: Mutex::new(HashMap::new()),
            raised: Mutex::new(HashMap::new()),
            pending_room: Mutex::new((0, false)),
            answer: Mutex::new(answer),
            answer_way: AnswerWay::from_env(),
            info,
            events: Mutex::new(events),
            hold_ns: AtomicU32::new(HOLD_START_NS),
            hold_module: Mutex::new(None),
            publish_module: Mutex::new(None),
        })
    }

    /// Makes the context current on the calling thread (every public operation does this, so
    /// the GPU can be used from any thread).
    pub fn bind(&self) -> Result<()> {
        self.ctx.set_current().during("making the CUDA context current")
    }

    /// What the device is.
    pub fn info(&self) -> &DeviceInfo {
        &self.info
    }

    /// The device's default stream: what a backend without a stream of its own uses.
    pub fn stream(&self) -> &Stream {
        &self.stream
    }

    /// A new stream on this device: its work is ordered with itself, not with the other
    /// streams' (it does wait for the legacy default stream, where synchronous copies go).
    pub fn new_stream(&self) -> Result<Stream> {
        self.bind()?;
        Stream::new(&self.ctx).during("creating a stream")
    }

    /// `bytes` of device memory in this GPU's context (which the allocation makes current on the
    /// calling thread, as the backend did already), contents unspecified; freed when dropped.
    pub fn alloc(&self, bytes: usize) -> std::result::Result<DeviceMemory, CudaError> {
        DeviceMemory::alloc(&self.ctx, bytes)
    }

    /// The kernel `name` of `module` (the module loaded, and the kernel looked up, once): in the
    /// module's nested module where that one holds it (a kernel that launches kernels), else in
    /// the module itself (a lookup that fails is an API error under compute-sanitizer, so none
    /// is made in the wrong one).
    pub fn function_in(&self, module: &'static ptx::Module, name: &'static str) -> Result<Function> {
        let mut cache = self.functions.lock().unwrap();
        if let Some(f) = cache.get(&(module.name, name)) {
            return Ok(f.clone());
        }
        let home = module.nested().filter(|n| n.has_entry(name)).unwrap_or(module);
        let f = self
            .module_of(home)?
            .function(name)
            .map_err(|e| Error::Invalid(format!("kernel `{name}` is not in the PTX module `{}` ({e})", home.name)))?;
        // One handle per kernel, kept for the life of the process (with its module).
        cache.insert((module.name, name), f.clone());
        Ok(f)
    }

    /// A kernel crate's module, loaded into this context on first use (the newest build the
    /// device runs; linked with the CUDA device runtime first where the module calls it) and
    /// kept for the process (the cache holds one owner of it). A module that could not be loaded
    /// stays refused, with its reason.
    pub fn module_of(&self, module: &'static ptx::Module) -> Result<Module> {
        let mut loaded = self.modules.lock().unwrap();
        if let Some(m) = loaded.get(module.name) {
            return m.clone().map_err(Error::Unsupported);
        }
        let m = self.load(module);
        loaded.insert(module.name, m.as_ref().map(Module::clone).map_err(|e| e.to_string()));
        if m.is_ok() {
            for (helper, slot) in [("stream_hold", &self.hold_module), ("publish_answer", &self.publish_module)] {
                let mut slot = slot.lock().unwrap();
                if slot.is_none() && module.helper(helper) {
                    *slot = Some(module);
                }
            }
        }
        m
    }

    /// Loads `module`'s PTX for this device (see [`module_of`](Self::module_of)).
    fn load(&self, module: &'static ptx::Module) -> Result<Module> {
        let (arch, text) = module.for_compute_capability(self.info.compute_capability)?;
        self.bind()?;
        if module.needs_device_runtime() {
            return super::devrt::load_linked(&self.ctx, module.name, text).map_err(Error::Unsupported);
        }
        Module::from_ptx(&self.ctx, text).during(format!("loading the {arch} PTX module `{}`", module.name))
    }

    /// How this process's synchronous calls get their answers ([`AnswerWay`]).
    pub fn answer_way(&self) -> AnswerWay {
        self.answer_way
    }

    /// Queues, through `launch(value, flag, seq)`, a kernel that writes the answer into the
    /// mapped word at device address `value` and then `seq` into the one at `flag` with a
    /// system-scope release; spins until the flag reads `seq` (asking the stream for errors
    /// every few hundred reads) and returns the value. No copy, no stream synchronisation.
    /// The words are held for the whole call, so answers of concurrent calls do not mix.
    pub fn answer_from(&self, stream: &Stream, launch: impl FnOnce(u64, u64, u32) -> Result<()>) -> Result<u64> {
        let mut answer = self.answer.lock().unwrap();
        answer.seq = answer.seq.wrapping_add(1).max(GRAPH_SEQ + 1);
        let seq = answer.seq;
        launch(answer.device, answer.device + 8, seq)?;
        answer.wait(stream, seq)
    }

    /// The device addresses of the mapped answer words: the value (8 bytes) and the flag.
    pub fn answer_words(&self) -> (u64, u64) {
        let device = self.answer.lock().unwrap().device;
        (device, device + 8)
    }

    /// A CUDA graph of one launch of kernel `name` with the packed parameter pointers `params`
    /// (copied into the graph), instantiated: built node by node (`cuGraphAddKernelNode`), not
    /// by capturing a stream, so it touches no stream and no other thread's work. A graph
    /// whose kernel publishes into [`answer_words`](Self::answer_words) with [`GRAPH_SEQ`] is
    /// launched by [`answer_from_graph`](Self::answer_from_graph).
    ///
    /// # Safety
    /// As [`Backend::launch`](crate::Backend::launch), for every launch of the graph.
    pub unsafe fn kernel_graph(
        &self,
        module: &'static ptx::Module,
        name: &'static str,
        grid: u32,
        block: u32,
        shared: u32,
        params: &[*mut c_void],
    ) -> Result<Graph> {
        let refused =
            |what: &str, r: CudaError| Error::Invalid(format!("the driver refused to {what} ({})", r.cuda_name()));
        let f = self.function_in(module, name)?;
        // SAFETY: forwarded from the caller; `f` is a function of this context (the graph keeps
        // its module loaded).
        unsafe { Graph::of_kernel(&f, grid, block, shared, params) }.map_err(|e| match e {
            driver::GraphError::Create(r) => refused("create a graph", r),
            driver::GraphError::Build(r) => refused(&format!("make a graph of `{name}`"), r),
        })
    }

    /// Launches `graph` (made by [`kernel_graph`](Self::kernel_graph)) on `stream` and returns the answer
    /// its kernel publishes, as [`answer_from`](Self::answer_from) does: the host clears the
    /// flag, launches, and spins until it reads [`GRAPH_SEQ`].
    pub fn answer_from_graph(&self, stream: &Stream, graph: &Graph) -> Result<u64> {
        let answer = self.answer.lock().unwrap();
        // SAFETY: the mapped flag word; no kernel writes it now (every answer before this one
        // was waited for, under the same lock).
        unsafe { answer.host.wrapping_add(1).cast::<u32>().write_volatile(0) };
        graph
            .launch(stream)
            .map_err(|r| Error::Invalid(format!("the driver refused to launch a graph ({})", r.cuda_name())))?;
        answer.wait(stream, GRAPH_SEQ)
    }

    /// The `bytes` (4 or 8, aligned) at device address `src`, once the work queued on `stream`
    /// before has finished: what a synchronous call needs of its answer when its kernel does
    /// not publish it itself. [`AnswerWay::Copy`], or a process that loaded no module with the
    /// runtime's `publish_answer` ([`ptx::Module::with_helpers`]), copies it and synchronises;
    /// otherwise a one-thread `publish_answer` launch behind the work publishes it
    /// ([`answer_from`](Self::answer_from)).
    pub fn read_word(&self, stream: &Stream, src: u64, bytes: usize) -> Result<u64> {
        debug_assert!(bytes == 4 || bytes == 8);
        let publisher = *self.publish_module.lock().unwrap();
        let Some(publisher) = publisher.filter(|_| self.answer_way() != AnswerWay::Copy) else {
            let answer = self.answer.lock().unwrap();
            // SAFETY: `answer.host` is a live page-locked word of 8 bytes, held (locked) until the
            // copy has completed (the synchronisation below); `src` is the caller's device address
            // of `bytes` readable bytes.
            unsafe { driver::copy_to_host_async(answer.host.cast(), src, bytes, stream) }.map_err(|r| {
                Error::Invalid(format!("the driver refused to copy an answer to the host ({})", r.cuda_name()))
            })?;
            stream.synchronize().during("waiting for the GPU")?;
            // SAFETY: the copy into the word has completed.
            return Ok(unsafe { answer.host.read_volatile() });
        };
        self.answer_from(stream, |mut value, mut flag, mut seq| {
            let (mut src, mut width) = (src, bytes as u32);
            let params = [
                (&raw mut src).cast::<c_void>(),
                (&raw mut value).cast::<c_void>(),
                (&raw mut flag).cast::<c_void>(),
                (&raw mut seq).cast::<c_void>(),
                (&raw mut width).cast::<c_void>(),
            ];
            // SAFETY: `publish_answer(src, value, flag, seq, bytes)`: the caller's `bytes` at
            // `src`, and the two mapped host words, live for the process.
            unsafe { self.launch_in(stream, publisher, "publish_answer", 1, 1, 0, &params) }
        })
    }

    /// Lets kernel `name` use `bytes` of dynamic shared memory: a kernel whose static and
    /// dynamic shared memory together pass 48 KiB must ask for it
    /// (`cuFuncSetAttribute(CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES)`, what CUDA C does
    /// with `cudaFuncSetAttribute`); done once per kernel and size. It asks for any `bytes` above
    /// 0, since exactly 48 KiB of dynamic memory beside a static array is past the limit too
    /// (`lookback_warpspec_8x12x4` failed to launch with "invalid argument" when this asked only
    /// past 48 KiB).
    pub fn allow_dynamic_shared(&self, module: &'static ptx::Module, name: &'static str, bytes: usize) -> Result<()> {
        let f = self.function_in(module, name)?;
        let mut raised = self.raised.lock().unwrap();
        if bytes == 0 || raised.get(&(module.name, name)).is_some_and(|&r| r as usize >= bytes) {
            return Ok(());
        }
        if let Err(r) = f.set_max_dynamic_shared(bytes as i32) {
            return Err(Error::Invalid(format!(
                "the driver refused `{name}` {bytes} bytes of dynamic shared memory ({})",
                r.cuda_name()
            )));
        }
        raised.insert((module.name, name), bytes as u32);
        Ok(())
    }

    /// [`Backend::raise_pending_launch_limit`](super::Backend::raise_pending_launch_limit) on
    /// this GPU: the driver is asked only for more room than it has granted, and never again
    /// past its ceiling.
    pub fn raise_pending_launch_limit(&self, launches: usize) -> Result<usize> {
        let mut room = self.pending_room.lock().unwrap();
        let (granted, at_ceiling) = *room;
        if granted >= launches || at_ceiling {
            return Ok(granted);
        }
        self.bind()?;
        // What the limit was, for the message (0 where the driver cannot say, as before).
        let now = self.ctx.limit_pending_launches();
        if let Ok(now) = now
            && now >= launches
        {
            *room = (now, false);
            return Ok(now);
        }
        let now = now.unwrap_or(0);
        if let Err(r) = self.ctx.set_limit_pending_launches(launches) {
            return Err(Error::Invalid(format!(
                "the driver refused a limit of {launches} pending device-side launches ({}; the limit was {now})",
                r.cuda_name()
            )));
        }
        // The driver may round or clamp the value: what it grants is what it reads back.
        let granted = self.ctx.limit_pending_launches().map_err(|read| {
            Error::Invalid(format!(
                "the driver set a limit of {launches} pending device-side launches but cannot say what it granted \
                 ({})",
                read.cuda_name()
            ))
        })?;
        *room = (granted, granted < launches);
        Ok(granted)
    }

    /// Launches `name` of `module` with the packed parameter pointers `params`.
    ///
    /// # Safety
    /// `params` match the kernel's parameter list in number, order and size, and every
    /// pointer among them is valid device memory for what the kernel does with it.
    pub unsafe fn launch_in(
        &self,
        stream: &Stream,
        module: &'static ptx::Module,
        name: &'static str,
        grid: u32,
        block: u32,
        shared: u32,
        params: &[*mut c_void],
    ) -> Result<()> {
        let f = self.function_in(module, name)?;
        // SAFETY: forwarded from the caller; `f` keeps its module loaded.
        unsafe { stream.launch(&f, grid, block, shared, params) }.during(format!("launching `{name}`"))
    }

    /// Waits for `stream`; reports an error a kernel raised.
    pub fn synchronize(&self, stream: &Stream) -> Result<()> {
        stream.synchronize().during("waiting for the GPU")
    }

    /// Device time of the work `f` enqueues, by CUDA events around it, in microseconds.
    ///
    /// The GPU's time only: the stream is held while the start event, `f`'s launches and the stop
    /// event are queued behind the hold, so the window does not hold the CPU's time to issue them
    /// (the CUDA C harnesses time the same way; nvbench calls it a blocking kernel). The hold is a
    /// one-thread `stream_hold` kernel of a loaded module with the runtime's helpers
    /// ([`ptx::Module::with_helpers`]: the library's), as the library's figures were measured, or
    /// else a host function (`cuLaunchHostFunc`) that the host releases once everything is
    /// queued. Either holds at most the current hold time: if that ran out before everything was
    /// queued, the GPU may have waited for the CPU inside the window, and the hold doubles for the
    /// next run (up to `HOLD_MAX_NS`, 2 ms).
    pub fn time(&self, stream: &Stream, f: &mut dyn FnMut() -> Result<()>) -> Result<f64> {
        let events = self.events.lock().unwrap();
        let hold = self.hold_ns.load(Ordering::Relaxed);
        let held_by_kernel = *self.hold_module.lock().unwrap();
        let gate = match held_by_kernel {
            Some(module) => {
                let mut ns = hold;
                let params = [(&raw mut ns).cast::<c_void>()];
                // SAFETY: `stream_hold(ns: u32)` takes one u32 and touches no memory.
                unsafe { self.launch_in(stream, module, "stream_hold", 1, 1, 0, &params) }?;
                None
            }
            None => Some(Gate::hold(stream, hold)?),
        };
        events.0.record(stream).during("recording the start event")?;
        let run = f();
        let stop = events.1.record(stream).during("recording the stop event");
        let expired = match &gate {
            Some(gate) => gate.release(),
            None => events.0.query().during("querying the start event")?,
        };
        run?;
        stop?;
        if expired {
            self.hold_ns.store(hold.saturating_mul(2).min(HOLD_MAX_NS), Ordering::Relaxed);
        }
        events.1.synchronize().during("waiting for the timed work")?;
        let ms = events.1.elapsed_ms_since(&events.0).during("reading the elapsed time")?;
        Ok(ms as f64 * 1e3)
    }

    /// How many blocks of `block` threads with `shared` dynamic bytes fit on one SM at once.
    pub fn occupancy(
        &self,
        module: &'static ptx::Module,
        name: &'static str,
        block: u32,
        shared: usize,
    ) -> Result<u32> {
        let f = self.function_in(module, name)?;
        f.max_active_blocks_per_multiprocessor(block, shared).during(format!("querying occupancy of `{name}`"))
    }
}

/// The newest of the default PTX builds (`reduce-scan-build`'s sm_70, sm_80 and sm_90) that a
/// device of compute capability `cc` runs: what a module built with the defaults loads there.
fn newest_default_arch(cc: (u32, u32)) -> &'static str {
    match cc {
        (9.., _) => "sm_90",
        (8, _) => "sm_80",
        _ => "sm_70",
    }
}

/// The host function's side of a hold ([`Gpu::time`] without a `stream_hold` kernel): the stream
/// waits in [`hold_until_released`] until the host releases the gate, or until the hold time
/// runs out.
struct Gate {
    released: Mutex<bool>,
    wake: std::sync::Condvar,
    /// The hold ran out before the release.
    expired: std::sync::atomic::AtomicBool,
    limit: std::time::Duration,
}

impl Gate {
    /// Queues a hold of at most `ns` nanoseconds on `stream`.
    fn hold(stream: &Stream, ns: u32) -> Result<std::sync::Arc<Gate>> {
        let gate = std::sync::Arc::new(Gate {
            released: Mutex::new(false),
            wake: std::sync::Condvar::new(),
            expired: std::sync::atomic::AtomicBool::new(false),
            limit: std::time::Duration::from_nanos(u64::from(ns)),
        });
        let data = std::sync::Arc::into_raw(gate.clone()).cast_mut().cast::<c_void>();
        // SAFETY: the function makes no CUDA call; `data` is a reference of the gate's count that
        // the function takes back (and drops) when it runs.
        if let Err(e) = unsafe { stream.launch_host_func(hold_until_released, data) } {
            // SAFETY: never queued: the reference is this one's to take back.
            drop(unsafe { std::sync::Arc::from_raw(data.cast_const().cast::<Gate>()) });
            return Err(e).during("queueing the hold before a timed run");
        }
        Ok(gate)
    }

    /// Lets the stream go on; whether the hold had run out already.
    fn release(&self) -> bool {
        *self.released.lock().unwrap() = true;
        self.wake.notify_all();
        self.expired.load(Ordering::Acquire)
    }
}

/// The host function of a hold: waits until its gate is released or its time runs out.
unsafe extern "C" fn hold_until_released(data: *mut c_void) {
    // SAFETY: `data` is the reference `Gate::hold` gave up for this call.
    let gate = unsafe { std::sync::Arc::from_raw(data.cast_const().cast::<Gate>()) };
    let released = gate.released.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    let (_released, waited) = gate
        .wake
        .wait_timeout_while(released, gate.limit, |released| !*released)
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    if waited.timed_out() {
        gate.expired.store(true, Ordering::Release);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn gate(ns: u64) -> std::sync::Arc<Gate> {
        std::sync::Arc::new(Gate {
            released: Mutex::new(false),
            wake: std::sync::Condvar::new(),
            expired: std::sync::atomic::AtomicBool::new(false),
            limit: std::time::Duration::from_nanos(ns),
        })
    }

    /// The stream's side of a hold ends at the release, or when its time runs out (which the
    /// release then reports, so that the next hold is longer).
    #[test]
    fn a_hold_ends_at_its_release_or_its_time() {
        let released = gate(10_000_000_000);
        // The address, which a thread may take (a raw pointer may not).
        let data = std::sync::Arc::into_raw(released.clone()) as usize;
        // Taken before the thread starts (which may be after the sleep below begins), so that
        // the release comes at least 20 ms after it.
        let start = std::time::Instant::now();
        let stream = std::thread::spawn(move || {
            // SAFETY: the reference given up above, for this call.
            unsafe { hold_until_released(data as *mut c_void) };
            start.elapsed()
        });
        std::thread::sleep(std::time::Duration::from_millis(20));
        assert!(!released.release(), "released in time");
        let held = stream.join().unwrap();
        assert!(held >= std::time::Duration::from_millis(20) && held < std::time::Duration::from_secs(5), "{held:?}");
        assert_eq!(std::sync::Arc::strong_count(&released), 1, "the host function dropped its reference");

        let ran_out = gate(1_000_000);
        let data = std::sync::Arc::into_raw(ran_out.clone()).cast_mut().cast::<c_void>();
        // SAFETY: as above.
        unsafe { hold_until_released(data) };
        assert!(ran_out.release(), "the hold ran out before the release");
    }
}
