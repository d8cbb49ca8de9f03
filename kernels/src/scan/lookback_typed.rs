//! The decoupled look-back scan of [`super::lookback`] for every element type and operator:
//! [`lookback_generic`], instantiated by `typed_kernel!(all …)` as `lookback__{type}_{op}`
//! (all 18 pairs, `lookback__i32_sum` included: the classic `lookback` keeps its own
//! arguments and tuning shapes).

use super::index::{
    FLAG_AGGREGATE, FLAG_INVALID, FLAG_PREFIX, blocked_chunk, blocked_is_conflict_free, pack_status, status_flag,
    status_value, striped_chunk, value_slot,
};
use crate::device::atomic::{load_acquire_u64, load_relaxed_u64, store_relaxed_u64, store_release_u64};
use crate::device::global::l2_evict_first_policy;
use crate::device::global::{Global, GlobalMut};
use crate::device::shared::{Shared, copy_async_commit, copy_async_wait};
use crate::device::thread::{block_dim_x, block_idx_x, sync_threads, thread_idx_x};
use crate::device::warp::{all_sync, ballot_sync, shfl_up_sync, shfl_xor_sync};
use crate::device::{FULL_MASK, WARP_SIZE, trap};
use crate::types::{Element, Operator, to_128};
use crate::{static_shared, typed_kernel};

/// Threads per block of every `lookback__{type}_{op}`.
pub const LOOKBACK_TYPED_THREADS: u32 = 256;
/// 16-byte chunks per thread: 36 elements of 32 bits or 18 of 64 bits, the bytes per thread of
/// `lookback`. Odd, so that the blocked shared reads are free of bank conflicts.
pub const LOOKBACK_TYPED_CHUNKS: u32 = 9;
/// 32-bit words of the tile in shared memory (`threads × chunks × 4`: 36 KiB).
const TILE_WORDS: usize = (LOOKBACK_TYPED_THREADS * LOOKBACK_TYPED_CHUNKS * 4) as usize;
/// Shared words after the tile: one `T` (two words) per warp (at most 32) and the tile's
/// exclusive prefix, padded to a 16-byte multiple.
const CTRL_WORDS: usize = 68;
/// The prefix's slot among the control slots.
const PREFIX_SLOT: usize = 32;
/// Static shared memory of every `lookback__{type}_{op}`: the tile plus 68 control words.
pub const LOOKBACK_TYPED_SHARED_BYTES: u32 = ((TILE_WORDS + CTRL_WORDS) * 4) as u32;

/// Elements per thread of `lookback__{type}_…` for element type `T` (36 or 18).
pub const fn lookback_typed_items<T: Element>() -> u32 {
    LOOKBACK_TYPED_CHUNKS * T::PER_128 as u32
}

/// Elements per tile (per block) of `lookback__{type}_…` for `T` (9216 or 4608).
pub const fn lookback_typed_tile<T: Element>() -> u32 {
    LOOKBACK_TYPED_THREADS * lookback_typed_items::<T>()
}

/// Is `T` published in the **packed** layout (one 64-bit word `epoch:30 | flag:2 | bits:32`,
/// 32-bit types) rather than the **split** one (flag word + value slots, 64-bit types)? The
/// one place the layout is chosen; see "Status words and memory ordering" in
/// [`lookback_generic`].
#[inline(always)]
const fn packed<T: Element>() -> bool {
    core::mem::size_of::<T>() == 4
}

/// Publishes tile `tile`'s `value` with `flag` (aggregate or inclusive prefix).
///
/// # Safety
/// `status` holds a word and `values` two slots for `tile`; one thread per tile calls it, the
/// aggregate before the prefix.
#[inline(always)]
unsafe fn publish<T: Element>(
    status: GlobalMut<u64>,
    values: GlobalMut<T>,
    tile: usize,
    epoch: u32,
    flag: u32,
    value: T,
) {
    if packed::<T>() {
        let word = pack_status(epoch, flag, value.to_halves()[0] as i32);
        // SAFETY: tile < the status array's length; one atomic word carries flag and value.
        unsafe { store_relaxed_u64(status.offset(tile), word) };
    } else {
        // SAFETY: the value's own slot (never written again during the launch), then the
        // flag with release semantics: a reader that acquires the flag sees the value.
        unsafe {
            T::store_relaxed(values.offset(value_slot(tile, flag)), value);
            store_release_u64(status.offset(tile), pack_status(epoch, flag, 0));
        }
    }
}

