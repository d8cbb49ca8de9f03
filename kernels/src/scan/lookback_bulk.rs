use super::index::{blocked_is_conflict_free, striped_chunk};
use super::lookback::{Status, TileThread, load_chunk_guarded, scan_loaded_tile, shared_words, store_chunk_guarded};
use crate::device::bulk::{Mbarrier, bulk_commit, bulk_wait_read, fence_proxy_async};
use crate::device::global::{Global, GlobalMut, l2_evict_first_policy};
use crate::device::shared::Shared;
use crate::device::thread::{block_dim_x, block_idx_x, sync_threads, thread_idx_x};
use crate::device::warp::sync_warp;
use crate::device::{FULL_MASK, WARP_SIZE, trap};
use crate::{kernel, static_shared};

// ---------------------------------------------------------------------------------------
// Tuning: `lookback_bulk` keeps `lookback`'s shape, so that the two differ only in how a tile
// moves.

/// Threads per block of `lookback_bulk` (`lookback`'s).
pub const BULK_THREADS: u32 = super::lookback::LOOKBACK_THREADS;
/// Elements per thread of `lookback_bulk` (`lookback`'s).
pub const BULK_ITEMS: u32 = super::lookback::LOOKBACK_ITEMS;
/// Elements per tile of `lookback_bulk`: 36 KiB.
pub const BULK_TILE: u32 = BULK_THREADS * BULK_ITEMS;

/// Phase 8 of the bulk scans: adds the tile's prefix and stores the tile: a full tile, with
/// `BULK_STORE`, back into shared memory and then in one bulk store by thread 0; otherwise each
/// thread's striped chunks through registers (`st.global.cs`, guarded for the partial tile), as
/// `lookback`. Ends with a barrier.
///
/// # Safety
/// After the tile's prefix and its barrier, by every thread; `buf` is the tile in shared
/// memory, `output` holds `n` elements and `base` is the tile's first element.
#[inline(always)]
pub(super) unsafe fn store_tile<const THREADS: usize, const ROWS: usize, const BULK_STORE: bool>(
    buf: Shared<i32>,
    output: GlobalMut<i32>,
    (base, n): (usize, usize),
    prefix: i32,
    full: bool,
    policy: u64,
) {
    let tid = thread_idx_x() as usize;
    for r in 0..ROWS {
        let c = striped_chunk(tid, r, THREADS);
        // SAFETY: written before the barrier; this thread's chunk.
        let v = unsafe { buf.read_v4(c) };
        let out = v.map(|x| x.wrapping_add(prefix));
        if full && BULK_STORE {
            // SAFETY: this thread's chunk, read by the bulk store after the barrier below.
            unsafe { buf.write_v4(c, out) };
        } else if full {
            // SAFETY: base + c + 3 < n; 16-byte aligned; these 16 bytes are this thread's.
            unsafe { output.store_v4_streaming(base + c, out) };
        } else {
            // SAFETY: output holds n elements; these elements are this thread's.
            unsafe { store_chunk_guarded(output, base + c, n, out) };
        }
    }
    if full && BULK_STORE {
        // The threads' writes (generic proxy) before the copy engine's reads (async proxy).
        fence_proxy_async();
        sync_threads();
        if tid == 0 {
            // SAFETY: the whole tile lies in the output (full), 16-byte aligned; fenced and
            // behind a barrier; nobody writes these shared words until the group has been read.
            unsafe { buf.store_bulk(0, output.offset(base), THREADS * 4 * ROWS, policy) };
            bulk_commit();
        }
        sync_warp(FULL_MASK);
    } else {
        sync_threads();
    }
}

