//! The library's stream compaction (`cub::DeviceSelect::If`, `Flagged`, `Unique`,
//! `cub::DevicePartition::If`, `Flagged`; `torch.masked_select`, `torch.unique_consecutive`'s
//! values): keep the elements a predicate, a flag array or "differs from the one before"
//! selects, in order, and count them — in **one pass**, on the decoupled look-back of
//! `scan::lookback`. One generic kernel, [`select()`], instantiated for `i32`, `u32`, `f32`,
//! and `u8` and `u16` widened to words in the tile ([`Widen`]) (`select__i32`, …,
//! `select__u8`); the host's `reduce_scan::Select` launches it.
//!
//! **What a compaction is for a scan.** An element's place in the output is the number of
//! selected elements before it: an exclusive scan of the 0/1 flags. The three-launch form
//! writes the flags, scans them, and scatters; here a tile flags its elements in registers,
//! counts them, and learns how many the tiles before it selected from the look-back (the same
//! status words as the scan's, holding counts), so every element is read once and every kept
//! element written once.
//!
//! **Which elements.** [`Predicate`], the one rule the kernel and the host's CPU reference
//! both call: a comparison with an operand, as a mask of the four outcomes (below, equal,
//! above, unordered: NaN on either side).

/// The compaction lesson's kernel: the three launches fused into one pass by the look-back.
pub mod compact_one_pass;

/// Elements each thread of the compaction lesson's kernels reads: four consecutive ones, one
/// 16-byte load (a tile is a block's `4 × blockDim`; a warp's loads, 512 consecutive bytes).
/// Measured by `./x learn 27 --gpu` on an H200 at 2^24, block 512, the three launches and the
/// one pass (`docs/measurements/2026-11-30-h200/learn-gpu-*/`), before the kept elements were
/// staged in shared memory: at one element a thread, 276 and 477 µs (the one pass's look-back
/// then read one tile at a time); at eight read one at a time (12.5 % load efficiency), 90.9
/// and 88.5; at four in one load, 92.7–93.3 and 88.7; at sixteen in four loads, 124.3–125.1 and
/// 111.8–113.1. With the stage: 97.2–97.7 and 86.0–87.0.
pub const COMPACT_ITEMS_PER_THREAD: usize = 4;

/// Shared words of the compaction lesson's staging: a tile of the largest block
/// (`COMPACT_ITEMS_PER_THREAD × 1024`, 16 KiB), where a tile's kept elements are packed before
/// they are written out with consecutive threads at consecutive places.
pub const COMPACT_STAGE: usize = COMPACT_ITEMS_PER_THREAD * 1024;
/// The compaction lesson's start (`./x learn 27`): three launches, flags, a scan, a scatter
/// (`compact_flags`, `compact_offsets`, `compact_scatter`).
pub mod compact_three_pass;

use crate::device::global::{Global, GlobalMut, l2_evict_first_policy};
use crate::device::kernel;
use crate::device::shared::{Shared, copy_async_commit, copy_async_wait};
use crate::device::thread::{block_dim_x, block_idx_x, grid_dim_x, named_barrier_sync, sync_threads, thread_idx_x};
use crate::device::warp::Shuffle;
use crate::device::{WARP_SIZE, trap};
use crate::scan::index::{FLAG_AGGREGATE, FLAG_PREFIX, blocked_chunk, striped_chunk};
use crate::scan::lookback::{
    LOOKBACK_SLEEP_NS, Status, load_guarded, look_back, read_slot, unpack, warp_inclusive_scan, words,
};
use crate::static_shared;
use crate::types::{Element, Sum};

// ---------------------------------------------------------------------------------------
// Tuning: the tile of `select` is `lookback`'s (the same shared-memory budget per block).

/// Threads per block of [`select()`] that load, flag, count and store the tile.
pub const SELECT_THREADS: u32 = 256;
/// Look-ahead warps a block of [`select()`] adds for the 32-bit types (1, or 0 for none): the
/// **look-ahead warp** looks back from the block's start, while the tile's warps load and count,
/// so the chain's round trips overlap the tile's load instead of following its count (with 0,
/// warp 0 looks back after the count, as until session 54). The narrow types keep 256 threads:
/// with their 47 registers a thread, blocks of 288 fit only 4 an SM (`select u8 lt:128` 4.3 %
/// slower with the warp, spacing 1: `r54b`). On an H200 at 2^28 (interleaved rounds, each row
/// the median of 20 launches, checked against the CPU; `docs/measurements/2026-12-01-h200/`
/// `lookahead/`), with the status words 2 apart, the warp against none: `select i32 lt:500`
/// 449.2–449.4 µs against 454.0–454.6, `lt:10` 322.2 against 339.7–339.9, `f32 lt:10`
/// 322.3–322.7 against 340.1–340.3, `unique i32 run:1` 593.1 against 599.9, `partition i32
/// lt:500` 596.1–597.0 against 592.8 (`r54c`; `r54b` the same within 0.5 %).
pub const SELECT_LOOKAHEAD_WARPS: u32 = 1;
const _: () = assert!(SELECT_LOOKAHEAD_WARPS <= 1, "one look-ahead warp at most: threads 256-287 look back");
/// Threads at the hand-off barrier: the tile's and the one look-ahead warp's.
pub(crate) const HANDOFF_THREADS: u32 = SELECT_THREADS + 32;
/// Look-ahead warps of `select::<T>`: [`SELECT_LOOKAHEAD_WARPS`] for a 32-bit type, 0 for a
/// narrow one.
pub const fn lookahead_warps<T: Widen>() -> u32 {
    if T::NARROW { 0 } else { SELECT_LOOKAHEAD_WARPS }
}
/// Threads `select::<T>` is launched with: the tile's [`SELECT_THREADS`] and its look-ahead
/// warp's 32 (288 for `i32`, `u32`, `f32`; 256 for `u8`, `u16`).
pub const fn select_block<T: Widen>() -> u32 {
    SELECT_THREADS + 32 * lookahead_warps::<T>()
}
/// Tile `t`'s status word lies at `status[t × SELECT_STATUS_SPACING]` (8-byte words: 4 puts
/// each tile's word in a 32-byte sector of its own, where 4 tiles shared one; 8, two words a
/// 128-byte line), so a tile's publications and its successors' polls of other tiles stop
/// meeting in one sector. The
/// host allocates `tiles × SELECT_STATUS_SPACING` words. On an H200 at 2^28 (as above), 1 / 2 /
/// 4 with the look-ahead warp (1: `r54b`, 2 and 4: `r54c`): `select i32 lt:500`
/// 465.6–465.7 / 449.2–449.4 / 440.4–441.3 µs, `lt:10` 338.9–339.1 / 322.2 / 322.6–324.3,
/// `f32 lt:500` – / 447.6–449.6 / 440.4–440.8, `partition i32 lt:500` 616.0–617.6 /
/// 596.1–597.0 / 585.5–585.9, `unique i32 run:1` 612.3–612.4 / 593.1 / 581.2, `select u8
/// lt:128` (no look-ahead warp) 300.3 (1) / 300.7 / 299.6; without the warp, 2 against 1:
/// 2.0–5.5 % faster in every 32-bit row of `r54a` and `r54b`. **8** against 4 (session 55,
/// `docs/measurements/2026-12-01-h200/datapath/r55a` and `r55b`, 2 rounds each, the same
/// build but this constant): `select i32 lt:500` 432.4–433.2 and 432.6–433.1 µs against
/// 439.8–440.0 and 440.0–440.9, `lt:10` 317.2–320.3 and 319.7–319.9 against 322.4–323.8 and
/// 323.7–324.8, `partition i32 lt:500` −0.7 and −0.9 %, `unique i32 run:1` −0.8 % both times,
/// but `select u8 lt:128` +0.9 and +0.7 % (302.5–302.7 against 300.3–300.6 in `r55b`).
pub const SELECT_STATUS_SPACING: usize = 8;
/// The named barrier of the tile's warps (the look-ahead warp not among them).
const TILE_BARRIER: u32 = 1;
/// The named barrier where the look-ahead warp hands the prefix to the tile's warps.
pub(crate) const HANDOFF_BARRIER: u32 = 2;

/// A barrier of the tile's warps alone: `bar.sync 1, 256` with a look-ahead warp, else
/// `__syncthreads()`.
#[inline(always)]
pub(crate) fn sync_tile<S: Widen>() {
    if lookahead_warps::<S>() == 0 {
        sync_threads();
    } else {
        // SAFETY: the tile's 256 threads all reach each of these barriers.
        unsafe { named_barrier_sync(TILE_BARRIER, SELECT_THREADS) };
    }
}
/// 16-byte chunks per thread of [`select()`]: an odd number keeps the blocked shared-memory
/// reads free of bank conflicts (`scan::index::blocked_is_conflict_free`), so 28 elements of 32
/// bits a thread. (7 rather than `lookback`'s 9: the tile's index array must fit beside the tile
/// in 48 KiB of static shared memory, and smaller blocks fit more of them on an SM.)
pub const SELECT_ROWS: u32 = 7;
/// Words (32-bit) of one tile: 7168 elements of 32 bits.
pub const SELECT_TILE_WORDS: u32 = SELECT_THREADS * 4 * SELECT_ROWS;
/// The shapes as `usize`, for the index arithmetic.
pub(crate) const THREADS: usize = SELECT_THREADS as usize;
pub(crate) const ROWS: usize = SELECT_ROWS as usize;
/// Shared words after the tile: one count per warp (at most 32) and the tile's prefix (slot
/// 32), padded to a 16-byte multiple.
pub(crate) const CTRL_WORDS: usize = 36;
pub(crate) const PREFIX_SLOT: usize = 32;

