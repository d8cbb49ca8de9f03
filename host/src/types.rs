//! Element types and operators: the host's side of `kernels::types` (the type and operator
//! table of the crate docs, its NaN and wrapping rules).
//!
//! * [`Elem`] and [`Op`] — an element type and an operator as the registries, the command
//!   line (`--type`, `--combine`) and the reports name them.
//! * [`Value`] — an element type the host can reduce and scan: the kernels crate's
//!   [`Element`](kernels::types::Element) with what the references, the inputs and the reports
//!   need; [`OpKind`] — the operator types [`Sum`](kernels::types::Sum),
//!   [`Min`](kernels::types::Min), [`Max`](kernels::types::Max) by their [`Op`].
//! * [`PerType`] — one value per element type: how a registry holds a generic variant's
//!   kernels of every type, and how generic code picks its own ([`Value::of`]).
//! * [`combine`], [`identity`], [`combine_pairwise`] — the operators on the host, as the kernels
//!   combine.
//!
//! [`with_elem!`](crate::with_elem) runs generic code for an [`Elem`] known at run time.

use std::fmt;

use crate::error::{Error, Result};

/// Element type. The curriculum's kernels reduce `I32`; the generic variants (those whose
/// registry entry declares every pair) every type.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Elem {
    /// 32-bit signed integer, wrapping arithmetic.
    I32,
    /// 32-bit unsigned integer, wrapping arithmetic.
    U32,
    /// 64-bit signed integer, wrapping arithmetic.
    I64,
    /// 64-bit unsigned integer, wrapping arithmetic.
    U64,
    /// IEEE 754 binary32.
    F32,
    /// IEEE 754 binary64.
    F64,
}

impl Elem {
    /// Every element type, in the order of `--type`'s list.
    pub const ALL: [Elem; 6] = [Elem::I32, Elem::U32, Elem::I64, Elem::U64, Elem::F32, Elem::F64];

    /// Bytes per element: what the throughput columns count (64-bit types move twice the
    /// bytes per element).
    pub fn size(self) -> usize {
        match self {
            Elem::I32 | Elem::U32 | Elem::F32 => 4,
            Elem::I64 | Elem::U64 | Elem::F64 => 8,
        }
    }

    /// The Rust name: `--type`'s value, the type part of a PTX entry name, a bench id part.
    pub fn name(self) -> &'static str {
        match self {
            Elem::I32 => "i32",
            Elem::U32 => "u32",
            Elem::I64 => "i64",
            Elem::U64 => "u64",
            Elem::F32 => "f32",
            Elem::F64 => "f64",
        }
    }

    /// A floating-point type (sums rounded, checked against an error bound)?
    pub fn is_float(self) -> bool {
        match self {
            Elem::F32 | Elem::F64 => true,
            Elem::I32 | Elem::U32 | Elem::I64 | Elem::U64 => false,
        }
    }

    /// The type called `name`, or an error listing the types there are.
    pub fn parse(name: &str) -> Result<Elem> {
        Elem::ALL.into_iter().find(|e| e.name() == name).ok_or_else(|| {
            let names: Vec<_> = Elem::ALL.iter().map(|e| e.name()).collect();
            Error::Invalid(format!("no element type `{name}`; the types are: {}", names.join(", ")))
        })
    }
}

/// What a reduction computes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Op {
    /// Σ x (wrapping for integers).
    Sum,
    /// Σ x² (wrapping): the sum-of-squares tutorial, `i32` only.
    SumOfSquares,
    /// The minimum (floats: NaN propagates, −0.0 < +0.0; `kernels::types`).
    Min,
    /// The maximum (floats: NaN propagates, −0.0 < +0.0).
    Max,
}

impl Op {
    /// The operators of `--combine`, in its order (sum of squares is a family, not a combine).
    pub const COMBINES: [Op; 3] = [Op::Sum, Op::Min, Op::Max];

    /// The name: `--combine`'s value, the operator part of a PTX entry name, a bench id part.
    pub fn name(self) -> &'static str {
        match self {
            Op::Sum => "sum",
            Op::SumOfSquares => "sum_of_squares",
            Op::Min => "min",
            Op::Max => "max",
        }
    }

    /// The `--combine` operator called `name`, or an error listing them.
    pub fn parse(name: &str) -> Result<Op> {
        Op::COMBINES.into_iter().find(|o| o.name() == name).ok_or_else(|| {
            let names: Vec<_> = Op::COMBINES.iter().map(|o| o.name()).collect();
            Error::Invalid(format!("no combine operator `{name}`; the operators are: {}", names.join(", ")))
        })
    }

    /// The `--combine` operator this one is selected by: a sum of squares is a sum (of the
    /// squares); the others are themselves.
    pub fn combine(self) -> Op {
        match self {
            Op::SumOfSquares => Op::Sum,
            op => op,
        }
    }

    /// How partial results of this operator are combined into the answer (a sum of squares'
    /// partials are added).
    pub fn partials(self) -> Op {
        self.combine()
    }
}

