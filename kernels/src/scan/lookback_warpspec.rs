use super::index::{FLAG_AGGREGATE, FLAG_PREFIX, blocked_chunk, blocked_is_conflict_free, stage_of, striped_chunk};
use super::lookback::{
    LOOKBACK_SLEEP_NS, Status, fold_chunk, load_guarded, look_back, look_back_windows, pack, read_slot, store_guarded,
    unpack, warp_exclusive, warp_inclusive_scan, words, write_slot,
};
use super::lookback_persistent::draw_tile;
use crate::device::bulk::{Mbarrier, bulk_commit, bulk_wait_read, fence_proxy_async};
use crate::device::global::{Global, GlobalMut, l2_evict_first_policy};
use crate::device::shared::{Shared, dynamic_shared};
use crate::device::thread::{block_dim_x, named_barrier_sync, sync_threads, thread_idx_x};
use crate::device::warp::{Word, shfl_sync, sync_warp};
use crate::device::{FULL_MASK, WARP_SIZE, trap};
use crate::types::{Element, Operator, Sum};
use crate::{kernel, static_shared, typed_kernel};

// ---------------------------------------------------------------------------------------
// Tuning: every knob of the warp-specialized scan is a const generic of its body; the shapes
// compiled into the PTX are listed here, `lookback_warpspec` itself being the first.

/// Compute warps per block of `lookback_warpspec` (the block adds a producer warp and a
/// look-ahead warp).
pub const WARPSPEC_WARPS: u32 = 8;
/// Elements per compute thread of `lookback_warpspec`: an odd multiple of 4 (conflict-free
/// blocked shared reads, as in `lookback`).
pub const WARPSPEC_ITEMS: u32 = 20;
/// Tiles in `lookback_warpspec`'s shared-memory ring.
pub const WARPSPEC_STAGES: u32 = 4;

/// Every shape of the warp-specialized scan compiled into the PTX, as (compute warps, items per
/// thread, ring stages): the kernel `lookback_warpspec_{warps}x{items}x{stages}`, and
/// `lookback_warpspec` for the first. The host registers one variant per entry (a unit test
/// keeps the lists equal); `scripts/gpu/warpspec_sweep.sh` times them all, and the per-device
/// table (`host/src/scan/plan_by_device.csv`) names the one the plan runs on each GPU.
///
/// What bounds a shape: the ring, `stages × warps × 32 × items × 4` bytes of dynamic shared
/// memory (with the static barriers and control words, at most 227 KiB: checked below), and the
/// bytes a block keeps in flight; the block has `(warps + 2) × 32` threads. The stages also set
/// how far ahead the compute warps reduce: `stages - 2` uses (at least one). A stage holds its
/// tile from the load to the scan, so while the compute warps wait for a tile, `stages - ahead`
/// = 2 tiles are loading per block whatever the depth (the `…_ahead{n}` experiments load more:
/// slower, `docs/measurements/2026-11-27-h100/warpspec-ahead-628fa43/`).
pub const WARPSPEC_SHAPES: [(u32, u32, u32); 18] = [
    (8, 20, 4),
    (8, 12, 4),
    (8, 12, 6),
    (8, 28, 3),
    (4, 20, 4),
    (4, 36, 4),
    (8, 36, 3),
    (16, 12, 4),
    (8, 20, 6),
    (8, 28, 5),
    (8, 12, 8),
    (8, 12, 10),
    (16, 12, 6),
    (4, 12, 6),
    (4, 12, 8),
    (8, 4, 6),
    (10, 12, 4),
    (12, 12, 4),
];

/// The most shared memory a block may have on sm_90 (227 KiB, with the opt-in).
const MAX_BLOCK_SHARED: u32 = 227 * 1024;

// Every shape's ring and control words fit one block's shared memory.
const _: () = {
    let mut i = 0;
    while i < WARPSPEC_SHAPES.len() {
        let (warps, items, stages) = WARPSPEC_SHAPES[i];
        assert!(
            warpspec_shared_bytes(warps, items, stages) + warpspec_static_bytes(warps, stages) <= MAX_BLOCK_SHARED,
            "a shape of WARPSPEC_SHAPES needs more than 227 KiB of shared memory"
        );
        i += 1;
    }
};

/// Threads per block of the warp-specialized scan with `warps` compute warps: one producer
/// warp, one look-ahead warp, the compute warps.
pub const fn warpspec_threads(warps: u32) -> u32 {
    warpspec_threads_with(warps, 1)
}

/// Threads per block of a warp-specialized scan with `warps` compute warps and `lookaheads`
/// look-ahead warps (the `…_lookahead{n}` experiments): one producer warp, the look-ahead
/// warps, the compute warps.
pub const fn warpspec_threads_with(warps: u32, lookaheads: u32) -> u32 {
    (warps + 1 + lookaheads) * WARP_SIZE
}

/// Elements per tile of the warp-specialized scan of 32-bit elements with `warps` compute warps
/// of `items` elements per thread.
pub const fn warpspec_tile(warps: u32, items: u32) -> u32 {
    warps * WARP_SIZE * items
}

/// Dynamic shared memory of a warp-specialized block: its ring of `stages` tiles.
pub const fn warpspec_shared_bytes(warps: u32, items: u32, stages: u32) -> u32 {
    stages * warpspec_tile(warps, items) * 4
}

/// Static shared memory of a warp-specialized block: four `mbarrier`s per stage, then per stage
/// the ticket word and two 2-word slots per compute warp (each array 16-byte aligned).
pub const fn warpspec_static_bytes(warps: u32, stages: u32) -> u32 {
    warpspec_static_bytes_with(warps, stages, false)
}

/// Static shared memory of a warp-specialized block, with one hand-off word per stage after the
/// control words where `handoff` (the `…_early_empty` experiments).
pub const fn warpspec_static_bytes_with(warps: u32, stages: u32, handoff: bool) -> u32 {
    let bars = 4 * stages * 8;
    let ctrl = (stages * ctrl_per_stage(warps as usize) as u32 + if handoff { stages } else { 0 }) * 4;
    bars.next_multiple_of(16) + ctrl.next_multiple_of(16)
}

/// The named barrier (`bar.sync 1, warps × 32`) at which the compute warps meet once per tile,
/// after their reduce; no other warp takes part.
const COMPUTE_BARRIER: u32 = 1;

/// Control words per stage: the tile's ticket, then one slot per compute warp for its total,
/// then one per compute warp for its offset (two words per slot: room for 64-bit values).
const fn ctrl_per_stage(warps: usize) -> usize {
    1 + 4 * warps
}

/// The four `mbarrier`s of stage `s` among `4 × stages`: which one, by role.
#[derive(Clone, Copy)]
enum Bar {
    /// The tile has landed (the producer's 32 lanes arrive, each after its own writes; the
    /// copy's bytes count).
    Full = 0,
    /// The compute warps have reduced it (compute warp 0 arrives, after their named barrier).
    Summed = 1,
    /// The look-ahead warp has written the compute warps' offsets (its 32 lanes arrive, each
    /// after its own write).
    Ready = 2,
    /// The compute warps are done with the stage (each compute warp arrives once).
    Empty = 3,
}

/// Where one block keeps its stages: the ring, the control words, the barriers.
#[derive(Clone, Copy)]
struct Ring<W> {
    /// `stages` tiles of `tile_words` words.
    tiles: Shared<W>,
    /// `stages × ctrl_per_stage(warps)` words.
    ctrl: Shared<u32>,
    /// `4 × stages` barriers, `Bar` by `Bar`.
    bars: Shared<u64>,
    stages: usize,
    warps: usize,
    tile_words: usize,
}

impl<W: Word> Ring<W> {
    /// Sets every stage's four barriers up, with the arrivals each phase expects, and makes
    /// the initialisation visible to the copy engine (`fence.proxy.async`).
    ///
    /// # Safety
    /// By one thread, before any other touches the barriers (a block barrier after it).
    #[inline(always)]
    unsafe fn init_barriers(self) {
        for s in 0..self.stages {
            // SAFETY: the caller's promise; the counts are the arrivals each phase expects.
            unsafe {
                self.bar(Bar::Full, s).init(WARP_SIZE);
                self.bar(Bar::Summed, s).init(1);
                self.bar(Bar::Ready, s).init(WARP_SIZE);
                self.bar(Bar::Empty, s).init(self.warps as u32);
            }
        }
        fence_proxy_async();
    }

    /// Barrier `which` of stage `s`.
    #[inline(always)]
    fn bar(self, which: Bar, s: usize) -> Mbarrier {
        // SAFETY: which × stages + s < 4 × stages, the array's length.
        unsafe { Mbarrier::at(self.bars, which as usize * self.stages + s) }
    }

    /// Stage `s`'s tile.
    #[inline(always)]
    fn tile(self, s: usize) -> Shared<W> {
        // SAFETY: s < stages, so the tile lies inside the ring.
        unsafe { self.tiles.offset(s * self.tile_words) }
    }

    /// Word of stage `s`'s control block where its ticket is.
    #[inline(always)]
    fn ticket_at(self, s: usize) -> usize {
        s * ctrl_per_stage(self.warps)
    }

    /// Word of stage `s`'s control block where the compute warps' totals start.
    #[inline(always)]
    fn totals_at(self, s: usize) -> usize {
        self.ticket_at(s) + 1
    }

    /// Word where the compute warps' offsets start.
    #[inline(always)]
    fn offsets_at(self, s: usize) -> usize {
        self.totals_at(s) + 2 * self.warps
    }

    /// Word where compute warp 0 hands stage `s`'s ticket to the look-ahead warp, in the
    /// `…_early_empty` experiments (after every stage's control block): there the producer may
    /// rewrite the stage's own ticket word before the look-ahead warp reads it.
    #[inline(always)]
    fn handoff_at(self, s: usize) -> usize {
        self.stages * ctrl_per_stage(self.warps) + s
    }
}

/// What every role knows of the launch.
#[derive(Clone, Copy)]
struct Launch<T> {
    input: Global<T>,
    output: GlobalMut<T>,
    status: Status<T>,
    /// The ticket counter (`status[words_per_tile() × tiles]`, after every tile's words).
    counter: GlobalMut<u64>,
    n: usize,
    tiles: usize,
    /// Elements per tile.
    tile_len: usize,
    epoch: u32,
    exclusive: u32,
}

/// The producer warp: draws each stage's tile by ticket and fills the stage, `stages` tiles
/// ahead of the compute warps. A full tile is one bulk copy by lane 0 (`arrive.expect_tx`, then
/// `cp.async.bulk`), the other lanes arriving plainly; the partial last tile is loaded by the 32
/// lanes through registers, with the identity past `n`, each lane arriving after its stores; a
/// ticket past the last tile is passed on as `tiles`, once per look-ahead warp (in consecutive
/// uses, drawing no more tickets after the first), and ends the loop. Every lane arrives on
/// *Full* (32 arrivals a phase): a lane's own arrival is what releases its stores (a
/// `__syncwarp` and lane 0's arrival do not, for compute-sanitizer's racecheck).
///
/// # Safety
/// Called by the 32 lanes of warp 0, after the barriers were initialised; `ring` and `l` as
/// [`warpspec`] describes them.
#[inline(always)]
unsafe fn produce<T: Element, O: Operator<T>, W: Word, const LOOKAHEADS: usize>(
    ring: Ring<W>,
    l: Launch<T>,
    lane: u32,
) {
    let per = words::<T>();
    let policy = l2_evict_first_policy();
    let mut k = 0;
    // Tickets past the last tile passed on so far: one per look-ahead warp ends the loop.
    let mut ends = 0;
    loop {
        let (s, parity) = stage_of(k, ring.stages);
        if lane == 0 && k >= ring.stages {
            // The compute warps are done with the stage's previous tile. SAFETY: an initialised
            // barrier; its phase for that tile is the last one, of the other parity.
            unsafe { ring.bar(Bar::Empty, s).wait_parity(parity ^ 1) };
        }
        // The other lanes touch the stage only after lane 0's wait.
        sync_warp(FULL_MASK);
        let drawn = if LOOKAHEADS > 1 && ends > 0 {
            l.tiles
        } else if lane == 0 {
            // SAFETY: the launch's ticket word.
            unsafe { draw_tile(l.counter, l.epoch, k == 0) }.min(l.tiles)
        } else {
            0
        };
        let tile = shfl_sync(FULL_MASK, drawn as u32, 0) as usize;
        let base = tile * l.tile_len;
        let stage = ring.tile(s);
        if lane == 0 {
            // SAFETY: the stage's ticket word, read by the others after this lane's arrival.
            unsafe { ring.ctrl.write(ring.ticket_at(s), tile as u32) };
        }
        let full = ring.bar(Bar::Full, s);
        if tile < l.tiles && base + l.tile_len <= l.n {
            if lane == 0 {
                // The compute warps' accesses to the stage (generic proxy) come before the copy
                // engine's writes. SAFETY: an initialised barrier; a whole tile inside the input,
                // 16-byte aligned (a multiple of 4 words from an aligned input); nobody touches
                // the stage until the phase completes.
                unsafe {
                    fence_proxy_async();
                    full.arrive_expect_tx((ring.tile_words * 4) as u32);
                    stage.copy_bulk(0, l.input.cast::<W>().wrapping_offset(base * per), ring.tile_words, full, policy);
                }
            } else {
                // SAFETY: an initialised barrier, whose phase expects the warp's 32 arrivals.
                unsafe { full.arrive() };
            }
        } else {
            if tile < l.tiles {
                for r in 0..ring.tile_words / (4 * WARP_SIZE as usize) {
                    let c = striped_chunk(lane as usize, r, WARP_SIZE as usize);
                    // SAFETY: input holds n elements; this lane's chunk of the stage, which no
                    // other warp touches before the arrival below.
                    unsafe { stage.write_v4(c, load_guarded::<T, O, W>(l.input, base + c / per, l.n)) };
                }
            }
            // Every lane releases its own stores (and lane 0 the ticket word) by its arrival.
            // SAFETY: an initialised barrier, whose phase expects the warp's 32 arrivals.
            unsafe { full.arrive() };
            if tile >= l.tiles {
                ends += 1;
                if LOOKAHEADS == 1 || ends == LOOKAHEADS {
                    return;
                }
            }
        }
        k += 1;
    }
}