/// Tiles ahead of its own that a block of [`select()`] asks L2 for while it waits for its
/// look-back (step 4b; 0: none). Blocks start in order, and an H100 or H200 holds 132 SMs × 5
/// blocks at once, so tile + 660 is about the one a block starting when this one ends will
/// load; three quarters of that (495) holds each line in L2 for less time, which counts where
/// the tiles also write much. The median µs on an H200 at 2^28 (interleaved rounds of builds
/// that differ in this constant alone, `docs/measurements/2026-12-01-h200/select-prefetch/`
/// `ab_all.csv`), none / 330 / **495** / 660 / 825 / 1320: `select i32 lt:500` 516.8–530.9 /
/// 473.1 / **463.7–464.6** / 464.0–467.2 / 477.9 / 588.4; `unique i32 run:1` 691.8–702.0 /
/// 626.6 / **615.2–615.8** / 628.4–634.8 / 684.7 / 802.0; `partition i32 lt:500` 668.2–678.6
/// / 607.2 / **605.2–605.6** / 621.0–625.8 / 676.1 / 783.1 (3 rounds of none and 660, 2 of
/// 495, 1 of the others). The narrow types and [`run_length`](crate::run_length::run_length())
/// take the same distance (`docs/measurements/2026-12-01-h200/select-hints/r52c`, 3 rounds),
/// 495 / 660 / 330: `select u16 lt:500` 323.1–323.2 / 322.9–323.0 / 323.8–324.4; `unique u16
/// run:16` 284.6–285.3 / 285.2–285.9 / 287.8–288.7; `run_length i32 run:1` 921.5–923.7 /
/// 1028.9–1030.1 / 901.5–903.5, but at 330 `run_length i32 run:16` 402.0–402.2 against
/// 397.5 (`r52d`: run_length's distance alone, 2 rounds; branch `exp/run-length-distance`).
pub const SELECT_PREFETCH_TILES: usize = 495;
/// A tile of [`select()`] asks L2 for tile + [`SELECT_PREFETCH_TILES`] (step 4b) only where it
/// writes at least `1 / SELECT_PREFETCH_SHARE` of its elements ([`prefetch_pays`]): a quarter.
/// The prefetch doubles the requests L2 serves (ncu at `lt:10`: L2 88.5 % busy, DRAM 69.5 %;
/// `docs/measurements/2026-12-01-h200/datapath/r55a/`), which costs where a tile writes little
/// and pays where it writes much. On an H200 at 2^28 (`datapath/r55c/ab/ab.csv`, 2 interleaved
/// rounds, the status words 8 apart in every build but main), always / never / **a quarter** /
/// an eighth against main (always, 4 apart): `select i32 lt:10` (1 % kept) 319.3–319.4 /
/// 295.6–296.6 / **301.0–301.2** / 300.1–300.8 µs against 321.7–324.8, `lt:100` (10 %)
/// 337.6–338.1 / 331.5–331.9 / **335.9–336.6** / 336.5–337.6 against 344.3–344.6, `lt:200`
/// (20 %) 361.9–362.3 / 356.2–356.3 / **361.4–362.4** / 363.7–364.2 against 368.5–369.3,
/// `lt:500` (50 %) 432.4–433.0 / 447.6–447.9 / **434.6–436.0** / 434.0–434.7 against
/// 439.9–440.8, `unique i32 run:1` 572.9 / 603.9 / **574.3–575.8** / 575.1–575.7 against
/// 579.2, `select u8 lt:128` (1 round) 301.8 / 309.5 / **301.2** / 301.2 against 299.4.
/// "Never" is 1.5 % faster than a quarter at 1 % and 20 % kept, where neither prefetches:
/// not explained (the prefetch's code is compiled out there).
pub const SELECT_PREFETCH_SHARE: usize = 4;

/// Does step 4b pay for a tile that writes `written` of its `valid` elements: at least one in
/// [`SELECT_PREFETCH_SHARE`]? (A partition writes them all.)
///
/// ```
/// # use reduce_scan_kernels::select::{SELECT_PREFETCH_SHARE, prefetch_pays};
/// assert!(prefetch_pays(7168, 7168) && !prefetch_pays(0, 7168));
/// assert!(prefetch_pays(7168 / SELECT_PREFETCH_SHARE, 7168));
/// assert!(!prefetch_pays(7168 / SELECT_PREFETCH_SHARE - 1, 7168));
/// ```
#[inline(always)]
pub fn prefetch_pays(written: usize, valid: usize) -> bool {
    written * SELECT_PREFETCH_SHARE >= valid
}

/// Elements of `T` per tile (per block): 7168 of 32 bits (the narrow types' too, widened).
pub const fn select_tile<T: Widen>() -> u32 {
    SELECT_TILE_WORDS / words::<T::Wide>() as u32
}

// ---------------------------------------------------------------------------------------
// The element types: 32-bit ones as they are, narrow ones widened in the tile.

/// An element type of [`select()`] and [`run_length`](crate::run_length::run_length()): a
/// 32-bit [`Element`] (`i32`, `u32`, `f32`), which the tile holds as it is, or a narrow
/// unsigned integer (`u8`, `u16`), which the tile holds widened to a `u32` word — so a tile is
/// 7168 elements whatever the type, and every comparison (the predicate, unique's `!=`) is the
/// widened value's, which orders and equals as the narrow one does. (A tile of narrow elements
/// as they are would need 14336 or 28672 16-bit indices beside it: past 48 KiB of static
/// shared memory.)
pub trait Widen: Copy + PartialEq + 'static {
    /// The type in the tile and the comparisons: `Self`, or `u32` for a narrow type.
    type Wide: Element;
    /// Narrower than a 32-bit word: loaded element by element (4 to a chunk of the tile),
    /// never by `cp.async`.
    const NARROW: bool;
    /// The value in the tile.
    fn widen(self) -> Self::Wide;
    /// The value back from the tile (the low bits of a narrow type's word).
    fn narrow(wide: Self::Wide) -> Self;
    /// The four elements `i .. i + 4` widened to words: one load of their 4 × `size_of`
    /// bytes where `NARROW` (a `u32` of four `u8`, a `u64` of four `u16`).
    ///
    /// # Safety
    /// The four elements are in the buffer, and element `i` is aligned to their 4 ×
    /// `size_of::<Self>()` bytes.
    #[inline(always)]
    unsafe fn load_four(input: Global<Self>, i: usize) -> [u32; 4] {
        // SAFETY: i .. i + 4 are in the buffer (the caller's promise).
        unsafe { load_narrow_guarded(input, i, i + 4) }
    }
}

macro_rules! widen_as_is {
    ($($t:ty),*) => {$(
        impl Widen for $t {
            type Wide = $t;
            const NARROW: bool = false;
            #[inline(always)]
            fn widen(self) -> $t {
                self
            }
            #[inline(always)]
            fn narrow(wide: $t) -> $t {
                wide
            }
        }
    )*};
}
widen_as_is!(i32, u32, f32);

/// `Widen` for a narrow unsigned type `$t`, whose four consecutive elements are one `$four`.
macro_rules! widen_narrow {
    ($($t:ty => $four:ty),*) => {$(
        impl Widen for $t {
            type Wide = u32;
            const NARROW: bool = true;
            #[inline(always)]
            fn widen(self) -> u32 {
                self as u32
            }
            #[inline(always)]
            fn narrow(wide: u32) -> $t {
                wide as $t
            }
            #[inline(always)]
            unsafe fn load_four(input: Global<$t>, i: usize) -> [u32; 4] {
                const BITS: u32 = <$t>::BITS;
                // SAFETY: the four elements are in the buffer and aligned to their bytes (the
                // caller's promise).
                let w = unsafe { input.cast::<$four>().read(i / 4) };
                let lane = |k: u32| (w >> (k * BITS)) as $t as u32;
                [lane(0), lane(1), lane(2), lane(3)]
            }
        }
    )*};
}
widen_narrow!(u8 => u32, u16 => u64);

/// A narrow type's four elements `i .. i + 4` widened, 0 past `n`, read one by one: a chunk
/// of a partial tile or of a misaligned input.
///
/// # Safety
/// `input` holds `n` elements.
#[inline(always)]
pub(crate) unsafe fn load_narrow_guarded<S: Widen>(input: Global<S>, i: usize, n: usize) -> [u32; 4] {
    // SAFETY: each read is below n.
    let at = |k: usize| if i + k < n { unsafe { input.read(i + k) }.widen().low_bits() } else { 0 };
    [at(0), at(1), at(2), at(3)]
}

/// A narrow type's chunks of the tile for this thread (striped, as the 32-bit types' copies):
/// every load issued before any is used.
///
/// # Safety
/// `input` holds `n` elements, 16-byte aligned where `aligned`.
#[inline(always)]
pub(crate) unsafe fn load_narrow_rows<S: Widen>(
    input: Global<S>,
    p: Place,
    n: usize,
    aligned: bool,
) -> [[u32; 4]; ROWS] {
    let mut rows = [[0u32; 4]; ROWS];
    let at = |r: usize| p.base + striped_chunk(p.tid, r, THREADS);
    if aligned && p.valid == select_tile::<S>() as usize {
        for (r, row) in rows.iter_mut().enumerate() {
            // SAFETY: a whole tile: the chunk's four elements are < n, and (a multiple of 4 from
            // a 16-byte aligned start) aligned to their bytes.
            *row = unsafe { S::load_four(input, at(r)) };
        }
    } else {
        for (r, row) in rows.iter_mut().enumerate() {
            // SAFETY: the caller's promise.
            *row = unsafe { load_narrow_guarded::<S>(input, at(r), n) };
        }
    }
    rows
}

/// The rest of step 2 for a narrow type: [`load_narrow_rows`]' chunks into the tile, once all
/// of them are loaded (nothing for the 32-bit types, whose copies are already issued).
///
/// # Safety
/// No other thread accesses this thread's chunks before the next barrier.
#[inline(always)]
pub(crate) unsafe fn store_narrow_rows(smem: Shared<u32>, tid: usize, narrow: Option<[[u32; 4]; ROWS]>) {
    if let Some(rows) = narrow {
        for (r, row) in rows.iter().enumerate() {
            // SAFETY: the caller's promise; the chunk is within the tile.
            unsafe { smem.write_v4(striped_chunk(tid, r, THREADS), *row) };
        }
    }
}

