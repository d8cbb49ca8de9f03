//! Arithmetic the compiler must not rewrite: an integer remainder kept as `rem.u32`, and the
//! float minimum and maximum as PTX's `min`/`max` (CUDA C `fminf`, `fmaxf`, `fmin`, `fmax`).

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
        let r: u32;
        // SAFETY: `rem.u32` reads two registers and writes one; it touches no memory.
        unsafe {
            core::arch::asm!(
                "rem.u32 {r}, {a}, {b};",
                r = out(reg32) r,
                a = in(reg32) a,
                b = in(reg32) b,
                options(pure, nomem, nostack, preserves_flags),
            );
        }
        r
    }
    #[cfg(not(target_arch = "nvptx64"))]
    {
        a % b
    }
}

/// The float `min` and `max` of PTX, one instruction each, with their exact semantics on the host.
///
/// PTX ISA, "Floating Point Instructions: min/max": without `.NaN` a NaN operand is ignored (the
/// other one is the result; two NaNs give a NaN), and **−0.0 < +0.0**. CUDA C's `fminf`/`fmaxf`
/// and `fmin`/`fmax` compile to them; SASS `FMNMX`/`DMNMX`. Written as inline PTX so that
/// LLVM, whose `minnum` may return either zero, cannot rewrite them.
macro_rules! float_min_max {
    ($min:ident, $max:ident, $t:ty, $ptx_min:literal, $ptx_max:literal, $reg:ident, $cuda_min:literal, $cuda_max:literal) => {
        #[doc = concat!("The smaller of `a` and `b` as PTX `", $ptx_min, "` (CUDA C `", $cuda_min,
            "`): a NaN operand is ignored, and −0.0 < +0.0.")]
        #[inline(always)]
        pub fn $min(a: $t, b: $t) -> $t {
            #[cfg(target_arch = "nvptx64")]
            {
                let r: $t;
                // SAFETY: a float min reads two registers and writes one; it touches no memory.
                unsafe {
                    core::arch::asm!(concat!($ptx_min, " {r}, {a}, {b};"), r = out($reg) r, a = in($reg) a,
                        b = in($reg) b, options(pure, nomem, nostack, preserves_flags));
                }
                r
            }
            #[cfg(not(target_arch = "nvptx64"))]
            {
                if a.is_nan() {
                    b
                } else if b.is_nan() {
                    a
                } else if a == b {
                    // Equal and not NaN: the same bits, or ±0.0, where −0.0 (sign set) is less.
                    <$t>::from_bits(a.to_bits() | b.to_bits())
                } else if b < a {
                    b
                } else {
                    a
                }
            }
        }

        #[doc = concat!("The larger of `a` and `b` as PTX `", $ptx_max, "` (CUDA C `", $cuda_max,
            "`): a NaN operand is ignored, and −0.0 < +0.0.")]
        #[inline(always)]
        pub fn $max(a: $t, b: $t) -> $t {
            #[cfg(target_arch = "nvptx64")]
            {
                let r: $t;
                // SAFETY: a float max reads two registers and writes one; it touches no memory.
                unsafe {
                    core::arch::asm!(concat!($ptx_max, " {r}, {a}, {b};"), r = out($reg) r, a = in($reg) a,
                        b = in($reg) b, options(pure, nomem, nostack, preserves_flags));
                }
                r
            }
            #[cfg(not(target_arch = "nvptx64"))]
            {
                if a.is_nan() {
                    b
                } else if b.is_nan() {
                    a
                } else if a == b {
                    // ±0.0: +0.0 (sign clear) is greater.
                    <$t>::from_bits(a.to_bits() & b.to_bits())
                } else if b > a {
                    b
                } else {
                    a
                }
            }
        }
    };
}

float_min_max!(min_f32, max_f32, f32, "min.f32", "max.f32", reg32, "fminf", "fmaxf");
float_min_max!(min_f64, max_f64, f64, "min.f64", "max.f64", reg64, "fmin", "fmax");

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
