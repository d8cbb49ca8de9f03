//! Index arithmetic shared by the kernels, as plain functions unit-tested on the host.

/// How many of the `seg` elements starting at `start` exist in an array of `n`: the length
/// of a block's segment, short for the last block when `n` is not a multiple of `seg`.
///
/// ```
/// use reduce_scan_kernels::index::segment_len;
/// assert_eq!(segment_len(1000, 512, 512), 488);
/// assert_eq!(segment_len(1000, 0, 512), 512);
/// assert_eq!(segment_len(1000, 1024, 512), 0);
/// ```
#[inline(always)]
pub const fn segment_len(n: usize, start: usize, seg: usize) -> usize {
    if start >= n {
        0
    } else if n - start < seg {
        n - start
    } else {
        seg
    }
}

/// The segment block `block_idx` owns when every block owns `seg` elements of `0..n`: its
/// first element and how many of its elements exist, in the 32-bit unsigned arithmetic of the
/// book's kernels (`unsigned int idx = blockIdx.x * blockDim.x * 8 + …`). 32 bits keep every
/// comparison one instruction: the 64-bit `usize` form made the chapter-3 kernels execute up
/// to twice the instructions of their CUDA C twins (ncu on an H100, docs/parity.md).
/// `block_idx * seg` cannot overflow for a block of the launch (`grid = ceil(n / seg)`, so
/// `start < n ≤ u32::MAX`); for larger `block_idx` the product wraps and the length is
/// meaningless.
///
/// ```
/// use reduce_scan_kernels::index::block_segment;
/// assert_eq!(block_segment(1000, 1, 512), (512, 488));
/// assert_eq!(block_segment(1000, 0, 512), (0, 512));
/// assert_eq!(block_segment(u32::MAX, (u32::MAX / 4096), 4096).1, 4095);
/// ```
#[inline(always)]
pub const fn block_segment(n: u32, block_idx: u32, seg: u32) -> (u32, u32) {
    let start = block_idx.wrapping_mul(seg);
    let len = if start >= n {
        0
    } else if n - start < seg {
        n - start
    } else {
        seg
    };
    (start, len)
}

/// `ceil(a / b)` for `b > 0`.
#[inline(always)]
pub const fn div_ceil(a: usize, b: usize) -> usize {
    a.div_ceil(b)
}

/// The slot thread `tid` adds into at `stride` in `neighbored_less`: `2 * stride * tid`.
///
/// The working threads are then `tid = 0, 1, 2, …` (packed into the first warps), while the
/// slots they touch are the same as in `neighbored`, where thread `tid` works when
/// `tid % (2 * stride) == 0`:
///
/// ```text
///  stride 1:  tid   0  1  2  3  4  5  6  7   ->  slot  0  2  4  6  8 10 12 14
///  stride 2:  tid   0  1  2  3               ->  slot  0  4  8 12
///  stride 4:  tid   0  1                     ->  slot  0  8
/// ```
///
/// ```
/// use reduce_scan_kernels::index::neighbored_less_index;
/// assert_eq!(neighbored_less_index(3, 2), 12);
/// ```
#[inline(always)]
pub const fn neighbored_less_index(tid: u32, stride: u32) -> u32 {
    2 * stride * tid
}

/// Index, within its block's segment, of the `k`-th element thread `tid` folds in the
/// unrolled kernels' first phase: `tid + k * block`. Block `b` of an unroll-by-`N` kernel
/// owns the `N * block` elements from `b * N * block`; thread `tid` adds the elements
/// `tid`, `tid + block`, …, `tid + (N-1) * block` of that segment (one per data block, so
/// that a warp's loads of each `k` are consecutive).
///
/// ```
/// use reduce_scan_kernels::index::fold_index;
/// assert_eq!(fold_index(3, 128, 2), 259);
/// ```
#[inline(always)]
pub const fn fold_index(tid: u32, block: u32, k: u32) -> u32 {
    tid + k * block
}

/// How many of the `factor` elements of [`fold_index`] exist for thread `tid` in a segment
/// of `len` elements: the `k < factor` with `tid + k * block < len`. `factor` for a full
/// segment, fewer in the short last block, 0 for a thread past its end. No division, so no
/// divide-by-zero path in the PTX.
///
/// ```
/// use reduce_scan_kernels::index::fold_count;
/// assert_eq!(fold_count(1024, 128, 5, 8), 8); // full segment of unroll8 at block 128
/// assert_eq!(fold_count(300, 128, 5, 8), 3); // 5, 133, 261 exist
/// assert_eq!(fold_count(300, 128, 44, 8), 2); // 44, 172 (300 does not)
/// assert_eq!(fold_count(3, 128, 5, 8), 0);
/// ```
#[inline(always)]
pub const fn fold_count(len: u32, block: u32, tid: u32, factor: u32) -> u32 {
    let mut count = 0;
    while count < factor && fold_index(tid, block, count) < len {
        count += 1;
    }
    count
}