impl<S: Widen> Predicate<S> {
    /// The same comparison in the tile's type (the operand widened).
    #[inline(always)]
    pub fn widened(self) -> Predicate<S::Wide> {
        Predicate { outcomes: self.outcomes, operand: self.operand.widen() }
    }
}

// ---------------------------------------------------------------------------------------
// What is selected: `how`.

/// `how`: the elements for which the predicate holds (`DeviceSelect::If`).
pub const IF: u32 = 0;
/// `how`: the elements whose flag byte is not 0 (`DeviceSelect::Flagged`).
pub const FLAGGED: u32 = 1;
/// `how`: the first element and each one that differs (`!=`) from the one before it
/// (`DeviceSelect::Unique`: NaN differs from everything, itself included).
pub const UNIQUE: u32 = 2;
/// Added to [`IF`] or [`FLAGGED`]: a partition (`DevicePartition`): the selected elements
/// first, in order, then the others **in reverse order** from the end of the output (CUB's
/// layout: element `n − 1 − j` of the output is the `j`-th rejected one).
pub const PARTITION: u32 = 4;

/// [`Predicate`]'s outcomes: the element is below the operand,
pub const BELOW: u32 = 1;
/// equal to it,
pub const EQUAL: u32 = 2;
/// above it,
pub const ABOVE: u32 = 4;
/// or unordered with it (a NaN on either side).
pub const UNORDERED: u32 = 8;

/// A comparison with an operand, as the set of outcomes for which it holds: `x < 5` is
/// `{BELOW}` with operand 5, `x != 0` is `{BELOW, ABOVE, UNORDERED}` with operand 0 (so NaN
/// is "not zero", as in C and Rust).
///
/// ```
/// use reduce_scan_kernels::select::{ABOVE, BELOW, EQUAL, Predicate, UNORDERED};
/// let less_than_5 = Predicate { outcomes: BELOW, operand: 5i32 };
/// assert!(less_than_5.holds(4) && !less_than_5.holds(5));
/// let nonzero = Predicate { outcomes: BELOW | ABOVE | UNORDERED, operand: 0.0f32 };
/// assert!(nonzero.holds(f32::NAN) && nonzero.holds(-1.0) && !nonzero.holds(-0.0));
/// let at_least = Predicate { outcomes: EQUAL | ABOVE, operand: 1.5f32 };
/// assert!(!at_least.holds(f32::NAN) && at_least.holds(1.5));
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Predicate<T> {
    /// The outcomes (a set of [`BELOW`], [`EQUAL`], [`ABOVE`], [`UNORDERED`]) that select.
    pub outcomes: u32,
    /// What the element is compared with.
    pub operand: T,
}

impl<T: Element> Predicate<T> {
    /// Does `x` satisfy it: is the outcome of comparing `x` with the operand in the set?
    #[inline(always)]
    pub fn holds(&self, x: T) -> bool {
        let outcome = if x < self.operand {
            BELOW
        } else if x == self.operand {
            EQUAL
        } else if x > self.operand {
            ABOVE
        } else {
            UNORDERED
        };
        self.outcomes & outcome != 0
    }
}

impl<T: Element> Predicate<T> {
    /// The predicate as one ordered comparison and a flip: `(set, flip)`, where `set` (a set of
    /// [`BELOW`], [`EQUAL`], [`ABOVE`]) is the outcome set itself when it leaves out
    /// [`UNORDERED`], else its complement, and `flip` says which. Each `set` is one comparison
    /// instruction ([`ordered`]: `<`, `==`, `>`, `<=`, `>=`, ordered `!=`, "ordered", or none),
    /// so the kernel tests each element with one comparison and flips the whole mask once.
    ///
    /// ```
    /// use reduce_scan_kernels::select::{ABOVE, BELOW, EQUAL, Predicate, UNORDERED};
    /// let ne = Predicate { outcomes: BELOW | ABOVE | UNORDERED, operand: 0.0f32 };
    /// assert_eq!(ne.split(), (EQUAL, true));
    /// ```
    #[inline(always)]
    pub fn split(&self) -> (u32, bool) {
        let all = BELOW | EQUAL | ABOVE;
        if self.outcomes & UNORDERED != 0 { (!self.outcomes & all, true) } else { (self.outcomes & all, false) }
    }

    /// [`holds`](Self::holds) through [`split`](Self::split) and [`ordered`], as the kernel
    /// evaluates it (with the set chosen at run time here, once per thread there).
    pub fn holds_split(&self, x: T) -> bool {
        let (set, flip) = self.split();
        let op = self.operand;
        by_set!(set, T, op, |test| test(x), none => false) != flip
    }
}

/// `$body` with `$test` bound to the element test of outcome set `$set` (a set of [`BELOW`],
/// [`EQUAL`], [`ABOVE`]): `|x| ordered::<SET, T>(x, op)` with `SET` a constant in each of the
/// seven arms, so that the branch on `$set` is taken once, outside whatever `$body` loops over;
/// `$none` for the empty set (which selects nothing). The one dispatch of
/// [`Predicate::holds_split`] and the kernel's step 3.
macro_rules! by_set {
    ($set:expr, $t:ty, $op:expr, |$test:ident| $body:expr, none => $none:expr) => {{
        let op = $op;
        match $set {
            0 => $none,
            BELOW => {
                let $test = |x: $t| ordered::<BELOW, $t>(x, op);
                $body
            }
            EQUAL => {
                let $test = |x: $t| ordered::<EQUAL, $t>(x, op);
                $body
            }
            ABOVE => {
                let $test = |x: $t| ordered::<ABOVE, $t>(x, op);
                $body
            }
            AT_MOST => {
                let $test = |x: $t| ordered::<AT_MOST, $t>(x, op);
                $body
            }
            AT_LEAST => {
                let $test = |x: $t| ordered::<AT_LEAST, $t>(x, op);
                $body
            }
            APART => {
                let $test = |x: $t| ordered::<APART, $t>(x, op);
                $body
            }
            _ => {
                let $test = |x: $t| ordered::<ORDERED, $t>(x, op);
                $body
            }
        }
    }};
}
use by_set;

const AT_MOST: u32 = BELOW | EQUAL;
const AT_LEAST: u32 = EQUAL | ABOVE;
const APART: u32 = BELOW | ABOVE;
const ORDERED: u32 = BELOW | EQUAL | ABOVE;

/// Is the outcome of comparing `x` with `op` in `SET` (a set of [`BELOW`], [`EQUAL`],
/// [`ABOVE`]; a NaN on either side is in none)? One comparison for each set: `<`, `==`, `>`,
/// `<=`, `>=`, ordered `!=` (`setp.ne`), "ordered" (`setp.num`; true for integers), or none.
#[inline(always)]
#[allow(clippy::double_comparisons, reason = "for floats `x < op || x > op` is not `x != op`: NaN")]
pub fn ordered<const SET: u32, T: Element>(x: T, op: T) -> bool {
    match SET {
        0 => false,
        BELOW => x < op,
        EQUAL => x == op,
        ABOVE => x > op,
        AT_MOST => x <= op,
        AT_LEAST => x >= op,
        APART => x < op || x > op,
        _ => x <= op || x > op,
    }
}

/// A thread's elements as bits (bit `e` for its element `first + e`): 28 a thread, so one word.
pub(crate) type Mask = u32;
const _: () = assert!(4 * ROWS <= Mask::BITS as usize, "a thread's elements fit its mask");

/// The bits of a thread's elements that exist: elements `first .. first + items` of a tile
/// whose first `valid` exist.
///
/// ```
/// # use reduce_scan_kernels::select::live_bits;
/// assert_eq!(live_bits(0, 7168, 28), (1 << 28) - 1);
/// assert_eq!(live_bits(28, 30, 28), 0b11);
/// assert_eq!(live_bits(56, 30, 28), 0);
/// ```
#[inline(always)]
pub fn live_bits(first: usize, valid: usize, items: usize) -> u32 {
    let k = valid.saturating_sub(first).min(items);
    if k >= u32::BITS as usize { u32::MAX } else { (1u32 << k) - 1 }
}

/// `$body` once for each of a thread's 7 rows, with `$r` the row's number as a constant: the
/// rows written out, not a loop, so that LLVM keeps the thread's chunks in registers (a loop
/// over them it does not unroll indexes the array, which then lives in local memory).
macro_rules! each_row {
    ($r:ident => $body:block) => {
        each_row!(@rows $r [0 1 2 3 4 5 6] $body)
    };
    (@rows $r:ident [$($i:literal)*] $body:block) => {{
        const { assert!([$($i),*].len() == ROWS, "each_row! names every row, no more") };
        $({
            let $r: usize = $i;
            $body
        })*
    }};
}

/// Does `x` differ from `before`, the element before it ([`UNIQUE`]: `!=`, so NaN always does)?
#[inline(always)]
fn differs<T: Element>(x: T, before: T) -> bool {
    x != before
}

/// Where one thread stands in its tile.
#[derive(Clone, Copy)]
pub(crate) struct Place {
    pub(crate) tid: usize,
    pub(crate) lane: u32,
    pub(crate) warp: usize,
    pub(crate) tile: usize,
    /// The tile's first element, and how many of its elements exist (`< n`).
    pub(crate) base: usize,
    pub(crate) valid: usize,
    /// The thread's first element in the tile (blocked: `tid × items`).
    pub(crate) first: usize,
}

