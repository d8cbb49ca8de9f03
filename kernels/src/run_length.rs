//! The library's run-length encoding (`cub::DeviceRunLengthEncode::Encode`,
//! `torch.unique_consecutive(return_counts=True)`): the first value of each run of equal
//! consecutive elements, each run's length, and the number of runs — in **one pass**, on the
//! decoupled look-back of `scan::lookback`, as [`select`](crate::select) does for its unique
//! values. One generic kernel, [`run_length()`], instantiated for `i32`, `u32`, `f32`, and `u8`
//! and `u16` widened to words in the tile (`select::Widen`) (`run_length__i32`, …,
//! `run_length__u8`); the host's `reduce_scan::Select::run_length_encode` launches it.
//!
//! **What the look-back carries.** A run's length is the distance from its head (its first
//! element) to the next head. Inside a tile both are known; but the first head of a tile
//! closes a run that began in an earlier tile, perhaps many tiles back. So a tile publishes a
//! pair: the heads it holds (their count, added) and the position of its last head (the
//! largest, kept: positions grow with the tiles). The look-back combines the pairs of the
//! tiles before with [`Runs`], and learns both how many runs began before it (where its
//! values go) and where the last of them began (the length its first head closes).

use crate::device::global::{Global, GlobalMut};
use crate::device::kernel;
use crate::device::shared::Shared;
use crate::device::thread::{block_dim_x, grid_dim_x, named_barrier_sync};
use crate::device::warp::{ballot_sync, shfl_xor_sync};
use crate::device::{FULL_MASK, WARP_SIZE, trap};
use crate::scan::index::{FLAG_AGGREGATE, FLAG_PREFIX};
use crate::scan::lookback::{LOOKBACK_SLEEP_NS, Status, look_back_apart, read_slot, warp_inclusive_scan, words};
use crate::select::{
    CTRL_WORDS, HANDOFF_BARRIER, HANDOFF_THREADS, Mask, PREFIX_SLOT, Place, ROWS, SELECT_STATUS_SPACING,
    SELECT_TILE_WORDS, THREADS, Widen, compact, get_index, load_tile, lookahead_warps, mask_unique, prefetch_ahead,
    select_block, sync_tile,
};
use crate::static_shared;
use crate::types::{Operator, Sum};

/// Shared control words (after the tile) where each warp leaves its last head: tile index + 1,
/// or 0 for none (slots 16 … 23; the counts take 0 … 7, the prefix 32).
const LAST_SLOT: usize = 16;
/// The shared control word holding the position of the last head before the tile.
const LAST_BEFORE_SLOT: usize = PREFIX_SLOT + 1;
const _: () = assert!(THREADS / WARP_SIZE as usize <= LAST_SLOT && LAST_SLOT * 2 <= PREFIX_SLOT);

/// Status words a tile of [`run_length()`]: its pair's two halves at `status[t × W]` and the
/// word after, W = [`SELECT_STATUS_SPACING`] (at least 2), so tiles' words lie as far apart as
/// `select`'s (8: 64 bytes). The host allocates `tiles × RUN_LENGTH_STATUS_WORDS` words.
pub const RUN_LENGTH_STATUS_WORDS: usize = if SELECT_STATUS_SPACING < 2 { 2 } else { SELECT_STATUS_SPACING };

/// A tile of [`run_length()`] asks L2 for tile +
/// [`SELECT_PREFETCH_TILES`](crate::select::SELECT_PREFETCH_TILES) (step 4b) only where its
/// runs are at least `1 / RUN_LENGTH_PREFETCH_SHARE` of its elements ([`run_prefetch_pays`]): a
/// thirty-second. A run writes two elements (its value and its
/// length), so that is a sixteenth of the elements written, where `select` asks for a quarter
/// ([`SELECT_PREFETCH_SHARE`](crate::select::SELECT_PREFETCH_SHARE)). On an H200 at 2^28
/// (`docs/measurements/2026-12-01-h200/session56/r56b/ab/ab.csv`, 2 interleaved rounds, each row
/// the median of 20 launches, checked against the CPU; builds that differ in this rule alone,
/// with the look-ahead warp and the status words 8 apart), a thirty-second / an eighth /
/// always: `i32 run:1024` 309.1–309.6 / 309.1–309.4 / 316.0–316.4 µs, `i32 run:16`
/// 345.8–346.6 / 359.2–359.5 / 345.5–346.7, `u8 run:16` 281.2 / 294.4–294.5 / 280.9–281.2,
/// `i32 run:1` 887.5–888.5 / 888.1–888.3 / 885.5–885.8.
pub const RUN_LENGTH_PREFETCH_SHARE: usize = 32;