/// The contiguous chunk `[start, end)` of `0..n` that part `part` of `parts` owns when `n` is
/// cut into `parts` chunks of `ceil(n / parts)` elements (the sum-of-squares tutorial's
/// step 2, one chunk per thread). Every element belongs to exactly one part; when `parts`
/// does not divide `n`, the last owning part is short and the parts after it are empty
/// (`start == end == n`). `parts == 0` is treated as one part.
///
/// ```
/// use reduce_scan_kernels::index::chunk_bounds;
/// assert_eq!(chunk_bounds(10, 4, 0), (0, 3));
/// assert_eq!(chunk_bounds(10, 4, 3), (9, 10)); // chunks 3, 3, 3, 1
/// assert_eq!(chunk_bounds(2, 4, 3), (2, 2)); // nothing left for part 3
/// ```
#[inline(always)]
pub const fn chunk_bounds(n: usize, parts: usize, part: usize) -> (usize, usize) {
    let chunk = if parts == 0 { n } else { n.div_ceil(parts) };
    let start = if part.saturating_mul(chunk) < n { part * chunk } else { n };
    let end = if n - start < chunk { n } else { start + chunk };
    (start, end)
}

/// Bits of a tally word (`atomic_accumulate_to_host`) that count the blocks that have added:
/// the low 24, enough for any grid of the kernels (`gridDim.x × blockDim.x ≤ 2^29` and
/// `blockDim.x ≥ 32`, so at most 2^24 blocks, and the count read before the last add is at
/// most 2^24 − 1). The bits above hold the sum.
pub const TALLY_COUNT_BITS: u32 = 24;

/// What one block adds to a tally word: one to the count, its `i32` sum (as 32 unsigned bits)
/// to the sum above it. Nothing carries from the count into the sum while fewer than 2^24
/// blocks have added, and the sum's low 32 bits are the wrapping `i32` sum of the blocks'.
/// ```
/// use reduce_scan_kernels::index::{tally_add, tally_count, tally_sum};
/// let word = tally_add(-3).wrapping_add(tally_add(5)).wrapping_add(tally_add(i32::MAX));
/// assert_eq!((tally_count(word), tally_sum(word)), (3, 2i32.wrapping_add(i32::MAX)));
/// ```
#[inline(always)]
pub const fn tally_add(block_sum: i32) -> u64 {
    ((block_sum as u32 as u64) << TALLY_COUNT_BITS) | 1
}

/// The blocks counted in a tally word.
#[inline(always)]
pub const fn tally_count(word: u64) -> u32 {
    (word & ((1 << TALLY_COUNT_BITS) - 1)) as u32
}

/// The wrapping `i32` sum of the blocks counted in a tally word.
#[inline(always)]
pub const fn tally_sum(word: u64) -> i32 {
    (word >> TALLY_COUNT_BITS) as u32 as i32
}

