//! The CPU references every reduction is checked against.
//!
//! **`i32` sums: the book's recursion.**
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
//!
//! **Every element type and operator** ([`reference()`], [`check()`]):
//!
//! * **Integer sums** wrap (modulo 2^32 or 2^64), as the GPU's integer add does: the
//!   reference is the wrapping sum, and a kernel must match it exactly (wrapping addition is
//!   associative and commutative, so the kernel's order does not matter).
//! * **Min and max** must match exactly, bit for bit: for floats, NaN propagates (max gives
//!   `+NaN` `0x7fc0_0000` / `0x7ff8_…`, min `−NaN` `0xffc0_0000` / `0xfff8_…`) and
//!   −0.0 < +0.0 (`kernels::types`). The reference here is written from that definition, not
//!   with the kernels crate's functions.
//! * **Float sums** are rounded in the kernel's order. They are checked against the exact sum
//!   (to within a far smaller error: [`exact_sum`]) with [`float_sum_bound`].
//!
//! **Argmin and argmax** ([`arg_reference`]): a left-to-right scan that keeps the first
//! extreme, NaN the extreme, ±0.0 equal; checked exactly (index, and the value's bits).
//! **Dot products and sums of squares** ([`transform_reference`], [`check_transform`]): integers
//! exact (wrapping); floats against the exact dot product (double-double, each product split
//! exactly: [`exact_dot`]) with [`float_dot_bound`].

use crate::types::{Op, Value};

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
    pub fn for_op(op: Op, data: &[i32]) -> Self {
        let exact = |v: Option<&i32>, identity: i32| {
            let v = v.copied().unwrap_or(identity);
            Self { wrapped: v, widened: v.into() }
        };
        match op {
            Op::Sum => Self::of(data),
            Op::SumOfSquares => Self::of_squares(data),
            Op::Min => exact(data.iter().min(), i32::MAX),
            Op::Max => exact(data.iter().max(), i32::MIN),
        }
    }
}

/// The result a kernel must give for integers, min and max; for float sums, the exact sum
/// (see [`exact_sum`]) rounded to `T`.
pub fn reference<T: Value>(op: Op, data: &[T]) -> T {
    match op {
        Op::Sum if T::ELEM.is_float() => T::from_f64(exact_sum(data).0),
        Op::Sum => data.iter().fold(T::ZERO, |a, &x| T::wrapping_add_host(a, x)),
        Op::Min => ordered(data, true),
        Op::Max => ordered(data, false),
        Op::SumOfSquares => data.iter().fold(T::ZERO, |a, &x| T::wrapping_add_host(a, x.square_host())),
    }
}

/// Min (`smallest`) or max of `data` from the definition: a canonical NaN if there is a NaN,
/// else the extreme value with −0.0 below +0.0; the identity for an empty slice.
fn ordered<T: Value>(data: &[T], smallest: bool) -> T {
    let identity = if smallest { T::HIGHEST } else { T::LOWEST };
    data.iter().fold(identity, |a, &b| ordered_step(a, b, smallest))
}

/// One step of [`ordered`] (and of the typed scans' reference): the canonical NaN if `a` or
/// `b` is a NaN, else the smaller (`smallest`) or larger of the two, −0.0 below +0.0.
pub(crate) fn ordered_step<T: Value>(a: T, b: T, smallest: bool) -> T {
    if a.is_nan_host() || b.is_nan_host() {
        return T::canonical_nan(smallest);
    }
    let (ka, kb) = (a.order_key(), b.order_key());
    if (smallest && ka <= kb) || (!smallest && ka >= kb) { a } else { b }
}