/// The look-back a look-ahead warp runs: [`look_back`] (one window of 32 predecessors per round
/// trip) where `WINDOWS` is 1, else [`look_back_windows`] (`WINDOWS` windows per round trip).
/// (Its own function: the same choice written in the look-ahead warp moved an instruction in every
/// warp-specialized entry.)
///
/// # Safety
/// As for [`look_back`].
#[inline(always)]
unsafe fn look_back_by<T: Element, O: Operator<T>, const SLEEP_NS: u32, const WINDOWS: usize>(
    status: Status<T>,
    tile: usize,
    epoch: u32,
    lane: u32,
) -> T {
    // SAFETY: forwarded.
    unsafe {
        if WINDOWS == 1 {
            look_back::<T, O, SLEEP_NS>(status, tile, epoch, lane)
        } else {
            look_back_windows::<T, O, SLEEP_NS, WINDOWS>(status, tile, epoch, lane)
        }
    }
}

/// The look-ahead warp: for each of the block's tiles in turn, once the compute warps have
/// reduced it, looks back over its predecessors (the decoupled look-back, a whole warp),
/// publishes its inclusive prefix, and hands each compute warp its offset (the tile's prefix
/// and the totals of the compute warps before it): lane `w` writes compute warp `w`'s, and
/// every lane arrives on *Ready* (32 arrivals a phase, each releasing its lane's write). Ends at
/// the ticket past the last tile.
///
/// # Safety
/// Called by the 32 lanes of look-ahead warp `j` (warp `j + 1`, taking uses `j`, `j + LOOKAHEADS`,
/// …), after the barriers were initialised.
#[inline(always)]
unsafe fn look_ahead<
    T: Element,
    O: Operator<T>,
    W: Word,
    const LOOKAHEADS: usize,
    const EARLY: bool,
    const SLEEP_NS: u32,
    const WINDOWS: usize,
>(
    ring: Ring<W>,
    l: Launch<T>,
    (j, lane): (usize, u32),
) {
    let mut k = j;
    loop {
        let (s, parity) = stage_of(k, ring.stages);
        // SAFETY: an initialised barrier; this tile's phase.
        unsafe { ring.bar(Bar::Summed, s).wait_parity(parity) };
        // SAFETY: written before the arrival this wait saw (the producer's, through the compute
        // warps' acquire and release; or compute warp 0's hand-off, where EARLY).
        let tile = unsafe { ring.ctrl.read(if EARLY { ring.handoff_at(s) } else { ring.ticket_at(s) }) } as usize;
        if tile >= l.tiles {
            return;
        }
        let own = if (lane as usize) < ring.warps {
            // SAFETY: compute warp `lane`'s total, written before compute warp 0's arrival.
            unsafe { read_slot::<T, u32>(ring.ctrl, ring.totals_at(s), lane as usize) }
        } else {
            O::IDENTITY
        };
        let inclusive = warp_inclusive_scan::<T, O>(own, lane);
        let before = warp_exclusive::<T, O>(inclusive, own, lane);
        let aggregate = shfl_sync(FULL_MASK, inclusive, ring.warps as u32 - 1);
        let prefix = if tile == 0 {
            O::IDENTITY
        } else {
            // SAFETY: the whole warp, with the same tile and epoch; status holds every tile's words.
            let prefix = unsafe { look_back_by::<T, O, SLEEP_NS, WINDOWS>(l.status, tile, l.epoch, lane) };
            if lane == 0 {
                // SAFETY: tile < tiles; its aggregate went out first (compute warp 0, before the
                // arrival this warp waited for).
                unsafe { l.status.publish(tile, l.epoch, FLAG_PREFIX, O::combine(prefix, aggregate)) };
            }
            prefix
        };
        if (lane as usize) < ring.warps {
            // SAFETY: compute warp `lane`'s offset slot, read after this lane's arrival below.
            unsafe { write_slot::<T, u32>(ring.ctrl, ring.offsets_at(s), lane as usize, O::combine(prefix, before)) };
        }
        // Every lane releases its own write by its arrival. SAFETY: an initialised barrier,
        // whose phase expects the warp's 32 arrivals.
        unsafe { ring.bar(Bar::Ready, s).arrive() };
        k += LOOKAHEADS;
    }
}

/// The lane's `ROWS` blocked chunks of compute warp `cw`'s region of stage `s`.
///
/// # Safety
/// The stage has landed (its *Full* phase completed for this use) and is not written until this
/// warp's scan of it.
#[inline(always)]
unsafe fn lane_chunks<W: Word, const ROWS: usize>(ring: Ring<W>, s: usize, (cw, lane): (usize, u32)) -> [[W; 4]; ROWS] {
    let region = ring.tile(s);
    let items = 4 * ROWS;
    let first = cw * WARP_SIZE as usize * items;
    // SAFETY: this lane's chunks of the stage, as the caller promises.
    core::array::from_fn(|r| unsafe { region.read_v4(first + blocked_chunk(lane as usize, r, items)) })
}

/// The lane's total: `⊕` of its chunks, in their order (the same fold in [`reduce`] and in
/// [`scan_store`], so both find the same value, for floats too).
#[inline(always)]
fn lane_total<T: Element, O: Operator<T>, W: Word, const ROWS: usize>(chunks: &[[W; 4]; ROWS]) -> T {
    let mut own = O::IDENTITY;
    for c in chunks {
        own = fold_chunk::<T, O, W>(own, *c);
    }
    own
}

/// A compute warp's first pass over the tile of use `k`: waits for the stage, reduces the
/// lane's blocked chunks, scans the lane totals across the warp (lane 31 leaves the warp's total
/// in its slot), and meets the other compute warps; compute warp 0 then publishes the tile's
/// aggregate (tile 0: its inclusive prefix) and hands the stage to the look-ahead warp. Keeps
/// nothing in registers ([`scan_store`] recomputes what it needs from the stage). Returns
/// whether the use had a tile: `false` at the ticket past the last tile, which is passed on to
/// the look-ahead warp through the same barrier.
///
/// # Safety
/// Called by every lane of every compute warp (`cw` its number), uses in order.
#[inline(always)]
unsafe fn reduce<T: Element, O: Operator<T>, W: Word, const ROWS: usize, const EARLY: bool>(
    ring: Ring<W>,
    l: Launch<T>,
    k: usize,
    (cw, lane): (usize, u32),
) -> bool {
    let (s, parity) = stage_of(k, ring.stages);
    // SAFETY: an initialised barrier; this use's phase.
    unsafe { ring.bar(Bar::Full, s).wait_parity(parity) };
    // SAFETY: written by the producer's lane 0 before its arrival.
    let tile = unsafe { ring.ctrl.read(ring.ticket_at(s)) } as usize;
    if EARLY && cw == 0 && lane == 0 {
        // The ticket for the look-ahead warp, in a word the producer does not write. SAFETY:
        // compute warp 0's own word; the look-ahead warp reads it after the arrival below, and
        // it is rewritten only at this stage's next reduce, after this use's offsets were read.
        unsafe { ring.ctrl.write(ring.handoff_at(s), tile as u32) };
    }
    if tile >= l.tiles {
        if cw == 0 && lane == 0 {
            // The look-ahead warp learns of the end through the same barrier. SAFETY: as above.
            unsafe { ring.bar(Bar::Summed, s).arrive() };
        }
        return false;
    }
    // SAFETY: landed (the phase above), and not written before this warp's scan of the use.
    let own = lane_total::<T, O, W, ROWS>(&unsafe { lane_chunks::<W, ROWS>(ring, s, (cw, lane)) });
    let inclusive = warp_inclusive_scan::<T, O>(own, lane);
    if lane == WARP_SIZE - 1 {
        // SAFETY: this warp's total slot of the stage; read after the named barrier.
        unsafe { write_slot::<T, u32>(ring.ctrl, ring.totals_at(s), cw, inclusive) };
    }
    // SAFETY: every compute thread comes here once per use, with the same count.
    unsafe { named_barrier_sync(COMPUTE_BARRIER, (ring.warps * WARP_SIZE as usize) as u32) };
    if cw == 0 && lane == 0 {
        let mut aggregate = O::IDENTITY;
        for w in 0..ring.warps {
            // SAFETY: written before the named barrier.
            aggregate = O::combine(aggregate, unsafe { read_slot::<T, u32>(ring.ctrl, ring.totals_at(s), w) });
        }
        let flag = if tile == 0 { FLAG_PREFIX } else { FLAG_AGGREGATE };
        // SAFETY: tile < tiles, whose words status holds; its first publication, by this thread
        // alone.
        // Then the stage goes to the look-ahead warp (an initialised barrier; one arrival).
        unsafe {
            l.status.publish(tile, l.epoch, flag, aggregate);
            ring.bar(Bar::Summed, s).arrive();
        }
    }
    true
}

/// The scanned elements of one 16-byte chunk `x` after the running value `run` (inclusive,
/// or exclusive where `exclusive` ≠ 0), `run` moving past them. ([`scan_store`] keeps its own
/// copy of this loop: through this helper its measured entries' PTX changes, the float min/max
/// rows' branch sense.)
#[inline(always)]
fn scan_chunk<T: Element, O: Operator<T>>(x: [T; 4], run: &mut T, exclusive: u32) -> [T; 4] {
    let mut out = [O::IDENTITY; 4];
    for e in 0..T::PER_128 {
        if exclusive != 0 {
            out[e] = *run;
            *run = O::combine(*run, x[e]);
        } else {
            *run = O::combine(*run, x[e]);
            out[e] = *run;
        }
    }
    out
}

/// A compute warp's second pass over the tile of use `k`, giving the stage back first (the
/// `…_early_empty` experiments): reads the lane's chunks **striped** (chunk `32 r + lane` of the
/// warp's region, row `r`) and the tile's ticket, arrives on *empty* (the producer may refill the
/// stage from here on), scans each row's chunk totals across the warp, then waits for the warp's
/// offset, scans the chunks in registers and stores each row with one whole-warp 16-byte store
/// (512 consecutive bytes). The first form kept the chunks blocked, as [`reduce`] reads them, and
/// stored them so: 16 bytes per lane at a stride of `4 × ROWS` words, every 32-byte sector half
/// written by each store; it took 1.6× the copy's time on the H200
/// (`docs/measurements/2026-11-27-h200/warpspec-early-24b7022/`).
///
/// # Safety
/// As for [`scan_store`].
#[inline(always)]
unsafe fn scan_store_early<T: Element, O: Operator<T>, W: Word, const ROWS: usize>(
    ring: Ring<W>,
    l: Launch<T>,
    k: usize,
    (cw, lane): (usize, u32),
) {
    let (s, parity) = stage_of(k, ring.stages);
    let region = ring.tile(s);
    let first = cw * WARP_SIZE as usize * 4 * ROWS;
    let at = |r: usize| first + striped_chunk(lane as usize, r, WARP_SIZE as usize);
    // SAFETY: landed (reduce waited for the phase); the stage and its ticket word are
    // rewritten only after this warp's arrival on *Empty* below.
    let chunks: [[W; 4]; ROWS] = core::array::from_fn(|r| unsafe { region.read_v4(at(r)) });
    // SAFETY: as above; written by the producer before the *Full* phase.
    let tile = unsafe { ring.ctrl.read(ring.ticket_at(s)) } as usize;
    // This warp's shared reads (generic proxy) before the copy engine refills the stage.
    fence_proxy_async();
    sync_warp(FULL_MASK);
    if lane == 0 {
        // SAFETY: an initialised barrier expecting one arrival per compute warp.
        unsafe { ring.bar(Bar::Empty, s).arrive() };
    }
    // Each chunk's prefix within the warp's region: the rows before it, then the lanes before
    // it in its row.
    let mut before = [O::IDENTITY; ROWS];
    let mut rows = O::IDENTITY;
    for (r, chunk) in chunks.iter().enumerate() {
        let own = fold_chunk::<T, O, W>(O::IDENTITY, *chunk);
        let inclusive = warp_inclusive_scan::<T, O>(own, lane);
        before[r] = O::combine(rows, warp_exclusive::<T, O>(inclusive, own, lane));
        rows = O::combine(rows, shfl_sync(FULL_MASK, inclusive, WARP_SIZE - 1));
    }
    // SAFETY: an initialised barrier; this use's phase. The offset slots of the stage's next
    // use are written only after every compute warp reduced that use, after this pass.
    unsafe { ring.bar(Bar::Ready, s).wait_parity(parity) };
    // SAFETY: written by the look-ahead warp's lane `cw` before its arrival.
    let offset = unsafe { read_slot::<T, u32>(ring.ctrl, ring.offsets_at(s), cw) };
    let per = words::<T>();
    let base = tile * l.tile_len;
    let full = base + l.tile_len <= l.n;
    let dst = l.output.cast::<W>();
    for (r, chunk) in chunks.iter().enumerate() {
        let mut run = O::combine(offset, before[r]);
        let out = pack::<T, W>(scan_chunk::<T, O>(unpack::<T, W>(*chunk), &mut run, l.exclusive));
        if full {
            // SAFETY: inside the output (a full tile), 16-byte aligned; this lane's 16 bytes.
            unsafe { dst.store_v4_streaming(base * per + at(r), out) };
        } else {
            // SAFETY: output holds n elements; these are this lane's.
            unsafe { store_guarded::<T, W>(l.output, base + at(r) / per, l.n, out) };
        }
    }
}

