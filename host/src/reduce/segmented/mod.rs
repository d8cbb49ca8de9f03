//! Many reductions in one launch: [`SegmentedReducer`] over [`Segments`] — CSR offsets
//! (`cub::DeviceSegmentedReduce`) or the rows of a row-major matrix (`torch.sum(x, dim=-1)`) —
//! for sums, minima and maxima ([`reduce`](SegmentedReducer::reduce)) and argmins and argmaxes
//! ([`arg_reduce`](SegmentedReducer::arg_reduce)), every element type.
//!
//! ```
//! use reduce_scan::{Backend, Max, SegmentedReducer, Segments, Sum};
//! let backend = Backend::emulator(); // Backend::gpu()? on a GPU host
//! let data = backend.upload(&[1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0])?;
//! let segments = Segments::from_offsets(&backend, &[0, 2, 2, 6])?; // [1, 2], [], [3, 4, 5, 6]
//! let mut sums = backend.alloc::<f32>(segments.count())?;
//! SegmentedReducer::<f32, Sum>::new(&backend).reduce(&data, &segments, &mut sums)?;
//! assert_eq!(backend.download(&sums)?, [3.0, 0.0, 18.0]); // an empty segment: the identity
//!
//! let rows = Segments::rows(2, 3)?; // a 2 × 3 matrix, row-major: its rows
//! let (mut top, mut at) = (backend.alloc::<f32>(2)?, backend.alloc::<u32>(2)?);
//! SegmentedReducer::<f32, Max>::new(&backend).arg_reduce(&data, &rows, &mut top, &mut at)?;
//! assert_eq!((backend.download(&top)?, backend.download(&at)?), (vec![3.0, 6.0], vec![2, 2]));
//! # Ok::<(), reduce_scan::Error>(())
//! ```
//!
//! **What it answers.** `out[s]` = the reduction of segment `s` with the rules of the
//! whole-buffer ones (integer sums wrap; float min/max propagate NaN, −0.0 < +0.0; float sums
//! within the bound of the kernel's tree); argmin/argmax the rules of
//! [`ArgReducer`](super::arg::ArgReducer), the index **within the segment** (as CUB and
//! `torch.argmax(dim=-1)` give it). An empty segment gives the identity (0, the type's largest
//! or smallest value), and for argmin/argmax the value the identity and the index [`NO_INDEX`]
//! (`u32::MAX`: no element).
//!
//! **Bad segments** are refused in one line ([`Error::Invalid`]) before any launch: offsets
//! that decrease, no offsets at all, a last offset past the input, an output shorter than the
//! segments, a matrix whose `rows × cols` is not the input's length.
//!
//! **The plan** ([`Strategy::choose`]; for a matrix, [`Strategy::for_rows`]), from the
//! lengths, once per [`Segments`]: a logical warp per segment where the longest segment is short (at most [`WARP_MAX`] elements: `lanes` lanes
//! read it in 128-bit loads, with shuffles and no barrier, [`lanes_for`] of their mean length
//! (4 to 16; 32 on request), so that a warp serves `32 / lanes` segments at once); a block per segment where
//! every segment fits one tile ([`TILE`] elements: for the rows of a matrix whose columns are
//! a multiple of [`ROW_VECTOR`], a kernel of its own, [`Strategy::BlockPerRow`]); otherwise every segment cut into tiles (of
//! [`tile_for`] the device: larger on an H200), a block each, and the last
//! block of each segment combining its tiles (a device-wide pass over few long or skewed segments:
//! every block does the same work, whatever the lengths). Where at least [`SPLIT_MIN_SHORT`]
//! short segments sit beside longer ones, the work is split: a warp for each short segment, then
//! tiles for the others, two launches ([`Strategy::Split`]). Kernels `segmented_warp__{type}_{fold}`,
//! `segmented_tiles__{type}_{fold}` and `segmented_rows__{type}_{fold}`, one body each for the five folds.

