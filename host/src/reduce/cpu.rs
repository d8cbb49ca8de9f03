//! The CPU reference every kernel is checked against.
//!
//! [`recursive_reduce`] is the recursion the book checks its kernels with
//! (`cpuRecursiveReduce` in *Professional CUDA C Programming*, chapter 3): add the second
//! half of the array onto the first, element by element, and recurse on the first half.
//! The book's version computes `stride = size / 2` and adds `data[i + stride]` for
//! `i < stride`, so when a level has odd length its last element is never added: every
//! odd `n` (and every `n` whose halving meets an odd length) gives a wrong reference. Here
//! the surviving half is `ceil(size / 2)` long, so the unpaired middle element stays in
//! it. The caller's slice is never modified.
//!
//! Sums wrap on overflow, as `i32` addition on the GPU does; [`widened_sum`] gives the
//! exact total for display.

/// Sum of `data` by the interleaved-pair recursion, wrapping on overflow. `0` for an empty
/// slice. Works on a copy: `data` is left as it was.
pub fn recursive_reduce(data: &[i32]) -> i32 {
    let mut scratch = data.to_vec();
    recursive_reduce_in_place(&mut scratch)
}

/// [`recursive_reduce`] on a buffer the caller gives up: `data` holds garbage afterwards.
pub fn recursive_reduce_in_place(data: &mut [i32]) -> i32 {
    let mut size = data.len();
    if size == 0 {
        return 0;
    }
    // Each level halves the active length, rounding up: element j >= half folds into
    // j - half. Iterative form of the recursion (same additions, same order).
    while size > 1 {
        let half = size.div_ceil(2);
        let (low, high) = data[..size].split_at_mut(half);
        for (l, h) in low.iter_mut().zip(high.iter()) {
            *l = l.wrapping_add(*h);
        }
        size = half;
    }
    data[0]
}

/// The exact sum of `data` in 64 bits (no overflow for up to 2^32 elements).
pub fn widened_sum(data: &[i32]) -> i64 {
    data.iter().map(|&x| x as i64).sum()
}

/// The reference answer for one input: what the kernels must return, and the exact total.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Reference {
    /// Wrapping `i32` sum: what every kernel computes.
    pub wrapped: i32,
    /// Exact sum.
    pub widened: i64,
}

impl Reference {
    /// Computes both sums of `data`.
    pub fn of(data: &[i32]) -> Self {
        Self { wrapped: recursive_reduce(data), widened: widened_sum(data) }
    }

    /// Both sums of the squares of `data`: each square wraps in `i32` as on the GPU; the
    /// widened total squares in 64 bits (exact while it fits in `i64`).
    pub fn of_squares(data: &[i32]) -> Self {
        let squares: Vec<i32> = data.iter().map(|&x| x.wrapping_mul(x)).collect();
        let widened = data.iter().fold(0i64, |a, &x| a.wrapping_add((x as i64) * (x as i64)));
        Self { wrapped: recursive_reduce_in_place(&mut { squares }), widened }
    }

    /// The reference for `op`.
    pub fn for_op(op: crate::registry::Op, data: &[i32]) -> Self {
        let exact = |v: Option<&i32>, identity: i32| {
            let v = v.copied().unwrap_or(identity);
            Self { wrapped: v, widened: v.into() }
        };
        match op {
            crate::registry::Op::Sum => Self::of(data),
            crate::registry::Op::SumOfSquares => Self::of_squares(data),
            crate::registry::Op::Min => exact(data.iter().min(), i32::MAX),
            crate::registry::Op::Max => exact(data.iter().max(), i32::MIN),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::input::Input;

    /// The book's version, kept to show the bug it has.
    fn book_recursive_reduce(data: &mut [i32], size: usize) -> i32 {
        if size == 1 {
            return data[0];
        }
        let stride = size / 2;
        for i in 0..stride {
            data[i] = data[i].wrapping_add(data[i + stride]);
        }
        book_recursive_reduce(data, stride)
    }

    fn iterative(data: &[i32]) -> i32 {
        data.iter().fold(0i32, |a, &x| a.wrapping_add(x))
    }

    #[test]
    fn matches_iterative_sum_for_every_small_size() {
        for n in 0..=300usize {
            let data = Input::full_range(n, 7).data;
            assert_eq!(recursive_reduce(&data), iterative(&data), "n={n}");
            assert_eq!(widened_sum(&data), data.iter().map(|&x| x as i64).sum::<i64>());
        }
    }

    #[test]
    fn matches_iterative_sum_for_sizes_that_hurt() {
        for n in [1023usize, 1024, 1025, 4097, (1 << 20) + 7] {
            let data = Input::small(n, 11).data;
            assert_eq!(recursive_reduce(&data), iterative(&data), "n={n}");
        }
    }

    #[test]
    fn leaves_the_input_alone() {
        let data = Input::small(1000, 3).data;
        let copy = data.clone();
        let _ = recursive_reduce(&data);
        assert_eq!(data, copy);
    }

    #[test]
    fn wraps_like_the_gpu() {
        let data = vec![i32::MAX, 1, i32::MAX, 2];
        assert_eq!(recursive_reduce(&data), iterative(&data));
        assert_eq!(widened_sum(&data), 2 * i32::MAX as i64 + 3);
        assert_eq!(Reference::of(&[]).wrapped, 0);
        assert_eq!(Reference::of(&[-5]).wrapped, -5);
    }

    #[test]
    fn squares_wrap_per_element() {
        let r = Reference::of_squares(&[3, -4, 1 << 16]);
        assert_eq!(r.wrapped, 9 + 16); // (2^16)^2 = 2^32 wraps to 0
        assert_eq!(r.widened, 9 + 16 + (1i64 << 32));
    }

    #[test]
    fn the_books_version_drops_elements_at_odd_lengths() {
        let data: Vec<i32> = (1..=7).collect(); // sum 28
        assert_eq!(recursive_reduce(&data), 28);
        let mut copy = data.clone();
        assert_ne!(book_recursive_reduce(&mut copy, 7), 28, "the book's recursion loses the odd element");
    }
}
