//! The CPU emulator: runs the kernels of `kernels/` on the host with CUDA's semantics.
//!
//! # What it guarantees
//! * **Threads.** Every CUDA thread of a block is a coroutine on its own stack; the
//!   threads of a block interleave at every barrier, warp operation and atomic, so code
//!   that is only right because of some particular interleaving is not protected by the
//!   emulator's order (it runs thread 0 to its first barrier, then thread 1, …).
//! * **`sync_threads`.** A real barrier: no thread passes until every thread of the block
//!   has arrived. A barrier that some threads never reach (an early `return`, a barrier
//!   inside an `if` that splits the block) is **reported**, naming the kernel, the block,
//!   the barrier's source line and the missing threads. So is a block whose threads wait
//!   at barriers on different source lines.
//! * **Warps.** 32 lanes; `shfl` (idx/up/down/xor, with PTX's clamping), `__syncwarp`,
//!   ballot/all/any and `redux.sync` wait for every lane of the mask, like `.sync`
//!   instructions since Volta. A lane of the mask that exited or waits elsewhere is
//!   reported. A shuffle from a lane outside the mask reads `0xDEADBEEF`.
//! * **Shared memory.** Static arrays ([`device::static_shared!`]) and dynamic shared
//!   memory, per block, filled with `0xA5` bytes at block start (the GPU leaves garbage);
//!   an index past the end is reported with the thread and source line.
//! * **Global memory** is host memory (buffers aligned to 256 bytes, like `cudaMalloc`),
//!   reached only through the device layer's `Global`/`GlobalMut`, so every access is checked;
//!   atomics are `core::sync::atomic` with the orderings the device layer documents. Blocks
//!   run on several OS threads at once, handed out in block order.
//! * **Time.** A kernel past its time budget is stopped with an error at its next barrier,
//!   warp operation or atomic (the report names the thread and the source line where it was
//!   last seen at one of those); one that loops without any of those cannot be interrupted,
//!   and the process exits with the error once the budget plus a grace period is over.
//! * **`clock64`** counts host nanoseconds since the launch started.
//!
//! # What it checks
//! Every memory access, before it happens (`docs/emulator.md` puts these side by side with
//! compute-sanitizer's four tools): **memcheck** (a global access outside every live device
//! allocation, into a freed one, or misaligned; a shared index past its array), **racecheck**
//! (hazards between threads of a block in shared and global memory, honouring barriers, warp
//! syncs by mask and atomics without assuming lock-step warps; and between blocks, honouring
//! release/acquire), **initcheck** (loads of device or shared memory nothing wrote) and
//! **synccheck** (the barrier and warp rules above). The first fault stops the launch with one
//! report: kind, kernel, block, thread, `file:line`, address and buffer. [`Checks`] selects
//! them (all by default).
//!
//! # What it cannot show
//! Anything about speed: times are host times, and nothing here models coalescing, caches,
//! bank conflicts, occupancy or the warp scheduler.
//!
//! # Debugging a kernel with it
//! Kernels are ordinary Rust functions on the host. Temporarily add `extern crate std;` to
//! `kernels/src/lib.rs` under `#[cfg(not(target_arch = "nvptx64"))]` and print from the
//! kernel with `std::eprintln!` (guard it with `if thread_idx_x() == 0` to print once per
//! block). Run one variant on one block with `cargo run --bin reduce -- --backend emulator
//! --variant NAME --n 64 --block 32`. Breakpoints work: `rust-gdb --args target/debug/reduce
//! ...` then `break kernels::reduce::interleaved::interleaved`; each CUDA thread is a
//! coroutine on the worker thread, so `bt` shows one CUDA thread's stack.

mod access;
mod block;
mod copies;
pub mod counters;
pub mod memory;
pub mod nested;
mod race;
pub(crate) mod warp;

/// `file:line` of a kernel's source as a report names it: the path as the compiler recorded it
/// with `dir/..` steps taken out (a kernel file that a crate includes with `#[path = "../x.rs"]`
/// is recorded as `crate/src/../x.rs`; the report says `crate/x.rs`, the file the person edits).
pub(crate) fn source_line(file: &str, line: u32) -> String {
    let cwd = std::env::current_dir().ok();
    source_line_from(file, line, cwd.as_deref().and_then(std::path::Path::to_str))
}

