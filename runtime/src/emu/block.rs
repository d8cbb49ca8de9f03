//! One block at a time: its threads as coroutines, and the scheduler that runs them until
//! each finishes, meeting at barriers and warp operations.

use std::cell::{Cell, RefCell};
use std::collections::VecDeque;
use std::panic::{AssertUnwindSafe, catch_unwind, resume_unwind};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, Once};
use std::time::Instant;

use corosensei::stack::DefaultStack;
use corosensei::{Coroutine, CoroutineResult, Yielder};
use device::emu::{Access, AsyncCopy, AtomicOp, DeviceLaunch, Dim3, Fault, Hooks, MbarrierOp, Path, Site, WarpOp};

use super::memory::{Known, Snapshot, SyncWords, element_at};
use super::race::BlockRace;
use super::warp::{resolve, same_kind};
use super::{Checks, EmuError, EmuErrorKind, ranges};

/// Stack of one emulated thread. Kernels are shallow; the margin is for a panic's
/// formatting machinery, which runs on this stack.
const STACK_BYTES: usize = 256 * 1024;
/// Stacks kept for reuse between launches.
const POOL_MAX: usize = 8 * 1024;
/// Byte that fresh shared memory is filled with.
const SHARED_POISON: u8 = 0xA5;
/// Resumes between two looks at the clock.
const CLOCK_EVERY: u32 = 1024;
/// A cache line, in bytes.
const LINE: usize = 64;
/// Bytes of a suspended thread's stack prefetched below and above where it suspended.
const PREFETCH_BELOW: usize = 256;
const PREFETCH_ABOVE: usize = 768;

/// Everything the blocks of one launch share.
pub(super) struct LaunchCtx<'a> {
    pub kernel: &'a str,
    pub grid: Dim3,
    pub block: Dim3,
    pub dynamic_shared: usize,
    /// The most shared memory, static and dynamic together, a block of this launch may hold:
    /// 48 KiB, or [`MAX_DYNAMIC_SHARED_OPT_IN`](super::MAX_DYNAMIC_SHARED_OPT_IN) for a kernel
    /// that opted in (`cudaFuncSetAttribute`).
    pub shared_limit: usize,
    pub body: &'a (dyn Fn() + Sync),
    pub start: Instant,
    pub deadline: Instant,
    pub cancel: AtomicBool,
    /// The device allocations, for memcheck.
    pub memory: Snapshot,
    /// Which checks run.
    pub checks: Checks,
    /// What this launch's atomics released, for the cross-block race check.
    pub syncs: SyncWords,
    /// The launch's counters, when counting.
    pub counted: Option<Mutex<super::counters::Counters>>,
    /// The block whose every access is kept (`reduce trace`), when tracing.
    pub trace_block: Option<u64>,
    /// That block's trace.
    pub trace: Mutex<Option<super::counters::Trace>>,
    /// How deep in device-side launches this grid is (0: launched by the host).
    pub depth: u32,
    /// The device-side launches its threads made, run once it has completed.
    pub children: super::nested::Children,
    /// The emulator's count of device-side launches not yet completed.
    pub pending: &'a super::nested::Pending,
}

impl LaunchCtx<'_> {
    /// Block `linear`'s counters, of `threads` threads, when the launch counts (traced when it
    /// is the block to trace).
    fn block_counting(&self, linear: u64, threads: u32) -> Option<RefCell<super::counters::BlockCounting>> {
        let traced = self.trace_block == Some(linear);
        self.counted.as_ref().map(|_| RefCell::new(super::counters::BlockCounting::start(threads, traced)))
    }

    /// Adds a finished block's counters to the launch's (and keeps its trace).
    fn hand_in(&self, mut c: super::counters::BlockCounting) {
        c.flush();
        if let Some(total) = &self.counted {
            total.lock().unwrap().add(&c.totals);
        }
        if let Some(t) = c.trace {
            *self.trace.lock().unwrap() = Some(t);
        }
    }
}

/// What a suspended thread is waiting for.
#[derive(Clone, Copy)]
enum Event {
    Barrier(Site),
    /// `bar.sync id, count`.
    Named {
        id: u32,
        count: u32,
        site: Site,
    },
    Warp {
        mask: u32,
        op: WarpOp,
        site: Site,
    },
    Poll(Site),
}

/// What the scheduler resumes a thread with.
#[derive(Clone, Copy)]
enum Resume {
    Value(u32),
    Abort,
}

/// How a thread ended.
enum Outcome {
    Done,
    Fault(Fault),
    Report(EmuErrorKind, String),
    Panic(String),
    Aborted,
}

/// The one payload a thread unwinds out of its kernel with; why it unwinds (the block being
/// torn down, a fault the device layer raised, a check's report) is in its
/// [`ThreadCtx::unwinding`], so telling the causes apart needs no look at the payload.
struct Unwinding;

/// Unwinds the thread `t` (the calling one) out of its kernel, for the reason `why`, which the
/// block reads back when the unwinding reaches the thread's start.
fn unwind(t: &ThreadCtx<'_>, why: Outcome) -> ! {
    t.unwinding.replace(Some(why));
    resume_unwind(Box::new(Unwinding))
}

/// Stops the calling thread with a check's report (kind and detail line).
pub(super) fn stop_with_report(kind: EmuErrorKind, detail: String) -> ! {
    unwind(current(), Outcome::Report(kind, detail))
}

type Co = Coroutine<Resume, Event, Outcome, DefaultStack>;

