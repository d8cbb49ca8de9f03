//! Block-level sums: every thread of the block takes part, and each function holds block
//! barriers, so every thread of the block must call it (never from divergent code).
//!
//! * [`block_sum`] — registers in, one total out, through one shared slot per warp: the
//!   block reduction of `warp_shuffle` and every kernel after it (CUB's
//!   `BlockReduce<…, BLOCK_REDUCE_WARP_REDUCTIONS>`).
//! * [`BlockReduce`] and [`BlockScan`] — the same as objects over their shared slots, CUB's
//!   `BlockReduce` and `BlockScan` with their `TempStorage`, which check the block's shape and
//!   order their own reuse of the slots, so a kernel calls them without `unsafe`.
//! * [`block_arg_reduce`] — [`block_reduce`] for a value and its index (argmin, argmax).
//! * [`is_last_block`], [`is_last_of`] — the last-block protocol of a one-launch reduction: which block finishes
//!   the job (CUDA's *threadFenceReduction* sample).
//! * [`SHARED_TREE_SLOTS`] — the size of the one-slot-per-thread shared arrays of the
//!   chapter-5 kernels, whose trees are written out in their own files (`smem`,
//!   `smem_unroll4`, `smem_unroll4_dyn`).

use crate::device::WARP_SIZE;
use crate::device::atomic::{atomic_add_u32, thread_fence};
use crate::device::global::GlobalMut;
use crate::device::shared::Shared;
use crate::device::thread::{block_dim_x, grid_dim_x, lane_id, sync_threads, thread_idx_x, warp_id};
use crate::types::{Arg, Element, Extreme, Operator, Sum};
use crate::warp::{warp_arg_reduce, warp_scan_inclusive};

/// Warps in the largest block (1024 / 32): the shared slots [`block_sum`] needs, one `i32`
/// per warp. A kernel declares its slots as `static_shared!(NAME: [i32; BLOCK_SUM_SLOTS])`.
pub const BLOCK_SUM_SLOTS: usize = 32;

/// Bytes of static shared memory of [`BLOCK_SUM_SLOTS`] `i32` slots (128): what a kernel whose
/// only shared array is those slots reports (`ptxas -v`: "128 bytes smem").
pub const BLOCK_SUM_SMEM_BYTES: u32 = (BLOCK_SUM_SLOTS * core::mem::size_of::<i32>()) as u32;

/// The wrapping sum of `value` over the whole block, complete in **thread 0**: `warp_sum`
/// reduces each warp in registers, lane 0 of each warp parks its warp's sum in
/// `slots[warp]`, one block barrier, then warp 0 reduces the slots with `warp_sum` again.
///
/// ```text
///  registers   t0 t1 … t31 | t32 … t63 | …         one value per thread
///  warp_sum    warp 0 → lane 0 | warp 1 → lane 0 | …
///  shared      slots[0]  slots[1]  …  slots[W-1]    bar.sync
///  warp 0      lane w = slots[w] (0 past W) → warp_sum → thread 0
/// ```
///
/// `warp_sum` must leave the warp's sum at least in lane 0
/// ([`warp_sum_shfl`](super::warp::warp_sum_shfl), or `redux.sync`, which leaves it in
/// every lane).
///
/// # Safety
/// Every thread of the block calls it (it holds a block barrier), with the block a multiple
/// of 32 threads and at most `32 × slots.len()` of them; no thread calls it while another
/// thread of the block may still read `slots` from an earlier use (a barrier in between).
#[inline(always)]
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
pub unsafe fn block_sum(value: i32, slots: Shared<i32>, warp_sum: impl Fn(i32) -> i32) -> i32 {
    let warp_total = warp_sum(value);
    if lane_id() == 0 {
        // SAFETY: warp_id < blockDim/32 <= slots.len(); each warp writes its own slot.
        unsafe { slots.write(warp_id() as usize, warp_total) };
    }
    sync_threads();
    let mut total = 0;
    if warp_id() == 0 {
        let warps = block_dim_x() / WARP_SIZE;
        let lane = lane_id();
        // SAFETY: lane < warps <= slots.len(); the barrier above ordered the writes.
        let parked = if lane < warps { unsafe { slots.read(lane as usize) } } else { 0 };
        total = warp_sum(parked);
    }
    total
}

/// Bytes of static shared memory of [`BLOCK_SUM_SLOTS`] slots of `T`: 128 for 32-bit types,
/// 256 for 64-bit ones (what `ptxas -v` reports for a generic kernel whose only shared array
/// is the slots of [`block_reduce`]).
pub const fn block_reduce_smem_bytes<T>() -> u32 {
    (BLOCK_SUM_SLOTS * core::mem::size_of::<T>()) as u32
}