/// Tile `pred`'s `(flag, value)` as this launch (`epoch`) sees it now; a `pred` before tile 0
/// reads as an inclusive prefix holding the identity. An invalid flag comes with the identity.
///
/// # Safety
/// `pred` is below the status array's length; `values` holds two slots per tile.
#[inline(always)]
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
unsafe fn read_status<T: Element, O: Operator<T>>(
    status: Global<u64>,
    values: Global<T>,
    pred: isize,
    epoch: u32,
) -> (u32, T) {
    if pred < 0 {
        return (FLAG_PREFIX, O::IDENTITY);
    }
    let p = pred as usize;
    if packed::<T>() {
        // SAFETY: p < the status array's length.
        let word = unsafe { load_relaxed_u64(status.offset(p)) };
        return (status_flag(word, epoch), T::from_halves([status_value(word) as u32, 0]));
    }
    // SAFETY: p < the status array's length; acquire, then the slot the flag names (a
    // GPU-scope atomic load, never a cached one).
    let flag = status_flag(unsafe { load_acquire_u64(status.offset(p)) }, epoch);
    if flag == FLAG_INVALID {
        return (flag, O::IDENTITY);
    }
    // SAFETY: the slot exists; its value was stored before the release the acquire saw.
    let bits = unsafe { load_relaxed_u64(values.offset(value_slot(p, flag)).cast::<u64>()) };
    (flag, T::from_halves([bits as u32, (bits >> 32) as u32]))
}

/// `⊕` of `x` over the 32 lanes of a full warp, returned to every lane (butterfly, 5 levels).
#[inline(always)]
fn warp_all_reduce<T: Element, O: Operator<T>>(mut x: T) -> T {
    let mut m = 16;
    while m > 0 {
        x = O::combine(x, shfl_xor_sync(FULL_MASK, x, m));
        m /= 2;
    }
    x
}

/// Inclusive `⊕`-scan of `x` over a full warp (Hillis–Steele, 5 `shfl.up` steps), and the
/// exclusive one (the inclusive value of the lane below; the identity in lane 0).
#[inline(always)]
fn warp_scan<T: Element, O: Operator<T>>(mut x: T, lane: u32) -> (T, T) {
    let mut d = 1;
    while d < WARP_SIZE {
        let y = shfl_up_sync(FULL_MASK, x, d);
        if lane >= d {
            x = O::combine(y, x);
        }
        d *= 2;
    }
    let below = shfl_up_sync(FULL_MASK, x, 1);
    (x, if lane == 0 { O::IDENTITY } else { below })
}

/// The look-back of tile `tile > 0` by one full warp, as `lookback`'s `look_back`: 32
/// predecessors per window, spin until none is invalid, stop at the nearest inclusive prefix,
/// else combine the 32 aggregates and slide the window back. Every lane returns the result.
///
/// It spins: `lookback`'s 256 ns sleep between polls was tried here (H100, 2^28,
/// `docs/measurements/2026-11-23-h100/typed_sleep_ab.csv`) and made no consistent difference
/// (u32 sum 0.2–0.8% faster, f64 max and f32 sum 0.4% slower, i64 min level).
///
/// # Safety
/// `status` holds at least `tile` words and `values` two slots per tile; all 32 lanes of one
/// warp call it with the same `tile` and `epoch`.
#[inline(always)]
unsafe fn look_back<T: Element, O: Operator<T>>(
    status: Global<u64>,
    values: Global<T>,
    tile: usize,
    epoch: u32,
    lane: u32,
) -> T {
    let mut exclusive = O::IDENTITY;
    let mut end = tile;
    loop {
        let pred = end as isize - WARP_SIZE as isize + lane as isize;
        // SAFETY: pred < end <= tile <= the arrays' lengths.
        let mut seen = unsafe { read_status::<T, O>(status, values, pred, epoch) };
        while !all_sync(FULL_MASK, seen.0 != FLAG_INVALID) {
            if seen.0 == FLAG_INVALID {
                // SAFETY: as above.
                seen = unsafe { read_status::<T, O>(status, values, pred, epoch) };
            }
        }
        let (flag, value) = seen;
        let prefixes = ballot_sync(FULL_MASK, flag == FLAG_PREFIX);
        if prefixes != 0 {
            let nearest = 31 - prefixes.leading_zeros();
            let mine = if lane >= nearest { value } else { O::IDENTITY };
            return O::combine(warp_all_reduce::<T, O>(mine), exclusive);
        }
        exclusive = O::combine(warp_all_reduce::<T, O>(value), exclusive);
        end -= WARP_SIZE as usize;
    }
}

