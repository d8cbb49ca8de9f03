use super::index::{
    FLAG_AGGREGATE, FLAG_INVALID, FLAG_PREFIX, blocked_chunk, blocked_is_conflict_free, halves_agree, pack_halves,
    pack_status, status_flag, status_value, striped_chunk, unpack_halves, value_slot,
};
use crate::device::atomic::{load_acquire_u64, load_relaxed_u64, store_relaxed_u64, store_release_u64};
use crate::device::clock::nanosleep;
use crate::device::global::l2_evict_first_policy;
use crate::device::global::{Global, GlobalMut};
use crate::device::shared::{Shared, copy_async_commit, copy_async_wait};
use crate::device::thread::{block_dim_x, block_idx_x, sync_threads, thread_idx_x};
use crate::device::warp::{Word, all_sync, ballot_sync, shfl_up_sync, shfl_xor_sync};
use crate::device::{FULL_MASK, WARP_SIZE, trap};
use crate::types::{Element, Operator, Sum, to_128};
use crate::{kernel, static_shared, typed_kernel};

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
/// Does the scan's chain of `T` and `O` carry a NaN flag beside PTX `min`/`max`
/// (`Operator::CARRIES_NAN`: the float minima and maxima), for 32-bit types only? Each thread's
/// fold of its items and its rewrite of them in place then run `combine_loose` (one `FMNMX` an
/// element where `combine` is three: `FSETP.NAN`, `FMNMX`, `FSEL` on the chain) and "a NaN was
/// seen" beside it, the NaN chosen once a thread in the fold and at each output in the rewrite
/// ([`chain`], [`chain_poisons`], [`chain_end`]).
///
/// Measured (NVIDIA H200, n = 2^28, medians of 10 runs, 3 interleaved rounds of main b868866
/// against the flag for both widths, e1e7b9a: `docs/measurements/2026-12-02-h200/session61/`):
/// `f32` minima inclusive 594.4–597.5 → 583.8–586.4 µs (−1.7 to −1.9 % a pair), exclusive
/// 591.1–593.7 → 583.7–585.6; maxima inclusive 592.9–594.0 → 587.9–588.0 (−0.8 to −1.0 %),
/// exclusive 590.8–593.6 → 580.1–585.5; the `f32` sums (unchanged code) within 0.5 % (inclusive
/// 589.0–591.4 against 590.2–593.1). At 2^24 (4 rounds) every row ties (39.4–42.0 µs). `f64` (2
/// rounds) slower in every pair, +0.1 to +0.7 % (1,292.3–1,298.7 → 1,298.4–1,303.1 µs; 32 → 35
/// registers, 1,264 → 1,248 SASS instructions), so the 64-bit types keep `combine` on the chain.
/// `f32`: 32 → 38 registers, 1,040 → 888 instructions (sm_90, ptxas 12.9); the shared tile still
/// bounds the SM at 6 blocks. (The helpers test it in `const` blocks: called as a plain function,
/// folded later, it moved a branch of `lookback__f32_min`'s PTX away from the build measured.)
#[inline(always)]
pub(crate) const fn nan_flag<T: Element, O: Operator<T>>() -> bool {
    O::CARRIES_NAN && words::<T>() == 1
}

/// One step of the scan's chain: `combine_loose` where it carries a NaN flag ([`nan_flag`]),
/// `combine` otherwise.
#[inline(always)]
fn chain<T: Element, O: Operator<T>>(a: T, b: T) -> T {
    if const { nan_flag::<T, O>() } { O::combine_loose(a, b) } else { O::combine(a, b) }
}

/// Does `x` set the chain's NaN flag? Never where the chain carries none ([`nan_flag`]).
#[inline(always)]
fn chain_poisons<T: Element, O: Operator<T>>(x: T) -> bool {
    (const { nan_flag::<T, O>() }) && O::poisons(x)
}

/// The chain's `value` as `combine`'s chain would give it: the operator's NaN where one was
/// `seen` ([`nan_flag`]); the value itself where the chain carries no flag.
#[inline(always)]
fn chain_end<T: Element, O: Operator<T>>(value: T, seen: bool) -> T {
    if const { nan_flag::<T, O>() } { O::poisoned(value, seen) } else { value }
}

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

// ---------------------------------------------------------------------------------------
// The scan, generic over the element type `T` and the operator `O` (`crate::types`): `lookback`
// is its `i32` × `Sum` instantiation, `lookback__{type}_{op}` ([`lookback_generic`]) the others.
// Read it with `T = i32` and `O::combine` = `+`: that is the lesson. What the other types add is
// how a 64-bit value is published (`Status`), and what the operators without an inverse do where
// `lookback` subtracts (`warp_exclusive`).

/// 32-bit words per element of `T`: 1, or 2 for the 64-bit types. The tile lives in shared
/// memory as 32-bit words, whatever `T`.
#[inline(always)]
pub(crate) const fn words<T: Element>() -> usize {
    4 / T::PER_128
}

/// The elements of the 16 bytes `w` read as four 32-bit words: four of a 32-bit type, or two
/// of a 64-bit type (then repeated: `[a, b, a, b]`).
#[inline(always)]
pub(crate) fn unpack<T: Element, W: Word>(w: [W; 4]) -> [T; 4] {
    let w = [w[0].to_word(), w[1].to_word(), w[2].to_word(), w[3].to_word()];
    if T::PER_128 == 4 {
        [T::from_halves([w[0], 0]), T::from_halves([w[1], 0]), T::from_halves([w[2], 0]), T::from_halves([w[3], 0])]
    } else {
        let (a, b) = (T::from_halves([w[0], w[1]]), T::from_halves([w[2], w[3]]));
        [a, b, a, b]
    }
}

/// The 16 bytes that hold the first `T::PER_128` elements of `e`, as four words: the inverse
/// of [`unpack`].
#[inline(always)]
pub(super) fn pack<T: Element, W: Word>(e: [T; 4]) -> [W; 4] {
    let w = to_128(e);
    [W::from_word(w[0]), W::from_word(w[1]), W::from_word(w[2]), W::from_word(w[3])]
}

/// The elements of the 16 bytes `w` (`T::PER_128` of them) folded into `acc`, in order.
#[inline(always)]
pub(super) fn fold_chunk<T: Element, O: Operator<T>, W: Word>(acc: T, w: [W; 4]) -> T {
    let x = unpack::<T, W>(w);
    let acc = O::combine(O::combine(acc, x[0]), x[1]);
    if T::PER_128 == 4 { O::combine(O::combine(acc, x[2]), x[3]) } else { acc }
}

/// [`fold_chunk`] for a chain that carries a NaN flag ([`nan_flag`]): PTX `min`/`max` alone on
/// the chain (`combine_loose`), "a NaN was seen" beside it; [`chain_end`] of the two is
/// `fold_chunk`'s answer.
#[inline(always)]
fn fold_chunk_flagged<T: Element, O: Operator<T>, W: Word>(mut acc: T, mut seen: bool, w: [W; 4]) -> (T, bool) {
    let x = unpack::<T, W>(w);
    for k in 0..T::PER_128 {
        acc = O::combine_loose(acc, x[k]);
        seen |= O::poisons(x[k]);
    }
    (acc, seen)
}