/// [`source_line`] seen from `cwd`: an absolute path under it (a file a build script named by its
/// full path) is shown from there, as a path the person can open from where they ran the program.
fn source_line_from(file: &str, line: u32, cwd: Option<&str>) -> String {
    let file = match cwd {
        Some(dir) if !dir.is_empty() && dir != "/" => {
            file.strip_prefix(dir).and_then(|rest| rest.strip_prefix('/')).unwrap_or(file)
        }
        _ => file,
    };
    let mut parts: Vec<&str> = Vec::new();
    for part in file.split('/') {
        match part {
            "." => {}
            ".." if parts.last().is_some_and(|p| !p.is_empty() && *p != "..") => {
                parts.pop();
            }
            _ => parts.push(part),
        }
    }
    format!("{}:{line}", parts.join("/"))
}

/// [`source_line`] of a call site.
pub(crate) fn site_line(s: device::emu::Site) -> String {
    source_line(s.file(), s.line())
}

use std::fmt;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Condvar, Mutex};
use std::time::{Duration, Instant};

pub use device::emu::Dim3;

/// The streaming multiprocessors of the GPU whose measurements are committed: the NVIDIA
/// H100 80GB HBM3 of `docs/measurements/2026-11-25-h100/device.txt` ("132 SMs"), the set
/// `reduce`'s emulator table prints beside its rows (`reduce_scan::committed`, whose test keeps
/// this number equal to the set's). The emulator plays this geometry by default
/// ([`EmulatedSms::CommittedGpu`]): a grid sized to fill the device (the grid-stride
/// variants', 2112 blocks of 128 on the H100) is the GPU's grid, so its per-block counters are
/// the GPU's too.
pub const COMMITTED_GPU_SMS: u32 = 132;

/// The committed GPU, short, as the emulator's device line names it (the set's `device.txt`).
pub const COMMITTED_GPU: &str = "H100";

/// Shared memory of one SM of the committed GPU (sm_90: 228 KiB), which the emulator's
/// occupancy divides among a kernel's blocks ([`blocks_per_sm`]), as the driver's
/// `cuOccupancyMaxActiveBlocksPerMultiprocessor` does.
pub const COMMITTED_GPU_SHARED_PER_SM: usize = 228 * 1024;

/// Shared memory the driver reserves for each resident block (1 KiB from sm_80 on).
pub const SHARED_RESERVED_PER_BLOCK: usize = 1024;

/// Threads one SM of the committed GPU holds at once (sm_90: 2048).
pub const COMMITTED_GPU_THREADS_PER_SM: u32 = 2048;

/// Blocks of `block` threads with `shared` dynamic shared bytes that one SM of the committed
/// GPU holds at once, as the emulator answers `Backend::occupancy`: the fewer of the threads'
/// limit and the shared memory's, at least one and at most 32 (sm_90's blocks per SM). What the
/// emulator cannot see is left out: registers, and the kernel's static shared memory (a few
/// hundred bytes for the kernels here). The warp-specialized scan's 80 KiB ring gives 2 blocks
/// of 320 threads, the H100's answer, where threads alone would give 6.
pub fn blocks_per_sm(block: u32, shared: usize) -> u32 {
    let by_threads = COMMITTED_GPU_THREADS_PER_SM / block.max(1);
    let by_shared = match shared {
        0 => u32::MAX,
        s => u32::try_from(COMMITTED_GPU_SHARED_PER_SM / (s + SHARED_RESERVED_PER_BLOCK)).unwrap_or(u32::MAX),
    };
    by_threads.min(by_shared).clamp(1, 32)
}

/// The environment variable that chooses the emulator's [`EmulatedSms`] (`cpu`, `gpu`, or a
/// count), as the CLI's `--emulated-sms` does.
pub const EMULATED_SMS_VAR: &str = "REDUCE_EMULATED_SMS";

/// Most multiprocessors the emulator plays.
pub const MAX_EMULATED_SMS: u32 = 1024;

/// How many streaming multiprocessors the emulator reports (what sizes the grids that fill a
/// device: `Grid::Resident` and `Grid::PerMultiprocessor` in the reduction registry, the
/// persistent scan's blocks).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum EmulatedSms {
    /// The committed GPU's, [`COMMITTED_GPU_SMS`] (the default): the emulator launches the
    /// grids the GPU beside its rows launched.
    #[default]
    CommittedGpu,
    /// One per worker thread: the CPU's own geometry (fewer blocks of a grid-stride kernel, each
    /// doing more trips; the answer is the same).
    Cpu,
    /// This many (1..=[`MAX_EMULATED_SMS`]): another GPU's geometry.
    Count(u32),
}