/// `T` in control slot `slot` (two words per slot).
///
/// # Safety
/// `slot <= PREFIX_SLOT`; no concurrent write (a barrier separates it from this read).
#[inline(always)]
unsafe fn read_slot<T: Element>(smem: Shared<u32>, slot: usize) -> T {
    let at = TILE_WORDS + 2 * slot;
    // SAFETY: in bounds (TILE_WORDS + 66 < TILE_WORDS + CTRL_WORDS); the caller's promise.
    unsafe { T::from_halves([smem.read(at), smem.read(at + 1)]) }
}

/// Writes `value` to control slot `slot`.
///
/// # Safety
/// As for [`read_slot`], with no concurrent access.
#[inline(always)]
unsafe fn write_slot<T: Element>(smem: Shared<u32>, slot: usize, value: T) {
    let at = TILE_WORDS + 2 * slot;
    let h = value.to_halves();
    // SAFETY: as for read_slot.
    unsafe {
        smem.write(at, h[0]);
        smem.write(at + 1, h[1]);
    }
}

/// `f` applied to each of the [`PER_128`](Element::PER_128) elements of the 16 bytes `w`, in
/// order, and the results as 16 bytes. Written out (no loop over a run-time index into an
/// array), so that the elements stay in registers.
#[inline(always)]
fn map_chunk<T: Element>(w: [u32; 4], mut f: impl FnMut(T) -> T) -> [u32; 4] {
    let a = f(T::from_128(w, 0));
    let b = f(T::from_128(w, 1));
    if T::PER_128 == 4 {
        let c = f(T::from_128(w, 2));
        let d = f(T::from_128(w, 3));
        to_128([a, b, c, d])
    } else {
        to_128([a, b, a, b])
    }
}

/// The elements `p .. p + PER_128` where they exist (`< n`), the identity past the end, as
/// 16 bytes: a chunk of the last, partial tile.
///
/// # Safety
/// `input` holds `n` elements.
#[inline(always)]
unsafe fn load_chunk_guarded<T: Element, O: Operator<T>>(input: Global<T>, p: usize, n: usize) -> [u32; 4] {
    let at = |k: usize| {
        if k < T::PER_128 && p + k < n {
            // SAFETY: p + k < n.
            unsafe { input.read(p + k) }
        } else {
            O::IDENTITY
        }
    };
    to_128([at(0), at(1), at(2), at(3)])
}

/// Stores the elements of the 16-byte `chunk` at `p ..` that exist (`< n`).
///
/// # Safety
/// `output` holds `n` elements, and nobody else writes these elements concurrently.
#[inline(always)]
unsafe fn store_chunk_guarded<T: Element>(output: GlobalMut<T>, p: usize, n: usize, chunk: [u32; 4]) {
    let put = |k: usize| {
        if k < T::PER_128 && p + k < n {
            // SAFETY: p + k < n; this thread's element.
            unsafe { output.write(p + k, T::from_128(chunk, k)) };
        }
    };
    put(0);
    put(1);
    put(2);
    put(3);
}

/// Where a block is: its tile, the tile's first element and word, whether the tile is full.
#[derive(Clone, Copy)]
struct Place {
    tile: usize,
    /// First element of the tile.
    base: usize,
    /// `n`.
    n: usize,
    full: bool,
    tid: usize,
    lane: u32,
    warp: usize,
}

