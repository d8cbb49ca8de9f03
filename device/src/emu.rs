//! The seam between the kernels and the CPU emulator (host builds only).
//!
//! On the host, every device-layer function forwards to the [`Hooks`] that the emulator in
//! the runtime crate (`reduce-scan-runtime`) installs with [`install`] before it runs a kernel. The
//! emulator knows which emulated CUDA thread is running on the calling OS thread and answers
//! for it: its indices, its block's shared memory, a barrier that suspends it until the whole
//! block arrives, a warp operation that suspends it until the lanes named in the mask
//! arrive.
//!
//! Kernels never call this module directly; it is public so that the emulator can
//! implement it.

use core::panic::Location;
use core::sync::atomic::{AtomicPtr, Ordering};

/// A source location in kernel code (a barrier, a warp operation, a shared access).
pub type Site = &'static Location<'static>;

/// Three-component index or extent, like CUDA's `dim3`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Dim3 {
    /// The x component.
    pub x: u32,
    /// The y component.
    pub y: u32,
    /// The z component.
    pub z: u32,
}

impl Dim3 {
    /// `(x, 1, 1)`.
    pub const fn x(x: u32) -> Self {
        Self { x, y: 1, z: 1 }
    }

    /// `x * y * z`, the number of threads (or blocks) this extent names.
    pub const fn volume(self) -> u64 {
        self.x as u64 * self.y as u64 * self.z as u64
    }
}

/// The four shuffle modes of PTX `shfl.sync`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ShflMode {
    /// Read from lane `b` of the segment (`__shfl_sync`).
    Idx,
    /// Read from `lane - b` (`__shfl_up_sync`).
    Up,
    /// Read from `lane + b` (`__shfl_down_sync`).
    Down,
    /// Read from `lane ^ b` (`__shfl_xor_sync`, the butterfly).
    Bfly,
}

/// The warp votes of PTX `vote.sync`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum VoteMode {
    /// A bit per lane of the mask whose predicate is true.
    Ballot,
    /// 1 when the predicate is true on every lane of the mask.
    All,
    /// 1 when the predicate is true on some lane of the mask.
    Any,
}

/// The operations of PTX `redux.sync` (sm_80+) on 32-bit integers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReduxOp {
    /// Wrapping sum.
    Add,
    /// Minimum as signed integers.
    MinS32,
    /// Maximum as signed integers.
    MaxS32,
    /// Minimum as unsigned integers.
    MinU32,
    /// Maximum as unsigned integers.
    MaxU32,
    /// Bitwise and.
    And,
    /// Bitwise or.
    Or,
    /// Bitwise exclusive or.
    Xor,
}

/// One warp-collective operation, as a lane hands it to the emulator.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WarpOp {
    /// `shfl.sync.mode.b32 d, value, b, c, mask`.
    Shfl {
        /// Which shuffle.
        mode: ShflMode,
        /// This lane's 32-bit value.
        value: u32,
        /// PTX operand `b`: source lane, delta or xor mask.
        b: u32,
        /// PTX operand `c`: `((32 - width) << 8) | clamp`.
        c: u32,
    },
    /// `bar.warp.sync mask` (`__syncwarp`).
    Sync,
    /// `vote.sync.mode`.
    Vote {
        /// Which vote.
        mode: VoteMode,
        /// This lane's predicate.
        pred: bool,
    },
    /// `redux.sync.op`.
    Redux {
        /// Which reduction.
        op: ReduxOp,
        /// This lane's value.
        value: u32,
    },
}

impl WarpOp {
    /// The CUDA C name of the operation, for error reports.
    pub fn name(&self) -> &'static str {
        match self {
            WarpOp::Shfl { mode: ShflMode::Idx, .. } => "__shfl_sync",
            WarpOp::Shfl { mode: ShflMode::Up, .. } => "__shfl_up_sync",
            WarpOp::Shfl { mode: ShflMode::Down, .. } => "__shfl_down_sync",
            WarpOp::Shfl { mode: ShflMode::Bfly, .. } => "__shfl_xor_sync",
            WarpOp::Sync => "__syncwarp",
            WarpOp::Vote { mode: VoteMode::Ballot, .. } => "__ballot_sync",
            WarpOp::Vote { mode: VoteMode::All, .. } => "__all_sync",
            WarpOp::Vote { mode: VoteMode::Any, .. } => "__any_sync",
            WarpOp::Redux { .. } => "redux.sync",
        }
    }
}