/// Per-block state the threads share (only ever touched by the worker running the block).
pub(super) struct BlockCtx<'a> {
    pub launch: &'a LaunchCtx<'a>,
    pub idx: Dim3,
    /// `blockIdx` as one number (x fastest).
    pub linear: u64,
    /// The static shared arrays, in the order the kernel first named them.
    pub static_shared: RefCell<Vec<SharedArray>>,
    /// The dynamic shared memory.
    pub dynamic_shared: RefCell<SharedArray>,
    /// racecheck within the block.
    pub race: RefCell<BlockRace>,
    /// Whether racecheck follows this block ([`Checks::races_in`](super::Checks::races_in)).
    pub race_on: bool,
    /// The block's counting, when the launch counts.
    pub counting: Option<RefCell<super::counters::BlockCounting>>,
    /// The first load in this barrier interval of memory nothing had written (initcheck
    /// reports it when the interval ends with no other thread having written it: that would be
    /// a race, reported as one).
    pub uninit: RefCell<Option<String>>,
    /// Release operations (fences, `st.release`) this block's threads made so far.
    pub releases: Cell<u32>,
    /// What this block acquired of other blocks: block → its release count.
    pub knows: RefCell<Known>,
    /// The asynchronous copies in flight, and the `mbarrier`s.
    pub copies: RefCell<super::copies::BlockCopies>,
}

/// One shared-memory array of a block, with a bit per 4-byte word that says it was written.
pub(super) struct SharedArray {
    /// `static_shared!`'s key (module path and name), or "dynamic shared memory".
    pub name: &'static str,
    pub buf: Vec<u128>,
    /// Bytes the kernel may use.
    pub bytes: usize,
    /// Bytes an element (its type's size; for dynamic shared memory, the last view's), 0 where
    /// none is known: reports count places in elements of it.
    pub elem: usize,
    pub init: Vec<u64>,
    /// Per 4-byte word, how many asynchronous copies still have to write it (empty until a
    /// copy targets the array).
    incoming: Vec<u8>,
    /// Per 4-byte word, how many bulk stores still have to read it.
    outgoing: Vec<u8>,
}

impl SharedArray {
    fn new(name: &'static str, bytes: usize, elem: usize) -> Self {
        Self {
            name,
            buf: vec![u128::from_ne_bytes([SHARED_POISON; 16]); bytes.div_ceil(16).max(1)],
            bytes,
            elem,
            init: vec![0; bytes.div_ceil(4).div_ceil(64).max(1)],
            incoming: Vec::new(),
            outgoing: Vec::new(),
        }
    }

    /// `shared array `NAME` (LEN × ELEM-byte elements, BYTES bytes) at element I`: how reports
    /// name a place ([`shared_place`]).
    pub fn place(&self, from: usize) -> String {
        shared_place(self.name, self.bytes, self.elem, from)
    }

    /// Marks bytes `[from, to)` as the destination (`incoming`) or the bulk-store source of one
    /// more asynchronous copy in flight (`on`), or of one fewer.
    pub fn mark_in_flight(&mut self, from: usize, to: usize, incoming: bool, on: bool) {
        let marks = if incoming { &mut self.incoming } else { &mut self.outgoing };
        if marks.is_empty() {
            marks.resize(self.buf.len() * 4, 0);
        }
        for m in &mut marks[from / 4..to.div_ceil(4)] {
            *m = if on { m.saturating_add(1) } else { m.saturating_sub(1) };
        }
    }

    /// Whether an access to bytes `[from, to)` (a store when `writes`) touches bytes in flight:
    /// `Some(true)` a copy's destination, `Some(false)` a bulk store's source that it would
    /// overwrite.
    pub fn in_flight(&self, from: usize, to: usize, writes: bool) -> Option<bool> {
        let any = |marks: &[u8]| !marks.is_empty() && marks[from / 4..to.div_ceil(4)].iter().any(|&m| m > 0);
        if any(&self.incoming) {
            Some(true)
        } else if writes && any(&self.outgoing) {
            Some(false)
        } else {
            None
        }
    }

    pub fn start(&self) -> usize {
        self.buf.as_ptr() as usize
    }

    /// Marks bytes `[from, to)` written; returns whether all of them had been written before.
    pub fn touch(&mut self, from: usize, to: usize, write: bool) -> bool {
        let mut all = true;
        for w in from / 4..to.div_ceil(4) {
            let (slot, bit) = (w / 64, 1u64 << (w % 64));
            all &= self.init[slot] & bit != 0;
            if write {
                self.init[slot] |= bit;
            }
        }
        all
    }
}

/// How reports name byte `from` of the shared array `name` of `bytes` bytes in `elem`-byte
/// elements, as a global buffer's place is named ([`element_at`]): `shared array `NAME` (LEN ×
/// ELEM-byte elements, BYTES bytes) at element I` where `from` starts an element, `… at byte
/// offset FROM` where it does not, and `(BYTES bytes)` alone where the elements are not known
/// (or `dynamic shared memory (…)`).
pub(super) fn shared_place(name: &str, bytes: usize, elem: usize, from: usize) -> String {
    let short = name.rsplit("::").next().unwrap_or(name);
    let name = if name.contains("::") { format!("shared array `{short}`") } else { short.to_string() };
    let at = element_at(from, elem);
    if elem > 0 && bytes.is_multiple_of(elem) {
        format!("{name} ({} × {elem}-byte elements, {bytes} bytes) at {at}", bytes / elem)
    } else {
        format!("{name} ({bytes} bytes) at {at}")
    }
}