/// The operator a variant whose own operator is `own` runs for `--combine op`: its own where
/// `op` selects it (a sum of squares is selected by `sum`), else `op`.
pub fn own_op(own: Op, op: Op) -> Op {
    if own.combine() == op { own } else { op }
}

/// A family of types indexed by an element type: what [`PerType`] holds one of per type (a
/// registry's rows of one variant, `Row<T>`).
pub trait PerElement {
    /// The member for element type `T`.
    type Of<T: Value>: Copy + fmt::Debug + 'static;
}

/// One `F::Of<T>` per element type: a registry's table of a generic variant's kernels, one
/// row of each type. Generic code takes its own with [`Value::of`].
#[derive(Clone, Copy, Debug)]
pub struct PerType<F: PerElement> {
    /// For `i32`.
    pub i32: F::Of<i32>,
    /// For `u32`.
    pub u32: F::Of<u32>,
    /// For `i64`.
    pub i64: F::Of<i64>,
    /// For `u64`.
    pub u64: F::Of<u64>,
    /// For `f32`.
    pub f32: F::Of<f32>,
    /// For `f64`.
    pub f64: F::Of<f64>,
}

/// An element type the host can reduce: a device buffer element, a kernels-crate
/// [`Element`](kernels::types::Element), and what the references, inputs and reports need.
pub trait Value: crate::backend::Element + kernels::types::Element + fmt::Display {
    /// The registry's name for it.
    const ELEM: Elem;
    /// Unit roundoff (2⁻²⁴ for `f32`, 2⁻⁵³ for `f64`; 0 for integers, which are exact).
    const UNIT_ROUNDOFF: f64;
    /// A value from 64 random bits: integers over their whole range (sums wrap), floats in
    /// ±[2⁻⁸, 2⁸) with a random exponent and sign.
    fn random(bits: u64) -> Self;
    /// `x` rounded to this type (floats; integers truncate).
    fn from_f64(x: f64) -> Self;
    /// The value as `f64` (exact for 32-bit types and `f64`; integers may round).
    fn to_f64(self) -> f64;
    /// The wrapping (integers) or rounded (floats) sum of two values.
    fn wrapping_add_host(a: Self, b: Self) -> Self;
    /// The wrapping (integers) or rounded (floats) square (the sum of squares' terms).
    fn square_host(self) -> Self;
    /// Is it a NaN?
    fn is_nan_host(self) -> bool;
    /// The NaN min (`smallest`) or max returns: `−NaN` or `+NaN`, quiet, payload 0.
    fn canonical_nan(smallest: bool) -> Self;
    /// A key ordered as the values, with −0.0 below +0.0 (NaNs excluded).
    fn order_key(self) -> i128;
    /// The bits, zero-extended to 64.
    fn bits(self) -> u64;
    /// The value whose bits are the low bytes of `bits` (the inverse of [`bits`](Self::bits)).
    fn from_bits_u64(bits: u64) -> Self;
    /// The same bits?
    fn same_bits(self, other: Self) -> bool {
        self.bits() == other.bits()
    }
    /// The type's extreme values: for a sum, ones whose sums cannot overflow a float
    /// (subnormals, ±0, `MIN_POSITIVE`, large but summable values); otherwise also ±MAX and
    /// ±inf (integers: MIN, MAX, 0, ±1 either way).
    fn extremes(for_sum: bool) -> Vec<Self>;
    /// This type's member of `table`.
    fn of<F: PerElement>(table: &PerType<F>) -> F::Of<Self>;
    /// `x` as this type's member, when this type is `i32` (the one type of the curriculum's
    /// kernels, whose registry rows are `i32`'s): `Some(x)` for `i32`, `None` for the others.
    fn from_i32<F: PerElement>(x: F::Of<i32>) -> Option<F::Of<Self>>;
}