/// Does a tile of `valid` elements holding `heads` run heads ask L2 for a later tile (step 4b
/// of [`run_length()`]): are its runs at least `1 /` [`RUN_LENGTH_PREFETCH_SHARE`] of its
/// elements?
///
/// ```
/// # use reduce_scan_kernels::run_length::{RUN_LENGTH_PREFETCH_SHARE, run_prefetch_pays};
/// assert!(run_prefetch_pays(7168, 7168) && !run_prefetch_pays(0, 7168));
/// assert!(run_prefetch_pays(7168 / RUN_LENGTH_PREFETCH_SHARE, 7168)); // runs of 32
/// assert!(!run_prefetch_pays(7168 / RUN_LENGTH_PREFETCH_SHARE - 1, 7168));
/// ```
#[inline(always)]
pub fn run_prefetch_pays(heads: usize, valid: usize) -> bool {
    heads * RUN_LENGTH_PREFETCH_SHARE >= valid
}

/// The status array of [`run_length()`]: the pairs' halves, [`RUN_LENGTH_STATUS_WORDS`] apart.
type Pairs = Status<u64, RUN_LENGTH_STATUS_WORDS>;

/// The look-back's pair as one `u64`: `count` runs begin in a span of tiles (low 32 bits),
/// the last of them at element `last` (high 32 bits; 0 where `count` is 0).
pub const fn pack_runs(count: u32, last: u32) -> u64 {
    count as u64 | (last as u64) << 32
}

/// [`pack_runs`]' `count`.
pub const fn runs_count(pair: u64) -> u32 {
    pair as u32
}

/// [`pack_runs`]' `last`.
pub const fn runs_last(pair: u64) -> u32 {
    (pair >> 32) as u32
}

/// The pairs of two spans, one after the other (or either order: both halves commute): the
/// counts added, the larger last position kept. Associative and commutative, with identity
/// [`pack_runs`]`(0, 0)` (0 is the first head's position, and every input has it).
pub const fn combine_runs(a: u64, b: u64) -> u64 {
    let (la, lb) = (runs_last(a), runs_last(b));
    pack_runs(runs_count(a).wrapping_add(runs_count(b)), if la > lb { la } else { lb })
}

/// The operator of the look-back's pairs: [`combine_runs`], identity 0. For the look-back
/// alone: it has no atomic.
pub struct Runs;

impl Operator<u64> for Runs {
    const NAME: &'static str = "runs";
    const IDENTITY: u64 = 0;
    #[inline(always)]
    fn combine(a: u64, b: u64) -> u64 {
        combine_runs(a, b)
    }
    unsafe fn red(_ptr: GlobalMut<u64>, _value: u64) {
        trap("Runs has no atomic: it combines the look-back's pairs only");
    }
    #[inline(always)]
    fn warp_reduce(mut value: u64) -> u64 {
        let mut m = 16;
        while m > 0 {
            value = combine_runs(value, shfl_xor_sync(FULL_MASK, value, m));
            m /= 2;
        }
        value
    }
}