/// The sum of `data` in double-double arithmetic (compensated: each add's rounding error is
/// kept in a second `f64`, Ogita–Rump–Oishi "Sum2"), and Σ|x|. The first value is within
/// `2⁻⁵³·|s| + γ(n)²·Σ|x|` of the exact sum `s` (γ of `f64`): far below the error a rounded
/// `f32` or `f64` tree sum may have, so it stands for the exact sum in [`float_sum_bound`].
pub fn exact_sum<T: Value>(data: &[T]) -> (f64, f64) {
    let (mut s, mut c, mut abs) = (0.0f64, 0.0f64, 0.0f64);
    for x in data.iter().map(|x| x.to_f64()) {
        // TwoSum: t + e == s + x exactly.
        let t = s + x;
        let z = t - s;
        let e = (s - (t - z)) + (x - z);
        s = t;
        c += e;
        abs += x.abs();
    }
    (s + c, abs)
}

/// γ(k) = k·u / (1 − k·u) for unit roundoff `u` (Higham, *Accuracy and Stability of Numerical
/// Algorithms*, §3.1); infinite when k·u ≥ 1.
pub fn gamma(k: u64, u: f64) -> f64 {
    let ku = k as f64 * u;
    if ku < 1.0 { ku / (1.0 - ku) } else { f64::INFINITY }
}

/// **The error bound of a float sum.** A sum computed by any tree of rounded additions in
/// which every element passes through at most `depth` additions satisfies
///
/// ```text
///     |got − exact| ≤ γ(depth) · Σ|xᵢ|,     γ(k) = k·u / (1 − k·u)
/// ```
///
/// with `u` the unit roundoff of `T` (2⁻²⁴ for `f32`, 2⁻⁵³ for `f64`) — Higham §4.2, eq. (4.3)
/// with `n − 1` replaced by the depth of the tree. A sequential sum has depth `n − 1`, so
/// for `f32` and n = 2^24 the bound is infinite; the kernels' trees are shallow
/// (`reduce_scan::reduce::sum_depth`: the elements one thread adds, five warp levels, five
/// block levels, and the finish: ⌈log₂ grid⌉ pairwise on the host, or `grid` atomic adds in
/// arrival order). A further `4·2⁻⁵³·Σ|xᵢ|` covers the reference's own error ([`exact_sum`])
/// and the final rounding to `T`. No subnormal flushing is assumed (the kernels do not flush).
pub fn float_sum_bound(u: f64, depth: u64, abs_sum: f64) -> f64 {
    // f64::EPSILON is 2⁻⁵²: 2·EPSILON = 4·2⁻⁵³.
    gamma(depth, u) * abs_sum + 2.0 * f64::EPSILON * abs_sum
}

/// Does `got` pass for `op` over `data`, summed with a tree of `depth`? `Err` says expected
/// and actual (and, for float sums, the error and the bound).
pub fn check<T: Value>(op: Op, data: &[T], got: T, depth: u64) -> Result<(), String> {
    if op == Op::Sum && T::ELEM.is_float() {
        if data.iter().any(|x| !x.to_f64().is_finite()) {
            // A NaN or an infinity in the input: the answer is IEEE's (NaN, or the infinity),
            // not a value within a bound (a NaN compares false with any).
            let exact: f64 = data.iter().map(|x| x.to_f64()).sum();
            return if same_non_finite(exact, got.to_f64()) {
                Ok(())
            } else {
                Err(format!("expected {exact} (a NaN or infinity in the input), got {got}"))
            };
        }
        let (exact, abs) = exact_sum(data);
        let bound = float_sum_bound(T::UNIT_ROUNDOFF, depth, abs);
        let err = (got.to_f64() - exact).abs();
        return if err <= bound {
            Ok(())
        } else {
            Err(format!(
                "expected {exact:e} (exact) ± {bound:e} (γ({depth})·Σ|x|, Σ|x| = {abs:e}), got {got} (error {err:e})"
            ))
        };
    }
    let want = reference(op, data);
    if want.same_bits(got) {
        Ok(())
    } else {
        Err(format!("expected {want} (bits {:#x}), got {got} (bits {:#x})", want.bits(), got.bits()))
    }
}