/// A compute warp's second pass over the tile of use `k`: recomputes the lane's total and the
/// warp's scan of the lane totals from the stage (what [`reduce`] found, `STAGES - 2` uses
/// earlier; not kept, since registers indexed by use would go to local memory) and reads the
/// tile from the stage's ticket word, while the look-ahead warp may still be working; once
/// it has the warp's offset, scans the lane's elements in place (blocked), then stores the
/// warp's region (striped, whole-warp 16-byte stores); the stage goes back to the producer.
///
/// # Safety
/// After [`reduce`] of the same use returned `true`; by every lane of the compute warp.
#[inline(always)]
unsafe fn scan_store<T: Element, O: Operator<T>, W: Word, const ROWS: usize, const STORE_BULK: bool>(
    ring: Ring<W>,
    l: Launch<T>,
    k: usize,
    (cw, lane): (usize, u32),
) {
    let (s, parity) = stage_of(k, ring.stages);
    // SAFETY: landed (reduce waited for the phase), and written only by this warp's scan below.
    let chunks = unsafe { lane_chunks::<W, ROWS>(ring, s, (cw, lane)) };
    let own = lane_total::<T, O, W, ROWS>(&chunks);
    let before = warp_exclusive::<T, O>(warp_inclusive_scan::<T, O>(own, lane), own, lane);
    // SAFETY: written by the producer before the *Full* phase reduce waited for; rewritten only
    // after this warp's arrival on *Empty*.
    let tile = unsafe { ring.ctrl.read(ring.ticket_at(s)) } as usize;
    // SAFETY: an initialised barrier; this use's phase.
    unsafe { ring.bar(Bar::Ready, s).wait_parity(parity) };
    // SAFETY: written by the look-ahead warp's lane `cw` before its arrival.
    let offset = unsafe { read_slot::<T, u32>(ring.ctrl, ring.offsets_at(s), cw) };
    let mut run = O::combine(offset, before);
    let region = ring.tile(s);
    let items = 4 * ROWS;
    let first = cw * WARP_SIZE as usize * items;
    for r in 0..ROWS {
        let at = first + blocked_chunk(lane as usize, r, items);
        // Read again rather than taken from `chunks`: a loop over that array that the compiler
        // does not unroll (a float min's branches) would put it in local memory.
        // SAFETY: this lane's own chunk, landed.
        let x = unpack::<T, W>(unsafe { region.read_v4(at) });
        let mut out = [O::IDENTITY; 4];
        for e in 0..T::PER_128 {
            if l.exclusive != 0 {
                out[e] = run;
                run = O::combine(run, x[e]);
            } else {
                run = O::combine(run, x[e]);
                out[e] = run;
            }
        }
        // SAFETY: this lane's own chunk; the warp's other lanes read it after the warp sync.
        unsafe { region.write_v4(at, pack::<T, W>(out)) };
    }
    sync_warp(FULL_MASK);
    let per = words::<T>();
    let base = tile * l.tile_len;
    let full = base + l.tile_len <= l.n;
    let dst = l.output.cast::<W>();
    if STORE_BULK && full {
        // SAFETY: as store_region_bulk asks: this warp's region, scanned above by its lanes.
        unsafe { store_region_bulk(region, dst.wrapping_offset(base * per), first, WARP_SIZE as usize * items, lane) };
        if lane == 0 {
            // The copy engine has read the region. SAFETY: an initialised barrier expecting
            // one arrival per compute warp.
            unsafe { ring.bar(Bar::Empty, s).arrive() };
        }
        return;
    }
    for r in 0..ROWS {
        let c = first + striped_chunk(lane as usize, r, WARP_SIZE as usize);
        // SAFETY: written by a lane of this warp before the warp sync.
        let v = unsafe { region.read_v4(c) };
        if full {
            // SAFETY: inside the output (a full tile), 16-byte aligned; this lane's 16 bytes.
            unsafe { dst.store_v4_streaming(base * per + c, v) };
        } else {
            // SAFETY: output holds n elements; these are this lane's.
            unsafe { store_guarded::<T, W>(l.output, base + c / per, l.n, v) };
        }
    }
    // This warp's shared accesses (generic proxy) before the copy engine refills the stage.
    fence_proxy_async();
    sync_warp(FULL_MASK);
    if lane == 0 {
        // SAFETY: an initialised barrier expecting one arrival per compute warp.
        unsafe { ring.bar(Bar::Empty, s).arrive() };
    }
}

/// Stores a compute warp's scanned region of the stage, `count` words from word `first`, to
/// `dst[first..]` with one bulk copy (`cp.async.bulk.global.shared::cta`) by lane 0, which waits
/// until the copy engine has read the region (`cp.async.bulk.wait_group.read 0`) before
/// returning: the stage can then be handed back to the producer.
///
/// # Safety
/// By every lane of the warp, after each wrote its chunks of the region; the region lies in
/// the stage, `dst[first..first + count]` is inside the output, both 16-byte aligned, `count`
/// a multiple of 4, and nobody else touches either until this returns.
#[inline(always)]
unsafe fn store_region_bulk<W: Word>(region: Shared<W>, dst: GlobalMut<W>, first: usize, count: usize, lane: u32) {
    // Each lane's writes (generic proxy), visible to the copy engine before lane 0 issues it.
    fence_proxy_async();
    sync_warp(FULL_MASK);
    if lane == 0 {
        // SAFETY: the caller's promise; fenced by every writer before the warp sync above.
        unsafe { region.store_bulk(first, dst.wrapping_offset(first), count, l2_evict_first_policy()) };
        bulk_commit();
        bulk_wait_read::<0>();
    }
}

/// A compute warp: reduces each tile `AHEAD` uses (0: `STAGES - 2`, at least one) ahead of the one it
/// scans, so that the block's aggregates are published as soon as their tiles land, while the
/// look-ahead warp waits on earlier tiles' predecessors (a block that reduced only one tile
/// ahead published late, and every later block's look-back waited for it).
///
/// Deadlock-free: the reduce of use `k + D` (`D = STAGES - 2`), before the scan of use `k`,
/// waits for a stage whose previous use, `k + D - STAGES = k - 2`, every compute warp has
/// scanned or can scan (its offset depends only on reduces already done), so the producer
/// can refill it.
///
/// # Safety
/// Called by every lane of compute warp `cw`, after the barriers were initialised.
#[inline(always)]
unsafe fn compute<
    T: Element,
    O: Operator<T>,
    W: Word,
    const ROWS: usize,
    const AHEAD: usize,
    const STORE_BULK: bool,
    const LOOKAHEADS: usize,
    const EARLY: bool,
>(
    ring: Ring<W>,
    l: Launch<T>,
    who: (usize, u32),
) {
    let ahead = if AHEAD == 0 { ring.stages.saturating_sub(2).max(1) } else { AHEAD };
    // The first use whose reduce found no tile, once known.
    let mut end = usize::MAX;
    // The next use to reduce.
    let mut next = 0;
    while next < ahead && end == usize::MAX {
        // SAFETY: uses in order, by every lane of the warp.
        if !unsafe { reduce::<T, O, W, ROWS, EARLY>(ring, l, next, who) } {
            end = next;
        }
        next += 1;
    }
    let mut k = 0;
    while k < end {
        if end == usize::MAX {
            // Use k + ahead, before the scan of use k. SAFETY: as above.
            if !unsafe { reduce::<T, O, W, ROWS, EARLY>(ring, l, next, who) } {
                end = next;
            }
            next += 1;
        }
        // SAFETY: use k was reduced, and had a tile (k < end).
        unsafe {
            if EARLY {
                scan_store_early::<T, O, W, ROWS>(ring, l, k, who)
            } else {
                scan_store::<T, O, W, ROWS, STORE_BULK>(ring, l, k, who)
            }
        };
        k += 1;
    }
    // With more look-ahead warps, each takes its own end ticket (the producer passes on one
    // per look-ahead warp, in uses end, end + 1, …). (The `if` keeps the code of one look-ahead
    // warp as it was, instruction for instruction.)
    if LOOKAHEADS > 1 {
        for j in 1..LOOKAHEADS {
            // SAFETY: uses in order, as above; each finds no tile and only passes it on.
            unsafe { reduce::<T, O, W, ROWS, EARLY>(ring, l, end + j, who) };
        }
    }
}

/// The tuning shape's rules, checked when a shape is compiled (no code): whole warps within a
/// block of 1024 threads, a conflict-free row count, a ring with a stage free to load, and
/// look-ahead warps that divide the stages.
#[inline(always)]
fn shape_is_valid<
    const WARPS: usize,
    const ROWS: usize,
    const STAGES: usize,
    const AHEAD: usize,
    const LOOKAHEADS: usize,
>() {
    const {
        assert!(WARPS >= 1 && WARPS <= 30, "1 to 30 compute warps (with two more, at most 1024 threads)");
        assert!(blocked_is_conflict_free(4 * ROWS), "an odd number of 16-byte chunks per thread");
        assert!(STAGES >= 3, "a ring of at least 3 stages: one loading, one reduced ahead, one scanned");
        assert!(AHEAD + 2 <= STAGES, "reduce 1 to STAGES - 2 uses ahead (0: STAGES - 2): a stage stays free to load");
        assert!(
            LOOKAHEADS >= 1 && STAGES.is_multiple_of(LOOKAHEADS) && WARPS + 1 + LOOKAHEADS <= 32,
            "look-ahead warps: at least one, dividing the stages (each stage's barriers belong to one of them)"
        );
    };
}

/// The body of every warp-specialized scan: a persistent block of `WARPS + 1 + LOOKAHEADS` warps
/// whose roles run in parallel over a ring of `STAGES` tiles, as [`lookback_warpspec`] describes.
/// The compute warps reduce `AHEAD` uses ahead of their scan (0: `STAGES - 2`, at least one, every
/// shape's rule), and store each tile through registers, or with one bulk copy per warp where
/// `STORE_BULK` (`lookback_warpspec_store_bulk`); `LOOKAHEADS` warps (1 but in the
/// `…_lookahead{n}` experiments) take the tiles' look-backs in turn; where `EARLY` (the
/// `…_early_empty` experiments) a compute warp gives the stage back before it waits for its
/// offset, and scans and stores from registers.
///
/// # Safety
/// As for [`lookback_warpspec`], with this shape's block and shared memory; `status_words` is
/// `status`'s array, holding `status.words_per_tile() × tiles + 1` words (the last the ticket
/// counter).
#[inline(always)]
#[allow(clippy::too_many_arguments)]
unsafe fn warpspec<
    T: Element,
    O: Operator<T>,
    const WARPS: usize,
    const ROWS: usize,
    const STAGES: usize,
    const AHEAD: usize,
    const STORE_BULK: bool,
    const LOOKAHEADS: usize,
    const EARLY: bool,
    const SLEEP_NS: u32,
    const WINDOWS: usize,
>(
    input: Global<T>,
    output: GlobalMut<T>,
    status: Status<T>,
    status_words: GlobalMut<u64>,
    n: u32,
    epoch: u32,
    exclusive: u32,
) {
    shape_is_valid::<WARPS, ROWS, STAGES, AHEAD, LOOKAHEADS>();
    let threads = (WARPS + 1 + LOOKAHEADS) * WARP_SIZE as usize;
    if block_dim_x() as usize != threads {
        trap("lookback_warpspec launched with a block size other than the one it was compiled for");
    }
    let tile_words = WARPS * WARP_SIZE as usize * 4 * ROWS;
    let bars = static_shared!(WARPSPEC_BARRIERS: [u64; 4 * STAGES]);
    let ctrl = static_shared!(WARPSPEC_CTRL: [u32; STAGES * ctrl_per_stage(WARPS) + STAGES * EARLY as usize]);
    // SAFETY: the launch gives warpspec_shared_bytes(..) of dynamic shared memory: the ring.
    let tiles = unsafe { dynamic_shared::<u32>(STAGES * tile_words) };
    let ring = Ring { tiles, ctrl, bars, stages: STAGES, warps: WARPS, tile_words };
    let n = n as usize;
    let tile_len = tile_words / words::<T>();
    let count = n.div_ceil(tile_len);
    // SAFETY: status holds its words per tile (warpspec_status_words(size of T, spacing))
    // × tiles + 1 words; the last is the ticket counter.
    let counter = unsafe { status_words.offset(status.words_per_tile() * count) };
    let l = Launch { input, output, status, counter, n, tiles: count, tile_len, epoch, exclusive };
    let tid = thread_idx_x() as usize;
    let (warp, lane) = (tid / WARP_SIZE as usize, thread_idx_x() % WARP_SIZE);
    // 1. Thread 0 sets the barriers up; the one block-wide barrier of the kernel.
    if tid == 0 {
        // SAFETY: nobody else touches the barriers before the block barrier below.
        unsafe { ring.init_barriers() };
    }
    sync_warp(FULL_MASK);
    sync_threads();
    // 2. The roles. SAFETY: each called by every lane of its warps, after the barriers' setup.
    unsafe {
        // Warp 0 produces, warps 1 to LOOKAHEADS look ahead, the others compute. (One look-ahead
        // warp keeps its own match: the guard of the general one changes its code's order.)
        if LOOKAHEADS == 1 {
            match warp {
                0 => produce::<T, O, u32, 1>(ring, l, lane),
                1 => look_ahead::<T, O, u32, 1, EARLY, SLEEP_NS, WINDOWS>(ring, l, (0, lane)),
                w => compute::<T, O, u32, ROWS, AHEAD, STORE_BULK, 1, EARLY>(ring, l, (w - 2, lane)),
            }
        } else {
            match warp {
                0 => produce::<T, O, u32, LOOKAHEADS>(ring, l, lane),
                w if w <= LOOKAHEADS => {
                    look_ahead::<T, O, u32, LOOKAHEADS, EARLY, SLEEP_NS, WINDOWS>(ring, l, (w - 1, lane))
                }
                w => compute::<T, O, u32, ROWS, AHEAD, STORE_BULK, LOOKAHEADS, EARLY>(
                    ring,
                    l,
                    (w - 1 - LOOKAHEADS, lane),
                ),
            }
        }
    }
}

