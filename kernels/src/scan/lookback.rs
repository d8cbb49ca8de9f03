use super::index::{
    FLAG_AGGREGATE, FLAG_INVALID, FLAG_PREFIX, blocked_chunk, blocked_is_conflict_free, pack_status, status_flag,
    status_value, striped_chunk,
};
use crate::device::atomic::{load_relaxed_u64, store_relaxed_u64};
use crate::device::clock::nanosleep;
use crate::device::global::l2_evict_first_policy;
use crate::device::global::{Global, GlobalMut};
use crate::device::shared::{Shared, copy_async_commit, copy_async_wait};
use crate::device::thread::{block_dim_x, block_idx_x, sync_threads, thread_idx_x};
use crate::device::warp::{all_sync, ballot_sync, shfl_up_sync, shfl_xor_sync};
use crate::device::{FULL_MASK, WARP_SIZE, trap};
use crate::{kernel, static_shared};

// ---------------------------------------------------------------------------------------
// Tuning: every knob of the decoupled look-back scan is here.

/// Threads per block of `lookback` (a multiple of 32, at most 1024).
pub const LOOKBACK_THREADS: u32 = 256;
/// Elements per thread of `lookback`: an odd multiple of 4 (one 16-byte chunk per 4; an odd
/// number of chunks keeps the blocked shared-memory reads free of bank conflicts,
/// `index::blocked_is_conflict_free`).
pub const LOOKBACK_ITEMS: u32 = 36;
/// Elements per tile of `lookback`.
pub const LOOKBACK_TILE: u32 = LOOKBACK_THREADS * LOOKBACK_ITEMS;

/// The other (threads, items per thread) shapes compiled into the PTX for tuning, each as a
/// kernel `lookback_{threads}x{items}` with the same code as `lookback`. The host registers
/// one tuning variant per entry (`reduce_scan::scan`; a unit test keeps the two lists equal);
/// `scripts/gpu/scan_table.sh` times them all at 1e8 and 2^28, and the winner becomes
/// [`LOOKBACK_THREADS`] × [`LOOKBACK_ITEMS`].
///
/// What bounds a shape: the tile lives in static shared memory, at most 48 KiB per block
/// (`threads × items × 4` bytes plus 36 control words); the SM holds as many blocks as
/// its shared memory (228 KiB on sm_90, less 1 KiB reserved per block), its registers and
/// its 2048 threads allow, and those resident tiles are what keeps DRAM busy while tiles
/// wait in their look-back. Items per thread stay odd multiples of 4 (see
/// [`LOOKBACK_ITEMS`]).
pub const LOOKBACK_TUNING: [(u32, u32); 4] = [(128, 44), (128, 60), (192, 44), (256, 28)];

/// Cache hints of `lookback` and of its ablations, a bit set. Each changes one instruction: the
/// output stores ([`HINT_STREAM_STORE`]: `st.global.cs`) or the input copies
/// ([`HINT_EVICT_FIRST`]: an L2 evict-first policy; [`HINT_PREFETCH_256`]: `.L2::256B`).
///
/// Measured (H100, n = 2^28, inclusive, medians of 10 runs in 3 interleaved rounds,
/// `docs/measurements/2026-11-22-h100/lookback_hints.csv`): no hints 781.4–783.4 µs; streaming
/// stores alone 782.8–783.8; evict-first copies alone 788.4–790.5; 256-byte prefetch alone
/// 786.5–788.6; **streaming stores with evict-first copies 773.6–775.6** (1.0% faster, the
/// rounds do not overlap). Neither half helps alone: the output lines leave L2 first only when
/// the input lines are marked too, so the pair is what `lookback` uses.
pub const LOOKBACK_HINTS: u32 = HINT_STREAM_STORE | HINT_EVICT_FIRST;
/// Nanoseconds a look-back lane sleeps between two polls of a predecessor whose status is
/// still invalid (`nanosleep`; 0 spins without sleeping). `lookback_spin` (0), `lookback_sleep64` and
/// `lookback_sleep1024` are its ablations.
///
/// Measured (H100, n = 2^28, inclusive, medians of 10 runs in 3 interleaved rounds,
/// `docs/measurements/2026-11-22-h100/sleep_2e28.csv`, when `lookback` still spun): spin
/// 773.8–774.3 µs; sleep 64 ns 769.5–772.2; **256 ns 770.2–770.7**; 1024 ns 766.5–770.5. At
/// 10^8 (2 rounds, `sleep_1e8.csv`): spin 287.5–288.1 µs, 256 ns 284.0–287.4. Sleeping is
/// about 0.5% faster: polling is a small part of the gap to a copy, not the main one. Of the
/// sleeps, 256 ns is the shortest whose rounds all beat the spin's, so it delays a tile that
/// waits least (a lane notices a publication at most about 0.5 µs late).
pub const LOOKBACK_SLEEP_NS: u32 = 256;
/// No cache hints (the ablation `lookback_no_hints`).
pub const HINTS_NONE: u32 = 0;
/// Output stores with `st.global.cs` (evict first, written once).
pub const HINT_STREAM_STORE: u32 = 1;
/// Input copies under an L2 evict-first policy.
pub const HINT_EVICT_FIRST: u32 = 2;
/// Input copies that fetch whole 256-byte blocks into L2.
pub const HINT_PREFETCH_256: u32 = 4;