use std::marker::PhantomData;

use kernels::types::Sum;

use super::arg::ExtremeKind;
use super::one_pass::{DEFAULT_BLOCK, check_block};
use crate::backend::{Backend, DeviceBuffer, Kernel, LaunchConfig};
use crate::error::{Error, Result};
use crate::types::{Op, OpKind, PerElement, PerType, Value, check_layout};

/// Elements of one tile of `segmented_tiles`: what one block folds (the rows' tile on every
/// device, and CSR segments' where [`TILE_BY_DEVICE`] names no other).
pub const TILE: u32 = 8192;
/// CSR segments' tile by device (a part of its name), where it is not [`TILE`]. NVIDIA H200,
/// f32 sums over 2^26 elements, the same values for each tile, two interleaved rounds each
/// (`docs/measurements/2026-11-30-h200/segmented-tiles-exp/`): tiles of 16384 against 8192,
/// 10 segments 69.2–69.4 µs against 72.4–72.6, 1000 equal 71.0–71.4 against 77.0–77.2 (CUB
/// 72.0–72.5), 1000 power-law 71.4–71.7 against 77.3–77.7, 10^6 power-law (the split plan's
/// tiles) 132.0–132.7 against 143.8; 32768 no better (72.3–72.5 at 1000 equal). The H100's 8192
/// was not swept against larger tiles.
pub const TILE_BY_DEVICE: &[(&str, u32)] = &[("H200", 16_384)];

/// The tile of CSR segments on the device called `device`: [`TILE_BY_DEVICE`]'s, else [`TILE`].
pub fn tile_for(device: &str) -> u32 {
    TILE_BY_DEVICE.iter().find(|(name, _)| device.contains(name)).map_or(TILE, |&(_, tile)| tile)
}
/// The longest segment a warp is given (`segmented_warp`).
pub const WARP_MAX: u32 = 1024;
/// 128-bit loads a lane of `segmented_warp` has in flight at once (`thread_fold_v128`'s trip).
const LOADS_PER_LANE: u64 = kernels::collective::thread::LOADS_PER_TRIP as u64;

/// The fewest lanes per segment: `thread_fold_v128` gives a segment's unaligned head and tail
/// (up to three elements each) a lane per element.
pub const MIN_LANES: u32 = 4;
/// The most lanes the plan gives a segment: every warp then serves at least two segments (16
/// lanes were 2.5 % faster than 32 on 671-element segments, `lanes_for`'s figures).
pub const MAX_LANES: u32 = 16;

/// Lanes of the logical warp that takes each segment of `segmented_warp`, for segments of
/// `mean` elements, `per` to a 128-bit load: the most lanes (a power of two in
/// [`MIN_LANES`]..=[`MAX_LANES`]) that still each have one trip of their four 128-bit loads
/// (`lanes × 4 × per ≤ mean`). Fewer lanes per segment put more segments' loads in flight in
/// each warp. NVIDIA H200, sums over 2^26 elements, two interleaved rounds
/// (`docs/measurements/2026-11-30-h200/segmented-tiles-exp/`): 10^6 equal f32 segments (67
/// elements) 4 lanes 74.2–74.6 µs, 8 92.9, 16 128.3–128.4, 32 234.7–234.9; f64, 8 lanes
/// 136.5 against 4 lanes 149.1–149.3 (`segmented-0ca7385/`); 10^5 f32 (671) 8 lanes 72.1–72.3,
/// 16 70.3–70.5, 32 72.1–72.2; rows of 256: 8 and 16 lanes 19.9–20.1, 4 22.3–22.4, 32 21.2–21.4.
pub fn lanes_for(mean: u64, per: u32) -> u32 {
    let fit = (mean / (LOADS_PER_LANE * per.max(1) as u64)).clamp(MIN_LANES as u64, MAX_LANES as u64);
    1 << fit.ilog2()
}
/// The fewest short segments (at most [`WARP_MAX`] elements) beside long ones (over [`TILE`]…
/// or over `WARP_MAX`) for which the plan splits the work ([`Strategy::Split`]) rather than
/// giving every segment a block: below it, a block each costs less than a second launch.
pub const SPLIT_MIN_SHORT: usize = 4096;
/// The index of an empty segment's argmin or argmax: no element.
pub const NO_INDEX: u32 = u32::MAX;

