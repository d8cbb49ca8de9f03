//! The CPU references the scan kernels are checked against: sequential scans, written from
//! the definitions.
//!
//! * **`i32` sums** ([`inclusive_scan`], [`exclusive_scan`], [`Kind::reference`]): wrapping
//!   addition, as the GPU adds.
//!
//! **Every element type and operator** ([`reference()`], [`check()`]), and the error bound of float
//! prefix sums:
//!
//! * **Integer sums** wrap, **min and max** are exact (floats: NaN propagates, −0.0 < +0.0,
//!   `kernels::types`): every element must equal the sequential scan bit for bit, written from
//!   the definition (`reduce::cpu`), not with the kernels crate's functions.
//! * **Float sums**: element `i` of an inclusive scan is a sum of the `i + 1` elements
//!   `x₀ … xᵢ` (of `i` for an exclusive one), computed by some tree of rounded additions. It
//!   is checked against the exact prefix sum `sᵢ` (double-double, compensated, as
//!   [`exact_sum`](crate::cpu::exact_sum)) with
//!
//!   ```text
//!   |gotᵢ − sᵢ| ≤ γ(d)·Σⱼ≤ᵢ|xⱼ| + 2⁻⁵¹·Σⱼ≤ᵢ|xⱼ|,   γ(d) = d·u / (1 − d·u)
//!   ```
//!
//!   ([`float_sum_bound`]), where `d` is the
//!   depth of the kernel's summation tree: the most roundings any element passes through on
//!   its way into any output ([`super::scan_depth`] for the look-back scans; `n` for a
//!   scan whose order is unknown, such as CUB's, since a tree over `i + 1` leaves has depth at
//!   most `i`).

use super::kind::Kind;
use crate::cpu::{float_sum_bound, ordered_step};
use crate::types::{Op, Value};

impl Kind {
    /// The CPU reference of this kind of `i32` sum.
    pub fn reference(self, data: &[i32]) -> Vec<i32> {
        match self {
            Kind::Inclusive => inclusive_scan(data),
            Kind::Exclusive => exclusive_scan(data),
        }
    }
}

/// `out[i] = data[0] + … + data[i]` (wrapping). Empty for an empty slice.
pub fn inclusive_scan(data: &[i32]) -> Vec<i32> {
    let mut sum = 0i32;
    data.iter()
        .map(|&x| {
            sum = sum.wrapping_add(x);
            sum
        })
        .collect()
}

/// `out[i] = data[0] + … + data[i-1]` (wrapping), so `out[0] = 0`. Empty for an empty slice.
pub fn exclusive_scan(data: &[i32]) -> Vec<i32> {
    let mut sum = 0i32;
    data.iter()
        .map(|&x| {
            let before = sum;
            sum = sum.wrapping_add(x);
            before
        })
        .collect()
}

/// The first index where `got` differs from `expected`, bit for bit (or where one of them ends
/// early): `(index, expected, got)`, with `None` standing for a missing element.
pub fn first_mismatch<T: Value>(expected: &[T], got: &[T]) -> Option<(usize, Option<T>, Option<T>)> {
    if let Some(i) = expected.iter().zip(got).position(|(e, g)| !e.same_bits(*g)) {
        return Some((i, Some(expected[i]), Some(got[i])));
    }
    if expected.len() != got.len() {
        let i = expected.len().min(got.len());
        return Some((i, expected.get(i).copied(), got.get(i).copied()));
    }
    None
}

/// A running prefix of one operator: the sequential scan, one element at a time.
struct Prefix<T: Value> {
    op: Op,
    /// The exact (integers, min, max) or rounded (float sums, unused) running value.
    acc: T,
    /// Double-double running sum `(s, c)` and Σ|x| (float sums).
    exact: (f64, f64),
    abs: f64,
}

impl<T: Value> Prefix<T> {
    fn new(op: Op) -> Self {
        let acc = match op {
            Op::Min => T::HIGHEST,
            Op::Max => T::LOWEST,
            Op::Sum | Op::SumOfSquares => T::ZERO,
        };
        Self { op, acc, exact: (0.0, 0.0), abs: 0.0 }
    }