impl Place {
    /// This thread's place in a launch over `n` elements in tiles of `tile_len`, `items` a
    /// thread (`threadIdx.x`, `blockIdx.x`).
    #[inline(always)]
    pub(crate) fn here(n: usize, tile_len: usize, items: usize) -> Self {
        let tid = thread_idx_x() as usize;
        let tile = block_idx_x() as usize;
        let base = tile * tile_len;
        Place {
            tid,
            lane: thread_idx_x() % WARP_SIZE,
            warp: tid / WARP_SIZE as usize,
            tile,
            base,
            valid: (n - base).min(tile_len),
            first: tid * items,
        }
    }
}

/// Step 3 for [`IF`]: the elements (that exist) for which `predicate` holds: bit `e` of the
/// mask for the thread's element `first + e`. The predicate's [`split`](Predicate::split)
/// chooses one of eight loops (a branch the whole block takes alike), each testing an element
/// with one comparison; the flip and the elements past the tile's end apply to the whole mask.
///
/// # Safety
/// After the tile's load and barrier.
#[inline(always)]
unsafe fn mask_if<T: Element>(smem: Shared<u32>, p: Place, predicate: Predicate<T>, items: usize) -> Mask {
    let (set, flip) = predicate.split();
    // SAFETY: the caller's promise, for each arm.
    let mask = unsafe { by_set!(set, T, predicate.operand, |test| mask_by::<T>(smem, p, test), none => 0) };
    (if flip { !mask } else { mask }) & live_bits(p.first, p.valid, items)
}

/// The thread's elements of the tile for which `test` holds, as bits (those past the tile's
/// end included: the caller masks them).
///
/// # Safety
/// After the tile's load and barrier.
#[inline(always)]
unsafe fn mask_by<T: Element>(smem: Shared<u32>, p: Place, test: impl Fn(T) -> bool) -> Mask {
    let mut mask: Mask = 0;
    each_row!(r => {
        // SAFETY: in bounds, aligned, complete and visible after the wait and the barrier.
        let x = unpack::<T, u32>(unsafe { smem.read_v4(blocked_chunk(p.tid, r, 4 * ROWS)) });
        #[allow(clippy::needless_range_loop, reason = "an iterator over the array left it in local memory")]
        for k in 0..T::PER_128 {
            mask |= (test(x[k]) as Mask) << (r * T::PER_128 + k);
        }
    });
    mask
}

/// Step 3 for [`FLAGGED`]: the elements (that exist) whose flag byte is not 0.
///
/// # Safety
/// `flags` holds the input's `n` bytes.
#[inline(always)]
unsafe fn mask_flagged(flags: Global<u8>, p: Place, items: usize) -> Mask {
    let mut mask: Mask = 0;
    let at = p.base + p.first;
    // A thread whose elements all exist, where the flags start 4-byte aligned (`at` is a multiple
    // of 4, as `items` is): its flags as `items / 4` words, four flags' bits a word.
    if flags.addr().is_multiple_of(4) && p.first + items <= p.valid {
        let words = flags.cast::<u32>();
        for w in 0..items / 4 {
            // SAFETY: bytes at + 4w .. at + 4w + 4 < base + valid ≤ n, the flags' length; the
            // word is 4-byte aligned (the flags' start is, and at is a multiple of 4).
            let word = unsafe { words.read(at / 4 + w) };
            mask |= nonzero_bytes(word) << (4 * w);
        }
        return mask;
    }
    for e in 0..items {
        // SAFETY: at + e < base + valid ≤ n, the flags' length.
        if p.first + e < p.valid && unsafe { flags.read(at + e) } != 0 {
            mask |= 1 << e;
        }
    }
    mask
}

/// Which of `word`'s four bytes are not zero, as bits 0–3 (byte `b`, from the lowest, in bit
/// `b`): each byte's high bit set where the byte is not zero (`(w & 0x7f…) + 0x7f…` carries
/// into it from any low bit), then the four high bits gathered by one multiply.
#[inline(always)]
pub(crate) fn nonzero_bytes(word: u32) -> u32 {
    let high = (((word & 0x7f7f_7f7f) + 0x7f7f_7f7f) | word) & 0x8080_8080;
    ((high >> 7).wrapping_mul(0x0020_4081) >> 21) & 0xf
}

/// Step 3 for [`UNIQUE`]: the elements (that exist) that differ from the one before them (the
/// input's first element always counts).
///
/// # Safety
/// After the tile's load and barrier; `input` holds `n` elements.
#[inline(always)]
pub(crate) unsafe fn mask_unique<S: Widen>(p: Place, input: Global<S>, smem: Shared<u32>, items: usize) -> Mask {
    // The element before the thread's first: the previous thread's last (in shared memory), the
    // previous tile's last (in global memory), or for the input's first element none (it
    // counts whatever it is: its bit is set below).
    let mut before = if p.first > 0 {
        // SAFETY: element first − 1 of the tile, loaded before the barrier, not written since.
        unsafe { read_slot::<S::Wide, u32>(smem, 0, p.first - 1) }
    } else if p.tile > 0 {
        // SAFETY: base − 1 < n.
        unsafe { input.read(p.base - 1) }.widen()
    } else {
        S::Wide::ZERO
    };
    let mut mask: Mask = (p.tile == 0 && p.first == 0) as Mask;
    each_row!(r => {
        // SAFETY: in bounds, aligned, complete and visible after the wait and the barrier.
        let x = unpack::<S::Wide, u32>(unsafe { smem.read_v4(blocked_chunk(p.tid, r, 4 * ROWS)) });
        #[allow(clippy::needless_range_loop, reason = "an iterator over the array left it in local memory")]
        for k in 0..S::Wide::PER_128 {
            mask |= (differs(x[k], before) as Mask) << (r * S::Wide::PER_128 + k);
            before = x[k];
        }
    });
    mask & live_bits(p.first, p.valid, items)
}

/// Step 5: the tile indices of the thread's selected elements into `index` at their tile-local
/// ranks (from `selected_before`, the tile's selected elements before the thread's first), and
/// for a partition those of its rejected ones (the bits of `live`, its elements that exist, not
/// in `mask`) from the end backwards: a loop over the set bits alone, lowest first. The
/// elements stay where they are in the tile: the store gathers them through these indices (so
/// no thread holds its elements in registers across the barriers). Each index is a 16-bit
/// store of its own (`st.shared.b16`): two threads storing the two halves of one word do not
/// race.
///
/// # Safety
/// After the barrier of the counts; the ranks are distinct across the block; `mask` ⊆ `live`.
#[inline(always)]
pub(crate) unsafe fn compact(
    (mask, live): (Mask, Mask),
    p: Place,
    selected_before: usize,
    partition: bool,
    tile_len: usize,
    index: Shared<u16>,
) {
    let first = p.first as u32;
    let mut kept = selected_before;
    let mut bits = mask;
    while bits != 0 {
        // SAFETY: kept < the tile's selected count ≤ tile_len; this element's slot alone.
        unsafe { index.write(kept, (first + bits.trailing_zeros()) as u16) };
        kept += 1;
        bits &= bits - 1;
    }
    if partition {
        // Every element before the thread's first exists (first < valid, or live is empty).
        let mut dropped = p.first - selected_before;
        let mut bits = live & !mask;
        while bits != 0 {
            // SAFETY: the selected and the rejected ranks of a tile never meet (their counts
            // add up to valid ≤ tile_len).
            unsafe { index.write(tile_len - 1 - dropped, (first + bits.trailing_zeros()) as u16) };
            dropped += 1;
            bits &= bits - 1;
        }
    }
}

/// Index slot `slot` of the index array (after the barrier that follows its writes).
///
/// # Safety
/// `slot` is in the array, written in an earlier barrier interval.
#[inline(always)]
pub(crate) unsafe fn get_index(index: Shared<u16>, slot: usize) -> usize {
    // SAFETY: the caller's promise.
    unsafe { index.read(slot) as usize }
}

/// Step 4 of [`select()`]: the block's counts from each thread's `count` — an inclusive warp
/// scan, each warp's total through the control words after the tile, a barrier — as (the
/// thread's inclusive count in its warp, its warp's offset in the tile, the tile's count).
///
/// # Safety
/// The whole block calls it, after every earlier read of the control words; `smem` holds
/// `tile_words` and the control words after them.
#[inline(always)]
unsafe fn count_tile<S: Widen>(count: u32, p: Place, smem: Shared<u32>, tile_words: usize) -> (u32, u32, u32) {
    let incl = warp_inclusive_scan::<u32, Sum>(count, p.lane);
    if p.lane == WARP_SIZE - 1 {
        // SAFETY: a control word of this warp's, read after the barrier.
        unsafe { smem.write(tile_words + p.warp, incl) };
    }
    sync_tile::<S>();
    let (mut warp_offset, mut aggregate) = (0u32, 0u32);
    for w in 0..THREADS / WARP_SIZE as usize {
        // SAFETY: written before the barrier, not written again.
        let x = unsafe { smem.read(tile_words + w) };
        warp_offset += if w < p.warp { x } else { 0 };
        aggregate += x;
    }
    (incl, warp_offset, aggregate)
}

/// Step 6 with a look-ahead warp, its side: from the block's start it looks back (the tiles
/// before publish whether or not this tile has loaded), leaves the exclusive prefix in the
/// control words, and meets the tile's warps at the hand-off barrier.
///
/// # Safety
/// The look-ahead warp, whole; `smem` holds `tile_words` and the control words after them.
#[inline(always)]
unsafe fn look_ahead(counts: Status<u32>, (p, epoch): (Place, u32), smem: Shared<u32>, tile_words: usize) {
    let prefix = if p.tile == 0 {
        0
    } else {
        // SAFETY: the whole warp, the same tile and epoch; tiles publish in `status`.
        unsafe { look_back::<u32, Sum, LOOKBACK_SLEEP_NS>(counts, p.tile, epoch, p.lane) }
    };
    if p.lane == 0 {
        // SAFETY: read after the hand-off barrier; no other thread writes it.
        unsafe { smem.write(tile_words + PREFIX_SLOT, prefix) };
    }
    // SAFETY: the look-ahead warp and the tile's 256 threads reach it.
    unsafe { named_barrier_sync(HANDOFF_BARRIER, HANDOFF_THREADS) };
}