/// The body of `lookback_bulk` and of its ablation: `lookback`'s tile `blockIdx.x` and phases,
/// the full tile loaded by one bulk copy; `BULK_STORE` stores it with one too.
///
/// # Safety
/// As for [`lookback_bulk`]; `smem` is the block's shared array of `shared_words(tile)` words,
/// `bar` one `mbarrier` word.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
unsafe fn bulk_tile<const THREADS: usize, const ROWS: usize, const BULK_STORE: bool>(
    input: Global<i32>,
    output: GlobalMut<i32>,
    status: GlobalMut<u64>,
    (n, epoch, exclusive): (u32, u32, u32),
    smem: Shared<i32>,
    bar: Shared<u64>,
) {
    const {
        assert!(THREADS.is_multiple_of(WARP_SIZE as usize) && THREADS <= 1024, "whole warps, at most 1024 threads");
        assert!(blocked_is_conflict_free(4 * ROWS), "an odd number of 16-byte chunks per thread");
    };
    if block_dim_x() as usize != THREADS {
        trap("lookback_bulk launched with a block size other than the one it was compiled for");
    }
    let tile_len = THREADS * 4 * ROWS;
    let (tid, n) = (thread_idx_x() as usize, n as usize);
    let tile = block_idx_x() as usize;
    let base = tile * tile_len;
    let full = base + tile_len <= n;
    let policy = l2_evict_first_policy();
    // 1.–2. The tile: one bulk copy by thread 0, which waits for its bytes; the partial last
    //    tile through registers by every thread, zeros past n.
    if full {
        if tid == 0 {
            // SAFETY: one barrier, set up and used by thread 0 alone; a whole tile inside the
            // input, 16-byte aligned (a multiple of 4 elements from an aligned input); nobody
            // touches the shared tile until the phase completes.
            unsafe {
                let bar = Mbarrier::at(bar, 0);
                bar.init(1);
                fence_proxy_async();
                bar.arrive_expect_tx((tile_len * 4) as u32);
                smem.copy_bulk(0, input.wrapping_offset(base), tile_len, bar, policy);
                bar.wait_parity(0);
            }
        }
        // Warp 0 converges before the barrier: `bar.sync` is `.aligned`.
        sync_warp(FULL_MASK);
    } else {
        for r in 0..ROWS {
            let c = striped_chunk(tid, r, THREADS);
            // SAFETY: input holds n elements; this thread's chunk.
            unsafe { smem.write_v4(c, load_chunk_guarded(input, base + c, n)) };
        }
    }
    sync_threads();
    let lane = thread_idx_x() % WARP_SIZE;
    let t = TileThread { tid, lane, warp: tid / WARP_SIZE as usize, tile, ctrl: tile_len };
    // 3.–6. `lookback`'s phases. SAFETY: the tile is loaded and visible; every thread runs them.
    let prefix = unsafe {
        scan_loaded_tile::<i32, crate::types::Sum, i32, THREADS, ROWS, { super::lookback::LOOKBACK_SLEEP_NS }>(
            t,
            smem,
            Status::packed(status),
            epoch,
            exclusive,
        )
    };
    // 7. Store. SAFETY: this thread's chunks of the scanned tile; output holds n elements.
    unsafe { store_tile::<THREADS, ROWS, BULK_STORE>(smem, output, (base, n), prefix, full, policy) };
    if BULK_STORE && tid == 0 {
        // The block's shared memory must outlive the reads of its bulk store.
        bulk_wait_read::<0>();
    }
}

/// `lookback_bulk`'s body with its shared memory: the tile and the control words, and one
/// `mbarrier`.
///
/// # Safety
/// As for [`lookback_bulk`].
#[inline(always)]
unsafe fn bulk_with<const BULK_STORE: bool>(
    input: Global<i32>,
    output: GlobalMut<i32>,
    status: GlobalMut<u64>,
    args: (u32, u32, u32),
) {
    let smem = static_shared!(BULK_SHARED: [i32; shared_words(BULK_TILE as usize)]);
    let bar = static_shared!(BULK_BARRIER: [u64; 1]);
    // SAFETY: forwarded from the caller; the arrays have the sizes bulk_tile needs.
    unsafe {
        bulk_tile::<{ BULK_THREADS as usize }, { BULK_ITEMS as usize / 4 }, BULK_STORE>(
            input, output, status, args, smem, bar,
        )
    }
}