impl EmulatedSms {
    /// `gpu` (the committed GPU's), `cpu` (one per worker thread) or a count in
    /// 1..=[`MAX_EMULATED_SMS`]; otherwise one line saying what is allowed.
    ///
    /// ```
    /// use reduce_scan_runtime::emu::EmulatedSms;
    /// assert_eq!(EmulatedSms::parse("cpu"), Ok(EmulatedSms::Cpu));
    /// assert_eq!(EmulatedSms::parse("132"), Ok(EmulatedSms::Count(132)));
    /// assert!(EmulatedSms::parse("0").is_err());
    /// ```
    pub fn parse(text: &str) -> Result<Self, String> {
        match text.trim() {
            "gpu" => Ok(EmulatedSms::CommittedGpu),
            "cpu" => Ok(EmulatedSms::Cpu),
            t => match t.parse::<u32>() {
                Ok(n) if (1..=MAX_EMULATED_SMS).contains(&n) => Ok(EmulatedSms::Count(n)),
                _ => Err(format!(
                    "`{text}` names no geometry; allowed: gpu (the committed GPU's {COMMITTED_GPU_SMS} SMs, the \
                     default), cpu (one SM per worker thread) or a count in 1..={MAX_EMULATED_SMS}"
                )),
            },
        }
    }

    /// What [`EMULATED_SMS_VAR`] says: `None` when it is unset or empty, an error (one line)
    /// when it is not a value [`parse`](Self::parse) accepts.
    pub fn from_env() -> Result<Option<Self>, String> {
        match std::env::var(EMULATED_SMS_VAR) {
            Ok(v) if !v.trim().is_empty() => Self::parse(&v).map(Some).map_err(|e| format!("{EMULATED_SMS_VAR}: {e}")),
            _ => Ok(None),
        }
    }

    /// The count, for an emulator of `workers` worker threads.
    pub fn count(self, workers: usize) -> u32 {
        match self {
            EmulatedSms::CommittedGpu => COMMITTED_GPU_SMS,
            EmulatedSms::Cpu => workers.clamp(1, MAX_EMULATED_SMS as usize) as u32,
            EmulatedSms::Count(n) => n,
        }
    }

    /// Where the count comes from, for the device line: `the committed H100's`, `one per worker
    /// thread`, or `as asked`.
    pub fn describe(self) -> String {
        match self {
            EmulatedSms::CommittedGpu => format!("the committed {COMMITTED_GPU}'s"),
            EmulatedSms::Cpu => "one per worker thread".into(),
            EmulatedSms::Count(_) => "as asked".into(),
        }
    }
}

/// Largest block the emulator accepts (the CUDA limit on every GPU since Fermi).
pub const MAX_THREADS_PER_BLOCK: u64 = 1024;
/// Largest dynamic shared memory per block without an opt-in attribute (48 KiB).
pub const MAX_DYNAMIC_SHARED: usize = 48 * 1024;
/// Largest dynamic shared memory per block with the opt-in ([`Emulator::allow_dynamic_shared`]):
/// sm_90's 227 KiB.
pub const MAX_DYNAMIC_SHARED_OPT_IN: usize = 227 * 1024;

/// What went wrong in an emulated launch.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EmuErrorKind {
    /// A barrier that not every thread of the block reached, or reached on different lines.
    BarrierDivergence,
    /// A warp operation whose mask names a lane that never joins it.
    WarpDivergence,
    /// A shared-memory access out of bounds.
    SharedOutOfBounds,
    /// A global-memory access outside every live device allocation (memcheck).
    GlobalOutOfBounds,
    /// A global-memory access inside an allocation that was freed (memcheck).
    UseAfterFree,
    /// An access whose address is not a multiple of its size (16 for 128-bit accesses).
    Misaligned,
    /// Two threads access one word, one of them storing, with nothing ordering them
    /// (racecheck).
    Race,
    /// A load of shared memory no thread of the block wrote, or of device memory nothing
    /// wrote since it was allocated (initcheck).
    Uninitialized,
    /// An access to shared memory that an asynchronous copy (`cp.async`, `cp.async.bulk`) has
    /// not finished writing, a store to shared memory that a bulk store has not finished
    /// reading, or a block that exits before its bulk stores have read their bytes: a missing
    /// wait (`cp.async.wait_group`, a wait on the copy's `mbarrier`,
    /// `cp.async.bulk.wait_group.read`).
    InFlight,
    /// The kernel called `trap`.
    Trap,
    /// The kernel panicked (an overflow or index check in the Rust code).
    Panic,
    /// The kernel ran past its time budget.
    Timeout,
    /// The launch configuration is not allowed (block too large, shared memory too large).
    BadLaunch,
}

/// An emulated launch that failed, with where and why.
#[derive(Clone, Debug)]
pub struct EmuError {
    /// What kind of failure.
    pub kind: EmuErrorKind,
    /// The kernel's name.
    pub kernel: String,
    /// The block, when the failure belongs to one.
    pub block: Option<Dim3>,
    /// The specifics, in one line.
    pub detail: String,
}

