use super::index::{stage_of, striped_chunk, ticket_of, ticket_restart};
use super::lookback::{CTRL_WORDS, LOOKBACK_SLEEP_NS, Status, TileThread, load_chunk_guarded, scan_loaded_tile};
use super::lookback_bulk::store_tile;
use crate::device::atomic::{atomic_add_u64, atomic_cas_u64, load_relaxed_u64};
use crate::device::bulk::{Mbarrier, bulk_wait_read, fence_proxy_async};
use crate::device::global::{Global, GlobalMut, l2_evict_first_policy};
use crate::device::shared::{Shared, dynamic_shared};
use crate::device::thread::{block_dim_x, sync_threads, thread_idx_x};
use crate::device::warp::sync_warp;
use crate::device::{FULL_MASK, WARP_SIZE, trap};
use crate::scan::index::blocked_is_conflict_free;
use crate::types::Sum;
use crate::{kernel, static_shared};

// ---------------------------------------------------------------------------------------
// Tuning: every knob of the bulk-copy look-back scan is here.

/// Threads per block of `lookback_persistent` (a multiple of 32, at most 1024).
pub const PERSISTENT_THREADS: u32 = 256;
/// Elements per thread of `lookback_persistent`: an odd multiple of 4, as for `lookback` (the same
/// blocked shared-memory reads).
pub const PERSISTENT_ITEMS: u32 = 36;
/// Elements per tile of `lookback_persistent` (`lookback`'s tile: 36 KiB).
pub const PERSISTENT_TILE: u32 = PERSISTENT_THREADS * PERSISTENT_ITEMS;
/// Tiles a block of `lookback_persistent` holds at once: the one it scans, and the next ones,
/// whose bulk loads are in flight meanwhile.
pub const PERSISTENT_STAGES: u32 = 2;

/// Shared words of a ticket: one per stage, after the warp totals and the prefix of
/// `lookback`'s control words (at most 3 stages fit in its 36 words).
const TICKET_SLOT: usize = 33;

/// Dynamic shared memory of a `lookback_persistent` block: `stages` tiles of `threads × items`
/// words, then the control words (warp totals, prefix, tickets).
pub const fn lookback_persistent_shared_bytes(threads: u32, items: u32, stages: u32) -> u32 {
    (stages * threads * items + CTRL_WORDS as u32) * 4
}

/// Draws the block's next tile from the launch's ticket counter (`status[tiles]`): the
/// tiles are handed out in the order blocks ask for them, so a tile's owner is always running.
/// A block's first draw may find a word this launch has not claimed yet (a zero, an earlier
/// launch's counter, a tile's status word): it reads the word, and the first block to swap it
/// for this launch's counter (`atom.cas` from the value it read) takes ticket 0; the others
/// see the new counter and add to it. Later draws of the block just add.
///
/// (A first version added first and restarted the counter with a `cas` from the value its add
/// returned: with hundreds of blocks adding at once, that `cas` almost never found the value
/// it expected, and the launch spent seconds retrying.)
///
/// # Safety
/// `counter` is the launch's ticket word (zeroed, or left by launches with other epochs).
#[inline(always)]
pub(super) unsafe fn draw_tile(counter: GlobalMut<u64>, epoch: u32, first: bool) -> usize {
    if !first {
        // SAFETY: the caller's ticket word; every access to it is atomic.
        return unsafe { atomic_add_u64(counter, 1) } as u32 as usize;
    }
    loop {
        // SAFETY: as above.
        let seen = unsafe { load_relaxed_u64(counter.as_const()) };
        if ticket_of(seen, epoch).is_some() {
            // SAFETY: as above.
            let old = unsafe { atomic_add_u64(counter, 1) };
            if let Some(ticket) = ticket_of(old, epoch) {
                return ticket as usize;
            }
        // SAFETY: as above.
        } else if unsafe { atomic_cas_u64(counter, seen, ticket_restart(epoch)) } == seen {
            return 0;
        }
    }
}

/// What the block's thread 0 knows of its ring of stages.
struct Producer {
    /// The tiles it has drawn so far.
    drawn: usize,
    /// Drew a ticket past the last tile: nothing more to load.
    exhausted: bool,
}