/// `T` in control slot `slot` of the words from `ctrl` on (one word per slot, two for 64-bit
/// types).
///
/// # Safety
/// The slot's words are in `smem`; no concurrent write (a barrier separates it from this read).
#[inline(always)]
pub(crate) unsafe fn read_slot<T: Element, W: Word>(smem: Shared<W>, ctrl: usize, slot: usize) -> T {
    // SAFETY: the caller's promise.
    unsafe {
        if words::<T>() == 1 {
            T::from_low_bits(smem.read(ctrl + slot).to_word())
        } else {
            T::from_halves([smem.read(ctrl + 2 * slot).to_word(), smem.read(ctrl + 2 * slot + 1).to_word()])
        }
    }
}

/// Writes `value` to control slot `slot` (as [`read_slot`]).
///
/// # Safety
/// As for [`read_slot`], with no concurrent access.
#[inline(always)]
pub(crate) unsafe fn write_slot<T: Element, W: Word>(smem: Shared<W>, ctrl: usize, slot: usize, value: T) {
    // SAFETY: the caller's promise.
    unsafe {
        if words::<T>() == 1 {
            smem.write(ctrl + slot, W::from_word(value.low_bits()));
        } else {
            let h = value.to_halves();
            smem.write(ctrl + 2 * slot, W::from_word(h[0]));
            smem.write(ctrl + 2 * slot + 1, W::from_word(h[1]));
        }
    }
}

/// Inclusive `⊕`-scan of `x` over the 32 lanes of a full warp (Hillis–Steele with
/// `__shfl_up_sync`: 5 steps, every lane ends with lanes `0..=lane` combined; a 64-bit value
/// crosses as two shuffles).
#[inline(always)]
pub(crate) fn warp_inclusive_scan<T: Element, O: Operator<T>>(mut x: T, lane: u32) -> T {
    let mut d = 1;
    while d < WARP_SIZE {
        let y = shfl_up_sync(FULL_MASK, x, d);
        if lane >= d {
            // The operators commute (`crate::types`), so `x ⊕ y` is `y ⊕ x`.
            x = O::combine(x, y);
        }
        d *= 2;
    }
    x
}

/// The lanes before this one combined, from `inclusive` (lanes `0..=lane`) and the lane's own
/// value: `inclusive − own` where the operator has an exact inverse (`i32` sums: `lookback`'s
/// subtraction); otherwise the inclusive value of the lane below (one more shuffle), the
/// identity in lane 0. Called by every lane of a full warp.
#[inline(always)]
pub(super) fn warp_exclusive<T: Element, O: Operator<T>>(inclusive: T, own: T, lane: u32) -> T {
    match O::exclusive_from(inclusive, own) {
        Some(before) => before,
        None => {
            let below = shfl_up_sync(FULL_MASK, inclusive, 1);
            if lane == 0 { O::IDENTITY } else { below }
        }
    }
}

/// `⊕` of `x` over the 32 lanes of a full warp, returned to every lane (butterfly).
#[inline(always)]
fn warp_all_reduce<T: Element, O: Operator<T>>(mut x: T) -> T {
    let mut m = 16;
    while m > 0 {
        x = O::combine(x, shfl_xor_sync(FULL_MASK, x, m));
        m /= 2;
    }
    x
}

/// Is `T` published in the **packed** layout (one 64-bit word `epoch:30 | flag:2 | bits:32`,
/// the 32-bit types) rather than the **split** one (a flag word and two value slots per tile,
/// the 64-bit types)? The one place the layout is chosen; "Status words and memory ordering"
/// in [`lookback`] and [`lookback_generic`] say why.
#[inline(always)]
const fn packed<T: Element>() -> bool {
    core::mem::size_of::<T>() == 4
}

/// Where tiles publish: one status word per tile (packed, or `spacing` words apart in the
/// layout of [`spaced`](Status::spaced)) and, for the split layout, two value slots
/// per tile (`index::value_slot`: its aggregate and its inclusive prefix); or, for the
/// **halves** layout of 64-bit types (the warp-specialized scan's), two tagged status words
/// per tile (`index::pack_halves`), `HALVES_APART` words apart (2, adjacent: the scan's; 8 in
/// `run_length`, see [`apart`](Status::apart)).
#[derive(Clone, Copy)]
pub(crate) struct Status<T, const HALVES_APART: usize = 2> {
    words: GlobalMut<u64>,
    values: GlobalMut<T>,
    /// A 64-bit `T` publishes in the halves layout rather than the split one.
    halves: bool,
    /// Packed layout: tile `t`'s word is `words[t × spacing]` (1 but in
    /// `lookback_warpspec_8x12x6` and its 32-bit typed rows, whose words lie 16 bytes apart).
    spacing: usize,
}

impl<T: Element> Status<T> {
    /// A status array of `T`'s layout: the status words, and the value slots that only the
    /// split layout reads and writes (two per tile; unused, and may be anything, for 32-bit `T`).
    #[inline(always)]
    pub(super) fn of(words: GlobalMut<u64>, values: GlobalMut<T>) -> Self {
        Self { words, values, halves: false, spacing: 1 }
    }

    /// A status array whose 64-bit `T` publish in the **halves** layout: tile `t`'s two status
    /// words at `words[2t]` and `words[2t + 1]`, each `epoch:30 | flag:2 | half:32`
    /// (`index::pack_halves`), written and read with relaxed 64-bit atomics alone; a reader takes
    /// a tile's status only when both words carry the same epoch and flag
    /// (`index::halves_agree`), and polls again otherwise. No fence on either side: each half
    /// carries its own flag, as the packed word does; and the words are status words, zeroed
    /// when allocated, so the epochs keep every other launch's out. 32-bit `T` keep the packed
    /// layout.
    #[inline(always)]
    pub(crate) fn halves(words: GlobalMut<u64>) -> Self {
        Self { words, values: words.cast(), halves: true, spacing: 1 }
    }

    /// A status array of the packed layout, which has no value slots (a 32-bit `T`).
    #[inline(always)]
    pub(crate) fn packed(words: GlobalMut<u64>) -> Self {
        // `values` is never read or written in the packed layout.
        Self { words, values: words.cast(), halves: false, spacing: 1 }
    }

    /// The same status array, where a 32-bit `T` (the packed layout) has tile `t`'s word at
    /// `words[t × SPACING]` (the words between unused): `SPACING` × tiles words. The layouts of
    /// a 64-bit `T` keep their places (halves: two words a tile whatever `SPACING`;
    /// [`apart`](Self::apart) spaces them).
    #[inline(always)]
    pub(crate) fn spaced<const SPACING: usize>(self) -> Self {
        const { assert!(SPACING >= 1, "a spacing of 0 would put every tile on one word") };
        Self { spacing: SPACING, ..self }
    }

    /// The same status array whose halves layout puts tile `t`'s two words at `words[A × t]` and
    /// the one after (`A ≥ 2`: `A` × tiles words), so that tiles' words lie apart as
    /// [`spaced`](Self::spaced) puts packed ones. The other layouts keep their places. (A
    /// constant of the type rather than a field, so that the scan's adjacent halves compile to
    /// the code they were measured with.)
    #[inline(always)]
    // `run_length` alone calls it, and the nested module (`no-entries`) leaves it out.
    #[cfg_attr(all(target_arch = "nvptx64", feature = "no-entries"), allow(dead_code))]
    pub(crate) fn apart<const A: usize>(self) -> Status<T, A> {
        const { assert!(A >= 2, "a tile's two halves need two words") };
        Status { words: self.words, values: self.values, halves: self.halves, spacing: self.spacing }
    }
}