impl fmt::Display for EmuError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "emulator: kernel `{}`", self.kernel)?;
        if let Some(b) = self.block {
            write!(f, ", block ({},{},{})", b.x, b.y, b.z)?;
        }
        write!(f, ": {}", self.detail)
    }
}

impl std::error::Error for EmuError {}

/// Which of the emulator's checks run. memcheck (bounds, use after free, alignment) always
/// runs: without it a bad kernel would read or write host memory.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Checks {
    /// Hazards between threads of a block, and between blocks (see `docs/emulator.md`).
    pub racecheck: bool,
    /// Loads of memory nothing wrote.
    pub initcheck: bool,
    /// racecheck on every block of every grid; otherwise on every block of a grid of up to
    /// [`RACE_SAMPLE`] blocks and on [`RACE_SAMPLE`] of a larger one ([`race_sampled`]).
    pub every_block: bool,
}

/// Blocks of a grid that racecheck follows by default (all of a smaller grid).
pub const RACE_SAMPLE: u64 = 64;

/// Whether block `block` (linear index) of a grid of `blocks` is one that racecheck follows by
/// default: every block of a grid of up to [`RACE_SAMPLE`] blocks; of a larger one the first
/// and the last `RACE_SAMPLE / 4` (where the short last block and edge cases live) and
/// `RACE_SAMPLE / 2` spread evenly between them. A kernel's structural races (a missing
/// barrier, an unsynchronised warp) happen in every block, so a sample finds them; the sample
/// keeps the check's cost on a 2^20-element run near memcheck's.
///
/// ```
/// use reduce_scan_runtime::emu::{RACE_SAMPLE, race_sampled};
/// assert!((0..64).all(|b| race_sampled(b, 64)));
/// assert_eq!((0..2048).filter(|&b| race_sampled(b, 2048)).count() as u64, RACE_SAMPLE);
/// assert!(race_sampled(0, 2048) && race_sampled(2047, 2048) && !race_sampled(17, 2048));
/// ```
pub fn race_sampled(block: u64, blocks: u64) -> bool {
    if blocks <= RACE_SAMPLE {
        return true;
    }
    let edge = RACE_SAMPLE / 4;
    if block < edge || block >= blocks - edge {
        return true;
    }
    let stride = (blocks - 2 * edge).div_ceil(RACE_SAMPLE - 2 * edge);
    (block - edge).is_multiple_of(stride)
}

impl Checks {
    /// Every check, racecheck on a sample of the blocks of a large grid (the default).
    pub const ALL: Checks = Checks { racecheck: true, initcheck: true, every_block: false };
    /// Every check, racecheck on every block.
    pub const EXHAUSTIVE: Checks = Checks { racecheck: true, initcheck: true, every_block: true };
    /// memcheck only: bounds, use after free and alignment.
    pub const MEMCHECK: Checks = Checks { racecheck: false, initcheck: false, every_block: false };

    /// Whether racecheck follows block `block` of a grid of `blocks`.
    pub fn races_in(&self, block: u64, blocks: u64) -> bool {
        self.racecheck && (self.every_block || race_sampled(block, blocks))
    }
}

/// `memcheck, racecheck, initcheck, synccheck`: the compute-sanitizer tools whose checks run.
impl fmt::Display for Checks {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("memcheck")?;
        if self.racecheck {
            if self.every_block {
                f.write_str(", racecheck (every block)")?;
            } else {
                write!(f, ", racecheck ({RACE_SAMPLE} blocks of a larger grid)")?;
            }
        }
        if self.initcheck {
            f.write_str(", initcheck")?;
        }
        f.write_str(", synccheck")
    }
}

impl Default for Checks {
    fn default() -> Self {
        Self::ALL
    }
}

/// The CPU emulator: its settings, and its device memory (shared by its clones, which are the
/// same device).
#[derive(Clone, Debug)]
pub struct Emulator {
    workers: usize,
    budget: Duration,
    checks: Checks,
    memory: std::sync::Arc<memory::DeviceMemory>,
    /// Fault injection for tests: refuse the launch with this index (0-based, counted over
    /// every launch of this emulator and its clones).
    refuse: Option<std::sync::Arc<Refusal>>,
    /// Where counted launches leave their counters (`None`: no counting).
    counted: Option<std::sync::Arc<Mutex<Vec<Counted>>>>,
    /// The block each counted launch traces (`reduce trace`).
    trace_block: Option<u64>,
    /// Kernels allowed more than 48 KiB of dynamic shared memory, and how much.
    opted_in: std::sync::Arc<Mutex<std::collections::HashMap<String, usize>>>,
    /// Device-side launches queued and not yet completed, and how many may be
    /// ([`set_pending_launch_limit`](Self::set_pending_launch_limit)).
    pending: std::sync::Arc<nested::Pending>,
    /// The multiprocessors it reports ([`with_sms`](Self::with_sms)).
    sms: EmulatedSms,
}