/// Step 4 of [`run_length()`]: the tile's pair, [`pack_runs`]`(heads, position of the last)`,
/// from every thread's `mask`: the heads' count by a warp scan and the warp totals, the last head
/// by each warp's highest lane with a head (`__ballot_sync`) leaving its last one; with a
/// barrier. Returns the pair, the tile-local rank of the thread's first head, and the tile's
/// head count.
///
/// # Safety
/// Every thread of the tile's warps calls it; `smem`'s control words after `tile_words` are
/// free.
#[inline(always)]
unsafe fn tile_pair<S: Widen>(mask: Mask, p: Place, smem: Shared<u32>, tile_words: usize) -> (u64, usize, u32) {
    let count = mask.count_ones();
    let incl = warp_inclusive_scan::<u32, Sum>(count, p.lane);
    let with_heads = ballot_sync(FULL_MASK, mask != 0);
    if p.lane == WARP_SIZE - 1 {
        // SAFETY: a control word of this warp's, read after the barrier.
        unsafe { smem.write(tile_words + p.warp, incl) };
    }
    let highest = if with_heads == 0 { 0 } else { 31 - with_heads.leading_zeros() };
    if p.lane == highest {
        // Tile index + 1 of the thread's last head; 0 where the warp has none.
        let last = if mask == 0 { 0 } else { p.first + Mask::BITS as usize - mask.leading_zeros() as usize };
        // SAFETY: this warp's last-head word, one lane writes it, read after the barrier.
        unsafe { smem.write(tile_words + LAST_SLOT + p.warp, last as u32) };
    }
    sync_tile::<S>();
    let (mut warp_offset, mut aggregate, mut last) = (0u32, 0u32, 0u32);
    for w in 0..THREADS / WARP_SIZE as usize {
        // SAFETY: written before the barrier, not written again.
        let (x, l) = unsafe { (smem.read(tile_words + w), smem.read(tile_words + LAST_SLOT + w)) };
        warp_offset += if w < p.warp { x } else { 0 };
        aggregate += x;
        last = last.max(l);
    }
    let pair = pack_runs(aggregate, if last == 0 { 0 } else { (p.base + last as usize - 1) as u32 });
    (pair, (warp_offset + incl - count) as usize, aggregate)
}

/// The look-back of step 6 (one whole warp, [`Runs`]): the pair of the tiles before this one
/// (the runs begun and where the last began; 0 for tile 0).
///
/// # Safety
/// A whole warp, the same tile and epoch for every lane; tiles publish in `pairs`.
#[inline(always)]
unsafe fn look_back_pair(pairs: Pairs, (p, epoch): (Place, u32)) -> u64 {
    if p.tile == 0 {
        0
    } else {
        // SAFETY: the caller's promise.
        unsafe {
            look_back_apart::<u64, Runs, LOOKBACK_SLEEP_NS, RUN_LENGTH_STATUS_WORDS>(pairs, p.tile, epoch, p.lane)
        }
    }
}

/// Leaves the pair of the tiles before in the control words, for the tile's warps to read
/// after a barrier.
///
/// # Safety
/// One thread; `smem` holds `tile_words` and the control words after them; read after a barrier.
#[inline(always)]
unsafe fn leave_pair(smem: Shared<u32>, tile_words: usize, exclusive: u64) {
    // SAFETY: the caller's promise; no other thread writes these two words.
    unsafe {
        smem.write(tile_words + PREFIX_SLOT, runs_count(exclusive));
        smem.write(tile_words + LAST_BEFORE_SLOT, runs_last(exclusive));
    }
}

/// Step 6 with a look-ahead warp, its side: from the block's start it looks back (the tiles
/// before publish whether or not this tile has loaded), leaves the pair in the control words,
/// and meets the tile's warps at the hand-off barrier (`select`'s `look_ahead`, with a pair for
/// a count).
///
/// # Safety
/// The look-ahead warp, whole; `smem` holds `tile_words` and the control words after them.
#[inline(always)]
unsafe fn look_ahead(pairs: Pairs, (p, epoch): (Place, u32), smem: Shared<u32>, tile_words: usize) {
    // SAFETY: the whole warp, the same tile and epoch.
    let exclusive = unsafe { look_back_pair(pairs, (p, epoch)) };
    if p.lane == 0 {
        // SAFETY: one lane; read after the hand-off barrier.
        unsafe { leave_pair(smem, tile_words, exclusive) };
    }
    // SAFETY: the look-ahead warp and the tile's 256 threads reach it.
    unsafe { named_barrier_sync(HANDOFF_BARRIER, HANDOFF_THREADS) };
}

