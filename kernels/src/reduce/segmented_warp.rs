use crate::collective::fold::Fold;
use crate::collective::thread::{LastTrip, thread_fold_v128};
use crate::device::WARP_SIZE;
use crate::device::global::{Global, GlobalMut};
use crate::device::thread::{block_dim_x, block_idx_x, grid_dim_x, lane_id, warp_id};
use crate::fold_kernel;
use crate::index::{logical_lane, segment_bounds};
use crate::types::Element;

/// How a lane reads its last loads of a segment (fewer than four 128-bit loads left): together.
/// NVIDIA H200, f32 over 2^26, 2 interleaved rounds each, against one load and its fold at a
/// time (`docs/measurements/2026-11-30-h200/last-trip-exp/`, `final.csv` and `exp2.csv`): 10^5
/// equal segments 67.0–67.1 µs against 68.8–69.5, 10^6 argmax 73.7–74.4 against 76.6, 10^6
/// power-law (with the tiles) 127.5–128.1 against 131.1–131.3; 10^6 sums 74.6 against 74.3–74.6
/// (a trip each: no last loads).
pub const LAST_TRIP: LastTrip = LastTrip::AtOnce;

fold_kernel!(segmented_warp = segmented_warp_generic(
    g_idata: Global<T>,
    g_offsets: Global<u32>,
    cols: u32,
    segments: u32,
    max_len: u32,
    lanes: u32,
    g_values: GlobalMut<T>,
    g_indices: GlobalMut<u32>
));