/// One emulated CUDA thread's identity, and the way back to its coroutine.
pub(super) struct ThreadCtx<'a> {
    pub block: &'a BlockCtx<'a>,
    pub idx: Dim3,
    /// `threadIdx` as one number (x fastest).
    pub linear: u32,
    /// A fence since this thread's last atomic store: its next one releases.
    pub fenced: Cell<bool>,
    /// The words this thread's relaxed atomic loads and read-modify-writes observed: what was
    /// released into them is acquired at its next fence. Not at the atomic itself, whose check
    /// runs before it happens: the release of the block whose atomic it observes may come (on
    /// another worker) between the two; by the fence it has.
    pub observed: RefCell<Vec<usize>>,
    /// The words this thread's acquire loads read: what was released into them joins the
    /// block's knowledge at the thread's next global access, fence or barrier (after the load).
    pub acquired: RefCell<Vec<usize>>,
    /// The allocation this thread's last global access hit (memcheck's first guess).
    pub last_alloc: Cell<usize>,
    yielder: Cell<*const Yielder<Resume, Event>>,
    panic_message: RefCell<Option<String>>,
    /// Why the thread is unwinding out of its kernel, when the emulator made it ([`unwind`]);
    /// `None` for a panic of the kernel's own.
    unwinding: RefCell<Option<Outcome>>,
    /// Where the thread was when it noticed that the launch is past its budget.
    stopped_at: Cell<Option<Site>>,
    /// An address in the thread's stack near where it last suspended (0 before it first
    /// does): the scheduler prefetches around it before resuming the thread ([`prefetch_stack`]).
    suspended_at: Cell<usize>,
}

thread_local! {
    /// The emulated thread running on this OS thread (null between threads).
    static CURRENT: Cell<*const ThreadCtx<'static>> = const { Cell::new(std::ptr::null()) };
}

/// The emulated thread running on this OS thread, if any.
fn try_current() -> Option<&'static ThreadCtx<'static>> {
    let p = CURRENT.with(Cell::get);
    // SAFETY: as in `current`.
    (!p.is_null()).then(|| unsafe { &*p })
}

pub(super) fn current() -> &'static ThreadCtx<'static> {
    let p = CURRENT.with(Cell::get);
    assert!(!p.is_null(), "a device function was called outside an emulated kernel");
    // SAFETY: CURRENT is set by a thread's coroutine to its own ThreadCtx, which outlives
    // the coroutine, and cleared before the coroutine returns.
    unsafe { &*p }
}

impl ThreadCtx<'_> {
    fn enter(&self) {
        CURRENT.with(|c| c.set((self as *const Self).cast()));
    }

    /// Suspends this thread until the scheduler resumes it; unwinds if the block is torn down.
    fn suspend(&self, event: Event) -> u32 {
        // SAFETY: set when the coroutine started; the yielder lives as long as the coroutine.
        let yielder = unsafe { &*self.yielder.get() };
        let here = 0u8;
        self.suspended_at.set(std::ptr::addr_of!(here) as usize);
        let resume = yielder.suspend(event);
        self.enter();
        match resume {
            Resume::Value(v) => v,
            Resume::Abort => unwind(self, Outcome::Aborted),
        }
    }

    fn check_time(&self, site: Site) {
        let l = self.block.launch;
        if l.cancel.load(Ordering::Relaxed) || Instant::now() > l.deadline {
            self.stopped_at.set(Some(site));
            unwind(self, Outcome::Aborted);
        }
    }
}

/// The emulator's answer to the device layer.
struct EmuHooks;