kernel! {
    /// `lookback` whose tile is loaded, and stored, by Hopper's bulk-copy engine (TMA): one
    /// instruction by one thread moves the whole 36 KiB tile.
    ///
    /// # Concept
    /// **Asynchronous bulk copies.** On sm_90 one instruction, `cp.async.bulk`, asks the copy
    /// engine to move a whole tile between global and shared memory; the issuing thread goes
    /// on, and an `mbarrier` in shared memory counts the bytes as they land
    /// (`mbarrier.arrive.expect_tx` with the bytes to come, then `mbarrier.try_wait.parity`).
    /// The other direction, shared to global, joins a *bulk group* that the thread can wait
    /// for (`cp.async.bulk.wait_group.read`: until the engine has read the shared bytes). Shared
    /// memory written by the threads must be fenced for the engine
    /// (`fence.proxy.async.shared::cta`) before it reads it.
    ///
    /// # Previous problem → fix
    /// `lookback` moves its tile with `cp.async`: 256 threads × 9 instructions of 16 bytes each,
    /// and each thread waits for its own group; it stores through registers, 9 `st.global.cs.v4`
    /// per thread. Its DRAM throughput is 81–82 % of peak at 2^28 on an H100 against about 90 %
    /// for a copy. Here the tile's 36 KiB go in one bulk copy and come out in one bulk store:
    /// the same bytes with 2 instructions instead of 4,608, the question being whether the copy
    /// engine keeps DRAM busier than the threads did (`# Measured`).
    ///
    /// # Execution
    /// As `lookback`, one block per tile `blockIdx.x`, tile of `BULK_TILE` elements in static
    /// shared memory, with phases 2 and 7 changed:
    /// 1. **Tile** `blockIdx.x`.
    /// 2. **Load**: thread 0 initialises the `mbarrier`, fences it for the copy engine, arrives
    ///    expecting the tile's bytes, issues one `cp.async.bulk` of the tile (under an L2
    ///    evict-first policy) and waits for the phase; `__syncwarp` (warp 0 converges:
    ///    `bar.sync` is `.aligned`); barrier. The partial last tile through registers, as
    ///    `lookback`.
    /// 3.–6. `lookback`'s reduce, aggregate, scan in place and look-back.
    /// 7. **Store**: every thread adds the prefix to its striped chunks and writes them back to
    ///    shared memory; `fence.proxy.async`; barrier; thread 0 issues one bulk store of the
    ///    tile (evict-first) and waits until the engine has read it, before the block exits.
    ///
    /// ```text
    ///  thread 0:  init bar ─ expect 36 KiB ─ cp.async.bulk ─ wait ┐            ┌ cp.async.bulk (store) ─ wait read
    ///  block:                                                     └ scan ─ look back ┘
    /// ```
    ///
    /// # Launch
    /// As `lookback`: grid `ceil(n / BULK_TILE)`, block `BULK_THREADS` (traps otherwise),
    /// `(BULK_TILE + 36) × 4 + 16` bytes of static shared memory (the tile, the control words,
    /// the `mbarrier`). sm_90 only (the host's `min_cc`; elsewhere its bulk copies are slow
    /// synchronous loops).
    ///
    /// # Preconditions
    /// As for `lookback`.
    ///
    /// # Safety
    /// As for `lookback`; the `mbarrier` is used by thread 0 alone, once per launch of a block
    /// (phase 0), and the bulk store's shared bytes stay untouched until it has read them.
    ///
    /// # Measured
    /// NVIDIA H100 80GB HBM3, inclusive scan, median of 10 timed runs per row, every output checked, beside `lookback` and a device-to-device copy of the same input in the same invocations (`docs/measurements/2026-11-25-h100/bulk/scan_rounds_1e8.csv`, commit 15f6ff7, `docs/measurements/2026-11-25-h100/bulk/scan_2e28.csv`, commit 15f6ff7); the spread of the rounds' medians:
    ///
    /// | n | rounds | lookback_bulk | lookback | copy | lookback_bulk / lookback |
    /// |---|---|---|---|---|---|
    /// | 100,000,000 | 2 | 291.8 µs – 293.6 µs | 283.9 µs – 285.2 µs | 269.3 µs – 269.7 µs | 1.03 |
    /// | 268,435,456 | 1 | 787.9 µs | 770.4 µs | — | 1.02 |
    ///
    /// Slower than `lookback` at both sizes, so the scan's plan keeps `lookback` on sm_90 (`BULK_ON_SM90` in the host's `scan` module); `docs/scan-bulk.md` says why.
    pub unsafe fn lookback_bulk(
        input: Global<i32>,
        output: GlobalMut<i32>,
        status: GlobalMut<u64>,
        n: u32,
        epoch: u32,
        exclusive: u32,
    ) {
        // SAFETY: forwarded from the caller.
        unsafe { bulk_with::<true>(input, output, status, (n, epoch, exclusive)) }
    }
}

kernel! {
    /// `lookback_bulk` that stores through registers (`st.global.cs.v4`, as `lookback`) and
    /// loads with one bulk copy: an ablation of the store path.
    ///
    /// # Concept
    /// **One change at a time**: the bulk load alone.
    ///
    /// # Previous problem → fix
    /// `lookback_bulk` changes both the load and the store; this keeps `lookback`'s store.
    ///
    /// # Execution
    /// As `lookback_bulk`, with phase 7 as `lookback`'s.
    ///
    /// # Launch
    /// As `lookback_bulk`.
    ///
    /// # Preconditions
    /// As for `lookback`.
    ///
    /// # Safety
    /// As for `lookback_bulk`.
    ///
    /// # Measured
    /// An ablation: `scripts/gpu/bulk_scan.sh` times it beside `lookback_bulk`.
    pub unsafe fn lookback_bulk_load_only(
        input: Global<i32>,
        output: GlobalMut<i32>,
        status: GlobalMut<u64>,
        n: u32,
        epoch: u32,
        exclusive: u32,
    ) {
        // SAFETY: forwarded from the caller.
        unsafe { bulk_with::<false>(input, output, status, (n, epoch, exclusive)) }
    }
}