/// How a [`Segments`] is reduced.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Strategy {
    /// A warp per segment (`segmented_warp`): the longest segment is at most [`WARP_MAX`].
    WarpPerSegment,
    /// A block per segment (`segmented_tiles`, one tile each): every segment fits a [`TILE`].
    BlockPerSegment,
    /// A block per row of a matrix (`segmented_rows`): rows of more than [`WARP_MAX`] and at
    /// most [`TILE`] columns, a multiple of [`ROW_VECTOR`] (so every row starts 16-byte
    /// aligned for every element type).
    BlockPerRow,
    /// Blocks per segment in proportion to its length (`segmented_tiles` with its table).
    DeviceWide,
    /// Many short segments beside long ones: the short ones a warp each (`segmented_warp`,
    /// passing over the long ones), then the others in tiles (`segmented_tiles`, its table
    /// giving the short ones no block): two launches on one stream.
    Split,
}

impl Strategy {
    /// The strategy for segments whose longest holds `max_len` elements, `short` of them at
    /// most [`WARP_MAX`].
    pub fn choose(max_len: u32, short: usize) -> Strategy {
        if max_len <= WARP_MAX {
            Strategy::WarpPerSegment
        } else if short >= SPLIT_MIN_SHORT {
            Strategy::Split
        } else if max_len <= TILE {
            Strategy::BlockPerSegment
        } else {
            Strategy::DeviceWide
        }
    }

    /// The strategy for the rows of a matrix of `cols` columns: [`choose`](Self::choose)'s for
    /// segments of that length, except that a block per segment becomes a block per row
    /// ([`Strategy::BlockPerRow`]) where `cols` is a multiple of [`ROW_VECTOR`].
    pub fn for_rows(cols: u32) -> Strategy {
        match Strategy::choose(cols, 0) {
            Strategy::BlockPerSegment if cols.is_multiple_of(ROW_VECTOR) => Strategy::BlockPerRow,
            other => other,
        }
    }

    /// Its name in reports (`warp_per_segment`, …).
    pub fn name(self) -> &'static str {
        match self {
            Strategy::WarpPerSegment => "warp_per_segment",
            Strategy::BlockPerSegment => "block_per_segment",
            Strategy::BlockPerRow => "block_per_row",
            Strategy::DeviceWide => "device_wide",
            Strategy::Split => "warps_and_tiles",
        }
    }
}

/// Where the segments are: CSR offsets on the device (and the host), or the rows of a matrix.
enum Layout {
    Csr { host: Vec<u32>, offsets: DeviceBuffer<u32>, first: Option<DeviceBuffer<u32>>, blocks: u32 },
    Rows { cols: u32 },
}

/// The segments of a segmented reduction, checked and planned once: CSR offsets
/// ([`from_offsets`](Self::from_offsets)) or the rows of a row-major matrix
/// ([`rows`](Self::rows)). Reuse it for every input with the same segments.
pub struct Segments {
    count: u32,
    end: u32,
    max_len: u32,
    /// The mean length of the segments `segmented_warp` takes (the short ones of a split).
    warp_mean: u64,
    /// Lanes per segment asked by [`with_lanes`](Self::with_lanes), else [`lanes_for`].
    lanes: Option<u32>,
    /// Elements per block of `segmented_tiles` ([`tile_for`] the device, or [`TILE`] for rows).
    tile: u32,
    strategy: Strategy,
    layout: Layout,
}