/// Step 6 of [`run_length()`], the tile's side: the pair of the tiles before, after a barrier.
/// With a look-ahead warp, the hand-off barrier, then thread 0 publishes the tile's inclusive
/// pair; without one (the narrow types), warp 0 looks back now, lane 0 publishes, and a barrier
/// of the block follows.
///
/// # Safety
/// The tile's threads, all, after thread 0 published the tile's `pair`; `smem` holds
/// `tile_words` and the control words after them.
#[inline(always)]
unsafe fn tile_prefix<S: Widen>(
    pairs: Pairs,
    (p, epoch, pair): (Place, u32, u64),
    smem: Shared<u32>,
    tile_words: usize,
) -> u64 {
    let publishes = p.tid == 0 && p.tile > 0;
    if lookahead_warps::<S>() > 0 {
        // SAFETY: the look-ahead warp and the tile's 256 threads reach it.
        unsafe { named_barrier_sync(HANDOFF_BARRIER, HANDOFF_THREADS) };
    } else {
        if p.warp == 0 {
            // SAFETY: warp 0, whole, the same tile and epoch.
            let exclusive = unsafe { look_back_pair(pairs, (p, epoch)) };
            if p.lane == 0 {
                if publishes {
                    // SAFETY: this tile's two words; its aggregate went out first.
                    unsafe { pairs.publish(p.tile, epoch, FLAG_PREFIX, combine_runs(exclusive, pair)) };
                }
                // SAFETY: one lane; read after the barrier below.
                unsafe { leave_pair(smem, tile_words, exclusive) };
            }
        }
        sync_tile::<S>();
    }
    // SAFETY: written before the barrier.
    let exclusive = unsafe { pack_runs(smem.read(tile_words + PREFIX_SLOT), smem.read(tile_words + LAST_BEFORE_SLOT)) };
    if lookahead_warps::<S>() > 0 && publishes {
        // SAFETY: this tile's two words; its aggregate went out first.
        unsafe { pairs.publish(p.tile, epoch, FLAG_PREFIX, combine_runs(exclusive, pair)) };
    }
    exclusive
}

/// The body of [`run_length()`].
///
/// # Safety
/// As for [`run_length()`]; `smem` holds the tile's words and [`CTRL_WORDS`] after them,
/// `index` one 16-bit half-word per tile element.
#[inline(always)]
unsafe fn run_length_with<S: Widen>(
    (input, unique, lengths): (Global<S>, GlobalMut<S>, GlobalMut<u32>),
    (runs, status): (GlobalMut<u32>, GlobalMut<u64>),
    (n, epoch, aligned): (usize, u32, bool),
    (smem, index): (Shared<u32>, Shared<u16>),
) {
    if block_dim_x() != select_block::<S>() {
        trap("run_length launched with a block size other than the one it was compiled for");
    }
    let (tile_words, per) = (THREADS * 4 * ROWS, words::<S::Wide>());
    let (tile_len, items) = (tile_words / per, 4 * ROWS / per);
    let p = Place::here(n, tile_len, items);
    let (tid, tile) = (p.tid, p.tile);
    let pairs: Pairs = Status::<u64>::halves(status).apart();
    // 1.–2. Load the tile; barrier. The look-ahead warp branches off after the tile's copies
    // (before them, ptxas 12.9 miscompiles the copies: `select_with` says how).
    if lookahead_warps::<S>() == 0 || tid < THREADS {
        // SAFETY: forwarded (input holds n elements, 16-byte aligned where `aligned`).
        unsafe { load_tile::<S>(input, p, (n, aligned), smem) };
    }
    if lookahead_warps::<S>() > 0 && tid >= THREADS {
        // SAFETY: the look-ahead warp, whole; the tile's warps meet it at the hand-off.
        unsafe { look_ahead(pairs, (p, epoch), smem, tile_words) };
        return;
    }
    sync_tile::<S>();
    // 3. The heads: the elements that differ from the one before.
    // SAFETY: after the load's barrier; input holds n elements.
    let mask = unsafe { mask_unique::<S>(p, input, smem, items) };
    // 4. The tile's pair (the heads' count, the last head); thread 0 publishes it at once.
    // SAFETY: after the load's barrier; every thread of the tile's warps calls it.
    let (pair, before, aggregate) = unsafe { tile_pair::<S>(mask, p, smem, tile_words) };
    if tid == 0 {
        let flag = if tile == 0 { FLAG_PREFIX } else { FLAG_AGGREGATE };
        // SAFETY: tile's two words (tile < gridDim.x); one thread, the aggregate first.
        unsafe { pairs.publish(tile, epoch, flag, pair) };
    }
    // 4b. While this tile waits on its look-back, L2 fetches the one a later block will load,
    // where this tile holds runs enough for that to pay.
    if run_prefetch_pays(aggregate as usize, p.valid) {
        // SAFETY: the input holds n elements; whole tiles in the input only.
        unsafe { prefetch_ahead::<S>(input, tile, (n, tile_len), tid) };
    }
    // 5. Compact the heads' indices.
    // SAFETY: after the barrier; distinct ranks.
    unsafe { compact((mask, mask), p, before, false, tile_len, index) };
    // 6. The runs begun before the tile, and where the last of them began; barrier.
    // SAFETY: the tile's warps, after publishing the tile's pair.
    let exclusive = unsafe { tile_prefix::<S>(pairs, (p, epoch, pair), smem, tile_words) };
    let at = (runs_count(exclusive) as usize, runs_last(exclusive) as usize, aggregate as usize);
    // SAFETY: after the barrier; the outputs' elements written are this tile's alone.
    unsafe { store::<S>(p, at, n, (unique, lengths, runs), (smem, index)) };
}

