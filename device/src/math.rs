//! Integer arithmetic the compiler must not rewrite.

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

#[cfg(test)]
mod tests {
    #[test]
    fn remainder() {
        assert_eq!(super::rem_u32(37, 8), 5);
        assert_eq!(super::rem_u32(0, 2), 0);
        assert_eq!(super::rem_u32(u32::MAX, 2), 1);
    }
}