/// Step 6 with a look-ahead warp, the tile's side: the hand-off barrier, the prefix from the
/// control words, and thread 0 publishes the tile's inclusive prefix.
///
/// # Safety
/// The tile's threads, all, after thread 0 published the aggregate.
#[inline(always)]
unsafe fn take_prefix(
    counts: Status<u32>,
    (p, epoch, aggregate): (Place, u32, u32),
    smem: Shared<u32>,
    tile_words: usize,
) -> usize {
    // SAFETY: the look-ahead warp and the tile's 256 threads reach it.
    unsafe { named_barrier_sync(HANDOFF_BARRIER, HANDOFF_THREADS) };
    // SAFETY: written before the barrier.
    let prefix = unsafe { smem.read(tile_words + PREFIX_SLOT) };
    if p.tid == 0 && p.tile > 0 {
        // SAFETY: this tile's word; its aggregate went out first.
        unsafe { counts.publish(p.tile, epoch, FLAG_PREFIX, prefix + aggregate) };
    }
    prefix as usize
}

/// Step 6 of [`select()`]: the elements the tiles before this one selected — warp 0 looks back
/// (`scan::lookback`'s `look_back` on counts) and publishes the tile's inclusive prefix, lane 0
/// leaves the prefix in the control words, and after a barrier every thread reads it.
///
/// # Safety
/// The whole block calls it, after thread 0 published the tile's `aggregate` in `counts` (the
/// launch's status words, `epoch`); `smem` holds `tile_words` and the control words after them.
#[inline(always)]
unsafe fn tile_prefix(
    counts: Status<u32>,
    (p, epoch, aggregate): (Place, u32, u32),
    smem: Shared<u32>,
    tile_words: usize,
) -> usize {
    if p.warp == 0 {
        let prefix = if p.tile == 0 {
            0
        } else {
            // SAFETY: the whole warp, the same tile and epoch; tiles publish in `status`.
            let prefix = unsafe { look_back::<u32, Sum, LOOKBACK_SLEEP_NS>(counts, p.tile, epoch, p.lane) };
            if p.lane == 0 {
                // SAFETY: as above; this tile's aggregate went out first.
                unsafe { counts.publish(p.tile, epoch, FLAG_PREFIX, prefix + aggregate) };
            }
            prefix
        };
        if p.lane == 0 {
            // SAFETY: read after the barrier below.
            unsafe { smem.write(tile_words + PREFIX_SLOT, prefix) };
        }
    }
    sync_threads();
    // SAFETY: written before the barrier.
    unsafe { smem.read(tile_words + PREFIX_SLOT) as usize }
}

/// Steps 1–2 of [`select()`] and [`run_length`](crate::run_length::run_length()): the tile into
/// shared memory (striped 16-byte chunks; `cp.async` where the tile is whole and the input
/// aligned, else through registers; a narrow type widened to words); the wait (the caller's
/// barrier follows).
///
/// # Safety
/// `input` holds `n` elements, 16-byte aligned where `aligned`; `smem` holds the tile's words;
/// every thread of the block calls it.
#[inline(always)]
pub(crate) unsafe fn load_tile<S: Widen>(input: Global<S>, p: Place, (n, aligned): (usize, bool), smem: Shared<u32>) {
    let (tile_words, per) = (THREADS * 4 * ROWS, words::<S::Wide>());
    let tile_len = tile_words / per;
    let (tid, base) = (p.tid, p.base);
    let policy = l2_evict_first_policy();
    let src = input.cast::<u32>();
    // SAFETY: input holds n elements, 16-byte aligned where `aligned`.
    let narrow = S::NARROW.then(|| unsafe { load_narrow_rows::<S>(input, p, n, aligned) });
    for r in 0..ROWS {
        let c = striped_chunk(tid, r, THREADS);
        if S::NARROW {
            // Loaded above (all seven issued together), stored below.
        } else if aligned && p.valid == tile_len {
            // SAFETY: the chunk's elements are < n; 16-byte aligned (the caller's promise);
            // this thread's chunk, untouched until the wait.
            unsafe { smem.copy_async_v4_evict_first(c, src.wrapping_offset(base * per + c), policy) };
        } else {
            // SAFETY: input holds n elements; this thread's chunk.
            unsafe { smem.write_v4(c, load_guarded::<S::Wide, Sum, u32>(input.cast(), base + c / per, n)) };
        }
    }
    // SAFETY: this thread's chunks of the tile.
    unsafe { store_narrow_rows(smem, tid, narrow) };
    copy_async_commit();
    copy_async_wait::<0>();
}

/// The body of [`select()`].
///
/// # Safety
/// As for [`select()`]; `smem` holds the tile's words and [`CTRL_WORDS`] after them, `index`
/// one 16-bit half-word per tile element.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
unsafe fn select_with<S: Widen>(
    (input, flags, output): (Global<S>, Global<u8>, GlobalMut<S>),
    (selected, status): (GlobalMut<u32>, GlobalMut<u64>),
    n: usize,
    epoch: u32,
    how: u32,
    predicate: Predicate<S::Wide>,
    aligned: bool,
    (smem, index): (Shared<u32>, Shared<u16>),
) {
    if block_dim_x() != select_block::<S>() {
        trap("select launched with a block size other than the one it was compiled for");
    }
    let (tile_words, per) = (THREADS * 4 * ROWS, words::<S::Wide>());
    let (tile_len, items) = (tile_words / per, 4 * ROWS / per);
    let p = Place::here(n, tile_len, items);
    let (tid, tile) = (p.tid, p.tile);
    let counts = Status::<u32>::packed(status).spaced::<SELECT_STATUS_SPACING>();
    // 1.–2. Load the tile: striped 16-byte chunks, cp.async where whole and aligned (narrow: widened).
    // The look-ahead warp branches off after the tile's copies: before them, ptxas 12.9 (and the
    // H200's driver) emitted each `cp.async` as `LDGSTS [R+UR0], desc[UR1]` from uniform
    // registers never written (an illegal instruction; session 48 met the same).
    if lookahead_warps::<S>() == 0 || tid < THREADS {
        // SAFETY: forwarded (input holds n elements, 16-byte aligned where `aligned`).
        unsafe { load_tile::<S>(input, p, (n, aligned), smem) };
    }
    if lookahead_warps::<S>() > 0 && tid >= THREADS {
        // SAFETY: the look-ahead warp, whole; the tile's warps meet it at the hand-off.
        unsafe { look_ahead(counts, (p, epoch), smem, tile_words) };
        return;
    }
    sync_tile::<S>();
    // 3. The thread's blocked chunks into registers, and which of its elements are selected.
    let mask = match how & !PARTITION {
        // SAFETY: after the load's barrier.
        IF => unsafe { mask_if::<S::Wide>(smem, p, predicate, items) },
        // SAFETY: flags holds n bytes where `how` is FLAGGED (the caller's promise).
        FLAGGED => unsafe { mask_flagged(flags, p, items) },
        // SAFETY: after the load's barrier; input holds n elements.
        _ => unsafe { mask_unique::<S>(p, input, smem, items) },
    };
    // 4. The block's counts (a warp scan, the warp totals in shared memory); thread 0 publishes.
    let count = mask.count_ones();
    // SAFETY: the whole block is here; the control words follow the tile.
    let (incl, warp_offset, aggregate) = unsafe { count_tile::<S>(count, p, smem, tile_words) };
    if tid == 0 {
        let flag = if tile == 0 { FLAG_PREFIX } else { FLAG_AGGREGATE };
        // SAFETY: tile < gridDim.x, the status array's length; one thread, the aggregate first.
        unsafe { counts.publish(tile, epoch, flag, aggregate) };
    }
    // 4b. While this tile waits on its look-back, L2 fetches the one a later block will load,
    // where this tile writes enough for that to pay.
    let written = if how & PARTITION != 0 { p.valid } else { aggregate as usize };
    if prefetch_pays(written, p.valid) {
        // SAFETY: the input holds n elements; whole tiles in the input only.
        unsafe { prefetch_ahead::<S>(input, tile, (n, tile_len), tid) };
    }
    // 5. Compact the selected elements' indices.
    let before = (warp_offset + incl - count) as usize;
    // SAFETY: after the barrier; distinct ranks.
    unsafe { compact((mask, live_bits(p.first, p.valid, items)), p, before, how & PARTITION != 0, tile_len, index) };
    // SAFETY: the whole block, after publishing the tile's aggregate.
    let prefix = if lookahead_warps::<S>() > 0 {
        // SAFETY: the tile's warps, after publishing the aggregate; the look-ahead warp hands over.
        unsafe { take_prefix(counts, (p, epoch, aggregate), smem, tile_words) }
    } else {
        // SAFETY: the whole block, after publishing the tile's aggregate.
        unsafe { tile_prefix(counts, (p, epoch, aggregate), smem, tile_words) }
    };
    // SAFETY: after the barrier; the output's elements are this tile's alone.
    unsafe { store::<S>(p, (prefix, aggregate as usize), how & PARTITION != 0, (n, tile_len), output, (smem, index)) };
    if tile + 1 == grid_dim_x() as usize && tid == 0 {
        // SAFETY: one word; the last tile's thread 0 alone writes it.
        unsafe { selected.write(0, (prefix + aggregate as usize) as u32) };
    }
}