impl Segments {
    /// `offsets.len() − 1` segments, segment `s` the elements `offsets[s]..offsets[s + 1]` of the
    /// input (CSR; the first offset need not be 0). The offsets must not decrease (equal
    /// neighbours are an empty segment); they are uploaded to `backend`, with the table of
    /// blocks the plan needs (tiles of [`tile_for`] its device).
    pub fn from_offsets(backend: &Backend, offsets: &[u32]) -> Result<Self> {
        let Some(&last) = offsets.last() else {
            return Err(Error::Invalid(
                "no offsets: segments need at least one offset (segments + 1 of them; [0] is no segment)".into(),
            ));
        };
        if offsets.len() - 1 > u32::MAX as usize - 1 {
            return Err(Error::Invalid(format!("{} segments; at most {}", offsets.len() - 1, u32::MAX - 1)));
        }
        if let Some(s) = offsets.windows(2).position(|w| w[1] < w[0]) {
            return Err(Error::Invalid(format!(
                "offsets decrease at segment {s}: offsets[{s}] = {}, offsets[{}] = {}; they must not decrease",
                offsets[s],
                s + 1,
                offsets[s + 1]
            )));
        }
        let max_len = offsets.windows(2).map(|w| w[1] - w[0]).max().unwrap_or(0);
        let short = offsets.windows(2).filter(|w| w[1] - w[0] <= WARP_MAX).count();
        let strategy = Strategy::choose(max_len, short);
        let short_elements: u64 =
            offsets.windows(2).map(|w| (w[1] - w[0]) as u64).filter(|&l| l <= WARP_MAX as u64).sum();
        let warp_mean = short_elements / short.max(1) as u64;
        let count = (offsets.len() - 1) as u32;
        let tile = tile_for(&backend.info().name);
        let (first, blocks) = match strategy {
            Strategy::DeviceWide | Strategy::Split => {
                let table = first_blocks(offsets, strategy == Strategy::Split, tile)?;
                let blocks = *table.last().unwrap_or(&0);
                (Some(backend.upload(&table)?), blocks)
            }
            _ => (None, count),
        };
        let layout = Layout::Csr { host: offsets.to_vec(), offsets: backend.upload(offsets)?, first, blocks };
        Ok(Self { count, end: last, max_len, warp_mean, lanes: None, tile, strategy, layout })
    }

    /// The `rows` rows of a row-major `rows × cols` matrix (batched rows: `x.sum(dim=-1)`); no
    /// device memory. `rows × cols` must be at most `u32::MAX`.
    pub fn rows(rows: usize, cols: usize) -> Result<Self> {
        let total = rows.checked_mul(cols).filter(|&t| t <= u32::MAX as usize);
        let Some(total) = total.filter(|_| rows < u32::MAX as usize) else {
            return Err(Error::Invalid(format!(
                "a {rows} × {cols} matrix: rows × cols must be at most {} (the kernels' 32-bit lengths)",
                u32::MAX
            )));
        };
        let cols = cols as u32;
        let strategy = Strategy::for_rows(cols);
        Ok(Self {
            count: rows as u32,
            end: total as u32,
            max_len: cols,
            warp_mean: cols as u64,
            lanes: None,
            tile: TILE,
            strategy,
            layout: Layout::Rows { cols },
        })
    }

    /// Segments (rows).
    pub fn count(&self) -> usize {
        self.count as usize
    }

    /// The elements the input must hold: the last offset (rows × cols, exactly, for rows).
    pub fn end(&self) -> usize {
        self.end as usize
    }

    /// Are they the rows of a matrix?
    pub fn is_rows(&self) -> bool {
        matches!(self.layout, Layout::Rows { .. })
    }

    /// The longest segment.
    pub fn max_len(&self) -> usize {
        self.max_len as usize
    }

    /// How they are reduced.
    pub fn strategy(&self) -> Strategy {
        self.strategy
    }

