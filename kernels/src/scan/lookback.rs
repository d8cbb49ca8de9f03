use super::index::{FLAG_AGGREGATE, FLAG_INVALID, FLAG_PREFIX, pack_status, status_flag, status_value};
use crate::device::atomic::{atomic_add_u32, load_relaxed_u64, store_relaxed_u32, store_relaxed_u64};
use crate::device::mem::{load_v4, store_v4};
use crate::device::shared::Shared;
use crate::device::thread::{block_dim_x, grid_dim_x, sync_threads, thread_idx_x};
use crate::device::warp::{all_sync, ballot_sync, shfl_sync, shfl_up_sync, shfl_xor_sync};
use crate::device::{FULL_MASK, WARP_SIZE, trap};
use crate::{kernel, static_shared};

// ---------------------------------------------------------------------------------------
// Tuning: every knob of the decoupled look-back scan is here.

/// Threads per block of `lookback` (a multiple of 32, at most 1024).
pub const LOOKBACK_THREADS: u32 = 256;
/// Elements per thread of `lookback` (a multiple of 4: one 128-bit load per 4).
pub const LOOKBACK_ITEMS: u32 = 16;
/// Elements per tile of `lookback`.
pub const LOOKBACK_TILE: u32 = LOOKBACK_THREADS * LOOKBACK_ITEMS;

/// The other (threads, items per thread) shapes compiled into the PTX for tuning, each as a
/// kernel `lookback_{threads}x{items}` with the same code as `lookback`. The host registers
/// one tuning variant per entry (`host::scan`; a unit test keeps the two lists equal);
/// `scripts/gpu/scan_table.sh` times them all at 1e8 and 2^28, and the winner becomes
/// [`LOOKBACK_THREADS`] × [`LOOKBACK_ITEMS`].
///
/// Items per thread stay at most 24 (6 rows of 4): with the pinned nightly, 8 rows make LLVM
/// keep the register arrays in local memory (a stack frame, slow), which
/// `tests/scan.rs` (`scan::ptx::no_stack_frame`) rejects.
pub const LOOKBACK_TUNING: [(u32, u32); 6] = [(128, 16), (128, 24), (256, 12), (256, 24), (512, 8), (512, 12)];