kernel! {
    /// Single-pass scan by a warp-specialized persistent block: a producer warp streams tiles
    /// into a ring of shared-memory stages with the bulk-copy engine, a look-ahead warp runs the
    /// decoupled look-back for each tile, and the compute warps reduce, scan and store, with no
    /// block-wide barrier between them (CUB's warp-specialized scan, NVIDIA/cccl PR #6811).
    ///
    /// # Concept
    /// **Warp specialization.** Give each warp of a block one job and let the jobs run at once,
    /// handing work to each other through shared memory and `mbarrier`s rather than meeting
    /// at `__syncthreads`. A barrier makes every warp wait for the slowest; a hand-off makes
    /// only the warp that needs a result wait for it. Here the slow job is the look-back,
    /// which waits for other blocks: given to a warp of its own, it no longer stops the
    /// loads (the producer refills every stage the compute warps are done with) nor the
    /// reduction of the next tiles (the compute warps publish their aggregates meanwhile, so
    /// other blocks' look-backs find them early). The `mbarrier` is the hand-off: an arrival
    /// releases what the arriving thread wrote, a wait that sees the phase complete acquires
    /// it, and a bulk copy counts its bytes into the phase of the stage it fills.
    ///
    /// # Previous problem → fix
    /// In `lookback` a block holds its tile from load to store; while warp 0 looks back, the
    /// other warps wait at a block barrier and the block has no load in flight (issue #25:
    /// half of `lookback`'s stall cycles on an H100 at 2^28 are at that barrier), so DRAM
    /// stays busy only through other blocks' loads, and the scan runs above a copy's time.
    /// `lookback_bulk` moved the tile with the copy engine behind the same barriers, and
    /// `lookback_persistent` loaded the next tile during the look-back, but its next tile
    /// published its aggregate only after the block had finished the tile before, which
    /// lengthened every look-back. Here no warp waits at a block barrier on the look-back
    /// path: loads run ahead into every free stage, and the look-back of a tile overlaps the
    /// loading and reducing of the next ones.
    ///
    /// The first version reduced only one tile ahead of the one it scanned, so a tile's
    /// aggregate went out only once the compute warps had scanned the tile before, which
    /// waited for that tile's look-back: every block's aggregates came late, every later
    /// block's look-back waited for them, and the blocks moved as a convoy, each tile of a
    /// block a whole look-back after the last. 66.6 % of all stall samples were the compute
    /// warps spinning on the *ready* wait, and the look-ahead warp spent its time in the
    /// look-back waiting for predecessors' status words (ncu source counters at 2^28 on the
    /// H100 80GB HBM3, this session's run of c9d5beb). Now the compute warps reduce
    /// `STAGES - 2` uses ahead (at least one), as soon as the tiles land, so a block
    /// publishes the aggregates of every landed tile while its look-ahead warp still waits
    /// (CUB's design gives this to a reduce group of its own); with 3 stages it is one
    /// use ahead, as before.
    ///
    /// # Execution
    /// Block of `WARPSPEC_WARPS + 2` warps; a ring of `WARPSPEC_STAGES` tiles of
    /// `WARPSPEC_WARPS × 32 × WARPSPEC_ITEMS` elements in dynamic shared memory; four
    /// `mbarrier`s per stage (*full*, *summed*, *ready*, *empty*) and per stage a ticket word,
    /// one total and one offset per compute warp in static shared memory.
    /// 1. **Setup**: thread 0 initialises the barriers (*full* and *ready* for 32 arrivals,
    ///    the whole role warp; *summed* for one arrival; *empty* for one per compute warp) and
    ///    fences them for the copy engine; `__syncthreads` (the only block barrier).
    /// 2. **Producer** (warp 0), tile use `k` into stage `k mod STAGES`: lane 0 waits on
    ///    *empty* (the stage's previous tile is done; not for the first `STAGES` uses), draws a
    ///    ticket (`atom.add` on the ticket counter, as `lookback_persistent`) and writes it into
    ///    the stage's ticket word. For a full tile, lane 0 arrives on *full* expecting the
    ///    tile's bytes and issues one `cp.async.bulk` (evict-first), and lanes 1..31 arrive. The
    ///    partial last tile is loaded by the 32 lanes through registers (identity past `n`),
    ///    each lane arriving after its own stores; a ticket past the last tile is passed on the
    ///    same way and ends the warp. (Each writing lane arrives itself: compute-sanitizer's
    ///    racecheck does not count a `__syncwarp` and one lane's arrival as releasing the
    ///    other lanes' stores.)
    /// 3. **Reduce** (compute warps), `D = STAGES - 2` uses (at least one) ahead of the scan:
    ///    uses `0..D` first, then use `k + D` before the scan of use `k`, until a use finds the
    ///    end ticket. Wait on *full*; each lane folds its blocked `ITEMS` elements (the warp
    ///    owns a contiguous `32 × ITEMS` region of the tile); warp inclusive scan of the lane
    ///    totals (`__shfl_up_sync`), lane 31 writes the warp's total; named barrier 1 among
    ///    the compute warps (`bar.sync 1, WARPS × 32`); compute warp 0's lane 0 adds the
    ///    totals, publishes `(A, aggregate)` (tile 0: `(P, aggregate)`) and arrives on
    ///    *summed*. Nothing is kept in registers from one use to the next (registers indexed
    ///    by use would go to local memory): the scan recomputes what it needs.
    /// 4. **Look-ahead** (warp 1), tile by tile in the block's order: wait on *summed*; lanes
    ///    `0..WARPS` read the totals and scan them (each compute warp's offset within the tile,
    ///    and the aggregate); the warp looks back over the predecessors (`lookback`'s
    ///    `look_back`: 32 status words at a time) and lane 0 publishes `(P, prefix ⊕
    ///    aggregate)`; lane `w` writes `prefix ⊕ offset` for compute warp `w`; every lane
    ///    arrives on *ready*.
    /// 5. **Scan and store** (compute warps), use `k`: each lane reads its chunks again and
    ///    refolds its total, the warp rescans the lane totals, and the tile is read from the
    ///    stage's ticket word (valid until the warp's *empty* arrival); then wait on *ready*;
    ///    each lane scans its chunks from its warp's offset and its lanes' exclusive total, in
    ///    place (blocked); `__syncwarp`; the warp stores its region striped
    ///    (`st.global.cs.v4`, guarded in the partial tile); `fence.proxy.async` (the copy
    ///    engine overwrites the stage next); `__syncwarp`; lane 0 arrives on *empty*.
    ///
    /// The reduce of use `k + D` cannot deadlock: its stage's previous use is
    /// `k + D - STAGES = k - 2`, which this warp has scanned, and every other compute warp can
    /// scan (its offset needs only reduces already done), so the producer can refill it.
    ///
    /// ```text
    ///  4 stages (D = 2):
    ///  producer:   [load t0][load t1][load t2][load t3] wait empty0 [load t4] wait empty1 [load t5] …
    ///  compute:        [reduce t0][reduce t1][reduce t2][scan t0][reduce t3][scan t1][reduce t4] …
    ///  look-ahead:                [look back t0 ──][look back t1 ──][look back t2 …
    ///  aggregates out:            t0       t1         t2                t3                t4
    ///  stage hand-offs:  full → (compute) → summed → (look-ahead) → ready → (compute) → empty
    /// ```
    ///
    /// # Tile order
    /// Tiles are drawn by ticket (`status[tiles]`, as in `lookback_persistent`), so every
    /// ticket belongs to a block that was running when it drew it. A block takes its tiles in
    /// ticket order through every role: the smallest ticket not yet finished belongs to a block
    /// whose earlier tiles are all finished, so its producer can load it (its stage's previous
    /// tile is done), its compute warps reduce it (they wait only for the load), and its
    /// look-back meets only finished predecessors. No deadlock, whatever the grid and whichever
    /// blocks are resident; the host launches as many blocks as fit on the GPU at once
    /// (persistent), at most one per tile. (A static assignment, tile `b + k × grid` to block
    /// `b`, would save the ticket's `atom.add` but make a block wait for blocks that may not
    /// have started.)
    ///
    /// # Status words and memory ordering
    /// As `lookback`'s (one packed 64-bit status word per tile, relaxed GPU-scope atomics,
    /// epochs instead of a reset). A tile's aggregate is published by compute warp 0 before
    /// its arrival on *summed*, its prefix by the look-ahead warp after its wait on it: the
    /// arrival's release and the wait's acquire order the two stores to the word (A before
    /// P). Inside the block, every hand-off is an `mbarrier` phase (or the compute warps'
    /// named barrier, for their totals): each thread that wrote the shared words handed on
    /// arrives itself (the producer's and the look-ahead warp's 32 lanes on *full* and
    /// *ready*), its arrival releasing its own stores, the completed wait acquires them, and
    /// a bulk copy's bytes are visible once the *full* phase that counts them has completed.
    ///
    /// # Launch
    /// Any grid ≥ 1 (the host launches as many blocks as fit at once, at most one per tile),
    /// block exactly `(WARPSPEC_WARPS + 2) × 32` threads ([`warpspec_threads`]; traps
    /// otherwise), [`warpspec_shared_bytes`]`(WARPSPEC_WARPS, WARPSPEC_ITEMS, WARPSPEC_STAGES)`
    /// bytes of dynamic shared memory (80 KiB: the host raises the kernel's limit), plus the
    /// barriers and control words in static shared memory. sm_90 only (the host's `min_cc`).
    ///
    /// # Preconditions
    /// As for `lookback`, with `status` holding `ceil(n / tile) + 1` words (the status words,
    /// then the ticket counter), zeroed or written by earlier launches with other epochs.
    ///
    /// # Safety
    /// The pointers are valid device memory of those lengths. Each role's warp runs its loop
    /// with all 32 lanes; the only block barrier comes before the roles split; the compute
    /// warps all reach their named barrier once per tile (they leave their loop at the same
    /// ticket); every `mbarrier` phase gets exactly the arrivals it was initialised for (*full*
    /// and *ready*: the 32 lanes of the producer or look-ahead warp, each after its own
    /// writes; *summed*: compute warp 0's lane 0; *empty*: lane 0 of each compute warp); a
    /// stage is refilled only after every compute warp arrived on its *empty* barrier, after
    /// their proxy fences; a tile's shared words and ticket are read only after the *full*
    /// phase that lands them and before the reading warp's *empty* arrival. The look-back
    /// waits only on smaller tickets (see *Tile order*); the reduce `STAGES - 2` uses ahead
    /// waits only for a stage whose previous use has been scanned (see *Execution*).
    ///
    /// # Measured
    /// H100 80GB HBM3, int32 inclusive sums, 3 interleaved rounds
    /// (`docs/measurements/2026-11-26-h100/warpspec-7ad10f4/`): this shape (8x20x4) takes
    /// 817.6 µs at 2^28 (1,318 µs before the compute warps reduced ahead), `lookback` 773.1 µs,
    /// the copy 713.7 µs; the fastest shape, `lookback_warpspec_8x12x6`, 759.8 µs (1.065× the
    /// copy, 1.15× CUB). ncu: the compute warps' wait on the look-ahead warp fell from 66.6 % to
    /// 23.7 % of the stall samples. Below 10^8 `lookback` is faster. Since the scan pass reads
    /// its chunks from the stage again (7f82da0, for the typed rows' sake), 8x12x6 took
    /// 759.6–760.3 µs at 2^28 and 283.1–285.1 µs at 10^8 in 3 interleaved rounds, against
    /// `lookback`'s 770.5–771.7 and 286.0–286.1 (`docs/measurements/2026-11-27-h100/
    /// warpspec-typed-7f82da0/i32/`). On the H200 (`2026-11-26-h200/warpspec-62f6b32/`, and
    /// again at 5405082, `2026-11-27-h200/warpspec-typed-5405082/`: 594.5–597.0 µs against
    /// 597.1–598.6 at 2^28, 1.17–1.18× the copy, slower at 10^8) 8x12x6, packed then, beat
    /// `lookback` only at 2^28 and by under 1 %, and the plan kept `lookback` there for 32-bit
    /// types (the ranges overlapped). With the spaced layout and the sweep's rule of every round
    /// it takes 8x12x6 from 1.5·2^27 (`lookback_warpspec_8x12x6`'s `# Measured`). Its 64-bit rows
    /// are 1.04–1.07× faster than `lookback` there (i64, u64, f64 at 5·10^7 and 2^27), and the
    /// H200's plan takes them from 5·10^7. ncu on the H200 (`…/stalls-5405082/`): the compute
    /// warps wait 24.5 % of their samples for tiles and 11.4 % for the look-ahead warp.
    ///
    /// What did not bring it nearer the copy (H100, 2^28, 8x12x6's 759–761 µs in the same
    /// rounds; `docs/measurements/2026-11-27-h100/`): storing with the bulk-copy engine
    /// (`lookback_warpspec_store_bulk`, 766–768 µs), more tiles loading by reducing fewer ahead
    /// (`…_ahead2`, `…_ahead3`: 767–850 µs), more blocks per SM with smaller tiles (4x12x6
    /// 801 µs, 8x4x6 880 µs). ncu's stall samples say why (`…/stalls-ahead-5405082/`): 8x12x6's
    /// compute warps wait 34 % for tiles to land and 14 % for the look-ahead warp; with more
    /// tiles loading the first wait vanishes and the second grows to 39–50 %. One look-ahead
    /// warp per block, running its tiles' look-backs one after another, is the other limit.
    /// Yet two or three look-ahead warps on alternate tiles (`…_lookahead{n}`) are slower too,
    /// on the H100 (790–796 µs) and the H200: the wait for the look-ahead warp vanishes, the
    /// wait for tiles to land grows, and the look-backs get longer
    /// (`docs/measurements/2026-11-27-h200/warpspec-lookahead-f798654/`).
    pub unsafe fn lookback_warpspec(
        input: Global<i32>,
        output: GlobalMut<i32>,
        status: GlobalMut<u64>,
        n: u32,
        epoch: u32,
        exclusive: u32,
    ) {
        // SAFETY: forwarded from the caller.
        unsafe {
            warpspec::<i32, Sum, { WARPSPEC_WARPS as usize }, { WARPSPEC_ITEMS as usize / 4 }, { WARPSPEC_STAGES as usize }, 0, false, 1, false, LOOKBACK_SLEEP_NS, 1>(
                input, output, Status::packed(status), status, n, epoch, exclusive,
            )
        }
    }
}