impl Hooks for EmuHooks {
    fn thread_idx(&self) -> Dim3 {
        current().idx
    }
    fn block_idx(&self) -> Dim3 {
        current().block.idx
    }
    fn block_dim(&self) -> Dim3 {
        current().block.launch.block
    }
    fn grid_dim(&self) -> Dim3 {
        current().block.launch.grid
    }
    fn sync_threads(&self, site: Site) {
        let t = current();
        super::access::settle(t);
        t.suspend(Event::Barrier(site));
    }
    fn warp_op(&self, mask: u32, op: WarpOp, site: Site) -> u32 {
        current().suspend(Event::Warp { mask, op, site })
    }
    fn static_shared(&self, key: &'static str, bytes: usize, elem: usize, align: usize) -> *mut u8 {
        assert!(align <= 16, "shared arrays are aligned to at most 16 bytes");
        let block = current().block;
        let mut arrays = block.static_shared.borrow_mut();
        if let Some(a) = arrays.iter_mut().find(|a| std::ptr::eq(a.name, key)) {
            return a.buf.as_mut_ptr().cast();
        }
        let mut array = SharedArray::new(key, bytes, elem);
        let ptr = array.buf.as_mut_ptr().cast();
        arrays.push(array);
        // The GPU refuses the launch ("invalid argument") when the block's static arrays and its
        // dynamic shared memory together pass the limit; here, at the array that passes it.
        let held = arrays.iter().map(|a| a.bytes).sum::<usize>() + block.launch.dynamic_shared;
        if held > block.launch.shared_limit {
            drop(arrays);
            stop_with_report(
                EmuErrorKind::BadLaunch,
                format!(
                    "{held} bytes of shared memory ({} dynamic, the rest static, `{key}` the last); a block \
                     holds at most {} without cudaFuncSetAttribute (Backend::allow_dynamic_shared)",
                    block.launch.dynamic_shared, block.launch.shared_limit
                ),
            );
        }
        ptr
    }
    fn dynamic_shared(&self, elem: usize) -> (*mut u8, usize) {
        let block = current().block;
        let mut array = block.dynamic_shared.borrow_mut();
        array.elem = elem;
        (array.buf.as_mut_ptr().cast(), block.launch.dynamic_shared)
    }
    fn clock64(&self) -> u64 {
        current().block.launch.start.elapsed().as_nanos() as u64
    }
    fn poll(&self, site: Site) {
        let t = current();
        t.check_time(site);
        t.suspend(Event::Poll(site));
    }
    fn fault(&self, fault: Fault) -> ! {
        if let Fault::AtomicOutOfBounds { name, global, base, index, len, bytes, site } = fault {
            // Reported here, where the thread's buffers and shared arrays can name the address.
            let at = super::access::Element { base, index, len, bytes };
            super::access::atomic_out_of_bounds(current(), name, global, at, site)
        }
        unwind(current(), Outcome::Fault(fault))
    }
    fn global_access(&self, addr: usize, bytes: usize, access: Access, site: Site) {
        super::access::global(current(), addr, bytes, access, Path::Lsu, site);
    }
    fn shared_access(&self, addr: usize, bytes: usize, access: Access, site: Site) {
        super::access::shared(current(), addr, bytes, access, Path::Lsu, site);
    }
    fn atomic(&self, global: bool, addr: usize, bytes: usize, op: AtomicOp, site: Site) {
        if global {
            super::access::global(current(), addr, bytes, Access::AtomicRmw, Path::Atomic(op), site);
        } else {
            super::access::shared(current(), addr, bytes, Access::AtomicRmw, Path::Atomic(op), site);
        }
    }
    fn copy_access(&self, global: bool, addr: usize, bytes: usize, access: Access, path: Path, site: Site) {
        if global {
            super::access::global(current(), addr, bytes, access, path, site);
        } else {
            super::access::shared(current(), addr, bytes, access, path, site);
        }
    }
    fn fence(&self, site: Site) {
        super::access::fence(current(), site);
    }
    fn writable(&self, addr: usize) {
        // A parameter made outside an emulated thread (host code) names nothing to track.
        if let Some(t) = try_current() {
            super::access::writable(t, addr);
        }
    }
    fn device_launch(&self, launch: DeviceLaunch) -> u32 {
        let t = current();
        let grid = t.block.launch;
        super::nested::queue(t, grid.depth, &grid.children, grid.pending, launch)
    }
    fn async_copy(&self, copy: AsyncCopy, site: Site) {
        super::copies::issue(current(), copy, site);
    }
    fn async_commit(&self, bulk: bool) {
        super::copies::commit(current(), bulk);
    }
    fn async_wait(&self, bulk: bool, pending: u32, _site: Site) {
        super::copies::wait(current(), bulk, pending);
    }
    fn mbarrier(&self, word: usize, op: MbarrierOp, site: Site) -> bool {
        super::copies::mbarrier(current(), word, op, site)
    }
    fn named_barrier(&self, id: u32, count: u32, site: Site) {
        current().suspend(Event::Named { id, count, site });
    }
}

/// Installs the hooks into the kernels crate, and a panic hook that keeps a kernel's panic
/// message for the error report instead of printing it from a coroutine.
pub(super) fn install_hooks() {
    static ONCE: Once = Once::new();
    static HOOKS: &dyn Hooks = &EmuHooks;
    ONCE.call_once(|| {
        device::emu::install(&HOOKS);
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            let inside = CURRENT.with(|c| !c.get().is_null());
            if inside {
                let msg = info.payload_as_str().unwrap_or("panic").to_string();
                let loc = info
                    .location()
                    .map(|l| format!(" at {}", super::source_line(l.file(), l.line())))
                    .unwrap_or_default();
                *current().panic_message.borrow_mut() = Some(format!("{msg}{loc}"));
            } else {
                previous(info);
            }
        }));
    });
}

/// Coroutine stacks, reused across blocks and launches, and one worker's race-check state,
/// reused across the blocks it runs.
pub(super) struct StackPool(Vec<DefaultStack>, BlockRace);

static POOL: Mutex<Vec<DefaultStack>> = Mutex::new(Vec::new());
/// Race-check states kept between launches (each holds up to a few MiB of shadow pages).
const RACES_KEPT: usize = 8;
/// Race-check states, one per worker that ran, kept for their pages.
static RACES: Mutex<Vec<BlockRace>> = Mutex::new(Vec::new());

impl StackPool {
    pub fn take() -> Self {
        let mut global = POOL.lock().unwrap();
        let n = global.len().min(1024);
        let start = global.len() - n;
        let race = RACES.lock().unwrap().pop().unwrap_or_default();
        StackPool(global.drain(start..).collect(), race)
    }

    fn get(&mut self) -> DefaultStack {
        self.0.pop().unwrap_or_else(|| {
            DefaultStack::new(STACK_BYTES).expect("cannot allocate a coroutine stack for an emulated thread")
        })
    }

    pub fn give_back(self) {
        let mut race = self.1;
        race.trim();
        let mut races = RACES.lock().unwrap();
        if races.len() < RACES_KEPT {
            races.push(race);
        }
        drop(races);
        let mut global = POOL.lock().unwrap();
        let room = POOL_MAX.saturating_sub(global.len());
        global.extend(self.0.into_iter().take(room));
    }
}