/// Shared words after the tile: one total per warp (at most 32 warps), the tile's exclusive
/// prefix, padding to a 16-byte multiple.
pub(super) const CTRL_WORDS: usize = 36;
pub(super) const PREFIX_SLOT: usize = 32;

/// Shared words of a `lookback` kernel with tiles of `tile` elements.
pub(super) const fn shared_words(tile: usize) -> usize {
    tile + CTRL_WORDS
}

/// Static shared memory per block of the `lookback` kernel compiled for `threads` threads
/// of `items` elements each (the tuning shapes): the tile plus 36 control words, in `i32`s.
pub const fn lookback_shared_bytes(threads: u32, items: u32) -> u32 {
    (shared_words(threads as usize * items as usize) * core::mem::size_of::<i32>()) as u32
}

/// Static shared memory of [`lookback`] per block: `(LOOKBACK_TILE + 36) × 4` bytes.
pub const LOOKBACK_SHARED_BYTES: u32 = lookback_shared_bytes(LOOKBACK_THREADS, LOOKBACK_ITEMS);

/// Inclusive scan of `x` over the 32 lanes of a full warp (Hillis–Steele with
/// `__shfl_up_sync`: 5 steps, every lane ends with the sum of lanes `0..=lane`).
#[inline(always)]
fn warp_inclusive_scan(mut x: i32, lane: u32) -> i32 {
    let mut d = 1;
    while d < WARP_SIZE {
        let y = shfl_up_sync(FULL_MASK, x, d);
        if lane >= d {
            x = x.wrapping_add(y);
        }
        d *= 2;
    }
    x
}

/// Sum of `x` over the 32 lanes of a full warp, returned to every lane (butterfly).
#[inline(always)]
fn warp_sum(mut x: i32) -> i32 {
    let mut m = 16;
    while m > 0 {
        x = x.wrapping_add(shfl_xor_sync(FULL_MASK, x, m));
        m /= 2;
    }
    x
}

/// The decoupled look-back of tile `tile > 0`, by one full warp: the sum of every element
/// before the tile. Lane `l` examines tile `end - 32 + l` of a window of 32 predecessors
/// (lane 31 the nearest), starting with `end = tile`:
///
/// 1. Every lane loads its predecessor's status word (relaxed 64-bit atomic load);
///    predecessors before tile 0 count as an inclusive prefix of 0. Until no lane of the
///    window sees [`FLAG_INVALID`] (`__all_sync`), the lanes that saw it load again (the
///    others keep their word: a valid word stays valid).
/// 2. `__ballot_sync(flag == PREFIX)`: if some lane holds an inclusive prefix, the highest
///    such lane is the nearest; the answer is its value plus the aggregates of the lanes
///    above it (a warp sum of the values from that lane on). Done.
/// 3. Otherwise every lane holds an aggregate: add all 32 (warp sum), slide the window 32
///    tiles back, repeat.
///
/// Every lane returns the same value. A lane that saw [`FLAG_INVALID`] sleeps `SLEEP_NS`
/// nanoseconds before it loads again (0: no sleep, a tight spin; see [`LOOKBACK_SLEEP_NS`]).
///
/// # Safety
/// `status` holds at least `tile` words; called by all 32 lanes of one warp with the same
/// `tile` and `epoch`.
#[inline(always)]
unsafe fn look_back<const SLEEP_NS: u32>(status: Global<u64>, tile: usize, epoch: u32, lane: u32) -> i32 {
    let mut exclusive = 0i32;
    let mut end = tile;
    loop {
        let pred = end as isize - WARP_SIZE as isize + lane as isize;
        let load = || {
            if pred >= 0 {
                // SAFETY: 0 <= pred < tile <= the status array's length.
                unsafe { load_relaxed_u64(status.offset(pred as usize)) }
            } else {
                pack_status(epoch, FLAG_PREFIX, 0)
            }
        };
        let mut word = load();
        while !all_sync(FULL_MASK, status_flag(word, epoch) != FLAG_INVALID) {
            if status_flag(word, epoch) == FLAG_INVALID {
                if SLEEP_NS > 0 {
                    nanosleep(SLEEP_NS);
                }
                word = load();
            }
        }
        let flag = status_flag(word, epoch);
        let value = status_value(word);
        let prefixes = ballot_sync(FULL_MASK, flag == FLAG_PREFIX);
        if prefixes != 0 {
            let nearest = 31 - prefixes.leading_zeros();
            return exclusive.wrapping_add(warp_sum(if lane >= nearest { value } else { 0 }));
        }
        exclusive = exclusive.wrapping_add(warp_sum(value));
        end -= WARP_SIZE as usize;
    }
}

/// The four elements `p .. p + 4` where they exist (`< n`), zeros past the end: a chunk of
/// the last, partial tile.
///
/// # Safety
/// `input` holds `n` elements.
#[inline(always)]
pub(super) unsafe fn load_chunk_guarded(input: Global<i32>, p: usize, n: usize) -> [i32; 4] {
    let at = |i: usize| {
        if i < n {
            // SAFETY: i < n.
            unsafe { input.read(i) }
        } else {
            0
        }
    };
    [at(p), at(p + 1), at(p + 2), at(p + 3)]
}