/// One launch's counters ([`Emulator::with_counting`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Counted {
    /// The kernel.
    pub kernel: String,
    /// Its blocks.
    pub grid_blocks: u64,
    /// What its blocks did, summed.
    pub counters: counters::Counters,
    /// The traced block's accesses, interval by interval ([`Emulator::with_trace`]).
    pub trace: Option<counters::Trace>,
}

/// Which launch to refuse, and how many were seen.
#[derive(Debug)]
struct Refusal {
    nth: u32,
    seen: std::sync::atomic::AtomicU32,
}

impl Default for Emulator {
    fn default() -> Self {
        Self::new()
    }
}

impl Emulator {
    /// An emulator running blocks on every available core, with a 60 s budget per launch,
    /// reporting the multiprocessors [`EMULATED_SMS_VAR`] names (a value it does not accept is
    /// ignored here: the CLI refuses it in one line), else the committed GPU's
    /// ([`COMMITTED_GPU_SMS`]).
    pub fn new() -> Self {
        let workers = std::thread::available_parallelism().map_or(1, |n| n.get());
        let sms = EmulatedSms::from_env().ok().flatten().unwrap_or_default();
        Self {
            workers,
            budget: Duration::from_secs(60),
            checks: Checks::ALL,
            memory: Default::default(),
            refuse: None,
            counted: None,
            trace_block: None,
            opted_in: Default::default(),
            pending: Default::default(),
            sms,
        }
    }

    /// Reports `sms` multiprocessors ([`EmulatedSms`]): the committed GPU's by default.
    pub fn with_sms(mut self, sms: EmulatedSms) -> Self {
        self.sms = sms;
        self
    }

    /// The multiprocessors it reports, and where the number comes from.
    pub fn sms(&self) -> (u32, EmulatedSms) {
        (self.sms.count(self.workers), self.sms)
    }

    /// Lets `kernel` launch with up to `bytes` of dynamic shared memory, past the 48 KiB a
    /// launch gets without asking (CUDA C `cudaFuncSetAttribute(kernel,
    /// cudaFuncAttributeMaxDynamicSharedMemorySize, bytes)`); at most
    /// [`MAX_DYNAMIC_SHARED_OPT_IN`].
    pub fn allow_dynamic_shared(&self, kernel: &str, bytes: usize) -> Result<(), EmuError> {
        if bytes > MAX_DYNAMIC_SHARED_OPT_IN {
            return Err(EmuError {
                kind: EmuErrorKind::BadLaunch,
                kernel: kernel.to_string(),
                block: None,
                detail: format!(
                    "{bytes} bytes of dynamic shared memory asked for; a block holds at most {MAX_DYNAMIC_SHARED_OPT_IN}"
                ),
            });
        }
        let mut opted = self.opted_in.lock().unwrap();
        let limit = opted.entry(kernel.to_string()).or_insert(0);
        *limit = (*limit).max(bytes);
        Ok(())
    }

    /// How many device-side launches may be queued and not yet completed at once, as CUDA's
    /// `cudaLimitDevRuntimePendingLaunchCount` (default [`nested::DEFAULT_PENDING_LAUNCHES`],
    /// 2048, as on the GPU): one more is a fault, reported where it was made.
    pub fn set_pending_launch_limit(&self, limit: usize) {
        self.pending.set_limit(limit);
    }

    /// [`set_pending_launch_limit`](Self::set_pending_launch_limit), but only upwards (a limit
    /// already at least `limit` stays) and to at most [`nested::MAX_PENDING_LAUNCHES`], as the
    /// H100's driver grants (or what [`granting_at_most`](Self::granting_at_most) said); returns
    /// the limit now (what [`crate::backend::Backend`] asks for).
    pub fn raise_pending_launch_limit(&self, limit: usize) -> usize {
        self.pending.raise_limit(limit)
    }

    /// As a device whose driver grants at most `most` pending device-side launches however many
    /// are asked for ([`raise_pending_launch_limit`](Self::raise_pending_launch_limit); the H100
    /// grants [`nested::MAX_PENDING_LAUNCHES`]): what the host's plan must fit its nested grids
    /// into. Every device grants at least CUDA's default, 2048, so `most` below that has no
    /// effect.
    pub fn granting_at_most(self, most: usize) -> Self {
        self.pending.grant_at_most(most);
        self
    }