/// 32-bit words per element of `T` (1 or 2).
const fn words_per<T: Element>() -> usize {
    4 / T::PER_128
}

/// Phases 1–2: the tile, global → shared (striped 16-byte chunks; `cp.async` under an L2
/// evict-first policy for a full tile, as `lookback` does (`LOOKBACK_HINTS`); guarded loads
/// with the identity past `n` for the last one); then a barrier.
///
/// # Safety
/// `input` holds `n` elements, 16-byte aligned; every thread of the block calls it.
#[inline(always)]
unsafe fn load_tile<T: Element, O: Operator<T>>(input: Global<T>, at: Place, smem: Shared<u32>) {
    let policy = l2_evict_first_policy();
    for r in 0..LOOKBACK_TYPED_CHUNKS as usize {
        let c = striped_chunk(at.tid, r, LOOKBACK_TYPED_THREADS as usize);
        let first = at.base + c / words_per::<T>();
        if at.full {
            // SAFETY: the chunk's elements are < n; 16-byte aligned (aligned buffer, c a
            // multiple of 4 words); this thread's chunk, untouched until the wait.
            unsafe { smem.copy_async_v4_evict_first(c, input.offset(first).cast::<u32>(), policy) };
        } else {
            // SAFETY: input holds n elements; this thread's chunk.
            unsafe { smem.write_v4(c, load_chunk_guarded::<T, O>(input, first, at.n)) };
        }
    }
    copy_async_commit();
    copy_async_wait::<0>();
    sync_threads();
}

/// Phase 3: `⊕` of this thread's blocked elements.
///
/// # Safety
/// After [`load_tile`]'s barrier.
#[inline(always)]
unsafe fn thread_reduce<T: Element, O: Operator<T>>(tid: usize, smem: Shared<u32>) -> T {
    let mut acc = O::IDENTITY;
    for r in 0..LOOKBACK_TYPED_CHUNKS as usize {
        // SAFETY: in bounds and aligned; complete and visible after the wait and barrier.
        let w = unsafe { smem.read_v4(blocked_chunk(tid, r, 4 * LOOKBACK_TYPED_CHUNKS as usize)) };
        map_chunk::<T>(w, |x| {
            acc = O::combine(acc, x);
            x
        });
    }
    acc
}

/// Phase 5: rewrites this thread's blocked elements with their tile-local inclusive (or
/// exclusive) scans, starting from `run` (everything before the thread's first element).
///
/// # Safety
/// After phase 3's barrier; this thread's own chunks.
#[inline(always)]
unsafe fn scan_in_place<T: Element, O: Operator<T>>(tid: usize, mut run: T, exclusive: bool, smem: Shared<u32>) {
    for r in 0..LOOKBACK_TYPED_CHUNKS as usize {
        let at = blocked_chunk(tid, r, 4 * LOOKBACK_TYPED_CHUNKS as usize);
        // SAFETY: this thread's own chunk.
        let w = unsafe { smem.read_v4(at) };
        let out = map_chunk::<T>(w, |x| {
            let before = run;
            run = O::combine(run, x);
            if exclusive { before } else { run }
        });
        // SAFETY: this thread's own chunk; others read it only after the next barrier.
        unsafe { smem.write_v4(at, out) };
    }
}

/// Phase 7: every striped chunk ⊕ the tile's `prefix`, shared → global.
///
/// # Safety
/// After phase 6's barrier; `output` holds `n` elements, 16-byte aligned.
#[inline(always)]
unsafe fn store_tile<T: Element, O: Operator<T>>(output: GlobalMut<T>, at: Place, prefix: T, smem: Shared<u32>) {
    for r in 0..LOOKBACK_TYPED_CHUNKS as usize {
        let c = striped_chunk(at.tid, r, LOOKBACK_TYPED_THREADS as usize);
        let first = at.base + c / words_per::<T>();
        // SAFETY: written before the barrier.
        let v = map_chunk::<T>(unsafe { smem.read_v4(c) }, |x| O::combine(prefix, x));
        if at.full {
            // SAFETY: the chunk's elements are < n; 16-byte aligned global memory; this
            // thread's. Streaming store, as `lookback`'s (`LOOKBACK_HINTS`).
            unsafe { output.offset(first).cast::<u32>().store_v4_streaming(0, v) };
        } else {
            // SAFETY: output holds n elements; these elements are this thread's.
            unsafe { store_chunk_guarded(output, first, at.n, v) };
        }
    }
}