/// [`block_sum`] for any element type and operator: `O::combine` over the whole block,
/// complete in **thread 0**. Each warp reduces with `O::warp_reduce` (shuffles), lane 0 of each
/// warp parks its warp's result in `slots[warp]`, one block barrier, then warp 0 reduces the
/// slots (lanes past the last warp hold `O::IDENTITY`).
///
/// # Safety
/// As for [`block_sum`]: every thread of the block calls it, the block is a multiple of 32
/// threads and at most `32 × slots.len()`, and no thread may still read `slots` from an
/// earlier use.
#[inline(always)]
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
pub unsafe fn block_reduce<T: Element, O: Operator<T>>(value: T, slots: Shared<T>) -> T {
    let warp_total = O::warp_reduce(value);
    if lane_id() == 0 {
        // SAFETY: warp_id < blockDim/32 <= slots.len(); each warp writes its own slot.
        unsafe { slots.write(warp_id() as usize, warp_total) };
    }
    sync_threads();
    let mut total = O::IDENTITY;
    if warp_id() == 0 {
        let warps = block_dim_x() / WARP_SIZE;
        let lane = lane_id();
        // SAFETY: lane < warps <= slots.len(); the barrier above ordered the writes.
        let parked = if lane < warps { unsafe { slots.read(lane as usize) } } else { O::IDENTITY };
        total = O::warp_reduce(parked);
    }
    total
}

/// [`block_reduce`] for a value and its index: [`Arg::combine`] over the whole block, complete
/// in **thread 0** (the extreme with the lowest index). Each warp reduces with
/// [`warp_arg_reduce`], lane 0 of each warp parks its winner in `values[warp]` and
/// `indices[warp]`, one block barrier, then warp 0 reduces the slots (lanes past the last warp
/// hold [`Arg::identity`]).
///
/// # Safety
/// As for [`block_reduce`], for both slot arrays: every thread of the block calls it, the block
/// is a multiple of 32 threads and at most `32 × len` (the shorter array's length), and no
/// thread may still read the slots from an earlier use.
#[inline(always)]
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
pub unsafe fn block_arg_reduce<T: Element, O: Extreme<T>>(
    arg: Arg<T>,
    values: Shared<T>,
    indices: Shared<u32>,
) -> Arg<T> {
    let warp_best = warp_arg_reduce::<T, O>(arg);
    if lane_id() == 0 {
        let w = warp_id() as usize;
        // SAFETY: warp_id < blockDim/32 <= the slots' length; each warp writes its own slots.
        unsafe {
            values.write(w, warp_best.value);
            indices.write(w, warp_best.index);
        }
    }
    sync_threads();
    let mut best = Arg::identity::<O>();
    if warp_id() == 0 {
        let warps = block_dim_x() / WARP_SIZE;
        let lane = lane_id();
        if lane < warps {
            // SAFETY: lane < warps <= the slots' length; the barrier above ordered the writes.
            best = unsafe { Arg { value: values.read(lane as usize), index: indices.read(lane as usize) } };
        }
        best = warp_arg_reduce::<T, O>(best);
    }
    best
}

/// The last-block protocol of a one-launch reduction: is this block the last of the grid to
/// finish? Thread 0 fences (release: the partials its block published before the call become
/// visible first) and draws a ticket from `*g_ticket` (`atom.add`); the block that draws
/// `gridDim.x − 1` fences again (acquire: every other block's partials are visible to it) and
/// knows every partial is in. Thread 0 writes the answer to `flag[0]`, a block barrier hands it
/// to the whole block: `true` in every thread of the last block, `false` in every other, so a
/// barrier inside `if is_last_block(…)` is reached by the whole block or none of it. The
/// caller's last block resets `*g_ticket` to 0 when it is done (every block has drawn its
/// ticket by then). CUDA C: `__threadfence()` + `atomicInc`, the *threadFenceReduction* sample;
/// `single_pass` teaches it step by step.
///
/// # Safety
/// Every thread of the block calls it; thread 0 has written its block's partials before the
/// call; `g_ticket` is one aligned `u32` that only this launch's blocks touch, 0 at launch;
/// `flag` holds one element that nothing else uses.
#[inline(always)]
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
pub unsafe fn is_last_block(g_ticket: GlobalMut<u32>, flag: Shared<u32>) -> bool {
    // SAFETY: forwarded; every block of the grid draws from the one ticket.
    unsafe { is_last_of(g_ticket, grid_dim_x(), flag) }
}

