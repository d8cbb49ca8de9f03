//! `sum`: the wrapping sum of an `i32` device buffer in one call, with the variant that is
//! fastest for its size.
//!
//! ```no_run
//! use host::{Backend, sum::sum};
//! let backend = Backend::gpu()?;
//! let buf = backend.upload(&[1, 2, 3, -4])?;
//! assert_eq!(sum(&backend, &buf)?, 2);
//! # Ok::<(), host::Error>(())
//! ```
//!
//! **Which kernel.** [`choose`] is the one place the choice is made: `atomic_accumulate` with
//! 256-thread blocks at every size. Its one launch leaves the final sum on the device (no
//! second launch, no host-side finish, no last-block pass: each block adds its partial into
//! the result with a fire-and-forget `red.add`), it reads the input with 128-bit loads over a
//! grid of resident blocks, and it accepts any `i32` alignment, so sub-ranges work too. On an
//! H100 it beat CUB's `DeviceReduce::Sum` at 2^20–2^28 where `single_pass` (the last-block
//! ticket) tied it at 2^24 in back-to-back timing (docs/notes.md). Change [`choose`] and
//! nothing else to pick another variant or block per size.
//!
//! **What the caller gets.** The sum of an empty range is 0 (the identity of addition, as for
//! `Iterator::sum`), returned without touching the device. Everything else goes through the
//! same checks as the launchers: a range outside the buffer or longer than the kernels'
//! 32-bit length (`n ≤ u32::MAX`) is `Error::Invalid` with the numbers, a device error is
//! `Error::Cuda` / `Error::Emulator`. The call allocates its scratch (the per-block partials,
//! the ticket, the output: a few KiB), launches once and waits for the result; to sum
//! repeatedly without those allocations, keep a [`Reduction`] (as the benches do).

use std::ops::Range;

use crate::backend::{Backend, DeviceBuffer};
use crate::error::{Error, Result};
use crate::reduce::Reduction;
use crate::registry::{self, Variant};

/// A variant and a block size.
#[derive(Clone, Copy, Debug)]
pub struct Choice {
    /// The variant.
    pub variant: &'static Variant,
    /// Threads per block.
    pub block: u32,
}

/// The variant and block [`sum`] uses for `n` elements on a device of compute capability
/// `cc`: `atomic_accumulate` with blocks of 256 at every size (see the module docs).
pub fn choose(n: usize, cc: (u32, u32)) -> Result<Choice> {
    let _ = (n, cc);
    Ok(Choice { variant: registry::find("atomic_accumulate")?, block: 256 })
}

/// The wrapping sum of every element of `buf`.
pub fn sum(backend: &Backend, buf: &DeviceBuffer<i32>) -> Result<i32> {
    sum_range(backend, buf, 0..buf.len())
}

/// The wrapping sum of `buf[range]`. The range may start at any element (the kernel handles
/// the unaligned head and tail); an empty range sums to 0.
pub fn sum_range(backend: &Backend, buf: &DeviceBuffer<i32>, range: Range<usize>) -> Result<i32> {
    if range.start > range.end || range.end > buf.len() {
        return Err(Error::Invalid(format!(
            "sum of elements {}..{} of a buffer of {}: the range must lie within the buffer",
            range.start,
            range.end,
            buf.len()
        )));
    }
    let n = range.len();
    if n == 0 {
        return Ok(0);
    }
    let Choice { variant, block } = choose(n, backend.info().compute_capability)?;
    let mut r = Reduction::new_at(backend, variant, buf, range.start, n, block)?;
    r.reset()?;
    r.launch()?;
    r.result()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn empty_ranges_sum_to_zero_and_bad_ranges_are_errors() {
        let b = Backend::emulator();
        let buf = b.upload(&[5, 6, 7]).unwrap();
        assert_eq!(sum_range(&b, &buf, 1..1).unwrap(), 0);
        let e = sum_range(&b, &buf, 2..4).unwrap_err().to_string();
        assert!(e.contains("2..4") && e.contains("buffer of 3"), "{e}");
        #[allow(clippy::reversed_empty_ranges)]
        let e = sum_range(&b, &buf, 2..1).unwrap_err().to_string();
        assert!(e.contains("within the buffer"), "{e}");
        assert_eq!(sum(&b, &buf).unwrap(), 18);
        assert_eq!(sum_range(&b, &buf, 1..3).unwrap(), 13);
        let empty = b.alloc::<i32>(0).unwrap();
        assert_eq!(sum(&b, &empty).unwrap(), 0);
    }
}