/// Phases 3–4: the thread's total, the warp scan, the warp totals through shared memory;
/// returns `(everything in the tile before this thread, the tile aggregate)`.
///
/// # Safety
/// After [`load_tile`]; every thread of the block calls it.
#[inline(always)]
unsafe fn tile_offsets<T: Element, O: Operator<T>>(at: Place, smem: Shared<u32>) -> (T, T) {
    // SAFETY: forwarded.
    let mine = unsafe { thread_reduce::<T, O>(at.tid, smem) };
    let (incl, excl) = warp_scan::<T, O>(mine, at.lane);
    if at.lane == WARP_SIZE - 1 {
        // SAFETY: warp < 32; each warp writes its own slot, read after the barrier.
        unsafe { write_slot(smem, at.warp, incl) };
    }
    sync_threads();
    let (mut warp_offset, mut aggregate) = (O::IDENTITY, O::IDENTITY);
    for w in 0..LOOKBACK_TYPED_THREADS as usize / WARP_SIZE as usize {
        // SAFETY: written before the barrier, not written again.
        let t = unsafe { read_slot::<T>(smem, w) };
        if w < at.warp {
            warp_offset = O::combine(warp_offset, t);
        }
        aggregate = O::combine(aggregate, t);
    }
    (O::combine(warp_offset, excl), aggregate)
}

/// Phase 6: warp 0 looks back and publishes the inclusive prefix; every thread returns the
/// tile's exclusive prefix (through shared memory, after a barrier).
///
/// # Safety
/// As for [`lookback_generic`]; every thread of the block calls it.
#[inline(always)]
unsafe fn tile_prefix<T: Element, O: Operator<T>>(
    status: GlobalMut<u64>,
    values: GlobalMut<T>,
    epoch: u32,
    aggregate: T,
    at: Place,
    smem: Shared<u32>,
) -> T {
    if at.warp == 0 {
        let prefix = if at.tile == 0 {
            O::IDENTITY
        } else {
            // SAFETY: the whole warp calls it, with the same tile and epoch.
            let prefix = unsafe { look_back::<T, O>(status.as_const(), values.as_const(), at.tile, epoch, at.lane) };
            if at.lane == 0 {
                // SAFETY: this tile's word and slots; its aggregate went out first.
                unsafe { publish(status, values, at.tile, epoch, FLAG_PREFIX, O::combine(prefix, aggregate)) };
            }
            prefix
        };
        if at.lane == 0 {
            // SAFETY: read only after the barrier below.
            unsafe { write_slot(smem, PREFIX_SLOT, prefix) };
        }
    }
    sync_threads();
    // SAFETY: written before the barrier, never written again.
    unsafe { read_slot(smem, PREFIX_SLOT) }
}

typed_kernel!(all lookback = lookback_generic(
    input: Global<T>,
    output: GlobalMut<T>,
    status: GlobalMut<u64>,
    values: GlobalMut<T>,
    n: u32,
    epoch: u32,
    exclusive: u32,
));

