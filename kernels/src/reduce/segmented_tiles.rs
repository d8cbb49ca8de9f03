use crate::collective::block::{BLOCK_SUM_SLOTS, BLOCK_SUM_SMEM_BYTES, block_reduce_smem_bytes, is_last_of};
use crate::collective::fold::{Fold, FoldSlots};
use crate::collective::thread::{LastTrip, thread_fold_v128};
use crate::device::atomic::store_relaxed_u32;
use crate::device::global::{Global, GlobalMut};
use crate::device::thread::{block_dim_x, block_idx_x, thread_idx_x};
use crate::index::{segment_bounds, segment_of_block, tile_bounds};
use crate::types::Element;
use crate::{fold_kernel, static_shared};

/// Static shared memory of `segmented_tiles__{type}_{fold}` per block: one value and one `u32`
/// index per warp of the largest block, then the 16-byte-aligned "last block" flag.
pub const fn segmented_tiles_shared_bytes<T>() -> u32 {
    block_reduce_smem_bytes::<T>() + BLOCK_SUM_SMEM_BYTES + 16
}

/// How a block's threads read their last loads of a tile (fewer than four 128-bit loads left):
/// together for sums, minima and maxima, one at a time for argmin and argmax. NVIDIA H200, f32
/// over 2^26, 2 interleaved rounds each (`docs/measurements/2026-11-30-h200/last-trip-exp/`): 10^4
/// equal segments (6711 elements: a trip and a part) summed in 62.9–63.8 µs together against
/// 67.9–68.1 one at a time (CUB 65.7–65.9), their minima 70.5–70.9 against 80.2–80.4 and maxima
/// 70.8 against 80.3–80.4 (`final.csv`; 64.4–65.2 µs since session 57's float min/max, below);
/// the rows of 4096 × 4096, whole trips only, take their
/// argmax in 21.1–21.2 µs together against 20.2–20.3 (`exp2.csv`): the indexed folds' 38
/// registers against 30 leave six blocks of 256 an SM, not eight.
pub const fn last_trip<T: Element, F: Fold<T>>() -> LastTrip {
    if F::INDEXED { LastTrip::OneByOne } else { LastTrip::AtOnce }
}

fold_kernel!(segmented_tiles = segmented_tiles_generic(
    g_idata: Global<T>,
    g_offsets: Global<u32>,
    cols: u32,
    segments: u32,
    g_first: Global<u32>,
    per_row: u32,
    tile: u32,
    g_partial_values: GlobalMut<T>,
    g_partial_indices: GlobalMut<u32>,
    g_tickets: GlobalMut<u32>,
    g_values: GlobalMut<T>,
    g_indices: GlobalMut<u32>
));