/// Stores the elements of `chunk` that exist (`p + k < n`): the stores of the partial tile.
///
/// # Safety
/// `output` holds `n` elements, and nobody else writes `p .. p + 4` concurrently.
#[inline(always)]
pub(super) unsafe fn store_chunk_guarded(output: GlobalMut<i32>, p: usize, n: usize, chunk: [i32; 4]) {
    for (k, &x) in chunk.iter().enumerate() {
        if p + k < n {
            // SAFETY: p + k < n; this thread's element.
            unsafe { output.write(p + k, x) };
        }
    }
}

/// Where one thread stands in its tile: what every phase of [`scan_tile`] uses.
#[derive(Clone, Copy)]
pub(super) struct TileThread {
    /// `threadIdx.x`, its lane and its warp.
    pub(super) tid: usize,
    pub(super) lane: u32,
    pub(super) warp: usize,
    /// The tile (`blockIdx.x`).
    pub(super) tile: usize,
    /// Where the control words start in shared memory (right after the tile).
    pub(super) ctrl: usize,
}

/// Phase 3, reduce: this thread's `4 × ROWS` consecutive elements (blocked), then an inclusive
/// warp scan of the thread sums; lane 31 leaves its warp's total in control word `warp`.
/// Returns `(sum, incl)`: the thread's own sum and its inclusive warp scan. Ends with a barrier.
///
/// # Safety
/// After phase 2 of [`scan_tile`] (the load and its barrier); called by every thread of the
/// block.
#[inline(always)]
unsafe fn reduce_tile<const ROWS: usize>(t: TileThread, smem: Shared<i32>) -> (i32, i32) {
    let items = 4 * ROWS;
    let mut sum = 0i32;
    for r in 0..ROWS {
        // SAFETY: in bounds and aligned; complete and visible after the wait and barrier.
        let x = unsafe { smem.read_v4(blocked_chunk(t.tid, r, items)) };
        sum = sum.wrapping_add(x[0]).wrapping_add(x[1]).wrapping_add(x[2]).wrapping_add(x[3]);
    }
    let incl = warp_inclusive_scan(sum, t.lane);
    if t.lane == WARP_SIZE - 1 {
        // SAFETY: warp < 32; each warp writes its own slot, read after the barrier.
        unsafe { smem.write(t.ctrl + t.warp, incl) };
    }
    sync_threads();
    (sum, incl)
}

/// Phase 4: the tile aggregate and this warp's offset from the warp totals; thread 0 publishes
/// the aggregate at once (tile 0: its inclusive prefix, which is its aggregate). Returns
/// `(warp_offset, aggregate)`.
///
/// # Safety
/// After [`reduce_tile`]; `status` holds `gridDim.x` words.
#[inline(always)]
unsafe fn publish_aggregate<const THREADS: usize>(
    t: TileThread,
    smem: Shared<i32>,
    status: GlobalMut<u64>,
    epoch: u32,
) -> (i32, i32) {
    let warps = THREADS / WARP_SIZE as usize;
    let mut warp_offset = 0i32;
    let mut aggregate = 0i32;
    for w in 0..warps {
        // SAFETY: written before the barrier, not written again.
        let x = unsafe { smem.read(t.ctrl + w) };
        if w < t.warp {
            warp_offset = warp_offset.wrapping_add(x);
        }
        aggregate = aggregate.wrapping_add(x);
    }
    if t.tid == 0 {
        let flag = if t.tile == 0 { FLAG_PREFIX } else { FLAG_AGGREGATE };
        // SAFETY: tile < gridDim.x = the status array's length.
        unsafe { store_relaxed_u64(status.offset(t.tile), pack_status(epoch, flag, aggregate)) };
    }
    (warp_offset, aggregate)
}

/// Phase 5, scan in place: the thread rewrites its elements with their tile-local inclusive (or
/// exclusive) sums, starting from `run`, the sum of everything before it in the tile.
///
/// # Safety
/// After [`reduce_tile`]; each thread touches only its own blocked chunks.
#[inline(always)]
unsafe fn scan_in_place<const ROWS: usize>(t: TileThread, smem: Shared<i32>, mut run: i32, exclusive: u32) {
    let items = 4 * ROWS;
    for r in 0..ROWS {
        let at = blocked_chunk(t.tid, r, items);
        // SAFETY: this thread's own chunk.
        let x = unsafe { smem.read_v4(at) };
        let mut out = [0i32; 4];
        for k in 0..4 {
            if exclusive != 0 {
                out[k] = run;
                run = run.wrapping_add(x[k]);
            } else {
                run = run.wrapping_add(x[k]);
                out[k] = run;
            }
        }
        // SAFETY: this thread's own chunk; other threads read it only after the barrier.
        unsafe { smem.write_v4(at, out) };
    }
}