impl<T: Element, const HALVES_APART: usize> Status<T, HALVES_APART> {
    /// Words of the status array per tile: the spacing for a 32-bit `T` (the packed layout,
    /// whatever the constructor; 1 but after `spaced`), `HALVES_APART` (2 but after `apart`) in
    /// the halves layout of a 64-bit `T`, 1 in its split layout (the value slots lie elsewhere).
    #[inline(always)]
    pub(super) fn words_per_tile(self) -> usize {
        if packed::<T>() {
            self.spacing
        } else if self.halves {
            HALVES_APART
        } else {
            1
        }
    }

    /// Tile `tile`'s `value` with `flag` (aggregate or inclusive prefix): packed, one relaxed
    /// 64-bit store of flag and value; split, the value into the slot of its flag, then the
    /// flag word with release semantics.
    ///
    /// # Safety
    /// `tile` has a word (and, split, two slots); one thread per tile publishes, the aggregate
    /// before the prefix.
    #[inline(always)]
    pub(crate) unsafe fn publish(self, tile: usize, epoch: u32, flag: u32, value: T) {
        if packed::<T>() {
            // SAFETY: tile × spacing < the status array's length (the tile has a word); one
            // atomic word carries flag and value.
            unsafe {
                store_relaxed_u64(
                    self.words.offset(tile * self.spacing),
                    pack_status(epoch, flag, value.low_bits() as i32),
                )
            };
        } else if self.halves {
            let [lo, hi] = pack_halves(epoch, flag, value.to_halves());
            // SAFETY: tile's two words (A·tile + 1 < A × tiles, A = HALVES_APART); each carries
            // its own flag.
            unsafe {
                store_relaxed_u64(self.words.offset(HALVES_APART * tile), lo);
                store_relaxed_u64(self.words.offset(HALVES_APART * tile + 1), hi);
            }
        } else {
            // SAFETY: the value's own slot (never written again during the launch), then the
            // flag with release semantics: a reader that acquires the flag sees the value.
            unsafe {
                T::store_relaxed(self.values.offset(value_slot(tile, flag)), value);
                store_release_u64(self.words.offset(tile), pack_status(epoch, flag, 0));
            }
        }
    }

    /// Tile `pred`'s status as seen: its status word (a relaxed 64-bit atomic load, packed; an
    /// acquire, split) and 0; halves, its two words (relaxed loads) where they agree, else
    /// `(0, 0)`, which reads as not yet published.
    ///
    /// # Safety
    /// `pred` has a word: `pred` is below the number of tiles the status array holds.
    #[inline(always)]
    #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
    unsafe fn word(self, pred: usize) -> (u64, u64) {
        // SAFETY: forwarded.
        unsafe {
            if packed::<T>() {
                (load_relaxed_u64(self.words.as_const().offset(pred * self.spacing)), 0)
            } else if self.halves {
                let at = self.words.as_const();
                let (lo, hi) = (
                    load_relaxed_u64(at.offset(HALVES_APART * pred)),
                    load_relaxed_u64(at.offset(HALVES_APART * pred + 1)),
                );
                if halves_agree(lo, hi) { (lo, hi) } else { (0, 0) }
            } else {
                (load_acquire_u64(self.words.as_const().offset(pred)), 0)
            }
        }
    }

    /// [`word`](Self::word) of tile `pred` where `pred >= 0`; before tile 0, an inclusive
    /// prefix holding the identity (what the look-back finds there).
    ///
    /// # Safety
    /// `pred` is below the number of tiles the status array holds.
    #[inline(always)]
    unsafe fn word_or_prefix<O: Operator<T>>(self, pred: isize, epoch: u32) -> (u64, u64) {
        if pred >= 0 {
            // SAFETY: 0 <= pred < the tiles the status array holds.
            unsafe { self.word(pred as usize) }
        } else {
            (pack_status(epoch, FLAG_PREFIX, O::IDENTITY.low_bits() as i32), 0)
        }
    }

    /// The value of the valid status `word` (`flag`) read for tile `pred`: its low bits
    /// (packed); the slot its flag names, or the identity before tile 0 (split).
    ///
    /// # Safety
    /// `word` is this launch's, loaded by [`word`](Self::word) (or made for a `pred` before
    /// tile 0).
    #[inline(always)]
    #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
    unsafe fn value<O: Operator<T>>(self, (word, high): (u64, u64), pred: isize, flag: u32) -> T {
        if packed::<T>() {
            return T::from_low_bits(status_value(word) as u32);
        }
        if pred < 0 {
            return O::IDENTITY;
        }
        if self.halves {
            return T::from_halves(unpack_halves(word, high));
        }
        // SAFETY: the slot exists; its value was stored before the release the acquire saw (a
        // GPU-scope atomic load, never a cached one).
        let bits = unsafe { load_relaxed_u64(self.values.as_const().offset(value_slot(pred as usize, flag)).cast()) };
        T::from_halves([bits as u32, (bits >> 32) as u32])
    }
}

/// The decoupled look-back of tile `tile > 0`, by one full warp: every element before the tile,
/// combined. Lane `l` examines tile `end - 32 + l` of a window of 32 predecessors
/// (lane 31 the nearest), starting with `end = tile`:
///
/// 1. Every lane loads its predecessor's status word (relaxed 64-bit atomic load);
///    predecessors before tile 0 count as an inclusive prefix holding the identity (0 for a
///    sum). Until no lane of the window sees [`FLAG_INVALID`] (`__all_sync`), the lanes that
///    saw it load again (the others keep their word: a valid word stays valid).
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
/// `status` holds at least `tile` tiles' words (`tile × words_per_tile()`, and their slots);
/// called by all 32 lanes of one warp with the same `tile` and `epoch`.
#[inline(always)]
pub(crate) unsafe fn look_back<T: Element, O: Operator<T>, const SLEEP_NS: u32>(
    status: Status<T>,
    tile: usize,
    epoch: u32,
    lane: u32,
) -> T {
    // SAFETY: forwarded.
    unsafe { look_back_apart::<T, O, SLEEP_NS, 2>(status, tile, epoch, lane) }
}

/// [`look_back`] on a status array whose halves lie `A` words apart ([`Status::apart`]).
///
/// # Safety
/// As for [`look_back`].
#[inline(always)]
pub(crate) unsafe fn look_back_apart<T: Element, O: Operator<T>, const SLEEP_NS: u32, const A: usize>(
    status: Status<T, A>,
    tile: usize,
    epoch: u32,
    lane: u32,
) -> T {
    let mut exclusive = O::IDENTITY;
    let mut end = tile;
    loop {
        let pred = end as isize - WARP_SIZE as isize + lane as isize;
        // SAFETY: pred < tile <= the tiles the status array holds.
        let load = || unsafe { status.word_or_prefix::<O>(pred, epoch) };
        let word = settle::<SLEEP_NS>(load(), load, epoch);
        let flag = status_flag(word.0, epoch);
        let is_prefix = flag == FLAG_PREFIX;
        // SAFETY: this launch's valid word for pred.
        let value = unsafe { status.value::<O>(word, pred, flag) };
        let prefixes = ballot_sync(FULL_MASK, is_prefix);
        if prefixes != 0 {
            let nearest = 31 - prefixes.leading_zeros();
            return O::combine(exclusive, warp_all_reduce::<T, O>(if lane >= nearest { value } else { O::IDENTITY }));
        }
        exclusive = O::combine(exclusive, warp_all_reduce::<T, O>(value));
        end -= WARP_SIZE as usize;
    }
}