/// Declares one tuning shape of `lookback_warpspec` (compute warps, items per thread, stages).
macro_rules! warpspec_shape {
    ($name:ident, $warps:literal, $items:literal, $stages:literal) => {
        warpspec_shape!(@entry [
            /// `lookback_warpspec` compiled for another shape (compute warps × items per
            /// thread × ring stages, in the name), for tuning: same algorithm, same arguments,
            /// same preconditions.
            ///
            /// # Concept
            /// **Tuning by instantiation.** How many tiles a block keeps in flight (the ring's
            /// stages), how large a tile is (warps × items) and so how many blocks fit on an
            /// SM decide whether DRAM stays busy; the best shape differs between GPUs with more
            /// or less bandwidth per SM. Each candidate is the same code with other constants
            /// (`WARPSPEC_SHAPES`), timed on each GPU.
            ///
            /// # Previous problem → fix
            /// `lookback_warpspec` is compiled for one shape; these are the alternatives that
            /// `scripts/gpu/warpspec_sweep.sh` times next to it, and the per-device table
            /// names the one the plan runs.
            ///
            /// # Execution
            /// As `lookback_warpspec` (phases 1–5 of its docs), with this kernel's compute
            /// warps, items per thread and stages.
            ///
            /// # Launch
            /// As `lookback_warpspec`: block `(warps + 2) × 32` threads (traps otherwise),
            /// `warpspec_shared_bytes(warps, items, stages)` of dynamic shared memory.
            ///
            /// # Preconditions
            /// As for `lookback_warpspec`.
            ///
            /// # Safety
            /// As for `lookback_warpspec`, with this kernel's shape.
            ///
            /// # Measured
            /// A tuning shape: `scripts/gpu/warpspec_sweep.sh` times it beside
            /// `lookback_warpspec`.
        ] $name, $warps, $items, $stages, 0, false, 1, false);
    };
    // A tuning shape with a larger tile and a 4-stage ring, its status words spaced as 8x12x6's
    // (10x12x4, 12x12x4).
    (spaced: $name:ident, $warps:literal, $items:literal, $stages:literal) => {
        warpspec_shape!(@entry [
            /// `lookback_warpspec_8x12x6` with larger tiles and a shorter ring (compute warps ×
            /// items per thread × ring stages, in the name), written to fit 3 blocks on an SM
            /// (10x12x4 does, 12x12x4 runs 2), its status words 16 bytes apart as 8x12x6's:
            /// tuning shapes toward the copy's time (measured slower than 8x12x6 on both GPUs).
            ///
            /// # Concept
            /// **Fewer look-backs per byte.** Every tile costs its block's look-ahead warp one
            /// look-back across blocks, a few round trips to the L2 that take as long whatever
            /// their form; a larger tile pays the same look-back for more bytes.
            ///
            /// # Previous problem → fix
            /// In `lookback_warpspec_8x12x6` the look-ahead warp spends about 3.4 µs a tile on
            /// the H100 and 2.6 µs on the H200, looking back and waiting for the totals
            /// (`docs/scan-warpspec.md`, the arithmetic of the bound), while at the copy's speed a
            /// block takes a tile every 3.2 and 2.3 µs: the chain of look-backs sets the pace.
            /// Most larger shapes tried before had 2 blocks an SM or one tile reduced ahead
            /// (8x28x3, 8x36x3: slower); the one with 3 blocks an SM and 2 tiles ahead,
            /// 4x36x4 (18 KiB), had 4 compute warps and was 3.2–3.7 % slower than 8x12x6 a
            /// round on the H200 (both packed, `docs/measurements/2026-11-26-h200/warpspec-62f6b32/`).
            /// These reduce `stages − 2` = 2 tiles ahead, with tiles 5/4 (10x12x4, 15 KiB) or
            /// 3/2 (12x12x4, 18 KiB) of 8x12x6's and 10 or 12 compute warps, 44 registers a
            /// thread. 10x12x4 runs 3 blocks an SM; 12x12x4 (448 threads, 72 KiB) only 2: ncu's
            /// block limits from registers and from shared memory are both 2 on the H200.
            ///
            /// # Execution
            /// As `lookback_warpspec` (phases 1–5 of its docs), with this kernel's compute
            /// warps, items per thread and stages, tile `t`'s status word at `status[2 t]`.
            ///
            /// # Launch
            /// As `lookback_warpspec`: block `(warps + 2) × 32` threads (traps otherwise),
            /// `warpspec_shared_bytes(warps, items, stages)` of dynamic shared memory; sm_90
            /// only.
            ///
            /// # Preconditions
            /// As for `lookback_warpspec_8x12x6`: `status` holds `2 × ceil(n / tile) + 1`
            /// words.
            ///
            /// # Safety
            /// As for `lookback_warpspec_8x12x6`, with this kernel's shape.
            ///
            /// # Measured
            /// Slower than `lookback_warpspec_8x12x6` in every round on both GPUs (int32, 3
            /// interleaved rounds, `docs/measurements/2026-11-28-h100/warpspec-larger-tiles-d8d7980/`
            /// and `…/2026-11-28-h200/warpspec-larger-tiles-d8d7980/`): at 2^28 10x12x4 takes
            /// 1.036–1.038× 8x12x6's time on the H100 and 1.009–1.011× on the H200, 12x12x4
            /// 1.028–1.029× and 1.017–1.019×. With 10x12x4 a block's time a tile grew with the
            /// tile (H100: 3.4 → 4.4 µs), so fewer tiles did not shorten the chain of look-backs; with
            /// 2 tiles reduced ahead instead of 4 the compute warps wait longer for their offsets
            /// (ncu). Kept as tuning shapes that the sweep times; the emulator runs them in CI.
        ] $name, $warps, $items, $stages, 0, false, 1, false, LOOKBACK_SLEEP_NS, 1, WARPSPEC_SPACED_WORDS);
    };
    // One `i32` sum entry of the warp-specialized body: its doc, name, shape, reduce-ahead (0:
    // `stages - 2`), store path, look-ahead warps, whether the stage goes back before the scan,
    // and (where given) the look-back's sleep between polls and windows per round trip (else
    // `LOOKBACK_SLEEP_NS` and 1) and the status words' spacing (else 1: packed).
    (@entry [$($doc:tt)*] $name:ident, $warps:literal, $items:literal, $stages:literal, $ahead:literal, $bulk:literal, $looks:literal, $early:literal) => {
        warpspec_shape!(@entry [$($doc)*] $name, $warps, $items, $stages, $ahead, $bulk, $looks, $early, LOOKBACK_SLEEP_NS, 1);
    };
    (@entry [$($doc:tt)*] $name:ident, $warps:literal, $items:literal, $stages:literal, $ahead:literal, $bulk:literal, $looks:literal, $early:literal, $sleep:expr, $windows:literal) => {
        warpspec_shape!(@entry [$($doc)*] $name, $warps, $items, $stages, $ahead, $bulk, $looks, $early, $sleep, $windows, 1);
    };
    (@entry [$($doc:tt)*] $name:ident, $warps:literal, $items:literal, $stages:literal, $ahead:literal, $bulk:literal, $looks:literal, $early:literal, $sleep:expr, $windows:literal, $spacing:expr) => {
        kernel! {
            $($doc)*
            pub unsafe fn $name(
                input: Global<i32>,
                output: GlobalMut<i32>,
                status: GlobalMut<u64>,
                n: u32,
                epoch: u32,
                exclusive: u32,
            ) {
                // SAFETY: forwarded from the caller (status holds the spacing's words a tile,
                // then the counter).
                unsafe {
                    warpspec::<i32, Sum, $warps, { $items / 4 }, $stages, $ahead, $bulk, $looks, $early, { $sleep }, $windows>(
                        input, output, Status::packed(status).spaced::<{ $spacing }>(), status, n, epoch, exclusive,
                    )
                }
            }
        }
    };
}

warpspec_shape!(lookback_warpspec_8x12x4, 8, 12, 4);
warpspec_shape!(@entry [
    /// `lookback_warpspec` at the shape the plan runs on the H100 (8 compute warps × 12 items
    /// per thread × 6 ring stages, [`WARPSPEC_TYPED`]), its tiles' status words 16 bytes apart
    /// ([`WARPSPEC_SPACED_WORDS`] words, the word between unused): same algorithm, same
    /// arguments.
    ///
    /// # Concept
    /// **Tuning by instantiation, and where shared words lie.** How many tiles a block keeps in
    /// flight (the ring's stages) and how large a tile is (warps × items) decide whether DRAM
    /// stays busy; the best shape differs between GPUs. And every block's look-ahead warp reads
    /// the newest tiles' status words, which other SMs write twice each, all through the L2
    /// while the scan's own traffic fills it: how many words share a 32-byte sector decides how
    /// many SMs' writes and reads meet on one sector.
    ///
    /// # Previous problem → fix
    /// `lookback_warpspec` is compiled for one shape; the sweep
    /// (`scripts/gpu/warpspec_sweep.sh`) found this one the fastest for `i32` sums on the H100
    /// at 2^27 and above. Its status words were packed 8 bytes apart
    /// (`lookback_warpspec_8x12x6_packed`, kept as the experiment that shows the difference);
    /// in the CUDA C twin (`scripts/gpu/explore/scan_steps.cu`) spacing them was the one change
    /// to the look-back that ran faster.
    ///
    /// # Execution
    /// As `lookback_warpspec` (phases 1–5 of its docs), with 8 compute warps, 12 items per
    /// thread and 6 stages, tile `t`'s status word at `status[2 t]`.
    ///
    /// # Launch
    /// As `lookback_warpspec`: block `10 × 32` threads (traps otherwise),
    /// `warpspec_shared_bytes(8, 12, 6)` (72 KiB) of dynamic shared memory; sm_90 only.
    ///
    /// # Preconditions
    /// As for `lookback_warpspec`, with `status` holding `2 × ceil(n / tile) + 1` words (the
    /// spaced status words, then the ticket counter).
    ///
    /// # Safety
    /// As for `lookback_warpspec`, with `status` valid for `2 × ceil(n / tile) + 1` words.
    ///
    /// # Measured
    /// H100 80GB HBM3, int32 inclusive sums, 9 interleaved rounds on two leases against the
    /// packed layout in the same invocations (measured as `lookback_warpspec_8x12x6_spaced`
    /// against `lookback_warpspec_8x12x6` at bb5302e, whose PTX are this kernel's and
    /// `…_packed`'s: `docs/measurements/2026-11-28-h100/warpspec-spaced-bb5302e/`,
    /// `…/warpspec-spaced-lease2-bb5302e/`): faster in every round, at 2^28 754.7–756.9 µs
    /// against 757.3–760.7 (1.058–1.061× the copy against 1.062–1.066×; 1.150–1.167× CUB's
    /// speed), at 10^8 279.5–280.6 against 281.6–285.0 (1.037–1.042× the copy against
    /// 1.045–1.058×). ncu's source counters at 2^28: the compute warps' wait for tiles falls
    /// from 33.6 % to 22.2 % of the stall samples, their wait for the look-ahead warp grows
    /// from 13.7 % to 26.1 %. memcheck, racecheck and synccheck: 0 errors.
    ///
    /// So spaced, swept against `lookback` and `…_packed` at 96e3d91
    /// (`docs/measurements/2026-11-28-h100/warpspec-plan-spaced-96e3d91/i32/`, 2–8 rounds a size): 2^28
    /// 754.6–756.3 µs (packed 759.4–760.2, `lookback` 770.2–772.4, the copy 713.3–713.7); 10^8
    /// 279.5–280.1 (283.7–284.6, 284.7–286.4); 5·10^7 139.9–140.0 (142.3–144.0, 141.9–144.0); 2^24
    /// 48.2–49.0 (50.6–52.4, 48.8–50.6; faster than `lookback` in 7 of 8 rounds); 2^25 94.0–94.8
    /// (`lookback` 96.6–98.2, 3 rounds); at 1.5·2^24 0.2–0.3 % slower than `lookback` in 3 of 4
    /// rounds; at 2^23 and below `lookback` is faster (1.27–1.29× at 2^20 and 2^22). The plan
    /// (`host/src/scan/plan_by_device.csv`) runs it on the H100 from 2^25, where it was faster in
    /// every round at every larger size measured. On the H200, spaced
    /// (`docs/measurements/2026-11-28-h200/warpspec-plan-spaced-52870fc/`): 586.9–595.5 µs at 2^28
    /// (7 rounds, `lookback` 589.2–597.9, faster in every round by 0.07–0.6 %; 1.166–1.174× the
    /// copy), for i32 a tie at 10^8 and slower at 2^25 and below; the plan runs it there from
    /// 1.5·2^27 for the 32-bit types. compute-sanitizer there: 0 errors.
] lookback_warpspec_8x12x6, 8, 12, 6, 0, false, 1, false, LOOKBACK_SLEEP_NS, 1, WARPSPEC_SPACED_WORDS);
warpspec_shape!(lookback_warpspec_8x28x3, 8, 28, 3);
warpspec_shape!(lookback_warpspec_4x20x4, 4, 20, 4);
warpspec_shape!(lookback_warpspec_4x36x4, 4, 36, 4);
warpspec_shape!(lookback_warpspec_8x36x3, 8, 36, 3);
warpspec_shape!(lookback_warpspec_16x12x4, 16, 12, 4);
warpspec_shape!(lookback_warpspec_8x20x6, 8, 20, 6);
warpspec_shape!(lookback_warpspec_8x28x5, 8, 28, 5);
warpspec_shape!(lookback_warpspec_8x12x8, 8, 12, 8);
warpspec_shape!(lookback_warpspec_8x12x10, 8, 12, 10);
warpspec_shape!(lookback_warpspec_16x12x6, 16, 12, 6);
warpspec_shape!(lookback_warpspec_4x12x6, 4, 12, 6);
warpspec_shape!(lookback_warpspec_4x12x8, 4, 12, 8);
warpspec_shape!(lookback_warpspec_8x4x6, 8, 4, 6);
warpspec_shape!(spaced: lookback_warpspec_10x12x4, 10, 12, 4);
warpspec_shape!(spaced: lookback_warpspec_12x12x4, 12, 12, 4);

