use crate::collective::block::{BLOCK_SUM_SLOTS, BLOCK_SUM_SMEM_BYTES, block_reduce, block_sum};
use crate::collective::thread::{LOADS_PER_TRIP, thread_reduce_v128, thread_sum_v4};
use crate::collective::warp::warp_sum_shfl;
use crate::device::atomic::{atomic_add_u32, load_relaxed_u32, load_relaxed_u64, store_relaxed_u32, thread_fence};
use crate::device::global::{Global, GlobalMut};
use crate::device::shared::Shared;
use crate::device::thread::{block_dim_x, block_idx_x, grid_dim_x, sync_threads, thread_idx_x};
use crate::types::{Element, Operator};
use crate::{kernel, static_shared, typed_kernel};

/// Static shared memory of [`single_pass`] per block: the block reduction's slots (one
/// `i32` per warp of the largest block, 128 bytes), then the "last block" flag, a 4-byte
/// array that `static_shared!` aligns to 16 bytes.
pub const SINGLE_PASS_SHARED_BYTES: u32 = BLOCK_SUM_SMEM_BYTES + 16;

/// Steps 2–3 of [`single_pass`]: thread 0 publishes the block's `total` to
/// `g_partials[blockIdx.x]`, fences (release), draws a ticket; the holder of the last ticket
/// fences again (acquire); after a block barrier every thread learns whether its block is
/// the last one (the same answer in the whole block).
///
/// # Safety
/// Called by every thread of the block; `g_partials` holds `gridDim.x` elements and
/// `g_ticket` is one aligned `u32` that only this launch's blocks touch.
#[inline(always)]
unsafe fn publish_and_draw<T: Copy>(
    g_partials: GlobalMut<T>,
    g_ticket: GlobalMut<u32>,
    total: T,
    last_flag: Shared<u32>,
) -> bool {
    if thread_idx_x() == 0 {
        // SAFETY: g_partials holds gridDim.x elements; g_ticket is one aligned u32.
        let ticket = unsafe {
            g_partials.write(block_idx_x() as usize, total);
            thread_fence(); // release: the partial before the ticket
            atomic_add_u32(g_ticket, 1)
        };
        let last = ticket == grid_dim_x() - 1;
        if last {
            thread_fence(); // acquire: every other block's partial before our reads
        }
        // SAFETY: index 0 of a 1-element array; read by others only after the barrier.
        unsafe { last_flag.write(0, last as u32) };
    }
    sync_threads();
    // SAFETY: written by thread 0 before the barrier; not written again in this launch.
    unsafe { last_flag.read(0) != 0 }
}