/// Segmented reduction, **a logical warp per segment**: `out[s]` = the fold of segment `s`, for
/// many short segments — CSR offsets (`offsets[s]..offsets[s + 1]`) or the rows of a row-major
/// matrix (`cols` each) — in one launch (`cub::DeviceSegmentedReduce` with small segments,
/// `torch.sum(x, dim=-1)` of a matrix with short rows). A logical warp is `lanes` lanes of a
/// warp (4 to 32: CUB's `LOGICAL_WARP_THREADS`), so a warp serves `32 / lanes` segments at
/// once. Instantiated by `fold_kernel!` as `segmented_warp__{type}_{sum|min|max|argmin|argmax}`.
///
/// # Concept
/// **Match the worker to the work.** A segment of a few dozen elements gives a block of 256
/// threads almost nothing to do, and a block barrier to wait at; a warp reads it in one or two
/// coalesced passes and reduces it with shuffles alone, no shared memory, no barrier. Shorter
/// still, a whole warp is too much: 67 elements are 17 loads of 16 bytes, so half its lanes
/// would idle, and the warp would wait twice (for its offsets, then for its data) with a few
/// hundred bytes in flight. A **logical warp** of `lanes` lanes per segment puts `32 / lanes`
/// segments' loads in flight in every warp: the bytes a GPU needs in flight to reach its
/// bandwidth (Little's law) come from more segments at once, not from longer ones.
///
/// # Previous problem → fix
/// [`single_pass_generic`](super::single_pass_generic) reduces one array with the whole grid;
/// run once per segment, a million segments would be a million launches, each of a few
/// microseconds. Here segment boundaries are data (the offsets), read by the lanes that own the
/// segment, and those lanes share the segment with the same 128-bit loads
/// (`collective::thread::thread_fold_v128` with the rank in the logical warp as rank). What is
/// kept per lane is the fold's (`collective::fold`): a value, or a value and its index within
/// the segment for argmin and argmax, so the five folds are one body. The host chooses `lanes`
/// from the segments' mean length (one trip of four 128-bit loads per lane).
///
/// # Execution
/// 1. Warp `w` of the grid (`blockIdx.x × warps per block + warp`) takes segments
///    `w × 32/lanes …`; lane `l` is rank `l % lanes` of group `l / lanes`
///    (`index::logical_lane`), which takes segment `s = w × 32/lanes + l / lanes`.
/// 2. Its bounds (`index::segment_bounds`): two loads of the offsets (or `s × cols`, no load,
///    for rows).
/// 3. `thread_fold_v128` with rank = the lane's rank, `lanes` ranks: the unaligned head,
///    128-bit loads of the body (a lane's last loads, fewer than four, issued together:
///    [`LAST_TRIP`]), the tail; element `i` is index `i` of the segment.
/// 4. `Fold::logical_warp` (`log2(lanes)` `shfl.down` steps, every lane of the warp taking
///    part; for argmin/argmax the index moves with the value); each group's first lane writes
///    `g_values[s]` (and `g_indices[s]`). An empty segment writes the identity (and index
///    `u32::MAX`).
/// 5. The warp moves on by the grid's segments per trip, while its first segment exists.
///
/// A segment longer than `max_len` is passed over: its `g_values[s]` is left for another
/// launch (the host's split plan gives short segments to this kernel and long ones to
/// [`segmented_tiles_generic`](super::segmented_tiles_generic) on the same stream; `u32::MAX`:
/// every segment is this kernel's).
///
/// ```text
///  lanes = 8        offsets  0     3          40 40      97
///  lanes  0- 7      [x x x]                          ranks 0-2 one element each → out[0]
///  lanes  8-15            [x x … x x]                8 ranks share 37 elements  → out[1]
///  lanes 16-23                        []             empty: identity            → out[2]
///  lanes 24-31                           [x … x]     57 elements                → out[3]
/// ```
///
/// # Launch
/// Any grid (a grid-stride loop over the segments; the host gives `⌈segments / (warps per
/// block × 32/lanes)⌉` blocks), block a multiple of 32 in 32..=1024, no shared memory.
///
/// # Preconditions
/// `g_offsets` holds `segments + 1` nondecreasing offsets with `offsets[segments] ≤` the
/// elements of `g_idata`, or is null and `g_idata` holds `segments × cols ≤ u32::MAX` elements
/// (rows); `g_idata` is `T`-aligned; `g_values` (and, for argmin/argmax, `g_indices`) hold
/// `segments` elements; `lanes` is a power of two in 4..=32 (`thread_fold_v128` gives the
/// unaligned head and tail, up to three elements each, a rank per element); the grid holds at
/// most 2^29 threads. Any `max_len`.
///
/// # Safety
/// The pointers are valid device memory of those lengths, and nothing writes the input or the
/// offsets during the kernel. Every lane of a warp takes the same trips (the loop's bound and
/// step are the warp's first segment, uniform in the warp), and a lane whose segment is past
/// the last or passed over folds nothing but still shuffles, so every shuffle is reached by the
/// whole warp; there is no block barrier.
///
/// # Measured
/// NVIDIA H200, f32 over 2^26 elements, 2 interleaved rounds of 20 runs, every segment checked,
/// CUB `DeviceSegmentedReduce` on the same values in the same process
/// (`docs/measurements/2026-11-30-h200/last-trip-exp/`: `final.csv` of this form and
/// `exp2.csv`'s `v2` rows, the same code): 10^6 equal segments (67 elements, 4 lanes) summed in
/// 74.6 µs (76.9–77.0 % of the bound, 15.0× CUB), their argmax 73.7–74.4 µs (78.3–79.0 %,
/// 17.1–17.3× CUB); 10^5 equal (671, 16 lanes) 67.0–67.1 µs (83.3–83.5 %, 2.53–2.54× CUB);
/// with the split plan's tiles, 10^6 power-law 127.5–128.1 µs (44.8–45.0 %, 49× CUB); rows
/// 65536 × 256 (16 lanes) 20.1 µs (69.7 %, 3.9× CUB; one round: the call ran out of time).
/// Before [`LAST_TRIP`] (`segmented-0ca7385/library_ops.csv`, commit 0ca7385): f64, 10^6 equal
/// (8 lanes) 138.3–138.4 µs (82.4 %), not measured since. A whole warp per 67-element segment
/// (`--lanes 32`, as this kernel was before its logical warps) took 234.7–234.9 µs, 24.4 %
/// (`segmented-tiles-exp/exp_seg.csv`). The H100 figures of the whole-warp form
/// (`docs/measurements/2026-11-26-h100/library-ops-939a239/`) are of the kernel before: the
/// H100 was not lent since. Float minima since session 57 (PTX `min`/`max` beside a NaN
/// select; 32 registers instead of 38): 10^6 equal segments' f32 minima 74.9–75.1 µs
/// (76.5–76.7 %, 20.2–20.8× CUB) against 80.3–80.5 before, in the same 2 rounds
/// (`docs/measurements/2026-12-01-h200/session57/`, `r57a/ab/ab.csv` and `r57b/ab/ab.csv`).
#[inline(always)]
pub unsafe fn segmented_warp_generic<T: Element, F: Fold<T>>(
    g_idata: Global<T>,
    g_offsets: Global<u32>,
    cols: u32,
    segments: u32,
    max_len: u32,
    lanes: u32,
    g_values: GlobalMut<T>,
    g_indices: GlobalMut<u32>,
) {
    let (group, rank) = logical_lane(lane_id(), lanes);
    let per_warp = WARP_SIZE / lanes;
    let per_block = block_dim_x() / WARP_SIZE * per_warp;
    let step = grid_dim_x() * per_block;
    let mut first = block_idx_x() * per_block + warp_id() * per_warp;
    while first < segments {
        let s = first + group;
        let mut mine = F::identity();
        let mut owned = false;
        if s < segments {
            // SAFETY: s < segments: offsets s and s + 1 exist (read only when there are offsets).
            let offset = |i: u32| unsafe { g_offsets.read(i as usize) };
            let (start, end) = segment_bounds(s, cols, offset, g_offsets.is_null());
            owned = end - start <= max_len;
            if owned {
                // SAFETY: start..end lies within the input (the offsets' precondition); rank < lanes.
                mine = unsafe {
                    thread_fold_v128::<T, F>(g_idata.offset(start as usize), end - start, 0, rank, lanes, LAST_TRIP)
                };
            }
        }
        let total = F::logical_warp(mine, lanes);
        if owned && rank == 0 {
            // SAFETY: s < segments, the outputs' length.
            unsafe { F::store(g_values, g_indices, s as usize, total) };
        }
        first += step;
    }
}