warpspec_shape!(@entry [
    /// `lookback_warpspec_8x12x6` whose compute warps store their scanned region with the
    /// bulk-copy engine (`cp.async.bulk.global.shared::cta`, one copy of 1.5 KiB per warp and
    /// tile) instead of 16-byte stores from registers: an experiment toward the copy's time.
    ///
    /// # Concept
    /// **The copy engine works both ways.** A bulk copy can move shared memory out to global
    /// memory as well as in: one thread issues it, the engine reads the shared bytes and writes
    /// them in whole lines, and `cp.async.bulk.wait_group.read` says when the shared bytes may
    /// be reused (the global writes may still be on their way). The warp's scanned elements are
    /// already in the stage, in order; the store needs no registers and no striped re-read.
    ///
    /// # Previous problem → fix
    /// `lookback_warpspec_8x12x6` stays at 1.065× the copy's time at 2^28 on the H100 (issue
    /// #37 asks ≤ 1.03×). Its compute warps re-read the scanned region from the stage in striped
    /// order and store it with `st.global.cs.v4`, 3 × 32 stores of 16 bytes per warp and tile,
    /// through the load/store unit that also serves their shared reads. Here lane 0 hands the
    /// whole region to the copy engine, waits only until the engine has read it, and arrives on
    /// *empty*. Partial tiles keep the guarded stores.
    ///
    /// # Execution
    /// As `lookback_warpspec` (phases 1–5 of its docs) at 8x12x6, but in phase 4 a compute
    /// warp, after scanning its region in place, fences it for the async proxy (every lane),
    /// meets its warp, and lane 0 issues one bulk store of the region (evict-first), commits
    /// it, waits for its read (`wait_group.read 0`) and arrives on *empty*.
    ///
    /// # Launch
    /// As `lookback_warpspec_8x12x6`: block `10 × 32` threads (traps otherwise),
    /// `warpspec_shared_bytes(8, 12, 6)` (72 KiB) of dynamic shared memory; sm_90 only.
    ///
    /// # Preconditions
    /// As for `lookback_warpspec`; the output 16-byte aligned (as every scan's output here).
    ///
    /// # Safety
    /// As for `lookback_warpspec`; a stage is handed back to the producer only after the copy
    /// engine has read the bulk store's shared bytes.
    ///
    /// # Measured
    /// H100 80GB HBM3, int32 inclusive sums, 3 interleaved rounds
    /// (`docs/measurements/2026-11-27-h100/warpspec-store-bulk-a27f316/`): 765.9–768.4 µs at
    /// 2^28 against `lookback_warpspec_8x12x6`'s 759.7–761.0 (1.007–1.010× its time per round),
    /// 285.8–287.0 against 282.9–285.1 at 10^8: slower. ncu's source counters: 9.5 % of the
    /// stall samples on the *empty* arrival after the wait for the store's read, while the
    /// compute warps' wait for a tile to land keeps its 35 %.
] lookback_warpspec_store_bulk, 8, 12, 6, 0, true, 1, false);

/// Declares `lookback_warpspec` at a shape (compute warps, items per thread, stages) whose compute
/// warps reduce `ahead` uses ahead of the scan instead of `stages - 2`.
macro_rules! warpspec_ahead {
    ($name:ident, $warps:literal, $items:literal, $stages:literal, $ahead:literal) => {
        warpspec_shape!(@entry [
            /// `lookback_warpspec` at a shape (compute warps × items per thread × ring stages,
            /// in the name) whose compute warps reduce fewer uses ahead of the scan (the
            /// `ahead` of the name) than the `stages - 2` of every other shape: an experiment.
            ///
            /// # Concept
            /// **A ring's stages are split between waiting and loading.** A stage holds a tile
            /// from its load until its scan; the compute warps reduce `ahead` tiles before they
            /// scan them, so those `ahead` stages hold landed tiles and only `stages − ahead`
            /// tiles of the block can be loading. Bytes in flight per SM, what Little's law
            /// asks of a memory-bound kernel, are `blocks × (stages − ahead) × tile bytes`.
            ///
            /// # Previous problem → fix
            /// Every shape of `WARPSPEC_SHAPES` reduces `stages − 2` uses ahead, so every one
            /// of them keeps two tiles loading per block, whatever its ring's depth: the sweep
            /// over 4 to 10 stages never raised the bytes in flight. Here `ahead` is its own
            /// knob, and `stages − ahead` tiles load at once.
            ///
            /// # Execution
            /// As `lookback_warpspec` (phases 1–5 of its docs), the compute warps' reduce
            /// running `ahead` uses before their scan.
            ///
            /// # Launch
            /// As `lookback_warpspec`: block `(warps + 2) × 32` threads (traps otherwise),
            /// `warpspec_shared_bytes(warps, items, stages)` of dynamic shared memory.
            ///
            /// # Preconditions
            /// As for `lookback_warpspec`.
            ///
            /// # Safety
            /// As for `lookback_warpspec`; deadlock-free for `1 ≤ ahead ≤ stages − 2` by the
            /// same argument (checked at compile time).
            ///
            /// # Measured
            /// H100 80GB HBM3, int32 inclusive sums at 2^28, 3 interleaved rounds
            /// (`docs/measurements/2026-11-27-h100/warpspec-ahead-628fa43/`), against
            /// `lookback_warpspec_8x12x6` (ahead 4) at 759.6–760.4 µs: 8x12x6 ahead 3
            /// 766.6–769.1, ahead 2 840.2–849.9, 8x12x8 ahead 4 773.0–775.0, ahead 3
            /// 806.0–810.1. Every one slower in every round, at 10^8 too: more tiles loading
            /// do not help, tiles reduced (and published) later do hurt.
        ] $name, $warps, $items, $stages, $ahead, false, 1, false);
    };
}

warpspec_ahead!(lookback_warpspec_8x12x6_ahead2, 8, 12, 6, 2);
warpspec_ahead!(lookback_warpspec_8x12x6_ahead3, 8, 12, 6, 3);
warpspec_ahead!(lookback_warpspec_8x12x8_ahead3, 8, 12, 8, 3);
warpspec_ahead!(lookback_warpspec_8x12x8_ahead4, 8, 12, 8, 4);

/// Declares `lookback_warpspec` at a shape (compute warps, items per thread, stages) with
/// `looks` look-ahead warps on alternate uses, reducing `ahead` uses ahead (0: `stages - 2`).
macro_rules! warpspec_lookahead {
    ($name:ident, $warps:literal, $items:literal, $stages:literal, $ahead:literal, $looks:literal) => {
        warpspec_shape!(@entry [
            /// `lookback_warpspec` at a shape (compute warps × items per thread × ring stages,
            /// in the name) with more than one look-ahead warp (the `lookahead` of the name),
            /// taking the block's tiles in turn, and, where the name says `ahead`, reducing
            /// that many uses ahead: an experiment.
            ///
            /// # Concept
            /// **A serial role is a pipeline's speed limit.** When one warp does a job for every
            /// tile in turn, the block can go no faster than one job's latency per tile, however
            /// many bytes are in flight. The look-back of a tile waits for other blocks' status
            /// words (a round trip to L2 per window of 32 predecessors), so give the job to
            /// several warps on alternate tiles: warp `j` takes uses `j, j + L, j + 2L, …`, and
            /// the look-backs of consecutive tiles overlap, as `lookback`'s do across its
            /// resident blocks.
            ///
            /// # Previous problem → fix
            /// In `lookback_warpspec_8x12x6` the one look-ahead warp is busy all the time: at
            /// 2^28 on the H100 its stall samples are 10.8 % of all (one warp of ten), 56 % of
            /// them waiting for status words, and almost none waiting for work (ncu source
            /// counters, `docs/measurements/2026-11-27-h100/stalls-ahead-5405082/`); a block
            /// scans a tile every 3.44 µs, the look-ahead warp's pace. Loading more tiles at once
            /// (the `…_ahead{n}` experiments) only moved the compute warps' wait onto it. Here
            /// `L` warps share the look-backs; each stage's *summed* and *ready* barriers belong
            /// to one of them (`stages` a multiple of `L`).
            ///
            /// # Execution
            /// As `lookback_warpspec` (phases 1–5 of its docs) with warps 1 to `L` as look-ahead
            /// warps, warp `j + 1` taking uses `k ≡ j (mod L)`; the compute warps follow. At the
            /// end the producer passes on `L` tickets past the last tile (uses `end` to
            /// `end + L − 1`), and the compute warps hand each on through *summed*, so that every
            /// look-ahead warp meets one and stops.
            ///
            /// # Launch
            /// Block `(warps + 1 + L) × 32` threads (`warpspec_threads_with`; traps otherwise),
            /// `warpspec_shared_bytes(warps, items, stages)` of dynamic shared memory; sm_90 only.
            ///
            /// # Preconditions
            /// As for `lookback_warpspec`.
            ///
            /// # Safety
            /// As for `lookback_warpspec`: a look-back waits only on smaller tickets, whichever
            /// warp runs it, and every tile's aggregate is out before its *summed* arrival; the
            /// end tickets are written after the *empty* wait of their stage, as every ticket.
            ///
            /// # Measured
            /// int32 inclusive sums, 2 interleaved rounds against `lookback_warpspec_8x12x6`
            /// (one look-ahead warp) in the same invocations: slower, every one, in every
            /// round. NVIDIA H200 (`docs/measurements/2026-11-27-h200/warpspec-lookahead-f798654/`),
            /// at 2^28: 8x12x6 589.5–590.1 µs; `…_lookahead2` 612.9–615.5, `…_lookahead3`
            /// 645.9, `…_lookahead2_ahead3` 627.1–627.4, `…_lookahead2_ahead2` 745.0–745.1,
            /// `…_8x12x8_lookahead2_ahead4` 611.5–612.8, `…_8x12x4_lookahead2` 696.1–699.5.
            /// H100 80GB HBM3 (`docs/measurements/2026-11-27-h100/warpspec-lookahead-f798654/`),
            /// at 2^28: 8x12x6 760.0–761.8 µs, `…_lookahead2` 790.3–796.0,
            /// `…_8x12x8_lookahead2_ahead4` 778.2–786.4. ncu's source counters on the H200:
            /// with two look-ahead warps the compute warps' wait for their offsets falls from
            /// 10.5 % to 2.0 % of the stall samples, their wait for tiles to land grows from
            /// 25.4 % to 31.4 %, and a look-back reads 2.47 windows of status words instead of
            /// 2.25 (a block's consecutive tiles look back at once, so the younger walks past its
            /// block-mate's missing prefix).
        ] $name, $warps, $items, $stages, $ahead, false, $looks, false);
    };
}

warpspec_lookahead!(lookback_warpspec_8x12x6_lookahead2, 8, 12, 6, 0, 2);
warpspec_lookahead!(lookback_warpspec_8x12x6_lookahead3, 8, 12, 6, 0, 3);
warpspec_lookahead!(lookback_warpspec_8x12x6_lookahead2_ahead2, 8, 12, 6, 2, 2);
warpspec_lookahead!(lookback_warpspec_8x12x6_lookahead2_ahead3, 8, 12, 6, 3, 2);
warpspec_lookahead!(lookback_warpspec_8x12x8_lookahead2_ahead4, 8, 12, 8, 4, 2);
warpspec_lookahead!(lookback_warpspec_8x12x4_lookahead2, 8, 12, 4, 0, 2);