/// The segment that block `block` serves when segment `s` is served by the blocks
/// `first(s)..first(s + 1)` (`first` nondecreasing, `first(0) ≤ block < first(segments)`): the
/// last `s < segments` with `first(s) ≤ block`, by binary search (`segmented_tiles`, where the
/// host gives every segment `⌈len / tile⌉` blocks, at least one).
///
/// ```
/// use reduce_scan_kernels::index::segment_of_block;
/// let first = [0u32, 3, 3, 4, 9]; // segments of 3, 0, 1 and 5 blocks
/// let at = |s: u32| first[s as usize];
/// assert_eq!([0, 2, 3, 4, 8].map(|b| segment_of_block(b, 4, at)), [0, 0, 2, 3, 3]);
/// ```
#[inline(always)]
pub fn segment_of_block(block: u32, segments: u32, first: impl Fn(u32) -> u32) -> u32 {
    // Invariant: first(lo) <= block, and the answer lies in lo..hi.
    let (mut lo, mut hi) = (0u32, segments);
    while hi - lo > 1 {
        let mid = lo + (hi - lo) / 2;
        if first(mid) <= block {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    lo
}

/// Lane `lane`'s logical warp and its rank in it, for logical warps of `lanes` lanes (a power of
/// two in 1..=32): `(lane / lanes, lane % lanes)`, by a shift and a mask. `segmented_warp`'s
/// groups: group `g` of a warp takes the warp's segment `g`, its lanes ranks `0..lanes`.
///
/// ```
/// use reduce_scan_kernels::index::logical_lane;
/// assert_eq!(logical_lane(13, 4), (3, 1));
/// assert_eq!(logical_lane(13, 32), (0, 13));
/// assert_eq!(logical_lane(13, 1), (13, 0));
/// ```
#[inline(always)]
pub const fn logical_lane(lane: u32, lanes: u32) -> (u32, u32) {
    (lane >> lanes.trailing_zeros(), lane & (lanes - 1))
}

/// The first element and the end of segment `s`: `offset(s)..offset(s + 1)` of CSR offsets, or,
/// for `rows`, row `s` of `cols` elements (`offset` unused). The segmented kernels read the
/// offsets through `offset`.
///
/// ```
/// use reduce_scan_kernels::index::segment_bounds;
/// let offsets = [0u32, 3, 3, 10];
/// assert_eq!(segment_bounds(1, 0, |i| offsets[i as usize], false), (3, 3));
/// assert_eq!(segment_bounds(2, 0, |i| offsets[i as usize], false), (3, 10));
/// assert_eq!(segment_bounds(2, 256, |_| unreachable!(), true), (512, 768));
/// ```
#[inline(always)]
pub fn segment_bounds(s: u32, cols: u32, offset: impl Fn(u32) -> u32, rows: bool) -> (u32, u32) {
    if rows { (s * cols, s * cols + cols) } else { (offset(s), offset(s + 1)) }
}

/// The first element of row `r` of a row-major matrix of `cols` columns: `r × cols` (the whole
/// matrix holds at most `u32::MAX` elements, so the product fits 32 bits). `segmented_rows`'s
/// block `r` starts there.
///
/// ```
/// use reduce_scan_kernels::index::row_start;
/// assert_eq!(row_start(0, 4096), 0);
/// assert_eq!(row_start(3, 4096), 12_288);
/// assert_eq!(row_start(65_535, 65_536), 65_535 * 65_536);
/// ```
#[inline(always)]
pub fn row_start(r: u32, cols: u32) -> usize {
    (r * cols) as usize
}

/// Elements `lo..hi` of a segment `start..end` that chunk `chunk` of `tile` elements covers:
/// `lo = start + chunk × tile`, `hi = min(lo + tile, end)`, in 64-bit arithmetic so that no
/// sum near `u32::MAX` wraps. A chunk past the end (or of an empty segment) is empty: `lo = hi`.
///
/// ```
/// use reduce_scan_kernels::index::tile_bounds;
/// assert_eq!(tile_bounds(100, 10_100, 1, 4096), (4196, 8292));
/// assert_eq!(tile_bounds(100, 10_100, 2, 4096), (8292, 10_100));
/// assert_eq!(tile_bounds(7, 7, 0, 4096), (7, 7));
/// assert_eq!(tile_bounds(u32::MAX - 5, u32::MAX, 0, 4096), (u32::MAX - 5, u32::MAX));
/// ```
#[inline(always)]
pub const fn tile_bounds(start: u32, end: u32, chunk: u32, tile: u32) -> (u32, u32) {
    let lo = start as u64 + chunk as u64 * tile as u64;
    let lo = if lo > end as u64 { end as u64 } else { lo };
    let hi = if lo + (tile as u64) < end as u64 { lo + tile as u64 } else { end as u64 };
    (lo as u32, hi as u32)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn logical_lanes_are_a_division_and_a_remainder() {
        for lanes in [1u32, 2, 4, 8, 16, 32] {
            for lane in 0..32 {
                assert_eq!(logical_lane(lane, lanes), (lane / lanes, lane % lanes), "lane {lane}, lanes {lanes}");
            }
        }
    }

    #[test]
    fn every_block_finds_its_segment_and_the_chunks_cover_it() {
        // Segments of 0..7 tiles (empty segments get one block), as the host lays them out.
        let lens: [u32; 9] = [0, 1, 4096, 4097, 0, 20_000, 3, 0, 8192];
        let tile = 4096;
        let mut first = std::vec![0u32];
        let mut starts = std::vec![0u32];
        for &l in &lens {
            first.push(first.last().unwrap() + l.div_ceil(tile).max(1));
            starts.push(starts.last().unwrap() + l);
        }
        let at = |s: u32| first[s as usize];
        for (s, &l) in lens.iter().enumerate() {
            let mut covered = 0;
            for b in first[s]..first[s + 1] {
                assert_eq!(segment_of_block(b, lens.len() as u32, at), s as u32, "block {b}");
                let (lo, hi) = tile_bounds(starts[s], starts[s] + l, b - first[s], tile);
                assert_eq!(lo, starts[s] + covered, "segment {s} block {b}");
                covered += hi - lo;
            }
            assert_eq!(covered, l, "segment {s}");
        }
    }

    #[test]
    fn segment_len_covers_every_element_once() {
        for n in [0usize, 1, 31, 32, 33, 511, 512, 513, 1025, 4097] {
            for seg in [1usize, 32, 64, 512, 1024] {
                let blocks = div_ceil(n, seg);
                let total: usize = (0..blocks).map(|b| segment_len(n, b * seg, seg)).sum();
                assert_eq!(total, n, "n={n} seg={seg}");
                for b in 0..blocks {
                    assert!(segment_len(n, b * seg, seg) >= 1, "empty block {b} n={n} seg={seg}");
                }
            }
        }
    }

    #[test]
    fn a_tally_counts_every_block_and_keeps_the_wrapping_sum() {
        let sums = [i32::MIN, -1, 0, 1, i32::MAX, 123_456_789, -987_654_321];
        for blocks in [1usize, 2, 7, 1000, 70_001] {
            let (mut word, mut want) = (0u64, 0i32);
            for b in 0..blocks {
                let s = sums[b % sums.len()].wrapping_mul(b as i32 | 1);
                assert_eq!(tally_count(word), b as u32, "before block {b} of {blocks}");
                assert_eq!(tally_sum(word), want, "before block {b} of {blocks}");
                word = word.wrapping_add(tally_add(s));
                want = want.wrapping_add(s);
            }
            assert_eq!((tally_count(word), tally_sum(word)), (blocks as u32, want), "{blocks} blocks");
        }
        // The largest grid: the count before the last add fits, the last add may carry out.
        let before_last = (1u64 << TALLY_COUNT_BITS) - 1;
        assert_eq!(tally_count(before_last), (1 << TALLY_COUNT_BITS) - 1);
    }

    #[test]
    fn segment_len_edges() {
        assert_eq!(segment_len(5, 5, 4), 0);
        assert_eq!(segment_len(5, 4, 4), 1);
        assert_eq!(segment_len(usize::MAX, usize::MAX - 1, 8), 1);
    }

    #[test]
    fn neighbored_less_touches_the_slots_neighbored_does() {
        for block in [32u32, 64, 256, 1024] {
            let mut stride = 1;
            while stride < block {
                // neighbored: thread t works when t % (2*stride) == 0, on slot t.
                let neighbored: std::vec::Vec<usize> =
                    (0..block).filter(|t| t % (2 * stride) == 0).map(|t| t as usize).collect();
                // neighbored_less: thread t works when its slot is inside the block.
                let less: std::vec::Vec<usize> = (0..block)
                    .map(|t| neighbored_less_index(t, stride))
                    .filter(|&i| i < block)
                    .map(|i| i as usize)
                    .collect();
                assert_eq!(neighbored, less, "block {block} stride {stride}");
                // ... and the working threads are the first ones: 0, 1, 2, ...
                let workers = (0..block).filter(|&t| neighbored_less_index(t, stride) < block).count();
                assert!((0..block).all(|t| (neighbored_less_index(t, stride) < block) == ((t as usize) < workers)));
                stride *= 2;
            }
        }
    }

    #[test]
    fn fold_reads_every_element_once() {
        for factor in [1u32, 2, 4, 8] {
            for block in [32u32, 64, 128, 1024] {
                let seg = factor * block;
                for n in [1u32, 2, 31, 32, 33, 511, 512, 513, 1000, 1025, 4097, 8193, 9000] {
                    let mut seen = std::vec![0u8; n as usize];
                    for b in 0..div_ceil(n as usize, seg as usize) as u32 {
                        let (start, len) = block_segment(n, b, seg);
                        assert_eq!(len as usize, segment_len(n as usize, start as usize, seg as usize));
                        for tid in 0..block {
                            let count = fold_count(len, block, tid, factor);
                            assert_eq!(count == 0, tid >= len, "n={n} block={block} tid={tid}");
                            for k in 0..factor {
                                let i = fold_index(tid, block, k);
                                assert_eq!(k < count, i < len, "n={n} block={block} tid={tid} k={k}");
                                if k < count {
                                    seen[(start + i) as usize] += 1;
                                }
                            }
                        }
                    }
                    assert!(seen.iter().all(|&c| c == 1), "factor={factor} block={block} n={n}");
                }
            }
        }
    }

    #[test]
    fn chunks_cover_every_element_once_in_order() {
        for n in [1usize, 2, 31, 32, 33, 511, 512, 513, 1000, 1023, 1024, 1025, 4097, 9000] {
            for parts in [1usize, 32, 64, 256, 1024] {
                let mut next = 0;
                for part in 0..parts {
                    let (start, end) = chunk_bounds(n, parts, part);
                    assert!(start <= end && end <= n, "n={n} parts={parts} part={part}");
                    assert_eq!(start, next, "chunks are contiguous: n={n} parts={parts} part={part}");
                    assert!(end - start <= div_ceil(n, parts));
                    next = end;
                }
                assert_eq!(next, n, "n={n} parts={parts}");
            }
        }
        assert_eq!(chunk_bounds(7, 0, 0), (0, 7));
        assert_eq!(chunk_bounds(usize::MAX, 2, 5), (usize::MAX, usize::MAX));
    }
}