/// The argmin (`smallest`) or argmax of `data` and its index, from the definition: a NaN beats
/// every number (the first NaN wins), otherwise values compare as numbers (−0.0 equals +0.0),
/// and of equal values the first wins. `None` for an empty slice. Written independently of
/// the kernels' `Extreme::beats`.
pub fn arg_reference<T: Value>(smallest: bool, data: &[T]) -> Option<(T, u64)> {
    // ±0.0 share a key; otherwise the order key of the value.
    let key = |x: T| if x.to_f64() == 0.0 { 0 } else { x.order_key() };
    let beats = |a: T, b: T| match (a.is_nan_host(), b.is_nan_host()) {
        (true, b_nan) => !b_nan,
        (false, true) => false,
        (false, false) if smallest => key(a) < key(b),
        (false, false) => key(a) > key(b),
    };
    let mut best: Option<(T, u64)> = None;
    for (i, &x) in data.iter().enumerate() {
        if best.is_none_or(|(b, _)| beats(x, b)) {
            best = Some((x, i as u64));
        }
    }
    best
}

/// Does `got` (value, index) pass as the argmin or argmax of `data`? Index equal, value the
/// same bits as `data[index]`.
pub fn check_arg<T: Value>(smallest: bool, data: &[T], got: Option<(T, u64)>) -> Result<(), String> {
    let want = arg_reference(smallest, data);
    let same = match (want, got) {
        (None, None) => true,
        (Some((wv, wi)), Some((gv, gi))) => wi == gi && wv.same_bits(gv),
        _ => false,
    };
    let show = |x: Option<(T, u64)>| x.map_or("none (empty)".to_string(), |(v, i)| format!("{v} at index {i}"));
    if same { Ok(()) } else { Err(format!("expected {}, got {}", show(want), show(got))) }
}

/// The exact `Σ aᵢ·bᵢ` of two float slices of the same length, to within far less than any
/// kernel's error, and `Σ|aᵢ·bᵢ|`: each product split exactly into `p + e` (`e` from a fused
/// multiply-add: TwoProduct) and both parts summed in double-double ([`exact_sum`]'s method).
/// `b = None` squares `a`.
pub fn exact_dot<T: Value>(a: &[T], b: Option<&[T]>) -> (f64, f64) {
    let (mut s, mut c, mut abs) = (0.0f64, 0.0f64, 0.0f64);
    let mut add = |x: f64| {
        let t = s + x;
        let z = t - s;
        c += (s - (t - z)) + (x - z);
        s = t;
    };
    for (i, x) in a.iter().enumerate() {
        let (x, y) = (x.to_f64(), b.map_or(x.to_f64(), |b| b[i].to_f64()));
        let p = x * y;
        let e = x.mul_add(y, -p);
        add(p);
        add(e);
        abs += p.abs();
    }
    (s + c, abs)
}

/// **The error bound of a float dot product** (or sum of squares) of `n` products summed by
/// a tree of `depth` additions: each product is rounded once (`mul.rn`), then passes through at
/// most `depth` rounded additions, so (Higham §3.1, eq. (3.5) with the tree's depth for `n`)
///
/// ```text
///     |got − exact| ≤ γ(depth + 1)·Σ|aᵢ·bᵢ| + 2⁻⁵¹·Σ|aᵢ·bᵢ| + n·η
/// ```
///
/// the second term, as in [`float_sum_bound`], the reference's own error and the final
/// rounding; the last, products that underflow: each loses at most half the smallest subnormal
/// `η` of the type, twice that allowing for the sums it then passes through (`tiny` = `η`: 2⁻¹⁴⁹
/// for `f32`, 2⁻¹⁰⁷⁴ for `f64`; additions of subnormals are exact). For a sum of squares without
/// underflow, `Σ|aᵢbᵢ| = Σxᵢ²` is the answer itself: a relative bound.
pub fn float_dot_bound(u: f64, depth: u64, abs_sum: f64, n: usize, tiny: f64) -> f64 {
    float_sum_bound(u, depth + 1, abs_sum) + n as f64 * tiny
}