/// Declares `lookback_warpspec` at a shape (compute warps, items per thread, stages) whose compute
/// warps give a stage back as soon as they have read it.
macro_rules! warpspec_early {
    ($name:ident, $warps:literal, $items:literal, $stages:literal) => {
        warpspec_early!($name, $warps, $items, $stages, 1);
    };
    ($name:ident, $warps:literal, $items:literal, $stages:literal, $looks:literal) => {
        warpspec_shape!(@entry [
            /// `lookback_warpspec` at a shape (compute warps × items per thread × ring stages,
            /// in the name) whose compute warps hand a stage back to the producer (*empty*) as
            /// soon as they have read its tile into registers, before they wait for their
            /// offset, and, where the name says `lookahead`, with that many look-ahead warps
            /// (`…_lookahead{n}`'s, taking the tiles in turn): an experiment.
            ///
            /// # Concept
            /// **A buffer is busy until its last read, not until the work on it ends.** A stage
            /// can be refilled once nobody will read it again. Holding it through a wait that
            /// does not need it (here, for the look-ahead warp's offset) and through the stores
            /// keeps the next load from starting; reading the tile into registers first frees
            /// the stage a wait and a store earlier, so each load has that much longer to land,
            /// with the same number of stages and tiles reduced ahead.
            ///
            /// # Previous problem → fix
            /// In `lookback_warpspec_8x12x6` the compute warps wait 25–34 % of their stall samples
            /// for tiles to land (H200 and H100, ncu source counters at 2^28): a tile is issued
            /// when the stage of the use two back comes free, after that use's wait for its
            /// offset, its scan and its stores, so it has about one tile's period to land.
            /// Loading more by reducing fewer ahead delays the aggregates, and every look-back
            /// with them (the `…_ahead{n}` experiments). Here the stage comes free right after the
            /// scan pass has read it; the scan and the stores run from registers. The pass reads
            /// its chunks striped (lane `l` of row `r` holds chunk `32 r + l`), so each row is one
            /// whole-warp store of 512 consecutive bytes, and scans each row's chunk totals across
            /// the warp (three warp scans instead of one). The first form read them blocked and
            /// stored them so, 16 bytes per lane at a stride of 48, every sector half written by
            /// each store: 1.62× the copy's time on the H200 at 2^28 (816.9–818.6 µs against
            /// 588.4–591.2 for `lookback_warpspec_8x12x6`,
            /// `docs/measurements/2026-11-27-h200/warpspec-early-24b7022/`).
            ///
            /// The stage's ticket word then comes free early too, and the look-ahead warp, which
            /// read it after *summed*, could find the next use's ticket there: the emulator's race
            /// check caught this in the first version (a write after read on `WARPSPEC_CTRL`
            /// between the producer and the look-ahead warp). So compute warp 0 hands each ticket
            /// to the look-ahead warp in a word of its own.
            ///
            /// # Execution
            /// As `lookback_warpspec` (phases 1–5 of its docs), but in phase 3 compute warp 0
            /// also writes the tile's ticket into the stage's hand-off word before its *summed*
            /// arrival, which the look-ahead warp reads instead of the ticket word; in phase 4 a
            /// compute warp reads its striped chunks and the ticket, fences, meets its warp and
            /// arrives on *empty*, scans each row's chunk totals across the warp; then waits on
            /// *ready*, scans the chunks in registers and stores each row with one whole-warp
            /// store (partial tiles guarded).
            ///
            /// # Launch
            /// As `lookback_warpspec`: block `(warps + 1 + lookaheads) × 32` threads (traps otherwise),
            /// `warpspec_shared_bytes(warps, items, stages)` of dynamic shared memory; sm_90 only.
            ///
            /// # Preconditions
            /// As for `lookback_warpspec`.
            ///
            /// # Safety
            /// As for `lookback_warpspec`; no shared read of a stage or its ticket word follows its
            /// *empty* arrival; the hand-off word, the totals and the offset slots of the stage's
            /// next use are written only once every compute warp reduces that use, after its
            /// pass over this one.
            ///
            /// # Measured
            /// int32 inclusive sums, 2 interleaved rounds against `lookback_warpspec_8x12x6` in
            /// the same invocations: slower, every one, in every round. NVIDIA H200 at 2^28
            /// (`docs/measurements/2026-11-27-h200/warpspec-early-c8dc81d/`, `…-8606920/`): 8x12x6
            /// 588.7–589.7 µs; `…_8x12x6_early_empty` 601.6–602.2, `…_8x12x4_early_empty`
            /// 615.0–617.0, `…_8x12x6_lookahead2_early_empty` 618.1–618.6 (copy 504.3–504.7).
            /// H100 80GB HBM3 at 2^28 (`docs/measurements/2026-11-27-h100/warpspec-early-8606920/`):
            /// 8x12x6 759.6–759.9 µs, `…_8x12x6_early_empty` 777.8–779.0,
            /// `…_8x12x6_lookahead2_early_empty` 796.1–797.1. ncu's source counters on the H200:
            /// the compute warps' wait for tiles falls from 25.4 % to 10.1 % of the stall samples,
            /// and their wait for offsets grows from 10.5 % to 26.9 % (H100: 34.0 → 17.7 % and
            /// 13.7 → 26.5 %): the stage comes free, and the look-ahead warp becomes the wait.
            /// With two look-ahead warps the wait goes back to the tiles (26.5 % and 4.4 %).
        ] $name, $warps, $items, $stages, 0, false, $looks, true);
    };
}

warpspec_early!(lookback_warpspec_8x12x6_early_empty, 8, 12, 6);
warpspec_early!(lookback_warpspec_8x12x4_early_empty, 8, 12, 4);
warpspec_early!(lookback_warpspec_8x12x6_lookahead2_early_empty, 8, 12, 6, 2);

/// Declares `lookback_warpspec` at a shape (compute warps, items per thread, stages) whose
/// look-ahead warp sleeps `$sleep` nanoseconds between two polls of an unpublished predecessor.
macro_rules! warpspec_sleep {
    ($name:ident, $warps:literal, $items:literal, $stages:literal, $sleep:literal) => {
        warpspec_shape!(@entry [
            /// `lookback_warpspec` at a shape (compute warps × items per thread × ring stages,
            /// in the name) whose look-ahead warp polls an unpublished predecessor's status word
            /// again after a shorter sleep (`…_spin`: none; `…_sleep{n}`: `n` ns) than
            /// [`LOOKBACK_SLEEP_NS`] (256): an experiment.
            ///
            /// # Concept
            /// **A serial role's wait is the pipeline's wait.** `lookback`'s 256 ns sleep lets the
            /// block's other warps issue while warp 0 polls, and gained 0.5 % there; here the
            /// look-ahead warp is alone on the block's critical path, and each sleep can delay a
            /// tile's prefix, and every compute warp waiting for it, by up to its length.
            ///
            /// # Previous problem → fix
            /// In the `…_early_empty` experiments the compute warps wait for the look-ahead warp
            /// in 27 % of their stall samples (H200, ncu source counters at 2^28), and its
            /// look-backs read 61.8 sectors of status words per tile instead of 8x12x6's 19.2
            /// (`docs/measurements/2026-11-27-h200/memory-8606920/`): it polls predecessors that
            /// are not yet published, sleeping 256 ns each time. Here it sleeps less or not at all.
            ///
            /// # Execution
            /// As `lookback_warpspec` (phases 1–5 of its docs), with the look-back's sleep of the
            /// name.
            ///
            /// # Launch
            /// As `lookback_warpspec`: block `(warps + 2) × 32` threads (traps otherwise),
            /// `warpspec_shared_bytes(warps, items, stages)` of dynamic shared memory; sm_90 only.
            ///
            /// # Preconditions
            /// As for `lookback_warpspec`.
            ///
            /// # Safety
            /// As for `lookback_warpspec`.
            ///
            /// # Measured
            /// int32 inclusive sums, 2 interleaved rounds against `lookback_warpspec_8x12x6` in
            /// the same invocations, NVIDIA H200 at 2^28
            /// (`docs/measurements/2026-11-27-h200/warpspec-sleep-dbacd53/`): 8x12x6 594.4–597.3 µs,
            /// `…_sleep64` 594.7–596.0, `…_spin` 595.6–598.0 (copy 508.3–508.5): no difference
            /// beyond the spread, at 10^8 neither. ncu: the L2 sectors read are the same with and
            /// without the sleep (35.23 million), so 8x12x6's look-ahead warp almost never polls
            /// twice; its pace is its reads' latency, not its sleep.
        ] $name, $warps, $items, $stages, 0, false, 1, false, $sleep, 1);
    };
}

warpspec_sleep!(lookback_warpspec_8x12x6_spin, 8, 12, 6, 0);
warpspec_sleep!(lookback_warpspec_8x12x6_sleep64, 8, 12, 6, 64);

/// Declares `lookback_warpspec` at a shape (compute warps, items per thread, stages) whose
/// look-ahead warp reads `$windows` windows of predecessors per round trip, and gives the stage
/// back early where `$early`.
macro_rules! warpspec_windows {
    ($name:ident, $warps:literal, $items:literal, $stages:literal, $windows:literal, $early:literal) => {
        warpspec_shape!(@entry [
            /// `lookback_warpspec` at a shape (compute warps × items per thread × ring stages,
            /// in the name) whose look-ahead warp loads `n` windows of 32 predecessors' status
            /// words at once (`…_windows{n}`), and, where the name says `early_empty`, whose
            /// compute warps give the stage back as soon as they have read it (as
            /// `lookback_warpspec_8x12x6_early_empty`): an experiment.
            ///
            /// # Concept
            /// **Issue the loads you will probably need together.** A serial chain of dependent
            /// loads costs a round trip each; loads that do not depend on each other can share
            /// one. The look-back reads a window, and only if it holds no inclusive prefix the
            /// next: read the next ones with it, and the common case costs one round trip.
            ///
            /// # Previous problem → fix
            /// The look-ahead warp sets the block's pace when the tiles land in time (the
            /// `…_early_empty` experiments: their compute warps wait for it in 27 % of the stall
            /// samples on the H200). Its look-back is not polling (`…_spin`, `…_sleep64`: the
            /// same time and the same L2 reads), but it reads 2.25 windows per tile on average,
            /// one after another, each an L2 round trip
            /// (`docs/measurements/2026-11-27-h200/memory-8606920/`). Here every lane loads its
            /// word of each of `n` windows before it looks at any (`look_back_windows`).
            ///
            /// # Execution
            /// As `lookback_warpspec` (phases 1–5 of its docs; with the `…_early_empty`
            /// experiments' phases 3 and 4 where the name says so), the look-ahead warp's
            /// look-back reading `n` windows per round trip.
            ///
            /// # Launch
            /// As `lookback_warpspec`: block `(warps + 2) × 32` threads (traps otherwise),
            /// `warpspec_shared_bytes(warps, items, stages)` of dynamic shared memory; sm_90 only.
            ///
            /// # Preconditions
            /// As for `lookback_warpspec`.
            ///
            /// # Safety
            /// As for `lookback_warpspec` (and the `…_early_empty` experiments where named);
            /// the loads of windows past the nearest prefix read status words below the tile,
            /// which exist.
            ///
            /// # Measured
            /// H100 80GB HBM3, int32 inclusive sums, 2 interleaved rounds against
            /// `lookback_warpspec_8x12x6` in the same invocations
            /// (`docs/measurements/2026-11-27-h100/warpspec-windows-df58a70/`): at 2^28 8x12x6
            /// 760.4–760.7 µs; `…_windows2` 781.3–781.7, `…_windows4` 800.6–803.4,
            /// `…_early_empty_windows2` 792.2–792.4 (copy 713.2–713.7); slower at 10^8 too. ncu
            /// on `…_windows2`: the compute warps' wait for the look-ahead warp fell from 13.7 %
            /// to 5.8 % of the stall samples, their wait for tiles grew from 34.0 % to 40.6 %.
            /// The L2 reads per tile (at 4c3dc28, `…/warpspec-windows-4c3dc28/`, whose windows
            /// code loads the same words) grew from 18.2 sectors (2.28 windows) to 26.6
            /// (`…_windows4`: 42.4). The look-ahead warp got faster and the tiles set the pace
            /// again. H200 (`docs/measurements/2026-11-27-h200/warpspec-windows-df58a70/`): 8x12x6
            /// 596.0–596.8 µs at 2^28; `…_windows2` 617.2–618.0, `…_windows4` 638.8–639.8,
            /// `…_early_empty_windows2` 626.0–627.1; tiles' wait 24.5 → 32.8 %, offsets'
            /// 11.4 → 3.7 %.
        ] $name, $warps, $items, $stages, 0, false, 1, $early, LOOKBACK_SLEEP_NS, $windows);
    };
}

warpspec_windows!(lookback_warpspec_8x12x6_windows2, 8, 12, 6, 2, false);
warpspec_windows!(lookback_warpspec_8x12x6_windows4, 8, 12, 6, 4, false);
warpspec_windows!(lookback_warpspec_8x12x6_early_empty_windows2, 8, 12, 6, 2, true);

/// Words from one tile's status word to the next's in the 32-bit layout of the plan's
/// warp-specialized scan (`lookback_warpspec_8x12x6` and its typed rows): 2, 16 bytes apart, the
/// word between unused (64-bit types' halves layout takes two words a tile anyway). So spaced,
/// the CUDA C twin (`scripts/gpu/explore/scan_steps.cu`) ran 0.8–1.3 % faster than packed on an
/// H100, a little faster than one word a 32-byte sector, and faster than 8 words apart (3 rounds,
/// `docs/measurements/2026-11-27-h100/scan-steps-spacing-81ff217/`) or 16
/// (`…/scan-steps-spacing-a980a85/`, `…/scan-steps-spread-2971dee/`); the Rust kernel so spaced
/// ran 0.2–0.6 % faster than packed in each of 9 rounds at 2^28
/// (`docs/measurements/2026-11-28-h100/warpspec-spaced-bb5302e/`).
pub const WARPSPEC_SPACED_WORDS: usize = 2;