#[derive(Clone, Copy, PartialEq)]
enum State {
    Ready,
    Barrier(Site),
    /// At named barrier `id` (`bar.sync id, count`).
    Named(u32),
    Warp,
    Done,
}

/// The threads waiting at one named barrier, the count they wait for, and where the first came.
#[derive(Clone, Default)]
struct NamedWait {
    count: u32,
    site: Option<Site>,
    threads: Vec<u32>,
}

/// Two barrier sites are the same call when they are the same `Location` (the compiler emits one
/// per call site); comparing addresses avoids comparing file names on every barrier.
fn same_site(a: Site, b: Site) -> bool {
    std::ptr::eq(a, b) || a == b
}

fn site(s: Site) -> String {
    super::site_line(s)
}

pub(super) fn dim(d: Dim3) -> String {
    if d.y == 0 && d.z == 0 { d.x.to_string() } else { format!("({},{},{})", d.x, d.y, d.z) }
}

/// The contexts of a block's threads, `threadIdx` x fastest.
fn thread_contexts<'a>(block: &'a BlockCtx<'a>) -> Vec<ThreadCtx<'a>> {
    let bd = block.launch.block;
    (0..bd.volume() as u32)
        .map(|t| ThreadCtx {
            block,
            linear: t,
            fenced: Cell::new(false),
            observed: RefCell::new(Vec::new()),
            acquired: RefCell::new(Vec::new()),
            last_alloc: Cell::new(0),
            idx: Dim3 { x: t % bd.x, y: t / bd.x % bd.y, z: t / (bd.x * bd.y) },
            yielder: Cell::new(std::ptr::null()),
            panic_message: RefCell::new(None),
            unwinding: RefCell::new(None),
            stopped_at: Cell::new(None),
            suspended_at: Cell::new(0),
        })
        .collect()
}

/// Runs every thread of block `idx` to completion, or reports why it cannot.
pub(super) fn run_block(launch: &LaunchCtx<'_>, idx: Dim3, stacks: &mut StackPool) -> Result<(), EmuError> {
    let bd = launch.block;
    let n = bd.volume() as usize;
    let mut race = std::mem::take(&mut stacks.1);
    race.reset(n);
    let g = launch.grid;
    let linear = u64::from(idx.x) + u64::from(g.x) * (u64::from(idx.y) + u64::from(g.y) * u64::from(idx.z));
    let block = BlockCtx {
        launch,
        idx,
        linear,
        static_shared: RefCell::new(Vec::new()),
        dynamic_shared: RefCell::new(SharedArray::new("dynamic shared memory", launch.dynamic_shared, 0)),
        race: RefCell::new(race),
        race_on: launch.checks.races_in(linear, g.volume()),
        counting: launch.block_counting(linear, n as u32),
        uninit: RefCell::new(None),
        releases: Cell::new(0),
        knows: RefCell::new(Known::default()),
        copies: RefCell::new(Default::default()),
    };
    let threads = thread_contexts(&block);

    let mut cos: Vec<Co> = Vec::with_capacity(n);
    for t in &threads {
        let stack = stacks.get();
        let body = launch.body;
        // SAFETY: the closure borrows `t` and `body`, which outlive every coroutine: each one
        // is driven to completion (aborted ones unwind to their end) before this function
        // returns, and none is leaked.
        let co = unsafe {
            Coroutine::with_stack_unchecked(stack, move |yielder: &Yielder<Resume, Event>, _first: Resume| {
                t.yielder.set(yielder);
                t.enter();
                let result = catch_unwind(AssertUnwindSafe(body));
                CURRENT.with(|c| c.set(std::ptr::null()));
                match result {
                    Ok(()) => Outcome::Done,
                    // Unwound by the emulator (`unwind`), or a panic of the kernel's own.
                    Err(_) => t.unwinding.borrow_mut().take().unwrap_or_else(|| {
                        Outcome::Panic(t.panic_message.borrow_mut().take().unwrap_or_else(|| "panic".into()))
                    }),
                }
            })
        };
        cos.push(co);
    }

    let mut sched = Scheduler::new(n);
    let result = sched
        .run(launch, &block, &threads, &mut cos)
        .and_then(|()| uninit_read(&block))
        .and_then(|()| super::copies::at_block_end(&block));

    // Tear down: resume every unfinished thread with Abort so that it unwinds to its end.
    for co in cos.iter_mut() {
        while !co.done() {
            let _ = co.resume(Resume::Abort);
        }
    }
    for co in cos {
        stacks.0.push(co.into_stack());
    }
    stacks.1 = block.race.into_inner();
    if let Some(c) = block.counting {
        launch.hand_in(c.into_inner());
    }

    result.map_err(|(kind, detail)| EmuError { kind, kernel: launch.kernel.to_string(), block: Some(idx), detail })
}