/// Which path of the GPU a memory access takes, as the profiler counts them apart: the
/// emulator checks an access the same way on every path, and counts it where ncu counts it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Path {
    /// An ordinary load or store (SASS `LDG`, `STG`, `LDS`, `STS`, …): ncu's global and shared
    /// requests.
    Lsu,
    /// `cp.async` (SASS `LDGSTS`): ncu counts its global side apart (`op_ldgsts`), not as a
    /// global load, and its shared side in no shared-store counter.
    AsyncCopy,
    /// A bulk copy through the copy engine (`cp.async.bulk`, the tensor memory accelerator):
    /// no load or store request at all; ncu counts the bytes it moves.
    Bulk,
    /// An `mbarrier` operation (`init`, `arrive`, `try_wait`: SASS `SYNCS.*`): checked as an
    /// access of its shared word, counted in no shared counter (ncu gives `SYNCS` no shared
    /// request or wavefront: its per-instruction counts of `lookback_warpspec`, issue #37).
    Barrier,
    /// An atomic read-modify-write (`atom`, `red`; SASS `ATOMG`/`REDG`, `ATOMS`): ncu counts its
    /// global requests and sectors apart from the loads and stores (`op_atom`, `op_red`), and its
    /// shared instructions and wavefronts apart (`op_shared_atom`).
    Atomic(AtomicOp),
    /// An L2 prefetch (`prefetch.global.L2`, SASS `CCTL.E.PF2`): its address is checked as a
    /// global access's is; it moves no data, so nothing else is (no race, no uninitialized
    /// read, no counter: ncu counts it in no load or store request).
    Prefetch,
}

/// An atomic read-modify-write as the device layer hands it to the emulator
/// ([`Hooks::atomic`]): what it is called, for reports, and what the profiler's counting needs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct AtomicOp {
    /// The CUDA C name (`atomicAdd`, `atomicCAS`, …).
    pub name: &'static str,
    /// `atom` (the old value comes back) or `red` (it does not: PTX `red`, SASS `REDG`, which ncu
    /// counts under `op_red`).
    pub returns: bool,
    /// In shared memory the GPU makes it a compare-and-swap (`ATOMS.CAS`, or the `ATOMS.CAST`
    /// loop of a float add and of a 64-bit add, min, max, and, or, xor): twice the wavefronts of
    /// a plain access of its width (ncu on the H200, `docs/counters.md`).
    pub compare: bool,
}

/// What a memory access does, as the emulator's checks see it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Access {
    /// A plain load: scalar, 128-bit, volatile, read-only (`.nc`) or cache-hinted.
    Read,
    /// A plain store.
    Write,
    /// An atomic load (`ld.relaxed`, or `ld.acquire` when `acquire`).
    AtomicLoad {
        /// Acquire semantics: later accesses of the thread see what the releasing thread wrote.
        acquire: bool,
    },
    /// An atomic store (`st.relaxed`, or `st.release` when `release`).
    AtomicStore {
        /// Release semantics: earlier accesses of the thread are visible to an acquire that
        /// reads this value.
        release: bool,
    },
    /// An atomic read-modify-write (`atom`, `red`), relaxed.
    AtomicRmw,
}

impl Access {
    /// A store, atomic or not (it initialises memory; it conflicts with any other access).
    pub fn writes(self) -> bool {
        matches!(self, Access::Write | Access::AtomicStore { .. } | Access::AtomicRmw)
    }

    /// A load, atomic or not (it needs initialised memory).
    pub fn reads(self) -> bool {
        matches!(self, Access::Read | Access::AtomicLoad { .. } | Access::AtomicRmw)
    }