warpspec_shape!(@entry [
    /// `lookback_warpspec_8x12x6` with its tiles' status words packed 8 bytes apart (tile `t`'s
    /// word at `status[t]`, four words a 32-byte sector), as every other shape of
    /// `lookback_warpspec` has them: an experiment, the layout 8x12x6 had before.
    ///
    /// # Concept
    /// **Where shared words lie is part of the algorithm.** Every block's look-ahead warp reads
    /// the newest tiles' status words, and every tile's word is written twice by other SMs, all
    /// through the L2 while the scan's own traffic fills it. Packed, four tiles' words share a
    /// 32-byte sector, and the writes and reads of up to four SMs meet on it.
    ///
    /// # Previous problem → fix
    /// None: this is the packed layout kept beside `lookback_warpspec_8x12x6`, which spaced its
    /// words ([`WARPSPEC_SPACED_WORDS`]), so that a sweep times the two in the same invocations.
    ///
    /// # Execution
    /// As `lookback_warpspec` (phases 1–5 of its docs) at 8x12x6, tile `t`'s status word at
    /// `status[t]`.
    ///
    /// # Launch
    /// As `lookback_warpspec_8x12x6`: block `10 × 32` threads (traps otherwise),
    /// `warpspec_shared_bytes(8, 12, 6)` (72 KiB) of dynamic shared memory; sm_90 only.
    ///
    /// # Preconditions
    /// As for `lookback_warpspec`.
    ///
    /// # Safety
    /// As for `lookback_warpspec`.
    ///
    /// # Measured
    /// H100 80GB HBM3: as `lookback_warpspec_8x12x6` before bb5302e (same PTX), slower than the
    /// spaced layout in each of 9 rounds (`lookback_warpspec_8x12x6`'s `# Measured`).
] lookback_warpspec_8x12x6_packed, 8, 12, 6, 0, false, 1, false);

/// The shape of the typed warp-specialized scans (compute warps, 32-bit words per compute
/// thread, ring stages): `lookback_warpspec_8x12x6`'s, the fastest shape for `i32` sums on the
/// H100 at 2^27 and above (`docs/measurements/2026-11-27-h100/warpspec-mid-cea6deb/`), so
/// `lookback_warpspec_8x12x6__{type}_{op}` are that variant's other rows.
pub const WARPSPEC_TYPED: (u32, u32, u32) = (8, 12, 6);

/// Words of the status array per tile of the warp-specialized scan of elements of `size` bytes
/// whose 32-bit layout lies `spacing` words a tile: 2 for a 64-bit type (its two halves,
/// `Status::halves`, whatever the spacing), else `spacing` (the packed word, then the unused
/// ones: 1 for packed, [`WARPSPEC_SPACED_WORDS`] for `lookback_warpspec_8x12x6` and its typed
/// rows). The status array holds this many words per tile, then the ticket counter.
pub const fn warpspec_status_words(size: usize, spacing: usize) -> usize {
    assert!(spacing >= 1, "a spacing of 0 would put every tile on one word");
    if size == 8 { 2 } else { spacing }
}

/// Elements of `T` per compute thread of a warp-specialized shape of `items` 32-bit words per
/// thread (12 words: 12 elements of 32 bits, 6 of 64 bits). The ring holds the same bytes for
/// every type.
pub const fn warpspec_items<T: Element>(items: u32) -> u32 {
    items / words::<T>() as u32
}

/// The shape [`WARPSPEC_TYPED`] for every other type and operator: the instantiations
/// `lookback_warpspec_8x12x6::{type}::{op}` of [`lookback_warpspec_generic`], beside the `i32`
/// sum of the same name.
pub mod lookback_warpspec_8x12x6 {
    #[allow(unused_imports)]
    use super::*;

    typed_kernel!(lookback_warpspec_8x12x6 = lookback_warpspec_generic(
        input: Global<T>,
        output: GlobalMut<T>,
        status: GlobalMut<u64>,
        n: u32,
        epoch: u32,
        exclusive: u32,
    ));
}

/// [`lookback_warpspec`] for any element type and operator, at the shape [`WARPSPEC_TYPED`]
/// (8x12x6): the same body (`warpspec::<T, O, …>`), instantiated by `typed_kernel!` as
/// `lookback_warpspec_8x12x6__{type}_{op}` for every type × operator but `i32` × sum, which is
/// [`lookback_warpspec_8x12x6`](fn@lookback_warpspec_8x12x6) itself.
///
/// # Concept
/// **A pipeline does not care what flows through it.** The roles, the ring and the hand-offs
/// of [`lookback_warpspec`] move 16-byte chunks of words; only the fold, the scan and the
/// status words know the element type. Replace `+` by `O::combine` and `0` by `O::IDENTITY`
/// (as [`lookback_generic`](super::lookback_generic) does for `lookback`), and a 64-bit value
/// crosses lanes as two shuffles and takes the two words that every control slot already has.
///
/// # Previous problem → fix
/// `lookback_warpspec` and its shapes scan `i32` sums only: the plan could take the
/// warp-specialized scan for a `Scanner::<i32, Sum>` but not for any other type. The ring and
/// the control slots were already sized for 64-bit values; what 64-bit types lacked is the
/// status word, which has no room for a 64-bit value beside its flag. 32-bit types keep the
/// packed word. 64-bit types first took `lookback_generic`'s split layout (a flag word and two
/// value slots per tile, `st.release` after the value, `ld.acquire` before it), and lost a
/// quarter of their speed (`# Measured`): one look-ahead warp per block pays those fences for
/// every tile in turn. So here they publish in the **halves** layout: two status words per
/// tile, each `epoch:30 | flag:2 | half:32` (`index::pack_halves`), written and read with
/// relaxed 64-bit atomics and no fence; a reader takes a tile's status only when both words
/// carry the same epoch and flag (`index::halves_agree`), and polls again when it catches an
/// aggregate's half beside the prefix's that replaced it. Each half is single-copy atomic with
/// its own flag, as the packed word is, so no order between the two stores is needed.
///
/// # Execution
/// [`lookback_warpspec`]'s phases 1–5 with `⊕` for `+`: 8 compute warps, a ring of 6 stages
/// of 8 × 32 × 12 words (12 elements of 32 bits or 6 of 64 bits per compute thread,
/// [`warpspec_items`]: a tile of 3072 or 1536 elements, 12 KiB either way); the look-ahead
/// warp's look-back reads the status of `T`'s layout (halves: both words of each predecessor,
/// relaxed, in one window of 32 as the packed words are).
///
/// # Launch
/// As `lookback_warpspec_8x12x6`: block `10 × 32` threads (traps otherwise),
/// `warpspec_shared_bytes(8, 12, 6)` (72 KiB) of dynamic shared memory, any grid ≥ 1 (the
/// host launches as many blocks as fit at once, at most one per tile). sm_90 only.
///
/// # Preconditions
/// As for `lookback_warpspec`, with `status` holding `2 × tiles + 1` words
/// (`warpspec_status_words(size of T, WARPSPEC_SPACED_WORDS)` a tile: a 32-bit `T`'s word and
/// the unused one after it, or a 64-bit `T`'s two halves; then the ticket counter), zeroed or
/// written by earlier launches with other epochs; `tiles = ceil(n / tile)`.
///
/// # Safety
/// As for `lookback_warpspec`, with `status` valid for `2 × tiles + 1` words.
///
/// # Measured
/// H100 80GB HBM3, inclusive scans, medians of interleaved rounds against
/// `lookback__{type}_{op}` (`scripts/gpu/warpspec_sweep.sh` with `TYPE`;
/// `docs/measurements/2026-11-27-h100/warpspec-typed-7f82da0/`):
///
/// | pair | n | rounds | `lookback` µs | this µs | `lookback` ÷ this, per round |
/// |---|---|---|---|---|---|
/// | u32 sum | 10^8 | 4 | 285.0–287.2 | 283.7–286.5 | 0.997–1.012 |
/// | u32 sum | 2^28 | 2 | 771.6–774.7 | 763.9–764.5 | 1.009–1.014 |
/// | i32 max | 2^28 | 2 | 768.9–771.2 | 763.5–765.7 | 1.004–1.010 |
/// | u64 sum | 5·10^7 | 3 | 296.7–300.0 | 406.4–406.5 | 0.730–0.738 |
/// | u64 sum | 2^27 | 2 | 805.5–806.7 | 1082.0–1083.8 | 0.744 |
/// | f64 sum | 5·10^7 | 3 | 296.4–297.6 | 409.3–409.6 | 0.724–0.727 |
/// | i64 sum | 5·10^7 | 3 | 297.2–298.5 | 405.9–407.1 | 0.730–0.734 |
///
/// The 32-bit rows above are of the packed layout; with the status words 16 bytes apart
/// (96e3d91, `docs/measurements/2026-11-28-h100/warpspec-plan-spaced-96e3d91/`, the rounds below; at
/// 2^24 and 1.5·2^24 each type was slower than `lookback` in some round):
///
/// | pair | n | rounds | `lookback` µs | this µs | `lookback` ÷ this, per round |
/// |---|---|---|---|---|---|
/// | u32 sum | 2^25 | 4 | 96.7–97.3 | 94.4–95.0 | 1.019–1.029 |
/// | u32 sum | 10^8 | 4 | 284.5–286.6 | 280.1–280.8 | 1.014–1.023 |
/// | u32 sum | 2^28 | 2 | 773.9–774.8 | 756.1–756.3 | 1.023–1.025 |
/// | f32 sum | 2^25 | 4 | 96.7–97.7 | 94.8–95.1 | 1.016–1.031 |
/// | f32 sum | 10^8 | 3 | 285.2–287.5 | 279.8–280.8 | 1.018–1.027 |
/// | f32 sum | 2^28 | 2 | 771.1–773.4 | 755.7–756.6 | 1.020–1.022 |
///
/// The 64-bit rows above are of the split layout (7f82da0). With the halves layout (7a970bd,
/// `docs/measurements/2026-11-27-h100/warpspec-halves-7a970bd/`):
///
/// | pair | n | rounds | `lookback` µs | this µs | `lookback` ÷ this, per round |
/// |---|---|---|---|---|---|
/// | u64 sum | 5·10^7 | 2 | 297.8 | 284.5–284.9 | 1.045–1.046 |
/// | u64 sum | 2^27 | 1 | 808.1 | 763.8 | 1.058 |
/// | f64 sum | 5·10^7 | 2 | 295.6–297.9 | 285.4 | 1.036–1.044 |
///
/// And at fc6a518 (the same 64-bit entries; `docs/measurements/2026-11-27-h100/warpspec-typed-fc6a518/`):
///
/// | pair | n | rounds | `lookback` µs | this µs | `lookback` ÷ this, per round |
/// |---|---|---|---|---|---|
/// | i64 sum | 5·10^7 | 3 | 296.3–297.6 | 283.6–284.4 | 1.042–1.047 |
/// | i64 sum | 2^27 | 3 | 803.2–805.3 | 763.8–764.9 | 1.052–1.054 |
/// | f32 sum | 10^8 | 3 | 284.0–285.5 | 282.6–283.8 | 1.004–1.008 |
///
/// 32-bit types gain what `i32` sums gain (about 1 % at 2^28); 64-bit types lost a quarter
/// with the split layout and gain 4–6 % with the halves layout (at 2^27 CUB takes 1.04× this
/// kernel's time for u64 sums, where it took 0.98× `lookback`'s).
/// ncu's source counters for u64 at 5·10^7 put 49.2 % of the stall samples on the compute
/// warps' *ready* wait (12 % for `i32` at 2^28): the look-ahead warp is the bottleneck. Its
/// split-layout look-back acquires each flag (`ld.acquire`, an L1 invalidation) before loading
/// the value, and publishes with `st.release` (a `MEMBAR.GPU`); one warp per block does that
/// for every tile in turn, where `lookback` runs a look-back per resident block. Hence the
/// halves layout. The plan (`host/src/scan/plan_by_device.csv`) takes this kernel on the H100
/// for u32 and f32 from 2^25 (as `i32`, spaced) and for i64, u64 and f64 from 5·10^7; on the
/// H200 for u32 and f32 from 1.5·2^27 (as `i32`,
/// `docs/measurements/2026-11-28-h200/warpspec-plan-spaced-52870fc/`) and for i64, u64 and f64
/// from 5·10^7, where it is 1.04–1.07× faster than `lookback`
/// (`docs/measurements/2026-11-27-h200/warpspec-typed-5405082/`: u64 at 2^27 604.8–605.1 µs
/// against 642.6–643.0, CUB 622.9–626.6).
#[inline(always)]
pub unsafe fn lookback_warpspec_generic<T: Element, O: Operator<T>>(
    input: Global<T>,
    output: GlobalMut<T>,
    status: GlobalMut<u64>,
    n: u32,
    epoch: u32,
    exclusive: u32,
) {
    const WARPS: usize = WARPSPEC_TYPED.0 as usize;
    const ROWS: usize = WARPSPEC_TYPED.1 as usize / 4;
    const STAGES: usize = WARPSPEC_TYPED.2 as usize;
    // SAFETY: forwarded from the caller.
    unsafe {
        warpspec::<T, O, WARPS, ROWS, STAGES, 0, false, 1, false, LOOKBACK_SLEEP_NS, 1>(
            input,
            output,
            Status::halves(status).spaced::<WARPSPEC_SPACED_WORDS>(),
            status,
            n,
            epoch,
            exclusive,
        )
    }
}