    /// Fault injection for tests: launch number `nth` (0-based) of this emulator fails with a
    /// [`EmuErrorKind::BadLaunch`] before any thread runs, as a launch the driver refuses does.
    pub fn refusing_launch(mut self, nth: u32) -> Self {
        self.refuse = Some(std::sync::Arc::new(Refusal { nth, seen: 0.into() }));
        self
    }

    /// Sets how many OS threads run blocks concurrently (at least 1).
    pub fn with_workers(mut self, workers: usize) -> Self {
        self.workers = workers.max(1);
        self
    }

    /// Sets the time budget of one launch.
    pub fn with_budget(mut self, budget: Duration) -> Self {
        self.budget = budget;
        self
    }

    /// Sets which checks run (all by default).
    pub fn with_checks(mut self, checks: Checks) -> Self {
        self.checks = checks;
        self
    }

    /// Counts what every launch's warps do (requests, sectors, bank conflicts…; see
    /// [`counters`]) from now on; [`take_counted`](Self::take_counted) hands the counts out.
    /// Counting costs time: the CLI turns it on for `--metrics` only.
    pub fn with_counting(mut self) -> Self {
        self.counted = Some(Default::default());
        self
    }

    /// Counts (as [`with_counting`](Self::with_counting)) and keeps every access of block
    /// `block` (linear index) of every launch, barrier interval by interval: what `reduce trace`
    /// draws.
    pub fn with_trace(self, block: u64) -> Self {
        let mut emu = self.with_counting();
        emu.trace_block = Some(block);
        emu
    }

    /// The counters of the launches made since the last call, in launch order (empty when
    /// counting is off).
    pub fn take_counted(&self) -> Vec<Counted> {
        self.counted.as_ref().map(|c| std::mem::take(&mut *c.lock().unwrap())).unwrap_or_default()
    }

    /// OS threads used for blocks.
    pub fn workers(&self) -> usize {
        self.workers
    }

    /// The checks that run.
    pub fn checks(&self) -> Checks {
        self.checks
    }

    /// The device memory: every buffer of this emulator registers here, so that kernels'
    /// accesses can be checked against it.
    pub fn memory(&self) -> &memory::DeviceMemory {
        &self.memory
    }

    /// The device memory, shared: what a buffer holds on to, to leave it when freed.
    pub fn memory_handle(&self) -> std::sync::Arc<memory::DeviceMemory> {
        self.memory.clone()
    }

    /// Runs `body` as the kernel `kernel` over a `grid` of `block`-shaped blocks with
    /// `dynamic_shared` bytes of dynamic shared memory per block. `body` is called once per
    /// CUDA thread; it reaches its indices through the device layer.
    ///
    /// # Safety
    /// `body` may run concurrently on several OS threads; whatever memory it touches must be
    /// valid for the accesses the kernel makes (the device pointers in its arguments point
    /// to live emulator buffers of the right lengths).
    pub unsafe fn launch(
        &self,
        kernel: &str,
        grid: Dim3,
        block: Dim3,
        dynamic_shared: usize,
        body: &(dyn Fn() + Sync),
    ) -> Result<(), EmuError> {
        // SAFETY: forwarded from the caller; the host's launch is depth 0.
        unsafe { self.launch_at(kernel, grid, block, dynamic_shared, body, 0) }
    }