/// [`Value::of`] and [`Value::from_i32`] for `$t`, the `PerType` field of the same name.
macro_rules! per_type {
    ($t:ident, i32) => {
        fn of<F: PerElement>(table: &PerType<F>) -> F::Of<Self> {
            table.$t
        }
        fn from_i32<F: PerElement>(x: F::Of<i32>) -> Option<F::Of<Self>> {
            Some(x)
        }
    };
    ($t:ident, other) => {
        fn of<F: PerElement>(table: &PerType<F>) -> F::Of<Self> {
            table.$t
        }
        fn from_i32<F: PerElement>(_: F::Of<i32>) -> Option<F::Of<Self>> {
            None
        }
    };
}

macro_rules! integer_value {
    ($t:ident, $E:ident, $kind:ident) => {
        impl Value for $t {
            per_type!($t, $kind);
            const ELEM: Elem = Elem::$E;
            const UNIT_ROUNDOFF: f64 = 0.0;
            fn random(bits: u64) -> Self {
                bits as $t
            }
            fn from_f64(x: f64) -> Self {
                x as $t
            }
            fn to_f64(self) -> f64 {
                self as f64
            }
            fn wrapping_add_host(a: Self, b: Self) -> Self {
                a.wrapping_add(b)
            }
            fn square_host(self) -> Self {
                self.wrapping_mul(self)
            }
            fn is_nan_host(self) -> bool {
                false
            }
            fn canonical_nan(smallest: bool) -> Self {
                if smallest { $t::MIN } else { $t::MAX }
            }
            fn order_key(self) -> i128 {
                self as i128
            }
            fn bits(self) -> u64 {
                self as u64 & (u64::MAX >> (64 - 8 * std::mem::size_of::<$t>()))
            }
            fn from_bits_u64(bits: u64) -> Self {
                bits as $t
            }
            #[allow(unused_comparisons)]
            fn extremes(_for_sum: bool) -> Vec<Self> {
                let mut v = vec![$t::MIN, $t::MAX, 0, 1];
                if $t::MIN < 0 {
                    v.push((0 as $t).wrapping_sub(1));
                }
                v
            }
        }
    };
}
integer_value!(i32, I32, i32);
integer_value!(u32, U32, other);
integer_value!(i64, I64, other);
integer_value!(u64, U64, other);

macro_rules! float_value {
    ($t:ident, $E:ident, $bits:ty, $mant:expr) => {
        impl Value for $t {
            per_type!($t, other);
            const ELEM: Elem = Elem::$E;
            const UNIT_ROUNDOFF: f64 = 1.0 / (1u64 << $mant) as f64;
            fn random(bits: u64) -> Self {
                // 53 bits of mantissa in [1, 2), an exponent in -8..8, a sign.
                let m = 1.0 + (bits >> 11) as f64 / (1u64 << 53) as f64;
                let e = ((bits >> 3) & 15) as i32 - 8;
                let s = if bits & 1 == 0 { 1.0 } else { -1.0 };
                (s * m * 2f64.powi(e)) as $t
            }
            fn from_f64(x: f64) -> Self {
                x as $t
            }
            fn to_f64(self) -> f64 {
                self as f64
            }
            fn wrapping_add_host(a: Self, b: Self) -> Self {
                a + b
            }
            fn square_host(self) -> Self {
                self * self
            }
            fn is_nan_host(self) -> bool {
                self.is_nan()
            }
            fn canonical_nan(smallest: bool) -> Self {
                let nan = $t::NAN.to_bits() & !(1 << (8 * std::mem::size_of::<$t>() - 1));
                $t::from_bits(if smallest { nan | 1 << (8 * std::mem::size_of::<$t>() - 1) } else { nan })
            }
            fn order_key(self) -> i128 {
                // Sign-magnitude to a monotonic integer: negative values reversed below 0.
                let b = self.to_bits();
                let magnitude = (b & !(1 << (8 * std::mem::size_of::<$t>() - 1))) as i128;
                if b >> (8 * std::mem::size_of::<$t>() - 1) == 1 { -magnitude - 1 } else { magnitude }
            }
            fn bits(self) -> u64 {
                self.to_bits() as u64
            }
            fn from_bits_u64(bits: u64) -> Self {
                $t::from_bits(bits as _)
            }
            fn extremes(for_sum: bool) -> Vec<Self> {
                let tiny = $t::from_bits(1); // the smallest subnormal
                let mut v = vec![0.0, -0.0, tiny, -tiny, $t::MIN_POSITIVE, -$t::MIN_POSITIVE, 1.0, -1.0];
                if for_sum {
                    // Large, but 2^32 of them still sum to a finite value.
                    v.extend([$t::MAX / 2f64.powi(40) as $t, -$t::MAX / 2f64.powi(40) as $t]);
                } else {
                    v.extend([$t::MAX, -$t::MAX, $t::INFINITY, $t::NEG_INFINITY]);
                }
                v
            }
        }
    };
}
float_value!(f32, F32, u32, 24);
float_value!(f64, F64, u64, 53);