/// Step 4b of [`select()`] and [`run_length`](crate::run_length::run_length()): thread `tid`
/// asks L2 for one 128-byte line of tile `tile +` [`SELECT_PREFETCH_TILES`], where that tile is
/// whole inside the input: its words for a 32-bit type, its bytes for a narrow one (a tile of
/// 7168 `u8` is 56 lines, of `u16` 112, of 32-bit elements 224).
///
/// # Safety
/// `input` holds `n` elements.
#[inline(always)]
pub(crate) unsafe fn prefetch_ahead<S: Widen>(
    input: Global<S>,
    tile: usize,
    (n, tile_len): (usize, usize),
    tid: usize,
) {
    let ahead = tile + SELECT_PREFETCH_TILES;
    if S::NARROW {
        let bytes = input.cast::<u8>();
        prefetch_line::<128>(ahead, (n, tile_len, core::mem::size_of::<S>()), tid, |b| {
            // SAFETY: `prefetch_line` names only bytes of tile `ahead`, which is inside the
            // input of `n` elements (the caller's promise).
            unsafe { bytes.prefetch_l2(b) }
        });
    } else {
        let words = input.cast::<u32>();
        prefetch_line::<32>(ahead, (n, tile_len, 1), tid, |w| {
            // SAFETY: as above, in words of a 32-bit type.
            unsafe { words.prefetch_l2(w) }
        });
    }
}

/// The index math of step 4b of [`select()`]: `ask(unit)` for the unit of the input (a word or
/// a byte: tile elements are `per` units) that begins the `LINE`-unit line thread `tid` asks L2
/// for — unit `LINE · tid` of tile `ahead` — where that tile's `tile_len` elements all lie
/// among the input's `n` and the tile has a line `tid`; else nothing, and nothing at all where
/// [`SELECT_PREFETCH_TILES`] is 0.
///
/// ```
/// # use reduce_scan_kernels::select::prefetch_line;
/// let line = |ahead, n, per, units, tid| {
///     let mut at = None;
///     if units == 32 {
///         prefetch_line::<32>(ahead, (n, 7168, per), tid, |u| at = Some(u));
///     } else {
///         prefetch_line::<128>(ahead, (n, 7168, per), tid, |u| at = Some(u));
///     }
///     at
/// };
/// assert_eq!(line(2, 3 * 7168, 1, 32, 5), Some(2 * 7168 + 5 * 32)); // words of a 32-bit type
/// assert_eq!(line(2, 3 * 7168 - 1, 1, 32, 5), None); // tile 2 is not whole
/// assert_eq!(line(0, 7168, 1, 32, 224), None); // 224 lines a tile: 0 ..= 223
/// assert_eq!(line(1, 2 * 7168, 1, 128, 55), Some(7168 + 55 * 128)); // bytes of u8: 56 lines
/// assert_eq!(line(1, 2 * 7168, 1, 128, 56), None);
/// ```
#[inline(always)]
pub fn prefetch_line<const LINE: usize>(
    ahead: usize,
    (n, tile_len, per): (usize, usize, usize),
    tid: usize,
    ask: impl FnOnce(usize),
) {
    let tile_units = tile_len * per;
    if SELECT_PREFETCH_TILES > 0 && (ahead + 1) * tile_len <= n && tid < tile_units / LINE {
        ask(ahead * tile_units + LINE * tid);
    }
}

/// Step 7: the tile's selected elements (gathered from the tile through `index`) to
/// `output[prefix ..]`, and for a partition its
/// rejected ones to `output[.. n − rejected_before]` backwards: consecutive threads write
/// consecutive elements.
///
/// # Safety
/// After [`compact`] and a barrier; `output` holds `n` elements.
#[inline(always)]
unsafe fn store<S: Widen>(
    p: Place,
    (prefix, aggregate): (usize, usize),
    partition: bool,
    (n, tile_len): (usize, usize),
    output: GlobalMut<S>,
    (smem, index): (Shared<u32>, Shared<u16>),
) {
    let element = |slot: usize| {
        // SAFETY: indices below the tile's length, written before the barrier; the tile is never
        // written after its load.
        S::narrow(unsafe { read_slot::<S::Wide, u32>(smem, 0, get_index(index, slot)) })
    };
    let mut i = p.tid;
    while i < aggregate {
        // SAFETY: i < the tile's selected count; prefix + i < n, this tile's output.
        unsafe { output.write(prefix + i, element(i)) };
        i += THREADS;
    }
    if partition {
        let rejected_before = p.base - prefix;
        let mut j = p.tid;
        while j < p.valid - aggregate {
            // SAFETY: j < the tile's rejected count; n − 1 − (rejected_before + j) ≥ the
            // selected count, so these elements are this tile's rejected ones alone.
            unsafe { output.write(n - 1 - rejected_before - j, element(tile_len - 1 - j)) };
            j += THREADS;
        }
    }
}