/// Step 1 of [`look_back`] from the first load on: starting from `word` (the lane's load for
/// its predecessor), the lanes that see [`FLAG_INVALID`] sleep `SLEEP_NS` nanoseconds and `load`
/// again until no lane of the warp sees it. Returns the lane's valid word.
#[inline(always)]
fn settle<const SLEEP_NS: u32>(mut word: (u64, u64), load: impl Fn() -> (u64, u64), epoch: u32) -> (u64, u64) {
    while !all_sync(FULL_MASK, status_flag(word.0, epoch) != FLAG_INVALID) {
        if status_flag(word.0, epoch) == FLAG_INVALID {
            if SLEEP_NS > 0 {
                nanosleep(SLEEP_NS);
            }
            word = load();
        }
    }
    word
}

/// [`look_back`] reading `WINDOWS` windows of 32 predecessors with one round trip: every lane
/// loads its predecessor in each window (`end - 32 (w + 1) + lane` for window `w`, the nearest
/// first) before it looks at any, then the windows are taken in order as [`look_back`] takes its
/// one (wait until the window has no invalid word, polling again after `SLEEP_NS` nanoseconds;
/// the nearest prefix ends it, else its aggregates are added); past the last, `end` moves
/// `32 × WINDOWS` back. Same answer as [`look_back`]; the loads of the windows it does not reach
/// are spent.
///
/// # Safety
/// As for [`look_back`].
#[inline(always)]
pub(super) unsafe fn look_back_windows<T: Element, O: Operator<T>, const SLEEP_NS: u32, const WINDOWS: usize>(
    status: Status<T>,
    tile: usize,
    epoch: u32,
    lane: u32,
) -> T {
    const { assert!(WINDOWS >= 1, "at least one window per round trip (none would never end)") };
    let mut exclusive = O::IDENTITY;
    let mut end = tile;
    loop {
        let pred = |w: usize| end as isize - ((w + 1) * WARP_SIZE as usize) as isize + lane as isize;
        // SAFETY: p < tile <= the tiles the status array holds.
        let load = |p: isize| unsafe { status.word_or_prefix::<O>(p, epoch) };
        let words: [(u64, u64); WINDOWS] = core::array::from_fn(|w| load(pred(w)));
        for (w, &first) in words.iter().enumerate() {
            let word = settle::<SLEEP_NS>(first, || load(pred(w)), epoch);
            let flag = status_flag(word.0, epoch);
            // SAFETY: this launch's valid word for pred(w).
            let value = unsafe { status.value::<O>(word, pred(w), flag) };
            let prefixes = ballot_sync(FULL_MASK, flag == FLAG_PREFIX);
            if prefixes != 0 {
                let nearest = 31 - prefixes.leading_zeros();
                return O::combine(
                    exclusive,
                    warp_all_reduce::<T, O>(if lane >= nearest { value } else { O::IDENTITY }),
                );
            }
            exclusive = O::combine(exclusive, warp_all_reduce::<T, O>(value));
        }
        end -= WINDOWS * WARP_SIZE as usize;
    }
}

/// The elements `p .. p + T::PER_128` where they exist (`< n`), the identity past the end (0
/// for a sum), as 16 bytes: a chunk of the last, partial tile.
///
/// # Safety
/// `input` holds `n` elements.
#[inline(always)]
pub(crate) unsafe fn load_guarded<T: Element, O: Operator<T>, W: Word>(input: Global<T>, p: usize, n: usize) -> [W; 4] {
    let at = |k: usize| {
        if k < T::PER_128 && p + k < n {
            // SAFETY: p + k < n.
            unsafe { input.read(p + k) }
        } else {
            O::IDENTITY
        }
    };
    pack::<T, W>([at(0), at(1), at(2), at(3)])
}

/// Stores the elements of the 16-byte `chunk` at `p ..` that exist (`< n`).
///
/// # Safety
/// `output` holds `n` elements, and nobody else writes these elements concurrently.
#[inline(always)]
pub(super) unsafe fn store_guarded<T: Element, W: Word>(output: GlobalMut<T>, p: usize, n: usize, chunk: [W; 4]) {
    let elements = unpack::<T, W>(chunk);
    for (k, &x) in elements[..T::PER_128].iter().enumerate() {
        if p + k < n {
            // SAFETY: p + k < n; this thread's element.
            unsafe { output.write(p + k, x) };
        }
    }
}

/// The four `i32` elements `p .. p + 4` where they exist (`< n`), zeros past the end: a chunk of
/// the last, partial tile of the `i32` scans (`bit`, `blelloch`, the bulk look-backs).
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