    /// The same segments with `lanes` lanes per segment in `segmented_warp` (a power of two in
    /// [`MIN_LANES`]..=32) rather than the plan's [`lanes_for`], for experiments and tests: the answers are
    /// the same at every width (float sums: within the bound).
    pub fn with_lanes(self, lanes: u32) -> Result<Self> {
        if !(lanes.is_power_of_two() && (MIN_LANES..=32).contains(&lanes)) {
            return Err(Error::Invalid(format!(
                "{lanes} lanes per segment: a power of two in {MIN_LANES}..=32 (a segment's unaligned head takes up to 3)"
            )));
        }
        Ok(Self { lanes: Some(lanes), ..self })
    }

    /// Lanes per segment of `segmented_warp` for elements `per` to a 128-bit load.
    pub fn lanes(&self, per: u32) -> u32 {
        self.lanes.unwrap_or_else(|| lanes_for(self.warp_mean, per))
    }

    /// Segment `s`'s elements `start..end` (host side; `s < count`).
    pub fn bounds(&self, s: usize) -> (usize, usize) {
        match &self.layout {
            Layout::Csr { host, .. } => (host[s] as usize, host[s + 1] as usize),
            Layout::Rows { cols } => (s * *cols as usize, (s + 1) * *cols as usize),
        }
    }

    /// Blocks of the launch at `block` threads for elements `per` to a 128-bit load (the warp
    /// kernel: [`warp_grid`](Self::warp_grid); the split plan: of its tiles launch).
    pub fn grid(&self, block: u32, per: u32) -> u32 {
        match (&self.layout, self.strategy) {
            (_, Strategy::WarpPerSegment) => self.warp_grid(block, per),
            (_, Strategy::BlockPerRow) => self.count,
            (Layout::Csr { blocks, .. }, _) => (*blocks).max(1),
            (Layout::Rows { cols }, _) => self.count * per_row(*cols, self.tile),
        }
    }

    /// Blocks of a `segmented_warp` launch at `block` threads: `⌈segments / (warps per block ×
    /// 32 / lanes)⌉`, [`lanes`](Self::lanes) of `per`.
    pub fn warp_grid(&self, block: u32, per: u32) -> u32 {
        self.count.div_ceil(block / 32 * (32 / self.lanes(per))).max(1)
    }

    /// Is segment `s` a warp's (rather than tiles')?
    fn warps_own(&self, len: u64) -> bool {
        match self.strategy {
            Strategy::WarpPerSegment => true,
            Strategy::Split => len <= WARP_MAX as u64,
            Strategy::BlockPerSegment | Strategy::BlockPerRow | Strategy::DeviceWide => false,
        }
    }

    /// The depth of the addition tree of segment `s` at `block` threads with `per` elements
    /// per 128-bit load (the `depth` of `cpu::float_sum_bound`): a lane's or thread's elements,
    /// the logical warp's levels (`log2(lanes)`), and for tiles five warp levels, five block
    /// levels and the last block's.
    pub fn depth(&self, s: usize, block: u32, per: u32) -> u64 {
        let (start, end) = self.bounds(s);
        let len = (end - start) as u64;
        let folded = |threads: u64, n: u64| n.div_ceil(threads * per as u64) * per as u64 + 2;
        if self.warps_own(len) {
            let lanes = self.lanes(per);
            return folded(lanes as u64, len) + lanes.ilog2() as u64;
        }
        if self.strategy == Strategy::BlockPerRow {
            return folded(block as u64, len) + 10;
        }
        let tiles = len.div_ceil(self.tile as u64).max(1);
        folded(block as u64, len.min(self.tile as u64)) + 10 + tiles.div_ceil(block as u64) + 10
    }
}

/// Columns of a row of [`Strategy::BlockPerRow`] are a multiple of this: four elements of 4
/// bytes, or two of 8, are one 16-byte vector, so every row of such a matrix starts aligned.
pub const ROW_VECTOR: u32 = 4;

/// Blocks per row of `cols` elements: one per `tile`, at least one.
fn per_row(cols: u32, tile: u32) -> u32 {
    cols.div_ceil(tile).max(1)
}