/// Step 7: the tile's heads (gathered from the tile through `index`) to `unique[prefix ..]`,
/// and the length each closes (its position less the head before it) to `lengths[prefix − 1
/// ..]`: consecutive threads write consecutive elements. The last tile's thread 0 writes the
/// last run's length (to the input's end) and the number of runs.
///
/// # Safety
/// After [`compact`] and a barrier; `unique` and `lengths` hold `n` elements, `runs` one.
#[inline(always)]
unsafe fn store<S: Widen>(
    p: Place,
    (prefix, last_before, aggregate): (usize, usize, usize),
    n: usize,
    (unique, lengths, runs): (GlobalMut<S>, GlobalMut<u32>, GlobalMut<u32>),
    (smem, index): (Shared<u32>, Shared<u16>),
) {
    // SAFETY: slots below the tile's head count, written before the barrier.
    let head = |slot: usize| unsafe { get_index(index, slot) };
    let mut i = p.tid;
    while i < aggregate {
        let at = head(i);
        // SAFETY: tile indices below its length; the tile is never written after its load;
        // prefix + i < n, this tile's run.
        unsafe { unique.write(prefix + i, S::narrow(read_slot::<S::Wide, u32>(smem, 0, at))) };
        if prefix + i > 0 {
            let before = if i > 0 { p.base + head(i - 1) } else { last_before };
            // SAFETY: run prefix + i − 1 ends at this head: this tile alone writes its length.
            unsafe { lengths.write(prefix + i - 1, (p.base + at - before) as u32) };
        }
        i += THREADS;
    }
    if p.tile + 1 == grid_dim_x() as usize && p.tid == 0 {
        let total = prefix + aggregate;
        let last = if aggregate > 0 { p.base + head(aggregate - 1) } else { last_before };
        // SAFETY: the last run ends at the input's end; one thread of the last tile writes it
        // and the count.
        unsafe {
            lengths.write(total - 1, (n - last) as u32);
            runs.write(0, total as u32);
        }
    }
}