    /// [`launch`](Self::launch) at nesting depth `depth` (0 for the host's launch, one more for
    /// each device-side launch), followed by the device-side launches the grid queued.
    ///
    /// # Safety
    /// As [`launch`](Self::launch).
    unsafe fn launch_at(
        &self,
        kernel: &str,
        grid: Dim3,
        block: Dim3,
        dynamic_shared: usize,
        body: &(dyn Fn() + Sync),
        depth: u32,
    ) -> Result<(), EmuError> {
        block::install_hooks();
        self.check_launch(kernel, grid, block, dynamic_shared)?;
        let start = Instant::now();
        let opted = self.opted_in.lock().unwrap().contains_key(kernel);
        let launch = block::LaunchCtx {
            kernel,
            grid,
            block,
            dynamic_shared,
            shared_limit: if opted { MAX_DYNAMIC_SHARED_OPT_IN } else { MAX_DYNAMIC_SHARED },
            body,
            start,
            deadline: start + self.budget,
            cancel: AtomicBool::new(false),
            memory: self.memory.snapshot(),
            checks: self.checks,
            syncs: Default::default(),
            counted: self.counted.as_ref().map(|_| Mutex::new(counters::Counters::default())),
            trace_block: self.trace_block,
            trace: Mutex::new(None),
            depth,
            children: Default::default(),
            pending: &self.pending,
        };
        let blocks = grid.volume();
        let next = AtomicU64::new(0);
        let error: Mutex<Option<EmuError>> = Mutex::new(None);
        let running = Mutex::new(self.workers.min(blocks as usize));
        let finished = Condvar::new();

        std::thread::scope(|s| {
            for _ in 0..*running.lock().unwrap() {
                s.spawn(|| {
                    run_blocks(&launch, &next, &error);
                    let mut left = running.lock().unwrap();
                    *left -= 1;
                    finished.notify_all();
                });
            }
            self.watch(&launch, &running, &finished);
        });

        if let (Some(sink), Some(total)) = (&self.counted, launch.counted) {
            let counters = total.into_inner().unwrap();
            let trace = launch.trace.into_inner().unwrap();
            sink.lock().unwrap().push(Counted { kernel: kernel.to_string(), grid_blocks: blocks, counters, trace });
        }
        let children = launch.children.into_inner().unwrap();
        let failed = error.into_inner().unwrap();
        if failed.is_some() || next.load(Ordering::Relaxed) < blocks {
            // A grid that did not complete launches nothing: its queued children are dropped.
            self.pending.forget(children.len());
        }
        match failed {
            Some(e) => Err(e),
            // Cancelled past the budget before every block was taken (a loaded machine can start
            // the workers late): blocks never ran, so the launch did not complete.
            None if next.load(Ordering::Relaxed) < blocks => Err(EmuError {
                kind: EmuErrorKind::Timeout,
                kernel: kernel.to_string(),
                block: None,
                detail: format!("the launch's time budget of {:?} ran out before every block had started", self.budget),
            }),
            None => self.run_children(children, depth),
        }
    }

    /// The watchdog, run by the launching thread while the workers run the blocks: past the
    /// budget it asks the workers to stop (they notice at their next barrier, warp operation or
    /// atomic); past budget + grace it gives up on a kernel that spins without any of those.
    fn watch(&self, launch: &block::LaunchCtx<'_>, running: &Mutex<usize>, finished: &Condvar) {
        let grace = Duration::from_secs(5);
        let mut left = running.lock().unwrap();
        while *left > 0 {
            let now = Instant::now();
            let wake = if now < launch.deadline { launch.deadline } else { launch.deadline + grace };
            let (guard, _) = finished.wait_timeout(left, wake.saturating_duration_since(now)).unwrap();
            left = guard;
            if *left > 0 && Instant::now() >= launch.deadline {
                launch.cancel.store(true, Ordering::Relaxed);
                if Instant::now() >= launch.deadline + grace {
                    eprintln!(
                        "error: emulator: kernel `{}` ran past its time budget of {:?} and \
                         never reached a barrier, warp operation or atomic where it could be stopped; exiting",
                        launch.kernel, self.budget
                    );
                    std::process::exit(124);
                }
            }
        }
    }
}

impl Emulator {
    /// The launch preconditions (and the fault injection of [`Emulator::refusing_launch`]):
    /// a bad launch fails before any thread runs, as the driver refuses it.
    fn check_launch(&self, kernel: &str, grid: Dim3, block: Dim3, dynamic_shared: usize) -> Result<(), EmuError> {
        let bad = |detail: String| EmuError {
            kind: EmuErrorKind::BadLaunch,
            kernel: kernel.to_string(),
            block: None,
            detail,
        };
        if let Some(r) = &self.refuse
            && r.seen.fetch_add(1, std::sync::atomic::Ordering::Relaxed) == r.nth
        {
            return Err(bad(format!("launch {} refused by fault injection", r.nth)));
        }
        if block.volume() == 0 || block.volume() > MAX_THREADS_PER_BLOCK {
            return Err(bad(format!("block of {} threads; a block holds 1..={MAX_THREADS_PER_BLOCK}", block.volume())));
        }
        if grid.volume() == 0 {
            return Err(bad("empty grid".into()));
        }
        let allowed = self.opted_in.lock().unwrap().get(kernel).copied().unwrap_or(0).max(MAX_DYNAMIC_SHARED);
        if dynamic_shared > allowed {
            return Err(bad(format!(
                "{dynamic_shared} bytes of dynamic shared memory; at most {allowed} (more than {MAX_DYNAMIC_SHARED} only \
                 after Backend::allow_dynamic_shared, CUDA C's cudaFuncSetAttribute)"
            )));
        }
        Ok(())
    }
}