/// Phase 6: warp 0 looks back and publishes the tile's inclusive prefix; every thread gets the
/// tile's exclusive prefix (through control word `PREFIX_SLOT`, after a barrier).
///
/// # Safety
/// After [`publish_aggregate`]; `status` holds `gridDim.x` words; called by every thread.
#[inline(always)]
unsafe fn tile_prefix<const SLEEP_NS: u32>(
    t: TileThread,
    smem: Shared<i32>,
    status: GlobalMut<u64>,
    epoch: u32,
    aggregate: i32,
) -> i32 {
    if t.warp == 0 {
        let prefix = if t.tile == 0 {
            0
        } else {
            // SAFETY: the whole warp calls it, with the same tile and epoch.
            let prefix = unsafe { look_back::<SLEEP_NS>(status.as_const(), t.tile, epoch, t.lane) };
            if t.lane == 0 {
                let inclusive = prefix.wrapping_add(aggregate);
                // SAFETY: as above.
                unsafe { store_relaxed_u64(status.offset(t.tile), pack_status(epoch, FLAG_PREFIX, inclusive)) };
            }
            prefix
        };
        if t.lane == 0 {
            // SAFETY: read only after the barrier below.
            unsafe { smem.write(t.ctrl + PREFIX_SLOT, prefix) };
        }
    }
    sync_threads();
    // SAFETY: written before the barrier, never written again.
    unsafe { smem.read(t.ctrl + PREFIX_SLOT) }
}

/// Phases 3–6 on a loaded tile, in order (reduce, publish the aggregate, scan in place, look
/// back): every thread's tile-local scan is in shared memory, and the tile's exclusive prefix
/// is returned. The bulk-copy scans (`lookback_bulk`, `lookback_persistent`) run the same.
///
/// # Safety
/// After the load and its barrier; by every thread of the block; as for the four phases.
#[inline(always)]
pub(super) unsafe fn scan_loaded_tile<const THREADS: usize, const ROWS: usize, const SLEEP_NS: u32>(
    t: TileThread,
    smem: Shared<i32>,
    status: GlobalMut<u64>,
    epoch: u32,
    exclusive: u32,
) -> i32 {
    // SAFETY: the caller's guarantees, in the phases' order, by every thread.
    unsafe {
        let (sum, incl) = reduce_tile::<ROWS>(t, smem);
        let (warp_offset, aggregate) = publish_aggregate::<THREADS>(t, smem, status, epoch);
        scan_in_place::<ROWS>(t, smem, warp_offset.wrapping_add(incl.wrapping_sub(sum)), exclusive);
        tile_prefix::<SLEEP_NS>(t, smem, status, epoch, aggregate)
    }
}

/// The body of `lookback` and of its tuning instantiations: tile `blockIdx.x` of
/// `THREADS * 4 * ROWS` elements, in the phases of [`lookback`]'s docs: 1, 2 and 7 here, 3–6
/// one function each.
///
/// # Safety
/// As for [`lookback`]; `smem` is the block's shared array of `shared_words(tile)` words.
#[inline(always)]
unsafe fn scan_tile<const THREADS: usize, const ROWS: usize, const HINTS: u32, const SLEEP_NS: u32>(
    input: Global<i32>,
    output: GlobalMut<i32>,
    status: GlobalMut<u64>,
    n: u32,
    epoch: u32,
    exclusive: u32,
    smem: Shared<i32>,
) {
    const {
        assert!(THREADS.is_multiple_of(WARP_SIZE as usize) && THREADS <= 1024, "whole warps, at most 1024 threads");
        assert!(blocked_is_conflict_free(4 * ROWS), "an odd number of 16-byte chunks per thread");
    };
    if block_dim_x() as usize != THREADS {
        trap("lookback launched with a block size other than the one it was compiled for");
    }
    let tile_len = THREADS * 4 * ROWS;
    let tid = thread_idx_x() as usize;
    let lane = thread_idx_x() % WARP_SIZE;
    let warp = tid / WARP_SIZE as usize;
    let n = n as usize;
    // 1. The tile: blockIdx.x (see "Tile order" in `lookback`'s docs).
    let tile = block_idx_x() as usize;
    let base = tile * tile_len;
    let full = base + tile_len <= n;
    let t = TileThread { tid, lane, warp, tile, ctrl: tile_len };
    // 2. Load: striped 16-byte chunks, global → shared without registers (cp.async);
    //    the partial last tile through registers, with zeros past n.
    let policy = if HINTS & HINT_EVICT_FIRST != 0 { l2_evict_first_policy() } else { 0 };
    for r in 0..ROWS {
        let c = striped_chunk(tid, r, THREADS);
        if full {
            let src = input.wrapping_offset(base + c);
            // SAFETY: base + c + 3 < n; both addresses 16-byte aligned (16-byte aligned
            // buffers, c a multiple of 4); this thread's chunk, untouched until the wait.
            unsafe {
                if HINTS & HINT_EVICT_FIRST != 0 {
                    smem.copy_async_v4_evict_first(c, src, policy)
                } else if HINTS & HINT_PREFETCH_256 != 0 {
                    smem.copy_async_v4_prefetch256(c, src)
                } else {
                    smem.copy_async_v4(c, src)
                }
            };
        } else {
            // SAFETY: input holds n elements; this thread's chunk.
            unsafe { smem.write_v4(c, load_chunk_guarded(input, base + c, n)) };
        }
    }
    copy_async_commit();
    copy_async_wait::<0>();
    sync_threads();
    // 3.–6. SAFETY: the caller's guarantees, in the phases' order, by every thread.
    let prefix = unsafe { scan_loaded_tile::<THREADS, ROWS, SLEEP_NS>(t, smem, status, epoch, exclusive) };

    // 7. Store: striped chunks plus the tile's prefix.
    for r in 0..ROWS {
        let c = striped_chunk(tid, r, THREADS);
        // SAFETY: written before the barrier.
        let v = unsafe { smem.read_v4(c) };
        let out = [
            v[0].wrapping_add(prefix),
            v[1].wrapping_add(prefix),
            v[2].wrapping_add(prefix),
            v[3].wrapping_add(prefix),
        ];
        if full && HINTS & HINT_STREAM_STORE != 0 {
            // SAFETY: base + c + 3 < n; 16-byte aligned global memory; this thread's 16 bytes.
            unsafe { output.store_v4_streaming(base + c, out) };
        } else if full {
            // SAFETY: base + c + 3 < n; 16-byte aligned; these 16 bytes are this thread's.
            unsafe { output.store_v4(base + c, out) };
        } else {
            // SAFETY: output holds n elements; these elements are this thread's.
            unsafe { store_chunk_guarded(output, base + c, n, out) };
        }
    }
}

