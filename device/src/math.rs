//! Arithmetic the compiler must not rewrite: an integer remainder kept as `rem.u32`, and the
//! float minimum and maximum as PTX's `min`/`max` (CUDA C `fminf`, `fmaxf`, `fmin`, `fmax`).

/// One PTX arithmetic instruction of two registers, `OP d, a, b;` (`reg32` or `reg64`
/// operands), as inline PTX: opaque to LLVM, so it stays the instruction it names.
#[cfg(target_arch = "nvptx64")]
macro_rules! ptx_binary {
    ($op:literal, $reg:ident, $t:ty, $a:expr, $b:expr) => {{
        let r: $t;
        // SAFETY: one arithmetic instruction: it reads two registers and writes one, and
        // touches no memory.
        unsafe {
            core::arch::asm!(
                concat!($op, " {r}, {a}, {b};"),
                r = out($reg) r,
                a = in($reg) $a,
                b = in($reg) $b,
                options(pure, nomem, nostack, preserves_flags),
            );
        }
        r
    }};
}

/// `a % b` as the PTX instruction `rem.u32`, whatever the compiler knows about `b`.
///
/// LLVM proves that `2 * stride` is a power of two in a loop `stride = 1, 2, 4, …` and turns
/// `tid % (2 * stride)` into `tid & (2 * stride - 1)`: one cheap instruction. nvcc, on the
/// book's code, keeps the remainder, which ptxas expands into a sequence of about twenty
/// instructions. This function keeps it too (inline PTX is opaque to LLVM), so that
/// `neighbored_modulo` pays what the book's `reduceNeighbored` pays. On the host it is `%`.
///
/// `b` must not be 0 (PTX leaves the result undefined; the host build panics).
#[inline(always)]
pub fn rem_u32(a: u32, b: u32) -> u32 {
    #[cfg(target_arch = "nvptx64")]
    {
        ptx_binary!("rem.u32", reg32, u32, a, b)
    }
    #[cfg(not(target_arch = "nvptx64"))]
    {
        a % b
    }
}

/// The smaller of two `f32`s as PTX `min.f32` computes it (CUDA C `fminf`; SASS `FMNMX`): a
/// NaN operand is ignored (the other one is the result; two NaNs give a NaN), and
/// −0.0 < +0.0 (PTX ISA, "Floating Point Instructions: min"). Inline PTX, so that LLVM, whose
/// `minnum` may return either zero, cannot rewrite it. Callers that want a NaN to win add
/// it themselves (`collective`'s `Element::minimum`: one `setp.nan` of both operands and a
/// `selp`).
#[inline(always)]
pub fn min_f32(a: f32, b: f32) -> f32 {
    #[cfg(target_arch = "nvptx64")]
    {
        ptx_binary!("min.f32", reg32, f32, a, b)
    }
    #[cfg(not(target_arch = "nvptx64"))]
    {
        // `f32::min` ignores a NaN as PTX does; equal operands are the same bits or ±0.0.
        if a == b { f32::from_bits(a.to_bits() | b.to_bits()) } else { a.min(b) }
    }
}

/// The larger of two `f32`s as PTX `max.f32` computes it (CUDA C `fmaxf`; SASS `FMNMX`): a
/// NaN operand is ignored (the other one is the result; two NaNs give a NaN), and
/// −0.0 < +0.0 (PTX ISA, "Floating Point Instructions: max"). Inline PTX, so that LLVM, whose
/// `maxnum` may return either zero, cannot rewrite it. Callers that want a NaN to win add
/// it themselves (`collective`'s `Element::maximum`: one `setp.nan` of both operands and a
/// `selp`).
#[inline(always)]
pub fn max_f32(a: f32, b: f32) -> f32 {
    #[cfg(target_arch = "nvptx64")]
    {
        ptx_binary!("max.f32", reg32, f32, a, b)
    }
    #[cfg(not(target_arch = "nvptx64"))]
    {
        // `f32::max` ignores a NaN as PTX does; equal operands are the same bits or ±0.0.
        if a == b { f32::from_bits(a.to_bits() & b.to_bits()) } else { a.max(b) }
    }
}