    fn push(&mut self, x: T) {
        self.acc = match self.op {
            Op::Min => ordered_step(self.acc, x, true),
            Op::Max => ordered_step(self.acc, x, false),
            Op::Sum | Op::SumOfSquares => T::wrapping_add_host(self.acc, x),
        };
        // TwoSum: t + e == s + x exactly.
        let (s, x) = (self.exact.0, x.to_f64());
        let t = s + x;
        let z = t - s;
        self.exact = (t, self.exact.1 + ((s - (t - z)) + (x - z)));
        self.abs += x.abs();
    }

    fn float_sum(&self) -> bool {
        self.op == Op::Sum && T::ELEM.is_float()
    }

    /// What the reference holds now: the exact value, or the exact sum rounded to `T`.
    fn value(&self) -> T {
        if self.float_sum() { T::from_f64(self.exact.0 + self.exact.1) } else { self.acc }
    }

    /// Does `got` pass for the prefix so far, with a summation tree of `depth`?
    fn check(&self, got: T, depth: u64) -> Result<(), String> {
        if self.float_sum() {
            let exact = self.exact.0 + self.exact.1;
            let bound = float_sum_bound(T::UNIT_ROUNDOFF, depth, self.abs);
            let err = (got.to_f64() - exact).abs();
            return if err <= bound {
                Ok(())
            } else {
                Err(format!(
                    "expected {exact:e} (exact) ± {bound:e} (γ({depth})·Σ|x|, Σ|x| = {:e}), got {got} (error {err:e})",
                    self.abs
                ))
            };
        }
        if self.acc.same_bits(got) {
            Ok(())
        } else {
            Err(format!("expected {} (bits {:#x}), got {got} (bits {:#x})", self.acc, self.acc.bits(), got.bits()))
        }
    }
}

/// The sequential `kind` scan of `data` with `op`: what integer, min and max scans must give
/// bit for bit; for float sums the exact prefix sums rounded to `T`.
pub fn reference<T: Value>(op: Op, kind: Kind, data: &[T]) -> Vec<T> {
    let mut p = Prefix::new(op);
    data.iter()
        .map(|&x| {
            let before = p.value();
            p.push(x);
            if kind == Kind::Exclusive { before } else { p.value() }
        })
        .collect()
}

/// Does every element of `got` pass for the `kind` scan of `data` with `op` (float sums:
/// within the bound of a tree of `depth`)? `Err` names the first wrong element, expected
/// and actual.
pub fn check<T: Value>(op: Op, kind: Kind, data: &[T], got: &[T], depth: u64) -> Result<(), String> {
    if got.len() != data.len() {
        return Err(format!("expected {} elements, got {}", data.len(), got.len()));
    }
    let mut p = Prefix::new(op);
    for (i, (&x, &g)) in data.iter().zip(got).enumerate() {
        if kind == Kind::Inclusive {
            p.push(x);
        }
        p.check(g, depth).map_err(|why| format!("element {i}: {why}"))?;
        if kind == Kind::Exclusive {
            p.push(x);
        }
    }
    Ok(())
}