/// [`is_last_block`] among `blocks` blocks that share the ticket `*g_ticket` (the blocks of one
/// segment, in a grid that serves several): `true` in the block that draws ticket `blocks − 1`.
///
/// # Safety
/// As [`is_last_block`], with exactly `blocks` blocks of the launch drawing from `g_ticket`
/// (each once), and `blocks ≥ 1`.
#[inline(always)]
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
pub unsafe fn is_last_of(g_ticket: GlobalMut<u32>, blocks: u32, flag: Shared<u32>) -> bool {
    if thread_idx_x() == 0 {
        thread_fence(); // release: the block's partials before the ticket
        // SAFETY: g_ticket is one aligned u32 (the caller's promise).
        let ticket = unsafe { atomic_add_u32(g_ticket, 1) };
        let last = ticket == blocks - 1;
        if last {
            thread_fence(); // acquire: every other block's partials before our reads
        }
        // SAFETY: index 0 of a 1-element array; read by the others only after the barrier.
        unsafe { flag.write(0, last as u32) };
    }
    sync_threads();
    // SAFETY: written by thread 0 before the barrier; not written again in this launch.
    unsafe { flag.read(0) != 0 }
}

/// Slots a kernel's shared array needs for its shared-memory tree at any block size: one `i32` per
/// thread of the largest block (1024).
pub const SHARED_TREE_SLOTS: usize = 1024;

/// Bytes of a static shared array of [`SHARED_TREE_SLOTS`] `i32` (4096, 4 KiB).
pub const SHARED_TREE_SMEM_BYTES: u32 = (SHARED_TREE_SLOTS * core::mem::size_of::<i32>()) as u32;

/// Shared slots that [`BlockReduce`] and [`BlockScan`] need for any block: one per warp of the
/// largest block (1024 / 32).
pub const BLOCK_SLOTS: usize = BLOCK_SUM_SLOTS;

/// The shared memory of a block collective ([`BlockReduce`], [`BlockScan`]): [`BLOCK_SLOTS`]
/// elements, one per warp of the largest block; CUB's `TempStorage`. Made by
/// [`block_slots!`](crate::block_slots), which declares the array in the kernel.
#[derive(Clone, Copy)]
pub struct BlockSlots<T: Copy> {
    slots: Shared<T>,
}

impl<T: Copy> BlockSlots<T> {
    /// The slots over `shared`.
    ///
    /// # Safety
    /// `shared` holds at least [`BLOCK_SLOTS`] elements, and nothing else writes them while a
    /// collective uses them.
    #[inline(always)]
    pub unsafe fn from_shared(shared: Shared<T>) -> Self {
        BlockSlots { slots: shared }
    }
}

/// Declares the shared slots of a block collective in the kernel and evaluates to its
/// [`BlockSlots`] (CUB: `__shared__ typename BlockReduce<T, THREADS>::TempStorage temp;`):
///
/// ```text
/// let total = BlockReduce::new(block_slots!(DOT_SLOTS: f32)).sum(mine);
/// ```
///
/// `NAME` names the PTX `.shared` array: unique in the kernel, once per array, at the top level
/// of a kernel body (as [`static_shared!`](crate::static_shared)).
#[macro_export]
macro_rules! block_slots {
    ($name:ident : $ty:ty) => {{
        let shared = $crate::static_shared!($name: [$ty; $crate::block::BLOCK_SLOTS]);
        // SAFETY: the array was just declared with BLOCK_SLOTS elements, for this use alone.
        unsafe { $crate::block::BlockSlots::from_shared(shared) }
    }};
}

/// Traps (the launch fails; the emulator reports the kernel, block, thread and line) unless the
/// block is a whole number of warps: what the block collectives need of their launch (the
/// slots hold one value per warp of the largest block).
#[inline(always)]
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
fn check_whole_warps() {
    if !block_dim_x().is_multiple_of(WARP_SIZE) {
        crate::device::trap("a block collective needs a block of whole warps (a multiple of 32 threads)");
    }
}

/// The combine of one value per thread over the whole block: CUB's
/// `cub::BlockReduce<T, THREADS, BLOCK_REDUCE_WARP_REDUCTIONS>`, over its slots
/// ([`block_slots!`](crate::block_slots)).
///
/// ```text
/// if let Some(total) = BlockReduce::new(block_slots!(DOT_SLOTS: f32)).sum(mine) {
///     // thread 0 of the block
/// }
/// ```
///
/// Its methods are safe: they check the launch's shape (a whole number of warps; otherwise the
/// kernel traps) and begin with a block barrier, so that slots reused by a second call are not
/// overwritten while the first call's last reads are pending. Every thread of the block must
/// call them, as for any block barrier ([`sync_threads`]: the emulator reports a thread that
/// does not).
#[derive(Clone, Copy)]
pub struct BlockReduce<T: Copy> {
    slots: Shared<T>,
}