kernel! {
    /// Run-length encoding in one pass: `unique` gets the first element of each run of equal
    /// consecutive elements of `input`, `lengths` each run's length, and `runs[0]` the number
    /// of runs.
    ///
    /// # Concept
    /// **A scan can carry more than a sum.** Run-length encoding is a compaction of the heads
    /// (the elements unequal to the one before, [`select`](crate::select)'s unique values)
    /// plus each run's length: the distance to the next head. A head at the start of a tile
    /// closes a run begun tiles earlier, so the look-back's value is a pair, the runs begun
    /// and where the last began, combined by an associative operator ([`Runs`]: counts added,
    /// positions by maximum): any associative operator can ride the decoupled look-back.
    ///
    /// # Previous problem → fix
    /// With a count alone, the first head of a tile does not know where the run it closes
    /// began: a second pass (or a write of every head's position and a pass of differences)
    /// would find it. Carrying the last head's position beside the count in the tile's status
    /// (two tagged words, as the 64-bit scan's halves layout does) answers it in the same
    /// look-back, so every element is read once and every output element written once.
    ///
    /// # Execution
    /// Block [`select_block`](crate::select::select_block) (288 for `i32`, `u32`, `f32`: the
    /// tile's 256 threads and `select`'s look-ahead warp; 256 for `u8`, `u16`), tile of
    /// [`select_tile`](crate::select::select_tile) elements (7168 of 32 bits): `select`'s
    /// steps for unique values, with a pair for a count.
    /// 1. **Tile** `blockIdx.x`.
    /// 2. **Load** the tile into shared memory (`cp.async`, evict first; the last tile, a
    ///    misaligned input or a narrow type's four elements a chunk through registers, the
    ///    narrow ones widened to words); the tile's barrier (`bar.sync 1, 256` with a
    ///    look-ahead warp). Once the copies are issued, the **look-ahead warp** (threads
    ///    256–287) looks back from the tile's start (step 6) while the tile's warps go on.
    /// 3. **Heads**: each thread marks its 28 elements that differ from the one before in a
    ///    32-bit mask (one comparison an element; the elements past the tile's end cleared
    ///    once).
    /// 4. **Pair**: popcount and an inclusive warp scan (lane 31 writes its warp's count), and
    ///    the warp's last head (`__ballot_sync`: its highest lane with a head writes its last);
    ///    barrier; thread 0 publishes (count, last head's position) in the tile's two status
    ///    words (`status[W·t]` and the next, W = [`RUN_LENGTH_STATUS_WORDS`]: 8, so a tile's
    ///    words and its neighbours' lie in sectors of their own, as `select`'s do).
    ///    **4b. Prefetch**: as `select`'s step 4b, one 128-byte line a thread of tile
    ///    `blockIdx.x +` [`SELECT_PREFETCH_TILES`](crate::select::SELECT_PREFETCH_TILES) asked
    ///    of L2 while the tile waits for its look-back, **only where its runs are at least
    ///    1/32 of its elements** ([`run_prefetch_pays`], [`RUN_LENGTH_PREFETCH_SHARE`], whose
    ///    figures say what always and an eighth cost). Before the rule, session 53's A/B
    ///    (`docs/measurements/2026-12-01-h200/warp-store/r53a/rl/ab.csv`, 2 rounds) found the
    ///    prefetch slowing `i32 run:1024` by 5.9 % and speeding the five other rows by
    ///    3.2–7.8 %.
    /// 5. **Compact** the heads' tile indices in shared memory at their tile-local ranks (a
    ///    16-bit store each, as `select`'s step 5, which says what it gained and cost).
    /// 6. **Look back** (`look_back` with [`Runs`]): the runs begun before the tile and where
    ///    the last began. With a look-ahead warp, it leaves them in the control words and meets
    ///    the tile's warps at the hand-off barrier (`bar.sync 2, 288`), after which thread 0
    ///    publishes the inclusive pair; without one (`u8`, `u16`), warp 0 looks back after
    ///    step 5, lane 0 publishes, and a barrier follows. Together with the status words 8
    ///    apart and the prefetch's rule, on the H200 at 2^28
    ///    (`docs/measurements/2026-12-01-h200/session56/r56b/ab/ab.csv`, 2 interleaved rounds,
    ///    each the median of 20 launches, checked against the CPU; `la16` is this kernel's PTX)
    ///    against the kernel before (all three absent): `i32 run:1024` 309.1–309.6 µs against
    ///    366.2 (−15.5 %), `i32 run:16` 345.8–346.6 against 394.9–395.1 (−12.3 %), `f32 run:16`
    ///    −12.2 %, `i32 run:1` 887.5–888.5 against 922.3–922.6 (−3.7 %), `u8 run:16` 281.2
    ///    against 283.5 (−0.8 %, no look-ahead warp). Without the warp (spacing and rule alone):
    ///    `i32 run:16` 370.1–370.3, `run:1024` 304.4, `run:1` 896.9–897.4.
    /// 7. **Store**: thread `t` writes heads `t`, `t + 256`, … to `unique[prefix + i]` and
    ///    the length each closes to `lengths[prefix + i − 1]` (for the tile's first head, from
    ///    the last head before the tile); the last tile's thread 0 writes the last run's
    ///    length and the number of runs.
    ///
    /// # Launch
    /// Grid `ceil(n / select_tile::<T>())`, block exactly
    /// [`select_block::<T>()`](crate::select::select_block) (traps otherwise); static shared
    /// memory `(7168 + 36) × 4` bytes (the tile, the counts, the last heads, the prefix) and
    /// `7168 × 2` (the indices).
    ///
    /// # Preconditions
    /// `input`, `unique` and `lengths` hold `n ≥ 1` elements each and do not overlap; `input`
    /// is 16-byte aligned where `aligned` is 1 (else any alignment of `T`); `status` holds
    /// [`RUN_LENGTH_STATUS_WORDS`] `× gridDim.x` words, zeroed or written by launches with other
    /// epochs; `epoch` is in
    /// `1..=index::MAX_EPOCH`, new on this status array since it was zeroed; `n < 2^32`.
    ///
    /// # Safety
    /// The pointers are valid device memory of those lengths. Every thread reaches every
    /// barrier; the look-back waits only for tiles with smaller ids (`lookback`'s "Tile
    /// order").
    ///
    /// # Measured
    /// 2^28 elements, values uniform over [0, 1000) in runs of mean length L (`run:L`), NVIDIA H200 (`docs/measurements/2026-12-01-h200/session56/r56c/run_length.csv`, commit 0d2f607; `scripts/gpu/select.sh run_length`'s rows, 1 round, each row `reduce --op run_length … --compare-cub`: the median of 20 launches between CUDA events, CUB's `DeviceRunLengthEncode::Encode` on the same values in the same row, both checked against the CPU; × = CUB's median over ours; the bound: the bytes read and written at the peak bandwidth; PyTorch's `unique_consecutive(return_counts=True)` on the same shapes, its own values, `docs/measurements/2026-12-01-h200/session56/r56c/run_length_torch.csv`): `run_length` `i32` run:1: 889.7 µs (75.2 % of the bound), CUB 1159.2 µs (1.30×); PyTorch 2066.9 µs; `run_length` `i32` run:16: 346.2 µs (72.5 % of the bound), CUB 745.1 µs (2.15×); PyTorch 1371.4 µs; `run_length` `i32` run:1024: 310.3 µs (72.0 % of the bound), CUB 674.8 µs (2.17×); PyTorch 1307.4 µs; `run_length` `f32` run:16: 346.8 µs (72.3 % of the bound), CUB 752.0 µs (2.17×); PyTorch 1373.3 µs.
    /// The narrow types, widened in the tile: 2^28 elements, values uniform over [0, 1000) (`u8`: [0, 256)), NVIDIA H200 (`docs/measurements/2026-12-01-h200/session56/r56c/narrow.csv`, commit 0d2f607; rows as above, ours and CUB's only, rounds as named): `run_length` `u8` run:16: 280.4 µs (26.1 % of the bound), CUB 647.2 µs (2.31×, 1 round); `run_length` `u16` run:1: 675.6 µs (66.0 % of the bound), CUB 1067.9 µs (1.58×, 1 round); `run_length` `u16` run:1024: 291.3 µs (38.4 % of the bound), CUB 661.6 µs (2.27×, 1 round).
    pub unsafe fn run_length<T: Widen>(
        input: Global<T>,
        unique: GlobalMut<T>,
        lengths: GlobalMut<u32>,
        runs: GlobalMut<u32>,
        status: GlobalMut<u64>,
        n: u32,
        epoch: u32,
        aligned: u32
    ) for [i32, u32, f32, u8, u16] {
        let smem = static_shared!(RUN_LENGTH_SHARED: [u32; SELECT_TILE_WORDS as usize + CTRL_WORDS]);
        let index = static_shared!(RUN_LENGTH_INDEX: [u16; SELECT_TILE_WORDS as usize]);
        // SAFETY: forwarded from the caller; smem holds the tile and the control words.
        unsafe {
            run_length_with::<T>(
                (input, unique, lengths),
                (runs, status),
                (n as usize, epoch, aligned != 0),
                (smem, index),
            )
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pairs_combine_counts_and_the_last_head() {
        assert_eq!(runs_count(pack_runs(7, 9)), 7);
        assert_eq!(runs_last(pack_runs(7, u32::MAX)), u32::MAX);
        // The tiles before (3 runs, the last at 100), a tile with none, a tile with 2 (last at 7000).
        let (a, none, b) = (pack_runs(3, 100), pack_runs(0, 0), pack_runs(2, 7000));
        assert_eq!(combine_runs(combine_runs(a, none), b), pack_runs(5, 7000));
        assert_eq!(combine_runs(a, combine_runs(none, b)), pack_runs(5, 7000));
        assert_eq!(combine_runs(b, a), combine_runs(a, b));
        assert_eq!(combine_runs(a, 0), a);
        assert_eq!(combine_runs(pack_runs(u32::MAX, 5), pack_runs(2, 6)), pack_runs(1, 6));
    }
}