kernel! {
    /// Single-pass inclusive or exclusive scan with decoupled look-back (Merrill & Garland,
    /// *Single-pass Parallel Prefix Scan with Decoupled Look-back*, 2016): each element is
    /// read once and written once, in one launch.
    ///
    /// # Concept
    /// **Decoupled look-back: a chained scan that does not wait for its chain.** Cut the
    /// input into tiles, one per block. A *chained* scan passes a running prefix from tile to
    /// tile: tile `k` waits until tile `k - 1` publishes its inclusive prefix, adds its own
    /// sum, publishes. One pass over memory, but the publications form a serial chain, and
    /// each link costs a round trip through L2 (a store on one SM becoming visible to a load
    /// on another): the whole GPU then moves at one tile per L2 latency. Decoupling: every
    /// tile publishes its **aggregate** (its own sum, known as soon as the tile is loaded and
    /// reduced) before it knows its prefix. A tile then *looks back* over its predecessors:
    /// it adds their aggregates until it meets one that already has its **inclusive prefix**.
    /// No tile waits for another tile's look-back, only for predecessors' aggregates, which
    /// come right after their loads; a warp reads 32 predecessors' status words at once, so
    /// one L2 round trip covers 32 links of the chain.
    ///
    /// What is left is a wait: a tile cannot finish before its nearest predecessors have
    /// loaded and reduced their tiles, and the block is idle meanwhile. The scan runs at
    /// copy speed only if enough *other* tiles are loading at the same time, i.e. if each SM
    /// holds many tiles at once. That is why the tile lives in **shared memory**, not in
    /// registers. This kernel's first version kept its tile in registers (24 elements per
    /// thread, one 128-bit load per 4, each row scanned with shuffles): 63 registers per
    /// thread, so an sm_90 SM held 4 tiles of 6144 elements, and a block waiting in its
    /// look-back kept a quarter of them idle. A tile copied to shared memory with `cp.async`
    /// needs no registers for the data: the kernel fits in 32–40 registers, and on sm_90 the
    /// SM's 228 KiB of shared memory hold 6 tiles of 9216 elements, more than twice the
    /// bytes in flight.
    ///
    /// # Previous problem → fix
    /// `blelloch` (reduce-then-scan) moves every element through DRAM twice each way (scan
    /// tiles; add offsets) in 2 + 2·levels launches, and its block-sums levels are tiny
    /// launches that leave the GPU idle. Here each element is loaded once (16-byte copies,
    /// whole-warp contiguous), scanned in shared memory, and stored once: 8 bytes of DRAM
    /// traffic per element, as for a copy.
    ///
    /// # Execution
    /// Block of `LOOKBACK_THREADS` threads, tile of `LOOKBACK_TILE` elements in shared
    /// memory, `LOOKBACK_ITEMS` per thread. Two layouts of the same tile (`index`):
    /// *striped* (16-byte chunk `r * threads + tid`: coalesced global access) for loads and
    /// stores, *blocked* (elements `tid * items ..`: a sequential scan per thread) for the
    /// arithmetic; an odd number of chunks per thread keeps the blocked 128-bit shared
    /// accesses free of bank conflicts.
    /// 1. **Tile** `blockIdx.x`.
    /// 2. **Load**: each thread issues `cp.async.cg` 16-byte copies of its striped chunks
    ///    (global → shared, no registers, cached in L2 only, under an L2 *evict-first*
    ///    policy: read once), commits, waits; barrier. The
    ///    last, partial tile is loaded through registers with bounds checks, zeros past `n`.
    /// 3. **Reduce**: each thread sums its `items` blocked elements; an inclusive warp scan
    ///    (`__shfl_up_sync`, 5 steps) of the thread sums; lane 31 writes the warp's total to
    ///    shared memory; barrier.
    /// 4. Every thread adds the warp totals (the tile aggregate; its warp's offset). Thread 0
    ///    publishes `(A, aggregate)` (tile 0: `(P, aggregate)`), as early as possible.
    /// 5. **Scan in place**: each thread rewrites its blocked elements with their tile-local
    ///    inclusive (or exclusive) sums, from its warp offset plus the lanes before it.
    /// 6. **Look-back** (warp 0, after its own step 5): examine 32 predecessors at a time
    ///    (`look_back`; a lane whose predecessor has not published yet sleeps
    ///    [`LOOKBACK_SLEEP_NS`] before it polls again); publish `(P, prefix + aggregate)`; put
    ///    `prefix` in shared memory. Barrier.
    /// 7. **Store** the striped chunks plus `prefix`, one `st.global.cs.v4` per 4 elements
    ///    (*streaming*: written once, evicted first). The two hints together are 1% faster
    ///    than neither, on an H100 at 2^28; each alone is not ([`LOOKBACK_HINTS`]).
    ///
    /// ```text
    ///  tiles:    0          1          2          3          4
    ///  status:  (P, 10)    (A, 7)     (P, 24)    (A, 5)     (X)      ← epoch-tagged 64-bit words
    ///  tile 5 looks back: lane 31 → tile 4: X, wait … → (A, 3)
    ///                     window 0..4: nearest P is tile 2 → prefix = 24 + 5 + 3 = 32
    ///  tile 5 publishes (A, agg5) first, (P, 32 + agg5) after the look-back
    /// ```
    ///
    /// # Tile order
    /// A tile only ever waits for tiles with smaller numbers, so the scheme is free of
    /// deadlock as long as every block that holds a smaller tile has started (or will start
    /// while the waiters spin). With tile = `blockIdx.x` that rests on the order in which the
    /// GPU starts blocks: NVIDIA GPUs dispatch the blocks of a 1-D grid in increasing index
    /// order, so every predecessor of a running block is running or done. CUDA does not
    /// promise this order in writing; CUB's single-pass scan relies on it the same way, and
    /// so does this kernel. The emulator hands blocks out in index order too. (The
    /// alternative, a tile number drawn from a global counter with `atomicAdd` at block
    /// start, guarantees the property by construction but puts one more L2 round trip at
    /// the head of every block, before its loads can start.)
    ///
    /// # Status words and memory ordering
    /// Each tile's status is one 64-bit word `epoch:30 | flag:2 | value:32`
    /// (`index::pack_status`), written with a single `st.relaxed.gpu.b64` and read with a
    /// single `ld.relaxed.gpu.b64`. Because flag and value travel in one single-copy-atomic
    /// access, a reader can never see a flag with a stale value, and no other memory is
    /// published through the flag (tiles never read each other's outputs), so **relaxed**
    /// GPU-scope atomics are enough: no `__threadfence`, no release/acquire pair — which a
    /// split flag-and-value layout would need (value store, fence, flag store; flag load,
    /// fence, value load). GPU scope (not CTA) because the reader runs on another SM; the
    /// atomic load is never cached in a register or in the incoherent L1, so a spin sees the
    /// producer's store. The two stores of a tile (A, then P) go to one location from one
    /// thread, so coherence orders them: no reader sees P and later A. Shared memory filled
    /// by `cp.async` is read only after the copying thread's `cp.async.wait_group` and a
    /// barrier, which is what makes another thread's copies visible.
    ///
    /// # Status reset
    /// Words from an earlier launch must not be mistaken for this launch's: the host passes a
    /// new `epoch` (1, 2, 3, …) to every launch, and a word whose epoch differs reads as
    /// invalid (`index::status_flag`). So the status array is zeroed once, when it is
    /// allocated (and again if the 30-bit epoch ever wraps), never per launch: no init kernel
    /// in the timed region, and no race between a reset and this launch's readers.
    ///
    /// # Launch
    /// Grid `ceil(n / LOOKBACK_TILE)` (one block per tile), block `LOOKBACK_THREADS`
    /// (traps otherwise), `(LOOKBACK_TILE + 36) × 4` bytes of static shared memory (the
    /// tile, the warp totals, the prefix; [`LOOKBACK_SHARED_BYTES`]).
    ///
    /// # Preconditions
    /// `input` and `output` hold `n ≥ 1` elements each, are 16-byte aligned and do not
    /// overlap; `status` holds `gridDim.x` words, zeroed or written by earlier launches with
    /// other epochs; `epoch` is in `1..=index::MAX_EPOCH` and differs from the epoch of every
    /// earlier launch on this status array since it was zeroed; `exclusive` is 0 (inclusive
    /// scan) or 1 (exclusive scan).
    ///
    /// # Safety
    /// The pointers are valid device memory of those lengths. Every thread reaches every
    /// barrier (threads of the partial tile carry zeros past `n` and store nothing there).
    /// The look-back spins only on tiles with smaller ids (see *Tile order*), and every spin
    /// goes through the device layer's atomic loads (which, in the emulator, let other
    /// threads run and respect the time budget).
    ///
    /// # Measured
    /// NVIDIA H100 80GB HBM3, inclusive scan, median of 10 timed runs, every output element of every run checked (`docs/measurements/2026-11-25-h100/scans.csv`, commit e032fa9); × CUB = CUB's time / ours:
    ///
    /// | n | time | GB/s (read + write) | × CUB |
    /// |---|---|---|---|
    /// | 1,000,000 | 6.70 µs | 1193.3 | 1.47 |
    /// | 100,000,000 | 283.9 µs | 2818.2 | 1.16 |
    /// | 268,435,456 | 769.9 µs | 2789.3 | 1.14 |
    pub unsafe fn lookback(
        input: Global<i32>,
        output: GlobalMut<i32>,
        status: GlobalMut<u64>,
        n: u32,
        epoch: u32,
        exclusive: u32,
    ) {
        // SAFETY: forwarded from the caller.
        unsafe { lookback_with::<LOOKBACK_HINTS, LOOKBACK_SLEEP_NS>(input, output, status, n, epoch, exclusive) }
    }
}