/// Shared words: one total per warp (at most 32 warps), the tile's exclusive prefix, the
/// tile id.
const SMEM_WORDS: usize = 34;
const PREFIX_SLOT: usize = 32;
const TILE_SLOT: usize = 33;

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
/// 1. Every lane loads its predecessor's status word (relaxed 64-bit atomic load), until no
///    lane of the window sees [`FLAG_INVALID`] (`__all_sync`); predecessors before tile 0
///    count as an inclusive prefix of 0.
/// 2. `__ballot_sync(flag == PREFIX)`: if some lane holds an inclusive prefix, the highest
///    such lane is the nearest; the answer is its value plus the aggregates of the lanes
///    above it (a warp sum of the values from that lane on). Done.
/// 3. Otherwise every lane holds an aggregate: add all 32 (warp sum), slide the window 32
///    tiles back, repeat.
///
/// Every lane returns the same value.
///
/// # Safety
/// `status` holds at least `tile` words; called by all 32 lanes of one warp with the same
/// `tile` and `epoch`.
#[inline(always)]
unsafe fn look_back(status: *const u64, tile: usize, epoch: u32, lane: u32) -> i32 {
    let mut exclusive = 0i32;
    let mut end = tile;
    loop {
        let pred = end as isize - WARP_SIZE as isize + lane as isize;
        let mut word;
        loop {
            word = if pred >= 0 {
                // SAFETY: 0 <= pred < tile <= the status array's length.
                unsafe { load_relaxed_u64(status.add(pred as usize)) }
            } else {
                pack_status(epoch, FLAG_PREFIX, 0)
            };
            if all_sync(FULL_MASK, status_flag(word, epoch) != FLAG_INVALID) {
                break;
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

/// The four elements `p .. p + 4` where they exist (`< n`), zeros past the end: the loads
/// of the last, partial tile. Written out element by element, so that the row stays in
/// registers.
///
/// # Safety
/// `input` holds `n` elements.
#[inline(always)]
unsafe fn load_row_guarded(input: *const i32, p: usize, n: usize) -> [i32; 4] {
    let at = |i: usize| {
        if i < n {
            // SAFETY: i < n.
            unsafe { *input.add(i) }
        } else {
            0
        }
    };
    [at(p), at(p + 1), at(p + 2), at(p + 3)]
}

/// Stores the elements of `row` that exist (`p + k < n`): the stores of the partial tile.
///
/// # Safety
/// `output` holds `n` elements, and nobody else writes `p .. p + 4` concurrently.
#[inline(always)]
unsafe fn store_row_guarded(output: *mut i32, p: usize, n: usize, row: [i32; 4]) {
    let put = |i: usize, x: i32| {
        if i < n {
            // SAFETY: i < n.
            unsafe { *output.add(i) = x };
        }
    };
    put(p, row[0]);
    put(p + 1, row[1]);
    put(p + 2, row[2]);
    put(p + 3, row[3]);
}

/// The body of `lookback` and of its tuning instantiations: one tile of `THREADS * 4 * ROWS`
/// elements per block. See [`lookback`] for the algorithm.
///
/// # Safety
/// As for [`lookback`]; `smem` is the block's shared array of [`SMEM_WORDS`] words.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
unsafe fn scan_tile<const THREADS: usize, const ROWS: usize>(
    input: *const i32,
    output: *mut i32,
    status: *mut u64,
    counter: *mut u32,
    n: u32,
    epoch: u32,
    exclusive: u32,
    smem: Shared<i32>,
) {
    if block_dim_x() as usize != THREADS {
        trap("lookback launched with a block size other than the one it was compiled for");
    }
    let tile_len = THREADS * 4 * ROWS;
    let warps = THREADS / WARP_SIZE as usize;
    let tid = thread_idx_x();
    let lane = tid % WARP_SIZE;
    let warp = (tid / WARP_SIZE) as usize;
    let n = n as usize;

    // 1. Dynamic tile id: tiles are handed out in the order blocks start, so every tile
    //    before this one belongs to a block that is already running or done.
    if tid == 0 {
        // SAFETY: counter is one valid u32; only atomics touch it during the launch.
        let ticket = unsafe { atomic_add_u32(counter, 1) };
        if ticket == grid_dim_x() - 1 {
            // The last ticket: every block has drawn, so the counter can go back to 0 for
            // the next launch (a relaxed store after the last add in the counter's order).
            // SAFETY: as above.
            unsafe { store_relaxed_u32(counter, 0) };
        }
        // SAFETY: TILE_SLOT < SMEM_WORDS; read only after the barrier.
        unsafe { smem.write(TILE_SLOT, ticket as i32) };
    }
    sync_threads();
    // SAFETY: written before the barrier, never written again.
    let tile = unsafe { smem.read(TILE_SLOT) } as u32 as usize;
    let base = tile * tile_len;
    let full = base + tile_len <= n;

    // 2. Load: row r of this warp's segment, lane's 4 elements (one 128-bit load each).
    let first = base + warp * WARP_SIZE as usize * 4 * ROWS + lane as usize * 4;
    let mut v: [[i32; 4]; ROWS] = if full {
        core::array::from_fn(|r| {
            // SAFETY: first + r*128 + 3 < base + tile_len <= n; 16-byte aligned because the
            // buffer is and the index is a multiple of 4.
            unsafe { load_v4(input.add(first + r * 128)) }
        })
    } else {
        // SAFETY: input holds n elements.
        core::array::from_fn(|r| unsafe { load_row_guarded(input, first + r * 128, n) })
    };

    // 3. Scan each 4-chunk in registers, then each row across the warp's lanes.
    for row in v.iter_mut() {
        row[1] = row[1].wrapping_add(row[0]);
        row[2] = row[2].wrapping_add(row[1]);
        row[3] = row[3].wrapping_add(row[2]);
    }
    let mut off = [0i32; ROWS];
    let mut running = 0i32;
    for r in 0..ROWS {
        let s = v[r][3];
        let x = warp_inclusive_scan(s, lane);
        off[r] = running.wrapping_add(x).wrapping_sub(s);
        running = running.wrapping_add(shfl_sync(FULL_MASK, x, 31));
    }
    if lane == 0 {
        // SAFETY: warp < 32; each warp's lane 0 writes its own slot before the barrier.
        unsafe { smem.write(warp, running) };
    }
    sync_threads();

    // 4. The block's total (the tile aggregate) and this warp's offset in the tile.
    let mut warp_offset = 0i32;
    let mut aggregate = 0i32;
    for w in 0..warps {
        // SAFETY: written before the barrier, not written again.
        let t = unsafe { smem.read(w) };
        if w < warp {
            warp_offset = warp_offset.wrapping_add(t);
        }
        aggregate = aggregate.wrapping_add(t);
    }

    // 5. Warp 0 publishes the aggregate, looks back, publishes the inclusive prefix.
    if warp == 0 {
        let prefix = if tile == 0 {
            0
        } else {
            if lane == 0 {
                // SAFETY: tile < gridDim.x = the status array's length.
                unsafe { store_relaxed_u64(status.add(tile), pack_status(epoch, FLAG_AGGREGATE, aggregate)) };
            }
            // SAFETY: the whole warp calls it, with the same tile and epoch.
            unsafe { look_back(status, tile, epoch, lane) }
        };
        if lane == 0 {
            let inclusive = prefix.wrapping_add(aggregate);
            // SAFETY: as above; PREFIX_SLOT is read only after the barrier below.
            unsafe {
                store_relaxed_u64(status.add(tile), pack_status(epoch, FLAG_PREFIX, inclusive));
                smem.write(PREFIX_SLOT, prefix);
            }
        }
    }
    sync_threads();
    // SAFETY: written before the barrier, never written again.
    let start = unsafe { smem.read(PREFIX_SLOT) }.wrapping_add(warp_offset);

    // 6. Store: the same layout as the loads.
    for r in 0..ROWS {
        let o = start.wrapping_add(off[r]);
        let c = v[r];
        let out = if exclusive != 0 {
            [o, o.wrapping_add(c[0]), o.wrapping_add(c[1]), o.wrapping_add(c[2])]
        } else {
            [o.wrapping_add(c[0]), o.wrapping_add(c[1]), o.wrapping_add(c[2]), o.wrapping_add(c[3])]
        };
        let p = first + r * 128;
        if full {
            // SAFETY: as for the loads; these 16 bytes of the output are this thread's alone.
            unsafe { store_v4(output.add(p), out) };
        } else {
            // SAFETY: output holds n elements; these are this thread's alone.
            unsafe { store_row_guarded(output, p, n, out) };
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
    /// one L2 round trip covers 32 links of the chain. The latency of the chain is hidden
    /// behind the tiles' own memory traffic.
    ///
    /// # Previous problem → fix
    /// `blelloch` (reduce-then-scan) moves every element through DRAM twice each way (scan
    /// tiles; add offsets) in 2 + 2·levels launches, and its block-sums levels are tiny
    /// launches that leave the GPU idle. Here each element is loaded once (128-bit loads,
    /// whole-warp contiguous), scanned in registers and warp shuffles, and stored once: the
    /// scan costs what a copy costs, 8 bytes per element.
    ///
    /// # Execution
    /// Block of `LOOKBACK_THREADS` threads, tile of `LOOKBACK_TILE` elements; warp `w` owns
    /// a segment of `32 × LOOKBACK_ITEMS` elements, cut into rows of 128 (lane `l` holds
    /// elements `4l..4l+4` of each row: `index::striped_index`).
    /// 1. **Tile id.** Thread 0 draws `tile = atomicAdd(counter, 1)` (the last ticket resets
    ///    the counter to 0 for the next launch). Dynamic ids, not `blockIdx.x`: tiles are
    ///    numbered in the order blocks *start*, so every earlier tile belongs to a block that
    ///    is running or finished — a look-back never waits for a block that has not been
    ///    scheduled (which could deadlock a GPU full of waiting blocks, or the emulator, which
    ///    runs a few blocks at a time).
    /// 2. **Load** the thread's rows (one `ld.global.v4` per 4 elements; scalar loads with
    ///    bounds checks in the last, partial tile).
    /// 3. **Scan in registers**: each 4-chunk sequentially; each row across the warp
    ///    (`__shfl_up_sync`, 5 steps); row totals (`__shfl_sync` from lane 31) chain the rows.
    ///    Lane 0 writes the warp's total to shared memory; barrier.
    /// 4. Every thread adds the warp totals: the tile aggregate, and its warp's offset.
    /// 5. **Look-back** (warp 0): publish `(A, aggregate)`; examine 32 predecessors at a time
    ///    (`look_back`); publish `(P, prefix + aggregate)`; put `prefix` in shared memory.
    ///    Tile 0 publishes `(P, aggregate)` at once. Barrier.
    /// 6. **Store** `prefix + warp offset + row offset + chunk scan` (exclusive: shifted by
    ///    one element), one `st.global.v4` per 4 elements.
    ///
    /// ```text
    ///  tiles:    0          1          2          3          4
    ///  status:  (P, 10)    (A, 7)     (P, 24)    (A, 5)     (X)      ← epoch-tagged 64-bit words
    ///  tile 5 looks back: lane 31 → tile 4: X, wait … → (A, 3)
    ///                     window 0..4: nearest P is tile 2 → prefix = 24 + 5 + 3 = 32
    ///  tile 5 publishes (A, agg5) first, (P, 32 + agg5) after the look-back
    /// ```
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
    /// thread, so coherence orders them: no reader sees P and later A. The counter uses a
    /// relaxed `atom.add`: only its atomicity matters.
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
    /// (traps otherwise), 34 words of static shared memory (the warp totals, the prefix, the
    /// tile id).
    ///
    /// # Preconditions
    /// `input` and `output` hold `n ≥ 1` elements each, are 16-byte aligned and do not
    /// overlap; `status` holds `gridDim.x` words, zeroed or written by earlier launches with
    /// other epochs; `*counter` is 0; `epoch` is in `1..=index::MAX_EPOCH` and differs from
    /// the epoch of every earlier launch on this status array since it was zeroed;
    /// `exclusive` is 0 (inclusive scan) or 1 (exclusive scan).
    ///
    /// # Safety
    /// The pointers are valid device memory of those lengths. Every thread reaches every
    /// barrier (threads of the partial tile carry zeros past `n` and store nothing there).
    /// The look-back spins only on tiles with smaller ids, which are running or done, and
    /// every spin goes through the device layer's atomic loads (which, in the emulator, let
    /// other threads run and respect the time budget).
    pub unsafe fn lookback(
        input: *const i32,
        output: *mut i32,
        status: *mut u64,
        counter: *mut u32,
        n: u32,
        epoch: u32,
        exclusive: u32,
    ) {
        let smem = static_shared!(LOOKBACK_SHARED: [i32; SMEM_WORDS]);
        // SAFETY: forwarded from the caller; smem has SMEM_WORDS words.
        unsafe {
            scan_tile::<{ LOOKBACK_THREADS as usize }, { LOOKBACK_ITEMS as usize / 4 }>(
                input, output, status, counter, n, epoch, exclusive, smem,
            )
        }
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
            /// # Safety
            /// As for `lookback`, with this kernel's tile and block.
            pub unsafe fn $name(
                input: *const i32,
                output: *mut i32,
                status: *mut u64,
                counter: *mut u32,
                n: u32,
                epoch: u32,
                exclusive: u32,
            ) {
                let smem = static_shared!(LOOKBACK_SHARED: [i32; SMEM_WORDS]);
                // SAFETY: forwarded from the caller; smem has SMEM_WORDS words.
                unsafe {
                    scan_tile::<$threads, { $items / 4 }>(input, output, status, counter, n, epoch, exclusive, smem)
                }
            }
        }
    };
}

lookback_shape!(lookback_128x16, 128, 16);
lookback_shape!(lookback_128x24, 128, 24);
lookback_shape!(lookback_256x12, 256, 12);
lookback_shape!(lookback_256x24, 256, 24);
lookback_shape!(lookback_512x8, 512, 8);
lookback_shape!(lookback_512x12, 512, 12);

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
    pub unsafe fn lookback_probe(status: *mut u64, out: *mut i32, tile: u32, epoch: u32) {
        let lane = thread_idx_x() % WARP_SIZE;
        // SAFETY: forwarded from the caller; the whole warp calls it.
        let prefix = unsafe { look_back(status, tile as usize, epoch, lane) };
        if lane == 0 {
            // SAFETY: out is valid.
            unsafe { *out = prefix };
        }
    }
}
