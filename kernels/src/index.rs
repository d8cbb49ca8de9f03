//! Index arithmetic shared by the kernels, as plain functions unit-tested on the host.

/// How many of the `seg` elements starting at `start` exist in an array of `n`: the length
/// of a block's segment, short for the last block when `n` is not a multiple of `seg`.
///
/// ```
/// use kernels::index::segment_len;
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

/// `ceil(a / b)` for `b > 0`.
#[inline(always)]
pub const fn div_ceil(a: usize, b: usize) -> usize {
    a.div_ceil(b)
}

#[cfg(test)]
mod tests {
    use super::*;

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
    fn segment_len_edges() {
        assert_eq!(segment_len(5, 5, 4), 0);
        assert_eq!(segment_len(5, 4, 4), 1);
        assert_eq!(segment_len(usize::MAX, usize::MAX - 1, 8), 1);
    }
}