/// The first block of every segment (and the grid, last): a prefix sum of `max(1, ⌈len /
/// tile⌉)` (`split`: 0 for a segment of at most [`WARP_MAX`], a warp's), or an error where the
/// grid would pass `gridDim.x`'s limit.
fn first_blocks(offsets: &[u32], split: bool, tile: u32) -> Result<Vec<u32>> {
    let mut table = Vec::with_capacity(offsets.len());
    let mut at = 0u64;
    table.push(0);
    for w in offsets.windows(2) {
        let len = w[1] - w[0];
        at += if split && len <= WARP_MAX { 0 } else { len.div_ceil(tile).max(1) as u64 };
        if at > (1 << 31) - 1 {
            return Err(Error::Invalid(format!("{} segments need more than 2^31 − 1 blocks", offsets.len() - 1)));
        }
        table.push(at as u32);
    }
    Ok(table)
}

/// `segmented_warp__{type}_{fold}(input, offsets, cols, segments, max_len, lanes, values,
/// indices)`.
pub type WarpArgs<T> = (*const T, *const u32, u32, u32, u32, u32, *mut T, *mut u32);
/// `segmented_tiles__{type}_{fold}(input, offsets, cols, segments, first, per_row, tile,
/// partial values, partial indices, tickets, values, indices)`.
pub type TilesArgs<T> =
    (*const T, *const u32, u32, u32, *const u32, u32, u32, *mut T, *mut u32, *mut u32, *mut T, *mut u32);

/// `segmented_rows__{type}_{fold}(input, cols, values, indices)`.
pub type RowsArgs<T> = (*const T, u32, *mut T, *mut u32);

/// The three kernels of one type and fold: `segmented_warp`, `segmented_tiles`, `segmented_rows`.
#[derive(Clone, Copy, Debug)]
pub struct FoldKernels<T: Value> {
    /// A logical warp per segment.
    pub warp: Kernel<WarpArgs<T>>,
    /// Tiles: a block per segment, or blocks in proportion to its length.
    pub tiles: Kernel<TilesArgs<T>>,
    /// A block per aligned row.
    pub rows: Kernel<RowsArgs<T>>,
}

/// The segmented kernels of one type: a [`FoldKernels`] per fold (sum, min, max, argmin, argmax).
#[derive(Debug)]
pub struct ByFold;

impl PerElement for ByFold {
    type Of<T: Value> = [FoldKernels<T>; 5];
}

macro_rules! fold_kernels {
    ($t:ident $f:ident) => {
        FoldKernels {
            warp: crate::kernel_ref!(instance kernels::reduce::segmented_warp::$t::$f(a, o, c, s, m, l, v, i)),
            tiles: crate::kernel_ref!(instance kernels::reduce::segmented_tiles::$t::$f(
                a, o, c, s, f, r, t, pv, pi, k, v, i
            )),
            rows: crate::kernel_ref!(instance kernels::reduce::segmented_rows::$t::$f(a, c, v, i)),
        }
    };
}

/// The ninety entries, named as `kernels::fold_kernel!` names them.
macro_rules! segmented_kernels {
    ($($t:ident),*) => {
        PerType { $($t: [
            fold_kernels!($t sum), fold_kernels!($t min), fold_kernels!($t max), fold_kernels!($t argmin), fold_kernels!($t argmax),
        ]),* }
    };
}

/// Every segmented kernel, by element type and fold.
pub static KERNELS: PerType<ByFold> = segmented_kernels!(i32, u32, i64, u64, f32, f64);

/// The kernels of `T` for `op` (`indexed`: its argument, argmin or argmax).
pub fn kernels<T: Value>(op: Op, indexed: bool) -> Result<FoldKernels<T>> {
    let at = match (op, indexed) {
        (Op::Sum, false) => 0,
        (Op::Min, false) => 1,
        (Op::Max, false) => 2,
        (Op::Min, true) => 3,
        (Op::Max, true) => 4,
        _ => return Err(Error::Invalid(format!("no segmented {}{}", if indexed { "arg" } else { "" }, op.name()))),
    };
    Ok(T::of(&KERNELS)[at])
}