/// Single-pass inclusive or exclusive scan with decoupled look-back for any element type and
/// operator: [`lookback`](super::lookback)'s algorithm, generic over [`Element`] and
/// [`Operator`], instantiated by `typed_kernel!` as `lookback__{type}_{op}` for all 18 pairs.
///
/// # Concept
/// **A scan needs of its operator what a reduction needs: an identity and an associative
/// combine.** Replace `0` by `O::IDENTITY` (for the lanes of the warp scan, the padding past
/// `n`, the pseudo-prefix before tile 0) and `+` by `O::combine`, never subtract (min and max
/// have no inverse: the exclusive warp scan is the inclusive one shifted a lane up, not
/// `inclusive − x`), and the decoupled look-back scans anything. What does not generalise for
/// free is the **status word**: a 32-bit value and its flag fit one 64-bit atomic, a 64-bit
/// value does not.
///
/// # Previous problem → fix
/// `lookback` scans `i32` sums only, and its status word (`epoch:30 | flag:2 | value:32`)
/// has no room for a 64-bit value. Here 32-bit types keep that packed word; 64-bit types
/// publish through a flag word plus two value slots per tile, ordered by release/acquire
/// (below).
///
/// # Execution
/// Block [`LOOKBACK_TYPED_THREADS`] (256), [`LOOKBACK_TYPED_CHUNKS`] (9) 16-byte chunks per
/// thread: 36 elements of 32 bits or 18 of 64 bits, a tile of 9216 or 4608 elements (36 KiB
/// either way) in shared memory as 32-bit words.
/// 1. **Tile** `blockIdx.x`.
/// 2. **Load** (`load_tile`): `cp.async` 16-byte copies of the striped chunks, commit, wait,
///    barrier; the partial last tile through registers, the identity past `n`.
/// 3. **Reduce** (`thread_reduce`, `tile_offsets`): each thread `⊕`s its blocked elements;
///    an inclusive warp scan (`shfl.up`, 5 steps; 64-bit values as two shuffles) and its
///    shift by one lane give each lane its inclusive and exclusive values; lane 31 writes the
///    warp total to shared memory; barrier.
/// 4. Every thread `⊕`s the warp totals (the tile aggregate; its warp's offset); thread 0
///    publishes `(A, aggregate)` (tile 0: `(P, aggregate)`).
/// 5. **Scan in place** (`scan_in_place`): each thread rewrites its blocked elements with
///    their tile-local inclusive (or exclusive) results.
/// 6. **Look-back** (`tile_prefix`, warp 0): 32 predecessors per window, to the nearest
///    inclusive prefix; publish `(P, prefix ⊕ aggregate)`; the prefix to shared memory;
///    barrier.
/// 7. **Store** (`store_tile`): `prefix ⊕ x` for every striped element, one streaming
///    `st.global.cs.v4` per 16 bytes (guarded per element in the last tile). The copies of
///    phase 2 carry an L2 evict-first policy: the pair of hints `lookback` measured
///    (`LOOKBACK_HINTS`).
///
/// # Status words and memory ordering
/// The layout is chosen in one place, `packed::<T>()` (the size of `T`), and read and
/// written only by `publish` and `read_status`.
///
/// * **32-bit types (packed).** One 64-bit word per tile, `epoch:30 | flag:2 | bits:32`
///   (`index::pack_status`, the value's bits as `u32`), written with one
///   `st.relaxed.gpu.b64`, read with one `ld.relaxed.gpu.b64`: flag and value travel in one
///   single-copy-atomic access, so a reader never sees a flag with a stale value, and relaxed
///   GPU-scope atomics suffice — as in `lookback`.
/// * **64-bit types (split).** A 64-bit value and a flag do not fit one 64-bit atomic (and
///   PTX has no 128-bit atomic load on sm_70/sm_80). Each tile has a flag word in `status`
///   (`pack_status(epoch, flag, 0)`) and two value slots in `values`
///   (`index::value_slot`: `2·tile` its aggregate, `2·tile + 1` its inclusive prefix).
///   **Writer**: stores the value into the slot of its flag (`st.relaxed.gpu.b64`), then the
///   flag with `st.release.gpu.b64`: release orders the value store before the flag store for
///   every observer. **Reader**: loads the flag with `ld.acquire.gpu.b64`; if it is this
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
/// Grid `ceil(n / lookback_typed_tile::<T>())`, block exactly [`LOOKBACK_TYPED_THREADS`]
/// (traps otherwise), [`LOOKBACK_TYPED_SHARED_BYTES`] of static shared memory (the tile and
/// 68 control words).
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
/// NVIDIA H100 80GB HBM3, inclusive scans, median of 10 timed runs, every output element of every run checked (`docs/measurements/2026-11-25-h100/typed_scans.csv`, commit e032fa9, one run per cell); × CUB = CUB's `DeviceScan` time / ours on the same values (the i32 sum is `lookback`'s):
///
/// | type | op | 2^24: µs, × CUB |
/// |---|---|---|
/// | i32 | min | 49.46, 1.42 |
/// | i32 | max | 50.40, 1.39 |
/// | u32 | sum | 50.82, 1.27 |
/// | u32 | min | 49.04, 1.42 |
/// | u32 | max | 50.05, 1.40 |
/// | i64 | sum | 100.91, 1.06 |
/// | i64 | min | 100.10, 1.25 |
/// | i64 | max | 100.40, 1.23 |
/// | u64 | sum | 100.58, 1.05 |
/// | u64 | min | 100.22, 1.24 |
/// | u64 | max | 99.79, 1.24 |
/// | f32 | sum | 50.27, 1.26 |
/// | f32 | min | 50.00, 1.54 |
/// | f32 | max | 49.06, 1.55 |
/// | f64 | sum | 99.25, 1.13 |
/// | f64 | min | 103.34, 1.32 |
/// | f64 | max | 101.18, 1.36 |
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
    const {
        assert!(blocked_is_conflict_free(4 * LOOKBACK_TYPED_CHUNKS as usize), "an odd number of chunks per thread");
        assert!(LOOKBACK_TYPED_THREADS.is_multiple_of(WARP_SIZE) && LOOKBACK_TYPED_THREADS <= 1024);
    };
    let smem = static_shared!(LOOKBACK_TYPED_SHARED: [u32; TILE_WORDS + CTRL_WORDS]);
    if block_dim_x() != LOOKBACK_TYPED_THREADS {
        trap("lookback__{type}_{op} launched with a block other than LOOKBACK_TYPED_THREADS");
    }
    let tile = block_idx_x() as usize;
    let tile_len = lookback_typed_tile::<T>() as usize;
    let tid = thread_idx_x() as usize;
    let (base, n) = (tile * tile_len, n as usize);
    let at = Place {
        tile,
        base,
        n,
        full: base + tile_len <= n,
        tid,
        lane: thread_idx_x() % WARP_SIZE,
        warp: tid / WARP_SIZE as usize,
    };
    // SAFETY: forwarded from the caller (all phases); every thread runs every phase.
    unsafe {
        load_tile::<T, O>(input, at, smem);
        let (before, aggregate) = tile_offsets::<T, O>(at, smem);
        if tid == 0 {
            let flag = if tile == 0 { FLAG_PREFIX } else { FLAG_AGGREGATE };
            publish(status, values, tile, epoch, flag, aggregate);
        }
        scan_in_place::<T, O>(tid, before, exclusive != 0, smem);
        let prefix = tile_prefix::<T, O>(status, values, epoch, aggregate, at, smem);
        store_tile::<T, O>(output, at, prefix, smem);
    }
}

#[cfg(not(target_arch = "nvptx64"))]
crate::kernel! {
    /// Host-only test hook (not in the PTX): one warp runs the generic look-back of `tile`
    /// for `u64` sums (the split layout) over status words and value slots the test prepared;
    /// lane 0 writes the prefix to `*out`. Drives the multi-window path.
    ///
    /// # Safety
    /// `status` holds `tile` words, none invalid for `epoch` forever; `values` `2·tile`
    /// slots; `out` one valid `u64`; launched with one block of 32 threads.
    pub unsafe fn lookback_typed_probe(status: GlobalMut<u64>, values: GlobalMut<u64>, out: GlobalMut<u64>, tile: u32, epoch: u32) {
        let lane = thread_idx_x() % WARP_SIZE;
        // SAFETY: forwarded from the caller; the whole warp calls it.
        let prefix = unsafe { look_back::<u64, crate::types::Sum>(status.as_const(), values.as_const(), tile as usize, epoch, lane) };
        if lane == 0 {
            // SAFETY: out is valid.
            unsafe { out.write(0, prefix) };
        }
    }
}