/// Declares one tuning instantiation of `lookback` for (threads, items per thread).
macro_rules! lookback_shape {
    ($name:ident, $threads:literal, $items:literal) => {
        kernel! {
            /// `lookback` compiled for another shape (threads × items per thread, in the
            /// name), for tuning: same algorithm, same arguments, same preconditions, with
            /// tiles of `threads × items` elements and blocks of `threads` threads.
            ///
            /// # Concept
            /// **Tuning by instantiation.** The tile shape decides how many tiles an SM holds
            /// at once (shared memory, registers, threads per SM) and so how many bytes are
            /// in flight while tiles wait in their look-back. Which shape keeps the GPU
            /// busiest is measured, not derived: each candidate is the same code compiled
            /// with other constants ([`LOOKBACK_TUNING`]).
            ///
            /// # Previous problem → fix
            /// `lookback` is compiled for one shape (`LOOKBACK_THREADS` ×
            /// `LOOKBACK_ITEMS`), a choice that holds only as long as no other shape is
            /// faster. These shapes are the alternatives that `scripts/gpu/scan_table.sh`
            /// times next to it; the winner becomes `lookback`'s shape.
            ///
            /// # Execution
            /// As `lookback` (phases 1–7 of its docs), with `threads` threads per block and
            /// `items / 4` 16-byte chunks per thread.
            ///
            /// # Launch
            /// Grid `ceil(n / (threads × items))`, block exactly `threads` (traps
            /// otherwise), `(threads × items + 36) × 4` bytes of static shared memory
            /// ([`lookback_shared_bytes`]`(threads, items)`).
            ///
            /// # Preconditions
            /// As for `lookback`.
            ///
            /// # Safety
            /// As for `lookback`, with this kernel's tile and block.
            ///
            /// # Measured
            /// A tuning shape: `scripts/gpu/scan_table.sh` (`--variant tuning`) times it
            /// beside `lookback`, whose figures are those of the winning shape.
            pub unsafe fn $name(
                input: Global<i32>,
                output: GlobalMut<i32>,
                status: GlobalMut<u64>,
                n: u32,
                epoch: u32,
                exclusive: u32,
            ) {
                let smem = static_shared!(LOOKBACK_SHARED: [i32; shared_words($threads * $items)]);
                // SAFETY: forwarded from the caller; smem has shared_words(tile) words.
                unsafe {
                    scan_tile::<$threads, { $items / 4 }, LOOKBACK_HINTS, LOOKBACK_SLEEP_NS>(input, output, status, n, epoch, exclusive, smem)
                }
            }
        }
    };
}