/// Segmented reduction, **blocks per segment in proportion to its length**: `out[s]` = the fold
/// of segment `s`, where segments are long or their lengths skewed — each segment gets
/// `⌈len / tile⌉` blocks (at least one), a block folds one tile, and the last of a segment's
/// blocks to finish combines its tiles. One block per segment when every segment fits a tile; a
/// device-wide pass of many blocks per segment when a few segments hold most of the input
/// (`cub::DeviceSegmentedReduce`, `torch.sum(x, dim=-1)` of a matrix with long rows).
/// Instantiated by `fold_kernel!` as `segmented_tiles__{type}_{sum|min|max|argmin|argmax}`.
///
/// # Concept
/// **Split the work, not the segments.** One block per segment stalls on skew: a segment of a
/// million elements keeps one SM busy long after the others are done, and ten segments cannot
/// fill a GPU of 132 SMs at all (the gap NVIDIA/cccl #2738 measured: 1.2 ms against 21 µs for
/// the same bytes). Cutting every segment into tiles of equal size gives every block the same
/// work, whatever the lengths; the price is a second level, the combine of a segment's tiles,
/// which the last-block protocol does in the same launch, with one ticket per segment.
///
/// # Previous problem → fix
/// [`segmented_warp_generic`](super::segmented_warp_generic) gives each segment one warp: right
/// for short segments, serial for long ones. Here a block owns a tile (`tile` elements: 16 per
/// thread per trip × four trips), found from its index by a binary search of the first block of
/// each segment (`index::segment_of_block`; rows need no table: `per_row` blocks each), and the
/// segment's blocks meet through their ticket (`collective::block::is_last_of`), as
/// [`single_pass_generic`](super::single_pass_generic)'s blocks meet through the grid's.
///
/// # Execution
/// 1. Block `b` finds its segment `s` and its chunk `c = b − first(s)` of `blocks(s)`, and its
///    elements `offsets[s] + c × tile …` (`index::tile_bounds`: short for the last chunk, empty
///    for an empty segment's one block).
/// 2. `thread_fold_v128` with rank = `threadIdx.x`: 128-bit loads of the tile (a thread's last
///    ones, fewer than four, issued together for sums, minima and maxima: [`last_trip`]);
///    element `i` of the segment is index `i` (argmin, argmax).
/// 3. `Fold::block` (warp shuffles, one slot pair per warp).
/// 4. A segment of one block: thread 0 writes `out[s]`. Otherwise thread 0 publishes the tile's
///    result to `partials[b]`, and `is_last_of(tickets[s], blocks(s))` finds the segment's last
///    block, which combines `partials[first(s) ..]` (strong loads), reduces, writes `out[s]` and
///    puts `tickets[s]` back to 0.
///
/// ```text
///  segment 0 (9000)     blocks 0 1 2   tiles of 4096   → partials 0..3 → last of them → out[0]
///  segment 1 (0)        block  3       empty tile      → out[1] = identity
///  segment 2 (4096)     block  4       one tile        → out[2]
/// ```
///
/// # Launch
/// Grid `first(segments)` (Σ ⌈len / tile⌉, each at least 1 or left out), or `segments × per_row` for rows,
/// block a power of two in 32..=1024, `tile` a multiple of 16 ≥ the block,
/// [`segmented_tiles_shared_bytes`]`::<T>()` bytes of static shared memory.
///
/// # Preconditions
/// `g_offsets` holds `segments + 1` nondecreasing offsets within `g_idata`, and `g_first`
/// `segments + 1` first blocks (`first(0) = 0`, `first(s + 1) − first(s) = max(1, ⌈len(s) /
/// tile⌉)`, or 0 for a segment left to another launch: no block visits it, and `g_values[s]`
/// is not written); or both are null, and the input is `segments` rows of `cols` elements, each
/// `per_row = max(1, ⌈cols / tile⌉)` blocks. `g_partial_values` and `g_partial_indices` hold
/// `gridDim.x` elements, `g_tickets` `segments` zeros (every completed launch leaves them 0),
/// `g_values` and `g_indices` `segments` (`g_indices` and the partial indices only read or
/// written by argmin and argmax). Launches sharing the tickets run one after the other.
///
/// # Safety
/// The pointers are valid device memory of those lengths; nothing writes the input, the offsets
/// or the table during the kernel. Every barrier is reached by the whole block: the branches
/// around them (one block or several, the last block or not) are uniform in the block.
///
/// # Measured
/// NVIDIA H100 80GB HBM3, f32 sums over 2^26 elements, 2 interleaved rounds of 20 runs, every
/// segment checked, CUB `DeviceSegmentedReduce::Sum` on the same values
/// (`docs/measurements/2026-11-26-h100/library-ops-939a239/library_ops_segmented.csv`, commit
/// 939a239, the kernel before its [`last_trip`]): 10 segments 94.7 µs (84.6 % of the bound, 95 %
/// of the whole-buffer sum's throughput, 32.9× CUB), 10^3 equal 100.4–100.6 µs (1.01× CUB), 10^3
/// power-law 99.6–99.9 µs (72× CUB). NVIDIA H200, f32 over 2^26, tiles of 16384 (the plan's
/// for CSR segments there, `host`'s `TILE_BY_DEVICE`), 2 interleaved rounds, CUB in the same
/// process (`docs/measurements/2026-11-30-h200/last-trip-exp/`: `final.csv` of this form,
/// `exp2.csv`'s `v2` rows of the same code for sums and `head` rows for argmax): 10 segments
/// 69.9–70.3 µs (79.4–79.8 % of the bound, 43× CUB), 10^3 equal 71.6–71.8 µs (77.6–77.9 %,
/// 1.027–1.030× CUB); one block per segment, 10^4 equal sums 62.9–63.8 µs (87.4–88.7 %,
/// 1.033–1.045× CUB), their minima and maxima 70.5–70.9 µs then (78.7–79.1 %, 0.991–0.998×
/// CUB), their argmax 72.1–72.2 µs (1.007–1.013×); rows 4096 × 4096 sums 20.2–20.3 µs
/// (**0.930–0.944× CUB**: 18.9–19.0 µs; 19.8–20.0 µs before `last_trip`, in the same rounds),
/// argmax 20.2–20.3 µs (1.006–1.012×). Rows whose columns are a multiple of four and at most a
/// tile now go to [`segmented_rows_generic`](super::segmented_rows_generic) (session 47).
///
/// **Float minima and maxima since session 57** (every step PTX `min`/`max` beside a NaN
/// select, `collective`'s `Element::minimum`; 32 registers instead of 36): NVIDIA H200, f32
/// over 2^26, main (13dc665) and the change (d7dd39d, the landed PTX) in 2 interleaved rounds,
/// CUB in every row (`docs/measurements/2026-12-01-h200/session57/`, `r57a/ab/ab.csv` and
/// `r57b/ab/ab.csv`): 10^4 equal segments' minima **64.4–65.2 µs** (85.6–86.6 % of the bound,
/// **1.089–1.095× CUB**) against 71.1–71.2 (0.992–0.993×), their maxima 64.7–65.2 µs
/// (1.086–1.090×) against 70.5–71.0 (0.998–0.999×); 10^3 equal segments' maxima 71.7–71.8 µs
/// (1.241–1.247×) against 75.8–76.5; f64 minima of 10^4 segments 121.8–123.8 µs
/// (1.005–1.006×) against 122.8–125.1 (0.997–0.998×; the f64 sums there 1.007–1.008×).
///
/// **Argmin and argmax since session 59** (`collective`'s `Extreme::beats` in two compares and
/// `Arg::update`'s lean value select, for 32-bit types): NVIDIA H200, 2^26 elements, 10^4 equal
/// segments, 2 interleaved rounds each, CUB in every row
/// (`docs/measurements/2026-12-02-h200/session59/`): `f32` argmax **70.6–71.2 µs, 1.025–1.034×
/// CUB** against main's 71.7–71.9 (1.012–1.016×; `r59a/arg/ab.csv`, `r59b/arg3/ab.csv`, `r59c/two/ab.csv`), argmin
/// 71.1–71.3 against 71.9–72.0 µs; `f64` argmax 127.2–127.6 µs (1.014–1.017×). The 64-bit
/// integers stayed below CUB then: `i64` argmin 131.3–131.8 µs and `u64` argmax 131.6–131.7 µs,
/// 0.978–0.984× CUB (128.9–129.3 µs), 3.5 % behind the `f64` rows of the same bytes.
///
/// **Since session 60** (`Arg::update`'s lean value select for the 64-bit integers too: 32
/// registers instead of 34, so 8 blocks of 256 an SM instead of 6; and for 32-bit types the
/// index as `min(held, new)` where the element does not win): NVIDIA H200, 2^26 elements, main
/// (a396eda) against the change in 3 interleaved rounds, CUB in every row
/// (`docs/measurements/2026-12-02-h200/session60/`, `r60b/lean/ab.csv` and `r60c/lean/ab.csv`,
/// build `mix`), 10^4 equal segments: `i64` argmin **128.2–128.5 µs, 1.004–1.006× CUB** against
/// 131.5–131.8 (0.980–0.982×), `u64` argmax **127.8–128.4 µs, 1.006–1.011×** against
/// 131.6–132.0 (0.978–0.980×), `f32` argmax 70.5–70.6 µs (1.033–1.038×) against 70.8–71.0,
/// `i32` argmax 69.2–69.4 µs (1.051–1.054×) against 69.8–69.9. Starting each thread from its
/// first element instead (`exp/arg-seeded`: no nothing-held test at all, 96 → 79 instructions
/// a trip for `i64`) was 3.7 % slower for the 64-bit integers and 9.7–10.6 % for the 32-bit
/// types (`r60a/seeded/ab.csv`; for these ptxas issued half of a trip's loads after the first
/// compares and took 34 registers, 6 blocks an SM; the 64-bit integers' loss not explained).
/// Two chains of updates a thread (a trip's even and odd loads) took `f64` to 129.7 µs and the
/// `f32` rows' argmax 2.6 % slower (`session59/r59c/two/`): not kept.
#[inline(always)]
pub unsafe fn segmented_tiles_generic<T: Element, F: Fold<T>>(
    g_idata: Global<T>,
    g_offsets: Global<u32>,
    cols: u32,
    segments: u32,
    g_first: Global<u32>,
    per_row: u32,
    tile: u32,
    g_partial_values: GlobalMut<T>,
    g_partial_indices: GlobalMut<u32>,
    g_tickets: GlobalMut<u32>,
    g_values: GlobalMut<T>,
    g_indices: GlobalMut<u32>,
) {
    let slots = FoldSlots {
        values: static_shared!(SEGMENTED_TILES_VALUES: [T; BLOCK_SUM_SLOTS]),
        indices: static_shared!(SEGMENTED_TILES_INDICES: [u32; BLOCK_SUM_SLOTS]),
    };
    let last_flag = static_shared!(SEGMENTED_TILES_LAST: [u32; 1]);
    let (b, tid) = (block_idx_x(), thread_idx_x());
    // At least 1 (the precondition): also spares the division its divide-by-zero check.
    let per_row = per_row.max(1);
    let (s, first, blocks) = if g_first.is_null() {
        (b / per_row, b / per_row * per_row, per_row)
    } else {
        // SAFETY: the table holds segments + 1 entries; every index read is at most segments.
        let at = |i: u32| unsafe { g_first.read(i as usize) };
        let s = segment_of_block(b, segments, at);
        (s, at(s), at(s + 1) - at(s))
    };
    // SAFETY: s < segments (the grid is the table's last entry, or segments × per_row): offsets
    // s and s + 1 exist (read only when there are offsets).
    let offset = |i: u32| unsafe { g_offsets.read(i as usize) };
    let (start, end) = segment_bounds(s, cols, offset, g_offsets.is_null());
    let (lo, hi) = tile_bounds(start, end, b - first, tile);
    // SAFETY: lo..hi lies within the segment, so within the input; tid < blockDim.
    let mine = unsafe {
        let (from, len, skip) = (g_idata.offset(lo as usize), hi - lo, lo - start);
        thread_fold_v128::<T, F>(from, len, skip, tid, block_dim_x(), last_trip::<T, F>())
    };
    // SAFETY: every thread of the block gets here; the block is whole warps, at most 1024.
    let total = unsafe { F::block(mine, slots) };
    if blocks == 1 {
        if tid == 0 {
            // SAFETY: s < segments, the outputs' length.
            unsafe { F::store(g_values, g_indices, s as usize, total) };
        }
        return;
    }
    if tid == 0 {
        // SAFETY: b < gridDim.x, the partials' length.
        unsafe { F::store(g_partial_values, g_partial_indices, b as usize, total) };
    }
    // SAFETY: every thread calls it after thread 0 published; exactly `blocks` blocks of this
    // launch draw from tickets[s], which is 0 at launch.
    let ticket = unsafe { g_tickets.offset(s as usize) };
    // SAFETY: as just said.
    if unsafe { is_last_of(ticket, blocks, last_flag) } {
        let mut acc = F::identity();
        let mut i = tid;
        while i < blocks {
            // SAFETY: first + i < gridDim.x; every block of the segment stored its partial
            // before drawing its ticket (release), and this block's draw was the last (acquire).
            let part =
                unsafe { F::load(g_partial_values.as_const(), g_partial_indices.as_const(), (first + i) as usize) };
            acc = F::combine(acc, part);
            i += block_dim_x();
        }
        // SAFETY: the whole block is here (the condition is uniform); the first reduction's
        // reads of the slots came before is_last_of's barrier.
        let all = unsafe { F::block(acc, slots) };
        if tid == 0 {
            // SAFETY: s < segments; every block of the segment has drawn its ticket.
            unsafe {
                F::store(g_values, g_indices, s as usize, all);
                store_relaxed_u32(ticket, 0);
            }
        }
    }
}