kernel! {
    /// Single-pass reduction: `vector_loads` per block, then the **last block to finish**
    /// adds the blocks' partial sums on the device. One launch leaves the final sum in
    /// `*g_out`.
    ///
    /// # Concept
    /// **Blocks cannot wait for each other, but the last one can know it is last.** There
    /// is no grid-wide barrier in an ordinary launch, yet an atomic counter gives every
    /// block a ticket in the order they finish; the block that draws ticket `gridDim - 1`
    /// knows every other block has published its partial, and finishes the job. Memory
    /// fences make "published" precise (CUDA C: `__threadfence()` + `atomicInc`, the
    /// *threadFenceReduction* sample).
    ///
    /// # Previous problem → fix
    /// `vector_loads` leaves one partial per block: someone must add them, either the host
    /// (a copy back and a CPU loop) or a second launch (what CUB does: a one-block kernel
    /// after the main one). Each costs a round trip of launch latency, which dominates when
    /// `n` is small (a 4 MiB input is read in about a microsecond; a launch costs several).
    /// Here the last block does the second pass in the same launch, and it resets the
    /// ticket to 0 on its way out, so back-to-back launches need no host-side reset.
    ///
    /// # Execution
    /// 1. Every block: `collective::thread::thread_sum_v4` (head, windows of 128-bit loads,
    ///    tail) and the warp-shuffle block reduction (`collective::block::block_sum`); thread
    ///    0 holds the block's sum.
    /// 2. Thread 0 **publishes**: a plain store of the sum to `g_partials[b]`; then
    ///    `thread_fence()` (`fence.acq_rel.gpu`); then `atomic_add(g_ticket, 1)`
    ///    (`atom.relaxed.gpu.add`), which returns its ticket. The fence followed by the
    ///    atomic is PTX's *release pattern*: any thread that observes this atomic's write
    ///    (or a later one in the ticket's chain of atomic adds) with an acquire also sees
    ///    the partial. Thread 0 writes "last = (ticket == gridDim - 1)" to shared memory.
    /// 3. Block barrier: every thread reads the flag (the same value in the whole block, so
    ///    the barrier inside the `if` below is reached by all threads of the block or none).
    /// 4. The last block only: its thread 0 had followed its atomic with another
    ///    `thread_fence()` — the *acquire pattern* (strong read, then fence). Its atomic read
    ///    the value left by every other block's atomic, so every partial happens-before that
    ///    fence; the block barrier of step 3 carries the ordering to the block's other
    ///    threads. Each thread then reads partials `tid, tid + blockDim, …` (four at a time)
    ///    with `ld.relaxed.gpu` (strong loads: never a stale line of the SM's L1), adds them,
    ///    and the block reduction gives thread 0 the total, which it writes to `*g_out`; it
    ///    then stores 0 to `*g_ticket` (every block has already taken its ticket, and the
    ///    next launch starts after this one ends).
    ///
    /// ```text
    ///  block 0      Σ → g_partials[0] ; fence ; atom.add ticket → 2
    ///  block 1      Σ → g_partials[1] ; fence ; atom.add ticket → 0
    ///  block 2      Σ → g_partials[2] ; fence ; atom.add ticket → 1
    ///  block 3      Σ → g_partials[3] ; fence ; atom.add ticket → 3 = gridDim-1: last
    ///                 fence ; bar.sync ; Σ g_partials[0..4] → *g_out ; *g_ticket = 0
    /// ```
    ///
    /// # Launch
    /// Grid `min(ceil(n / (16*blockDim)), SMs × resident blocks per SM, 2^29 / blockDim)`, block a power of
    /// two in 32..=1024, 144 bytes of static shared memory (32 warp slots and the flag,
    /// [`SINGLE_PASS_SHARED_BYTES`]). Reads
    /// its input.
    ///
    /// # Preconditions
    /// `g_idata` holds `n ≥ 1` elements (any `i32` alignment), `g_partials` `gridDim.x`
    /// elements, `*g_ticket` is 0 at launch (a zeroed allocation; every completed launch
    /// leaves it 0 again), `g_out` one element. Launches using the same ticket run one after
    /// the other (the same stream). A launch that is aborted midway leaves the ticket
    /// nonzero: zero it before the next launch. `gridDim.x × blockDim.x ≤ 2^29` ([`MAX_GRID_THREADS`](crate::collective::thread::MAX_GRID_THREADS)).
    ///
    /// # Safety
    /// The pointers are valid device memory of those lengths; no thread writes `g_idata`
    /// while the kernel runs. Every thread reaches every barrier: the only barriers after
    /// the first sit in code whose condition is uniform over the block.
    ///
    /// # Measured
    /// NVIDIA H100 80GB HBM3, block 512, median of 20 timed runs, every run checked (`docs/measurements/2026-11-25-h100/twins_2e24.csv`, `twins_2e28.csv`, commit e032fa9):
    ///
    /// | n | time | GB/s | × previous | × CUDA C twin |
    /// |---|---|---|---|---|
    /// | 2^24 | 27.22 µs | 2465.8 | 0.93 (`vector_loads`) | — |
    /// | 2^28 | 348.8 µs | 3078.0 | 0.99 (`vector_loads`) | — |
    pub unsafe fn single_pass(
        g_idata: Global<i32>,
        g_partials: GlobalMut<i32>,
        g_ticket: GlobalMut<u32>,
        g_out: GlobalMut<i32>,
        n: u32,
    ) {
        let slots = static_shared!(SINGLE_PASS_SLOTS: [i32; BLOCK_SUM_SLOTS]);
        let last_flag = static_shared!(SINGLE_PASS_LAST: [u32; 1]);
        let tid = thread_idx_x();

        // SAFETY: g_idata holds n elements that nobody writes during the kernel.
        let sum = unsafe { thread_sum_v4::<LOADS_PER_TRIP>(g_idata, n) };
        // SAFETY: every thread gets here; the block is a multiple of 32, at most 1024.
        let block_total = unsafe { block_sum(sum, slots, warp_sum_shfl) };

        // SAFETY: every thread calls it; g_partials holds gridDim.x elements, g_ticket one u32.
        if unsafe { publish_and_draw(g_partials, g_ticket, block_total, last_flag) } {
            let grid = grid_dim_x() as usize;
            let block = block_dim_x() as usize;
            // Four independent strong loads per step (not one dependent chain): the partials
            // sit in L2, and this runs once, on the critical path of the launch.
            let read = |i: usize| -> i32 {
                // SAFETY: i < gridDim.x; every block's store to g_partials[i] happens-before
                // this load (step 4 of the docs).
                unsafe { load_relaxed_u32(g_partials.offset(i).cast::<u32>().as_const()) as i32 }
            };
            let mut partial = 0i32;
            let mut i = tid as usize;
            while i + 3 * block < grid {
                let (a, b, c, d) = (read(i), read(i + block), read(i + 2 * block), read(i + 3 * block));
                partial = partial.wrapping_add(a).wrapping_add(b).wrapping_add(c).wrapping_add(d);
                i += 4 * block;
            }
            while i < grid {
                partial = partial.wrapping_add(read(i));
                i += block;
            }
            // SAFETY: the whole block is here (the condition is uniform); warp 0's reads of
            // `slots` in the first block_sum came before the barrier above.
            let total = unsafe { block_sum(partial, slots, warp_sum_shfl) };
            if tid == 0 {
                // SAFETY: g_out holds one element; every block has drawn its ticket, and no
                // other thread of this launch touches g_ticket again.
                unsafe {
                    g_out.write(0, total);
                    store_relaxed_u32(g_ticket, 0);
                }
            }
        }
    }
}