    /// An atomic access (atomics never race with each other).
    pub fn is_atomic(self) -> bool {
        !matches!(self, Access::Read | Access::Write)
    }
}

/// A fault a kernel raises through the device layer; the emulator reports it with the
/// kernel's name and the block and thread that raised it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fault {
    /// A shared-memory index at or past the array's length.
    SharedOutOfBounds {
        /// The index used.
        index: usize,
        /// The array's length in elements.
        len: usize,
        /// Where.
        site: Site,
    },
    /// A vector access whose address is not a multiple of its width (the GPU raises
    /// `CUDA_ERROR_MISALIGNED_ADDRESS`).
    Misaligned {
        /// The address used.
        addr: usize,
        /// The alignment the access needs, in bytes.
        align: usize,
        /// Where.
        site: Site,
    },
    /// An index at or past the length of a checked buffer ([`slice`](super::slice)).
    IndexOutOfBounds {
        /// The index used.
        index: usize,
        /// The buffer's length in elements.
        len: usize,
        /// Where.
        site: Site,
    },
    /// An atomic at an index at or past the length of the shared array or checked buffer it
    /// was made on (`Shared::atomic_*`, `AtomicSlice`): nothing is touched.
    AtomicOutOfBounds {
        /// The CUDA C name of the atomic.
        name: &'static str,
        /// A global buffer (else a shared array).
        global: bool,
        /// The host address of element 0 of the array or buffer.
        base: usize,
        /// The index used.
        index: usize,
        /// The length in elements.
        len: usize,
        /// Bytes per element.
        bytes: usize,
        /// Where.
        site: Site,
    },
    /// [`trap`](super::trap) was called.
    Trap {
        /// Why, in the kernel's words.
        reason: &'static str,
        /// Where.
        site: Site,
    },
}

/// How an asynchronous copy ([`Hooks::async_copy`]) completes: what the issuing thread (or
/// another) must wait on before the bytes may be used.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CopyDone {
    /// `cp.async` (global → shared, 16 bytes): it joins the issuing thread's open copy group
    /// (`cp.async.commit_group` closes it) and lands at that thread's `cp.async.wait_group`
    /// that covers the group.
    Group,
    /// `cp.async.bulk` global → shared: its bytes land on the `mbarrier` at this shared address
    /// (the emulator's host address of the barrier word), at a wait on that barrier.
    Mbarrier(usize),
    /// `cp.async.bulk` shared → global: it joins the issuing thread's open bulk group
    /// (`cp.async.bulk.commit_group`) and reads its shared bytes at that thread's
    /// `cp.async.bulk.wait_group.read` that covers the group.
    BulkGroup,
}

/// An asynchronous copy, as the device layer hands it to the emulator once both sides have
/// been checked (bounds, alignment, initialised source, races, at the issuing thread): the data
/// moves later, when the copy completes ([`CopyDone`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AsyncCopy {
    /// The destination's host address (shared memory, or global for [`CopyDone::BulkGroup`]).
    pub dst: usize,
    /// The source's host address (global memory, or shared for [`CopyDone::BulkGroup`]).
    pub src: usize,
    /// Bytes moved.
    pub bytes: usize,
    /// How it completes.
    pub done: CopyDone,
}

/// An operation on an `mbarrier` word ([`Hooks::mbarrier`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MbarrierOp {
    /// `mbarrier.init`: `count` arrivals per phase, phase 0.
    Init {
        /// Arrivals that complete a phase.
        count: u32,
    },
    /// `mbarrier.arrive` (`tx` = 0) or `mbarrier.arrive.expect_tx` (`tx` more bytes expected
    /// in the current phase): one arrival, with release semantics.
    Arrive {
        /// Bytes the current phase now waits for besides its arrivals.
        tx: u32,
    },
    /// `mbarrier.try_wait.parity`: has the phase of this parity completed? (acquire semantics
    /// when it has). The copies that complete on the barrier land first.
    TryWait {
        /// 0 or 1.
        parity: u32,
    },
}