/// The smaller of two `f64`s as PTX `min.f64` computes it (CUDA C `fmin`; SASS `DMNMX`): a
/// NaN operand is ignored (the other one is the result; two NaNs give a NaN), and
/// −0.0 < +0.0 (PTX ISA, "Floating Point Instructions: min"). Inline PTX, so that LLVM, whose
/// `minnum` may return either zero, cannot rewrite it. Callers that want a NaN to win add
/// it themselves (`collective`'s `Element::minimum`: one `setp.nan` of both operands and a
/// `selp`).
#[inline(always)]
pub fn min_f64(a: f64, b: f64) -> f64 {
    #[cfg(target_arch = "nvptx64")]
    {
        ptx_binary!("min.f64", reg64, f64, a, b)
    }
    #[cfg(not(target_arch = "nvptx64"))]
    {
        // `f64::min` ignores a NaN as PTX does; equal operands are the same bits or ±0.0.
        if a == b { f64::from_bits(a.to_bits() | b.to_bits()) } else { a.min(b) }
    }
}

/// The larger of two `f64`s as PTX `max.f64` computes it (CUDA C `fmax`; SASS `DMNMX`): a
/// NaN operand is ignored (the other one is the result; two NaNs give a NaN), and
/// −0.0 < +0.0 (PTX ISA, "Floating Point Instructions: max"). Inline PTX, so that LLVM, whose
/// `maxnum` may return either zero, cannot rewrite it. Callers that want a NaN to win add
/// it themselves (`collective`'s `Element::maximum`: one `setp.nan` of both operands and a
/// `selp`).
#[inline(always)]
pub fn max_f64(a: f64, b: f64) -> f64 {
    #[cfg(target_arch = "nvptx64")]
    {
        ptx_binary!("max.f64", reg64, f64, a, b)
    }
    #[cfg(not(target_arch = "nvptx64"))]
    {
        // `f64::max` ignores a NaN as PTX does; equal operands are the same bits or ±0.0.
        if a == b { f64::from_bits(a.to_bits() & b.to_bits()) } else { a.max(b) }
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn remainder() {
        assert_eq!(super::rem_u32(37, 8), 5);
        assert_eq!(super::rem_u32(0, 2), 0);
        assert_eq!(super::rem_u32(u32::MAX, 2), 1);
    }

    #[test]
    fn float_min_max_order_zeros_and_ignore_nan() {
        use super::{max_f32, max_f64, min_f32, min_f64};
        let bits = |x: f32| x.to_bits();
        assert_eq!(bits(min_f32(0.0, -0.0)), bits(-0.0));
        assert_eq!(bits(min_f32(-0.0, 0.0)), bits(-0.0));
        assert_eq!(bits(max_f32(0.0, -0.0)), bits(0.0));
        assert_eq!(bits(max_f32(-0.0, 0.0)), bits(0.0));
        assert_eq!(min_f32(f32::NAN, 2.0), 2.0);
        assert_eq!(max_f32(-3.0, f32::NAN), -3.0);
        assert!(min_f32(f32::NAN, f32::NAN).is_nan());
        assert_eq!((min_f32(1.5, -2.5), max_f32(1.5, -2.5)), (-2.5, 1.5));
        assert_eq!((min_f32(f32::NEG_INFINITY, 1.0), max_f32(f32::INFINITY, 1.0)), (f32::NEG_INFINITY, f32::INFINITY));
        assert_eq!(min_f64(0.0, -0.0).to_bits(), (-0.0f64).to_bits());
        assert_eq!(max_f64(-0.0, 0.0).to_bits(), 0.0f64.to_bits());
        assert_eq!((min_f64(f64::NAN, 7.0), max_f64(7.0, f64::NAN)), (7.0, 7.0));
        assert_eq!((min_f64(1e300, -1e300), max_f64(1e300, -1e300)), (-1e300, 1e300));
    }
}