lookback_shape!(lookback_128x44, 128, 44);
lookback_shape!(lookback_128x60, 128, 60);
lookback_shape!(lookback_192x44, 192, 44);
lookback_shape!(lookback_256x28, 256, 28);

/// The body of `lookback` and of its ablations: its shape, with the cache hints `HINTS` and the
/// look-back sleep `SLEEP_NS` given (`lookback`: its own; an ablation changes one of them).
///
/// # Safety
/// As for [`lookback`].
#[inline(always)]
unsafe fn lookback_with<const HINTS: u32, const SLEEP_NS: u32>(
    input: Global<i32>,
    output: GlobalMut<i32>,
    status: GlobalMut<u64>,
    n: u32,
    epoch: u32,
    exclusive: u32,
) {
    let smem = static_shared!(LOOKBACK_SHARED: [i32; shared_words(LOOKBACK_TILE as usize)]);
    // SAFETY: forwarded from the caller; smem has shared_words(tile) words.
    unsafe {
        scan_tile::<{ LOOKBACK_THREADS as usize }, { LOOKBACK_ITEMS as usize / 4 }, HINTS, SLEEP_NS>(
            input, output, status, n, epoch, exclusive, smem,
        )
    }
}

/// Declares one ablation of `lookback`: its shape, with the cache hints `$hints` and the
/// look-back sleep `$ns` (one of them other than `lookback`'s), its docs up to `# Execution`
/// given, the rest (launch, preconditions, safety, where it is measured: the constant `$at`)
/// the same for every ablation.
macro_rules! lookback_ablation {
    ($(#[$doc:meta])* $name:ident; hints $hints:expr; sleep $ns:expr; measured at $at:literal) => {
        kernel! {
            $(#[$doc])*
            ///
            /// # Launch
            /// As `lookback`: grid `ceil(n / LOOKBACK_TILE)`, block `LOOKBACK_THREADS`,
            /// [`LOOKBACK_SHARED_BYTES`] of static shared memory.
            ///
            /// # Preconditions
            /// As for `lookback`.
            ///
            /// # Safety
            /// As for `lookback`.
            ///
            /// # Measured
            #[doc = concat!("An ablation: its time beside `lookback`'s is at [`", $at, "`].")]
            pub unsafe fn $name(
                input: Global<i32>,
                output: GlobalMut<i32>,
                status: GlobalMut<u64>,
                n: u32,
                epoch: u32,
                exclusive: u32,
            ) {
                // SAFETY: forwarded from the caller.
                unsafe { lookback_with::<{ $hints }, { $ns }>(input, output, status, n, epoch, exclusive) }
            }
        }
    };
}

/// Declares one cache-hint ablation of `lookback`: its shape, with other hint bits
/// ([`LOOKBACK_HINTS`]).
macro_rules! lookback_hinted {
    ($name:ident, $hints:expr, $what:literal) => {
        lookback_ablation! {
            #[doc = concat!("`lookback` with ", $what, " instead of its own hints: an ablation, for tuning.")]
            ///
            /// # Concept
            /// **Cache hints on a stream.** A scan reads each input line once and writes each
            /// output line once; by default L2 keeps both as if they might be reused. PTX lets
            /// a kernel say otherwise per instruction: a streaming store (`st.global.cs`), an
            /// evict-first L2 policy on the loads, or a 256-byte L2 prefetch. Whether any of
            /// it moves a DRAM-bound kernel is measured, not assumed.
            ///
            /// # Previous problem → fix
            /// `lookback` runs at about 91% of a device-to-device copy's speed (H100, 2^28).
            /// If L2 thrashing between the input stream and the output stream costs part of
            /// the rest, hints recover it: each ablation isolates one, and [`LOOKBACK_HINTS`]
            /// records which won.
            ///
            /// # Execution
            /// As `lookback` (phases 1–7 of its docs), with the hinted instruction in phase 2
            /// (loads) or 7 (stores).
            $name; hints $hints; sleep LOOKBACK_SLEEP_NS; measured at "LOOKBACK_HINTS"
        }
    };
}

lookback_hinted!(lookback_stream_store, HINT_STREAM_STORE, "streaming output stores (`st.global.cs`)");
lookback_hinted!(lookback_evict_first, HINT_EVICT_FIRST, "input copies under an L2 evict-first policy");
lookback_hinted!(lookback_prefetch256, HINT_PREFETCH_256, "input copies with a 256-byte L2 prefetch");
lookback_hinted!(lookback_no_hints, HINTS_NONE, "no cache hints (plain `st.global`, plain `cp.async.cg`)");

/// Declares one look-back wait ablation of `lookback`: its shape and hints, with lanes that
/// sleep `$ns` nanoseconds between polls of a predecessor that is not ready (`lookback`
/// itself sleeps [`LOOKBACK_SLEEP_NS`]).
macro_rules! lookback_sleeping {
    ($name:ident, $ns:literal) => {
        lookback_ablation! {
            #[doc = concat!("`lookback` whose waiting lanes sleep ", stringify!($ns), " ns between polls: an ablation, for tuning.")]
            ///
            /// # Concept
            /// **How to wait.** A tile whose predecessor has not yet published polls that
            /// predecessor's status word. A tight spin sends one L2 request per lane per round
            /// trip, and every waiting tile polls the same few lines (the status words of the
            /// newest tiles), which live in one or two L2 slices; those slices also serve their
            /// share of the input and output streams. A lane that sleeps between polls
            /// (`nanosleep`) sends fewer requests, at the price of noticing a publication later.
            ///
            /// # Previous problem → fix
            /// `lookback` moves its bytes at about 81% of the DRAM peak where a copy reaches 90%
            /// (H100, 2^28). If polling traffic crowds the L2 slices that hold the status words,
            /// sleeping recovers part of the gap; if not, it only delays the tiles. Each sleep
            /// length is one ablation; [`LOOKBACK_SLEEP_NS`] records the choice.
            ///
            /// # Execution
            /// As `lookback` (phases 1–7 of its docs); in phase 6 a lane that reads an invalid
            /// status sleeps before it reads again.
            $name; hints LOOKBACK_HINTS; sleep $ns; measured at "LOOKBACK_SLEEP_NS"
        }
    };
}

lookback_sleeping!(lookback_sleep64, 64);
lookback_sleeping!(lookback_spin, 0);
lookback_sleeping!(lookback_sleep1024, 1024);

#[cfg(not(target_arch = "nvptx64"))]
kernel! {
    /// Host-only test hook (not in the PTX): one warp runs the look-back of `tile` over a
    /// status array the test prepared, and lane 0 writes the prefix it found to `*out`. Lets
    /// the tests drive the multi-window path (32+ predecessors with aggregates only), which
    /// real launches reach only under contention.
    ///
    /// # Safety
    /// `status` holds `tile` words, none of them left invalid for `epoch` forever; `out` is
    /// one valid `i32`; launched with one block of 32 threads.
    pub unsafe fn lookback_probe(status: GlobalMut<u64>, out: GlobalMut<i32>, tile: u32, epoch: u32) {
        let lane = thread_idx_x() % WARP_SIZE;
        // SAFETY: forwarded from the caller; the whole warp calls it.
        let prefix = unsafe { look_back::<LOOKBACK_SLEEP_NS>(status.as_const(), tile as usize, epoch, lane) };
        if lane == 0 {
            // SAFETY: out is valid.
            unsafe { out.write(0, prefix) };
        }
    }
}