/// Thread 0 draws the tile for the block's `drawn`-th stage use, records it in that stage's
/// ticket slot, and starts its bulk load when it is a full tile (a partial last tile is loaded
/// later by every thread; a ticket past the last tile is recorded as `tiles`, which ends the
/// block's loop).
///
/// # Safety
/// Called by thread 0 only, when nobody reads the stage's buffer or its ticket slot; with
/// `BULK_STORE`, the stage's previous bulk store has been committed.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
unsafe fn produce<const STAGES: usize, const BULK_STORE: bool>(
    p: &mut Producer,
    smem: Shared<i32>,
    bars: Shared<u64>,
    input: Global<i32>,
    counter: GlobalMut<u64>,
    (n, tile_len, epoch, policy): (usize, usize, u32, u64),
) {
    let tiles = n.div_ceil(tile_len);
    let (stage, _) = stage_of(p.drawn, STAGES);
    let tile = if p.exhausted {
        tiles
    } else {
        // SAFETY: the launch's ticket word (the caller's).
        unsafe { draw_tile(counter, epoch, p.drawn == 0) }.min(tiles)
    };
    p.exhausted = tile == tiles;
    p.drawn += 1;
    // SAFETY: the stage's ticket slot; read by the others after the next barrier.
    unsafe { smem.write(STAGES * tile_len + TICKET_SLOT + stage, tile as i32) };
    if BULK_STORE {
        // The stage's last bulk store must have read its bytes before they are overwritten: by
        // the copy engine for a full tile, by every thread for the partial last one. (Waiting
        // only before a bulk load left the partial tile's stores racing with the store's reads;
        // the emulator's in-flight check found it.)
        bulk_wait_read::<0>();
    }
    if (tile + 1) * tile_len <= n {
        // Earlier reads and writes of the buffer by the threads (generic proxy) come first.
        fence_proxy_async();
        // SAFETY: an initialised barrier; a whole tile inside the input (16-byte aligned: the
        // tile is a multiple of 4 elements and the input is aligned); nobody touches the
        // buffer until its phase completes.
        unsafe {
            let bar = Mbarrier::at(bars, stage);
            bar.arrive_expect_tx((tile_len * 4) as u32);
            smem.offset(stage * tile_len).copy_bulk(0, input.wrapping_offset(tile * tile_len), tile_len, bar, policy);
        }
    }
}

/// The shape's rules, checked when a shape is compiled (no code): whole warps within 1024
/// threads, a conflict-free row count, 2 or 3 stages whose tickets fit the control words.
#[inline(always)]
fn shape_is_valid<const THREADS: usize, const ROWS: usize, const STAGES: usize>() {
    const {
        assert!(THREADS.is_multiple_of(WARP_SIZE as usize) && THREADS <= 1024, "whole warps, at most 1024 threads");
        assert!(blocked_is_conflict_free(4 * ROWS), "an odd number of 16-byte chunks per thread");
        assert!(STAGES >= 2 && TICKET_SLOT + STAGES <= CTRL_WORDS, "2 to 3 stages");
    };
}

/// Step 1 of [`scan_tiles`], thread 0's: one barrier per stage, then the loads of the first
/// `STAGES − 1` tiles.
///
/// # Safety
/// Thread 0 alone, before any barrier or buffer is used; as for [`produce`].
#[inline(always)]
unsafe fn start_stages<const STAGES: usize, const BULK_STORE: bool>(
    producer: &mut Producer,
    smem: Shared<i32>,
    bars: Shared<u64>,
    input: Global<i32>,
    counter: GlobalMut<u64>,
    shape: (usize, usize, u32, u64),
) {
    for s in 0..STAGES {
        // SAFETY: s < STAGES = the barrier array's length; nobody else touches it yet.
        unsafe { Mbarrier::at(bars, s).init(1) };
    }
    fence_proxy_async();
    for _ in 0..STAGES - 1 {
        // SAFETY: thread 0, before any buffer is used.
        unsafe { produce::<STAGES, BULK_STORE>(producer, smem, bars, input, counter, shape) };
    }
}

/// Step 2 of [`scan_tiles`], thread 0's wait: for stage `stage`'s tile (its ticket in the
/// control words after `ctrl`), where whole, the stage's barrier in phase `parity` (its bytes
/// arrived); a partial or no tile has no bytes to wait for.
///
/// # Safety
/// Thread 0, after its `produce` for this stage wrote the ticket slot; the barrier initialised.
#[inline(always)]
unsafe fn wait_stage(
    smem: Shared<i32>,
    bars: Shared<u64>,
    (ctrl, stage, parity): (usize, usize, u32),
    (n, tile_len): (usize, usize),
) {
    // SAFETY: this stage's ticket slot, written by thread 0 itself.
    let tile = unsafe { smem.read(ctrl + TICKET_SLOT + stage) } as usize;
    if (tile + 1) * tile_len <= n {
        // SAFETY: an initialised barrier whose current phase is this tile's load.
        unsafe { Mbarrier::at(bars, stage).wait_parity(parity) };
    }
}