/// One worker thread of a launch: takes the next block in block order and runs it, until the
/// grid is done or a block fails (the first failure is kept; it cancels the launch).
fn run_blocks(launch: &block::LaunchCtx<'_>, next: &AtomicU64, error: &Mutex<Option<EmuError>>) {
    let grid = launch.grid;
    let blocks = grid.volume();
    let mut stacks = block::StackPool::take();
    while !launch.cancel.load(Ordering::Relaxed) {
        let b = next.fetch_add(1, Ordering::Relaxed);
        if b >= blocks {
            break;
        }
        let idx = Dim3 {
            x: (b % grid.x as u64) as u32,
            y: (b / grid.x as u64 % grid.y as u64) as u32,
            z: (b / (grid.x as u64 * grid.y as u64)) as u32,
        };
        if let Err(e) = block::run_block(launch, idx, &mut stacks) {
            let mut slot = error.lock().unwrap();
            if slot.is_none() || slot.as_ref().is_some_and(|s| s.kind == EmuErrorKind::Timeout) {
                *slot = Some(e);
            }
            launch.cancel.store(true, Ordering::Relaxed);
            break;
        }
    }
    stacks.give_back();
}

/// Formats a set of thread or lane indices compactly: `0-15, 17, 20-31`.
pub(crate) fn ranges(indices: impl IntoIterator<Item = u32>) -> String {
    let mut out = String::new();
    let mut run: Option<(u32, u32)> = None;
    let flush = |out: &mut String, (a, b): (u32, u32)| {
        if !out.is_empty() {
            out.push_str(", ");
        }
        if a == b { out.push_str(&a.to_string()) } else { out.push_str(&format!("{a}-{b}")) }
    };
    for i in indices {
        run = match run {
            Some((a, b)) if i == b + 1 => Some((a, i)),
            Some(r) => {
                flush(&mut out, r);
                Some((i, i))
            }
            None => Some((i, i)),
        };
    }
    if let Some(r) = run {
        flush(&mut out, r);
    }
    out
}

#[cfg(test)]
mod tests {
    #[test]
    fn occupancy_counts_threads_and_shared_memory() {
        use super::blocks_per_sm;
        // By threads: 2048 per SM.
        assert_eq!(blocks_per_sm(128, 0), 16);
        assert_eq!(blocks_per_sm(320, 0), 6);
        assert_eq!(blocks_per_sm(1024, 0), 2);
        assert_eq!(blocks_per_sm(32, 0), 32, "at most 32 blocks");
        assert_eq!(blocks_per_sm(4096, 0), 1, "at least one");
        // By shared memory: the warp-specialized scan's rings, as the H100's driver answered
        // (grids of 264, 396 and 132 on its 132 SMs: docs/measurements/2026-11-26-h100/
        // warpspec-7ad10f4/warpspec_sweep.csv): the default 8x20x4, 8x12x6 and 8x20x6.
        assert_eq!(blocks_per_sm(320, 4 * 5120 * 4), 2);
        assert_eq!(blocks_per_sm(320, 6 * 3072 * 4), 3);
        assert_eq!(blocks_per_sm(320, 6 * 5120 * 4), 1);
        assert_eq!(blocks_per_sm(128, 227 * 1024), 1);
        assert_eq!(blocks_per_sm(128, 512), 16, "a small dynamic array leaves the threads' limit");
    }

    #[test]
    fn source_lines_lose_their_parent_steps() {
        use super::source_line;
        assert_eq!(source_line("learn/src/../exercises/02_interleaved.rs", 50), "learn/exercises/02_interleaved.rs:50");
        assert_eq!(source_line("kernels/src/reduce/interleaved.rs", 7), "kernels/src/reduce/interleaved.rs:7");
        assert_eq!(source_line("a/./b/../../c.rs", 1), "c.rs:1");
        assert_eq!(source_line("../up.rs", 2), "../up.rs:2");
        assert_eq!(source_line("/abs/src/../k.rs", 3), "/abs/k.rs:3");
        assert_eq!(source_line("a/../../b.rs", 4), "../b.rs:4");
        use super::source_line_from;
        let at = Some("/work/repo");
        assert_eq!(source_line_from("/work/repo/learn/start/15_x.rs", 42, at), "learn/start/15_x.rs:42");
        assert_eq!(source_line_from("/work/repository/k.rs", 1, at), "/work/repository/k.rs:1");
        assert_eq!(source_line_from("/elsewhere/k.rs", 1, at), "/elsewhere/k.rs:1");
        assert_eq!(source_line_from("kernels/src/k.rs", 1, at), "kernels/src/k.rs:1");
    }

    use super::ranges;

    #[test]
    fn ranges_compress() {
        assert_eq!(ranges([0, 1, 2, 5, 7, 8]), "0-2, 5, 7-8");
        assert_eq!(ranges([]), "");
        assert_eq!(ranges([3]), "3");
    }
}