/// The result a dot product (`b = Some`) or sum of squares (`b = None`) must give for an
/// integer type: wrapping products, wrapping sum. (Floats: [`exact_dot`].)
pub fn transform_reference<T: Value>(a: &[T], b: Option<&[T]>) -> T {
    let mut acc = T::ZERO;
    for (i, &x) in a.iter().enumerate() {
        let y = b.map_or(x, |b| b[i]);
        acc = T::wrapping_add_host(acc, wrapping_mul_host(x, y));
    }
    acc
}

/// The smallest positive subnormal of a float type (`η` of [`float_dot_bound`]).
pub fn smallest_subnormal<T: Value>() -> f64 {
    T::from_bits_u64(1).to_f64()
}

/// `x · y` as the GPU multiplies: wrapping for integers (the low half), rounded for floats.
fn wrapping_mul_host<T: Value>(x: T, y: T) -> T {
    if T::ELEM.is_float() {
        T::from_f64(x.to_f64() * y.to_f64())
    } else {
        // The low bits of the product are the product of the low bits: i128 holds it exactly.
        T::from_bits_u64((x.order_key().wrapping_mul(y.order_key())) as u64)
    }
}

/// Whether `got` is the non-finite answer `exact` (a NaN in the input gives NaN, an infinity
/// the same infinity): where an error bound cannot judge, since a NaN compares false with any.
pub fn same_non_finite(exact: f64, got: f64) -> bool {
    (exact.is_nan() && got.is_nan()) || got == exact
}