/// What [`check`] compares element `i` of a float `kind` sum-scan of `data` with, computed once
/// for a check on the device ([`crate::verify::DeviceCheck`]): the exact prefix sums
/// (double-double, rounded to `f64`) and the bound of each for a tree of `depth`
/// ([`float_sum_bound`]), the same two numbers `check` computes.
pub fn sum_targets<T: Value>(kind: Kind, data: &[T], depth: u64) -> (Vec<f64>, Vec<f64>) {
    let mut p = Prefix::<T>::new(Op::Sum);
    let (mut exact, mut bound) = (Vec::with_capacity(data.len()), Vec::with_capacity(data.len()));
    for &x in data {
        if kind == Kind::Inclusive {
            p.push(x);
        }
        exact.push(p.exact.0 + p.exact.1);
        bound.push(float_sum_bound(T::UNIT_ROUNDOFF, depth, p.abs));
        if kind == Kind::Exclusive {
            p.push(x);
        }
    }
    (exact, bound)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::input::Input;

    #[test]
    fn small_examples() {
        assert_eq!(inclusive_scan(&[3, 1, 7, 0, 4]), vec![3, 4, 11, 11, 15]);
        assert_eq!(exclusive_scan(&[3, 1, 7, 0, 4]), vec![0, 3, 4, 11, 11]);
        assert!(inclusive_scan(&[]).is_empty() && exclusive_scan(&[]).is_empty());
        assert_eq!(exclusive_scan(&[-5]), vec![0]);
    }

    #[test]
    fn wraps_like_the_gpu() {
        assert_eq!(inclusive_scan(&[i32::MAX, 1, 1]), vec![i32::MAX, i32::MIN, i32::MIN + 1]);
        assert_eq!(exclusive_scan(&[i32::MIN, -1, 0]), vec![0, i32::MIN, i32::MAX]);
    }

    #[test]
    fn exclusive_is_inclusive_shifted_and_last_is_the_sum() {
        let data = Input::full_range(1001, 9).data;
        let inc = inclusive_scan(&data);
        let exc = exclusive_scan(&data);
        assert_eq!(exc[0], 0);
        assert_eq!(&exc[1..], &inc[..1000]);
        assert_eq!(inc[1000], crate::cpu::recursive_reduce(&data));
    }

    #[test]
    fn first_mismatch_reports_index_and_values() {
        assert_eq!(first_mismatch(&[1, 2, 3], &[1, 2, 3]), None);
        assert_eq!(first_mismatch(&[1, 2, 3], &[1, 5, 3]), Some((1, Some(2), Some(5))));
        assert_eq!(first_mismatch(&[1, 2, 3], &[1, 2]), Some((2, Some(3), None)));
    }

    #[test]
    fn references_follow_the_definitions() {
        assert_eq!(reference(Op::Sum, Kind::Inclusive, &[u32::MAX, 2, 3]), vec![u32::MAX, 1, 4]);
        assert_eq!(reference(Op::Min, Kind::Exclusive, &[3i64, -1, 7]), vec![i64::MAX, 3, -1]);
        let max = reference(Op::Max, Kind::Inclusive, &[-0.0f32, 0.0, f32::NAN, 1.0]);
        assert_eq!(max.iter().map(|x| x.to_bits()).collect::<Vec<_>>(), [0x8000_0000, 0, 0x7fc0_0000, 0x7fc0_0000]);
        let min = reference(Op::Min, Kind::Inclusive, &[0.0f64, -0.0]);
        assert_eq!(min[1].to_bits(), 1 << 63);
        let sum = reference(Op::Sum, Kind::Inclusive, &[1e16f64, 1.0, -1e16, 1.0]);
        assert_eq!(sum[3], 2.0);
    }

    #[test]
    fn check_names_the_first_wrong_element() {
        let data = [1.0f32; 10];
        let mut got: Vec<f32> = (1..=10).map(|i| i as f32).collect();
        assert!(check(Op::Sum, Kind::Inclusive, &data, &got, 10).is_ok());
        got[6] = 7.5;
        let e = check(Op::Sum, Kind::Inclusive, &data, &got, 10).unwrap_err();
        assert!(e.starts_with("element 6:") && e.contains("got 7.5"), "{e}");
        let e = check(Op::Max, Kind::Exclusive, &[1u64, 2], &[0, 2], 1).unwrap_err();
        assert!(e.contains("element 1") && e.contains("expected 1"), "{e}");
    }

    #[test]
    fn sum_targets_are_what_check_compares_with() {
        let data = [0.1f32, 1e8, -1e8, 0.25];
        let (exact, bound) = sum_targets(Kind::Inclusive, &data, 4);
        assert_eq!(exact.len(), 4);
        assert!((exact[3] - (0.1f32 as f64 + 0.25)).abs() < 1e-12);
        for k in 0..4 {
            let got = |e: f64| {
                let mut v: Vec<f32> = exact.iter().map(|&x| x as f32).collect();
                v[k] = e as f32;
                check(Op::Sum, Kind::Inclusive, &data, &v, 4)
            };
            assert!(got(exact[k]).is_ok());
            assert!(got(exact[k] + 2.0 * bound[k] + 1.0).is_err());
        }
        let (ex, _) = sum_targets(Kind::Exclusive, &data, 4);
        assert_eq!(ex[0], 0.0);
        assert_eq!(ex[1], 0.1f32 as f64);
    }
}