/// Asks the cache for the lines of a suspended thread's stack around `at` (where it suspended),
/// which it touches first when resumed: its saved registers and the frames it returns through.
/// A block's threads run in turn, so by a thread's turn the other threads' stacks have pushed
/// its lines out of L1 and L2 (a block of 1024 threads touches over a MiB of stacks per round);
/// asked one thread ahead, the lines arrive while the current thread runs.
fn prefetch_stack(at: usize) {
    #[cfg(target_arch = "x86_64")]
    if at != 0 {
        use std::arch::x86_64::{_MM_HINT_T0, _mm_prefetch};
        for line in (at.saturating_sub(PREFETCH_BELOW)..at + PREFETCH_ABOVE).step_by(LINE) {
            // SAFETY: SSE, which `prefetcht0` needs, is part of every x86-64 processor; a
            // prefetch reads nothing into the program and never faults, whatever the address.
            unsafe { _mm_prefetch::<_MM_HINT_T0>(line as *const i8) };
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = at;
}

struct Scheduler {
    n: usize,
    state: Vec<State>,
    input: Vec<u32>,
    queue: VecDeque<u32>,
    at_barrier: usize,
    warp_ops: Vec<Option<(u32, WarpOp, Site)>>,
    arrived: Vec<u32>,
    /// Where each thread last suspended (a barrier, warp operation or poll).
    last_site: Vec<Option<Site>>,
    /// The named barriers 1..=15 (`bar.sync id, count`), by id.
    named: Vec<NamedWait>,
}

type Failure = (EmuErrorKind, String);

impl Scheduler {
    fn new(n: usize) -> Self {
        Self {
            n,
            state: vec![State::Ready; n],
            input: vec![0; n],
            queue: (0..n as u32).collect(),
            at_barrier: 0,
            warp_ops: vec![None; n],
            arrived: vec![0; n.div_ceil(32)],
            last_site: vec![None; n],
            named: vec![NamedWait::default(); 16],
        }
    }

    fn run(
        &mut self,
        launch: &LaunchCtx<'_>,
        block: &BlockCtx<'_>,
        threads: &[ThreadCtx<'_>],
        cos: &mut [Co],
    ) -> Result<(), Failure> {
        let mut tick = 0u32;
        // Polls in a row since a thread last did anything else.
        let mut polls = 0usize;
        while let Some(t) = self.queue.pop_front() {
            let ti = t as usize;
            tick = tick.wrapping_add(1);
            if tick.is_multiple_of(CLOCK_EVERY)
                && (launch.cancel.load(Ordering::Relaxed) || Instant::now() > launch.deadline)
            {
                return Err(timeout(launch, threads[ti].idx, self.last_site[ti]));
            }
            if let Some(&next) = self.queue.front() {
                prefetch_stack(threads[next as usize].suspended_at.get());
            }
            match cos[ti].resume(Resume::Value(self.input[ti])) {
                CoroutineResult::Yield(Event::Poll(s)) => {
                    self.last_site[ti] = Some(s);
                    self.queue.push_back(t);
                    polls += 1;
                    if polls > self.queue.len() {
                        // Every thread of the block that can run polled once since anything
                        // else happened: it waits on another block. Give the processor to that
                        // block's worker, where more workers than processors run.
                        std::thread::yield_now();
                        polls = 0;
                    }
                    continue;
                }
                CoroutineResult::Yield(Event::Barrier(s)) => {
                    self.last_site[ti] = Some(s);
                    self.barrier(t, s, block)?;
                }
                CoroutineResult::Yield(Event::Named { id, count, site }) => {
                    self.last_site[ti] = Some(site);
                    self.named_barrier(t, (id, count), site, block)?;
                }
                CoroutineResult::Yield(Event::Warp { mask, op, site }) => {
                    self.last_site[ti] = Some(site);
                    self.warp(t, mask, op, site, block)?;
                }
                CoroutineResult::Return(Outcome::Done) => self.state[ti] = State::Done,
                CoroutineResult::Return(Outcome::Aborted) => {
                    self.state[ti] = State::Done;
                    let at = threads[ti].stopped_at.get().or(self.last_site[ti]);
                    return Err(timeout(launch, threads[ti].idx, at));
                }
                CoroutineResult::Return(Outcome::Fault(f)) => {
                    self.state[ti] = State::Done;
                    return Err(fault_failure(f, threads[ti].idx));
                }
                CoroutineResult::Return(Outcome::Report(kind, detail)) => {
                    self.state[ti] = State::Done;
                    return Err((kind, detail));
                }
                CoroutineResult::Return(Outcome::Panic(msg)) => {
                    self.state[ti] = State::Done;
                    return Err((EmuErrorKind::Panic, format!("thread {} panicked: {msg}", dim(threads[ti].idx))));
                }
            }
            polls = 0;
        }
        if self.state.iter().all(|s| *s == State::Done) { Ok(()) } else { Err(self.diagnose()) }
    }

    fn barrier(&mut self, t: u32, s: Site, block: &BlockCtx<'_>) -> Result<(), Failure> {
        self.state[t as usize] = State::Barrier(s);
        self.at_barrier += 1;
        if self.at_barrier < self.n {
            return Ok(());
        }
        // Everyone arrived. They must have arrived at the same barrier.
        let first = match self.state[0] {
            State::Barrier(s) => s,
            _ => unreachable!(),
        };
        if self.state.iter().any(|st| !matches!(st, State::Barrier(x) if same_site(x, first))) {
            let groups = self.barrier_groups();
            return Err((
                EmuErrorKind::BarrierDivergence,
                format!(
                    "threads wait at different sync_threads calls ({groups}): a barrier inside code \
                     that not all threads of the block take; CUDA requires the whole block at the same barrier"
                ),
            ));
        }
        uninit_read(block)?;
        block.race.borrow_mut().barrier();
        if let Some(c) = &block.counting {
            c.borrow_mut().barrier();
        }
        self.at_barrier = 0;
        for (i, st) in self.state.iter_mut().enumerate() {
            *st = State::Ready;
            self.input[i] = 0;
        }
        self.queue.extend(0..self.n as u32);
        Ok(())
    }

    /// Thread `t` arrived at named barrier `id` for `count` threads: checked, and released with
    /// the others when it is the `count`-th.
    fn named_barrier(&mut self, t: u32, (id, count): (u32, u32), s: Site, block: &BlockCtx<'_>) -> Result<(), Failure> {
        let at = site(s);
        if !(1..16).contains(&id) {
            return Err((
                EmuErrorKind::BarrierDivergence,
                format!(
                    "thread {t} waits at named barrier {id} at {at}: named barriers are 1 to 15 (0 is sync_threads's)"
                ),
            ));
        }
        if count == 0 || !count.is_multiple_of(32) || count as usize > self.n.next_multiple_of(32) {
            return Err((
                EmuErrorKind::BarrierDivergence,
                format!(
                    "thread {t} waits at named barrier {id} at {at} for {count} threads: the count is a multiple of \
                     32 (whole warps) and at most the block's {} threads",
                    self.n
                ),
            ));
        }
        let w = &mut self.named[id as usize];
        if !w.threads.is_empty() && w.count != count {
            let first = w.site.map(site).unwrap_or_default();
            return Err((
                EmuErrorKind::BarrierDivergence,
                format!(
                    "thread {t} waits at named barrier {id} at {at} for {count} threads, while threads {} wait at it \
                     at {first} for {}: every user of a named barrier gives the same count",
                    ranges(w.threads.iter().copied()),
                    w.count
                ),
            ));
        }
        if w.threads.is_empty() {
            (w.count, w.site) = (count, Some(s));
        }
        w.threads.push(t);
        self.state[t as usize] = State::Named(id);
        if w.threads.len() < count as usize {
            return Ok(());
        }
        let members = std::mem::take(&mut w.threads);
        if block.race_on {
            block.race.borrow_mut().named_barrier(&members);
        }
        for &m in &members {
            self.state[m as usize] = State::Ready;
            self.input[m as usize] = 0;
            self.queue.push_back(m);
        }
        Ok(())
    }

    fn barrier_groups(&self) -> String {
        let mut sites: Vec<Site> = Vec::new();
        for st in &self.state {
            if let State::Barrier(s) = st
                && !sites.iter().any(|x| same_site(x, s))
            {
                sites.push(s);
            }
        }
        sites
            .iter()
            .map(|s| {
                let who = ranges(
                    (0..self.n as u32)
                        .filter(|&i| matches!(self.state[i as usize], State::Barrier(x) if same_site(x, s))),
                );
                format!("threads {who} at {}", site(s))
            })
            .collect::<Vec<_>>()
            .join("; ")
    }

    fn warp(&mut self, t: u32, mask: u32, op: WarpOp, s: Site, block: &BlockCtx<'_>) -> Result<(), Failure> {
        let (w, lane) = ((t / 32) as usize, t % 32);
        let lanes_here = (self.n - w * 32).min(32) as u32;
        let exists = if lanes_here == 32 { u32::MAX } else { (1u32 << lanes_here) - 1 };
        if mask & (1 << lane) == 0 {
            return Err((
                EmuErrorKind::WarpDivergence,
                format!(
                    "thread {t} calls {} at {} with mask {mask:#010x}, which does not include its own lane {lane}",
                    op.name(),
                    site(s)
                ),
            ));
        }
        if mask & !exists != 0 {
            return Err((
                EmuErrorKind::WarpDivergence,
                format!(
                    "thread {t} calls {} at {} with mask {mask:#010x}, but warp {w} has only {lanes_here} lanes",
                    op.name(),
                    site(s)
                ),
            ));
        }
        self.state[t as usize] = State::Warp;
        self.warp_ops[t as usize] = Some((mask, op, s));
        self.arrived[w] |= 1 << lane;
        if self.arrived[w] & mask != mask {
            return Ok(());
        }
        // Every lane of the mask is here: they must be doing the same thing with the same mask.
        let base = w * 32;
        let mut ops = [None; 32];
        for l in (0..32).filter(|l| mask & (1 << l) != 0) {
            let (m, o, s2) = self.warp_ops[base + l].expect("arrived lane has an operation");
            if m != mask || !same_kind(&o, &op) {
                return Err((
                    EmuErrorKind::WarpDivergence,
                    format!(
                        "warp {w}: lane {lane} is at {} (mask {mask:#010x}) at {}, lane {l} at {} (mask {m:#010x}) at {}; \
                         the lanes of a mask must execute the same warp operation with the same mask",
                        op.name(),
                        site(s),
                        o.name(),
                        site(s2)
                    ),
                ));
            }
            ops[l] = Some(o);
        }
        let results = resolve(mask, &ops);
        block.race.borrow_mut().warp_sync(w, mask);
        if let Some(c) = &block.counting {
            c.borrow_mut().warp_op(&op, w, mask == exists);
        }
        for l in (0..32).filter(|l| mask & (1 << l) != 0) {
            let ti = base + l;
            self.input[ti] = results[l];
            self.state[ti] = State::Ready;
            self.warp_ops[ti] = None;
            self.queue.push_back(ti as u32);
        }
        self.arrived[w] &= !mask;
        Ok(())
    }

    /// Nothing can run but some threads have not finished: say who waits for whom.
    fn diagnose(&self) -> Failure {
        let done: Vec<u32> = (0..self.n as u32).filter(|&i| self.state[i as usize] == State::Done).collect();
        // A warp operation waiting for lanes that will never come.
        for (ti, slot) in self.warp_ops.iter().enumerate() {
            let Some((mask, op, s)) = slot else { continue };
            let w = ti / 32;
            let missing = mask & !self.arrived[w];
            if missing == 0 {
                continue;
            }
            let what = |l: u32| -> &'static str {
                match self.state[w * 32 + l as usize] {
                    State::Done => "exited",
                    State::Barrier(_) => "wait at sync_threads",
                    State::Named(_) => "wait at a named barrier",
                    _ => "wait at another warp operation",
                }
            };
            let missing_lanes: Vec<u32> = (0..32).filter(|l| missing & (1 << l) != 0).collect();
            return (
                EmuErrorKind::WarpDivergence,
                format!(
                    "{} at {} in warp {w} (mask {mask:#010x}) waits for lanes {} which {}; every lane of the mask \
                     must reach the same warp operation",
                    op.name(),
                    site(s),
                    ranges(missing_lanes.iter().copied()),
                    what(missing_lanes[0]),
                ),
            );
        }
        // A named barrier that fewer threads reach than it counts.
        if let Some((id, w)) = self.named.iter().enumerate().find(|(_, w)| !w.threads.is_empty()) {
            let at = w.site.map(site).unwrap_or_default();
            let others = (0..self.n as u32).filter(|i| !w.threads.contains(i));
            let elsewhere: Vec<u32> = others.filter(|&i| self.state[i as usize] != State::Done).collect();
            return (
                EmuErrorKind::BarrierDivergence,
                format!(
                    "named barrier {id} at {at} waits for {} threads; threads {} arrived, threads {} exited{}",
                    w.count,
                    ranges(w.threads.iter().copied()),
                    ranges(done.iter().copied()),
                    if elsewhere.is_empty() {
                        String::new()
                    } else {
                        format!(" and threads {} wait elsewhere", ranges(elsewhere))
                    }
                ),
            );
        }
        // Otherwise threads wait at a barrier that the others never reach.
        let waiting = self.n - done.len();
        (
            EmuErrorKind::BarrierDivergence,
            format!(
                "{}: reached by {waiting} of {} threads; threads {} exited without reaching it (an early return, \
                 or sync_threads inside a branch that not every thread takes)",
                self.barrier_groups(),
                self.n,
                ranges(done.iter().copied())
            ),
        )
    }
}

/// The load of memory nothing had written that this barrier interval (or the block) ended with:
/// no other thread wrote it meanwhile (that would have been reported as a race).
fn uninit_read(block: &BlockCtx<'_>) -> Result<(), Failure> {
    match block.uninit.borrow_mut().take() {
        Some(detail) => Err((EmuErrorKind::Uninitialized, detail)),
        None => Ok(()),
    }
}

/// A thread stopped because the launch is past its budget (or another block failed first):
/// which thread, and where it was (`None` if it never reached a barrier, warp operation or
/// atomic before).
fn timeout(launch: &LaunchCtx<'_>, thread: Dim3, at: Option<Site>) -> Failure {
    let at = at.map(|s| format!(" at {}", site(s))).unwrap_or_default();
    (
        EmuErrorKind::Timeout,
        format!(
            "thread {} stopped{at} after {:.1?}, past the launch's time budget (or another block failed first)",
            dim(thread),
            launch.start.elapsed()
        ),
    )
}

fn fault_failure(f: Fault, thread: Dim3) -> Failure {
    let t = dim(thread);
    match f {
        Fault::SharedOutOfBounds { index, len, site: s } => (
            EmuErrorKind::SharedOutOfBounds,
            format!("thread {t} accessed shared memory index {index} of an array of {len} at {}", site(s)),
        ),
        Fault::Misaligned { addr, align, site: s } => (
            EmuErrorKind::Misaligned,
            format!("thread {t} made a {align}-byte access at misaligned address {addr:#x} at {}", site(s)),
        ),
        Fault::IndexOutOfBounds { index, len, site: s } => (
            EmuErrorKind::GlobalOutOfBounds,
            format!("thread {t} used index {index} of a buffer of {len} elements at {}", site(s)),
        ),
        Fault::AtomicOutOfBounds { name, global, index, len, site: s, .. } => (
            if global { EmuErrorKind::GlobalOutOfBounds } else { EmuErrorKind::SharedOutOfBounds },
            format!("thread {t} made an {name} at index {index} of an array of {len} at {}", site(s)),
        ),
        Fault::Trap { reason, site: s } => (EmuErrorKind::Trap, format!("thread {t} trapped at {}: {reason}", site(s))),
    }
}

#[cfg(test)]
mod tests {
    use super::shared_place;

    /// A place that starts an element is named by the element, as a global buffer's is; one
    /// that does not, or in an array of unknown element size, by its byte offset.
    #[test]
    fn shared_places_count_elements_where_they_can() {
        assert_eq!(
            shared_place("k::TREE", 256, 4, 8),
            "shared array `TREE` (64 × 4-byte elements, 256 bytes) at element 2"
        );
        assert_eq!(
            shared_place("k::TREE", 256, 4, 6),
            "shared array `TREE` (64 × 4-byte elements, 256 bytes) at byte offset 6"
        );
        assert_eq!(
            shared_place("dynamic shared memory", 96, 0, 8),
            "dynamic shared memory (96 bytes) at byte offset 8"
        );
        assert_eq!(
            shared_place("dynamic shared memory", 96, 8, 16),
            "dynamic shared memory (12 × 8-byte elements, 96 bytes) at element 2"
        );
    }
}