/// The host-side name of an operator type of the kernels crate (`kernels::types::Sum` → [`Op::Sum`]).
pub trait OpKind {
    /// The registry's operator.
    const OP: Op;
}
impl OpKind for kernels::types::Sum {
    const OP: Op = Op::Sum;
}
impl OpKind for kernels::types::Min {
    const OP: Op = Op::Min;
}
impl OpKind for kernels::types::Max {
    const OP: Op = Op::Max;
}

/// `Ok` when `T` is laid out as the kernels of [`T::ELEM`](Value::ELEM) read it (its size is
/// that type's): the library objects' guard against a [`Value`] implemented outside this crate
/// with another type's `ELEM`, whose buffers the kernels would read past.
pub(crate) fn check_layout<T: Value>() -> Result<()> {
    if size_of::<T>() == T::ELEM.size() {
        Ok(())
    } else {
        Err(Error::Invalid(format!(
            "a Value of {} bytes names {} ({} bytes) as its kernels' type",
            size_of::<T>(),
            T::ELEM.name(),
            T::ELEM.size()
        )))
    }
}

/// `a ⊕ b` for `op`, as the kernels combine (the kernels crate's own functions); partial sums
/// of squares are added.
pub fn combine<T: Value>(op: Op, a: T, b: T) -> T {
    match op {
        Op::Sum | Op::SumOfSquares => T::plus(a, b),
        Op::Min => T::minimum(a, b),
        Op::Max => T::maximum(a, b),
    }
}

/// The identity of `op` on `T` (the result of an empty reduction).
pub fn identity<T: Value>(op: Op) -> T {
    match op {
        Op::Sum | Op::SumOfSquares => T::ZERO,
        Op::Min => T::HIGHEST,
        Op::Max => T::LOWEST,
    }
}

/// Combines `values` pairwise (the halving tree of [`crate::cpu::recursive_reduce`]):
/// depth ⌈log₂ len⌉, which keeps a float sum of many partials accurate.
pub fn combine_pairwise<T: Value>(op: Op, mut values: Vec<T>) -> T {
    let mut size = values.len();
    if size == 0 {
        return identity(op);
    }
    while size > 1 {
        let half = size.div_ceil(2);
        for i in 0..size - half {
            values[i] = combine(op, values[i], values[half + i]);
        }
        size = half;
    }
    values[0]
}

/// Runs `$body` with the type alias `$T` standing for the element type `$elem` (an [`Elem`]
/// known at run time): the one `match` over the six types that generic code needs.
///
/// ```
/// use reduce_scan::types::{Elem, Value};
/// let bytes = reduce_scan::with_elem!(Elem::F64, T => std::mem::size_of::<T>());
/// assert_eq!(bytes, 8);
/// ```
#[macro_export]
macro_rules! with_elem {
    ($elem:expr, $T:ident => $body:expr) => {
        match $elem {
            $crate::types::Elem::I32 => {
                type $T = i32;
                $body
            }
            $crate::types::Elem::U32 => {
                type $T = u32;
                $body
            }
            $crate::types::Elem::I64 => {
                type $T = i64;
                $body
            }
            $crate::types::Elem::U64 => {
                type $T = u64;
                $body
            }
            $crate::types::Elem::F32 => {
                type $T = f32;
                $body
            }
            $crate::types::Elem::F64 => {
                type $T = f64;
                $body
            }
        }
    };
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pairwise_combine() {
        assert_eq!(combine_pairwise(Op::Sum, vec![1u32, 2, 3, 4, 5]), 15);
        assert_eq!(combine_pairwise::<i64>(Op::Max, vec![]), i64::MIN);
        assert_eq!(combine_pairwise(Op::SumOfSquares, vec![4i32, 9]), 13);
    }

    #[test]
    fn names_parse_back() {
        for e in Elem::ALL {
            assert_eq!(Elem::parse(e.name()).unwrap(), e);
        }
        assert!(Elem::parse("f16").unwrap_err().to_string().contains("i32, u32, i64, u64, f32, f64"));
        assert!(Op::parse("sum_of_squares").is_err());
        assert_eq!(Op::SumOfSquares.combine(), Op::Sum);
        assert_eq!(with_elem!(Elem::U64, T => T::ELEM), Elem::U64);
    }
}
