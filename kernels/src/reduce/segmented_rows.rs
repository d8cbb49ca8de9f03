use crate::collective::block::{BLOCK_SUM_SLOTS, BLOCK_SUM_SMEM_BYTES, block_reduce_smem_bytes};
use crate::collective::fold::{Fold, FoldSlots};
use crate::collective::thread::{LastTrip, thread_fold_vectors};
use crate::device::global::{Global, GlobalMut};
use crate::device::thread::{block_dim_x, block_idx_x, thread_idx_x};
use crate::index::row_start;
use crate::types::Element;
use crate::{fold_kernel, static_shared};

/// Static shared memory of `segmented_rows__{type}_{fold}` per block: one value and one `u32`
/// index per warp of the largest block.
pub const fn segmented_rows_shared_bytes<T>() -> u32 {
    block_reduce_smem_bytes::<T>() + BLOCK_SUM_SMEM_BYTES
}

fold_kernel!(segmented_rows = segmented_rows_generic(
    g_idata: Global<T>,
    cols: u32,
    g_values: GlobalMut<T>,
    g_indices: GlobalMut<u32>
));

/// Segmented reduction of **the rows of a matrix, a block per row**: `out[r]` = the fold of row
/// `r` of a row-major matrix whose rows start 16-byte aligned (`torch.sum(x, dim=-1)`,
/// `cub::DeviceSegmentedReduce` with offsets `r × cols`). Instantiated by `fold_kernel!` as
/// `segmented_rows__{type}_{sum|min|max|argmin|argmax}`.
///
/// # Concept
/// **A short block's bookkeeping is paid once per block.** A block that reads one 16 KiB row
/// lives a few microseconds beside seven others on its SM; the instructions it runs besides its
/// loads and its fold (finding its segment, its bounds, an unaligned head and tail) delay its
/// own loads and take issue slots from its neighbours', and a grid of four thousand such blocks
/// pays them four thousand times. Where the layout makes the bounds arithmetic (row `r` starts
/// at `r × cols`) and the alignment a precondition, a block goes from its index to its loads in
/// a few instructions.
///
/// # Previous problem → fix
/// [`segmented_tiles_generic`](super::segmented_tiles_generic) serves every layout: a division
/// for the row's block, a table or offsets, 64-bit tile bounds, a head and a tail for unaligned
/// segments, the last-block protocol. On the rows of 4096 × 4096 `f32` its warps executed 196
/// instructions each against `cub::DeviceSegmentedReduce`'s 94, with the same registers,
/// occupancy and DRAM bytes (ncu, NVIDIA H200, `docs/measurements/2026-11-30-h200/segmented-rows/`),
/// and its sums ran at 0.94× CUB's speed. Here row `r` is block `r`, its start `r × cols`
/// (`index::row_start`), every vector aligned (the precondition): the block folds
/// `cols / PER_128` vectors (`thread_fold_vectors`, no head, no tail), reduces, and thread 0
/// writes `out[r]`: 84.6 instructions a warp.
///
/// # Execution
/// 1. Block `r` takes row `r`: elements `r × cols .. (r + 1) × cols`.
/// 2. `thread_fold_vectors` with rank = `threadIdx.x`: four 128-bit loads a trip while a whole
///    trip is left, the last ones together ([`LastTrip::AtOnce`]) for sums, minima and maxima,
///    one at a time for argmin and argmax (their registers); element `i` of the row is index `i`.
/// 3. `Fold::block` (warp shuffles, one slot pair per warp); thread 0 writes `out[r]`.
///
/// ```text
///  row 0  |v0 v1 … v255|v256 … v511|…|   block 0: thread t reads v_t, v_{t+256}, v_{t+512}, v_{t+768}
///  row 1  |v0 v1 … v255|v256 … v511|…|   block 1
/// ```
///
/// # Launch
/// Grid = rows, block a power of two in 32..=1024, [`segmented_rows_shared_bytes`]`::<T>()`
/// bytes of static shared memory.
///
/// # Preconditions
/// `g_idata` holds `gridDim.x × cols` elements (at most `u32::MAX`) and is 16-byte aligned, and
/// `cols` is a multiple of `T::PER_128` (so every row starts 16-byte aligned); `g_values` and
/// `g_indices` hold `gridDim.x` elements (`g_indices` only written by argmin and argmax).
///
/// # Safety
/// Row `r`'s vectors lie within the input (`(r + 1) × cols ≤ gridDim.x × cols`) and are
/// aligned (the preconditions); thread 0 writes `out[r]`, `r < gridDim.x`. The one barrier
/// (`Fold::block`) is reached by every thread: nothing before it depends on the thread.
///
/// # Measured
/// NVIDIA H200, 2^24 elements, block 256, CUB `DeviceSegmentedReduce` on the same values in the
/// same process, every segment of both checked, the tiles (8633862) and this kernel (92fdd21)
/// run in turn (`docs/measurements/2026-11-30-h200/segmented-rows/ab.csv`, 2 rounds, and
/// `ab-tree.csv`, 2 more of this kernel): 4096 × 4096 `f32` sums 18.67–18.83 µs (74.0–74.7 % of
/// the bound; tiles 19.95–19.97), **0.996–1.006× CUB** (18.70–18.78 µs: a tie; tiles
/// 0.938–0.941×); 2048 × 8192 `f32` sums 18.80–18.93 µs, 0.997–1.009× (tiles 0.947–0.960×);
/// 8192 × 2048 `f32` sums 18.62–18.70 µs, 1.478–1.483×; 4096 × 4096 `i32` maxima 18.29–18.42
/// µs, 1.017–1.024× (tiles 0.958–0.969×), `f64` sums 33.06–33.28 µs, 1.003–1.013×, `f32`
/// argmax 19.46–19.54 µs, 1.038–1.039× (2 rounds).
///
/// **By type and operator** (NVIDIA H200, 9246fd6, 4096 × 4096, 2 rounds, CUB in every row,
/// every row PASS: `docs/measurements/2026-12-02-h200/session58/r58a/rows.csv`): the 32-bit
/// integer rows run in 18.45–18.74 µs whatever the operator (`i32` sums 1.027–1.035× CUB,
/// `u32` sums 1.026–1.029×, `i32` minima 1.013–1.022×, maxima 1.003–1.023×) and the `f32` rows
/// in 18.83–18.99 (minima 1.017–1.031×, maxima 1.019×): the `f32` instances 2 % behind the
/// integer ones whatever the operator. CUB's `f32` sum is its fastest row (18.82–18.85 µs, its
/// `f32` minima and maxima 19.28–19.42), so there the two meet: **0.992× CUB in both rounds**
/// (18.98–18.99 µs); `f64` sums 33.57–33.73 µs, 0.997–1.003×. Not the fold's length (session
/// 47's tree fold did not help) nor registers (30–32 for all); not explained.
///
/// **Session 59** (NVIDIA H200, `docs/measurements/2026-12-02-h200/session59/`, 2 rounds, CUB in
/// every row): the same `f32` sums at 18.83–18.99 µs, **1.000–1.003× CUB** (18.88–18.99) at the
/// plan's block of 256 (`r59b/rows_block.csv`): the two meet, a tie. No block does better:
/// 128 threads 18.93–19.04 µs (0.996–1.007×), 512 18.82–19.01 (0.996–1.009×), 1024 25.47–25.49
/// (0.74×); 8192 × 2048 at 512 23.1–23.2 µs against 18.8–18.9 at 256. Raking the block's
/// partials (`exp/rows-raking`: a slot per thread, warp 0 folds 32 slots) was 0.3–1.4 % slower
/// for `f32` sums and maxima (a tie at 65536 × 256; `r59a/rake/ab.csv`): not kept. `f32` argmax
/// since session 59's `Arg` change 19.46–19.65 µs (1.034–1.048×; `r59b/arg3/ab.csv`, `r59c/two/ab.csv`); since session 60's (the
/// index as `min(held, new)`) 19.4–19.5 µs, 1.049–1.055×, against main's 19.5 µs (1.039–1.045×)
/// in the same 3 rounds (`session60/r60b/lean/ab.csv`, `r60c/lean/ab.csv`): a tie.
///
/// **Session 61, by shape** (NVIDIA H200, b868866, 2^24 elements, 3 rounds, CUB in every row,
/// every row PASS: `docs/measurements/2026-12-02-h200/session61/r61f/tail/ab.csv`): `f32` sums
/// against `i32` sums at 2048 × 8192 19.02–19.14 µs against 18.56–18.59 (`f32` 1.004–1.006× CUB),
/// 4096 × 4096 18.91–19.02 against 18.48–18.56 (0.992–1.004×), 8192 × 2048 18.83–18.94 against
/// 18.54–18.58 (1.447–1.455×). Were the `f32` rows' 2 % their block's tail (five shuffles a
/// round where the integers run one `redux.sync`), the gap would grow with the rows for the same
/// bytes; it does not (+2.5 to +3.0 %, +2.3 %, +1.6 to +1.9 %), so the tail alone is not it.
#[inline(always)]
pub unsafe fn segmented_rows_generic<T: Element, F: Fold<T>>(
    g_idata: Global<T>,
    cols: u32,
    g_values: GlobalMut<T>,
    g_indices: GlobalMut<u32>,
) {
    let slots = FoldSlots {
        values: static_shared!(SEGMENTED_ROWS_VALUES: [T; BLOCK_SUM_SLOTS]),
        indices: static_shared!(SEGMENTED_ROWS_INDICES: [u32; BLOCK_SUM_SLOTS]),
    };
    let (r, tid) = (block_idx_x(), thread_idx_x());
    let last_trip = if F::INDEXED { LastTrip::OneByOne } else { LastTrip::AtOnce };
    // SAFETY: row r lies within the input (r < gridDim.x), its start 16-byte aligned and its
    // cols / PER_128 vectors whole (the preconditions); tid < blockDim.x ≤ 1024.
    let mine = unsafe {
        let row = g_idata.offset(row_start(r, cols));
        thread_fold_vectors::<T, F>(
            F::identity(),
            row.cast::<u32>(),
            cols / T::PER_128 as u32,
            0,
            tid,
            block_dim_x(),
            last_trip,
        )
    };
    // SAFETY: every thread of the block gets here; the block is whole warps, at most 1024.
    let total = unsafe { F::block(mine, slots) };
    if tid == 0 {
        // SAFETY: r < gridDim.x, the outputs' length.
        unsafe { F::store(g_values, g_indices, r as usize, total) };
    }
}