/// Step 3 of [`scan_tiles`]: the partial last tile (from element `base`), this thread's striped
/// chunks through registers, zeros past `n`.
///
/// # Safety
/// `input` holds `n` elements; `buf` holds the stage's tile; no other thread touches these
/// chunks before the next barrier.
#[inline(always)]
unsafe fn load_partial_tile<const THREADS: usize, const ROWS: usize>(
    buf: Shared<i32>,
    input: Global<i32>,
    (base, n): (usize, usize),
    tid: usize,
) {
    for r in 0..ROWS {
        let c = striped_chunk(tid, r, THREADS);
        // SAFETY: input holds n elements; this thread's chunk of the stage.
        unsafe { buf.write_v4(c, load_chunk_guarded(input, base + c, n)) };
    }
}

/// The body of `lookback_persistent` and its tuning shapes: tiles of `THREADS × 4 × ROWS` elements
/// drawn by ticket, `STAGES` of them in shared memory at once, the full ones loaded by the
/// copy engine; `BULK_STORE` stores them with it too (else through registers, as `lookback`).
///
/// # Safety
/// As for [`lookback_persistent`]; `smem` holds `STAGES` tiles and the control words, `bars` has
/// `STAGES` words.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
unsafe fn scan_tiles<const THREADS: usize, const ROWS: usize, const STAGES: usize, const BULK_STORE: bool>(
    input: Global<i32>,
    output: GlobalMut<i32>,
    status: GlobalMut<u64>,
    n: u32,
    epoch: u32,
    exclusive: u32,
    smem: Shared<i32>,
    bars: Shared<u64>,
) {
    shape_is_valid::<THREADS, ROWS, STAGES>();
    if block_dim_x() as usize != THREADS {
        trap("lookback_persistent launched with a block size other than the one it was compiled for");
    }
    let tile_len = THREADS * 4 * ROWS;
    let (tid, n) = (thread_idx_x() as usize, n as usize);
    let tiles = n.div_ceil(tile_len);
    let ctrl = STAGES * tile_len;
    let policy = l2_evict_first_policy();
    // SAFETY: status holds tiles + 1 words; the last is the ticket counter.
    let counter = unsafe { status.offset(tiles) };
    let mut producer = Producer { drawn: 0, exhausted: false };
    // 1. Thread 0 sets up one barrier per stage and starts the loads of the first stages.
    if tid == 0 {
        // SAFETY: thread 0, before any barrier or buffer is used.
        unsafe {
            start_stages::<STAGES, BULK_STORE>(&mut producer, smem, bars, input, counter, (n, tile_len, epoch, policy))
        };
    }
    // Warp 0 converges before the barrier: `bar.sync` is `.aligned` (every lane of a warp at the
    // same barrier together), and thread 0 ran loops (its ticket, its waits) alone.
    sync_warp(FULL_MASK);
    let mut k = 0;
    loop {
        let (stage, parity) = stage_of(k, STAGES);
        // 2. Thread 0 starts the load of the tile after the ones in flight (into the stage the
        //    previous tile left), then waits for this stage's bytes.
        if tid == 0 {
            // SAFETY: thread 0; the stage it fills was released by the previous iteration's
            // last barrier (and its bulk store's read, which produce waits for).
            unsafe {
                produce::<STAGES, BULK_STORE>(&mut producer, smem, bars, input, counter, (n, tile_len, epoch, policy));
                wait_stage(smem, bars, (ctrl, stage, parity), (n, tile_len));
            }
        }
        sync_warp(FULL_MASK);
        sync_threads();
        // SAFETY: written by thread 0 before the barrier.
        let tile = unsafe { smem.read(ctrl + TICKET_SLOT + stage) } as usize;
        if tile >= tiles {
            break;
        }
        // SAFETY: stage < STAGES, so the stage's buffer lies inside smem.
        let buf = unsafe { smem.offset(stage * tile_len) };
        let base = tile * tile_len;
        let full = base + tile_len <= n;
        // 3. The partial last tile: every thread loads its striped chunks, zeros past n.
        if !full {
            // SAFETY: input holds n elements; this thread's chunks of the stage.
            unsafe { load_partial_tile::<THREADS, ROWS>(buf, input, (base, n), tid) };
            sync_threads();
        }
        let (lane, warp) = (thread_idx_x() % WARP_SIZE, tid / WARP_SIZE as usize);
        let t = TileThread { tid, lane, warp, tile, ctrl: ctrl - stage * tile_len };
        // 4.–7. `lookback`'s phases 3–6 on this stage. SAFETY: the tile is loaded and visible
        // (barrier above); every thread runs every phase.
        let prefix = unsafe {
            let counts = Status::packed(status);
            scan_loaded_tile::<i32, Sum, i32, THREADS, ROWS, LOOKBACK_SLEEP_NS>(t, buf, counts, epoch, exclusive)
        };
        // 8. Store. SAFETY: this thread's chunks of the scanned tile; output holds n elements.
        unsafe { store_tile::<THREADS, ROWS, BULK_STORE>(buf, output, (base, n), prefix, full, policy) };
        k += 1;
    }
    if BULK_STORE && tid == 0 {
        // The block's shared memory must outlive the reads of its last bulk store.
        bulk_wait_read::<0>();
    }
    sync_warp(FULL_MASK);
}