/// Does `got` pass as the dot product of `a` and `b` (or, `b = None`, the sum of squares of
/// `a`) summed with a tree of `depth`? Integers exact; floats within [`float_dot_bound`].
pub fn check_transform<T: Value>(a: &[T], b: Option<&[T]>, got: T, depth: u64) -> Result<(), String> {
    if T::ELEM.is_float() {
        let (exact, abs) = exact_dot(a, b);
        if !exact.is_finite() {
            // A NaN or an infinity in the input: the answer is the same, not within a bound.
            return if same_non_finite(exact, got.to_f64()) {
                Ok(())
            } else {
                Err(format!("expected {exact} (a NaN or infinity in the input), got {got}"))
            };
        }
        let bound = float_dot_bound(T::UNIT_ROUNDOFF, depth, abs, a.len(), smallest_subnormal::<T>());
        let err = (got.to_f64() - exact).abs();
        return if err <= bound {
            Ok(())
        } else {
            Err(format!(
                "expected {exact:e} (exact) ± {bound:e} (γ({})·Σ|ab| + n·η, Σ|ab| = {abs:e}), got {got} (error {err:e})",
                depth + 1
            ))
        };
    }
    let want = transform_reference(a, b);
    if want.same_bits(got) {
        Ok(())
    } else {
        Err(format!("expected {want} (bits {:#x}), got {got} (bits {:#x})", want.bits(), got.bits()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::input::Input;

    #[test]
    fn arg_reference_follows_its_rules() {
        let nan = f32::NAN;
        assert_eq!(arg_reference(false, &[1.0f32, 3.0, 3.0]), Some((3.0, 1)));
        assert_eq!(arg_reference(true, &[0.0f32, -0.0]).map(|x| (x.0.to_bits(), x.1)), Some((0, 0)));
        assert_eq!(arg_reference(false, &[1.0f32, nan, 9.0, nan]).map(|x| x.1), Some(1));
        assert_eq!(arg_reference(true, &[1.0f32, nan]).map(|x| x.1), Some(1));
        assert_eq!(arg_reference(false, &[i64::MIN, i64::MIN]), Some((i64::MIN, 0)));
        assert_eq!(arg_reference::<u32>(true, &[]), None);
        assert!(check_arg(false, &[2u64, 7, 7], Some((7, 1))).is_ok());
        assert!(check_arg(false, &[2u64, 7, 7], Some((7, 2))).unwrap_err().contains("expected 7 at index 1"));
    }

    #[test]
    fn a_float_sum_with_a_nan_or_an_infinity_checks_as_ieee_says() {
        let (nan, inf) = (f32::NAN, f32::INFINITY);
        assert!(check(Op::Sum, &[1.0f32, nan, 2.0], nan, 3).is_ok());
        let e = check(Op::Sum, &[1.0f32, nan, 2.0], 3.0, 3).unwrap_err();
        assert_eq!(e, "expected NaN (a NaN or infinity in the input), got 3");
        assert!(check(Op::Sum, &[1.0f64, f64::INFINITY], f64::INFINITY, 2).is_ok());
        assert!(check(Op::Sum, &[1.0f32, inf], -inf, 2).is_err());
        assert!(check(Op::Sum, &[inf, -inf], nan, 2).is_ok()); // ∞ − ∞ is NaN
        assert!(check(Op::Sum, &[1.0f32, 2.0], 3.0, 2).is_ok());
    }

    #[test]
    fn transform_references() {
        assert_eq!(transform_reference(&[i32::MAX, 3], Some(&[2, -1])), -5); // -2 - 3, wrapped
        assert_eq!(transform_reference(&[u64::MAX, 2], None), 5); // 1 + 4, wrapped
        assert_eq!(transform_reference(&[i64::MIN, -1], Some(&[-1, i64::MIN])), 0);
        let (exact, abs) = exact_dot(&[1e16f64, 1.0, -1e16], Some(&[1.0, 1.0, 1.0]));
        assert_eq!((exact, abs), (1.0, 2e16 + 1.0));
        // (1 + ε)² − (1 + 2ε) = ε²: the product's rounding error is kept (TwoProduct).
        let e = f64::EPSILON;
        assert_eq!(exact_dot(&[1.0 + e, -1.0], Some(&[1.0 + e, 1.0 + 2.0 * e])).0, e * e);
        assert!(check_transform(&[3.0f32, 4.0], None, 25.0, 1).is_ok());
        assert!(check_transform(&[3.0f32, 4.0], None, 25.01, 1).is_err());
    }

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

    #[test]
    fn min_max_follow_the_definition() {
        assert_eq!(reference(Op::Max, &[1.0f32, -0.0, 0.0]).to_bits(), 1.0f32.to_bits());
        assert_eq!(reference(Op::Max, &[-0.0f32, 0.0]).to_bits(), 0);
        assert_eq!(reference(Op::Min, &[0.0f64, -0.0]).to_bits(), 1 << 63);
        assert_eq!(reference(Op::Min, &[1.0f64, f64::from_bits(0x7ff0_0000_0000_0001), -5.0]).to_bits(), 0xfff8 << 48);
        assert_eq!(reference(Op::Max, &[f32::NEG_INFINITY, -f32::NAN]).to_bits(), 0x7fc0_0000);
        assert_eq!(reference::<u64>(Op::Max, &[]), 0);
        assert_eq!(reference::<i64>(Op::Min, &[3, i64::MIN, 7]), i64::MIN);
        assert_eq!(reference::<u32>(Op::Sum, &[u32::MAX, 2]), 1);
    }

    #[test]
    fn the_double_double_sum_keeps_what_f64_loses() {
        let data = [1e16f64, 1.0, -1e16, 1.0];
        assert_eq!(data.iter().sum::<f64>(), 1.0); // plain f64 loses one of the 1.0s
        assert_eq!(exact_sum(&data).0, 2.0);
        assert!(gamma(1 << 24, 2f64.powi(-24)).is_infinite());
        assert!((gamma(10, 2f64.powi(-24)) - 10.0 * 2f64.powi(-24)).abs() < 1e-12);
        assert!(check(Op::Sum, &[0.1f32; 10], 1.0000001, 10).is_ok());
        assert!(check(Op::Sum, &[0.1f32; 10], 1.01, 10).is_err());
    }
}