/// Phase 3, reduce: this thread's `4 × ROWS` consecutive words (blocked), then an inclusive
/// warp scan of the thread totals; lane 31 leaves its warp's total in control slot `warp`.
/// Returns `(own, incl)`: the thread's own total and its inclusive warp scan. Ends with a
/// barrier.
///
/// # Safety
/// After phase 2 of [`scan_tile`] (the load and its barrier); called by every thread of the
/// block.
#[inline(always)]
unsafe fn reduce_tile<T: Element, O: Operator<T>, W: Word, const ROWS: usize>(
    t: TileThread,
    smem: Shared<W>,
) -> (T, T) {
    let items = 4 * ROWS;
    let (mut sum, mut seen) = (O::IDENTITY, false);
    for r in 0..ROWS {
        // SAFETY: in bounds and aligned; complete and visible after the wait and barrier.
        let x = unsafe { smem.read_v4(blocked_chunk(t.tid, r, items)) };
        if const { nan_flag::<T, O>() } {
            (sum, seen) = fold_chunk_flagged::<T, O, W>(sum, seen, x);
        } else {
            sum = fold_chunk::<T, O, W>(sum, x);
        }
    }
    // The `f32` min and max: the NaN select once a thread, not once an element.
    let sum = chain_end::<T, O>(sum, seen);
    let incl = warp_inclusive_scan::<T, O>(sum, t.lane);
    if t.lane == WARP_SIZE - 1 {
        // SAFETY: warp < 32; each warp writes its own slot, read after the barrier.
        unsafe { write_slot(smem, t.ctrl, t.warp, incl) };
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
unsafe fn publish_aggregate<T: Element, O: Operator<T>, W: Word, const THREADS: usize>(
    t: TileThread,
    smem: Shared<W>,
    status: Status<T>,
    epoch: u32,
) -> (T, T) {
    let warps = THREADS / WARP_SIZE as usize;
    let mut warp_offset = O::IDENTITY;
    let mut aggregate = O::IDENTITY;
    for w in 0..warps {
        // SAFETY: written before the barrier, not written again.
        let x = unsafe { read_slot::<T, W>(smem, t.ctrl, w) };
        if w < t.warp {
            warp_offset = O::combine(warp_offset, x);
        }
        aggregate = O::combine(aggregate, x);
    }
    if t.tid == 0 {
        let flag = if t.tile == 0 { FLAG_PREFIX } else { FLAG_AGGREGATE };
        // SAFETY: tile < gridDim.x = the status array's length; thread 0, the aggregate first.
        unsafe { status.publish(t.tile, epoch, flag, aggregate) };
    }
    (warp_offset, aggregate)
}

/// Phase 5, scan in place: the thread rewrites its elements with their tile-local inclusive (or
/// exclusive) sums, starting from `run`, the sum of everything before it in the tile.
///
/// # Safety
/// After [`reduce_tile`]; each thread touches only its own blocked chunks.
#[inline(always)]
unsafe fn scan_in_place<T: Element, O: Operator<T>, W: Word, const ROWS: usize>(
    t: TileThread,
    smem: Shared<W>,
    mut run: T,
    exclusive: u32,
) {
    let items = 4 * ROWS;
    // The `f32` min and max run PTX `min`/`max` alone on `run` and a "NaN seen" flag beside it
    // ([`nan_flag`]), the NaN chosen at each output; for the others `chain` is `combine`,
    // `chain_poisons` false and `chain_end` the value.
    let mut seen = chain_poisons::<T, O>(run);
    for r in 0..ROWS {
        let at = blocked_chunk(t.tid, r, items);
        // SAFETY: this thread's own chunk.
        let x = unpack::<T, W>(unsafe { smem.read_v4(at) });
        let mut out = [O::IDENTITY; 4];
        for k in 0..T::PER_128 {
            if exclusive != 0 {
                out[k] = chain_end::<T, O>(run, seen);
                run = chain::<T, O>(run, x[k]);
                seen |= chain_poisons::<T, O>(x[k]);
            } else {
                run = chain::<T, O>(run, x[k]);
                seen |= chain_poisons::<T, O>(x[k]);
                out[k] = chain_end::<T, O>(run, seen);
            }
        }
        // SAFETY: this thread's own chunk; other threads read it only after the barrier.
        unsafe { smem.write_v4(at, pack::<T, W>(out)) };
    }
}

/// Phase 6: warp 0 looks back and publishes the tile's inclusive prefix; every thread gets the
/// tile's exclusive prefix (through control slot `PREFIX_SLOT`, after a barrier).
///
/// # Safety
/// After [`publish_aggregate`]; `status` holds `gridDim.x` words; called by every thread.
#[inline(always)]
unsafe fn tile_prefix<T: Element, O: Operator<T>, W: Word, const SLEEP_NS: u32>(
    t: TileThread,
    smem: Shared<W>,
    status: Status<T>,
    epoch: u32,
    aggregate: T,
) -> T {
    if t.warp == 0 {
        let prefix = if t.tile == 0 {
            O::IDENTITY
        } else {
            // SAFETY: the whole warp calls it, with the same tile and epoch.
            let prefix = unsafe { look_back::<T, O, SLEEP_NS>(status, t.tile, epoch, t.lane) };
            if t.lane == 0 {
                // SAFETY: as above; this tile's aggregate went out first.
                unsafe { status.publish(t.tile, epoch, FLAG_PREFIX, O::combine(prefix, aggregate)) };
            }
            prefix
        };
        if t.lane == 0 {
            // SAFETY: read only after the barrier below.
            unsafe { write_slot(smem, t.ctrl, PREFIX_SLOT, prefix) };
        }
    }
    sync_threads();
    // SAFETY: written before the barrier, never written again.
    unsafe {
        // (A 32-bit prefix read here rather than through `read_slot` keeps `lookback`'s PTX
        // as it was before the kernel became generic: `scripts/ptx_diff.py`, #38.)
        if words::<T>() == 1 {
            T::from_low_bits(smem.read(t.ctrl + PREFIX_SLOT).to_word())
        } else {
            read_slot(smem, t.ctrl, PREFIX_SLOT)
        }
    }
}

/// Phases 3–6 on a loaded tile, in order (reduce, publish the aggregate, scan in place, look
/// back): every thread's tile-local scan is in shared memory, and the tile's exclusive prefix
/// is returned. The bulk-copy scans (`lookback_bulk`, `lookback_persistent`) run the same.
///
/// # Safety
/// After the load and its barrier; by every thread of the block; as for the four phases.
#[inline(always)]
pub(super) unsafe fn scan_loaded_tile<
    T: Element,
    O: Operator<T>,
    W: Word,
    const THREADS: usize,
    const ROWS: usize,
    const SLEEP_NS: u32,
>(
    t: TileThread,
    smem: Shared<W>,
    status: Status<T>,
    epoch: u32,
    exclusive: u32,
) -> T {
    // SAFETY: the caller's guarantees, in the phases' order, by every thread.
    unsafe {
        let (sum, incl) = reduce_tile::<T, O, W, ROWS>(t, smem);
        let (warp_offset, aggregate) = publish_aggregate::<T, O, W, THREADS>(t, smem, status, epoch);
        let before = warp_exclusive::<T, O>(incl, sum, t.lane);
        scan_in_place::<T, O, W, ROWS>(t, smem, O::combine(warp_offset, before), exclusive);
        tile_prefix::<T, O, W, SLEEP_NS>(t, smem, status, epoch, aggregate)
    }
}

/// The body of every look-back scan of one tile per block (`lookback`, its tuning shapes and
/// ablations, `lookback__{type}_{op}`): tile `blockIdx.x` of `THREADS * 4 * ROWS` words, in the
/// phases of [`lookback`]'s docs: 1, 2 and 7 here, 3–6 one function each.
///
/// # Safety
/// As for [`lookback`]; `smem` is the block's shared array: the tile's words, then the control
/// words (36, or 68 for a 64-bit `T`).
#[inline(always)]
unsafe fn scan_tile<
    T: Element,
    O: Operator<T>,
    W: Word,
    const THREADS: usize,
    const ROWS: usize,
    const HINTS: u32,
    const SLEEP_NS: u32,
>(
    input: Global<T>,
    output: GlobalMut<T>,
    status: Status<T>,
    n: u32,
    epoch: u32,
    exclusive: u32,
    smem: Shared<W>,
) {
    const {
        assert!(THREADS.is_multiple_of(WARP_SIZE as usize) && THREADS <= 1024, "whole warps, at most 1024 threads");
        assert!(blocked_is_conflict_free(4 * ROWS), "an odd number of 16-byte chunks per thread");
    };
    if block_dim_x() as usize != THREADS {
        trap("lookback launched with a block size other than the one it was compiled for");
    }
    let (tile_words, per) = (THREADS * 4 * ROWS, words::<T>());
    let tile_len = tile_words / per;
    let (tid, lane) = (thread_idx_x() as usize, thread_idx_x() % WARP_SIZE);
    let (warp, n) = (tid / WARP_SIZE as usize, n as usize);
    // 1. The tile: blockIdx.x (see "Tile order" in `lookback`'s docs).
    let tile = block_idx_x() as usize;
    let (base, full) = (tile * tile_len, (tile + 1) * tile_len <= n);
    let t = TileThread { tid, lane, warp, tile, ctrl: tile_words };
    // The buffers as 32-bit words, for the 16-byte copies and stores.
    let (src, dst) = (input.cast::<W>(), output.cast::<W>());
    // 2. Load: striped 16-byte chunks, global → shared without registers (cp.async);
    //    the partial last tile through registers, with the identity past n.
    let policy = if HINTS & HINT_EVICT_FIRST != 0 { l2_evict_first_policy() } else { 0 };
    for r in 0..ROWS {
        let c = striped_chunk(tid, r, THREADS);
        if full {
            let from = src.wrapping_offset(base * per + c);
            // SAFETY: the chunk's elements are < n; 16-byte aligned (aligned buffers, c a multiple
            // of 4 words); this thread's chunk, untouched until the wait.
            unsafe {
                if HINTS & HINT_EVICT_FIRST != 0 {
                    smem.copy_async_v4_evict_first(c, from, policy)
                } else if HINTS & HINT_PREFETCH_256 != 0 {
                    smem.copy_async_v4_prefetch256(c, from)
                } else {
                    smem.copy_async_v4(c, from)
                }
            };
        } else {
            // SAFETY: input holds n elements; this thread's chunk.
            unsafe { smem.write_v4(c, load_guarded::<T, O, W>(input, base + c / per, n)) };
        }
    }
    copy_async_commit();
    copy_async_wait::<0>();
    sync_threads();
    // 3.–6. SAFETY: the caller's guarantees, in the phases' order, by every thread.
    let prefix = unsafe { scan_loaded_tile::<T, O, W, THREADS, ROWS, SLEEP_NS>(t, smem, status, epoch, exclusive) };
    // 7. Store: striped chunks plus the tile's prefix.
    for r in 0..ROWS {
        let c = striped_chunk(tid, r, THREADS);
        // SAFETY: written before the barrier.
        let v = unpack::<T, W>(unsafe { smem.read_v4(c) });
        let out = pack::<T, W>(v.map(|x| O::combine(x, prefix)));
        if full && HINTS & HINT_STREAM_STORE != 0 {
            // SAFETY: the chunk's elements are < n; 16-byte aligned; this thread's 16 bytes.
            unsafe { dst.store_v4_streaming(base * per + c, out) };
        } else if full {
            // SAFETY: the chunk's elements are < n; 16-byte aligned; this thread's 16 bytes.
            unsafe { dst.store_v4(base * per + c, out) };
        } else {
            // SAFETY: output holds n elements; these elements are this thread's.
            unsafe { store_guarded::<T, W>(output, base + c / per, n, out) };
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
                    scan_tile::<i32, Sum, i32, $threads, { $items / 4 }, LOOKBACK_HINTS, LOOKBACK_SLEEP_NS>(input, output, Status::packed(status), n, epoch, exclusive, smem)
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
        scan_tile::<i32, Sum, i32, { LOOKBACK_THREADS as usize }, { LOOKBACK_ITEMS as usize / 4 }, HINTS, SLEEP_NS>(
            input,
            output,
            Status::packed(status),
            n,
            epoch,
            exclusive,
            smem,
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
        let prefix = unsafe { look_back::<i32, Sum, LOOKBACK_SLEEP_NS>(Status::packed(status), tile as usize, epoch, lane) };
        if lane == 0 {
            // SAFETY: out is valid.
            unsafe { out.write(0, prefix) };
        }
    }
}

#[cfg(not(target_arch = "nvptx64"))]
kernel! {
    /// Host-only test hook (not in the PTX): `lookback_probe` through `look_back_windows`
    /// reading `windows` (2 or 4) windows per round trip, the look-back of the
    /// `lookback_warpspec_…_windows{n}` experiments.
    ///
    /// # Safety
    /// As for `lookback_probe`; `windows` is 2 or 4 (traps otherwise).
    pub unsafe fn lookback_windows_probe(status: GlobalMut<u64>, out: GlobalMut<i32>, tile: u32, epoch: u32, windows: u32) {
        let lane = thread_idx_x() % WARP_SIZE;
        let (st, t) = (Status::packed(status), tile as usize);
        // SAFETY: forwarded from the caller; the whole warp calls it.
        let prefix = unsafe {
            match windows {
                2 => look_back_windows::<i32, Sum, LOOKBACK_SLEEP_NS, 2>(st, t, epoch, lane),
                4 => look_back_windows::<i32, Sum, LOOKBACK_SLEEP_NS, 4>(st, t, epoch, lane),
                _ => trap("lookback_windows_probe: windows must be 2 or 4"),
            }
        };
        if lane == 0 {
            // SAFETY: out is valid.
            unsafe { out.write(0, prefix) };
        }
    }
}

/// Shared words after the tile in `lookback__{type}_{op}`: one slot per warp (at most 32) and
/// the tile's exclusive prefix, two words each (room for 64-bit values), padded to a 16-byte
/// multiple.
const GENERIC_CTRL_WORDS: usize = 68;

/// Static shared memory of every `lookback__{type}_{op}`: `lookback`'s tile (the same 36 KiB
/// whatever the type) plus 68 control words.
pub const LOOKBACK_GENERIC_SHARED_BYTES: u32 = ((LOOKBACK_TILE as usize + GENERIC_CTRL_WORDS) * 4) as u32;

/// Elements per thread of the look-back scan of `T`: `lookback`'s 36 words, so 36 elements of
/// 32 bits or 18 of 64 bits.
pub const fn lookback_items<T: Element>() -> u32 {
    LOOKBACK_ITEMS / words::<T>() as u32
}

/// Elements per tile (per block) of the look-back scan of `T` (9216 or 4608).
pub const fn lookback_tile<T: Element>() -> u32 {
    LOOKBACK_THREADS * lookback_items::<T>()
}

typed_kernel!(lookback = lookback_generic(
    input: Global<T>,
    output: GlobalMut<T>,
    status: GlobalMut<u64>,
    values: GlobalMut<T>,
    n: u32,
    epoch: u32,
    exclusive: u32,
));

/// [`lookback`] for any element type and operator: the same body (`scan_tile::<T, O, …>`),
/// instantiated by `typed_kernel!` as `lookback__{type}_{op}` for every type × operator but
/// `i32` × sum, which is [`lookback`] itself.
///
/// # Concept
/// **A scan needs of its operator what a reduction needs: an identity and an associative
/// combine.** Replace `0` by `O::IDENTITY` (for the padding past `n` and the pseudo-prefix
/// before tile 0) and `+` by `O::combine`, and the decoupled look-back scans anything. Two
/// things do not generalise for free. **Subtraction:** `lookback` gets a lane's exclusive
/// scan as its inclusive scan minus its own value; min and max have no inverse and float sums
/// round, so for them the warp shifts its inclusive scan one lane up instead (one more
/// shuffle; `Operator::exclusive_from` says which). **The status word:** a 32-bit value and
/// its flag fit one 64-bit atomic, a 64-bit value does not.
///
/// # Previous problem → fix
/// `lookback` scans `i32` sums only, and its status word (`epoch:30 | flag:2 | value:32`)
/// has no room for a 64-bit value. Here 32-bit types keep that packed word; 64-bit types
/// publish through a flag word plus two value slots per tile, ordered by release/acquire
/// (below).
///
/// # Execution
/// `lookback`'s phases 1–7 with `⊕` for `+`: block [`LOOKBACK_THREADS`] (256), nine 16-byte
/// chunks per thread, so 36 elements of 32 bits or 18 of 64 bits ([`lookback_items`]), a tile
/// of 9216 or 4608 elements (36 KiB either way) in shared memory as 32-bit words; a 64-bit
/// value crosses lanes as two shuffles and takes two words per control slot. The copies of
/// phase 2 carry `lookback`'s L2 evict-first policy, the stores of phase 7 are streaming, and
/// a waiting lane sleeps [`LOOKBACK_SLEEP_NS`] between polls: `lookback`'s choices
/// ([`LOOKBACK_HINTS`]).
///
/// # Status words and memory ordering
/// The layout is chosen in one place, `packed::<T>()` (the size of `T`), and read and
/// written only by `Status`'s methods.
///
/// * **32-bit types (packed).** One 64-bit word per tile, `epoch:30 | flag:2 | bits:32`
///   (`index::pack_status`, the value's bits as `u32`), written with one
///   `st.relaxed.gpu.b64`, read with one `ld.relaxed.gpu.b64`: flag and value travel in one
///   single-copy-atomic access, so a reader never sees a flag with a stale value, and relaxed
///   GPU-scope atomics suffice — as in `lookback`. `values` is not used.
/// * **64-bit types (split).** A 64-bit value and a flag do not fit one 64-bit atomic (and
///   PTX has no 128-bit atomic load on sm_70/sm_80). Each tile has a flag word in `status`
///   (`pack_status(epoch, flag, 0)`) and two value slots in `values`
///   (`index::value_slot`: `2·tile` its aggregate, `2·tile + 1` its inclusive prefix).
///   **Writer**: stores the value into the slot of its flag (`st.relaxed.gpu.b64`), then the
///   flag with `st.release.gpu.b64`: release orders the value store before the flag store for
///   every observer. **Reader**: loads the flag with `ld.acquire.gpu.b64`; once it is this
///   launch's `A` or `P`, it loads that flag's slot with `ld.relaxed.gpu.b64` — a GPU-scope
///   atomic load, never a plain (possibly L1-cached, non-coherent) load — which, being after
///   the acquire that observed the release, returns the value stored before the flag (PTX
///   memory model: release/acquire patterns establish *base causality order*). Two slots per
///   tile because a tile publishes twice: with one slot, a reader that saw `A` could load
///   the slot after the writer overwrote it with the inclusive prefix and add a prefix where
///   an aggregate belongs; with two, no slot a reader has seen flagged is written again
///   during the launch. The flag word goes `X → A → P` (tile 0: `X → P`), stores by one
///   thread to one location, ordered by coherence. Values from an earlier launch sit in the
///   slots, but are only read after a flag of this launch's epoch, whose release came after
///   this launch's value store.
///
/// The epochs work as in `lookback` ("Status reset"): a word of another launch reads as
/// invalid, so the status array is zeroed only when allocated; the value slots are never
/// reset.
///
/// # Launch
/// Grid `ceil(n / lookback_tile::<T>())`, block exactly [`LOOKBACK_THREADS`] (traps
/// otherwise), [`LOOKBACK_GENERIC_SHARED_BYTES`] of static shared memory (the tile and 68
/// control words).
///
/// # Preconditions
/// `input` and `output` hold `n ≥ 1` elements each, are 16-byte aligned and do not overlap;
/// `status` holds `gridDim.x` words, zeroed or written by earlier launches with other
/// epochs; `values` holds `2 · gridDim.x` elements (64-bit types; unused, but valid, for
/// 32-bit ones); `epoch` is in `1..=index::MAX_EPOCH` and differs from the epoch of every
/// earlier launch on this status array since it was zeroed; `exclusive` is 0 (inclusive) or
/// 1 (exclusive: `output[0]` is the identity).
///
/// # Safety
/// The pointers are valid device memory of those lengths. Every thread reaches every
/// barrier; the look-back spins only on tiles with smaller ids (`lookback`'s "Tile order"),
/// through the device layer's atomic loads.
///
/// # Measured
/// NVIDIA H100 80GB HBM3, inclusive scans, median of 10 timed runs, every output element of every run checked (`docs/measurements/2026-11-26-h100/typed_scans.csv`, commit 5b923bf, one run per cell); × CUB = CUB's `DeviceScan` time / ours on the same values (the i32 sum is `lookback`'s):
///
/// | type | op | 2^24: µs, × CUB | 2^28: µs, × CUB |
/// |---|---|---|---|
/// | i32 | min | 48.90, 1.44 | 771.22, 1.32 |
/// | i32 | max | 49.68, 1.43 | 772.51, 1.32 |
/// | u32 | sum | 50.21, 1.25 | 772.46, 1.13 |
/// | u32 | min | 49.97, 1.41 | 773.60, 1.31 |
/// | u32 | max | 50.22, 1.38 | 770.61, 1.32 |
/// | i64 | sum | 100.03, 1.07 | 1619.02, 0.97 |
/// | i64 | min | 99.44, 1.25 | 1617.22, 1.15 |
/// | i64 | max | 100.85, 1.23 | 1617.97, 1.15 |
/// | u64 | sum | 99.02, 1.08 | 1617.15, 0.97 |
/// | u64 | min | 100.45, 1.22 | 1618.13, 1.15 |
/// | u64 | max | 100.51, 1.23 | 1613.50, 1.15 |
/// | f32 | sum | 49.89, 1.25 | 771.26, 1.13 |
/// | f32 | min | 49.23, 1.56 | 770.72, 1.41 |
/// | f32 | max | 49.63, 1.54 | 771.50, 1.41 |
/// | f64 | sum | 100.54, 1.10 | 1613.34, 1.02 |
/// | f64 | min | 102.64, 1.34 | 1631.98, 1.24 |
/// | f64 | max | 102.69, 1.34 | 1629.54, 1.25 |
///
/// **The f32 and f64 min and max rows above are of the kernels before session 57**, which made every float min/max step PTX `min`/`max` beside a NaN select (three instructions, no branch; the 36 entries' PTX: `docs/measurements/2026-12-01-ptx-session57/`). The H100 was not lent since; the same rows of the new kernels, NVIDIA H200 (`docs/measurements/2026-12-01-h200/session57/r57d/measurements/typed_scans.csv`, commit d7dd39d; the f64 rows at 2^28 from `docs/measurements/2026-12-02-h200/session58/measurements/typed_scans.csv`, commit 9246fd6, the same PTX; one round, CUB in every row, every row PASS; the sums, unchanged, beside them):
///
/// | type | op | 2^24: µs, × CUB | 2^28: µs, × CUB |
/// |---|---|---|---|
/// | f32 | sum | 41.22, 1.242 | 599.23, 1.154 |
/// | f32 | min | 41.81, 1.658 | 600.61, 1.603 |
/// | f32 | max | 40.45, 1.698 | 602.80, 1.596 |
/// | f64 | sum | 81.54, 1.110 | — |
/// | f64 | min | 84.37, 1.519 | 1311.02, 1.450 |
/// | f64 | max | 84.43, 1.525 | 1311.73, 1.450 |
///
/// **What the change cost the scans** (H200, 2^28, the kernels before session 57, 13dc665, against 9246fd6, interleaved rounds, the % a round's pair; `docs/measurements/2026-12-02-h200/session58/`: `r58c/scans.csv`, `r58d/scans.csv`, `r58e/scans.csv`; every row PASS): f32 min inclusive 602.0 – 603.7 µs against 595.9 – 598.3 (3 rounds: +0.6 – +1.2 %); f32 max inclusive 602.1 – 606.9 µs against 592.9 – 597.5 (3 rounds: +1.0 – +1.7 %); f32 min exclusive 601.8 – 604.6 µs against 600.2 – 604.0 (3 rounds: -0.3 – +0.7 %); f32 max exclusive 597.8 – 603.2 µs against 602.0 – 605.1 (3 rounds: -1.0 – +0.0 %); f64 min inclusive 1311.0 µs against 1310.7 (1 round: +0.0 %); f64 max inclusive 1311.7 µs against 1311.5 (1 round: +0.0 %); f32 sum inclusive 597.4 µs against 596.7 (1 round: +0.1 %). So the f32 min inclusive scan is 0.6–1.2 % slower than before in every round (its ranges apart; 1.59× CUB); the f32 max inclusive scan is 1.0–1.7 % slower than before in every round (its ranges apart; 1.60× CUB); the other rows tie (their ranges overlap; the f32 sum, unchanged code, is the control).
///
/// **The NaN flag of session 61** (`lookback`'s `nan_flag`: the f32 minima and maxima run PTX `min`/`max` alone on the thread's chain and a "NaN seen" flag beside it; H200, main before it, b868866, against the flag for both widths, e1e7b9a, whose f32 entries main now runs instruction for instruction, so the f32 min and max rows of the table above are of the kernels before it; interleaved rounds, the % a round's pair, every row PASS; `docs/measurements/2026-12-02-h200/session61/`) at 2^28 (`r61a/scans.csv`, `r61b/scans.csv`, `r61c/scans.csv`): f32 min inclusive 583.8 – 586.4 µs against 594.4 – 597.5 (3 rounds: -1.9 – -1.7 %); f32 max inclusive 587.9 – 588.0 µs against 592.9 – 594.0 (3 rounds: -1.0 – -0.8 %); f32 min exclusive 583.7 – 585.6 µs against 591.1 – 593.7 (3 rounds: -1.7 – -1.1 %); f32 max exclusive 580.1 – 585.5 µs against 590.8 – 593.6 (3 rounds: -1.8 – -1.3 %); f64 min inclusive 1301.3 – 1301.5 µs against 1292.3 – 1298.4 (2 rounds: +0.2 – +0.7 %); f64 max inclusive 1298.4 – 1300.2 µs against 1292.8 – 1294.3 (2 rounds: +0.4 – +0.5 %); f32 sum inclusive 589.0 – 591.4 µs against 590.2 – 593.1 (2 rounds: -0.2 – +0.1 %); f64 min exclusive 1300.6 – 1303.1 µs against 1294.7 – 1297.5 (2 rounds: +0.4 – +0.5 %); f64 max exclusive 1300.3 – 1300.6 µs against 1295.8 – 1298.7 (2 rounds: +0.1 – +0.3 %); f32 sum exclusive 587.3 – 589.2 µs against 590.1 – 591.0 (2 rounds: -0.5 – -0.3 %). Apart: f32 min inclusive faster in every round (-1.9 to -1.7 %; 1.62× CUB); f32 max inclusive faster in every round (-1.0 to -0.8 %; 1.61× CUB); f32 min exclusive faster in every round (-1.7 to -1.1 %); f32 max exclusive faster in every round (-1.8 to -1.3 %); f64 min inclusive slower in every round (+0.2 to +0.7 %; 1.45× CUB); f64 max inclusive slower in every round (+0.4 to +0.5 %; 1.45× CUB); f64 min exclusive slower in every round (+0.4 to +0.5 %); f64 max exclusive slower in every round (+0.1 to +0.3 %) (and the control's f32 sum exclusive -0.5 to -0.3 %: how far apart a pair of one code can lie); the other rows overlap; at 2^24 (`r61d/scans.csv`, `r61e/scans.csv`): f32 min inclusive 39.4 – 40.9 µs against 40.7 – 41.5 (4 rounds: -4.2 – +0.6 %); f32 max inclusive 40.1 – 41.1 µs against 40.3 – 42.0 (4 rounds: -2.7 – +0.8 %); f32 min exclusive 40.4 – 40.9 µs against 40.4 – 41.2 (4 rounds: -1.6 – +0.0 %); f32 max exclusive 39.4 – 40.8 µs against 40.5 – 41.2 (4 rounds: -2.6 – -0.6 %); f32 sum inclusive 40.4 – 41.1 µs against 40.5 – 41.7 (4 rounds: -1.8 – +1.5 %); f32 sum exclusive 40.1 – 41.3 µs against 40.0 – 41.0 (4 rounds: -1.4 – +1.3 %). Every row overlaps: ties. The f64 minima and maxima keep the step with its NaN select (their flag was slower); the f32 sum, unchanged code, is the control.
#[inline(always)]
pub unsafe fn lookback_generic<T: Element, O: Operator<T>>(
    input: Global<T>,
    output: GlobalMut<T>,
    status: GlobalMut<u64>,
    values: GlobalMut<T>,
    n: u32,
    epoch: u32,
    exclusive: u32,
) {
    let smem = static_shared!(LOOKBACK_GENERIC_SHARED: [u32; LOOKBACK_TILE as usize + GENERIC_CTRL_WORDS]);
    let status = Status::of(status, values);
    // SAFETY: forwarded from the caller; smem holds the tile and 68 control words.
    unsafe {
        scan_tile::<
            T,
            O,
            u32,
            { LOOKBACK_THREADS as usize },
            { LOOKBACK_ITEMS as usize / 4 },
            LOOKBACK_HINTS,
            LOOKBACK_SLEEP_NS,
        >(input, output, status, n, epoch, exclusive, smem)
    }
}

#[cfg(not(target_arch = "nvptx64"))]
kernel! {
    /// Host-only test hook (not in the PTX): one warp runs the look-back of `tile` for `u64`
    /// sums (the split layout) over status words and value slots the test prepared; lane 0
    /// writes the prefix to `*out`. Drives the multi-window path.
    ///
    /// # Safety
    /// `status` holds `tile` words, none invalid for `epoch` forever; `values` `2·tile`
    /// slots; `out` one valid `u64`; launched with one block of 32 threads.
    pub unsafe fn lookback_split_probe(status: GlobalMut<u64>, values: GlobalMut<u64>, out: GlobalMut<u64>, tile: u32, epoch: u32) {
        let lane = thread_idx_x() % WARP_SIZE;
        let status = Status::of(status, values);
        // SAFETY: forwarded from the caller; the whole warp calls it.
        let prefix = unsafe { look_back::<u64, Sum, LOOKBACK_SLEEP_NS>(status, tile as usize, epoch, lane) };
        if lane == 0 {
            // SAFETY: out is valid.
            unsafe { out.write(0, prefix) };
        }
    }
}