/// A device-side launch, as the emulator receives it ([`Hooks::device_launch`]).
#[derive(Clone, Copy, Debug)]
pub struct DeviceLaunch {
    /// The child kernel's name.
    pub kernel: &'static str,
    /// The stream it goes to.
    pub stream: super::launch::DeviceStream,
    /// Its grid.
    pub grid: Dim3,
    /// Its block.
    pub block: Dim3,
    /// Its arguments (and kernel), `params_len` bytes the emulator copies before the call
    /// returns.
    pub params: *const u8,
    /// How many bytes `params` holds.
    pub params_len: usize,
    /// The kernel's parameters' sizes, in order: on the GPU the launching thread stores each
    /// into the device runtime's parameter buffer, at an offset aligned to its size
    /// ([`param_offset`](super::launch::param_offset)).
    pub param_sizes: &'static [usize],
    /// Runs one emulated thread of the child from the emulator's copy of `params`.
    pub run: unsafe fn(*const u8),
    /// Where the launch was made.
    pub site: Site,
}

/// What the emulator provides to the device layer.
///
/// Every method answers for the emulated CUDA thread running on the calling OS thread.
/// Calling one outside an emulated kernel is a bug the implementation reports by
/// panicking.
pub trait Hooks: Sync {
    /// `threadIdx`.
    fn thread_idx(&self) -> Dim3;
    /// `blockIdx`.
    fn block_idx(&self) -> Dim3;
    /// `blockDim`.
    fn block_dim(&self) -> Dim3;
    /// `gridDim`.
    fn grid_dim(&self) -> Dim3;
    /// `__syncthreads()` at `site`: returns once every thread of the block has arrived.
    fn sync_threads(&self, site: Site);
    /// A warp-collective operation over the lanes of `mask`: returns once they have all
    /// arrived, with this lane's result (0 for [`WarpOp::Sync`]).
    fn warp_op(&self, mask: u32, op: WarpOp, site: Site) -> u32;
    /// The block's statically sized shared array named `key` (`bytes` long, of `elem`-byte
    /// elements, aligned to `align`); every thread of the block gets the same one.
    fn static_shared(&self, key: &'static str, bytes: usize, elem: usize, align: usize) -> *mut u8;
    /// The block's dynamic shared memory and its size in bytes (set at launch), viewed as
    /// `elem`-byte elements (how reports count its places).
    fn dynamic_shared(&self, elem: usize) -> (*mut u8, usize);
    /// A per-thread cycle counter (`clock64()`); the emulator counts nanoseconds.
    fn clock64(&self) -> u64;
    /// Called by atomics and spin loops: lets other emulated threads run, and stops a
    /// kernel that is past its time budget.
    fn poll(&self, site: Site);
    /// Reports `fault` and unwinds out of the kernel.
    fn fault(&self, fault: Fault) -> !;
    /// A global-memory access of `bytes` bytes at `addr`, about to happen at `site`. Returns
    /// when it may happen; otherwise reports why (out of bounds, use after free, misaligned,
    /// uninitialised, a race) and unwinds out of the kernel before any memory is touched.
    fn global_access(&self, addr: usize, bytes: usize, access: Access, site: Site);
    /// A shared-memory access (in bounds: [`Shared`](super::shared::Shared) checked the index),
    /// about to happen at `site`: checked for races and uninitialised reads as
    /// [`global_access`](Self::global_access) is.
    fn shared_access(&self, addr: usize, bytes: usize, access: Access, site: Site);
    /// One side of an asynchronous copy (`path` is [`Path::AsyncCopy`] or [`Path::Bulk`]): a
    /// global (`global`) or shared access, checked as [`global_access`](Self::global_access)
    /// and [`shared_access`](Self::shared_access) check it, and counted where the profiler counts
    /// the copy's path.
    fn copy_access(&self, global: bool, addr: usize, bytes: usize, access: Access, path: Path, site: Site) {
        let _ = path;
        if global {
            self.global_access(addr, bytes, access, site)
        } else {
            self.shared_access(addr, bytes, access, site)
        }
    }
    /// The launch passes `addr` as a [`GlobalMut`](super::global::GlobalMut) parameter: the
    /// allocation holding it is memory this kernel may write. (A kernel stores only through
    /// such parameters, so the race checks skip every other allocation: without a store, no
    /// access races.) Called when a parameter is made, before the kernel's body runs.
    fn writable(&self, addr: usize);
    /// `__threadfence()` at `site`: orders this thread's earlier accesses before its later
    /// ones for every thread of the device (a release and an acquire, for the race checks).
    fn fence(&self, site: Site);
    /// A device-side launch by this thread ([`launch`](super::launch::launch)): queued to run
    /// as its stream says; returns `cudaSuccess` (0). A launch that cannot be made (too deep, a
    /// bad shape) is reported as a fault instead, and unwinds out of the kernel.
    fn device_launch(&self, launch: DeviceLaunch) -> u32;
    /// An asynchronous copy issued by this thread, both sides checked: the bytes move when it
    /// completes ([`CopyDone`]); until then its destination is *in flight* (any access to it is
    /// reported), and for a bulk store its shared source may not be written.
    fn async_copy(&self, copy: AsyncCopy, site: Site);
    /// `cp.async.commit_group` (`bulk` false) or `cp.async.bulk.commit_group` (`bulk` true):
    /// closes this thread's open group of such copies.
    fn async_commit(&self, bulk: bool);
    /// `cp.async.wait_group pending` (`bulk` false: the copies of every committed group but the
    /// newest `pending` land) or `cp.async.bulk.wait_group.read pending` (`bulk` true: those
    /// groups' bulk stores read their shared bytes, and write global memory).
    fn async_wait(&self, bulk: bool, pending: u32, site: Site);
    /// An operation on the `mbarrier` whose word is at host address `word` (in this block's
    /// shared memory, already bounds-checked); returns whether a [`MbarrierOp::TryWait`] found
    /// its phase complete (false for the others).
    fn mbarrier(&self, word: usize, op: MbarrierOp, site: Site) -> bool;
    /// An atomic read-modify-write `op` of the `bytes` bytes at `addr`, in global memory
    /// (`global`) or in this block's shared memory (in bounds: the device layer checked the
    /// index), about to happen at `site`: checked as [`global_access`](Self::global_access) and
    /// [`shared_access`](Self::shared_access) check an access (bounds, alignment, a race with a
    /// plain access; two atomics never race), and counted where the profiler counts atomics.
    fn atomic(&self, global: bool, addr: usize, bytes: usize, op: AtomicOp, site: Site) {
        let _ = op;
        if global {
            self.global_access(addr, bytes, Access::AtomicRmw, site)
        } else {
            self.shared_access(addr, bytes, Access::AtomicRmw, site)
        }
    }
    /// `bar.sync id, count`: a named barrier among `count` threads of the block (`id` 1 to 15;
    /// 0 is `sync_threads`'s): returns once `count` threads have arrived at barrier `id`.
    fn named_barrier(&self, id: u32, count: u32, site: Site);
}

static HOOKS: AtomicPtr<&'static dyn Hooks> = AtomicPtr::new(core::ptr::null_mut());

/// Installs the emulator's hooks. The emulator calls this once, before the first kernel.
pub fn install(hooks: &'static &'static dyn Hooks) {
    HOOKS.store(hooks as *const _ as *mut _, Ordering::Release);
}

/// The installed hooks.
///
/// # Panics
/// When no emulator is installed: a kernel was called directly, not through the
/// emulator's launcher.
#[inline]
pub fn hooks() -> &'static dyn Hooks {
    try_hooks().expect("a kernel ran on the host outside the emulator: launch it through reduce_scan::Backend")
}

/// The installed emulator, if any (host code that makes kernel parameters, such as a GPU
/// launch's, runs without one).
#[inline]
pub fn try_hooks() -> Option<&'static dyn Hooks> {
    let p = HOOKS.load(Ordering::Acquire);
    // SAFETY: a non-null `p` came from `install`, which only takes `&'static &'static dyn Hooks`.
    (!p.is_null()).then(|| unsafe { *p })
}