/// Static shared memory of `single_pass__{type}_{op}` per block: one `T` per warp of the
/// largest block, then the 16-byte-aligned "last block" flag.
pub const fn single_pass_shared_bytes<T>() -> u32 {
    crate::collective::block::block_reduce_smem_bytes::<T>() + 16
}

typed_kernel!(single_pass = single_pass_generic(
    g_idata: Global<T>,
    g_partials: GlobalMut<T>,
    g_ticket: GlobalMut<u32>,
    g_out: GlobalMut<T>,
    n: u32
));

/// A partial another block published, read with a strong (`ld.relaxed.gpu`) load of its 32 or
/// 64 bits: never a stale line of this SM's L1.
///
/// # Safety
/// `ptr` is valid and aligned, and its writer's store happens-before this load.
#[inline(always)]
unsafe fn load_partial<T: Element>(ptr: Global<T>) -> T {
    if core::mem::size_of::<T>() == 4 {
        // SAFETY: forwarded; a 32-bit element is one aligned u32.
        T::from_halves([unsafe { load_relaxed_u32(ptr.cast()) }, 0])
    } else {
        // SAFETY: forwarded; a 64-bit element is one aligned u64.
        let w = unsafe { load_relaxed_u64(ptr.cast()) };
        T::from_halves([w as u32, (w >> 32) as u32])
    }
}