impl<T: Element> BlockReduce<T> {
    /// The collective over `slots`.
    #[inline(always)]
    pub fn new(slots: BlockSlots<T>) -> Self {
        BlockReduce { slots: slots.slots }
    }

    /// `O::combine` of every thread's `value` (CUB `Reduce(value, op)`): `Some(total)` in thread
    /// 0 of the block, `None` in the others.
    #[inline(always)]
    #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
    pub fn reduce<O: Operator<T>>(self, value: T) -> Option<T> {
        check_whole_warps();
        sync_threads();
        // SAFETY: whole warps (checked), at most 1024 threads, so at most BLOCK_SLOTS warps; the
        // barrier above ordered any earlier use's reads of the slots before this use's writes.
        let total = unsafe { block_reduce::<T, O>(value, self.slots) };
        (thread_idx_x() == 0).then_some(total)
    }

    /// The sum of every thread's `value` (CUB `Sum(value)`; integers wrap): `Some(total)` in
    /// thread 0, `None` in the others.
    #[inline(always)]
    #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
    pub fn sum(self, value: T) -> Option<T> {
        self.reduce::<Sum>(value)
    }
}

/// The scan of one value per thread over the whole block, in thread order: CUB's
/// `cub::BlockScan<T, THREADS, BLOCK_SCAN_WARP_SCANS>` over its slots
/// ([`block_slots!`](crate::block_slots)). Each warp scans in registers
/// ([`warp_scan_inclusive`]), the warps' totals meet in the slots, and each thread adds the
/// totals of the warps before its own. Safe as [`BlockReduce`] is, on the same terms.
#[derive(Clone, Copy)]
pub struct BlockScan<T: Copy> {
    slots: Shared<T>,
}

impl<T: Element> BlockScan<T> {
    /// The collective over `slots`.
    #[inline(always)]
    pub fn new(slots: BlockSlots<T>) -> Self {
        BlockScan { slots: slots.slots }
    }

    /// The scan's two parts for this thread: the combine of the threads of earlier warps, and
    /// this thread's inclusive scan within its warp; and the block's total.
    #[inline(always)]
    #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
    fn parts<O: Operator<T>>(self, value: T) -> (T, T, T) {
        check_whole_warps();
        let warps = (block_dim_x() / WARP_SIZE) as usize;
        let (warp, lane) = (warp_id() as usize, lane_id());
        let in_warp = warp_scan_inclusive::<T, O>(value);
        sync_threads();
        if lane == WARP_SIZE - 1 {
            // SAFETY: warp < warps <= BLOCK_SLOTS (whole warps, at most 1024 threads); one writer
            // per slot, and the barrier above ordered an earlier use's reads before it.
            unsafe { self.slots.write(warp, in_warp) };
        }
        sync_threads();
        let (mut before, mut total) = (O::IDENTITY, O::IDENTITY);
        for w in 0..warps {
            // SAFETY: w < warps <= BLOCK_SLOTS; the barrier above ordered the writes.
            let t = unsafe { self.slots.read(w) };
            if w < warp {
                before = O::combine(before, t);
            }
            total = O::combine(total, t);
        }
        (before, in_warp, total)
    }

    /// Thread `t` gets `O::combine` of the values of threads `0..=t` (CUB `InclusiveScan`), and
    /// every thread the block's total.
    #[inline(always)]
    #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
    pub fn inclusive<O: Operator<T>>(self, value: T) -> (T, T) {
        let (before, in_warp, total) = self.parts::<O>(value);
        (O::combine(before, in_warp), total)
    }

    /// Thread `t` gets `O::combine` of the values of threads `0..t` (`O::IDENTITY` for thread 0;
    /// CUB `ExclusiveScan`), and every thread the block's total.
    #[inline(always)]
    #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
    pub fn exclusive<O: Operator<T>>(self, value: T) -> (T, T) {
        let (before, in_warp, total) = self.parts::<O>(value);
        // The lane below's inclusive scan is this lane's exclusive one; lane 0 has none.
        let below = crate::device::warp::shfl_up_sync(crate::device::FULL_MASK, in_warp, 1);
        let in_warp_before = if lane_id() == 0 { O::IDENTITY } else { below };
        (O::combine(before, in_warp_before), total)
    }
}