kernel! {
    /// `lookback_bulk` with persistent blocks: each block runs a sequence of tiles drawn by
    /// ticket, two of them in shared memory at once, so that one thread loads the next tile
    /// while the block scans this one. An experiment that lost: it is slower than both.
    ///
    /// # Concept
    /// **A pipeline of stages, and what it does to a chain.** A block that keeps two tiles in
    /// shared memory (two *stages*) can have the next tile's bulk load in flight during
    /// everything it does with the current one, its look-back wait included. Tiles are handed
    /// to blocks by a ticket counter rather than by `blockIdx.x`, so that a block can run a
    /// whole sequence of tiles (a persistent block) while the look-back stays free of
    /// deadlock: a tile's owner took it only when it was already running. The cost is in the
    /// chain: a tile waiting in a block's second stage publishes its aggregate only when the
    /// block has finished the tile before it (look-back and store), so every later tile's
    /// look-back waits for that, where in `lookback` a tile publishes as soon as its own data
    /// has arrived.
    ///
    /// # Previous problem → fix
    /// `lookback` and `lookback_bulk` hold a tile in shared memory from its load until its
    /// store, and nothing is loaded into that space while warp 0 looks back (on an H100 at
    /// 2^28, 51.6 % of `lookback`'s stall cycles are at the barrier that waits for the
    /// look-back). Here the block's second stage is already loading the next tile during that
    /// wait. Measured, this does not pay: see `# Measured`.
    ///
    /// # Execution
    /// Block of `PERSISTENT_THREADS` threads; `PERSISTENT_STAGES` buffers of `PERSISTENT_TILE` elements in
    /// dynamic shared memory, one `mbarrier` each.
    /// 1. Thread 0 initialises the barriers, draws a tile ticket and starts its bulk load
    ///    (`mbarrier.arrive.expect_tx` with the tile's bytes, then `cp.async.bulk`).
    /// 2. Each iteration, thread 0 draws the next ticket and starts its load into the stage
    ///    the previous tile has left, then waits for the current stage's phase; `__syncwarp`
    ///    (warp 0 converges: `bar.sync` is `.aligned`, every lane of a warp at it together);
    ///    barrier.
    ///    A ticket past the last tile ends the block's loop.
    /// 3. The partial last tile is loaded by every thread through registers, zeros past n.
    /// 4. – 7. `lookback`'s phases 3–6 on the stage: reduce, publish the aggregate, scan in
    ///    place, look back (warp 0) and publish the inclusive prefix.
    /// 8. Every thread adds the prefix to its striped chunks and writes them back; fence the
    ///    async proxy; barrier; thread 0 stores the tile with one bulk store
    ///    (`cp.async.bulk.global.shared::cta`), which reads shared memory while the block
    ///    goes on. Before its stage is loaded again, thread 0 waits until that store has read
    ///    its bytes (`cp.async.bulk.wait_group.read`).
    ///
    /// ```text
    ///  thread 0:  load t0 ─┐ load t1 ─────┐ load t2 ─────┐
    ///  stage 0:   [ t0 landing ][ scan t0 | look back | store ][ t2 landing … ]
    ///  stage 1:                 [ t1 landing ……………………… ][ scan t1 | look back | store ]
    /// ```
    ///
    /// # Tile tickets
    /// The ticket counter is `status[tiles]`, a status word with flag 3 (`index::FLAG_TICKET`)
    /// whose value counts the tickets drawn (`index::ticket_of`). A block draws with
    /// `atom.add`; on its first draw it reads the word first, and if it is not this launch's
    /// counter, swaps it with `atom.cas` for (epoch, 3, 1) and takes ticket 0 (a block whose
    /// `cas` fails reads again and finds the new counter). So the counter, like the status words,
    /// needs no zeroing between launches. Every block draws until it gets a ticket past the
    /// last tile. A block waits in its look-back only for smaller tickets, drawn by blocks that
    /// were running when they drew them, and a block finishes its tiles in ticket order: no
    /// deadlock, whatever the grid and whichever blocks are resident.
    ///
    /// # Launch
    /// Any grid ≥ 1 (the host launches as many blocks as fit on the GPU at once, at most one
    /// per tile), block `PERSISTENT_THREADS` (traps otherwise), `lookback_persistent_shared_bytes(
    /// PERSISTENT_THREADS, PERSISTENT_ITEMS, PERSISTENT_STAGES)` bytes of dynamic shared memory (72.1 KiB: the
    /// host raises the kernel's dynamic shared-memory limit), and `8 × PERSISTENT_STAGES` bytes of
    /// static shared memory for the barriers. sm_90 only (the host's `min_cc`): elsewhere its
    /// bulk copies are slow synchronous loops.
    ///
    /// # Preconditions
    /// As for `lookback`, with `status` holding `ceil(n / PERSISTENT_TILE) + 1` words (the status
    /// words, then the ticket counter), zeroed or written by earlier launches with other epochs.
    ///
    /// # Safety
    /// As for `lookback`: every thread reaches every barrier (the loop's exit is decided by a
    /// ticket every thread reads after the same barrier); the look-back waits only on smaller
    /// tickets (see *Tile tickets*); a stage's buffer is refilled only after the barrier that
    /// ends its previous tile, after a proxy fence, and after its bulk store has been read.
    ///
    /// # Measured
    /// NVIDIA H100 80GB HBM3, inclusive scan, median of 10 timed runs per row, every output checked, beside `lookback` and a device-to-device copy of the same input in the same invocations (`docs/measurements/2026-11-25-h100/bulk/persistent_rounds.csv`, commit 4dba1af); the spread of the rounds' medians:
    ///
    /// | n | rounds | lookback_persistent | lookback | copy | lookback_persistent / lookback |
    /// |---|---|---|---|---|---|
    /// | 100,000,000 | 2 | 413.5 µs – 422.7 µs | 285.7 µs – 286.2 µs | 269.2 µs – 269.6 µs | 1.46 |
    /// | 268,435,456 | 2 | 1230.7 µs – 1246.5 µs | 767.3 µs – 769.7 µs | 712.9 µs – 714.0 µs | 1.61 |
    ///
    /// (In that file this kernel is still named `lookback_bulk`.) Its first version, before the ticket fix, took 26.5 s per 10^8 scan (`docs/measurements/2026-11-25-h100/bulk/persistent_first_draw.csv`).
    pub unsafe fn lookback_persistent(
        input: Global<i32>,
        output: GlobalMut<i32>,
        status: GlobalMut<u64>,
        n: u32,
        epoch: u32,
        exclusive: u32,
    ) {
        // SAFETY: forwarded from the caller.
        unsafe { persistent_with::<{ PERSISTENT_THREADS as usize }, { PERSISTENT_ITEMS as usize / 4 }, { PERSISTENT_STAGES as usize }, true>(input, output, status, n, epoch, exclusive) }
    }
}

/// `lookback_persistent`'s body for one shape: the dynamic shared memory and the barriers declared,
/// then [`scan_tiles`].
///
/// # Safety
/// As for [`lookback_persistent`], with this shape's shared memory.
#[inline(always)]
unsafe fn persistent_with<const THREADS: usize, const ROWS: usize, const STAGES: usize, const BULK_STORE: bool>(
    input: Global<i32>,
    output: GlobalMut<i32>,
    status: GlobalMut<u64>,
    n: u32,
    epoch: u32,
    exclusive: u32,
) {
    let bars = static_shared!(BULK_BARRIERS: [u64; STAGES]);
    // SAFETY: the launch gives lookback_persistent_shared_bytes(..) of dynamic shared memory.
    let smem = unsafe { dynamic_shared::<i32>(STAGES * THREADS * 4 * ROWS + CTRL_WORDS) };
    // SAFETY: forwarded from the caller.
    unsafe { scan_tiles::<THREADS, ROWS, STAGES, BULK_STORE>(input, output, status, n, epoch, exclusive, smem, bars) }
}