kernel! {
    /// Stream compaction in one pass: `output` gets, in order, the elements of `input` that
    /// `how` selects, and `selected[0]` their count; with [`PARTITION`], the others follow,
    /// in reverse order from the output's end.
    ///
    /// # Concept
    /// **A compaction is a scan of flags.** The kept element `i` goes to output position
    /// "kept elements before `i`", the exclusive scan of the 0/1 flags. The textbook builds it
    /// in three launches (flag, scan, scatter: the input read twice, the flags written and
    /// read); the decoupled look-back (`scan::lookback`) lets one launch do it: a tile knows
    /// its own count as soon as it has flagged its elements, publishes it, and learns from its
    /// predecessors how many they kept.
    ///
    /// # Previous problem → fix
    /// A scatter straight from each thread's registers writes where each thread's kept
    /// elements land: a warp's stores spread over many lines, a few bytes each. Here the tile
    /// first compacts its kept elements' indices in shared memory, so that consecutive threads
    /// store consecutive elements: each warp's stores cover whole lines.
    ///
    /// # Execution
    /// Block [`select_block`]: the tile's [`SELECT_THREADS`] (256) and, for the 32-bit types,
    /// one look-ahead warp (threads 256–287; [`SELECT_LOOKAHEAD_WARPS`]); tile of
    /// [`select_tile`] elements (7168 of 32 bits). The tile's warps meet at a named barrier of
    /// their own (`bar.sync 1, 256`; `__syncthreads()` without the look-ahead warp).
    /// 1. **Tile** `blockIdx.x`.
    /// 2. **Load** the tile into shared memory: striped 16-byte `cp.async` copies (evict
    ///    first), the last tile (or a misaligned input) through registers; a narrow type
    ///    ([`Widen`]: `u8`, `u16`) four elements a chunk through registers (one 32- or 64-bit
    ///    load where aligned), widened to words; barrier.
    /// 3. **Flag**: each thread reads its blocked 28 elements from the tile and marks the
    ///    selected ones in a 32-bit mask: the predicate ([`IF`]: one comparison an element,
    ///    chosen once by [`Predicate::split`], and the mask flipped once for a set with
    ///    [`UNORDERED`]; the elements past the tile's end cleared once by [`live_bits`]), the flag bytes
    ///    ([`FLAGGED`]: a thread whose 28 elements all exist, its flags 4-byte aligned, reads
    ///    them as 7 words, a carry and one multiply turning each into 4 mask bits; the others
    ///    byte by byte. On the H200 the words took 9–12 % off every flagged row at 2^28
    ///    against the bytes, `docs/measurements/2026-11-30-h200/flags-words/ab.csv`), or
    ///    "differs from the one before" ([`UNIQUE`]: the element before a
    ///    thread's first is the previous thread's last in shared memory, or the previous
    ///    tile's last in global memory). Until session 48 the predicate ran as the chain of
    ///    comparisons [`Predicate::holds`] is, with a branch and a bounds test per element:
    ///    ncu counted 428 M warp instructions for `select i32 lt:500` at 2^28 (issue slots 82 %
    ///    busy); the one comparison and the set bits' loop of step 5, 191 M (46 % busy). The
    ///    time on the H200 at 2^28 (A/B, `docs/measurements/2026-12-01-h200/select-lean/`
    ///    `r48a/ab.csv`): −5 % (`i32` lt:500) to −34 % (`u8` lt:128) in the `IF` rows, −3 to
    ///    −4 % in `partition i32`, −5 % in the run-length rows, −0.3 to −1 % in `partition f32
    ///    flags`, but +2 % in `select i32 flags` and +10 % in `unique i32 run:16`. Why, from
    ///    ncu's source pages at boost clocks (`docs/measurements/2026-12-01-h200/select-early/`
    ///    `r49d/`): half the instructions, but a tile now counts and looks back while its
    ///    predecessors are still loading or looking back — 1.56 windows a look-back against
    ///    1.08, 10,653 polls after a sleep against 3, 43 % of the stall samples at step 6's
    ///    barrier against 18 %. The longer step 3 had hidden the skew between the tiles' loads.
    /// 4. **Count**: popcount, an inclusive warp scan (`__shfl_up_sync`), lane 31 writes its
    ///    warp's total; barrier; each thread adds the totals (its warp's offset, the tile's
    ///    count); thread 0 publishes the count (aggregate, or tile 0's prefix).
    ///    **4b. Prefetch**: each of the first 224 threads (56 for `u8`, 112 for `u16`: a tile's
    ///    bytes) asks L2 for one 128-byte line of tile `blockIdx.x +` [`SELECT_PREFETCH_TILES`]
    ///    (`prefetch.global.L2`, CUDA C++ `cuda::ptx::prefetch_L2`), where that tile lies
    ///    wholly inside the input: a block spends about half its life waiting on step 6 with
    ///    nothing in flight, and the line is in L2 when a later block loads it. On the H200 at 2^28 it took 4 % (`select
    ///    i32 lt:10`) to 12 % (`unique i32 run:1`) off each of the A/B's seven 32-bit rows
    ///    against no prefetch (`docs/measurements/2026-12-01-h200/select-prefetch/`, 2 and 3
    ///    interleaved rounds, no two overlapping); DRAM was 55 % busy before it
    ///    (`select-early/`). For `u8` and `u16` (`select-hints/`, against main's build, no two
    ///    rounds overlapping; the rounds' medians, mean against mean): `select u8 lt:128` 7.9 %
    ///    off and `select u16 lt:500` 14.7 % (3 rounds), `unique u16 run:16` 13.7 % and
    ///    `partition u8 lt:128` 2.7 % (2 rounds). **Only where the tile writes at least a
    ///    quarter of its elements** ([`prefetch_pays`], [`SELECT_PREFETCH_SHARE`]; a partition
    ///    writes them all), since session 55: once the look-ahead warp hid most of the
    ///    look-back, the prefetch's own L2 requests cost more than it saved where little is
    ///    written (ncu at `lt:10`: L2 88.5 % busy, DRAM 69.5 %). The data path alone, in CUDA
    ///    C (`docs/measurements/2026-12-01-h200/datapath/datapath.cu`: a tile a block, counted,
    ///    nothing stored; 3 rounds): 239.2–239.6 µs at 2^28 `i32` without the prefetch, 4.48
    ///    TB/s read, against 297.1–298.3 with it, 249 for a grid-stride count and 258 for a
    ///    copy of half the bytes; loading into registers instead of shared memory, the same
    ///    239 µs. `select i32 lt:10` went from 1.19–1.20× a copy of its bytes to 1.11–1.12×.
    /// 5. **Compact** the indices: each kept element's tile index (a 16-bit store of its own,
    ///    `st.shared.b16`) into a shared array at the element's tile-local rank, a loop over
    ///    the mask's set bits alone; a
    ///    partition's rejected ones from the array's end backwards. (The elements stay in the
    ///    tile: holding them in registers across the barriers took 76 registers a thread, 3
    ///    blocks an SM on sm_90, and 52 % of the bound at 2^28 on an H200; holding them only
    ///    until each warp compacts its own part of the tile, with no index array (28.8 KiB of
    ///    shared memory, 48 registers), took 11–30 % more time than the indices in every row
    ///    tried in session 48: `select-lean/r48d/ab.csv`, branch `exp/select-warp-part`; a
    ///    ballot a row of 32 in each warp instead, with nothing held across the barriers (32
    ///    registers, 28.8 KiB, 7 blocks an SM against 5), took 9–54 % more in every select,
    ///    partition and unique row in session 52: `select-hints/ab_all.csv`, branch
    ///    `exp/select-ballot`; each warp compacting its own part in place after the look-back,
    ///    with step 3 as here and no index array (28.8 KiB; registers capped by `.maxnreg` at
    ///    40 or 36: 6 or 7 blocks an SM), took 4–20 % more in every row of session 53's A/B,
    ///    most in `lt:10` where almost nothing is stored, whatever step 4b's distance:
    ///    `docs/measurements/2026-12-01-h200/warp-store/`, branch `exp/select-warp-store`. More
    ///    tiles in flight do not make this kernel faster. The indices went in
    ///    by a shared atomic add into a zeroed word until session 46, a workaround for the
    ///    emulator's once word-wide race check. The plain stores, with no zeroing step, take
    ///    5–24 % less time on the H200 in the `IF` rows and the `u8`/`u16` rows of an A/B at
    ///    2^28 (the two forms interleaved), 1–6 % more in four 32-bit rows (`i32` flags,
    ///    unique run:1, run-length run:16, `f32` flagged partitions), each still ≥ 1.06× CUB:
    ///    `docs/measurements/2026-11-30-h200/index-by-store/`; ncu at base clocks finds the
    ///    plain stores' `select i32 flags` waiting longer on memory and barriers with 23 %
    ///    fewer instructions, and their `run_length i32 run:16` 2 % faster there:
    ///    `index-by-store-ncu/`.)
    /// 6. **Look back** (`scan::lookback`'s `look_back` on counts, tile `t`'s status word at
    ///    `status[t ×` [`SELECT_STATUS_SPACING`]`]`): the kept elements of the tiles before. The
    ///    **look-ahead warp** does it from the block's start, once its tile's copies are issued
    ///    (while the tile's warps wait on them, flag and count), leaves the prefix in a control
    ///    word and meets the tile's warps at a second named barrier (`bar.sync 2, 288`); thread
    ///    0 then publishes the inclusive prefix. The narrow types (no look-ahead warp): warp 0
    ///    after the compaction, then a barrier. With the warp and the words 4 apart, on the
    ///    H200 at 2^28 (`docs/measurements/2026-12-01-h200/lookahead/r54c`, main's build in the
    ///    same rounds): `select i32 lt:500` 440.4–441.3 µs against 463.5–464.8, `lt:10`
    ///    322.6–324.3 against 358.2–359.3, `f32 lt:500` 440.4–440.8 against 463.8–464.9, `f32
    ///    lt:10` 321.4–322.3 against 359.6–359.7, `partition i32 lt:500` 585.5–585.9 against
    ///    602.8–603.6, `unique i32 run:1` 581.2 against 615.8. Against a copy of the same bytes in
    ///    that call (392.2–392.3, 269.1–269.7, 393.9–394.3, 268.9–270.2 µs): 1.12× at half kept,
    ///    1.19–1.20× at 1 % kept. Before it, this step bounded `select`: at `lt:10` 47 % of
    ///    the warps' stall samples were its barrier (the block's other warps waiting for warp
    ///    0's look-back, about half a block's life, with the tile's shared memory held and no
    ///    load in flight; session 49, `select-early/`). Two ways to shorten it lost on
    ///    the H200 at 2^28 (`select-early/`): warp 0 looking back before its own compaction,
    ///    5–15 % slower; 2 or 4 windows of predecessors read a round trip, 1.5–4.5 % slower.
    ///    What the chain costs: with no look-back at all (a decomposition whose tiles store at
    ///    wrong places, branch `exp/select-nowait`; `docs/measurements/2026-12-01-h200/`
    ///    `warp-store/r53c/`, 2 rounds, a copy of the same bytes in the same call) `select i32
    ///    lt:500` takes 411.4–412.8 µs against 463.8–464.6 (1.06× the copy against 1.19×) and
    ///    `lt:10` 306.6–307.1 against 359.7–360.2 (1.15× against 1.35×): the chain is 11–15 %
    ///    of the time, and at 1 % kept the rest alone is already 1.15× a copy.
    /// 7. **Store** (a gather from the tile through the indices): thread `t` writes kept
    ///    elements `t`, `t + 256`, … to
    ///    `output[prefix + i]`; a partition's rejected ones to `output[n − 1 − (rejected
    ///    before + j)]`. The last tile's thread 0 writes the total to `selected[0]`. (Stores
    ///    that L2 evicts first, `st.global.cs`, were within −1.1 to +0.5 % of these in one
    ///    round of session 52's A/B: `select-hints/`, branch `exp/select-stream-store`.)
    ///
    /// # Launch
    /// Grid `ceil(n / select_tile::<T>())`, block exactly [`select_block::<T>()`] (traps
    /// otherwise); static shared memory `(7168 + 36) × 4` bytes (the tile, the counts, the
    /// prefix) and `7168 × 2` (the indices).
    ///
    /// # Preconditions
    /// `input` and `output` hold `n ≥ 1` elements each and do not overlap; `input` is 16-byte
    /// aligned where `aligned` is 1 (else any alignment of `T`); `flags` holds `n` bytes where
    /// `how` is [`FLAGGED`] (else it is never read); `how` is [`IF`], [`FLAGGED`], [`UNIQUE`],
    /// or [`IF`] or [`FLAGGED`] plus [`PARTITION`]; `status` holds `gridDim.x ×`
    /// [`SELECT_STATUS_SPACING`] words, zeroed or written by launches with other epochs; `epoch` is in `1..=index::MAX_EPOCH`, new on
    /// this status array since it was zeroed; `n < 2^32`.
    ///
    /// # Safety
    /// The pointers are valid device memory of those lengths. Every thread reaches every
    /// barrier; the look-back waits only for tiles with smaller ids (`lookback`'s "Tile
    /// order").
    ///
    /// # Measured
    /// 2^28 elements, values uniform over [0, 1000), NVIDIA H200 (`docs/measurements/2026-12-01-h200/datapath/r55d/select.csv`, commit 261373a; `scripts/gpu/select.sh`'s rows, 1 round, each row `reduce --op … --compare-cub`: the median of 20 launches between CUDA events, CUB's `DeviceSelect`/`DevicePartition` on the same values in the same row, both checked against the CPU; × = CUB's median over ours; the bound: the bytes read and written at the peak bandwidth; PyTorch's `masked_select` and `unique_consecutive` on the same shapes, its own values, `docs/measurements/2026-12-01-h200/datapath/r55d/select_torch.csv`): `select` `i32` lt:500: 434.8 µs (76.9 % of the bound), CUB 829.5 µs (1.91×); PyTorch 2025.4 µs; `select` `i32` lt:10: 303.9 µs (74.1 % of the bound), CUB 704.1 µs (2.32×); PyTorch 1030.1 µs; `select` `f32` lt:500: 434.9 µs (76.9 % of the bound), CUB 827.6 µs (1.90×); PyTorch 2021.4 µs; `select` `f32` lt:10: 305.0 µs (73.9 % of the bound), CUB 704.8 µs (2.31×); PyTorch 1032.0 µs; `select` `i32` flags: 495.8 µs (78.7 % of the bound), CUB 779.3 µs (1.57×); `partition` `i32` lt:500: 581.8 µs (76.7 % of the bound), CUB 936.2 µs (1.61×); `partition` `f32` flags: 651.6 µs (77.0 % of the bound), CUB 912.7 µs (1.40×); `unique` `i32` run:1: 577.5 µs (77.2 % of the bound), CUB 751.7 µs (1.30×); PyTorch 791.6 µs; `unique` `i32` run:16: 338.5 µs (70.0 % of the bound), CUB 505.7 µs (1.49×); PyTorch 536.2 µs; `unique` `i32` run:1024: 299.5 µs (74.6 % of the bound), CUB 478.3 µs (1.60×); PyTorch 518.5 µs; `unique` `f32` run:16: 337.2 µs (70.3 % of the bound), CUB 502.6 µs (1.49×); PyTorch 540.3 µs.
    /// With the look-ahead warp and the status words 4 apart (session 54; `docs/measurements/2026-12-01-h200/lookahead/r54c/land/ab.csv`, up to 2 interleaved rounds, ours alone, each the median of 20 launches, every row checked against the CPU): `select` `i32` lt:500: 440.4–441.3 µs, before it 463.5–464.8 µs; `select` `i32` lt:10: 322.6–324.3 µs, before it 358.2–359.3 µs; `select` `f32` lt:500: 440.4–440.8 µs, before it 463.8–464.9 µs; `select` `f32` lt:10: 321.4–322.3 µs, before it 359.6–359.7 µs; `partition` `i32` lt:500: 585.5–585.9 µs, before it 602.8–603.6 µs; `unique` `i32` run:1: 581.2 µs, before it 615.8 µs; `select` `u8` lt:128: 299.6 µs, before it 299.1 µs.
    /// With step 4b's prefetch only where a tile writes a quarter of its elements and the status words 8 apart (session 55; `docs/measurements/2026-12-01-h200/datapath/r55c/ab/ab.csv`, up to 2 interleaved rounds, ours alone, each the median of 20 launches, every row checked against the CPU; `lt:100` and `lt:200` keep 10 % and 20 %; the rows with CUB above ran this build): `select` `i32` lt:10: 301.0–301.2 µs, before it 321.7–324.8 µs; `select` `i32` lt:100: 335.9–336.6 µs, before it 344.3–344.6 µs; `select` `i32` lt:200: 361.4–362.4 µs, before it 368.5–369.3 µs; `select` `i32` lt:500: 434.6–436.0 µs, before it 439.9–440.8 µs; `unique` `i32` run:1: 574.3–575.8 µs, before it 579.2 µs; `select` `u8` lt:128: 301.2 µs, before it 299.4 µs.
    /// The other rows of the A/B of builds that measured step 4b's L2 prefetch (`docs/measurements/2026-12-01-h200/select-hints/ab_all.csv`, up to 3 interleaved rounds, ours alone, each the median of 20 launches, every row checked against the CPU): `select` `u8` lt:128: 299.1–299.8 µs, before it 324.8–325.9 µs; `select` `u16` lt:500: 322.1–322.6 µs, before it 376.8–378.6 µs; `partition` `u8` lt:128: 422.3–422.4 µs, before it 434.1–434.3 µs; `unique` `u16` run:16: 287.5–287.7 µs, before it 333.4 µs.
    /// The narrow types, widened in the tile: 2^28 elements, values uniform over [0, 1000) (`u8`: [0, 256)), NVIDIA H200 (`docs/measurements/2026-12-01-h200/session56/r56c/narrow.csv`, commit 0d2f607; rows as above, ours and CUB's only, rounds as named): `select` `u8` lt:128: 300.8 µs (27.8 % of the bound), CUB 605.5 µs (2.01×, 1 round); `select` `u8` lt:3: 243.0 µs (23.2 % of the bound), CUB 566.1 µs (2.33×, 1 round); `select` `u16` lt:500: 321.3 µs (52.1 % of the bound), CUB 571.4 µs (1.78×, 1 round); `select` `u16` lt:10: 259.9 µs (43.3 % of the bound), CUB 495.5 µs (1.91×, 1 round); `select` `u8` flags: 315.6 µs (44.2 % of the bound), CUB 581.2 µs (1.84×, 1 round); `partition` `u8` lt:128: 422.0 µs (26.4 % of the bound), CUB 697.7 µs (1.65×, 1 round); `partition` `u16` flags: 465.2 µs (59.9 % of the bound), CUB 754.4 µs (1.62×, 1 round); `unique` `u8` run:1: 349.4 µs (31.9 % of the bound), CUB 483.4 µs (1.38×, 1 round); `unique` `u16` run:16: 271.5 µs (43.6 % of the bound), CUB 426.9 µs (1.57×, 1 round).
    pub unsafe fn select<T: Widen>(
        input: Global<T>,
        flags: Global<u8>,
        output: GlobalMut<T>,
        selected: GlobalMut<u32>,
        status: GlobalMut<u64>,
        n: u32,
        epoch: u32,
        how: u32,
        outcomes: u32,
        operand: u64,
        aligned: u32
    ) for [i32, u32, f32, u8, u16] {
        let smem = static_shared!(SELECT_SHARED: [u32; SELECT_TILE_WORDS as usize + CTRL_WORDS]);
        let index = static_shared!(SELECT_INDEX: [u16; SELECT_TILE_WORDS as usize]);
        let wide = <T::Wide as Shuffle>::from_halves([operand as u32, (operand >> 32) as u32]);
        let predicate = Predicate { outcomes, operand: wide };
        // SAFETY: forwarded from the caller; smem holds the tile and the control words.
        unsafe {
            select_with::<T>(
                (input, flags, output),
                (selected, status),
                n as usize,
                epoch,
                how,
                predicate,
                aligned != 0,
                (smem, index),
            )
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{Predicate, SELECT_TILE_WORDS, live_bits, nonzero_bytes, prefetch_line};

    #[test]
    fn the_split_predicate_holds_where_the_predicate_does() {
        let floats =
            [f32::NAN, -f32::NAN, f32::NEG_INFINITY, -1.5, -0.0, 0.0, 1.5, 2.0, f32::INFINITY, f32::MIN_POSITIVE];
        for outcomes in 0..16 {
            for &operand in &floats {
                let p = Predicate { outcomes, operand };
                for &x in &floats {
                    assert_eq!(p.holds_split(x), p.holds(x), "f32 outcomes {outcomes:#06b}, x {x}, operand {operand}");
                }
            }
            let ints = [i32::MIN, -7, -1, 0, 1, 7, i32::MAX];
            for &operand in &ints {
                let p = Predicate { outcomes, operand };
                for &x in &ints {
                    assert_eq!(p.holds_split(x), p.holds(x), "i32 outcomes {outcomes:#06b}, x {x}, operand {operand}");
                }
            }
            let unsigned = [0u32, 1, 7, 0x8000_0000, u32::MAX];
            for &operand in &unsigned {
                let p = Predicate { outcomes, operand };
                for &x in &unsigned {
                    assert_eq!(p.holds_split(x), p.holds(x), "u32 outcomes {outcomes:#06b}, x {x}, operand {operand}");
                }
            }
        }
    }

    #[test]
    fn a_prefetched_line_lies_in_a_whole_tile_of_the_input() {
        let tile = SELECT_TILE_WORDS as usize;
        for n in [1, 7167, 7168, 7169, 2 * tile - 1, 2 * tile, 2 * tile + 1, 500 * tile + 3] {
            for ahead in [0, 1, 2, 499, 500, 501] {
                for tid in [0, 1, 223, 224, 255] {
                    let mut got = None;
                    prefetch_line::<32>(ahead, (n, tile, 1), tid, |w| got = Some(w));
                    let want = (ahead + 1) * tile <= n && tid < tile / 32;
                    assert_eq!(got.is_some(), want, "n {n}, ahead {ahead}, thread {tid}");
                    if let Some(w) = got {
                        // The whole line (32 words) is inside tile `ahead`, which is inside the input.
                        assert!(
                            w >= ahead * tile && w + 32 <= (ahead + 1) * tile && w + 32 <= n,
                            "n {n}, ahead {ahead}, thread {tid}"
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn a_narrow_tile_is_asked_for_by_its_bytes_a_line_a_thread() {
        // A tile of 7168 u8 is 56 lines of 128 bytes, of u16 112: threads 0 ..= 55 (111) ask
        // for one line each, every byte of the tile once, none outside it or past the input.
        let tile = SELECT_TILE_WORDS as usize;
        for (per, lines) in [(1, 56), (2, 112)] {
            for n in [tile - 1, tile, 2 * tile - 1, 2 * tile, 2 * tile + 1, 600 * tile + 5] {
                for ahead in [0, 1, 495, 599, 600] {
                    let mut covered = 0;
                    for tid in 0..256 {
                        let mut got = None;
                        prefetch_line::<128>(ahead, (n, tile, per), tid, |b| got = Some(b));
                        let want = (ahead + 1) * tile <= n && tid < lines;
                        assert_eq!(got.is_some(), want, "per {per}, n {n}, ahead {ahead}, thread {tid}");
                        if let Some(b) = got {
                            assert_eq!(
                                b,
                                ahead * tile * per + 128 * tid,
                                "per {per}, n {n}, ahead {ahead}, thread {tid}"
                            );
                            assert!(b + 128 <= (ahead + 1) * tile * per && b + 128 <= n * per);
                            covered += 128;
                        }
                    }
                    let whole = (ahead + 1) * tile <= n;
                    assert_eq!(covered, if whole { tile * per } else { 0 }, "per {per}, n {n}, ahead {ahead}");
                }
            }
        }
    }

    #[test]
    fn live_bits_are_the_elements_below_valid() {
        for items in [1, 7, 28, 32] {
            for first in (0..100).step_by(7) {
                for valid in 0..120 {
                    let want = (0..items).filter(|e| first + e < valid).fold(0u32, |m, e| m | 1 << e);
                    assert_eq!(live_bits(first, valid, items), want, "first {first}, valid {valid}, items {items}");
                }
            }
        }
    }

    #[test]
    fn nonzero_bytes_marks_each_byte_that_is_not_zero() {
        let values = [0u8, 1, 2, 0x7f, 0x80, 0x81, 0xfe, 0xff];
        for &a in &values {
            for &b in &values {
                for &c in &values {
                    for &d in &values {
                        let word = u32::from_le_bytes([a, b, c, d]);
                        let want = [a, b, c, d].iter().enumerate().fold(0, |m, (i, &x)| m | ((x != 0) as u32) << i);
                        assert_eq!(nonzero_bytes(word), want, "{word:#010x}");
                    }
                }
            }
        }
    }
}
