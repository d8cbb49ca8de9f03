//! The shapes of the two recursive scans on `n` elements: the levels of the reduce-then-scan
//! ([`blelloch_levels`]) and the strides of the Fenwick tree's build ([`bit_strides`]). Plain
//! functions, doctested.

use kernels::scan::index::bit_next_stride;
use kernels::scan::{BIT_SPAN, BLELLOCH_TILE};

/// One level of the reduce-then-scan recursion: `len` elements in `grid` tiles.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Level {
    /// Elements scanned at this level (n, then the tile sums of the level below, …).
    pub len: usize,
    /// Tiles (blocks) at this level; the last level has one.
    pub grid: usize,
}

/// The levels of a reduce-then-scan over `n ≥ 1` elements with 4096-element tiles.
///
/// ```
/// use reduce_scan::scan::{blelloch_levels, Level};
/// assert_eq!(blelloch_levels(4000), vec![Level { len: 4000, grid: 1 }]);
/// assert_eq!(blelloch_levels(4097), vec![Level { len: 4097, grid: 2 }, Level { len: 2, grid: 1 }]);
/// assert_eq!(blelloch_levels((1 << 24) + 7).len(), 3);
/// ```
pub fn blelloch_levels(n: usize) -> Vec<Level> {
    let tile = BLELLOCH_TILE as usize;
    let mut levels = vec![Level { len: n, grid: n.div_ceil(tile) }];
    while let Some(&Level { grid, .. }) = levels.last()
        && grid > 1
    {
        levels.push(Level { len: grid, grid: grid.div_ceil(tile) });
    }
    levels
}

/// The strides of the `bit_build` launches for `n ≥ 1` elements: 1, 2048, 2048², … while a
/// tree node needs them.
///
/// ```
/// use reduce_scan::scan::bit_strides;
/// assert_eq!(bit_strides(4000), vec![1]);
/// assert_eq!(bit_strides(4096), vec![1, 2048]);
/// assert_eq!(bit_strides(1 << 23), vec![1, 2048, 1 << 22]);
/// ```
pub fn bit_strides(n: usize) -> Vec<usize> {
    let mut strides = vec![1];
    while let Some(next) = bit_next_stride(n, *strides.last().unwrap(), BIT_SPAN as usize) {
        strides.push(next);
    }
    strides
}