/// [`single_pass`] for any element type and operator: one launch, the last block to finish
/// combines the blocks' partials on the device. Instantiated by `typed_kernel!` as
/// `single_pass__{type}_{op}` for every type × operator but `i32` × sum (which is
/// [`single_pass`] itself).
///
/// # Concept
/// **The last-block finish does not care what it combines.** The ticket protocol (publish,
/// fence, draw a ticket; the block holding the last ticket fences again and reads every
/// partial) orders memory, not values: the same code finishes a sum, a minimum or a maximum
/// of any type, with `O::combine` where [`single_pass`] adds.
///
/// # Previous problem → fix
/// [`single_pass`] adds `i32`s. Here the partials are `T`, read back with a strong load of
/// their width (`load_partial`: `ld.relaxed.gpu.b32` or `.b64`), and the last block starts
/// from `O::IDENTITY`, not 0. A float sum's partials are added in a fixed order (thread `t`
/// takes partials `t, t + blockDim, …`, then the block tree), so unlike
/// [`atomic_accumulate_generic`](super::atomic_accumulate_generic) it gives the same bits on
/// every run of the same grid.
///
/// # Execution
/// 1. As [`vector_loads_generic`](super::vector_loads_generic): each thread combines its
///    share with 128-bit loads, the block with its warp steps; thread 0 holds the result.
/// 2. Thread 0 publishes it to `g_partials[b]`, fences, draws a ticket; the holder of ticket
///    `gridDim - 1` fences again (acquire) and raises the block's "last" flag. Barrier.
/// 3. The last block: each thread combines partials `tid, tid + blockDim, …` from
///    `O::IDENTITY`; the block combines those; thread 0 writes `*g_out` and puts the ticket
///    back to 0.
///
/// # Launch
/// As [`single_pass`], with 8 elements per trip for 64-bit types and
/// [`single_pass_shared_bytes`]`::<T>()` bytes of static shared memory.
///
/// # Preconditions
/// As [`single_pass`]: `g_idata` holds `n ≥ 1` `T`-aligned elements, `g_partials`
/// `gridDim.x`, `g_out` one; `*g_ticket` is 0 at launch; launches sharing a ticket run one
/// after the other. `gridDim.x × blockDim.x ≤ 2^29` ([`MAX_GRID_THREADS`](crate::collective::thread::MAX_GRID_THREADS)).
///
/// # Safety
/// As [`single_pass`]: valid pointers, no writes to `g_idata` during the kernel; every thread
/// reaches every barrier (the last block's condition is uniform over the block).
///
/// # Measured
/// Not measured on its own: `benches/types.rs` times it as `reduce/single_pass/{type}/{op}/{n}`.
#[inline(always)]
pub unsafe fn single_pass_generic<T: Element, O: Operator<T>>(
    g_idata: Global<T>,
    g_partials: GlobalMut<T>,
    g_ticket: GlobalMut<u32>,
    g_out: GlobalMut<T>,
    n: u32,
) {
    let slots = static_shared!(SINGLE_PASS_TYPED_SLOTS: [T; BLOCK_SUM_SLOTS]);
    let last_flag = static_shared!(SINGLE_PASS_TYPED_LAST: [u32; 1]);
    let tid = thread_idx_x();
    // SAFETY: g_idata holds n elements that nobody writes during the kernel.
    let mine = unsafe { thread_reduce_v128::<T, O>(g_idata, n) };
    // SAFETY: every thread gets here; the block is a multiple of 32, at most 1024.
    let total = unsafe { block_reduce::<T, O>(mine, slots) };
    // SAFETY: every thread calls it; g_partials holds gridDim.x elements, g_ticket one u32.
    if unsafe { publish_and_draw(g_partials, g_ticket, total, last_flag) } {
        let (grid, block) = (grid_dim_x() as usize, block_dim_x() as usize);
        let mut acc = O::IDENTITY;
        let mut i = tid as usize;
        while i < grid {
            // SAFETY: i < gridDim.x; every block's store to g_partials[i] happens-before this
            // load (step 2).
            acc = O::combine(acc, unsafe { load_partial(g_partials.offset(i).as_const()) });
            i += block;
        }
        // SAFETY: the whole block is here (the condition is uniform); the first block_reduce's
        // reads of `slots` came before the barrier above.
        let all = unsafe { block_reduce::<T, O>(acc, slots) };
        if tid == 0 {
            // SAFETY: g_out holds one element; every block has drawn its ticket.
            unsafe {
                g_out.write(0, all);
                store_relaxed_u32(g_ticket, 0);
            }
        }
    }
}