mod run;
pub use run::SegmentedReducer;

/// A one-shot [`SegmentedReducer`]`<T, Sum>`: the sum of every segment into `out`.
pub fn segmented_sum<T: Value>(
    backend: &Backend,
    input: &DeviceBuffer<T>,
    segments: &Segments,
    out: &mut DeviceBuffer<T>,
) -> Result<()> {
    SegmentedReducer::<T, Sum>::new(backend).reduce(input, segments, out)
}

/// Does the device's answer for every segment pass against the CPU? `values` (and, for
/// argmin/argmax, `indices`) as downloaded; sums against [`cpu::check`](crate::cpu::check) with
/// each segment's depth at `block` (`None`: any order of additions, depth the segment's
/// length, for another library's answer), min/max exactly, arguments against
/// [`cpu::check_arg`](crate::cpu::check_arg) (an empty segment: the identity and [`NO_INDEX`]).
/// `Err` names the first wrong segment, its bounds, expected and actual.
pub fn check_all<T: Value>(
    op: Op,
    data: &[T],
    segments: &Segments,
    values: &[T],
    indices: Option<&[u32]>,
    block: Option<u32>,
) -> std::result::Result<(), String> {
    let per = <T as kernels::types::Element>::PER_128 as u32;
    for s in 0..segments.count() {
        let (start, end) = segments.bounds(s);
        let part = &data[start..end];
        let at = |why: String| format!("segment {s} ({start}..{end}, {}): {why}", segments.strategy().name());
        match indices {
            Some(indices) => {
                let got = (indices[s] != NO_INDEX).then_some((values[s], indices[s] as u64));
                crate::cpu::check_arg(op == Op::Min, part, got).map_err(at)?;
                if part.is_empty() && !values[s].same_bits(crate::types::identity(op)) {
                    return Err(at(format!("an empty segment's value is {}, not the identity", values[s])));
                }
            }
            None => {
                let depth = block.map_or(part.len() as u64, |b| segments.depth(s, b, per));
                crate::cpu::check(op, part, values[s], depth).map_err(at)?
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bad_offsets_and_matrices_are_one_line_errors() {
        let b = Backend::emulator();
        let e = |r: Result<Segments>| r.err().map(|e| e.to_string()).unwrap_or_default();
        assert_eq!(
            e(Segments::from_offsets(&b, &[0, 5, 3, 9])),
            "invalid request: offsets decrease at segment 1: offsets[1] = 5, offsets[2] = 3; they must not decrease"
        );
        assert!(e(Segments::from_offsets(&b, &[])).starts_with("invalid request: no offsets"));
        assert!(e(Segments::rows(1 << 20, 1 << 20)).contains("rows × cols must be at most 4294967295"));
        let s = Segments::from_offsets(&b, &[7]).unwrap();
        assert_eq!((s.count(), s.end()), (0, 7));
    }

    #[test]
    fn each_lane_gets_a_trip_of_four_loads() {
        // f32 (4 to a load): a lane's trip is 16 elements.
        let got: Vec<u32> = [0u64, 15, 16, 31, 32, 67, 128, 256, 511, 512, 671, 1024, 1 << 20]
            .iter()
            .map(|&mean| lanes_for(mean, 4))
            .collect();
        assert_eq!(got, [4, 4, 4, 4, 4, 4, 8, 16, 16, 16, 16, 16, 16]);
        assert_eq!((lanes_for(67, 2), lanes_for(671, 2)), (8, 16), "f64: two to a load");
        let e = |l| Segments::rows(2, 2).unwrap().with_lanes(l).err().map(|e| e.to_string());
        assert_eq!(
            e(3).as_deref(),
            Some(
                "invalid request: 3 lanes per segment: a power of two in 4..=32 (a segment's unaligned head takes up to 3)"
            )
        );
        assert!(e(64).is_some() && e(0).is_some() && e(2).is_some() && e(16).is_none());
    }

    #[test]
    fn the_plan_follows_the_longest_segment() {
        let b = Backend::emulator();
        assert_eq!(Segments::from_offsets(&b, &[0, 3, 3, 1024]).unwrap().strategy(), Strategy::WarpPerSegment);
        assert_eq!(Segments::from_offsets(&b, &[0, 5000, 6000]).unwrap().strategy(), Strategy::BlockPerSegment);
        let mut split: Vec<u32> = (0..SPLIT_MIN_SHORT as u32 + 1).map(|i| i * 3).collect();
        let short_end = *split.last().unwrap();
        split.push(short_end + 20_000);
        let split = Segments::from_offsets(&b, &split).unwrap();
        assert_eq!(split.strategy(), Strategy::Split);
        assert_eq!(split.lanes(4), 4, "segments of 3 elements: the fewest lanes");
        assert_eq!((split.grid(256, 4), split.warp_grid(256, 4)), (3, (SPLIT_MIN_SHORT as u32 + 1).div_ceil(64)));
        assert_eq!(Strategy::choose(5000, SPLIT_MIN_SHORT - 1), Strategy::BlockPerSegment);
        assert_eq!(Strategy::choose(1024, SPLIT_MIN_SHORT), Strategy::WarpPerSegment);
        assert_eq!(Strategy::for_rows(4096), Strategy::BlockPerRow);
        assert_eq!(Strategy::for_rows(4098), Strategy::BlockPerSegment);
        assert_eq!(Strategy::for_rows(256), Strategy::WarpPerSegment);
        assert_eq!(Strategy::for_rows(8196), Strategy::DeviceWide);
        let wide = Segments::from_offsets(&b, &[0, 20_000, 20_000, 20_001]).unwrap();
        assert_eq!((wide.strategy(), wide.grid(256, 4)), (Strategy::DeviceWide, 3 + 1 + 1));
        assert_eq!(first_blocks(&[0, 20_000, 20_000, 20_001], false, TILE).unwrap(), [0, 3, 4, 5]);
        assert_eq!(first_blocks(&[0, 20_000, 20_000, 20_001], true, TILE).unwrap(), [0, 3, 3, 3]);
        assert_eq!(first_blocks(&[0, 20_000, 20_000, 20_001], false, 16_384).unwrap(), [0, 2, 3, 4]);
        assert_eq!(
            (tile_for("NVIDIA H200"), tile_for("NVIDIA H100 80GB HBM3"), tile_for("CPU emulator")),
            (16_384, TILE, TILE)
        );
        let rows = Segments::rows(4096, 4096).unwrap();
        assert_eq!((rows.strategy(), rows.grid(256, 4)), (Strategy::BlockPerRow, 4096));
        // Rows not a multiple of four elements may start unaligned: the tiles take them.
        let rows = Segments::rows(100, 4098).unwrap();
        assert_eq!((rows.strategy(), rows.grid(256, 4)), (Strategy::BlockPerSegment, 100));
        let rows = Segments::rows(3, 8192).unwrap();
        assert_eq!((rows.strategy(), rows.grid(1024, 2)), (Strategy::BlockPerRow, 3));
        let rows = Segments::rows(65_536, 256).unwrap();
        assert_eq!((rows.strategy(), rows.lanes(4), rows.grid(256, 4)), (Strategy::WarpPerSegment, 16, 65_536 / 16));
        let rows = rows.with_lanes(32).unwrap();
        assert_eq!((rows.lanes(4), rows.grid(256, 4)), (32, 8192));
        let rows = Segments::rows(3, 100_000).unwrap();
        assert_eq!((rows.strategy(), rows.grid(256, 4)), (Strategy::DeviceWide, 3 * 13));
    }
}
